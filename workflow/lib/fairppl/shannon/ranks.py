"""Shannon's entropy bounds from the ranks of the correct outcomes (Bimbot et al., eqs. 9-12).

A bettor that only ranks the m outcomes (a non-probabilistic model) gives, per truncation, the
rank of the correct outcome (1 = its first guess). With q_r the fraction of truncations whose
correct outcome came at rank r (:func:`rank_frequencies`), Shannon (1951) bounds the entropy of a
predictor that ranks by the true conditional distribution (eq. 9, ``q_{m+1} = 0``):

    sum_r r (q_r - q_{r+1}) ln r  <=  H  <=  -sum_r q_r ln q_r

(the upper bound: the outcome is a function of the context and the rank, so H(X | C) is at most
the entropy of the rank; the lower bound: a sorted distribution p is the mixture, with weights
r (p_r - p_{r+1}), of the uniform distributions on its r most likely outcomes, and entropy is
concave). For another ranker the upper bound still holds (its argument uses nothing of the
ranking) and the lower one is computed all the same, bounding nothing that is proven. The upper
bound is also what a bettor achieves that puts q_r on its r-th guess (its gambling entropy is
exactly -sum_r q_r ln q_r), so it can lie below the ranking model's own perplexity when that
model's probabilities are worse calibrated than its ranks: the paper's reading, that the model's
perplexity falls inside the interval, need not hold for a given model. Entropies are in
nats; :func:`bounds_as_perplexity` turns them into perplexities.

When ranks are known only up to l (a list of l guesses; the rest, 1 - S_l, came beyond rank l):

* ``tail="uniform"``: eqs. 10-12 as printed, i.e. eq. 9 with q_r = t_l = (1 - S_l) / (m - l)
  for every r > l.
* ``tail="zipf"``: q_r = lambda / r beyond l (a Zipf law), lambda fitted on the head by least
  squares of ln q_r on ln(1 / r) with the slope fixed at 1 over the non-zero head frequencies,
  i.e. ln lambda = mean(ln q_r + ln r) (:func:`zipf_lambda`). The tail then carries exactly
  1 - S_l: it follows lambda / r from rank l + 1 until that mass is spent, the rank where it runs
  out gets what is left and every later rank 0 (:func:`zipf_tail`). This reproduces the paper's
  Table 2 at l = 1 (49.53 and 160.51, from q_1 = 0.1368 read off its uniform bound 5160.64;
  ``tests/unit/test_shannon_ranks.py``); spreading the tail over all ranks up to m instead would
  give 198 and 897. When lambda / r up to rank m carries less than 1 - S_l, the tail is scaled up
  to carry it: q_r = c / r with c = (1 - S_l) / sum_{r=l+1}^{m} 1/r.

At l = m there is no tail and both give eq. 9 exactly.

Which values are bounds (:func:`bounds_status`). Computed from the rank distribution itself, at
l = m the upper end bounds the entropy for any ranking; the lower end holds for a ranking by the
true conditional distribution, whose rank frequencies never rise, and the two are then ordered.
Computed from the frequencies of n truncations they are estimates of those bounds, not bounds:
the upper one is biased low, and far below the truth when most ranks are seen once (see "Finite
samples" below: :func:`miller_madow_upper` corrects it to first order,
:func:`upper_confidence_bound` bounds it honestly). Cut at l < m they are not bounds: eq. 9's
lower end is sum_r q_r g(r) with g(r) = r ln r - (r - 1) ln(r - 1) increasing, so a uniform
tail, which moves the unseen mass to ranks up to m, can raise it above the true entropy (a source
of two equally likely words among m = 10 has H = ln 2 = 0.69; cut at l = 1, eq. 11 gives
(10/18) ln 10 = 1.28); a uniform tail has the most entropy a tail of its mass can have, so its
upper end is at least eq. 9's and stays an upper bound; the Zipf tail guarantees neither end.
The paper's own Table 2 shows it: at l = 1 its uniform values are 5161 to 7689 around a
likelihood perplexity of 159.8. An interval whose lower end exceeds its upper one, or ln m (no
distribution over m outcomes has more entropy), is flagged as no interval.

Ties: a bettor that gives several outcomes the same bet does not rank them. Each tie is spread
over the places it occupies (:func:`shared_rank_frequencies`): a correct outcome tied with k - 1
others at places f..f + k - 1 adds 1/k to each of those q_r. These are the expected rank
frequencies when the tied outcomes are put in a uniformly random order, computed exactly, so no
seed is needed; a uniform bettor gets q_r = 1/m and both bounds ln m, its perplexity. (Mid-ranks
would put every truncation of a uniform bettor at the one place (m + 1)/2: an upper bound of 0.)
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..core.errors import InputError

#: Rank frequencies may sum above 1 (or, for a full list, differ from 1) by this much.
FREQUENCY_TOLERANCE = 1e-9
#: The tails of :func:`shannon_bounds_limited`.
TAILS = ("uniform", "zipf")


def _check_ranks(ranks) -> np.ndarray:
    arr = np.asarray(ranks)
    if arr.ndim != 1 or arr.size == 0:
        raise InputError("expected a non-empty 1-D list of ranks")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise InputError(f"ranks must be integers, got {arr.dtype} values")
    if arr.min() < 1:
        raise InputError(f"rank {int(arr.min())} is below 1: ranks start at 1")
    return arr.astype(np.int64)


def _positive_int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def rank_frequencies(ranks, m: int) -> np.ndarray:
    """q_r for r = 1..m (an array of length m, summing to 1): the fraction of ``ranks`` equal to
    r. Raises InputError on a rank outside 1..m."""
    m = _positive_int(m, "m")
    arr = _check_ranks(ranks)
    if arr.max() > m:
        raise InputError(f"rank {int(arr.max())} exceeds the number of outcomes m = {m}")
    return np.bincount(arr - 1, minlength=m).astype(np.float64) / arr.size


def shared_rank_frequencies(first, n_tied, m: int, weights=None) -> np.ndarray:
    """q_r for r = 1..m with ties spread over their places (module docstring): truncation t's
    correct outcome shares places ``first[t]``..``first[t] + n_tied[t] - 1`` with the outcomes
    of the same bet and adds ``1 / n_tied[t]`` to each (``weights[t] / n_tied[t]`` with
    weights, then divided by their sum). With no tie (every ``n_tied`` 1) this is
    :func:`rank_frequencies` of ``first``. Raises InputError on a tie that leaves 1..m."""
    m = _positive_int(m, "m")
    first = _check_ranks(first)
    tied = _check_ranks(n_tied)
    if tied.size != first.size:
        raise InputError(f"{first.size} ranks and {tied.size} tie sizes: expected one per "
                         f"truncation")
    last = first + tied - 1
    if last.max() > m:
        raise InputError(f"a tie reaches rank {int(last.max())}, beyond the m = {m} outcomes")
    w = np.ones(first.size) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != first.shape or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise InputError(f"expected {first.size} finite non-negative weights, not all 0")
    diff = np.zeros(m + 1)
    np.add.at(diff, first - 1, w / tied)
    np.add.at(diff, last, -w / tied)
    return np.maximum(np.cumsum(diff[:m]), 0.0) / math.fsum(w.tolist())


def bounds_status(lower: float, upper: float, m: int, l: int, tail: str) -> tuple[bool, str]:
    """Whether eq. 9 applies to the rank values ``(lower, upper)`` (nats) cut at ``l`` of ``m``
    with ``tail``, and why (module docstring): ``(True, ...)`` only at l = m with the two ordered
    and the lower one at most ln m; even then values from a sample are estimates of the bounds,
    as the note says. The note names an inverted or impossible interval first."""
    problems = []
    if lower > upper + 1e-12:
        problems.append(f"inverted: the lower end exp({lower:.4g}) exceeds the upper one "
                        f"exp({upper:.4g}), so there is no interval (Shannon's lower bound needs "
                        f"rank frequencies that never rise, as an ideal predictor's)")
    if lower > math.log(m) + 1e-12:
        problems.append(f"impossible: the lower end {math.exp(lower):.4g} exceeds m = {m}, the "
                        f"perplexity of uniform bets, which no bettor's entropy can exceed")
    if l < m:
        kept = ("the upper end stays an upper bound (a uniform tail has the most entropy) but "
                "the lower end is no bound (the tail's ranks raise it)") if tail == "uniform" \
            else "neither end is a bound (the Zipf tail is an extrapolation)"
        problems.append(f"cut at l = {l} of m = {m}: the ranks beyond l are assumed, so {kept}")
    if problems:
        return False, "; ".join(problems)
    return True, ("eq. 9 on every rank, as estimates from the sample, not bounds: the lower end "
                  "estimates Shannon's lower value without bias (it is linear in q) and bounds "
                  "the entropy only for a ranking by the true conditional distribution; the "
                  "upper end, the plug-in entropy of the ranks, is biased low (the Miller-Madow "
                  "estimate corrects it to first order, the 95% upper bound bounds it)")


def rank_histogram(ranks) -> list[tuple[int, int]]:
    """``(rank, count)`` for every rank seen, by increasing rank (the paper's Figure 2 plots
    these counts against the rank on log-log axes)."""
    values, counts = np.unique(_check_ranks(ranks), return_counts=True)
    return [(int(r), int(c)) for r, c in zip(values, counts)]


def _check_frequencies(q, what: str) -> np.ndarray:
    arr = np.asarray(q, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise InputError(f"{what}: expected a non-empty 1-D array of rank frequencies")
    if not np.isfinite(arr).all() or (arr < 0).any():
        raise InputError(f"{what}: rank frequencies must be finite and non-negative")
    total = math.fsum(arr.tolist())
    if total > 1 + FREQUENCY_TOLERANCE:
        raise InputError(f"{what}: the rank frequencies sum to {total:.12g}: expected at most 1")
    return arr


def _lower(q: np.ndarray) -> float:
    """sum_r r (q_r - q_{r+1}) ln r, q_{m+1} = 0."""
    r = np.arange(1, q.size + 1, dtype=np.float64)
    return math.fsum((r * (q - np.append(q[1:], 0.0)) * np.log(r)).tolist())


def _upper(q: np.ndarray) -> float:
    """-sum_r q_r ln q_r with 0 ln 0 = 0."""
    nz = q[q > 0]
    return -math.fsum((nz * np.log(nz)).tolist())


def shannon_bounds(q) -> tuple[float, float]:
    """Eq. 9: ``(lower, upper)`` entropy bounds in nats from the rank frequencies q_1..q_m
    (``q_{m+1} = 0``; they must sum to 1: for ranks known only up to some l use
    :func:`shannon_bounds_limited`)."""
    arr = _check_frequencies(q, "Shannon bounds")
    total = math.fsum(arr.tolist())
    if abs(total - 1) > FREQUENCY_TOLERANCE:
        raise InputError(f"the rank frequencies sum to {total:.12g}: expected 1 for all m ranks "
                         f"(ranks known only up to l: use the limited bounds)")
    return _lower(arr), _upper(arr)


def zipf_lambda(q_head) -> float:
    """lambda of the Zipf law q_r = lambda / r fitted on the head: least squares of ln q_r on
    ln(1 / r) with the slope fixed at 1 over the non-zero q_r, i.e. exp(mean(ln q_r + ln r))."""
    arr = np.asarray(q_head, dtype=np.float64)
    ranks = np.nonzero(arr > 0)[0] + 1
    if ranks.size == 0:
        raise InputError("no non-zero rank frequency in the head: a Zipf law cannot be fitted")
    return math.exp(float(np.mean(np.log(arr[ranks - 1]) + np.log(ranks))))


def zipf_tail(q_head, m: int) -> np.ndarray:
    """q_{l+1}..q_m of the Zipf tail (see the module docstring): lambda / r from rank l + 1 until
    the mass 1 - S_l is spent (the rank where it runs out gets the remainder, later ranks 0), or
    scaled up to carry 1 - S_l when lambda / r up to rank m falls short. Sums to 1 - S_l."""
    head = np.asarray(q_head, dtype=np.float64)
    length = head.size
    rest = 1.0 - math.fsum(head.tolist())
    if length >= m or rest <= 0:
        return np.zeros(m - length)
    inverse = 1.0 / np.arange(length + 1, m + 1, dtype=np.float64)
    tail = zipf_lambda(head) * inverse
    spent = np.cumsum(tail)
    if spent[-1] < rest:
        return rest * inverse / math.fsum(inverse.tolist())
    last = int(np.searchsorted(spent, rest))  # the first rank where the mass is spent
    tail[last] = rest - (spent[last - 1] if last > 0 else 0.0)
    tail[last + 1:] = 0.0
    return tail


def shannon_bounds_limited(q_head, m: int, l: int, tail: str = "uniform") -> tuple[float, float]:
    """``(lower, upper)`` entropy bounds in nats when only q_1..q_l are known (``q_head`` of
    length l, summing to S_l <= 1; 1 - S_l of the ranks were beyond l) among m outcomes.
    ``tail="uniform"``: eqs. 10-12; ``tail="zipf"``: eq. 9 on the head completed by
    :func:`zipf_tail`. At l = m the head must sum to 1 and both give :func:`shannon_bounds`."""
    if tail not in TAILS:
        raise InputError(f"unknown tail {tail!r}: expected one of {', '.join(TAILS)}")
    m = _positive_int(m, "m")
    l = _positive_int(l, "l")
    if l > m:
        raise InputError(f"a list of l = {l} ranks exceeds the m = {m} outcomes")
    head = _check_frequencies(q_head, "limited Shannon bounds")
    if head.size != l:
        raise InputError(f"expected the {l} frequencies q_1..q_l, got {head.size}")
    if l == m:
        return shannon_bounds(head)
    if tail == "zipf":
        return shannon_bounds(np.concatenate([head, zipf_tail(head, m)]))
    t = max(1.0 - math.fsum(head.tolist()), 0.0) / (m - l)  # eq. 10
    r = np.arange(1, l, dtype=np.float64)  # eq. 11
    lower = math.fsum((r * (head[:-1] - head[1:]) * np.log(r)).tolist()
                      + [l * (head[-1] - t) * math.log(l), m * t * math.log(m)])
    upper = _upper(head) - ((m - l) * t * math.log(t) if t > 0 else 0.0)  # eq. 12
    return lower, upper


def bounds_as_perplexity(bounds: Sequence[float]) -> tuple[float, float]:
    """``(exp(lower), exp(upper))``: entropy bounds in nats as perplexity bounds."""
    lower, upper = bounds
    return math.exp(lower), math.exp(upper)


# --- Finite samples -------------------------------------------------------------------------
#
# The q_r of a table are frequencies in n truncations, not the rank distribution itself, and
# with m = 1002 possible ranks and a few hundred or thousand truncations most ranks seen are seen
# once. Eq. 9's two ends then behave differently:
#
# * the lower end, sum_r q_r (r ln r - (r - 1) ln(r - 1)), is linear in q, so the sample's value
#   estimates the rank distribution's without bias;
# * the upper end, -sum_r q_r ln q_r, is the plug-in entropy of the ranks, biased low: with p the
#   rank distribution (support s <= m), E[plug-in] = H(p) - E[KL(q || p)], and by Jensen
#   E[KL(q || p)] <= ln E[sum_r q_r^2 / p_r] = ln(1 + (s - 1) / n). It can never exceed ln n
#   either (n draws show at most n ranks), whatever the source.
#
# :func:`miller_madow_upper` adds the first-order bias (K - 1) / (2 n), K the ranks seen (an
# estimate, still low when most ranks are seen once); :func:`upper_confidence_bound` adds the
# worst-case bias ln(1 + (m - 1) / n) and a one-sided McDiarmid margin: moving one truncation's
# rank changes sum_r c_r ln c_r (c_r the counts) by at most 1 + ln n, so the plug-in changes by
# at most (1 + ln n) / n and falls more than (1 + ln n) sqrt(ln(1 / alpha) / (2 n)) below its
# mean with probability at most alpha. The result is at least the rank entropy, hence at least
# the conditional entropy H(X | C), with probability at least 1 - alpha, for any ranking, when
# the truncations are independent draws (truncations of one verse are not quite: the bound is
# as honest as that reading of q_r, which eq. 9 makes too). Ties spread over their places
# (:func:`shared_rank_frequencies`) keep it: the spread q's plug-in is at least the mean plug-in
# over random tie-breaks (entropy is concave), and that mean has the same bounded differences.
# Both are capped at ln m.

#: One-sided confidence of :func:`upper_confidence_bound`.
UPPER_BOUND_LEVEL = 0.95


def _sample_q(q, n) -> tuple[np.ndarray, int]:
    arr = _check_frequencies(q, "finite-sample rank values")
    n = _positive_int(n, "the number of truncations n")
    return arr, n


def miller_madow_upper(q, n: int) -> float:
    """Eq. 9's upper end with Miller and Madow's first-order bias correction, in nats:
    ``-sum q_r ln q_r + (K - 1) / (2 n)``, K the ranks with q_r > 0, n the truncations behind q;
    at most ln m (m = ``len(q)``)."""
    arr, n = _sample_q(q, n)
    seen = int(np.count_nonzero(arr))
    return min(_upper(arr) + (seen - 1) / (2.0 * n), math.log(arr.size))


def upper_confidence_bound(q, n: int, level: float = UPPER_BOUND_LEVEL) -> float:
    """An upper bound, in nats, on the rank entropy (so on the conditional entropy) that holds
    with probability ``level`` over n independent truncations (see above):
    ``-sum q_r ln q_r + ln(1 + (m - 1) / n) + (1 + ln n) sqrt(ln(1 / (1 - level)) / (2 n))``,
    at most ln m."""
    arr, n = _sample_q(q, n)
    if not 0 < level < 1:
        raise InputError(f"the bound's level is {level!r}: expected a fraction in (0, 1)")
    m = arr.size
    margin = (1 + math.log(n)) * math.sqrt(math.log(1 / (1 - level)) / (2 * n))
    return min(_upper(arr) + math.log1p((m - 1) / n) + margin, math.log(m))


def once_seen_share(q, n: int) -> float:
    """Among the ranks seen (q_r > 0), the share seen at most once (n q_r <= 1; a tie spread
    over k places counts 1/k at each): near 1, the sample says little about the tail of the
    rank distribution and the plug-in upper end sits near its ceiling ln n."""
    arr, n = _sample_q(q, n)
    seen = arr[arr > 0]
    return float(np.count_nonzero(seen * n <= 1 + 1e-9)) / seen.size if seen.size else 0.0


#: Why a bettor's gambling perplexity lies above the upper rank value (:func:`above_cause`).
ABOVE_CAUSES = {
    "undersampled": "above the plug-in upper end only: the Miller-Madow estimate is above the "
                    "perplexity, so the plug-in's downward bias explains it",
    "undersampled or calibration": "above the Miller-Madow estimate but not the 95% upper "
                                   "bound: sampling may explain it",
    "calibration": "above even the 95% upper bound on the rank entropy: the bettor's "
                   "probabilities lose more than betting q_r on its r-th guess would, beyond "
                   "sampling error",
    "cut list": "cut at l < m the values rest on an assumed tail: no cause can be told",
}


def above_cause(perplexity: float, upper: float, corrected: float | None,
                bound: float | None) -> str | None:
    """The key of :data:`ABOVE_CAUSES` for a gambling ``perplexity`` above the plug-in
    ``upper`` end (all perplexities, ``corrected`` the Miller-Madow one, ``bound`` the 95% upper
    bound; both ``None`` for a cut list); ``None`` when the perplexity is not above it."""
    if perplexity is None or upper is None or not perplexity > upper * (1 + 1e-12):
        return None
    if corrected is None or bound is None:
        return "cut list"
    if perplexity <= corrected * (1 + 1e-12):
        return "undersampled"
    if perplexity <= bound * (1 + 1e-12):
        return "undersampled or calibration"
    return "calibration"
