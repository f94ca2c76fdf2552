"""What predicts a language's difficulty: Mielke et al. (2019) found that morphological counting
complexity stops explaining difficulty once more languages are added, and that simple statistics
of the text (word types, type/token ratio, ...) explain it better. This module tests that on the
study's data: each language's difficulty and BPEC against every morphology measure (by source)
and every property of the correlates table, Pearson and Spearman across languages, with
Benjamini-Hochberg adjusted p-values over every test of the question, as Mielke et al. pooled
theirs (:data:`fairppl.morphology.questions.QUESTIONS`;
:func:`fairppl.morphology.regression.predictor_correlations` computes them; this module names
the predictors and the segmentation families).

Models are grouped into segmentation families (:func:`family`) so that a reader sees whether the
answer depends on how the text is cut: characters, subword pieces, or a pretrained LM's own
tokenizer.
"""

from __future__ import annotations

import polars as pl

from ..stats.correlates import feature_description, feature_names


def family(model: str, tokenizer: str) -> str:
    """The segmentation family of a (model, tokenizer): ``character`` (character n-gram,
    Transformer on characters), ``subword`` (models over the study's SentencePiece pieces) or
    ``pretrained`` (a pretrained LM with its own tokenizer)."""
    if tokenizer == "char":
        return "character"
    if tokenizer.startswith("spm-"):
        return "subword"
    return "pretrained"


def predictor_table(features: pl.DataFrame, measures: pl.DataFrame) -> pl.DataFrame:
    """One row per (corpus, language, predictor): value and description, from the correlates
    table ``features`` (its features, :func:`fairppl.stats.correlates.feature_names`: the unit
    and word counts beside them are not predictors) and the morphology measures ``measures``
    (corpus, language, measure, source, value; a measure becomes the predictor
    ``<measure>:<source>``). A null value (a language its corpus's common units leave out) makes
    no row."""
    rows = []
    for name in feature_names(features.columns):
        rows.append(features.select("corpus", "language", pl.lit(name).alias("predictor"),
                                    pl.lit(feature_description(name))
                                    .alias("predictor_description"),
                                    pl.col(name).cast(pl.Float64).alias("value")))
    if measures.height:
        rows.append(measures.select(
            "corpus", "language",
            pl.format("{}:{}", "measure", "source").alias("predictor"),
            pl.format("{} from {}", "measure", "source").alias("predictor_description"),
            pl.col("value").cast(pl.Float64)))
    return pl.concat(rows).filter(pl.col("value").is_not_null())

