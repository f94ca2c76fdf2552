# KenLM n-gram models over three token streams of each language's train split: characters (open
# vocabulary, the baseline), words with a closed vocabulary and <unk> (the UNK-correction sweep),
# and SentencePiece pieces (subword n-grams, scored on the default tokenization). One job per
# model: it writes the stream's training text and the ARPA file in its tmpdir and keeps only the
# binary model, so a study of 22 languages is ~200 jobs here rather than ~600.


include: "helpers/ngram.smk"


rule train_ngram:
    input:
        unpack(ngram_training_inputs),
    output:
        model="results/ngram/{corpus}/{language}/{stream}.o{order}.kenlm",
        record="results/ngram/{corpus}/{language}/{stream}.o{order}.json",
    log:
        "logs/train_ngram/{corpus}/{language}/{stream}.o{order}.log",
    benchmark:
        "benchmarks/train_ngram/{corpus}/{language}/{stream}.o{order}.tsv"
    conda:
        "../../envs/kenlm.yaml"
    resources:
        runtime=attempt_runtime(30),  # minutes; the slowest Bible model (a word 3-gram) took 24 s
        mem_mb=lmplz_memory,
    params:
        discount_fallback=config["kenlm"]["discount_fallback"],
    script:
        "../scripts/train_ngram.py"


rule score_char_ngram:
    input:
        model=trained_on("results/ngram/{corpus}/{language}/char.o{order}.kenlm"),
        units="results/corpus/{corpus}/units.parquet",
    output:
        scores="results/scores/{corpus}/{language}/kenlm-char-o{order}.char.parquet",
    log:
        "logs/score_char_ngram/{corpus}/{language}.o{order}.log",
    benchmark:
        "benchmarks/score_char_ngram/{corpus}/{language}.o{order}.tsv"
    conda:
        "../../envs/kenlm.yaml"
    # Minutes, with margin: the slowest Bible scoring job took 7 s on 2 CPU cores.
    resources:
        runtime=attempt_runtime(15),
    params:
        split=eval_split,
    script:
        "../scripts/score_char_ngram.py"


rule score_word_ngram:
    input:
        model="results/ngram/{corpus}/{language}/word-v{vocab}.o{order}.kenlm",
        record="results/ngram/{corpus}/{language}/word-v{vocab}.o{order}.json",
        units="results/corpus/{corpus}/units.parquet",
    output:
        scores="results/scores/{corpus}/{language}/kenlm-word-o{order}.word-v{vocab}.parquet",
    log:
        "logs/score_word_ngram/{corpus}/{language}.v{vocab}.o{order}.log",
    benchmark:
        "benchmarks/score_word_ngram/{corpus}/{language}.v{vocab}.o{order}.tsv"
    conda:
        "../../envs/kenlm.yaml"
    # Minutes, with margin: the slowest Bible scoring job took 7 s on 2 CPU cores.
    resources:
        runtime=attempt_runtime(15),
    params:
        split=eval_split,
    script:
        "../scripts/score_word_ngram.py"


rule score_subword_ngram:
    input:
        model=trained_on("results/ngram/{corpus}/{language}/{tokenizer}.o{order}.kenlm"),
        tokenizer=trained_on("results/tokenizers/{corpus}/{language}/{tokenizer}.model"),
        units="results/corpus/{corpus}/units.parquet",
    output:
        scores="results/scores/{corpus}/{language}/kenlm-subword-o{order}.{tokenizer}.parquet",
    log:
        "logs/score_subword_ngram/{corpus}/{language}.{tokenizer}.o{order}.log",
    benchmark:
        "benchmarks/score_subword_ngram/{corpus}/{language}.{tokenizer}.o{order}.tsv"
    conda:
        "../../envs/kenlm.yaml"
    # Minutes, with margin: the slowest Bible scoring job took 7 s on 2 CPU cores.
    resources:
        runtime=attempt_runtime(15),
    params:
        split=eval_split,
    script:
        "../scripts/score_subword_ngram.py"


# Which languages get the word sweep: the config lists the languages written without spaces (the
# job graph needs the list before any text exists); this rule measures every language's train
# split and fails if the data disagree with the list.
rule word_sweep_decisions:
    input:
        units=word_sweep_unit_tables(),
    output:
        csv="results/tables/word_sweep_decisions.csv",
    log:
        "logs/word_sweep_decisions.log",
    localrule: True
    conda:
        "../../envs/kenlm.yaml"
    params:
        without_spaces=config["word_ngram"]["languages_without_spaces"],
        long_words=config["word_ngram"]["long_word_languages"],
        max_chars_per_token=config["word_ngram"]["max_chars_per_token"],
        source=CONFIG_SOURCE,
    script:
        "../scripts/word_sweep_decisions.py"
