"""The Shannon game's figure (limited lists, randomized truncations, rank histogram)."""

import logging

import polars as pl

from fairppl.report.plots_shannon import shannon_figure


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    table = pl.read_csv(snakemake.input.table, infer_schema_length=None)
    ranks = pl.read_csv(snakemake.input.ranks, infer_schema_length=None)
    names = {row["language"]: row["name"] for row in snakemake.params.languages}
    shannon_figure(table, ranks, snakemake.output.figure, names=names)
    logging.info("%s", snakemake.output.figure)


if "snakemake" in globals():
    main(snakemake)
