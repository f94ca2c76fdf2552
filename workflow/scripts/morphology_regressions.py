"""Regressions of BPEC on each morphology measure across languages (results/tables/morphology.csv
and its LaTeX copy), computed from the per-language table morphology_languages.csv and nothing
else: one row per corpus, model, measure, source and text (words, lemmas, difference, marginal)."""

import logging

import polars as pl

from fairppl.core.io import write_table
from fairppl.core.latex import write_latex
from fairppl.morphology.languages import regression_inputs
from fairppl.morphology.regression import FAMILY_COLUMNS, regression_table
from fairppl.stats.permutation import PermutationSettings

#: The units line of the LaTeX table (short: the CSV's documentation has the long form).
LATEX_UNITS = {"slope": "bits/char per unit", "slope_low": "", "slope_high": "",
               "intercept": "bits/char", "n_languages": "count", "permutations": "count"}


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    settings = PermutationSettings(**snakemake.params.permutation)
    languages = pl.read_csv(snakemake.input.languages, infer_schema_length=None)
    long = regression_inputs(languages).rename({"x": "value", "y": "bpec", "excluded": "reason"})
    table = regression_table(long, settings, language_families=snakemake.params.families)
    logging.info("%d regressions from %d language rows; %s", table.height, languages.height,
                 settings.describe())
    write_table(table, csv=snakemake.output.csv)
    # the family-controlled columns stay in the CSV and the report: the LaTeX table keeps the
    # paper's width
    write_latex(table.filter(pl.col("measure") == "mcc").drop("note", "corpus", "test_family",
                                                             *FAMILY_COLUMNS),
                snakemake.output.tex, caption="Regressions of BPEC on morphological counting "
                "complexity across languages (slope interval: the inverted permutation test; "
                "_bh columns: Benjamini-Hochberg over every regression of the stage, one "
                "question: morphology-cost).",
                label="tab:morphology", headers=LATEX_UNITS)


if "snakemake" in globals():
    main(snakemake)
