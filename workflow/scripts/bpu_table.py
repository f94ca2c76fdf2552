"""Aggregate every per-unit score table into the bits-per-utterance table."""

import logging

import polars as pl

from fairppl.io import write_table
from fairppl.metrics import bits_per_utterance


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    scores = pl.concat([pl.read_parquet(p) for p in snakemake.input.scores])
    units = pl.concat([pl.read_parquet(p) for p in snakemake.input.units], how="vertical_relaxed")
    table = bits_per_utterance(scores, units)
    logging.info("%d rows from %d per-unit tables", table.height, len(snakemake.input.scores))
    write_table(table, parquet=snakemake.output.parquet, csv=snakemake.output.csv)


if "snakemake" in globals():
    main(snakemake)
