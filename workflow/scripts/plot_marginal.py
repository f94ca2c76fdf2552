"""The marginal stage's figures: lattice entropy vs gap, samples needed, per-sequence intervals."""

import logging

import polars as pl

from fairppl.marginal.analyses import read_curves
from fairppl.core.io import write_table
from fairppl.report.plots_marginal import (entropy_gap_figure, interval_figure, interval_panels,
                                           samples_needed_figure)


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    per_unit = pl.read_parquet(snakemake.input.per_unit)
    entropy_gap_figure(per_unit, snakemake.output.entropy, int(snakemake.params.min_units))
    interval_figure(per_unit, snakemake.output.intervals)
    write_table(interval_panels(per_unit), csv=snakemake.output.panels)
    samples_needed_figure(read_curves(snakemake.input.curves), snakemake.output.needed)
    logging.info("%d per-unit records plotted", per_unit.height)


if "snakemake" in globals():
    main(snakemake)
