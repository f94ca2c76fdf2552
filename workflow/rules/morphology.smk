# Morphological counting complexity (MCC) per language from three sources kept apart (published,
# Apertium, UniMorph), each counted by fairppl.morphology.mcc's rule, and forms per lemma; then
# one table (results/tables/mcc.csv) and the Apertium-vs-published validation.


include: "helpers/morphology.smk"


rule mcc_published:
    input:
        PUBLISHED_MCC,
    output:
        "results/morphology/mcc/published/{language}.json",
    log:
        "logs/mcc/published/{language}.log",
    wildcard_constraints:
        language=r"[a-z]{3}",
    localrule: True
    conda:
        "../../envs/morphology.yaml"
    script:
        "../scripts/mcc_published.py"


# lt-paradigm and the analysers come from Debian (Makefile: APT_PACKAGES), not from conda.
rule mcc_apertium:
    output:
        "results/morphology/mcc/apertium/{language}.json",
    log:
        "logs/mcc/apertium/{language}.log",
    benchmark:
        "benchmarks/mcc/apertium/{language}.tsv"
    wildcard_constraints:
        language=r"[a-z]{3}",
    conda:
        "../../envs/morphology.yaml"
    threads: 1
    resources:
        # Minutes, with margin: lt-paradigm lists Polish's 970,000 forms in about 4 s.
        runtime=10,
        mem_mb=2000,
    params:
        apertium_dir=lookup(dpath="morphology/apertium_dir", within=config),
    script:
        "../scripts/mcc_apertium.py"


rule download_unimorph:
    output:
        "resources/downloads/unimorph/{language}.tsv",
    log:
        "logs/download_unimorph/{language}.log",
    wildcard_constraints:
        language=r"[a-z]{3}",
    retries: 2
    localrule: True
    conda:
        "../../envs/morphology.yaml"
    params:
        url=unimorph_url,
    script:
        "../scripts/download_unimorph.py"


rule mcc_unimorph:
    input:
        "resources/downloads/unimorph/{language}.tsv",
    output:
        "results/morphology/mcc/unimorph/{language}.json",
    log:
        "logs/mcc/unimorph/{language}.log",
    wildcard_constraints:
        language=r"[a-z]{3}",
    localrule: True
    conda:
        "../../envs/morphology.yaml"
    params:
        url=unimorph_url,
    script:
        "../scripts/mcc_unimorph.py"


rule mcc_table:
    input:
        records=mcc_records(),
    output:
        table="results/tables/mcc.csv",
        validation="results/tables/mcc_validation.csv",
    log:
        "logs/mcc_table.log",
    localrule: True
    conda:
        "../../envs/morphology.yaml"
    script:
        "../scripts/mcc_table.py"
