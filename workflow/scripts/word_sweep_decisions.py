"""Decide, from each language's train split, which languages get the word sweep; fail if the
config's list of languages written without spaces disagrees with the data."""

import logging

import polars as pl

from fairppl.core.errors import InputError
from fairppl.core.io import write_table
from fairppl.ngram.word_sweep import DECISION_COLUMNS, word_sweep_decisions


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    p = snakemake.params
    if snakemake.input.units:
        units = pl.concat([pl.read_parquet(f, columns=["corpus", "language", "split", "text"])
                           for f in snakemake.input.units])
        try:
            table = word_sweep_decisions(units, p.without_spaces, p.max_chars_per_token, p.source,
                                         long_words=p.long_words)
        except InputError as err:
            logging.error("%s", err)
            raise
    else:
        table = pl.DataFrame(schema=DECISION_COLUMNS)
    for row in table.iter_rows(named=True):
        logging.info("%s/%s: %s", row["corpus"], row["language"], row["reason"])
    write_table(table, csv=snakemake.output.csv)


if "snakemake" in globals():
    main(snakemake)
