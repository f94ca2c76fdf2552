"""Write one language's train split as space-separated characters for lmplz."""

import logging

import polars as pl

from fairppl.charlm import write_training_text


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    units = (
        pl.scan_parquet(snakemake.input.units)
        .filter(language=snakemake.wildcards.language, split="train")
        .sort("position")
        .collect()
    )
    write_training_text(units["text"].to_list(), snakemake.output.text)
    logging.info("%d train units, %d characters", units.height, units["text"].str.len_chars().sum())


if "snakemake" in globals():
    main(snakemake)
