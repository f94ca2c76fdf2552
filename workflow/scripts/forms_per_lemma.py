"""Forms per lemma of every study language from simplemma's dictionaries (a morphology proxy
beside MCC); the languages simplemma does not cover keep a row with the reason."""

import logging

from fairppl.core.io import write_table
from fairppl.morphology.forms_per_lemma import forms_per_lemma_table


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    table = forms_per_lemma_table(snakemake.params.languages)
    for row in table.iter_rows(named=True):
        logging.info("%s: %s forms, %s lemmas, %s per lemma (%s)", row["language"],
                     row["n_forms"], row["n_lemmas"], row["forms_per_lemma"], row["note"])
    write_table(table, csv=snakemake.output.csv)


if "snakemake" in globals():
    main(snakemake)
