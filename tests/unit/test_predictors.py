"""Predictors of difficulty: correlations against scipy, Benjamini-Hochberg per model and target,
families of segmentation."""

import polars as pl
import pytest
from scipy.stats import false_discovery_control, pearsonr, spearmanr

from fairppl.morphology.predictors import family, predictor_table
from fairppl.morphology.regression import predictor_correlations


def test_family_of_each_segmentation():
    assert family("kenlm-char-o5", "char") == "character"
    assert family("transformer", "char") == "character"
    assert family("kenlm-subword-o5", "spm-bpe-4000") == "subword"
    assert family("gemma3-270m", "native") == "pretrained"


def test_correlations_match_scipy_and_adjust_per_model_and_target():
    languages = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
    ttr = [0.10, 0.12, 0.30, 0.25, 0.18, 0.40, 0.22, 0.35, 0.15, 0.28]
    types = [900, 1500, 2500, 1800, 1100, 4000, 2100, 3000, 1000, 2600]
    features = pl.DataFrame({"corpus": ["c"] * 10, "language": languages,
                             "type_token_ratio": ttr, "train_word_types": types})
    measures = pl.DataFrame({"corpus": ["c"] * 3, "language": ["a", "b", "c"],
                             "measure": ["mcc"] * 3, "source": ["published"] * 3,
                             "value": [6.0, 38.0, 71.0]})
    predictors = predictor_table(features, measures)
    assert set(predictors["predictor"]) == {"type_token_ratio", "train_word_types",
                                            "mcc:published"}
    y = [1.0, 1.1, 1.6, 1.3, 1.2, 1.9, 1.25, 1.5, 1.05, 1.45]
    targets = pl.DataFrame({"corpus": ["c"] * 10, "model": ["m"] * 10, "tokenizer": ["char"] * 10,
                            "family": ["character"] * 10, "language": languages,
                            "response": ["bpec"] * 10, "value": y})
    table = predictor_correlations(targets, predictors.drop("predictor_description"))
    rows = {r["predictor"]: r for r in table.iter_rows(named=True)}
    ttr_row = rows["type_token_ratio"]
    assert ttr_row["pearson_r"] == pytest.approx(pearsonr(ttr, y).statistic)
    assert "pearson_p" not in ttr_row and "pearson_p_bh" not in ttr_row
    assert ttr_row["spearman_rho"] == pytest.approx(spearmanr(ttr, y).statistic)
    assert ttr_row["n_languages"] == 10 and ttr_row["family"] == "character"
    assert rows["mcc:published"]["n_languages"] == 3
    ps = [rows[k]["spearman_p"] for k in ("type_token_ratio", "train_word_types", "mcc:published")]
    expected = false_discovery_control(ps, method="bh")
    got = [rows[k]["spearman_p_bh"] for k in ("type_token_ratio", "train_word_types",
                                             "mcc:published")]
    assert got == pytest.approx(list(expected))
