# The named helpers of tokenizers.smk's rules: their input functions, parameters and targets.


def spm_tokenizers():
    """Ids of the SentencePiece tokenizers trained per language, e.g. 'spm-unigram-4000'."""
    tok = config["tokenizers"]
    return [f"spm-{t}-{size}" for t in tok["types"] for size in tok["vocab_sizes"]]


def tokenizer_records():
    """The training records of every SentencePiece tokenizer of the study."""
    return [
        f"results/tokenizers/{row.corpus}/{row.language}/{tok}.json"
        for row in STUDY_LANGUAGES
        if row.corpus in config["tokenizers"]["corpora"]
        for tok in spm_tokenizers()
    ]


def vocab_reduction_allowed(wildcards):
    """Params function: whether the tokenizers of the corpus in ``wildcards`` may train at a
    smaller size than asked (tokenizers.allow_vocab_reduction: a boolean for every corpus, or
    the list of corpora where it is allowed)."""
    allowed = config["tokenizers"]["allow_vocab_reduction"]
    if isinstance(allowed, list):
        return wildcards.corpus in allowed
    return bool(allowed)
