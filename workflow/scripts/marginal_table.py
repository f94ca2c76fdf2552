"""Sum every per-unit marginal table into results/tables/marginal.{parquet,csv}: one row per
corpus, language, model, tokenizer, estimator, K, tau, L and M."""

import logging

import polars as pl

from fairppl.bootstrap import BootstrapSettings
from fairppl.io import write_table
from fairppl.marginal.table import marginal_table


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    settings = BootstrapSettings(**snakemake.params.bootstrap)
    per_unit = pl.concat([pl.read_parquet(p) for p in snakemake.input.tables],
                         how="vertical_relaxed")
    units = pl.concat([pl.read_parquet(p) for p in snakemake.input.units], how="vertical_relaxed")
    table = marginal_table(per_unit, units, settings)
    logging.info("%d rows from %d per-unit tables (%d runs); %s", table.height,
                 len(snakemake.input.tables), per_unit.height, settings.describe())
    write_table(table, parquet=snakemake.output.parquet, csv=snakemake.output.csv)


if "snakemake" in globals():
    main(snakemake)
