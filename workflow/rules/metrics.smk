# From per-unit scores to the study's tables, figures and report (results/report.html).


include: "helpers/metrics.smk"


rule bpu_table:
    input:
        scores=score_files(),
        units=unit_tables(),
    output:
        parquet="results/tables/bpu.parquet",
        csv=report(
            "results/tables/bpu.csv",
            caption="../report/bpu.rst",
            category="Tables",
            labels={"table": "every model on all the units it scored (CSV)"},
        ),
        models_parquet="results/tables/models.parquet",
        models_csv=report(
            "results/tables/models.csv",
            caption="../report/models.rst",
            category="Tables",
            labels={"table": "one common unit set per corpus (CSV)"},
        ),
        differences="results/tables/differences.csv",
        model_differences=report(
            "results/tables/model_differences.csv",
            caption="../report/model_differences.rst",
            category="Tables",
            labels={"table": "model vs model, paired per language (CSV)"},
        ),
        rank_uncertainty="results/tables/rank_uncertainty.csv",
    log:
        "logs/bpu_table.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    params:
        bootstrap=bootstrap_settings(),
        common_min_share=common_min_shares(),  # corpus -> languages with few units left out
    script:
        "../scripts/bpu_table.py"


rule tokenizer_table:
    input:
        records=tokenizer_records(),
    output:
        csv=report(
            "results/tables/tokenizers.csv",
            caption="../report/tokenizers.rst",
            category="Tables",
            labels={"table": "vocabulary sizes requested and trained"},
        ),
    log:
        "logs/tokenizer_table.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/tokenizer_table.py"


rule correlates_table:
    input:
        units=unit_tables(),
        bpu="results/tables/bpu.parquet",
        tokenizers=list(correlate_tokenizers().values()),
    output:
        features=report(
            "results/tables/correlates.csv",
            caption="../report/correlates.rst",
            category="Tables",
            labels={"table": "properties of each language's text"},
        ),
        correlations="results/tables/correlations.csv",
    log:
        "logs/correlates_table.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    params:
        vocab_size=lookup(dpath="report/correlates_vocab_size", within=config),
        tokenizer_keys=list(correlate_tokenizers()),
        # the unseen-character rate: the units each corpus's models score against the train
        # split of the corpus that trained them (the Bible's for the UDHR)
        train_corpora={c: train_corpus(config, c) for c in ENABLED},
        eval_splits={c: evaluation_split(config, c) for c in ENABLED},
        # the text properties are computed on the units common to the languages of each
        # corpus's common unit set, as models.csv's (corpora.<id>.common_min_share)
        common_min_share=common_min_shares(),
    script:
        "../scripts/correlates_table.py"


rule plot_figures:
    input:
        bpu="results/tables/bpu.parquet",
        models="results/tables/models.parquet",
    output:
        main=report(
            "results/figures/main.png",
            caption="../report/main_figure.rst",
            category="Figures",
            labels={"figure": "BPEC by language and model"},
        ),
        second=second_domain_figures(),
        unk=report(
            "results/figures/unk.png",
            caption="../report/unk.rst",
            category="Figures",
            labels={"figure": "bits per utterance vs word vocabulary size"},
        ),
    log:
        "logs/plot_figures.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    params:
        corpus_figures=corpus_figures(),
        languages=report_languages(),
    script:
        "../scripts/plot_figures.py"


rule report:
    input:
        unpack(morphology_report_inputs),
        unpack(shannon_report_inputs),
        unpack(flores_report_inputs),
        bpu="results/tables/bpu.parquet",
        models="results/tables/models.parquet",
        differences="results/tables/differences.csv",
        model_differences="results/tables/model_differences.csv",
        rank_uncertainty="results/tables/rank_uncertainty.csv",
        tokenizers="results/tables/tokenizers.csv",
        correlates="results/tables/correlates.csv",
        correlations="results/tables/correlations.csv",
        units=unit_tables(),
        dropped=dropped_tables(),
        conventions=convention_files(),
        main="results/figures/main.png",
        second=second_domain_figures(),
        unk="results/figures/unk.png",
        marginal_fair="results/tables/marginal_fair_bits.csv",
        marginal_rankings="results/tables/marginal_rankings.csv",
        marginal_accuracy="results/tables/marginal_accuracy.csv",
        marginal_entropy="results/tables/marginal_entropy_gap.csv",
        marginal_published="results/tables/marginal_published.csv",
        marginal_lengths="results/tables/marginal_lengths.csv",
        marginal_caching="results/tables/marginal_caching.csv",
        marginal_samples_needed="results/tables/marginal_samples_needed.csv",
        marginal_qdefault="results/tables/marginal_qdefault_bins.csv",
        marginal_interval_panels="results/tables/marginal_interval_panels.csv",
        marginal_entropy_figure="results/figures/marginal_entropy_gap.png",
        marginal_intervals_figure="results/figures/marginal_intervals.png",
        marginal_needed_figure="results/figures/marginal_samples_needed.png",
    output:
        html="results/report.html",
    log:
        "logs/report.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    params:
        settings=report_settings(),
        bootstrap=bootstrap_settings(),
        second_corpora=ENABLED[1:],
    script:
        "../scripts/build_report.py"
