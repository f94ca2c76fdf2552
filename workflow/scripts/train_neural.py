"""Train one small Transformer LM (characters or SentencePiece pieces) on a language's train split,
resuming from its checkpoint when a previous attempt was killed."""

import logging

from fairppl.corpus.readers import read_split
from fairppl.neural import NeuralConfig, special_ids_of, train
from fairppl.tokenizers import char_tokenizer, to_hf_tokenizer, tokenize_units, vocab_size


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    wc = snakemake.wildcards
    train_texts = read_split(snakemake.input.units, wc.language, "train")["text"].to_list()
    dev_texts = read_split(snakemake.input.units, wc.language, "dev")["text"].to_list()
    if wc.tokenizer == "char":
        tokenizer = char_tokenizer(train_texts)
    else:
        tokenizer = to_hf_tokenizer(snakemake.input.tokenizer)
    cfg = NeuralConfig(**snakemake.params.hyper)
    logging.info("training %s on %d units (%s), %s", wc.tokenizer, len(train_texts), wc.language, cfg)
    stats = train(
        tokenize_units(tokenizer, train_texts),
        vocab_size(tokenizer),
        special_ids_of(tokenizer),
        cfg,
        snakemake.params.workdir,
        dev_token_ids=tokenize_units(tokenizer, dev_texts),
        tokenizer=tokenizer,
        threads=snakemake.threads,
    )
    logging.info("%s", stats)


if "snakemake" in globals():
    main(snakemake)
