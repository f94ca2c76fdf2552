"""Slope tests across languages that are not independent: languages of one family share traits
(6 Mayan languages count the Mayan way of writing six times), so a test over languages that
treats them as independent draws over-states the evidence.

Under a family random effect in both variables (x = u_f + e, y = v_f + e' with u, v, e, e'
independent) x and y are independent, yet the plain permutation test of
:mod:`fairppl.stats.permutation` rejects far more often than its nominal rate, because two
languages of one family agree in x and in y at once (``bench/bench_family_size.py`` measures
how often). Three remedies, each testing a stated null:

* :func:`within_family_slope_test`: x and y independent **given the family** (y exchangeable
  within each family). Only within-family differences carry information; a family of one
  language carries none.
* :func:`family_means_slope_test`: the family means of x and of y independent (one point per
  family, the plain permutation test over G families, or the studentized one of
  :func:`studentized_slope_test`, which stays valid where families of unequal size make the
  means unequally spread).
* :func:`clustered_slope`: the least-squares slope over languages is 0, with a family-clustered
  (cluster-robust, CR1) standard error and Student t with G - 1 degrees of freedom: an
  approximation whose accuracy rests on the number of families, not an exact test.

:func:`family_controlled_tests` runs them all and the plain test on one (x, y, families), one
row per method (:data:`COLUMNS`), so that a table shows where they disagree.

Families are labels, one per language (an isolate is a family of its own); the slope is in units
of y per unit of x.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import permutations as all_permutations

import numpy as np
import polars as pl
from scipy.stats import t as student_t

from ..core.errors import InputError
from .permutation import TIE, PermutationSettings, SlopeTest, reference_permutations, slope_test


@dataclass(frozen=True)
class WithinFamilyTest:
    """slope: the pooled within-family slope (y per unit x; NaN where no family holds two
    distinct x values); p: its two-sided permutation p-value under within-family permutations;
    permutations: size of the reference set (the product of the families' size factorials when
    exact, else 1 + B; 1 where nothing can move); exact: whether every within-family permutation
    was used; informative_families: families with at least two distinct x values."""

    slope: float
    p: float
    permutations: int
    exact: bool
    informative_families: int


@dataclass(frozen=True)
class ClusteredSlope:
    """The least-squares slope (y per unit x) over languages with its family-clustered CR1
    standard error, t = slope / se, the two-sided p-value from Student t with ``df`` = G - 1
    degrees of freedom, and the central ``level`` interval slope +- t quantile x se."""

    slope: float
    se: float
    t: float
    df: int
    p: float
    low: float
    high: float
    level: float
    families: int


def _checked(x, y, families, who: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """x and y as float vectors and the families as integer codes (in order of first
    appearance) with their labels; refuses mismatched lengths, fewer than 3 languages, missing
    or non-finite values and a constant x."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    families = list(families)
    if x.ndim != 1 or y.ndim != 1 or not len(x) == len(y) == len(families):
        raise InputError(f"{who}: x, y and families need one value per language, got "
                         f"{x.shape}, {y.shape} and {len(families)} values")
    if len(x) < 3:
        raise InputError(f"{who}: a slope test needs at least 3 languages, got {len(x)}")
    for name, values in (("x", x), ("y", y)):
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad):
            raise InputError(f"{who}: {name} must be finite, got {values[bad[0]]} at language "
                             f"{bad[0]} (0-based)")
    if not np.ptp(x) > 0:
        raise InputError(f"{who}: every x is {x[0]}: no slope to test")
    codes, labels, index = np.empty(len(x), dtype=np.int64), [], {}
    for i, label in enumerate(families):
        if label is None or (isinstance(label, float) and math.isnan(label)) or label == "":
            raise InputError(f"{who}: language {i} (0-based) has no family; give an isolate "
                             f"a family of its own")
        if label not in index:
            index[label] = len(labels)
            labels.append(label)
        codes[i] = index[label]
    return x, y, codes, labels


