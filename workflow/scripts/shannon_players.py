"""The players of `shannon.players` beside the campaign's models, on the truncations each played
(fairppl.shannon.players): results/tables/shannon_players.csv."""

import logging

from fairppl.core.io import write_table
from fairppl.shannon.players import players_table


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    table = players_table(snakemake.params.players)
    write_table(table, csv=snakemake.output.table)
    logging.info("%d rows: %d players' entries with their campaigns' models", table.height,
                 len(snakemake.params.players))


if "snakemake" in globals():
    main(snakemake)
