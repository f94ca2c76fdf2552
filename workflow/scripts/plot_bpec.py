"""Figure: BPEC by language, one panel per corpus and model."""

import polars as pl

from fairppl.plots import bpec_figure


def main(snakemake):
    bpec_figure(pl.read_parquet(snakemake.input.bpu), snakemake.output.png)


if "snakemake" in globals():
    main(snakemake)
