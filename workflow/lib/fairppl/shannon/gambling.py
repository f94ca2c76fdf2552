"""Gambling perplexity from bets (Bimbot et al., eqs. 3, 5 and 6).

A truncation's bets are an array over the m outcomes (:mod:`.outcomes`), non-negative, summing to
at most 1. What the estimators need from one truncation is summarised once
(:func:`summarize_bets`): the log bet on the correct outcome, its rank, and for every list length l
the sum A_l of the l largest bets and the l-th largest bet. A list of the l best bets orders the
outcomes by decreasing bet, ties in outcome order (the vocabulary's frequency order): ``rank`` is
the correct outcome's place in that list, which decides whether a list of l holds it. Shannon's
rank bounds must not read that tie order as knowledge (a uniform bettor would seem to rank the
frequent words first), so the summary also gives the tie: ``rank_tied_first``, the best place
the tied outcomes share, and ``n_tied``, how many share the correct outcome's bet (1: no tie);
:func:`fairppl.shannon.ranks.shared_rank_frequencies` spreads each tie over its places.

Lists limited to the l best bets (eq. 6): a correct outcome outside the list gets the floor
``(1 - A_l) / (m - l)``; a list is consistent when ``0 < 1 - A_l <= (m - l) * (smallest listed
bet)`` (:func:`consistency_problem`), which the model's own l best bets always satisfy when they
sum to 1. Log bets and perplexities are in nats (``exp``); ``bits`` in a name means base 2.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..core.errors import InputError

#: Bets may sum above 1 by this much (float32 rounding of a model's softmax), never more.
SUM_TOLERANCE = 1e-6
#: Relative slack of the consistency check's upper bound (floating-point sums of many bets).
CONSISTENCY_RTOL = 1e-9
#: The fewest distinct units behind any interval over units of the game (the results table's and
#: a campaign's score): a percentile bootstrap over fewer covers far below its level (about 0.88
#: at 10 units for 0.95, 0.91 at 20; ``bench/bench_shannon_intervals.py``).
MIN_INTERVAL_UNITS = 20
#: Under this many units a shown interval says that it covers below its level (about 0.91 at 20
#: units, 0.92 at 50, 0.935 at 100 for 0.95 in the same simulation).
FEW_INTERVAL_UNITS = 100
#: The caveat that goes with such an interval.
FEW_UNITS_CAVEAT = ("a percentile bootstrap over so few units covers below its level (in "
                    "simulation about 0.91 for 0.95 at 20 units, 0.92 at 50)")
#: Absolute slack of the same bound: ``1 - A_l`` of a float64 distribution normalised to 1 is off
#: by up to a few 1e-16 per bet, which alone can exceed ``(m - l) * smallest`` when the unlisted
#: bets are tiny (say 1e-12 each); a list is flagged only when it fails by more than this.
CONSISTENCY_ATOL = 1e-12


def check_bets(bets: np.ndarray, m: int) -> np.ndarray:
    """``bets`` as a float64 array of length ``m``; refuses NaN, negative values and a sum above
    ``1 + SUM_TOLERANCE``."""
    arr = np.asarray(bets, dtype=np.float64)
    if arr.shape != (m,):
        raise InputError(f"bets of shape {arr.shape}: expected one bet per outcome ({m})")
    if not np.isfinite(arr).all() or (arr < 0).any():
        raise InputError("bets must be finite and non-negative")
    total = math.fsum(arr.tolist())
    if total > 1 + SUM_TOLERANCE:
        raise InputError(f"bets sum to {total:.9g}: expected at most 1")
    return arr


def summarize_bets(bets: np.ndarray, correct: int, list_lengths: Sequence[int]) -> dict:
    """One truncation's summary: ``log_bet`` (ln of the correct outcome's bet; ``-inf`` for a zero
    bet), ``rank`` (1-based place in the list of best bets, ties in outcome order),
    ``rank_tied_first`` (1 + the number of outcomes with a larger bet) and ``n_tied`` (outcomes
    with exactly the correct outcome's bet, itself included), and per list length l (capped at
    m): ``listed_sum`` (A_l, the sum of the l largest bets, by ``math.fsum``) and
    ``listed_last`` (the l-th largest bet)."""
    arr = check_bets(bets, len(bets))
    order = np.argsort(-arr, kind="stable")
    rank = int(np.nonzero(order == correct)[0][0]) + 1
    above = int(np.count_nonzero(arr > arr[correct]))
    tied = int(np.count_nonzero(arr == arr[correct]))
    ranked = arr[order]
    sums, lasts = [], []
    for length in list_lengths:
        n = min(int(length), len(arr))
        sums.append(math.fsum(ranked[:n].tolist()))
        lasts.append(float(ranked[n - 1]))
    bet = float(arr[correct])
    return {"log_bet": math.log(bet) if bet > 0 else -math.inf, "rank": rank,
            "rank_tied_first": above + 1, "n_tied": tied,
            "listed_sum": sums, "listed_last": lasts}


def floor_bet(listed_sum: float, m: int, length: int) -> float:
    """Eq. 6: the bet of an unlisted outcome, ``(1 - A_l) / (m - l)`` (``l < m``)."""
    if length >= m:
        raise ValueError(f"a list of {length} of {m} outcomes leaves none unlisted: no floor")
    return (1.0 - listed_sum) / (m - length)


def consistency_problem(listed_sum: float, smallest: float, m: int, length: int) -> str | None:
    """Why a list of ``length`` bets summing to ``listed_sum`` with smallest bet ``smallest`` fails
    the check ``0 < 1 - A_l <= (m - l) * smallest``; ``None`` when it passes (a full list, l = m,
    needs only A_l <= 1). The upper bound has the slack ``CONSISTENCY_RTOL`` (relative) and
    ``CONSISTENCY_ATOL`` (absolute) for floating-point rounding."""
    if length >= m:
        if listed_sum > 1 + SUM_TOLERANCE:
            return f"the bets sum to {listed_sum:.9g}: expected at most 1"
        return None
    rest = 1.0 - listed_sum
    if not rest > 0:
        return (f"the {length} listed bets sum to {listed_sum:.9g}: nothing is left for the "
                f"{m - length} unlisted outcomes (expected a sum below 1)")
    bound = (m - length) * smallest
    if rest > bound * (1 + CONSISTENCY_RTOL) + CONSISTENCY_ATOL:
        return (f"the floor (1 - {listed_sum:.9g}) / {m - length} = {rest / (m - length):.6g} "
                f"exceeds the smallest listed bet {smallest:.6g} (expected 1 - A <= (m - l) * "
                f"smallest bet)")
    return None


def gambling_perplexity(log_bets: Sequence[float]) -> float:
    """Eq. 3: the inverse geometric mean of the bets on the correct outcomes,
    ``exp(-mean(log_bets))`` (``inf`` when a bet is zero)."""
    values = np.asarray(log_bets, dtype=np.float64)
    if values.size == 0:
        raise ValueError("no truncation to score")
    if np.isneginf(values).any():
        return math.inf
    return math.exp(-math.fsum(values.tolist()) / values.size)


def limited_log_bets(log_bets, ranks, listed_sums, m: int, length: int) -> np.ndarray:
    """Per truncation, the log bet a list of the ``length`` best bets gives the correct outcome:
    its own when its rank is within the list, else the floor of eq. 6."""
    log_bets = np.asarray(log_bets, dtype=np.float64)
    if length >= m:
        return log_bets
    ranks = np.asarray(ranks)
    floors = (1.0 - np.asarray(listed_sums, dtype=np.float64)) / (m - length)
    with np.errstate(divide="ignore"):
        floor_logs = np.where(floors > 0, np.log(np.maximum(floors, 1e-300)), -np.inf)
    return np.where(ranks <= length, log_bets, floor_logs)


# --- Draws of n_t truncations (the paper's Table 1) -------------------------------------------

#: The normal quantile of the paper's 95% bounds (eq. 8).
Z95 = 1.96


def _positive_int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def _check_log_bets(log_bets, what: str) -> np.ndarray:
    values = np.asarray(log_bets, dtype=np.float64)
    if values.ndim != 1:
        raise InputError(f"{what}: expected a 1-D array of log bets, got shape {values.shape}")
    if np.isnan(values).any() or np.isposinf(values).any():
        raise InputError(f"{what}: log bets must not be NaN or +inf (a bet is at most 1)")
    if values.size and values.max() > math.log1p(SUM_TOLERANCE):
        raise InputError(f"{what}: a log bet of {values.max():.6g} means a bet above 1")
    return values


def consecutive_draws(log_bets, n_t: int, n_draws: int = 20, seed: int = 0) -> np.ndarray:
    """The paper's Table 1, top: ``n_draws`` draws of ``n_t`` consecutive truncations of the
    exhaustive protocol (``log_bets`` in corpus order, every truncation of every unit); each draw's
    Q = -mean(log bets) in nats (its gambling perplexity is ``exp(Q)``).

    The starts are ``numpy.random.default_rng(seed).integers(0, N - n_t + 1, size=n_draws)`` (N the
    number of truncations): uniform over the windows that fit, drawn independently (two draws may
    overlap). The same seed gives nearly the same starts for neighbouring ``n_t``: pass a seed per
    ``n_t`` for independent rows of the table. Raises InputError when ``n_t`` exceeds N."""
    values = _check_log_bets(log_bets, "consecutive draws")
    n_t = _positive_int(n_t, "n_t")
    n_draws = _positive_int(n_draws, "the number of draws")
    if n_t > values.size:
        raise InputError(f"n_t = {n_t} exceeds the {values.size} truncations available")
    starts = np.random.default_rng(seed).integers(0, values.size - n_t + 1, size=n_draws)
    return np.array([draw_q(values[s:s + n_t]) for s in starts], dtype=np.float64)


#: The randomized schemes: ``systematic`` (the paper's), ``weighted`` (its length-weighted
#: substitute where the systematic scheme cannot give distinct units) and ``units`` (every unit
#: equally likely: the mean over units, kept only to show the difference; no table row uses it).
SCHEMES = ("systematic", "weighted", "units")


def _check_lengths(unit_lengths, n_t) -> tuple[np.ndarray, int]:
    lengths = np.asarray(unit_lengths)
    if lengths.ndim != 1 or lengths.size == 0:
        raise InputError("randomized draws need at least one unit")
    if not np.issubdtype(lengths.dtype, np.integer) or (lengths < 1).any():
        raise InputError("every unit must have a positive integer number of truncations")
    n_t = _positive_int(n_t, "n_t")
    if n_t > lengths.size:
        raise InputError(f"n_t = {n_t} exceeds the {lengths.size} units available (one "
                         f"truncation per distinct unit)")
    return lengths.astype(np.int64), n_t


def randomized_scheme(unit_lengths: Sequence[int], n_t: int) -> str:
    """The scheme a randomized draw of ``n_t`` truncations uses: ``systematic`` when one
    truncation every ``N // n_t`` (N truncations in all) is at least the longest unit's number of
    truncations, so the picks fall in distinct units; else ``weighted``. Both estimate the
    per-truncation (per-word) quantity without bias (:func:`randomized_positions`)."""
    lengths, n_t = _check_lengths(unit_lengths, n_t)
    return "systematic" if int(lengths.sum()) // n_t >= int(lengths.max()) else "weighted"


def randomized_positions(unit_lengths: Sequence[int], n_t: int, rng: np.random.Generator,
                         sampling: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """One draw of the randomized protocol: ``(units, positions)``, ``n_t`` distinct unit indices
    and one truncation position in each (0-based, ``position < unit_lengths[unit]``, a unit of n
    words having n + 1 truncations). Every scheme but ``units`` estimates the per-truncation
    mean, the quantity of the exhaustive protocol (Bimbot et al., section 5: the randomized
    estimates converge to the likelihood perplexity), with :func:`draw_q`'s weights.

    ``sampling="systematic"``: the paper's section 5 scheme, "one word every s words" from a
    random first word, made circular (Lahiri's circular systematic sampling): ``s = N // n_t``,
    a start ``rng.integers(0, N)`` and the picks ``(start + k s) mod N`` for k < n_t, returned
    in corpus order. Every truncation has the same chance n_t / N, so the plain mean of a draw's
    log bets is unbiased for the per-truncation mean (no remainder of N is left out). Picks are
    at least ``s`` apart, so the units are distinct when ``s`` is at least the longest unit's
    number of truncations; a smaller ``s`` raises InputError. No scheme of equal chances does
    better: one truncation per distinct unit with chance n_t / N for each of a unit's L
    truncations gives the unit a chance n_t L / N, at most 1 only while n_t <= N / L.

    ``sampling="weighted"``: for any n_t up to the number of units, a draw with probability
    proportional to its units' total size (Lahiri 1951; Midzuno 1952): the first truncation
    uniformly over all N (its unit therefore with chance L / N), then n_t - 1 other units
    uniformly without replacement, one uniform position in each. Its estimate of Q is the
    length-weighted mean ``sum L_u x_u / sum L_u`` (x_u: the -ln bet at the drawn position of
    unit u, L_u its number of truncations; :func:`draw_q`), which under this design is exactly
    unbiased for the per-truncation mean: given the set of units, each position is uniform, so
    the expectation is ``sum Y_u / sum L_u`` (Y_u the unit's total), and the set's chance is
    ``sum L_u / (N C(U - 1, n_t - 1))``, which cancels the denominator; summed over the sets,
    every unit's Y_u appears C(U - 1, n_t - 1) times: Y / N. With n_t = U every unit is drawn.

    ``sampling="units"``: ``units = rng.choice(U, size=n_t, replace=False)``, then uniform
    positions; its plain mean estimates the mean over units of each unit's mean, not the
    per-truncation mean, when the bets' quality depends on the unit's length (kept for the
    benchmark that shows the difference). ``"auto"``: :func:`randomized_scheme`."""
    lengths, n_t = _check_lengths(unit_lengths, n_t)
    if sampling == "auto":
        sampling = randomized_scheme(lengths, n_t)
    if sampling == "units":
        units = rng.choice(lengths.size, size=n_t, replace=False)
        return units, rng.integers(0, lengths[units])
    if sampling == "systematic":
        total = int(lengths.sum())
        step = total // n_t
        longest = int(lengths.max())
        if step < longest:
            raise InputError(f"systematic sampling of n_t = {n_t} of {total} truncations takes one "
                             f"every {step}, fewer than the longest unit's {longest}: a unit could "
                             f"be picked twice (expected n_t <= {total // longest})")
        picks = np.sort((int(rng.integers(0, total)) + step * np.arange(n_t)) % total)
        ends = np.cumsum(lengths)
        units = np.searchsorted(ends, picks, side="right")
        positions = picks - (ends[units] - lengths[units])
        return units, positions
    if sampling == "weighted":
        ends = np.cumsum(lengths)
        first_pick = int(rng.integers(0, int(ends[-1])))
        first = int(np.searchsorted(ends, first_pick, side="right"))
        others = np.delete(np.arange(lengths.size), first)
        rest = rng.choice(others, size=n_t - 1, replace=False)
        units = np.concatenate([[first], rest]).astype(np.int64)
        positions = np.concatenate([[first_pick - (ends[first] - lengths[first])],
                                    rng.integers(0, lengths[rest])]).astype(np.int64)
        return units, positions
    raise InputError(f"unknown sampling {sampling!r}: expected one of auto, "
                     f"{', '.join(SCHEMES)}")


def draw_q(values, weights=None) -> float:
    """Q of one draw in nats: ``-mean(values)`` (``values`` the drawn truncations' log bets), or
    with ``weights`` (the weighted scheme's L_u) ``-sum(w x) / sum(w)``; ``inf`` for a zero bet."""
    values = np.asarray(values, dtype=np.float64)
    if np.isneginf(values).any():
        return math.inf
    if weights is None:
        return -math.fsum(values.tolist()) / values.size
    w = np.asarray(weights, dtype=np.float64)
    return -math.fsum((w * values).tolist()) / math.fsum(w.tolist())


def randomized_draws(log_bets_per_unit: Sequence[np.ndarray], n_t: int, n_draws: int = 20,
                     seed: int = 0, sampling: str = "auto") -> np.ndarray:
    """The paper's Table 1, bottom: ``n_draws`` draws of ``n_t`` truncations, one per distinct
    unit (:func:`randomized_positions`, all draws from one ``numpy.random.default_rng(seed)``, in
    order); each draw's Q in nats (:func:`draw_q`, weighted by the units' lengths for the
    ``weighted`` scheme). ``log_bets_per_unit[i]`` holds the log bets of every truncation of
    unit i, in order. ``sampling="auto"``: :func:`randomized_scheme`. Raises InputError when
    ``n_t`` exceeds the number of units. ``bench/bench_shannon_bigram.py`` prints the schemes
    beside the exhaustive value."""
    units = [_check_log_bets(u, f"unit {i}") for i, u in enumerate(log_bets_per_unit)]
    n_draws = _positive_int(n_draws, "the number of draws")
    lengths = np.array([u.size for u in units], dtype=np.int64)
    if sampling == "auto":
        sampling = randomized_scheme(lengths, n_t)
    rng = np.random.default_rng(seed)
    qs = []
    for _ in range(n_draws):
        chosen, positions = randomized_positions(lengths, n_t, rng, sampling)
        values = np.array([units[u][p] for u, p in zip(chosen, positions)])
        qs.append(draw_q(values, lengths[chosen] if sampling == "weighted" else None))
    return np.array(qs, dtype=np.float64)


def draw_summary(qs) -> dict:
    """Eq. 8 over the draws' Q (nats): ``perplexity`` = exp(mean Q), the geometric mean of the
    draws' perplexities; ``low``/``high`` = exp(mean Q -/+ 1.96 sd) with ``sd_nats`` the sample
    standard deviation of Q (ddof=1, the spread of one draw, not the standard error of the mean);
    ``n_draws``. A draw with a zero bet (Q = inf) makes all three ``inf``. Needs two draws."""
    values = np.asarray(qs, dtype=np.float64)
    if values.ndim != 1 or values.size < 2:
        raise InputError(f"a draw summary needs at least two draws, got {values.size}")
    if np.isnan(values).any():
        raise InputError("a draw's Q is NaN")
    if np.isinf(values).any():
        return {"perplexity": math.inf, "low": math.inf, "high": math.inf,
                "n_draws": int(values.size), "sd_nats": math.inf}
    mean = math.fsum(values.tolist()) / values.size
    sd = float(np.std(values, ddof=1))
    return {"perplexity": math.exp(mean), "low": math.exp(mean - Z95 * sd),
            "high": math.exp(mean + Z95 * sd), "n_draws": int(values.size), "sd_nats": sd}
