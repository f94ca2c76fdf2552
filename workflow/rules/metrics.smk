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
    log:
        "logs/bpu_table.log",
    localrule: True
    conda:
        "../../envs/fairppl.yaml"
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
        "../../envs/fairppl.yaml"
    script:
        "../scripts/plot_bpec.py"


rule summary_page:
    input:
        bpu="results/tables/bpu.parquet",
        dropped=dropped_tables(),
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
        "../../envs/fairppl.yaml"
    params:
        settings=report_settings(),
    script:
        "../scripts/summary_page.py"
