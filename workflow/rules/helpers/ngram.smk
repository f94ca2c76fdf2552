# The named helpers of ngram.smk's rules: their input functions, parameters and targets.


def has_word_sweep(row):
    """Whether a sheet row gets the word sweep: its corpus is swept and its language is not
    listed as written without spaces (the list is checked against the data by the rule
    word_sweep_decisions)."""
    word = config["word_ngram"]
    return (
        row.corpus in word["corpora"]
        and row.language not in word["languages_without_spaces"]
    )


def word_sweep_unit_tables():
    """Prepared units tables of the enabled corpora of the word sweep."""
    corpora = [c for c in config["word_ngram"]["corpora"] if c in ENABLED]
    return expand("results/corpus/{corpus}/units.parquet", corpus=corpora)


def ngram_training_inputs(wildcards):
    """What train_ngram reads: the units, the KenLM programs and, for a piece stream, its
    tokenizer."""
    inputs = {
        "units": f"results/corpus/{wildcards.corpus}/units.parquet",
        "lmplz": kenlm_binary("lmplz"),
        "build_binary": kenlm_binary("build_binary"),
    }
    if wildcards.stream.startswith("spm-"):
        inputs["tokenizer"] = (
            f"results/tokenizers/{wildcards.corpus}/{wildcards.language}/{wildcards.stream}.model"
        )
    return inputs


def lmplz_memory(wildcards, attempt):
    """Memory (MB) of a train_ngram job, growing with each retry; lmplz's sort buffers get half
    (its -S), the rest is for Python and build_binary. On the Bible a character 5-gram trains in
    0.7 s with -S 500M and 1.2 s with -S 2000M (allocating the buffers is the cost)."""
    return attempt_memory("train_ngram", 1000)(wildcards, attempt)
