# From per-unit scores to the study's tables, figures and the report's summary page.


rule bpu_table:
    input:
        scores=score_files(),
        units=unit_tables(),
    output:
        parquet="results/tables/bpu.parquet",
        csv=report(
            "results/tables/bpu.csv",
            caption="../report/bpu.rst",
            category="Bits per utterance",
            labels={"table": "all corpora, languages and models (CSV)"},
        ),
        models_parquet="results/tables/models.parquet",
        models_csv=report(
            "results/tables/models.csv",
            caption="../report/models.rst",
            category="Model comparison",
            labels={"table": "every model on the units all models scored (CSV)"},
        ),
    log:
        "logs/bpu_table.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/bpu_table.py"


rule plot_bpec:
    input:
        bpu="results/tables/bpu.parquet",
    output:
        png=report(
            "results/figures/bpec.png",
            caption="../report/bpec.rst",
            category="Bits per utterance",
            labels={"figure": "BPEC by language"},
        ),
    log:
        "logs/plot_bpec.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/plot_bpec.py"


rule tokenizer_table:
    input:
        records=tokenizer_records(),
    output:
        csv=report(
            "results/tables/tokenizers.csv",
            caption="../report/tokenizers.rst",
            category="Tokenizers",
            labels={"table": "vocabulary sizes requested and trained"},
        ),
    log:
        "logs/tokenizer_table.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/tokenizer_table.py"


rule plot_models:
    input:
        bpu="results/tables/bpu.parquet",
        models="results/tables/models.parquet",
    output:
        unk=report(
            "results/figures/unk.png",
            caption="../report/unk.rst",
            category="UNK-corrected perplexity",
            labels={"figure": "perplexity vs vocabulary size"},
        ),
        models=report(
            "results/figures/models.png",
            caption="../report/models_figure.rst",
            category="Model comparison",
            labels={"figure": "BPEC by model"},
        ),
    log:
        "logs/plot_models.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/plot_models.py"


rule summary_page:
    input:
        bpu="results/tables/bpu.parquet",
        models="results/tables/models.parquet",
        tokenizers="results/tables/tokenizers.csv",
        dropped=dropped_tables(),
        conventions=convention_files(),
    output:
        html=report(
            "results/tables/summary.html",
            caption="../report/summary.rst",
            category="Summary",
            labels={"page": "tables and settings"},
        ),
    log:
        "logs/summary_page.log",
    localrule: True
    conda:
        "../../envs/report.yaml"
    params:
        settings=report_settings(),
    script:
        "../scripts/summary_page.py"
