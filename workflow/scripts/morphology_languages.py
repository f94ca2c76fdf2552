"""The morphology stage's per-language table (results/tables/morphology_languages.csv): every
morphology measure by source beside each open-vocabulary model's BPEC on words, on lemmas (the
lemmatized copy, same units) and marginalised over tokenizations, the numbers the regressions use."""

import logging

import polars as pl

from fairppl.core.io import read_csv, write_table
from fairppl.morphology.languages import (
    languages_table,
    marginal_bpec,
    measures_long,
    text_bpec,
)
from fairppl.morphology.lemmatize import LEMMA_SUFFIX
from fairppl.stats.metrics import english_char_counts


def read_scores(paths) -> pl.DataFrame:
    columns = ["corpus", "language", "model", "tokenizer", "unit_id", "bits"]
    frames = [pl.read_parquet(p, columns=columns) for p in paths]
    return pl.concat(frames) if frames else pl.DataFrame(schema=dict.fromkeys(columns, pl.String))


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    corpus = snakemake.params.corpus
    units = pl.read_parquet(snakemake.input.units)
    languages = sorted(set(units["language"]))
    words = read_scores(snakemake.input.words)
    lemmas = read_scores(snakemake.input.lemmas).with_columns(
        pl.col("corpus").str.strip_suffix(LEMMA_SUFFIX))
    bpec = text_bpec(words, lemmas, english_char_counts(units))
    marginal = read_csv(snakemake.input.marginal)
    marginal = marginal.filter(pl.col("corpus") == corpus) if marginal.height else marginal
    if marginal.height:
        bpec = pl.concat([bpec, marginal_bpec(marginal).select(bpec.columns)],
                         how="vertical_relaxed")
    coverage = read_csv(snakemake.input.coverage)
    reasons = {r["language"]: r["reason"] for r in coverage.iter_rows(named=True)
               if not r["covered"]}
    for language in languages:
        if coverage.height == 0 or language not in set(coverage["language"]):
            reasons.setdefault(language, f"no lemmatized copy of {corpus} (lemmas.corpora)")
    forms = read_csv(snakemake.input.forms_per_lemma)
    measures = measures_long(pl.read_csv(snakemake.input.mcc), forms)
    table = languages_table(corpus, languages, measures, bpec, reasons)
    logging.info("%d languages, %d measure rows, %d BPEC columns", len(languages), table.height,
                 len([c for c in table.columns if c.startswith("bpec.")]))
    write_table(table, csv=snakemake.output.csv)


if "snakemake" in globals():
    main(snakemake)
