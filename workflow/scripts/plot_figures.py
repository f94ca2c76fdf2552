"""Figures: the main ranking figure (first corpus), one per second-domain corpus, and the UNK
sweep; every figure on the units its title states."""

import logging

import polars as pl

from fairppl.report.plots import ranking_figure, study_styles, unk_figure


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    models = pl.read_parquet(snakemake.input.models)
    bpu = pl.read_parquet(snakemake.input.bpu)
    names = {r["language"]: r["name"] for r in snakemake.params.languages}
    styles = study_styles(bpu)  # one look per model in every figure
    for corpus, path in snakemake.params.corpus_figures.items():
        ranking_figure(models, names, corpus, path, styles)
        logging.info("%s: %s", corpus, path)
    unk_figure(bpu, names, snakemake.output.unk, styles)


if "snakemake" in globals():
    main(snakemake)
