"""One coverage table of the lemmatized corpora: which languages simplemma lemmatizes, why the
others are left out, and the share of word tokens the lemmatizer changed."""

import logging

import polars as pl

from fairppl.core.io import write_table


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    tables = [pl.read_csv(f, infer_schema_length=None) for f in snakemake.input.coverage]
    table = pl.concat(tables, how="diagonal_relaxed") if tables else pl.DataFrame()
    logging.info("%d rows from %d corpora", table.height, len(tables))
    write_table(table, csv=snakemake.output.csv)


if "snakemake" in globals():
    main(snakemake)
