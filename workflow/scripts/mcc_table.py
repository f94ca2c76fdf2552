"""The MCC table (one row per language, source and part of speech) and the validation of the
Apertium MCC against the published values (per-language ratios, Pearson with its permutation p,
Spearman with its exact p), on the parts of speech of each published value's lexicon where
known."""

import logging

from fairppl.core.io import write_table
from fairppl.morphology.table import lexicon_pos, mcc_table, read_record, validation_table


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    records = [read_record(p) for p in snakemake.input.records]
    table = mcc_table(records)
    validation = validation_table(table, lexicon_pos=lexicon_pos(records))
    write_table(table, csv=snakemake.output.table)
    write_table(validation, csv=snakemake.output.validation)
    logging.info("%d MCC rows, %d validation rows", table.height, validation.height)


if "snakemake" in globals():
    main(snakemake)
