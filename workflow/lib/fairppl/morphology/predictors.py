"""What predicts a language's difficulty: Mielke et al. (2019) found that morphological counting
complexity stops explaining difficulty once more languages are added, and that simple statistics
of the text (word types, type/token ratio, ...) explain it better. This module tests that on the
study's data: each language's difficulty and BPEC against every morphology measure (by source)
and every property of the correlates table, Pearson and Spearman across languages, with
Benjamini-Hochberg adjusted p-values over every predictor tested for one model and target.

Models are grouped into segmentation families (:func:`family`) so that a reader sees whether the
answer depends on how the text is cut: characters, subword pieces, or a pretrained LM's own
tokenizer.
"""

from __future__ import annotations

import math

import polars as pl
from scipy.stats import pearsonr

from ..stats.correlates import feature_description, feature_names, spearman
from .regression import with_adjusted_p

#: Columns of ``difficulty_predictors.csv``, with their units.
PREDICTOR_COLUMNS = {
    "corpus": "corpus id",
    "family": "segmentation family: character, subword or pretrained",
    "model": "model id",
    "tokenizer": "tokenizer id",
    "target": "difficulty (exp d_j) or bpec (common units)",
    "predictor": "property of the language (see predictor_description)",
    "predictor_description": "what the predictor measures, with its unit",
    "n_languages": "languages with both values (count)",
    "pearson_r": "Pearson correlation (-1 to 1)",
    "pearson_p": "two-sided p (t test)",
    "spearman_rho": "Spearman rank correlation (-1 to 1)",
    "spearman_p": "two-sided p (exact for small n)",
    "pearson_p_bh": "Benjamini-Hochberg adjusted over the predictors of this model and target",
    "spearman_p_bh": "the same for Spearman's p",
}


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
    table ``features`` and the morphology measures ``measures`` (corpus, language, measure,
    source, value; a measure becomes the predictor ``<measure>:<source>``)."""
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


def predictor_correlations(targets: pl.DataFrame, predictors: pl.DataFrame) -> pl.DataFrame:
    """Correlations of every target with every predictor across languages.

    ``targets``: corpus, model, tokenizer, language, target (name), y. ``predictors``: the
    output of :func:`predictor_table`. Rows with fewer than 3 languages keep empty statistics.
    The adjusted p-values are over every predictor of one (corpus, model, tokenizer, target)."""
    rows = []
    keys = ["corpus", "model", "tokenizer", "target"]
    for key, part in targets.group_by(keys, maintain_order=True):
        corpus, model, tok, target = key
        joined = part.join(predictors.filter(pl.col("corpus") == corpus), on=["corpus",
                                                                              "language"])
        for (name, description), pairs in joined.group_by(["predictor", "predictor_description"],
                                                           maintain_order=True):
            x, y = pairs["value"].to_list(), pairs["y"].to_list()
            rho, rho_p, n = spearman(x, y)
            r = r_p = None
            if n >= 3 and len(set(x)) > 1 and len(set(y)) > 1:
                result = pearsonr(x, y)
                r, r_p = float(result.statistic), float(result.pvalue)
                r, r_p = (None, None) if math.isnan(r) else (r, r_p)
            rows.append({"corpus": corpus, "family": family(model, tok), "model": model,
                         "tokenizer": tok, "target": target, "predictor": name,
                         "predictor_description": description, "n_languages": n,
                         "pearson_r": r, "pearson_p": r_p, "spearman_rho": rho,
                         "spearman_p": rho_p})
    schema = {c: pl.String for c in ("corpus", "family", "model", "tokenizer", "target",
                                     "predictor", "predictor_description")}
    schema.update({"n_languages": pl.Int64, "pearson_r": pl.Float64, "pearson_p": pl.Float64,
                   "spearman_rho": pl.Float64, "spearman_p": pl.Float64})
    table = pl.DataFrame(rows, schema=schema)
    if not table.height:
        return table.with_columns(pearson_p_bh=pl.lit(None, pl.Float64),
                                  spearman_p_bh=pl.lit(None, pl.Float64))
    return with_adjusted_p(table, by=keys)
