# Preparing aligned multi-text: read each language's units, normalise, drop placeholder units in
# every language together, and assign the same train/dev/test split everywhere.


include: "helpers/corpus.smk"


rule prepare_corpus:
    input:
        source=corpus_source_file,
    output:
        units="results/corpus/{corpus}/units.parquet",
        dropped="results/corpus/{corpus}/dropped.tsv",
    log:
        "logs/prepare_corpus/{corpus}.log",
    benchmark:
        "benchmarks/prepare_corpus/{corpus}.tsv"
    conda:
        "../../envs/corpus.yaml"
    resources:
        runtime=30,  # minutes; the Bible's 22 languages took 28 s
        mem_mb=4000,
    params:
        spec=corpus_spec,
        sources=corpus_sources,
        english=english_language,
        scheme=split_scheme(),
    script:
        "../scripts/prepare_corpus.py"
