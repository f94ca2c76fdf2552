"""Write one language's train split as SentencePiece pieces (default tokenization) for lmplz."""

import logging

from fairppl.corpora import read_split
from fairppl.io import write_lines
from fairppl.subwordlm import load_sentencepiece, pieces


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    texts = read_split(snakemake.input.units, snakemake.wildcards.language, "train")["text"]
    sp = load_sentencepiece(snakemake.input.tokenizer)
    lines = [" ".join(pieces(sp, text)) for text in texts]
    write_lines(snakemake.output.text, lines)
    logging.info("%d train units, %d pieces", len(lines), sum(len(l.split()) for l in lines))


if "snakemake" in globals():
    main(snakemake)
