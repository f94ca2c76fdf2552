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
from fairppl.morphology import TABLES
from fairppl.morphology.questions import (
    QUESTIONS,
    REGRESSION_TEXTS,
    RESPONSES,
    pooled,
    question_of,
)
from fairppl.morphology.regression import (
    REGRESSION_COLUMNS,
    TEXTS,
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
from fairppl.report.morphology import (
    predictor_sentences,
    regression_sentences,
    small_n_sentence,
)
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
    assert set(table["test_family"]) == {"morphology-cost"}
    sub = _long().filter((pl.col("text") == "words") & pl.col("value").is_not_null())
    ref = linregress(sub["value"].to_numpy(), sub["bpec"].to_numpy())
    assert words["slope"] == pytest.approx(ref.slope)
    assert words["pearson_r"] == pytest.approx(ref.rvalue)
    # fra has no lemmas: left out of the lemmas and of the difference regressions.
    assert rows["lemmas"]["note"].endswith("left out: fra (no BPEC), tur (no measure)")
    assert rows["difference"]["n_languages"] == 4
    assert rows["difference"]["slope"] == pytest.approx(0.002)  # words - lemmas = 0.002 * mcc


def _bh_by_hand(ps):
    """Benjamini-Hochberg written out: sorted p_(1..m), p_(k) m / k, then the running minimum
    from the largest down, capped at 1; returned in the input order."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out, running = [0.0] * m, 1.0
    for k in range(m, 0, -1):
        i = order[k - 1]
        running = min(running, ps[i] * m / k)
        out[i] = running
    return out


def test_every_regression_is_adjusted_over_the_whole_question():
    """Two models on three texts, two corpora: what the old rule cut into six families of one
    corpus, measure, source and text (two rows each) is one question, so every p-value is
    adjusted with m = 12; checked against BH written out and, on a hand-made case, against
    numbers worked by hand."""
    second = _long().with_columns(model=pl.lit("kenlm-char-o3"),
                                  bpec=pl.col("bpec") * (1 + 0.3 * pl.col("language")
                                                         .is_in(["eng", "pol"])))
    both = with_difference(pl.concat([_long(), second]))
    table = regression_table(pl.concat([both, both.with_columns(corpus=pl.lit("udhr"),
                                                                bpec=pl.col("bpec") ** 2)]), S)
    assert table.columns == list(REGRESSION_COLUMNS)
    assert table.height == 12 and set(table["test_family"]) == {"morphology-cost"}
    for column in ("permutation_p", "spearman_p"):
        ps = table[column].to_list()
        assert table[f"{column}_bh"].to_list() == pytest.approx(_bh_by_hand(ps))
        # not the old family's adjustment (m = 2 within corpus, text): it differs on some row
        old = pl.concat(with_adjusted_p(part, columns=(column,)) for _, part in
                        table.drop(f"{column}_bh").group_by("corpus", "text"))
        assert sorted(old[f"{column}_bh"].to_list()) != pytest.approx(
            sorted(table[f"{column}_bh"].to_list()))


def test_two_old_families_adjusted_together_by_hand():
    """Rows of one question that the old rule put in two families (texts words and difference)
    are adjusted together: p = 0.01, 0.04 (words) and 0.03, 0.20 (difference), m = 4: sorted
    0.01, 0.03, 0.04, 0.20 scale to 0.04, 0.06, 0.0533, 0.20; from the top down the running
    minimum gives 0.04, 0.0533, 0.0533, 0.20. Per old family (m = 2) the words rows would have
    been 0.02, 0.04: the 0.04 row was significant at 0.05 and is not now."""
    table = pl.DataFrame({"text": ["words", "words", "difference", "difference"],
                          "permutation_p": [0.01, 0.04, 0.03, 0.20]})
    table = table.with_columns(test_family=pl.Series(
        [question_of("morphology", r).id for r in table.iter_rows(named=True)]))
    out = with_adjusted_p(table, columns=("permutation_p",), by=["test_family"])
    assert out["permutation_p_bh"].to_list() == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.20])
    per_text = with_adjusted_p(table, columns=("permutation_p",), by=["text"])
    assert per_text["permutation_p_bh"].to_list()[:2] == pytest.approx([0.02, 0.04])


def test_every_row_has_exactly_one_question():
    """Representative rows of each table go to their question; a row no question declares, or
    a table without questions, is refused; no two questions of a table accept one row."""
    assert tuple(TEXTS) == REGRESSION_TEXTS
    for text in TEXTS:
        row = {"corpus": "bible", "model": "m", "measure": "forms_per_lemma",
               "source": "apertium", "text": text}
        assert question_of("morphology", row).id == "morphology-cost"
    for response in ("difficulty", "bpec"):
        row = {"corpus": "udhr", "family": "subword", "model": "m", "tokenizer": "spm",
               "response": response, "predictor": "mcc:published"}
        assert question_of("difficulty_predictors", row).id == "difficulty-predictors"
    assert question_of("difficulty_agreement", {"corpus": "bible", "model": "m"}).id == (
        "difficulty-agreement")
    with pytest.raises(InputError, match="no declared question of difficulty_predictors takes "
                                         "the row response='surprisal'"):
        question_of("difficulty_predictors", {"response": "surprisal"})
    with pytest.raises(InputError, match="no declared question of shannon"):
        question_of("shannon", {"text": "words"})
    tables = {q.table for q in QUESTIONS}
    probes = [{"text": t, "response": r} for t in TEXTS for r in RESPONSES]
    for table in tables:
        for row in probes:
            assert sum(q.member(row) for q in QUESTIONS if q.table == table) == 1
    assert len({q.id for q in QUESTIONS}) == len(QUESTIONS)
    assert {f"{q.table}.csv" for q in QUESTIONS} <= set(TABLES.values())


def test_pooled_counts_tests_of_the_question():
    table = pl.DataFrame({"test_family": ["morphology-cost"] * 3 + ["other"],
                          "permutation_p": [0.1, None, float("nan"), 0.2]})
    assert pooled(table, "morphology-cost", "permutation_p") == 1
    assert pooled(table.with_columns(permutation_p=pl.lit(0.5)), "morphology-cost",
                  "permutation_p") == 3
    assert pooled(table, "morphology-cost", "spearman_p") == 0


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
    # One question: both responses and both predictors are adjusted together (m = 4), not
    # per response as before.
    assert set(table["test_family"]) == {"difficulty-predictors"}
    assert table["spearman_p_bh"].to_list() == pytest.approx(
        false_discovery_control(table["spearman_p"].to_numpy(), method="bh"))
    assert table["spearman_p_bh"].to_list() == pytest.approx(
        _bh_by_hand(table["spearman_p"].to_list()))
    per_response = pl.concat(with_adjusted_p(part.drop("spearman_p_bh"), columns=("spearman_p",))
                             for _, part in table.group_by("response"))
    assert sorted(per_response["spearman_p_bh"]) != pytest.approx(sorted(table["spearman_p_bh"]))
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
    assert (f"(adjusted p {fmt(words['permutation_p_bh'])} over the 3 tests of question "
            f"morphology-cost)") in sentence


def test_report_sentences_name_the_question_and_the_tests_pooled():
    """The count in the sentences is every test of the question in the whole table, not of the
    rows the sentence speaks of: a second source's rows raise it from 3 to 6, and a row without
    a p-value is no test."""
    one = regression_table(with_difference(_long()), S).with_columns(tokenizer=pl.lit("char"))
    two = regression_table(with_difference(pl.concat([
        _long(), _long().with_columns(source=pl.lit("apertium"))])), S).with_columns(
        tokenizer=pl.lit("char"))
    (sentence,) = regression_sentences(two, "published")
    assert sentence.count("over the 6 tests of question morphology-cost)") == 3
    assert ('adjusted by Benjamini-Hochberg over the 6 tests of the question "Does a '
            "language's morphological complexity explain how costly its text is to model?\"") \
        in small_n_sentence(two)
    assert "over the 3 tests of the question" in small_n_sentence(one)
    blank = two.with_columns(permutation_p=pl.when(pl.col("source") == "apertium")
                             .then(None).otherwise(pl.col("permutation_p")))
    assert "over the 3 tests of the question" in small_n_sentence(blank)
    # an old table whose test_family is no declared question: no count is claimed
    old = one.with_columns(test_family=pl.lit("bible:mcc:published:words"))
    (sentence,) = regression_sentences(old, "published")
    assert "tests of question" not in sentence and "(adjusted p " in sentence


def test_predictor_sentence_counts_every_test_of_the_question():
    rows = [{"corpus": c, "family": "character", "model": "kenlm-char-o5", "tokenizer": "char",
             "response": "difficulty", "predictor": pred, "n_languages": 8,
             "spearman_rho": rho, "spearman_p": p, "spearman_p_bh": bh,
             "test_family": "difficulty-predictors"}
            for c, pred, rho, p, bh in [("bible", "train_word_types", 0.9, 0.001, 0.004),
                                        ("bible", "mcc:published", 0.1, 0.8, 0.8),
                                        ("udhr", "train_word_types", 0.5, 0.2, 0.27),
                                        ("udhr", "mcc:published", 0.2, None, None)]]
    table = pl.DataFrame(rows)
    (bible,) = predictor_sentences(table.filter(corpus="bible"), "difficulty",
                                   over="over the 3 tests of question difficulty-predictors")
    assert ("significant after the adjustment over the 3 tests of question "
            "difficulty-predictors") in bible
    (udhr,) = predictor_sentences(table.filter(corpus="udhr"), "difficulty")
    assert ("not significant after the adjustment over the one test of question "
            "difficulty-predictors") in udhr
