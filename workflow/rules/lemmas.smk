# The lemmatized control (Cotterell et al. 2018): a lemmatized copy `<corpus>-lemmas` of each
# corpus of lemmas.corpora (simplemma; the languages it does not cover are listed with the reason
# in results/tables/lemmatizer_coverage.csv), on which the existing rules train and score the
# character n-grams and the Transformers over characters, unchanged (fairppl.config.design gives a
# derived corpus its base corpus's settings); and forms per lemma from simplemma's dictionaries.


include: "helpers/lemmas.smk"


rule lemmatize_corpus:
    input:
        units="results/corpus/{corpus}/units.parquet",
    output:
        units="results/corpus/{corpus}-lemmas/units.parquet",
        coverage="results/corpus/{corpus}-lemmas/coverage.csv",
    log:
        "logs/lemmatize_corpus/{corpus}.log",
    benchmark:
        "benchmarks/lemmatize_corpus/{corpus}.tsv"
    wildcard_constraints:
        corpus="|".join(config["lemmas"]["corpora"]) or "no-corpora",
    conda:
        "../../envs/lemmas.yaml"
    resources:
        # Minutes, with margin: the Bible's 17 covered languages took 35-80 s (2.4 GB).
        runtime=attempt_runtime(20),
        mem_mb=attempt_memory("lemmatize_corpus", 4000),
    script:
        "../scripts/lemmatize_corpus.py"


rule lemmatizer_coverage:
    input:
        coverage=lemma_coverage_files(),
    output:
        csv="results/tables/lemmatizer_coverage.csv",
    log:
        "logs/lemmatizer_coverage.log",
    localrule: True
    conda:
        "../../envs/lemmas.yaml"
    script:
        "../scripts/lemmatizer_coverage.py"


rule forms_per_lemma:
    output:
        csv="results/tables/forms_per_lemma.csv",
    log:
        "logs/forms_per_lemma.log",
    benchmark:
        "benchmarks/forms_per_lemma.tsv"
    conda:
        "../../envs/lemmas.yaml"
    resources:
        runtime=attempt_runtime(20),  # minutes; the 17 dictionaries took about 1 minute
        # one dictionary at a time: 1.2 GB peak over the 17
        mem_mb=attempt_memory("forms_per_lemma", 3000),
    params:
        languages=study_languages(),
    script:
        "../scripts/forms_per_lemma.py"


# The lemma stage alone (`snakemake lemmas`).
rule lemmas:
    input:
        lemma_outputs(),
