"""Slope tests that respect language families (fairppl.stats.family): exact p-values against an
independent brute force, the family-means test against hand-computed means, the CR1 standard
error against closed forms, and the refusals."""

from __future__ import annotations

import math
from itertools import permutations

import numpy as np
import pytest

from fairppl.core.errors import InputError
from fairppl.stats.family import (COLUMNS, clustered_slope, family_controlled_tests,
                                  family_means, family_means_slope_test,
                                  studentized_slope_test, within_family_permutations,
                                  within_family_slope_test)
from fairppl.stats.permutation import PermutationSettings, reference_permutations, slope_test

FAMILIES_2_3 = ["a", "a", "b", "b", "b"]


def fixed_effects_slope(x, y, families):
    """The slope of x in a least-squares fit of y on x and one indicator per family (by the
    Frisch-Waugh-Lovell theorem, the pooled within-family slope), via lstsq."""
    labels = sorted(set(families))
    design = np.column_stack([np.asarray(x, float)]
                             + [[1.0 if f == g else 0.0 for f in families] for g in labels])
    return np.linalg.lstsq(design, np.asarray(y, float), rcond=None)[0][0]


def brute_force_within_p(x, y, families):
    """Two-sided p over every permutation of all n positions that keeps each family in place."""
    n = len(x)
    kept = [p for p in permutations(range(n)) if all(families[p[i]] == families[i]
                                                    for i in range(n))]
    observed = abs(fixed_effects_slope(x, y, families))
    moved = [abs(fixed_effects_slope(x, np.asarray(y)[list(p)], families)) for p in kept]
    return sum(m >= observed - 1e-9 for m in moved) / len(kept), len(kept)


def test_within_family_exact_p_by_hand():
    # within-family deviations: a: x (-.5, .5), y (-.5, .5); b: x (-1, 0, 1), y (-1, 1, 0).
    # numerator = +-0.5 (family a) + (-y1 + y3) over the 6 orders of b's y: 1, 2, -1, -2, 1, -1;
    # observed 1.5; |numerator| >= 1.5 for 4 of 6 orders with either sign of a: p = 8/12.
    x, y = [0, 1, 0, 1, 2], [0, 1, 0, 2, 1]
    got = within_family_slope_test(x, y, FAMILIES_2_3)
    assert got.slope == pytest.approx(1.5 / 2.5, rel=1e-12)
    assert got.p == pytest.approx(8 / 12, rel=1e-12)
    assert (got.permutations, got.exact, got.informative_families) == (12, True, 2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_within_family_exact_p_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    families = ["m", "k", "m", "k", "k", "z"]  # sizes 2, 3 and a singleton: 2! 3! = 12
    x, y = rng.normal(size=6), rng.normal(size=6)
    want, size = brute_force_within_p(x, y, families)
    got = within_family_slope_test(x, y, families)
    assert size == got.permutations == 12 and got.exact
    assert got.p == pytest.approx(want, rel=1e-12)
    assert got.slope == pytest.approx(fixed_effects_slope(x, y, families), rel=1e-10)


def test_one_family_is_the_plain_test():
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=6), rng.normal(size=6)
    got = within_family_slope_test(x, y, ["f"] * 6)
    plain = slope_test(x, y, interval=False)
    assert got.permutations == plain.permutations == 720
    assert got.p == plain.p and got.slope == pytest.approx(plain.slope, rel=1e-12)


def test_no_power_without_two_distinct_x_in_a_family():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=7), rng.normal(size=7)
    got = within_family_slope_test(x, y, list("abcdefg"))
    assert got.p == 1.0 and math.isnan(got.slope) and got.informative_families == 0
    flat = within_family_slope_test([1, 1, 2, 2, 3], y[:5], ["a", "a", "b", "b", "c"])
    assert flat.p == 1.0 and flat.informative_families == 0