def _group_means(values: np.ndarray, codes: np.ndarray, groups: int) -> np.ndarray:
    return np.bincount(codes, values, groups) / np.bincount(codes, minlength=groups)


def within_family_permutations(families, settings: PermutationSettings = PermutationSettings()
                               ) -> tuple[np.ndarray, bool]:
    """The reference set of :func:`within_family_slope_test` as an (m x n) index matrix whose
    first row is the identity and whose every row maps each family's positions onto themselves,
    and whether it is exact: every within-family permutation (the product of the factorials of
    the family sizes) where that product is at most ``settings.exact_max``! (the most the plain
    test enumerates), else the identity and ``settings.permutations`` uniform draws (seeded by
    ``settings.seed``)."""
    labels = list(families)
    index: dict = {}
    codes = np.array([index.setdefault(f, len(index)) for f in labels], dtype=np.int64)
    n = len(codes)
    if n < 1:
        raise InputError("within_family_permutations: no languages")
    members = [np.flatnonzero(codes == g) for g in range(len(index))]
    count = math.prod(math.factorial(len(m)) for m in members)
    if count <= math.factorial(settings.exact_max):
        table = np.arange(n, dtype=np.int64)[None, :]
        for positions in members:
            if len(positions) < 2:
                continue
            local = np.array(list(all_permutations(range(len(positions)))), dtype=np.int64)
            rows = len(table)
            table = np.repeat(table, len(local), axis=0)
            table[:, positions] = positions[np.tile(local, (rows, 1))]
        return table, True
    rng = np.random.default_rng(settings.seed)
    # Sorting on (family code + uniform key) lists each family's positions together, in family
    # order, and in uniformly random order within the family; writing that list back onto the
    # family-sorted positions gives a uniform within-family permutation.
    order = np.argsort(codes, kind="stable")
    keys = codes[None, :] + rng.random((settings.permutations, n))
    draws = np.empty((settings.permutations, n), dtype=np.int64)
    draws[:, order] = np.argsort(keys, axis=1)
    return np.vstack([np.arange(n, dtype=np.int64), draws]), False


def within_family_slope_test(x, y, families,
                             settings: PermutationSettings = PermutationSettings(),
                             reference: tuple[np.ndarray, bool] | None = None
                             ) -> WithinFamilyTest:
    """The permutation test of the slope with y permuted only within families (restricted
    permutations; a family of one language stays fixed).

    Null: x and y are independent given the family, i.e. given the families and x, every
    within-family rearrangement of y is equally likely. Family effects in x and in y (u_f, v_f)
    are allowed under the null; they are part of what stays fixed.

    Statistic: the pooled within-family slope b_w = sum (x - mean_f x)(y - mean_f y) /
    sum (x - mean_f x)^2 (the fixed-effects slope), two-sided via |b_w|. Within-family
    permutations leave every family mean of y unchanged, so the between-family part of the slope
    over languages is the same for every permutation; b_w is the part that moves. p: the share of
    the reference set (:func:`within_family_permutations`, or ``reference``) whose |b_w| reaches
    the observed one: exact, a multiple of 1/m, or (1 + #) / (1 + B) with drawn permutations
    (Phipson & Smyth 2010).

    No power where no family holds two distinct x values (every family a single language, or x
    constant within each family): then nothing can move the statistic, and the test returns
    p = 1 with slope NaN and 0 informative families.
    """
    x, y, codes, labels = _checked(x, y, families, "within_family_slope_test")
    groups = len(labels)
    xw = x - _group_means(x, codes, groups)[codes]
    yw = y - _group_means(y, codes, groups)[codes]
    scale = max(float(np.abs(x).max()), 1e-300)
    spread = np.bincount(codes, xw * xw, groups)
    informative = int((spread > (1e-12 * scale) ** 2).sum())
    sww = float(xw @ xw)
    if informative == 0:
        return WithinFamilyTest(math.nan, 1.0, 1, True, 0)
    perms, exact = (reference if reference is not None
                    else within_family_permutations(codes.tolist(), settings))
    if perms.shape[1] != len(x):
        raise InputError(f"within_family_slope_test: the reference set permutes "
                         f"{perms.shape[1]} languages, not {len(x)}")
    b = float(xw @ yw) / sww
    moved = (yw[perms] @ xw) / sww
    extreme = np.abs(moved) >= abs(b) * (1.0 - TIE) - 1e-300
    return WithinFamilyTest(b, min(float(extreme.sum()) / len(perms), 1.0), len(perms), exact,
                            informative)


