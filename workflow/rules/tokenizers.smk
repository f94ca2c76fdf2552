# SentencePiece tokenizers (unigram, BPE) per corpus and language, trained on the train split
# with byte fallback so that every character stays encodable.


include: "helpers/tokenizers.smk"


rule train_tokenizer:
    input:
        units="results/corpus/{corpus}/units.parquet",
    output:
        model="results/tokenizers/{corpus}/{language}/spm-{type}-{size}.model",
        record="results/tokenizers/{corpus}/{language}/spm-{type}-{size}.json",
        vocab="results/tokenizers/{corpus}/{language}/spm-{type}-{size}.vocab",
    log:
        "logs/train_tokenizer/{corpus}/{language}.{type}-{size}.log",
    benchmark:
        "benchmarks/train_tokenizer/{corpus}/{language}.{type}-{size}.tsv"
    priority: 30
    conda:
        "../../envs/torch.yaml"
    threads: 2
    # Minutes, with margin: SentencePiece trains on one language's train split (Bible: ~24k
    # verses) in well under a minute.
    resources:
        runtime=attempt_runtime(30),
    params:
        allow_reduction=vocab_reduction_allowed,
    script:
        "../scripts/train_tokenizer.py"
