"""Train one SentencePiece tokenizer on a language's train split."""

import json
import logging
from pathlib import Path

from fairppl.corpus.readers import read_split
from fairppl.core.io import write_text
from fairppl.tokenizers import train_sentencepiece


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    wc = snakemake.wildcards
    texts = read_split(snakemake.input.units, wc.language, "train")["text"].to_list()
    prefix = str(Path(snakemake.output.model).with_suffix(""))
    record = train_sentencepiece(texts, wc.type, int(wc.size), prefix,
                                 allow_reduction=snakemake.params.allow_reduction)
    if record["reduced"]:
        logging.warning("vocabulary reduced from %d to %d (allowed by the config): recorded",
                        record["vocab_size_requested"], record["vocab_size"])
    write_text(snakemake.output.record, json.dumps(record))
    logging.info("%s", record)


if "snakemake" in globals():
    main(snakemake)
