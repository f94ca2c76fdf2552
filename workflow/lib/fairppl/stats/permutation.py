"""Permutation tests of a least-squares slope (equivalently of Pearson's r) across a handful of
languages, and the slope interval obtained by inverting them.

Why: with 7 to 22 languages a percentile bootstrap over languages is too liberal (at 8 languages
it rejected a true null slope 8.9% of the time at a nominal 5%, 10.2% at 17, by simulation),
while a permutation test is exact whatever the distribution of the values: under the null
hypothesis that the measure x and the response y are independent, every pairing of the y values
with the x values is equally likely (Fisher 1935, *The Design of Experiments*, section 21; Good
2005, *Permutation, Parametric and Bootstrap Tests of Hypotheses*, chapter 3).

The statistic is the slope b = sum_i (x_i - mean x) y_i / S_xx. S_xx and the spread of y do not
change when y is permuted, so |slope| and |r| order the permutations alike: the permutation test
of the slope **is** the permutation test of Pearson's r. Two-sided p-value: the share of the
reference permutations whose |slope| reaches the observed one. The reference set is

* every one of the n! permutations where n <= :data:`EXACT_MAX` (8 languages: 40,320): the exact
  p-value, a multiple of 1/n!;
* else the identity and B uniformly drawn permutations (``permutations``, drawn with ``seed``):
  p = (1 + #{draws at least as extreme}) / (1 + B), a valid p-value for any B (Phipson & Smyth
  2010, "Permutation p-values should never be zero"), within about sqrt(p (1 - p) / B) of the
  exact one.

The interval inverts the same test (Manly 2007, *Randomization, Bootstrap and Monte Carlo Methods
in Biology*, section 8.4): beta0 is in the interval when the permutation test of the slope of
e = y - beta0 x on x does not reject at 1 - ``level``. Under the linear model y = a + beta x + e
with exchangeable errors independent of x, e at the true beta is independent of x, so the
interval covers the true slope with probability at least ``level`` for any error distribution
and any n; at beta0 = 0 it is the test above, so the interval excludes 0 exactly when the
permutation p-value is at most 1 - level. For a permutation pi the permuted statistic is
A_pi - beta0 B_pi (A_pi the slope of y_pi on x, B_pi that of x_pi on x, |B_pi| <= 1) against the
observed b - beta0: the set of beta0 where the permutation counts as at least as extreme is where
a quadratic in beta0 is >= 0, an interval in closed form, and the acceptance region is found by
sweeping over those intervals' ends. Few languages leave it unbounded (with 4 languages no
slope is ever rejected at 5%: the smallest p-value is 2/24); then the ends are None.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import permutations as all_permutations

import numpy as np

#: Up to this many values the reference set is every permutation (8! = 40,320).
EXACT_MAX = 8

#: Relative tolerance under which two |slopes| count as equal (rounding of the sums).
TIE = 1e-10


@dataclass(frozen=True)
class PermutationSettings:
    """Monte Carlo draws B past ``exact_max`` values (default :data:`EXACT_MAX`), their seed,
    and the central coverage of the inverted interval (its test rejects at 1 - level)."""

    permutations: int = 9999
    seed: int = 0
    level: float = 0.95
    exact_max: int = EXACT_MAX

    def __post_init__(self):
        if self.permutations < 1:
            raise ValueError(f"PermutationSettings.permutations must be at least 1, got "
                             f"{self.permutations}")
        if self.exact_max > 10:
            raise ValueError(f"PermutationSettings.exact_max above 10 would enumerate more than "
                             f"{math.factorial(10):,} permutations, got {self.exact_max}")
        if not 0.0 < self.level < 1.0:
            raise ValueError(f"PermutationSettings.level must be in (0, 1), got {self.level}")

    def describe(self) -> str:
        return (f"permutation tests: exact up to {EXACT_MAX} values, else {self.permutations} "
                f"draws (seed {self.seed}); {self.level:.0%} intervals by inverting them")


@dataclass(frozen=True)
class SlopeTest:
    """p: two-sided permutation p-value of the slope (and of Pearson's r); low, high: the
    inverted interval (None where unbounded); permutations: size of the reference set (n! when
    exact, else 1 + B); exact: whether every permutation was used."""

    slope: float
    p: float
    low: float | None
    high: float | None
    permutations: int
    exact: bool


def reference_permutations(n: int, settings: PermutationSettings) -> tuple[np.ndarray, bool]:
    """The reference set as an (m x n) index matrix whose first row is the identity: all n!
    permutations (exact) for n <= ``settings.exact_max``, else the identity and B random
    ones, and whether it is exact."""
    if n < 1:
        raise ValueError("reference_permutations: no values to permute")
    if n <= settings.exact_max:
        return _every_permutation(n), True
    rng = np.random.default_rng(settings.seed)
    draws = np.argsort(rng.random((settings.permutations, n)), axis=1)
    return np.vstack([np.arange(n), draws]), False


def monte_carlo_interval(p: float, permutations: int,
                         level: float = 0.99) -> tuple[float, float]:
    """The Clopper-Pearson ``level`` interval of the exact permutation p-value behind a Monte
    Carlo one: ``p`` = (1 + k) / ``permutations`` from the identity and B = permutations - 1
    draws, k of them at least as extreme; the exact p-value is the chance that one draw is, and
    k of B draws is a binomial count of it."""
    draws = permutations - 1
    k = round(p * permutations) - 1
    if draws < 1 or not 0 <= k <= draws:
        raise ValueError(f"monte_carlo_interval: p {p} is not (1 + k) / {permutations} for a "
                         f"count k of {draws} draws")
    from scipy.stats import beta

    tail = (1.0 - level) / 2
    low = 0.0 if k == 0 else float(beta.ppf(tail, k, draws - k + 1))
    high = 1.0 if k == draws else float(beta.ppf(1.0 - tail, k + 1, draws - k))
    return low, high


@lru_cache(maxsize=12)
def _every_permutation(n: int) -> np.ndarray:
    table = np.array(list(all_permutations(range(n))), dtype=np.int64)
    table.setflags(write=False)
    return table


def slope_test(x, y, settings: PermutationSettings = PermutationSettings(),
               reference: tuple[np.ndarray, bool] | None = None,
               interval: bool = True) -> SlopeTest:
    """The permutation test of the least-squares slope of ``y`` on ``x`` and its inverted
    interval (left out, None, when ``interval`` is false). ``reference`` (from
    :func:`reference_permutations`) can be passed to share one set between calls. Needs at
    least 2 distinct x values."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"slope_test: x and y must be equal-length vectors, got {x.shape} and "
                         f"{y.shape}")
    xc = x - x.mean()
    sxx = float(xc @ xc)
    if not sxx > 0:
        raise ValueError("slope_test: every x is the same: no slope")
    perms, exact = reference if reference is not None else reference_permutations(len(x),
                                                                                  settings)
    yc = y - y.mean()
    b = float(xc @ yc) / sxx
    a_pi = (yc[perms] @ xc) / sxx
    m = len(perms)
    extreme = np.abs(a_pi) >= abs(b) * (1.0 - TIE) - 1e-300
    p = float(extreme.sum()) / m
    low = high = None
    if interval:
        low, high = _inverted_interval(b, a_pi, (xc[perms] @ xc) / sxx, settings.level)
    return SlopeTest(b, min(p, 1.0), low, high, m, exact)