def test_family_shifts_fool_the_plain_test_not_the_within_family_one():
    rng = np.random.default_rng(3)
    families = [f for f, k in zip("abcdefgh", [3, 3, 2, 2, 2, 2, 1, 1]) for _ in range(k)]
    codes = np.array(["abcdefgh".index(f) for f in families])
    x, y = rng.normal(size=16), rng.normal(size=16)
    shift = np.arange(8) * 10.0  # the same large family effect in x and in y
    settings = PermutationSettings(permutations=999, seed=1)
    before = within_family_slope_test(x, y, families, settings)
    after = within_family_slope_test(x + shift[codes], y + shift[codes], families, settings)
    assert after.p == before.p and after.slope == pytest.approx(before.slope, rel=1e-9)
    assert slope_test(x + shift[codes], y + shift[codes], settings).p == 1 / 1000
    assert slope_test(x, y, settings).p > 0.05


def test_drawn_within_family_permutations_are_uniform_and_stay_in_family():
    settings = PermutationSettings(permutations=12000, seed=4, exact_max=3)  # 3! < 12
    perms, exact = within_family_permutations(FAMILIES_2_3, settings)
    assert not exact and perms.shape == (12001, 5)
    assert (perms[0] == np.arange(5)).all()
    assert (np.sort(perms[:, :2], axis=1) == [0, 1]).all()
    assert (np.sort(perms[:, 2:], axis=1) == [2, 3, 4]).all()
    _, counts = np.unique(perms[1:], axis=0, return_counts=True)
    assert len(counts) == 12 and abs(counts - 1000).max() < 5 * math.sqrt(1000 * 11 / 12)
    got = within_family_slope_test([0, 1, 0, 1, 2], [0, 1, 0, 2, 1], FAMILIES_2_3, settings)
    assert got.permutations == 12001 and not got.exact
    assert got.p * 12001 == pytest.approx(round(got.p * 12001), abs=1e-6)  # (1 + #) / (1 + B)
    assert got.p == pytest.approx(8 / 12, abs=4 * math.sqrt(2 / 9 / 12000))


def test_exact_enumeration_up_to_the_plain_tests_limit():
    families = ["a"] * 4 + ["b"] * 4 + ["c"] * 3  # 24 x 24 x 6 = 3,456 <= 8!
    perms, exact = within_family_permutations(families)
    assert exact and len(np.unique(perms, axis=0)) == len(perms) == 3456
    _, exact = within_family_permutations(["a"] * 6 + ["b"] * 5)  # 86,400 > 8!
    assert not exact


def test_family_means_test_is_slope_test_on_the_means():
    x = [1, 3, 5, 4, 6, 8]
    y = [2, 4, 1, 0, 3, 9]
    families = ["a", "a", "b", "c", "c", "c"]
    means = family_means(x, y, families)
    assert means["mean x"].to_list() == [2.0, 5.0, 6.0]
    assert means["mean y"].to_list() == [3.0, 1.0, 4.0]
    assert means["languages"].to_list() == [2, 1, 3]
    assert family_means_slope_test(x, y, families) == slope_test([2, 5, 6], [3, 1, 4])
    assert (family_means_slope_test(x, y, families, studentized=True)
            == studentized_slope_test([2, 5, 6], [3, 1, 4]))


@pytest.mark.parametrize("seed", [0, 1])
def test_studentized_exact_p_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=6), rng.exponential(size=6)

    def statistic(b):  # sqrt(n) r / tau, tau^2 = mu22 / (mu20 mu02), DiCiccio & Romano (2017)
        r = np.corrcoef(x, b)[0, 1]
        mu22 = np.mean((x - x.mean()) ** 2 * (b - b.mean()) ** 2)
        return abs(math.sqrt(6) * r / math.sqrt(mu22 / (np.var(x) * np.var(b))))

    moved = [statistic(y[list(p)]) for p in permutations(range(6))]
    want = sum(m >= statistic(y) - 1e-9 for m in moved) / 720
    got = studentized_slope_test(x, y)
    assert got.p == pytest.approx(want, rel=1e-12) and got.permutations == 720 and got.exact
    assert got.slope == pytest.approx(np.polyfit(x, y, 1)[0], rel=1e-10)
    assert got.low is None and got.high is None


