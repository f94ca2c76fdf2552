"""Figures: perplexity vs vocabulary size (naive vs UNK-corrected) and BPEC by model."""

import polars as pl

from fairppl.plots import models_figure, unk_figure


def main(snakemake):
    bpu = pl.read_parquet(snakemake.input.bpu)
    unk_figure(bpu, snakemake.output.unk)
    models_figure(pl.read_parquet(snakemake.input.models), snakemake.output.models)


if "snakemake" in globals():
    main(snakemake)
