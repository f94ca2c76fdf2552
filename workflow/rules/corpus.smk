# Preparing aligned multi-text: read every translation the corpus source ships (all 31 of
# bible.db, every complete UDHR declaration, every file of a line-aligned archive), decide from
# all of them which units to drop (placeholders, and the verses holding merged placeholder text),
# so the dropped set does not depend on the configured languages; then write the configured
# languages' units, normalised, with the same train/dev/test split everywhere. A CES XML Bible
# corpus (url, format ces_xml) takes its English reference and its verse numbering (the KJV's)
# from the Bible database of the corpus its `english_from` names (fairppl.corpus.ces). A
# Europarl corpus is first extracted from its pair archives: the English sentences present in
# every configured pair, with their translations (fairppl.corpus.europarl).


include: "helpers/corpus.smk"


rule prepare_corpus:
    input:
        source=corpus_source_file,
        reference=corpus_reference_file,  # a CES XML corpus's English reference (english_from)
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
        runtime=attempt_runtime(30),  # minutes; the Bible's 31 translations (22 languages kept) took 38 s
        mem_mb=attempt_memory("prepare_corpus", 4000),
    params:
        spec=prepare_spec,  # less common_min_share: read from the config by the script
        sources=corpus_sources,  # configured languages only: the units written
        english=english_language,
        scheme=split_scheme(),
        character_maps=corpus_character_maps,  # normalization.characters per language
    script:
        "../scripts/prepare_corpus.py"


rule extract_europarl:
    input:
        archives=europarl_archive_files,
    output:
        multitext="results/corpus/{corpus}/multitext.parquet",
        pairs="results/corpus/{corpus}/europarl_pairs.tsv",
    log:
        "logs/extract_europarl/{corpus}.log",
    benchmark:
        "benchmarks/extract_europarl/{corpus}.tsv"
    conda:
        "../../envs/corpus.yaml"
    resources:
        # Minutes and MB, for the 20 pairs of the release (0.4-2 million lines each, read one
        # at a time). Measured on 3 synthetic pairs of 475k lines: 19.5 s, peak RSS 1.2 GB (one
        # thread, shared 2-core machine); memory grows with the largest pair, time with the
        # total lines: a few GB and about 10 minutes expected, with a margin here.
        runtime=attempt_runtime(60),
        mem_mb=attempt_memory("extract_europarl", 16000),
    params:
        pivot=europarl_pivot,
        languages=europarl_languages,  # the iso1 code of each archive, in input order
    script:
        "../scripts/extract_europarl.py"
