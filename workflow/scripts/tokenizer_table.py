"""Collect the tokenizer training records (requested and actual vocabulary sizes) in one table."""

import logging

from fairppl.core.io import write_table
from fairppl.tokenizers.records import record_table


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    # With no tokenizers (no corpus in tokenizers.corpora) the table is empty but keeps its header.
    table = record_table(list(snakemake.input.records))
    logging.info("%d tokenizer records", table.height)
    write_table(table, csv=snakemake.output.csv)


if "snakemake" in globals():
    main(snakemake)
