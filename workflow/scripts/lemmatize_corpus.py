"""Lemmatize a prepared corpus's units (simplemma) into its derived corpus `<corpus>-lemmas`, with
the coverage of each language (which lemmatizer, or why none; word tokens and the share changed)."""

import logging
import time

from fairppl.core.io import read_parquet, write_table
from fairppl.morphology.lemmatize import lemmatize_units


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    units = read_parquet(snakemake.input.units)
    start = time.perf_counter()
    lemmas, coverage = lemmatize_units(units, source=snakemake.input.units)
    logging.info("%d of %d units lemmatized in %.1f s", lemmas.height, units.height,
                 time.perf_counter() - start)
    for row in coverage.iter_rows(named=True):
        if row["covered"]:
            logging.info("%s (%s): %d word tokens, %.1f%% changed", row["language"], row["code"],
                         row["n_tokens"], 100 * (row["share_changed"] or 0.0))
        else:
            logging.info("%s: not covered: %s", row["language"], row["reason"])
    write_table(lemmas, parquet=snakemake.output.units)
    write_table(coverage, csv=snakemake.output.coverage)


if "snakemake" in globals():
    main(snakemake)