def test_studentized_holds_where_uncorrelated_points_share_a_spread():
    """x and y independent given a spread that 3 of 21 points share (6 times the rest): the
    pairs are uncorrelated but not independent; the plain test rejects a third of the time at
    5%, the studentized one does not (400 datasets, s.e. about 0.011)."""
    settings = PermutationSettings(permutations=199, seed=0)
    reference = reference_permutations(21, settings)
    rng = np.random.default_rng(7)
    spread = np.r_[[6.0] * 3, [1.0] * 18]
    rejected = np.zeros(2)
    for _ in range(400):
        x, y = spread * rng.normal(size=21), spread * rng.normal(size=21)
        rejected += [slope_test(x, y, settings, reference, interval=False).p <= 0.05,
                     studentized_slope_test(x, y, settings, reference).p <= 0.05]
    plain, studentized = rejected / 400
    assert plain > 0.2 and studentized < 0.08


def test_clustered_se_by_hand():
    # slope 1.1, residuals (-0.1, 0.8, -1.3, 0.6); family scores sum (x - 1.5) e:
    # -0.25 and 0.25; V = [2/1 x 3/2] x 0.125 / 5^2 = 0.015.
    got = clustered_slope([0, 1, 2, 3], [0, 2, 1, 4], ["a", "a", "b", "b"])
    assert got.slope == pytest.approx(1.1, rel=1e-12)
    assert got.se == pytest.approx(math.sqrt(0.015), rel=1e-12)
    assert (got.df, got.families) == (1, 2)
    # Student t with 1 df is Cauchy: p = 1 - (2/pi) atan|t|, quantile tan(pi (q - 1/2)).
    assert got.p == pytest.approx(1 - 2 / math.pi * math.atan(got.t), rel=1e-9)
    half = math.tan(math.pi * 0.475) * math.sqrt(0.015)
    assert (got.low, got.high) == pytest.approx((1.1 - half, 1.1 + half), rel=1e-9)


def test_clustered_se_against_the_indicator_matrix_sandwich():
    rng = np.random.default_rng(11)
    families = [f for f, k in zip("pqrstu", [5, 1, 3, 2, 4, 1]) for _ in range(k)]
    n, groups = len(families), 6
    x, y = rng.normal(size=n), rng.normal(size=n)
    design = np.column_stack([np.ones(n), x])
    coef = np.linalg.solve(design.T @ design, design.T @ y)
    e = y - design @ coef
    member = np.array([[f == g for g in "pqrstu"] for f in families], dtype=float)
    meat = design.T @ np.diag(e) @ member @ member.T @ np.diag(e) @ design
    cov = np.linalg.solve(design.T @ design, np.linalg.solve(design.T @ design, meat).T)
    cov *= groups / (groups - 1) * (n - 1) / (n - 2)
    got = clustered_slope(x, y, families, level=0.9)
    assert got.se == pytest.approx(math.sqrt(cov[1, 1]), rel=1e-10)
    assert got.df == 5 and got.level == 0.9


def test_clustered_se_with_singletons_is_hc1():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=9), rng.normal(size=9)
    xc = x - x.mean()
    b = xc @ y / (xc @ xc)
    e = y - y.mean() - b * xc
    hc1 = math.sqrt(9 / 7 * np.sum(xc ** 2 * e ** 2) / (xc @ xc) ** 2)
    got = clustered_slope(x, y, list(range(9)))
    assert got.se == pytest.approx(hc1, rel=1e-10) and got.df == 8


@pytest.mark.parametrize("call", [within_family_slope_test, family_means_slope_test,
                                  clustered_slope, family_controlled_tests])
def test_refusals(call):
    with pytest.raises(InputError, match="one value per language"):
        call([1, 2, 3], [1, 2, 3], ["a", "b"])
    with pytest.raises(InputError, match="at least 3 languages"):
        call([1, 2], [1, 2], ["a", "b"])
    with pytest.raises(InputError, match="every x is 2.0"):
        call([2, 2, 2, 2], [1, 2, 3, 4], ["a", "a", "b", "b"])
    with pytest.raises(InputError, match="language 1 .* has no family"):
        call([1, 2, 3], [1, 2, 3], ["a", None, "b"])
    with pytest.raises(InputError, match="y must be finite, got nan at language 2"):
        call([1, 2, 3], [1, 2, float("nan")], ["a", "a", "b"])


