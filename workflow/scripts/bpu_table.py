"""Aggregate every per-unit score table into the bits-per-utterance table (each model on all the
units it scored) and the model comparison (every model on the units all models scored)."""

import logging

import polars as pl

from fairppl.io import write_table
from fairppl.metrics import SCORE_COLUMNS, bits_per_utterance, on_common_units


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    scores = pl.concat([pl.read_parquet(p, columns=list(SCORE_COLUMNS)) for p in snakemake.input.scores])
    units = pl.concat([pl.read_parquet(p) for p in snakemake.input.units], how="vertical_relaxed")
    table = bits_per_utterance(scores, units)
    common = bits_per_utterance(on_common_units(scores), units)
    logging.info("%d rows from %d per-unit tables; %d rows on common units", table.height,
                 len(snakemake.input.scores), common.height)
    write_table(table, parquet=snakemake.output.parquet, csv=snakemake.output.csv)
    write_table(common, parquet=snakemake.output.models_parquet, csv=snakemake.output.models_csv)


if "snakemake" in globals():
    main(snakemake)
