"""Aggregate every per-unit score table into the bits-per-utterance table (each model on all the
units it scored), the model comparison (every language and model of a corpus on the units all of
them scored, less the languages a corpus's common_min_share leaves out: column
common_set_languages), both with paired bootstrap intervals, the paired differences between
languages adjacent in each model's ranking, the paired differences between every two models
of each language, and the paired bootstrap of the answer's ranking (each language's position by
mean rank over the answer's distinct models, its interval and its shares of replicates as
hardest and easiest)."""

import logging

import polars as pl

from fairppl.stats.bootstrap import (
    BootstrapSettings,
    interval_table,
    language_differences,
    paired_model_differences,
    with_intervals,
)
from fairppl.core.integrity import verify
from fairppl.report.rankings import rank_uncertainty_table
from fairppl.core.io import read_parquet, write_table
from fairppl.stats.metrics import (
    OPTIONAL_KEYS,
    OPTIONAL_VALUES,
    SCORE_COLUMNS,
    bits_per_utterance,
    common_unit_set,
    describe_common_set,
    english_char_counts,
    with_common_set,
    with_unit_set,
)


def read_scores(path):
    """The canonical columns of one per-unit table, and the optional keys and values it has
    (refused if its bytes changed since its job wrote it)."""
    verify(path)
    names = pl.read_parquet_schema(path)
    return pl.read_parquet(path, columns=list(SCORE_COLUMNS) + [
        c for c in OPTIONAL_KEYS + OPTIONAL_VALUES if c in names])


def common_min_shares(snakemake) -> dict[str, float]:
    """corpus -> its common_min_share (the rule's params where given, else the config)."""
    given = snakemake.params.get("common_min_share")
    if given is not None:
        return dict(given)
    return {name: float(spec.get("common_min_share") or 0)
            for name, spec in snakemake.config["corpora"].items()}


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    settings = BootstrapSettings(**snakemake.params.bootstrap)
    scores = pl.concat([read_scores(p) for p in snakemake.input.scores], how="diagonal_relaxed")
    units = pl.concat([read_parquet(p) for p in snakemake.input.units], how="vertical_relaxed")
    english = english_char_counts(units)
    common_scores, languages = common_unit_set(scores, common_min_shares(snakemake))
    for corpus, split, text in describe_common_set(languages).iter_rows():
        logging.info("%s/%s: common unit set of %s", corpus, split, text)
    table = with_unit_set(bits_per_utterance(scores, units), common=False)
    table = with_intervals(table, interval_table(scores, english, settings))
    common = with_unit_set(bits_per_utterance(common_scores, units), common=True)
    common = with_intervals(common, interval_table(common_scores, english, settings))
    common = with_common_set(common, languages)
    # Adjacent languages within each model, on all the units that model scored (the same units
    # in every language of a model: the report's answer rests on these); where a model's
    # languages scored different units (a corpus with units: own), on the common unit set.
    differences = language_differences(scores, common_scores, english, settings)
    model_differences = paired_model_differences(common_scores, english, settings)
    ranks = rank_uncertainty_table(common, table, scores, common_scores, english, settings)
    logging.info("%d rows from %d per-unit tables; %d rows on common units; %d model-vs-model "
                 "differences; %s", table.height, len(snakemake.input.scores), common.height,
                 model_differences.height, settings.describe())
    write_table(table, parquet=snakemake.output.parquet, csv=snakemake.output.csv)
    write_table(common, parquet=snakemake.output.models_parquet, csv=snakemake.output.models_csv)
    write_table(differences, csv=snakemake.output.differences)
    write_table(model_differences, csv=snakemake.output.model_differences)
    write_table(ranks, csv=snakemake.output.rank_uncertainty)


if "snakemake" in globals():
    main(snakemake)
