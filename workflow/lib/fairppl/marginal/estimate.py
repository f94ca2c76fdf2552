"""Importance-sampling arithmetic for the marginal likelihood over tokenizations, and its
confidence intervals (numpy and scipy only).

Every log-probability here is a natural log (**nats**), float64. A text S has marginal probability
P(S) = sum_T P_LM(T) over every token sequence T spelling S. With K tokenizations T_k drawn from a
proposal Q,

* with replacement (:func:`is_estimate`): P(S) ~ (1/K) sum_k P(T_k) / Q(T_k), unbiased in
  probability space (Cao & Rimell 2021; Chirkova et al. 2023); its log is biased low (Jensen), so
  a log estimate tends to under-state the marginal for small K;
* without replacement (:func:`wor_estimate`): P(S) ~ sum_k P(T_k) / pi_k with pi_k the inclusion
  probability of T_k in the sample (Horvitz-Thompson; Kool et al. 2019's priority sampling gives
  pi_k given the threshold); a path forced into the sample (the default, "include best") has
  pi = 1, log 0.

A log weight is ``log P(T_k) - log Q(T_k)`` (nats). Intervals (:func:`bca_interval`) are BCa
bootstrap intervals of ``log mean(w)``, as Chirkova et al. report them (90%, scipy's BCa).

Summaries: :func:`gap_bits_per_char` (default minus marginal cross-entropy, bits per character),
:func:`relative_gap` (that gap over the default's cross-entropy, a fraction), :func:`percent_nd`
(percentage of sampled blocks or paths that are not the default tokenization).
"""

from __future__ import annotations

import math
import warnings
from typing import Sequence

import numpy as np

#: Resamples for the BCa bootstrap (Chirkova et al. use 1000).
N_RESAMPLES = 1000


def _vector(x, what: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64).reshape(-1)
    if arr.size == 0:
        raise ValueError(f"{what}: expected at least one value, got none")
    if np.isnan(arr).any():
        raise ValueError(f"{what}: NaN at index {int(np.flatnonzero(np.isnan(arr))[0])}")
    return arr


def log_sum_exp(x) -> float:
    """``log(sum(exp(x)))`` computed stably; ``-inf`` when every entry is ``-inf``."""
    arr = _vector(x, "log_sum_exp")
    top = float(arr.max())
    if top == -math.inf:
        return -math.inf
    if top == math.inf:
        return math.inf
    return top + math.log(float(np.exp(arr - top).sum()))


def log_mean_exp(x) -> float:
    """``log(mean(exp(x)))`` computed stably (same units as ``x``: nats in, nats out)."""
    arr = _vector(x, "log_mean_exp")
    return log_sum_exp(arr) - math.log(arr.size)


def log_weights(logp, logq) -> np.ndarray:
    """Importance log weights ``logp - logq`` (nats), float64; shapes must agree."""
    p = _vector(logp, "logp")
    q = _vector(logq, "logq")
    if p.shape != q.shape:
        raise ValueError(f"logp has {p.size} values but logq has {q.size}: expected one per sample")
    if np.isinf(q).any():
        raise ValueError(f"logq is infinite at index {int(np.flatnonzero(np.isinf(q))[0])}: a "
                         f"sampled path must have positive proposal probability")
    return p - q


def is_estimate(logp, logq) -> float:
    """log of the importance-sampling estimate ``(1/K) sum_k exp(logp_k - logq_k)`` of the
    marginal probability, in nats, from K samples drawn **with replacement** from Q.
    ``logp``: log P_LM of each sampled tokenization; ``logq``: its log proposal probability."""
    return log_mean_exp(log_weights(logp, logq))


def wor_estimate(logp, log_inclusion) -> float:
    """log of the Horvitz-Thompson estimate ``sum_k exp(logp_k - log_inclusion_k)`` of the
    marginal probability, in nats, from K **distinct** tokenizations sampled without replacement.
    ``log_inclusion``: log of each one's inclusion probability (priority sampling: given the
    threshold; 0.0 for a path forced into the sample, e.g. the default one)."""
    p = _vector(logp, "logp")
    incl = _vector(log_inclusion, "log_inclusion")
    if p.shape != incl.shape:
        raise ValueError(f"logp has {p.size} values but log_inclusion has {incl.size}: expected "
                         f"one per sample")
    if (incl > 1e-9).any():
        k = int(np.flatnonzero(incl > 1e-9)[0])
        raise ValueError(f"log_inclusion[{k}] = {incl[k]} > 0: an inclusion probability is at "
                         f"most 1")
    return log_sum_exp(p - np.minimum(incl, 0.0))


def effective_sample_size(log_w) -> float:
    """Kish's effective sample size ``(sum w)^2 / sum w^2`` of importance weights given as logs:
    K for equal weights, near 1 when one weight dominates."""
    arr = _vector(log_w, "log_weights")
    return math.exp(2.0 * log_sum_exp(arr) - log_sum_exp(2.0 * arr))