def _inverted_interval(b: float, a: np.ndarray, bb: np.ndarray,
                       level: float) -> tuple[float | None, float | None]:
    """Ends of {beta0: p(beta0) > 1 - level}'s hull, where permutation k counts at beta0 when
    (a_k - beta0 bb_k)^2 >= (b - beta0)^2, i.e. q2 beta0^2 + q1 beta0 + q0 >= 0 with
    q2 = bb^2 - 1 <= 0."""
    m = len(a)
    q2 = bb * bb - 1.0
    q1 = 2.0 * (b - a * bb)
    q0 = a * a - b * b
    lo = np.full(m, np.inf)   # empty sets: [inf, -inf]
    hi = np.full(m, -np.inf)
    flat = np.abs(q2) < 1e-12
    curved = ~flat
    disc = q1 * q1 - 4.0 * q2 * q0
    ok = curved & (disc >= 0)
    root = np.sqrt(np.where(ok, disc, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = (-q1 - root) / (2.0 * q2)
        r2 = (-q1 + root) / (2.0 * q2)
    lo[ok] = np.minimum(r1, r2)[ok]
    hi[ok] = np.maximum(r1, r2)[ok]
    # |bb| = 1 (x_pi equals x, or its mirror image): the condition is linear in beta0.
    scale = max(abs(b), 1e-300)
    tiny = flat & (np.abs(q1) <= 1e-12 * scale)
    always = tiny & (q0 >= -1e-12 * scale * scale)
    lo[always], hi[always] = -np.inf, np.inf
    up = flat & ~tiny & (q1 > 0)
    down = flat & ~tiny & (q1 < 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        cut = -q0 / q1
    lo[up], hi[up] = cut[up], np.inf
    lo[down], hi[down] = -np.inf, cut[down]
    # count(beta0) = #{lo <= beta0} - #{hi < beta0}; accepted where count > (1 - level) m.
    need = round(1.0 - level, 12) * m + 1e-9  # p <= 1 - level rejects, rounding aside
    los, his = np.sort(lo), np.sort(hi)

    def count(points: np.ndarray) -> np.ndarray:
        return (np.searchsorted(los, points, side="right")
                - np.searchsorted(his, points, side="left"))

    if (his == np.inf).sum() > need or (los == -np.inf).sum() > need:
        return None, None
    ends = np.concatenate([lo[np.isfinite(lo)], hi[np.isfinite(hi)], [b]])
    accepted = ends[count(ends) > need]
    return float(accepted.min()), float(accepted.max())
