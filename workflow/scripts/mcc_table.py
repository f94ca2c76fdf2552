"""The MCC table (one row per language, source and part of speech) and the validation of the
Apertium MCC against the published values (per-language ratios, Pearson and Spearman)."""

import logging

from fairppl.core.io import write_table
from fairppl.morphology.table import mcc_table, read_record, validation_table


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    table = mcc_table(read_record(p) for p in snakemake.input.records)
    validation = validation_table(table)
    write_table(table, csv=snakemake.output.table)
    write_table(validation, csv=snakemake.output.validation)
    logging.info("%d MCC rows, %d validation rows", table.height, validation.height)


if "snakemake" in globals():
    main(snakemake)