def test_refusals_of_one_family():
    with pytest.raises(InputError, match="at least 2 families"):
        clustered_slope([1, 2, 3], [1, 3, 2], ["a"] * 3)
    with pytest.raises(InputError, match="family means of x are all 2.0"):
        family_means_slope_test([1, 3, 2, 2], [1, 2, 3, 4], ["a", "a", "b", "b"])


def test_table_runs_every_method_and_matches_them():
    rng = np.random.default_rng(8)
    families = [f for f, k in zip("abcdef", [3, 2, 2, 1, 3, 1]) for _ in range(k)]
    x, y = rng.normal(size=12), rng.normal(size=12)
    settings = PermutationSettings(permutations=499, seed=3)
    table = family_controlled_tests(x, y, families, settings)
    assert table.columns == list(COLUMNS)
    rows = {r["method"]: r for r in table.iter_rows(named=True)}
    assert list(rows) == ["plain permutation", "within-family permutation",
                          "family-means permutation", "family-means studentized permutation",
                          "family-clustered t (CR1)"]
    plain, within = slope_test(x, y, settings), within_family_slope_test(x, y, families, settings)
    means = family_means_slope_test(x, y, families, settings)
    clustered = clustered_slope(x, y, families)
    student = family_means_slope_test(x, y, families, settings, studentized=True)
    want = {"plain permutation": (plain.p, plain.slope, 12),
            "within-family permutation": (within.p, within.slope, 12),
            "family-means permutation": (means.p, means.slope, 6),
            "family-means studentized permutation": (student.p, student.slope, 6),
            "family-clustered t (CR1)": (clustered.p, clustered.slope, 12)}
    for method, (p, slope, points) in want.items():
        assert rows[method]["p (two-sided)"] == p
        assert rows[method]["slope (y per unit x)"] == slope
        assert rows[method]["points"] == points and rows[method]["families"] == 6
        assert rows[method]["rejects at 1 - level"] == (p <= 0.05)
    assert rows["family-clustered t (CR1)"]["interval low (y per unit x)"] == clustered.low
    assert rows["within-family permutation"]["reference"] == (
        "all 144 within-family permutations (exact)")  # 3! 2! 2! 3! = 144
    one = family_controlled_tests(x, y, ["f"] * 12, settings)
    notes = dict(zip(one["method"], one["note"]))
    assert "at least 2 families" in notes["family-clustered t (CR1)"]
    assert "the 1 family means of x are all" in notes["family-means permutation"]
    assert one.filter(one["note"] != "")["p (two-sided)"].null_count() == 3


def test_plain_test_over_rejects_under_family_effects():
    """Null data with a strong family effect in x and in y (80% of each variance), the wide
    study's 65 languages in 21 families: the plain test rejects far above 5%, the within-family
    test and the family-means test stay near it (200 datasets: s.e. about 0.015)."""
    sizes = [6, 5, 5, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1]
    codes = np.repeat(np.arange(len(sizes)), sizes)
    settings = PermutationSettings(permutations=199, seed=0)
    plain_ref = reference_permutations(65, settings)
    within_ref = within_family_permutations(codes.tolist(), settings)
    rng = np.random.default_rng(2026)
    rejected = np.zeros(3)
    for _ in range(200):
        x = math.sqrt(0.8) * rng.normal(size=21)[codes] + math.sqrt(0.2) * rng.normal(size=65)
        y = math.sqrt(0.8) * rng.normal(size=21)[codes] + math.sqrt(0.2) * rng.normal(size=65)
        rejected += [slope_test(x, y, settings, plain_ref, interval=False).p <= 0.05,
                     within_family_slope_test(x, y, codes, settings, within_ref).p <= 0.05,
                     family_means_slope_test(x, y, codes, settings, interval=False).p <= 0.05]
    plain, within, means = rejected / 200
    assert plain > 0.15 and within < 0.1 and means < 0.1