def bca_interval(log_w, level: float = 0.9, rng: np.random.Generator | None = None,
                 n_resamples: int = N_RESAMPLES) -> tuple[float, float]:
    """The ``level`` (default 90%) BCa bootstrap interval of ``log(mean(w))``, in nats, for
    importance weights ``w`` given as logs (``log_w``, nats).

    ``scipy.stats.bootstrap(method="BCa")`` runs on the weights scaled by ``exp(-max(log_w))`` (so
    the largest is 1, no overflow); the bounds of the mean are mapped back to log space. ``rng``:
    the resampling randomness (a ``numpy.random.Generator``; default a fixed seed 0, so the
    interval is deterministic).

    Degenerate samples have no spread to resample: K = 1, all weights equal, or a bootstrap that
    scipy cannot form (NaN bounds, e.g. every resample identical) give ``(estimate, estimate)``
    with ``estimate = log_mean_exp(log_w)``. A bound of mean 0 (every resampled weight
    underflowed) is ``-inf``.
    """
    from scipy import stats

    if not 0.0 < level < 1.0:
        raise ValueError(f"level={level}: expected a confidence level in (0, 1)")
    arr = _vector(log_w, "log_weights")
    if (arr == math.inf).any():
        raise ValueError("log_weights: +inf weight, the estimate is unbounded")
    estimate = log_mean_exp(arr)
    top = float(arr.max())
    if arr.size == 1 or top == -math.inf or np.all(arr == arr[0]):
        return estimate, estimate
    w = np.exp(arr - top)
    if np.all(w == w[0]):  # equal after scaling (differences below float resolution)
        return estimate, estimate
    if rng is None:
        rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        # scipy warns (DegenerateDataWarning) and returns NaN when every resample is identical
        warnings.simplefilter("ignore")
        res = stats.bootstrap((w,), np.mean, method="BCa", confidence_level=level,
                              n_resamples=int(n_resamples), rng=rng, vectorized=True)
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (math.isfinite(low) and math.isfinite(high)):
        return estimate, estimate
    to_log = lambda m: top + math.log(m) if m > 0 else -math.inf  # noqa: E731
    return to_log(low), to_log(high)


# ---------------------------------------------------------------------------------------------
# summaries


def gap_bits_per_char(logp_default, logp_marginal, n_chars) -> float:
    """BPC gap = BPC_default - BPC_marginal, in **bits per character**, over a set of texts:
    ``(sum logp_marginal - sum logp_default) / (ln 2 * sum n_chars)``. Positive when the marginal
    gives the texts more probability (as it must, up to estimation error). Inputs: log-
    probabilities in nats (one per text, or totals) and character counts."""
    d = _vector(logp_default, "logp_default")
    m = _vector(logp_marginal, "logp_marginal")
    n = _vector(n_chars, "n_chars")
    if not d.shape == m.shape == n.shape:
        raise ValueError(f"{d.size} default, {m.size} marginal, {n.size} n_chars values: "
                         f"expected one of each per text")
    chars = float(n.sum())
    if chars <= 0:
        raise ValueError(f"n_chars sums to {chars}: expected a positive number of characters")
    return (math.fsum(m) - math.fsum(d)) / (math.log(2.0) * chars)


def bits_per_char(logp, n_chars) -> float:
    """Cross-entropy in **bits per character**: ``-sum(logp) / (ln 2 * sum(n_chars))`` (logp in
    nats, one per text)."""
    p = _vector(logp, "logp")
    chars = float(_vector(n_chars, "n_chars").sum())
    if chars <= 0:
        raise ValueError(f"n_chars sums to {chars}: expected a positive number of characters")
    return -math.fsum(p) / (math.log(2.0) * chars)


def relative_gap(logp_default, logp_marginal, n_chars) -> float:
    """Relative BPC gap ``(BPC_default - BPC_marginal) / BPC_default`` (a **fraction**; times 100
    for percent), as in Chirkova et al. 2023. Same inputs as :func:`gap_bits_per_char`."""
    default = bits_per_char(logp_default, n_chars)
    if default <= 0:
        raise ValueError(f"BPC of the default tokenization is {default}: expected > 0")
    return gap_bits_per_char(logp_default, logp_marginal, n_chars) / default


def percent_nd(is_default: Sequence[bool]) -> float:
    """%ND: the **percentage** (0-100) of sampled blocks (or paths) whose tokenization is not
    the default one. ``is_default``: one boolean per sampled block/path."""
    arr = np.asarray(is_default, dtype=bool).reshape(-1)
    if arr.size == 0:
        raise ValueError("percent_nd: expected at least one sampled block, got none")
    return 100.0 * float((~arr).sum()) / arr.size
