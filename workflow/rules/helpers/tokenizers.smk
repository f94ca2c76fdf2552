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
