"""Write one language's train split as space-separated characters for lmplz."""

import logging

from fairppl.charlm import write_training_text
from fairppl.corpora import read_split


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    units = read_split(snakemake.input.units, snakemake.wildcards.language, "train")
    write_training_text(units["text"].to_list(), snakemake.output.text)
    logging.info("%d train units, %d characters", units.height, units["text"].str.len_chars().sum())


if "snakemake" in globals():
    main(snakemake)