def family_means(x, y, families) -> pl.DataFrame:
    """One row per family (in order of first appearance): ``family``, ``languages`` (count),
    ``mean x`` and ``mean y`` (unweighted means over the family's languages)."""
    x, y, codes, labels = _checked(x, y, families, "family_means")
    groups = len(labels)
    return pl.DataFrame({"family": [str(v) for v in labels],
                         "languages": np.bincount(codes, minlength=groups),
                         "mean x": _group_means(x, codes, groups),
                         "mean y": _group_means(y, codes, groups)})


def studentized_slope_test(x, y, settings: PermutationSettings = PermutationSettings(),
                           reference: tuple[np.ndarray, bool] | None = None) -> SlopeTest:
    """The permutation test of the slope with the studentized statistic of DiCiccio & Romano
    (2017, "Robust permutation tests for correlation and regression coefficients", JASA 112):
    |r| / tau with tau^2 = mean[(x - mean x)^2 (y - mean y)^2] / (var x var y), recomputed for
    every permutation of y (reference set as in :func:`fairppl.stats.permutation.slope_test`).

    Exact, like the plain test, where x and y are independent and the (x, y) pairs
    exchangeable; unlike it, still valid for large n where x and y are uncorrelated but
    dependent, e.g. both more spread for some points than others (means of small families
    against means of large ones). slope: the least-squares slope (y per unit x); no interval
    (low, high None)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise InputError(f"studentized_slope_test: x and y must be equal-length vectors, got "
                         f"{x.shape} and {y.shape}")
    xc, yc = x - x.mean(), y - y.mean()
    sxx = float(xc @ xc)
    if not sxx > 0:
        raise InputError(f"studentized_slope_test: every x is {x[0]}: no slope to test")
    perms, exact = reference if reference is not None else reference_permutations(len(x),
                                                                                  settings)
    if reference is not None and not (perms[0] == np.arange(len(x))).all():
        raise InputError("studentized_slope_test: the reference set's first row must be the "
                         "identity")
    moved = yc[perms]
    top = moved @ xc
    spread = np.sqrt((moved * moved) @ (xc * xc))
    stat = np.abs(np.divide(top, spread, out=np.zeros_like(top), where=spread > 0))
    extreme = stat >= stat[0] * (1.0 - TIE) - 1e-300
    return SlopeTest(float(xc @ yc) / sxx, min(float(extreme.sum()) / len(perms), 1.0), None,
                     None, len(perms), exact)


def family_means_slope_test(x, y, families,
                            settings: PermutationSettings = PermutationSettings(),
                            interval: bool = True, studentized: bool = False) -> SlopeTest:
    """The plain permutation test (:func:`fairppl.stats.permutation.slope_test`, with its
    inverted interval unless ``interval`` is false) of the slope of the family means of y on
    the family means of x: one point per family, whatever its size; with ``studentized``,
    :func:`studentized_slope_test` of the same means instead (no interval).

    Null: the family means of x and y are independent (every pairing of the G means equally
    likely). Within-family differences are averaged away; the slope is between families
    (y per unit x). With G families the exact p-value is a multiple of 1/G! up to
    ``settings.exact_max`` families (2 families: p = 1). Caveat: where families differ in size
    and x and y carry little family effect, the means of small families are more spread in both
    x and y: uncorrelated, yet not independent, and the plain test over-rejects (8% at a nominal
    5% at 65 languages in 21 families, ``bench/bench_family_size.py``); the studentized one
    does not. Refuses families whose means of x are all equal (one family included)."""
    means = family_means(x, y, families)
    mx = means["mean x"].to_numpy()
    if not np.ptp(mx) > 0:
        raise InputError(f"family_means_slope_test: the {len(mx)} family means of x are all "
                         f"{mx[0]}: no slope between families")
    my = means["mean y"].to_numpy()
    if studentized:
        return studentized_slope_test(mx, my, settings)
    return slope_test(mx, my, settings, interval=interval)


def clustered_slope(x, y, families, level: float = 0.95) -> ClusteredSlope:
    """The least-squares slope of y on x (with intercept) over languages and its
    family-clustered standard error, the sandwich
    V = c (X'X)^-1 [sum_g X_g' e_g e_g' X_g] (X'X)^-1 with X = [1, x], e the residuals, g over
    families, and the CR1 small-sample factor c = G/(G-1) x (n-1)/(n-2) (Cameron & Miller
    2015, "A Practitioner's Guide to Cluster-Robust Inference", sections 2.4 and 4.3);
    se = sqrt(V[1, 1]). p: two-sided from Student t with G - 1 degrees of freedom; interval:
    slope +- t_{G-1, (1+level)/2} se.

    Null: the least-squares slope is 0, languages of one family arbitrarily correlated,
    families independent. An approximation: with few families, or families of very unequal
    size, it rejects more often than nominal (at 5%: 7 to 9% for 65 languages in 21 families,
    16 to 19% for 204 in 40 families of very unequal size under family effects,
    ``bench/bench_family_size.py``). Every family of one language gives the
    heteroskedasticity-robust HC1 error. Refuses a single family."""
    x, y, codes, labels = _checked(x, y, families, "clustered_slope")
    if not 0.0 < level < 1.0:
        raise InputError(f"clustered_slope: level must be in (0, 1), got {level}")
    n, groups = len(x), len(labels)
    if groups < 2:
        raise InputError(f"clustered_slope: every language is in family {labels[0]!r}: a "
                         f"family-clustered error needs at least 2 families")
    design = np.column_stack([np.ones(n), x])
    bread = np.linalg.inv(design.T @ design)
    coef = bread @ (design.T @ y)
    resid = y - design @ coef
    scores = np.zeros((groups, 2))
    np.add.at(scores, codes, design * resid[:, None])
    meat = scores.T @ scores
    factor = groups / (groups - 1) * (n - 1) / (n - 2)
    cov = factor * bread @ meat @ bread
    slope, se, df = float(coef[1]), math.sqrt(max(float(cov[1, 1]), 0.0)), groups - 1
    if se > 0:
        t = slope / se
        p = float(2.0 * student_t.sf(abs(t), df))
    else:  # a perfect fit within every family: no sampling error to speak of
        t = math.copysign(math.inf, slope) if slope else 0.0
        p = 0.0 if slope else 1.0
    half = float(student_t.ppf((1.0 + level) / 2.0, df)) * se
    return ClusteredSlope(slope, se, t, df, min(p, 1.0), slope - half, slope + half, level,
                          groups)


#: The columns of :func:`family_controlled_tests`, with what each holds.
COLUMNS = {
    "method": "the test: plain permutation, within-family permutation, family-means "
              "permutation (plain or studentized), or family-clustered t (CR1)",
    "languages": "languages given (count)",
    "families": "families among them (count)",
    "points": "points the slope is fitted to: languages, or families for the family means "
              "(count)",
    "slope of": "what the slope is: over languages, pooled within families, or over family "
                "means",
    "slope (y per unit x)": "the method's slope, in units of y per unit of x",
    "p (two-sided)": "the method's two-sided p-value (probability)",
    "rejects at 1 - level": "whether p <= 1 - level (the settings' level)",
    "interval low (y per unit x)": "lower end of the method's interval for its slope (null "
                                   "where unbounded or not given)",
    "interval high (y per unit x)": "upper end of the interval (null where unbounded or not "
                                    "given)",
    "reference": "what the p-value is computed from: the permutations or the t distribution",
    "null": "the null hypothesis tested",
    "note": "why a method could not say anything (empty where it ran)",
}


def _reference(count: int, exact: bool, settings: PermutationSettings, kind: str) -> str:
    if exact:
        return f"all {count:,} {kind}permutations (exact)"
    return f"identity + {count - 1:,} drawn {kind}permutations (seed {settings.seed})"


def family_controlled_tests(x, y, families,
                            settings: PermutationSettings = PermutationSettings()
                            ) -> pl.DataFrame:
    """The plain permutation test, the within-family permutation test, the family-means tests
    (plain and studentized) and the family-clustered t on one (x, y, families): five rows, one
    per method, columns :data:`COLUMNS`. Intervals at ``settings.level``: the inverted
    permutation intervals of the plain and family-means tests, the t interval of the clustered
    slope; none for the within-family and studentized tests. A method that cannot run on these
    data (a single family; every family mean of x equal) has null numbers and says why in
    ``note``."""
    x, y, codes, labels = _checked(x, y, families, "family_controlled_tests")
    named = [labels[c] for c in codes]
    n, groups, alpha = len(x), len(labels), round(1.0 - settings.level, 12)
    rows = []

    def row(method, points, slope_of, slope, p, low, high, reference, null, note=""):
        rows.append({"method": method, "languages": n, "families": groups, "points": points,
                     "slope of": slope_of,
                     "slope (y per unit x)": None if slope is None or math.isnan(slope)
                     else slope,
                     "p (two-sided)": p,
                     "rejects at 1 - level": None if p is None else p <= alpha + 1e-12,
                     "interval low (y per unit x)": low, "interval high (y per unit x)": high,
                     "reference": reference, "null": null, "note": note})

    plain = slope_test(x, y, settings)
    row("plain permutation", n, "languages", plain.slope, plain.p, plain.low, plain.high,
        _reference(plain.permutations, plain.exact, settings, ""),
        "x and y independent over languages (every pairing equally likely)")
    within = within_family_slope_test(x, y, named, settings)
    row("within-family permutation", n, "pooled within families", within.slope, within.p,
        None, None,
        _reference(within.permutations, within.exact, settings, "within-family ")
        if within.informative_families else "none (nothing can move)",
        "x and y independent given the family",
        "" if within.informative_families else
        "no family holds two distinct x values: no power, p = 1")
    null = "family means of x and y independent"
    try:
        means = family_means_slope_test(x, y, named, settings)
        row("family-means permutation", groups, "family means", means.slope, means.p,
            means.low, means.high,
            _reference(means.permutations, means.exact, settings, ""), null)
    except InputError as error:
        row("family-means permutation", groups, "family means", None, None, None, None, "",
            null, str(error))
    try:
        means = family_means_slope_test(x, y, named, settings, studentized=True)
        row("family-means studentized permutation", groups, "family means", means.slope,
            means.p, None, None,
            _reference(means.permutations, means.exact, settings, ""), null)
    except InputError as error:
        row("family-means studentized permutation", groups, "family means", None, None, None,
            None, "", null, str(error))
    null = "least-squares slope 0, languages correlated within families"
    try:
        clustered = clustered_slope(x, y, named, settings.level)
        row("family-clustered t (CR1)", n, "languages", clustered.slope, clustered.p,
            clustered.low, clustered.high, f"Student t, {clustered.df} df", null)
    except InputError as error:
        row("family-clustered t (CR1)", n, "languages", None, None, None, None, "", null,
            str(error))
    schema = {"method": pl.String, "languages": pl.Int64, "families": pl.Int64,
              "points": pl.Int64, "slope of": pl.String, "slope (y per unit x)": pl.Float64,
              "p (two-sided)": pl.Float64, "rejects at 1 - level": pl.Boolean,
              "interval low (y per unit x)": pl.Float64,
              "interval high (y per unit x)": pl.Float64, "reference": pl.String,
              "null": pl.String, "note": pl.String}
    return pl.DataFrame(rows, schema=schema)
