"""The paper's Figure 1 (BPEC on words, on lemmas, and their difference against MCC) for each MCC
source of the study."""

import logging

import polars as pl

from fairppl.morphology.languages import regression_inputs
from fairppl.report.plots_morphology import figure1


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    long = regression_inputs(pl.read_csv(snakemake.input.languages, infer_schema_length=None))
    names = {row["language"]: row["name"] for row in snakemake.params.languages}
    for source, path in snakemake.output.items():
        figure1(long, source, path, names)
        logging.info("%s: %s", source, path)


if "snakemake" in globals():
    main(snakemake)
