"""The published MCC of one language (Cotterell et al. 2018, Table 1) as an MCC record."""

import logging

from fairppl.morphology.published import CITATION, read_published_mcc
from fairppl.morphology.table import published_record, write_record


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    language = snakemake.wildcards.language
    values = read_published_mcc(snakemake.input[0])
    if language not in values:
        raise ValueError(f"{snakemake.input[0]}: no published MCC for {language!r}")
    write_record(snakemake.output[0], published_record(language, values[language], CITATION))
    logging.info("%s: published MCC %d", language, values[language])


if "snakemake" in globals():
    main(snakemake)
