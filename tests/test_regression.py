"""Regressions of BPEC on morphology measures (fairppl.morphology.regression) and the exact
p-values and multiple-testing correction they use (fairppl.stats.correlates): known datasets,
scipy as the reference, enumeration against the dynamic program."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import polars as pl
import pytest
from scipy.stats import (
    false_discovery_control,
    linregress,
    pearsonr,
    permutation_test,
    rankdata,
    spearmanr,
)

from fairppl.core.errors import InputError
from fairppl.morphology.regression import (
    REGRESSION_COLUMNS,
    predictor_correlations,
    regress,
    regression_table,
    with_adjusted_p,
    with_difference,
)
from fairppl.stats.correlates import (
    benjamini_hochberg,
    exact_spearman_p,
    exact_spearman_p_dp,
    spearman,
)
from fairppl.report.html import fmt
from fairppl.report.morphology import regression_sentences
from fairppl.stats.permutation import PermutationSettings, slope_test

# Anscombe's quartet, first set: slope 0.5001, intercept 3.0001, r 0.8164 (Anscombe 1973).
ANSCOMBE_X = [10, 8, 13, 9, 11, 14, 6, 4, 12, 7, 5]
ANSCOMBE_Y = [8.04, 6.95, 7.58, 8.81, 8.33, 9.96, 7.24, 4.26, 10.84, 4.82, 5.68]

S = PermutationSettings(permutations=2000, seed=5, level=0.9)


def test_dynamic_program_equals_enumeration_with_ties():
    rng = np.random.default_rng(1)
    for n in range(3, 9):
        for _ in range(6):
            x = rng.integers(0, 4, n)  # ties in x
            y = np.round(rng.normal(size=n), 1)
            if len(set(x)) < 2:
                continue
            assert exact_spearman_p_dp(x, y) == pytest.approx(exact_spearman_p(x, y), abs=1e-12)


def _rho(a, b, axis):
    """Spearman's rho along ``axis`` (no ties): Pearson's r of the ranks, vectorized."""
    ra = rankdata(a, axis=axis)
    rb = rankdata(b, axis=axis)
    ra = ra - ra.mean(axis=axis, keepdims=True)
    rb = rb - rb.mean(axis=axis, keepdims=True)
    return (ra * rb).sum(axis=axis) / np.sqrt((ra * ra).sum(axis=axis) * (rb * rb).sum(axis=axis))


def test_exact_p_closed_forms_and_scipy_permutation_test():
    # rho = 1: only the identity and its reverse reach |rho| = 1 among the n! pairings.
    assert exact_spearman_p_dp(range(10), range(10)) == pytest.approx(2 / 3628800)
    assert exact_spearman_p_dp(range(5), [4, 3, 2, 1, 0]) == pytest.approx(2 / 120)
    x, y = [3, 1, 4, 2, 5], [2.7, 1.8, 3.1, 2.8, 2.9]
    # scipy permutes both samples: (5!)^2 = 14,400 pairings <= n_resamples, so it is exact.
    # Without ties the null distribution is symmetric, so scipy's two-sided p (twice the
    # smaller tail) equals the share with |rho| at least the observed.
    ref = permutation_test((x, y), _rho, permutation_type="pairings", n_resamples=20_000,
                           vectorized=True)
    assert _rho(np.array(x), np.array(y), -1) == pytest.approx(spearmanr(x, y).statistic)
    assert exact_spearman_p_dp(x, y) == pytest.approx(ref.pvalue)
    # spearman(): exact by the dynamic program when asked for 9 to 12 pairs, else as before.
    x11 = ANSCOMBE_X
    rho, p, n = spearman(x11, ANSCOMBE_Y, exact_max=12)
    assert (rho, n) == (pytest.approx(spearmanr(x11, ANSCOMBE_Y).statistic), 11)
    assert p == pytest.approx(exact_spearman_p_dp(x11, ANSCOMBE_Y))
    assert p != pytest.approx(spearman(x11, ANSCOMBE_Y)[1])  # default: the t approximation
    with pytest.raises(ValueError, match="overflows"):
        exact_spearman_p_dp(range(21), range(21))


def test_exact_p_counts_by_hand():
    """n = 3, x = y = (1, 2, 3): the 6 pairings give rho 1, 0.5, 0.5, -0.5, -0.5, -1, so
    P(|rho| >= 1) = 2/6 and for y = (1, 3, 2) (rho 0.5) P(|rho| >= 0.5) = 1."""
    assert exact_spearman_p_dp([1, 2, 3], [1, 2, 3]) == pytest.approx(1 / 3)
    assert exact_spearman_p_dp([1, 2, 3], [1, 3, 2]) == pytest.approx(1.0)
    rhos = [spearmanr([1, 2, 3], p).statistic for p in permutations([1, 2, 3])]
    assert sorted(np.round(rhos, 6)) == [-1, -0.5, -0.5, 0.5, 0.5, 1]


def test_benjamini_hochberg_against_scipy_and_by_hand():
    rng = np.random.default_rng(2)
    p = rng.uniform(size=40) ** 3
    assert benjamini_hochberg(p) == pytest.approx(false_discovery_control(p, method="bh"))
    # By hand: m = 4, sorted 0.01 0.02 0.03 0.5 -> 0.04 0.04 0.04 0.5; None is not counted.
    assert benjamini_hochberg([0.03, None, 0.5, 0.01, 0.02]) == [
        pytest.approx(0.04), None, pytest.approx(0.5), pytest.approx(0.04), pytest.approx(0.04)]
    assert benjamini_hochberg([]) == []
    with pytest.raises(ValueError, match="outside"):
        benjamini_hochberg([0.2, 1.5])


def test_regress_on_anscombe_matches_scipy():
    row = regress(ANSCOMBE_X, ANSCOMBE_Y, S)
    ref = linregress(ANSCOMBE_X, ANSCOMBE_Y)
    assert row["n_languages"] == 11
    assert row["slope"] == pytest.approx(ref.slope) == pytest.approx(0.5001, abs=1e-4)
    assert row["intercept"] == pytest.approx(ref.intercept) == pytest.approx(3.0001, abs=1e-4)
    assert row["pearson_r"] == pytest.approx(ref.rvalue) == pytest.approx(0.8164, abs=1e-4)
    assert "pearson_p" not in row  # its t test over-rejects at 8 languages; the permutation p
    assert row["spearman_rho"] == pytest.approx(spearmanr(ANSCOMBE_X, ANSCOMBE_Y).statistic)
    assert row["spearman_p"] == pytest.approx(exact_spearman_p_dp(ANSCOMBE_X, ANSCOMBE_Y))
    assert row["slope_low"] < row["slope"] < row["slope_high"]
    assert row["permutations"] == 2001 and row["note"] == ""
    # 11 languages: Monte Carlo; 2000 draws put p within 0.01 (2 sd) of the exact p-value, and
    # the t test, exact here only for normal data, is close to it.
    assert row["permutation_p"] == pytest.approx(ref.pvalue, abs=0.01)


def test_permutation_p_by_hand_at_four_languages():
    """x = y = ranks of 4: |r| >= 0.8 where sum d^2 <= 2 or >= 18 (rho = 1 - sum d^2 / 10): the
    identity, 3 adjacent swaps, the reversal and its 3 adjacent swaps, 8 of 24 pairings."""
    test = slope_test([1, 2, 3, 4], [1, 3, 2, 4])
    assert (test.slope, test.p, test.permutations, test.exact) == (pytest.approx(0.8), 8 / 24,
                                                                   24, True)
    # Against an enumeration of the slope itself with numpy, on values with no ties.
    x, y = [0.3, 1.7, 2.0, 5.1], [2.0, 0.4, 3.3, 2.9]
    slopes = [np.polyfit(x, list(p), 1)[0] for p in permutations(y)]
    observed = np.polyfit(x, y, 1)[0]
    hand = sum(abs(s) >= abs(observed) - 1e-12 for s in slopes) / 24
    assert slope_test(x, y).p == pytest.approx(hand)
    # Evenly spaced and perfectly ordered: only the identity and the reversal reach |r| = 1;
    # both keep their |slope| for every beta0 (|B_pi| = 1), so no slope is rejected at 5%
    # (2/24 > 0.05): the interval is unbounded.
    ranks = [1, 2, 3, 4]
    perfect = slope_test(ranks, [2, 4, 6, 8])
    assert perfect.p == pytest.approx(2 / 24) and (perfect.low, perfect.high) == (None, None)
    row = regress(ranks, [1, 3, 2, 4], PermutationSettings())
    assert row["slope_low"] is None and "slope interval unbounded" in row["note"]
    # Uneven x: the reversal no longer reaches |r| = 1 and the p-value can fall to 1/24.
    assert slope_test(x, [2 * v for v in x]).p == pytest.approx(1 / 24)
    row = regress(x, y, PermutationSettings())
    assert row["permutation_p"] == pytest.approx(hand)


def test_monte_carlo_p_close_to_exact_at_eight():
    rng = np.random.default_rng(3)
    x = rng.lognormal(3, 1, 8)  # skewed, like MCC
    for beta in (0.0, 0.02, 0.05):
        y = beta * x + rng.normal(size=8)
        exact = slope_test(x, y)
        mc = slope_test(x, y, PermutationSettings(permutations=20_000, seed=1, exact_max=0))
        assert exact.exact and exact.permutations == 40320
        assert not mc.exact and mc.permutations == 20_001
        assert mc.p == pytest.approx(exact.p, abs=4 * np.sqrt(0.25 / 20_000) + 1e-4)
        # The slope test is Pearson's r's test: the same p-value with r as the statistic.
        if beta == 0.0:
            ys = y[np.array(list(permutations(range(8))))]
            ys = ys - ys.mean(axis=1, keepdims=True)
            xc = x - x.mean()
            rs = ys @ xc / np.sqrt((ys * ys).sum(axis=1) * (xc @ xc))
            r = np.corrcoef(x, y)[0, 1]
            assert exact.p == pytest.approx(np.mean(np.abs(rs) >= abs(r) - 1e-12))


def test_inverted_interval_ends_are_where_the_test_switches():
    """At each end of the interval the permutation test of y - beta0 x (a second computation,
    one test per beta0) turns from not rejecting to rejecting; 0 is outside exactly when
    p <= 1 - level."""
    rng = np.random.default_rng(4)
    for n in (5, 7, 12):
        x = rng.normal(size=n)
        y = 0.8 * x + rng.normal(size=n)
        settings = PermutationSettings(permutations=3000, seed=2, level=0.9)
        test = slope_test(x, y, settings)
        assert test.low < test.slope < test.high
        for end, outward in ((test.low, -1), (test.high, 1)):
            eps = 1e-7 * (1 + abs(end))
            inside = slope_test(x, y - (end - outward * eps) * x, settings).p
            outside = slope_test(x, y - (end + outward * eps) * x, settings).p
            assert inside > 0.1 >= outside
        assert (test.low <= 0 <= test.high) == (test.p > 0.1)


def test_too_few_languages_and_constant_measure_give_empty_rows():
    row = regress([1, 2], [3, 4], S)
    assert row["n_languages"] == 2 and row["slope"] is None and row["spearman_p"] is None
    assert row["note"] == "fewer than 3 languages (2): no regression"
    row = regress([4, 4, 4], [1, 2, 3], S)
    assert row["slope"] is None
    assert row["note"] == "every language has the same measure (4): no slope"
    with pytest.raises(ValueError, match="missing value"):
        regress([1, 2, float("nan")], [1, 2, 3], S)


def _long():
    rows = []
    mcc = {"eng": 6, "deu": 38, "fra": 30, "pol": 112, "spa": 71, "tur": None}
    for i, (lang, value) in enumerate(mcc.items()):
        words = 1.0 + 0.004 * (value or 0) + 0.01 * i
        rows.append(("bible", lang, "kenlm-char-o5", "mcc", "published", "words", value, words))
        lemmas = None if lang == "fra" else words - 0.002 * (value or 0)
        rows.append(("bible", lang, "kenlm-char-o5", "mcc", "published", "lemmas", value,
                     lemmas))
    return pl.DataFrame(rows, schema=["corpus", "language", "model", "measure", "source", "text",
                                      "value", "bpec"], orient="row")


def test_regression_table_rows_and_notes():
    long = with_difference(_long())
    table = regression_table(long, S)
    assert table.columns == list(REGRESSION_COLUMNS)
    assert table["text"].to_list() == ["difference", "lemmas", "words"]
    rows = {r["text"]: r for r in table.iter_rows(named=True)}
    words = rows["words"]
    assert words["n_languages"] == 5 and words["permutations"] == 120
    assert words["note"] == "left out: tur (no measure)"
    assert words["test_family"] == "bible:mcc:published:words"
    sub = _long().filter((pl.col("text") == "words") & pl.col("value").is_not_null())
    ref = linregress(sub["value"].to_numpy(), sub["bpec"].to_numpy())
    assert words["slope"] == pytest.approx(ref.slope)
    assert words["pearson_r"] == pytest.approx(ref.rvalue)
    # fra has no lemmas: left out of the lemmas and of the difference regressions.
    assert rows["lemmas"]["note"].endswith("left out: fra (no BPEC), tur (no measure)")
    assert rows["difference"]["n_languages"] == 4
    assert rows["difference"]["slope"] == pytest.approx(0.002)  # words - lemmas = 0.002 * mcc


def test_families_adjust_over_models_by_hand():
    """Two models of one corpus, measure, source and text are one family: each model's
    permutation and Spearman p-values are adjusted with m = 2 (by hand: sorted p1 <= p2 give
    min(2 p1, p2) and p2), and a different text is a different family."""
    second = _long().with_columns(model=pl.lit("kenlm-char-o3"),
                                  bpec=pl.col("bpec") * (1 + 0.3 * pl.col("language")
                                                         .is_in(["eng", "pol"])))
    table = regression_table(with_difference(pl.concat([_long(), second])), S)
    assert table.columns == list(REGRESSION_COLUMNS)
    assert sorted(set(table["test_family"])) == [f"bible:mcc:published:{t}"
                                            for t in ("difference", "lemmas", "words")]
    for (family,), part in table.group_by("test_family"):
        assert part.height == 2
        for column in ("permutation_p", "spearman_p"):
            p1, p2 = sorted(part[column].to_list())
            by_hand = sorted([min(2 * p1, p2), p2])
            assert sorted(part[f"{column}_bh"].to_list()) == pytest.approx(by_hand)


def test_regression_table_reason_column_and_too_few():
    long = _long().filter(pl.col("language").is_in(["eng", "deu", "tur"])).with_columns(
        reason=pl.when(pl.col("language") == "tur").then(pl.lit("no morphology data")))
    table = regression_table(long, S)
    row = table.filter(text="words").row(0, named=True)
    assert row["n_languages"] == 2 and row["slope"] is None
    assert row["note"] == ("fewer than 3 languages (2): no regression; left out: tur "
                           "(no morphology data)")


def test_regression_table_bad_input():
    with pytest.raises(InputError, match="lacks columns"):
        regression_table(_long().drop("source"), S)
    with pytest.raises(InputError, match="text must be one of"):
        regression_table(_long().with_columns(text=pl.lit("stems")), S)
    marginal = regression_table(_long().filter(text="words").with_columns(text=pl.lit("marginal")),
                                S)
    assert marginal["text"].to_list() == ["marginal"] and marginal["n_languages"][0] == 5
    with pytest.raises(InputError, match="2 rows for language 'eng'"):
        regression_table(pl.concat([_long(), _long().head(1)]), S)


def test_adjusted_p_per_family():
    table = pl.DataFrame({"family": ["a", "a", "a", "b"], "pearson_p": [0.01, 0.02, None, 0.04],
                          "spearman_p": [0.5, 0.5, 0.5, 0.5]})
    out = with_adjusted_p(table, by=["family"])
    assert out["pearson_p_bh"].to_list() == [pytest.approx(0.02), pytest.approx(0.02), None,
                                             pytest.approx(0.04)]
    assert with_adjusted_p(table)["pearson_p_bh"].to_list()[:2] == [pytest.approx(0.03)] * 2
    empty = with_adjusted_p(table.clear(), by=["family"])
    assert empty.columns == table.columns + ["pearson_p_bh", "spearman_p_bh"] and not empty.height


def test_predictor_correlations_with_bh_per_family():
    langs = ["eng", "deu", "fra", "pol", "spa", "tur"]
    difficulty = [0.95, 1.11, 1.0, 1.05, 0.98, None]
    responses = pl.DataFrame({
        "corpus": "bible", "family": "character", "model": "kenlm-char-o5", "tokenizer": "char",
        "language": langs * 2, "response": ["difficulty"] * 6 + ["bpec"] * 6,
        "value": difficulty + [1.9, 2.3, 2.0, 2.2, 2.1, 2.4]})
    mcc = [6, 38, 30, 112, 71, None]
    words = [10, 14, 11, 13, 12, 15]
    predictors = pl.DataFrame({"corpus": "bible", "language": langs * 2,
                               "predictor": ["mcc"] * 6 + ["train_word_types"] * 6,
                               "value": mcc + words})
    table = predictor_correlations(responses, predictors)
    assert table.height == 4
    row = table.filter(response="difficulty", predictor="mcc").row(0, named=True)
    pairs = [(m, d) for m, d in zip(mcc, difficulty) if m is not None and d is not None]
    ref = pearsonr(*zip(*pairs))
    assert row["n_languages"] == 5
    assert row["pearson_r"] == pytest.approx(ref.statistic)
    assert "pearson_p" not in row
    assert row["spearman_p"] == pytest.approx(exact_spearman_p(*zip(*pairs)))
    # The family is (corpus, family, model, tokenizer, response): 2 predictors per response.
    for (_,), part in table.group_by("response"):
        assert part["spearman_p_bh"].to_list() == pytest.approx(
            false_discovery_control(part["spearman_p"].to_numpy(), method="bh"))
    everything = predictor_correlations(responses, predictors, families=["corpus"])
    assert everything["spearman_p_bh"].to_list() == pytest.approx(
        false_discovery_control(everything["spearman_p"].to_numpy(), method="bh"))
    with pytest.raises(InputError, match="lack columns"):
        predictor_correlations(responses.drop("response"), predictors)


def test_report_sentences_carry_the_adjusted_p_values():
    """The report's sentence for each regression puts the permutation and Spearman p-values and
    their family-adjusted values, read from the table, beside the correlation."""
    table = regression_table(with_difference(_long()), S).with_columns(tokenizer=pl.lit("char"))
    words = table.filter(text="words").row(0, named=True)
    (sentence,) = regression_sentences(table, "published")
    assert f"permutation p {fmt(words['permutation_p'])}, Spearman rho" in sentence
    assert f"(p {fmt(words['spearman_p'])}, adjusted {fmt(words['spearman_p_bh'])})" in sentence
    assert f"(adjusted p {fmt(words['permutation_p_bh'])})" in sentence
