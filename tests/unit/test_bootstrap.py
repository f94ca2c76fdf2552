"""Paired bootstrap intervals (fairppl.stats.bootstrap): exact answers on enumerable cases, pairing,
closed forms, determinism."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from fairppl.stats.bootstrap import (
    BootstrapSettings,
    difference_interval,
    interval_table,
    paired_language_differences,
    paired_model_differences,
    ratio_interval,
    resample_counts,
    with_intervals,
)
from fairppl.stats.metrics import score_frame

S = BootstrapSettings(replicates=4000, seed=3, level=0.95)


def test_counts_are_draws_with_replacement():
    counts = resample_counts(7, 500, seed=1)
    assert counts.shape == (500, 7)
    assert (counts.sum(axis=1) == 7).all()  # every replicate draws n units
    assert counts.min() >= 0 and np.allclose(counts, counts.round())
    # Each unit is drawn n * (1/n) = 1 time per replicate on average.
    assert counts.mean(axis=0) == pytest.approx(np.ones(7), abs=0.1)


def test_two_units_enumerated():
    """n = 2: the resamples are {a,a} (1/4), {a,b} (1/2), {b,b} (1/4). With ratios 2 and 6 and
    equal denominators the replicate ratio is 2, 4 or 6 with those probabilities, so the 95%
    interval is [2, 6] and the 50% interval [4, 4]."""
    counts = resample_counts(2, 20000, seed=0)
    ratios = (counts @ np.array([2.0, 6.0])) / (counts @ np.array([1.0, 1.0]))
    values, freq = np.unique(ratios, return_counts=True)
    assert values.tolist() == [2.0, 4.0, 6.0]
    assert (freq / freq.sum()) == pytest.approx([0.25, 0.5, 0.25], abs=0.01)
    assert ratio_interval([2.0, 6.0], [1.0, 1.0], BootstrapSettings(20000, 0, 0.95)) == (2.0, 6.0)
    assert ratio_interval([2.0, 6.0], [1.0, 1.0], BootstrapSettings(20000, 0, 0.5)) == (4.0, 4.0)


def test_ratio_of_sums_per_replicate():
    """Unequal denominators: {a,b} gives (2 + 6) / (1 + 3) = 2, not the mean of ratios 2 and 2."""
    counts = resample_counts(2, 1000, seed=0)
    ratios = (counts @ np.array([2.0, 6.0])) / (counts @ np.array([1.0, 3.0]))
    assert np.allclose(ratios, 2.0)  # a constant-ratio column: degenerate bootstrap
    assert ratio_interval([2.0, 6.0, 10.0], [1.0, 3.0, 5.0], S) == pytest.approx((2.0, 2.0))


def test_mean_interval_matches_the_closed_form_standard_error():
    """Bits per utterance (denominator 1): the bootstrap sd of the mean is sqrt(var_pop / n)."""
    x = np.random.default_rng(5).gamma(2.0, 50.0, size=400)
    counts = resample_counts(len(x), 20000, seed=2)
    reps = counts @ x / len(x)
    assert reps.std() == pytest.approx(x.std() / np.sqrt(len(x)), rel=0.03)
    low, high = ratio_interval(x, np.ones_like(x), BootstrapSettings(20000, 2, 0.95))
    half = 1.96 * x.std() / np.sqrt(len(x))
    assert low == pytest.approx(x.mean() - half, rel=0.01)
    assert high == pytest.approx(x.mean() + half, rel=0.01)


def test_difference_intervals_are_paired():
    rng = np.random.default_rng(0)
    bits = rng.gamma(2.0, 50.0, size=50)
    chars = rng.integers(20, 200, size=50).astype(float)
    # A column against itself: [0, 0]; against itself + c per English char: [c, c].
    assert difference_interval(bits, chars, bits, chars, S) == (0.0, 0.0, 0.0)
    shifted = bits + 0.5 * chars
    est, low, high = difference_interval(shifted, chars, bits, chars, S)
    assert (est, low, high) == pytest.approx((0.5, 0.5, 0.5))
    # Unpaired draws would give an interval about as wide as the column's own.
    _, low, high = difference_interval(bits * 1.01, chars, bits, chars, S)
    lo_a, hi_a = ratio_interval(bits, chars, S)
    assert (high - low) < 0.1 * (hi_a - lo_a)


def test_seed_determinism():
    x, y = np.arange(1.0, 31.0) ** 1.5, np.arange(1.0, 31.0)
    a = ratio_interval(x, y, BootstrapSettings(500, 7, 0.9))
    assert a == ratio_interval(x, y, BootstrapSettings(500, 7, 0.9))
    assert a != ratio_interval(x, y, BootstrapSettings(500, 8, 0.9))


def _scores(language, model, bits, open_vocabulary=True, units=("u0", "u1", "u2", "u3")):
    n = len(units)
    return score_frame(corpus="c", language=language, model=model, tokenizer="char",
                       vocab_size=None, open_vocabulary=open_vocabulary, split="test",
                       unit_ids=list(units), n_chars=[5] * n, n_bytes=[5] * n,
                       n_tokens=[6] * n, bits=list(bits))


ENGLISH = pl.DataFrame({"corpus": ["c"] * 4, "unit_id": ["u0", "u1", "u2", "u3"],
                        "n_english_chars": [10, 20, 30, 40]})


def test_interval_table_per_row_and_closed_rows_have_no_bpec():
    scores = pl.concat([_scores("eng", "m", [10.0, 20.0, 30.0, 40.0]),  # 1 bit/English char
                        _scores("deu", "m", [1.0, 50.0, 2.0, 90.0]),
                        _scores("deu", "w", [1.0, 2.0, 3.0, 4.0], open_vocabulary=False)])
    table = interval_table(scores, ENGLISH, S)
    eng = table.filter(language="eng").row(0, named=True)
    assert (eng["bpec_ci_low"], eng["bpec_ci_high"]) == pytest.approx((1.0, 1.0))
    assert eng["bpu_ci_low"] < 25.0 < eng["bpu_ci_high"]
    word = table.filter(model="w").row(0, named=True)
    assert word["bpec_ci_low"] is None and word["bpu_ci_low"] is not None
    assert table["ci_replicates"].unique().to_list() == [4000]
    assert table["ci_seed"].unique().to_list() == [3]
    assert table["ci_level"].unique().to_list() == [0.95]
    # Pretrained rows have a null train_corpus: the join still finds them.
    agg = (scores.group_by("language", "model").agg(pl.len()).with_columns(
        corpus=pl.lit("c"), tokenizer=pl.lit("char"), split=pl.lit("test"),
        train_corpus=pl.lit(None, pl.String)))
    joined = with_intervals(agg, interval_table(
        scores.with_columns(train_corpus=pl.lit(None, pl.String)), ENGLISH, S))
    assert joined["bpu_ci_low"].null_count() == 0


def test_adjacent_language_differences():
    scores = pl.concat([_scores("eng", "m", [10.0, 20.0, 30.0, 40.0]),
                        _scores("deu", "m", [20.0, 40.0, 60.0, 80.0]),  # exactly 2x English
                        _scores("fra", "m", [15.0, 30.0, 45.0, 60.0])])  # exactly 1.5x
    diffs = paired_language_differences(scores, ENGLISH, S)
    assert diffs.select("language", "next_language").rows() == [("deu", "fra"), ("fra", "eng")]
    assert diffs["bpec_difference"].to_list() == pytest.approx([0.5, 0.5])
    assert diffs["ci_low"].to_list() == pytest.approx([0.5, 0.5])
    assert diffs["ci_high"].to_list() == pytest.approx([0.5, 0.5])
    assert diffs["excludes_zero"].all()
    # Not on one common unit set: no paired comparison is claimed.
    ragged = pl.concat([scores, _scores("tur", "m", [1.0, 2.0], units=("u0", "u1"))])
    assert paired_language_differences(ragged, ENGLISH, S).height == 0


def _model_scores(model, bits, chars=(10, 20, 30, 40), language="eng"):
    units = [f"u{i}" for i in range(len(bits))]
    return score_frame(corpus="c", language=language, model=model, tokenizer="char",
                       vocab_size=None, open_vocabulary=True, split="test", unit_ids=units,
                       n_chars=[int(c) for c in chars], n_bytes=[int(c) for c in chars],
                       n_tokens=[1] * len(bits),
                       bits=list(bits))


def _english(chars):
    return pl.DataFrame({"corpus": ["c"] * len(chars),
                         "unit_id": [f"u{i}" for i in range(len(chars))],
                         "n_english_chars": [int(c) for c in chars]})


def test_a_model_against_itself_plus_c_per_english_char():
    rng = np.random.default_rng(1)
    chars = rng.integers(20, 200, size=60).astype(float)
    bits = rng.gamma(2.0, 50.0, size=60)
    scores = pl.concat([_model_scores("transformer", bits + 0.25 * chars, chars),
                        _model_scores("kenlm-char-o6", bits, chars),
                        _model_scores("gpt", bits, chars),
                        _model_scores("w", bits, chars).with_columns(open_vocabulary=False)])
    diffs = paired_model_differences(scores, _english(chars), S)
    # Character n-gram first; the closed-vocabulary model is left out.
    assert diffs.select("model_a", "model_b").rows() == [
        ("kenlm-char-o6", "gpt"), ("kenlm-char-o6", "transformer"), ("gpt", "transformer")]
    row = diffs.row(1, named=True)
    assert row["bpec_a"] == pytest.approx(bits.sum() / chars.sum())
    assert row["bpec_b"] - row["bpec_a"] == pytest.approx(0.25)
    assert (row["bpec_difference"], row["ci_low"], row["ci_high"]) == pytest.approx(
        (-0.25, -0.25, -0.25))
    assert row["excludes_zero"] and row["n_units"] == 60
    same = diffs.row(0, named=True)  # identical columns: [0, 0], not told apart
    assert (same["bpec_difference"], same["ci_low"], same["ci_high"]) == (0.0, 0.0, 0.0)
    assert not same["excludes_zero"]


def test_model_differences_are_paired():
    """Two models whose per-unit bits move together (hard units are hard for both): the paired
    interval of the difference is far narrower than one built from independent draws, and equal
    to difference_interval on the same units (same draws: sorted unit ids)."""
    rng = np.random.default_rng(4)
    chars = rng.integers(20, 200, size=80).astype(float)
    hard = rng.gamma(2.0, 1.0, size=80) * chars
    a, b = hard, 1.05 * hard + rng.normal(0.0, 1.0, size=80)
    diffs = paired_model_differences(
        pl.concat([_model_scores("kenlm-char-o6", a, chars), _model_scores("m", b, chars)]),
        _english(chars), S)
    row = diffs.row(0, named=True)
    order = np.argsort([f"u{i}" for i in range(80)])  # units resampled in sorted-id order
    assert (row["bpec_difference"], row["ci_low"], row["ci_high"]) == pytest.approx(
        difference_interval(a[order], chars[order], b[order], chars[order], S))
    counts_a = resample_counts(80, S.replicates, seed=10)
    counts_b = resample_counts(80, S.replicates, seed=11)
    unpaired = (counts_a @ a) / (counts_a @ chars) - (counts_b @ b) / (counts_b @ chars)
    low, high = np.quantile(unpaired, [0.025, 0.975])
    assert row["ci_high"] - row["ci_low"] < 0.2 * (high - low)
    assert row["excludes_zero"] and not (low > 0 or high < 0)  # unpaired would not tell them apart


def test_model_differences_per_language_and_repeated_units_rejected():
    scores = pl.concat([_model_scores("kenlm-char-o6", [1.0] * 4),
                        _model_scores("m", [2.0] * 4),
                        _model_scores("kenlm-char-o6", [1.0] * 4, language="deu")])
    diffs = paired_model_differences(scores, ENGLISH, S)
    assert diffs["language"].to_list() == ["eng"]  # one model in deu: nothing to pair
    assert diffs["bpec_difference"].to_list() == pytest.approx([-4 / 100])
    twice = pl.concat([scores, _model_scores("m", [3.0] * 4)])
    with pytest.raises(ValueError, match=r"c/eng: model 'm / char' scored unit 'u\d' more than"):
        paired_model_differences(twice, ENGLISH, S)
