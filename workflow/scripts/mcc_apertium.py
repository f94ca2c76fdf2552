"""MCC and forms per lemma of one language from its Apertium analyser (lt-paradigm, the tag
mapping of fairppl.morphology.apertium)."""

import logging

from fairppl.morphology.apertium import apertium_record
from fairppl.morphology.table import write_record


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    record = apertium_record(snakemake.wildcards.language, snakemake.params.apertium_dir)
    write_record(snakemake.output[0], record)
    logging.info("%s", record)


if "snakemake" in globals():
    main(snakemake)
