"""Build one closed word vocabulary and write the train split with OOV words as the UNK class."""

import json
import logging

from fairppl.corpora import read_split
from fairppl.io import write_text
from fairppl.wordlm import build_vocabulary, write_unk_text


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    texts = read_split(snakemake.input.units, snakemake.wildcards.language, "train")["text"].to_list()
    size = None if snakemake.wildcards.vocab == "all" else int(snakemake.wildcards.vocab)
    vocab = build_vocabulary(texts, size)
    write_unk_text(texts, vocab, snakemake.output.text)
    record = {"requested": size, "actual": vocab.actual, "n_train_types": vocab.n_train_types,
              "words": list(vocab.words)}
    write_text(snakemake.output.vocab, json.dumps(record, ensure_ascii=False))
    logging.info("vocabulary: requested %s, actual %d of %d train types", size, vocab.actual,
                 vocab.n_train_types)


if "snakemake" in globals():
    main(snakemake)
