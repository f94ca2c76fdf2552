# Preparing aligned multi-text: read every translation the corpus source ships (all 31 of
# bible.db, every complete UDHR declaration, every file of a line-aligned archive), decide from
# all of them which units to drop (placeholders, and the verses holding merged placeholder text),
# so the dropped set does not depend on the configured languages; then write the configured
# languages' units, normalised, with the same train/dev/test split everywhere.


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
    # configured corpora only: a lemmatized copy (bible-lemmas) comes from lemmatize_corpus
    wildcard_constraints:
        corpus="|".join(CONFIGURED_CORPORA),
    conda:
        "../../envs/corpus.yaml"
    resources:
        runtime=30,  # minutes; the Bible's 31 translations (22 languages kept) took 38 s
        mem_mb=4000,
    params:
        spec=corpus_spec,
        sources=corpus_sources,  # configured languages only: the units written
        english=english_language,
        scheme=split_scheme(),
    script:
        "../scripts/prepare_corpus.py"
