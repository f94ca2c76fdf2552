"""The Shannon game's results table (results/tables/shannon.csv: every protocol of every bettor)
and the rank histogram (results/tables/shannon_ranks.csv), from the per-truncation bet summaries
and nothing else."""

import logging

from fairppl.core.io import read_parquet, write_table
from fairppl.shannon.table import rank_histogram_table, shannon_table
from fairppl.stats.bootstrap import BootstrapSettings


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    frames = [read_parquet(path) for path in snakemake.input.tables]
    table = shannon_table(frames, snakemake.params.settings,
                          BootstrapSettings(**snakemake.params.bootstrap))
    write_table(table, csv=snakemake.output.table)
    write_table(rank_histogram_table(frames), csv=snakemake.output.ranks)
    logging.info("%d rows from %d bettors", table.height, len(frames))


if "snakemake" in globals():
    main(snakemake)
