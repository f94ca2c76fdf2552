# The Shannon game (fairppl.shannon): every bettor of a language bets on the next word after each
# truncation of evenly spaced evaluation units, over the game's m outcomes (the train split's
# vocabulary words, <unk>, </s>); one resumable job per (corpus, language, bettor) writes the
# per-truncation summaries (log bet on the correct outcome, its rank, the sums of the l best bets);
# then one table of every protocol (exhaustive, randomized, limited, rank bounds) and a figure.


include: "helpers/shannon.smk"


rule shannon_bets:
    input:
        unpack(shannon_bets_inputs),
        train_units=shannon_train_units,
    output:
        table="results/shannon/{corpus}/{language}/{model}.{tokenizer}.parquet",
    log:
        "logs/shannon_bets/{corpus}/{language}.{model}.{tokenizer}.log",
    benchmark:
        "benchmarks/shannon_bets/{corpus}/{language}.{model}.{tokenizer}.tsv"
    wildcard_constraints:
        model=shannon_model_constraint(),
        tokenizer=r"word-v\d+|char|spm-(unigram|bpe)-\d+|native",
    conda:
        "../../envs/shannon.yaml"
    # One thread: as for score_pretrained, two jobs side by side on 2 cores beat one on two.
    threads: 1
    resources:
        # Minutes, with margin (docs/benchmarks.md: seconds per truncation of each bettor).
        runtime=attempt_runtime(120, shannon_units, shannon_reference_units),
        gpu=shannon_gpus,
        mem_mb=attempt_memory("shannon_bets", 8000),
    params:
        kind=shannon_kind,
        split=eval_split,
        settings=shannon_settings(),
        load_from=shannon_load_from,
        special=shannon_special,
        dtype=pretrained_dtype,
        part="results/shannon/{corpus}/{language}/.{model}.{tokenizer}.part.jsonl",
    script:
        "../scripts/shannon_bets.py"


rule shannon_table:
    input:
        tables=shannon_files(),
    output:
        table="results/tables/shannon.csv",
        ranks="results/tables/shannon_ranks.csv",
    log:
        "logs/shannon_table.log",
    localrule: True
    conda:
        "../../envs/shannon.yaml"
    params:
        settings=shannon_settings(),
        bootstrap=bootstrap_settings(),
    script:
        "../scripts/shannon_table.py"


rule plot_shannon:
    input:
        table="results/tables/shannon.csv",
        ranks="results/tables/shannon_ranks.csv",
    output:
        figure="results/figures/shannon.png",
    log:
        "logs/plot_shannon.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    params:
        languages=report_languages(),
    script:
        "../scripts/plot_shannon.py"


rule shannon_players:
    input:
        shannon_players_inputs,
    output:
        table="results/tables/shannon_players.csv",
    log:
        "logs/shannon_players.log",
    localrule: True
    conda:
        "../../envs/shannon.yaml"
    params:
        players=shannon_players(),
    script:
        "../scripts/shannon_players.py"
