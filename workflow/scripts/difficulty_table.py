"""The difficulty model of Mielke et al. (2019) per (corpus, model, tokenizer), fitted on every
unit each model scored (results/tables/difficulty.csv and its LaTeX copy; morphology.difficulty
picks the model, heteroscedastic by default as the authors published, and its interval; the
difficulties average 1 over the languages, the authors' normalisation, so the published values
beside are on the same scale), the agreement of the difficulties with the common-set BPEC
ranking, Benjamini-Hochberg adjusted over every corpus's models (difficulty_agreement.csv), and
what predicts
difficulty and BPEC across languages (difficulty_predictors.csv): every morphology measure and
every property of the correlates table, with p-values adjusted by Benjamini-Hochberg over the
whole table, one question (fairppl.morphology.questions); and the
difficulties beside Mielke et al.'s on the Bibles that are their text
(difficulty_mielke_bible.csv, its rows in difficulty_mielke_bible_rows.csv;
fairppl.morphology.mielke_bible); and the spread of difficulty between translations of one
language beside that between languages (difficulty_translations.csv, its translations in
difficulty_translations_rows.csv; fairppl.morphology.translations)."""

import logging

import polars as pl

from fairppl.core.io import write_table
from fairppl.core.latex import write_latex
from fairppl.morphology import mielke_bible
from fairppl.morphology.difficulty import difficulty_table, difficulty_vs_bpec
from fairppl.morphology.predictors import family, predictor_table
from fairppl.morphology.regression import predictor_correlations
from fairppl.morphology.translations import translation_tables
from fairppl.stats.bootstrap import BootstrapSettings
from fairppl.stats.permutation import PermutationSettings


def read_scores(paths) -> pl.DataFrame:
    keep = ["corpus", "language", "model", "tokenizer", "unit_id", "bits", "open_vocabulary"]
    frames = [pl.read_parquet(p, columns=keep) for p in paths]
    return pl.concat(frames).filter(pl.col("open_vocabulary")).drop("open_vocabulary")


def with_family(table: pl.DataFrame) -> pl.DataFrame:
    return table.with_columns(family=pl.struct("model", "tokenizer").map_elements(
        lambda r: family(r["model"], r["tokenizer"]), return_dtype=pl.String))


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    settings = BootstrapSettings(**snakemake.params.bootstrap)
    scores = read_scores(snakemake.input.scores)
    chosen = snakemake.params.difficulty
    difficulty = difficulty_table(scores, level=settings.level, interval=chosen["interval"],
                                  bootstrap=settings, model=chosen["model"])
    published = pl.read_csv(snakemake.input.published, separator="\t")
    difficulty = difficulty.join(
        published.select("language", published_difficulty="difficulty"), on="language",
        how="left")
    models = pl.read_parquet(snakemake.input.models)
    agreement = difficulty_vs_bpec(difficulty, models)
    features = pl.read_csv(snakemake.input.correlates)
    languages = pl.read_csv(snakemake.input.languages, infer_schema_length=None)
    measures = languages.select("corpus", "language", "measure", "source", "value")
    predictors = predictor_table(features, measures)
    responses = pl.concat([
        difficulty.select("corpus", "model", "tokenizer", "language",
                          pl.lit("difficulty").alias("response"),
                          pl.col("difficulty").alias("value")),
        models.filter(pl.col("open_vocabulary") & pl.col("bpec").is_not_null()).select(
            "corpus", "model", "tokenizer", "language", pl.lit("bpec").alias("response"),
            pl.col("bpec").alias("value")),
    ])
    correlations = predictor_correlations(
        with_family(responses), predictors.drop("predictor_description"),
        language_families=snakemake.params.families,
        settings=PermutationSettings(**snakemake.params.permutation))
    correlations = correlations.join(
        predictors.select("predictor", "predictor_description").unique("predictor"),
        on="predictor", how="left")
    logging.info("%d difficulty rows over %d models (%s model, %s intervals); %d predictor "
                 "correlations", difficulty.height, agreement.height, chosen["model"],
                 chosen["interval"], correlations.height)
    theirs = mielke_bible.read_published(snakemake.input.mielke_bible)
    rows, summary = mielke_bible.compare(
        difficulty.drop("published_difficulty"),
        mielke_bible.read_matches(snakemake.input.mielke_matches, theirs), theirs, settings)
    for line in summary["summary"]:
        logging.info("Mielke et al.'s Bibles: %s", line)
    write_table(summary, csv=snakemake.output.mielke)
    write_table(rows, csv=snakemake.output.mielke_rows)
    spread, spread_rows = translation_tables(
        difficulty, pl.DataFrame(snakemake.params.sheet), level=settings.level)
    write_table(spread, csv=snakemake.output.translations)
    write_table(spread_rows, csv=snakemake.output.translation_rows)
    write_table(difficulty, csv=snakemake.output.csv)
    write_table(agreement, csv=snakemake.output.agreement)
    write_table(correlations, csv=snakemake.output.predictors)
    write_latex(difficulty.select("model", "tokenizer", "language", "difficulty",
                                  "difficulty_low", "difficulty_high", "n_units"),
                snakemake.output.tex, caption=f"Per-language difficulty d_j of the "
                f"{chosen['model']} model of Mielke et al. (2019), fitted on every unit each "
                f"model scored (arithmetic mean of the languages = 1, as the authors published; "
                f"{settings.level:.0%} {chosen['interval']} interval).", label="tab:difficulty")


if "snakemake" in globals():
    main(snakemake)
