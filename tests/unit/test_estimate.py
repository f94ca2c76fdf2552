"""fairppl.marginal.estimate: exact values on hand examples, unbiasedness of the importance
sampling estimators in probability space, BCa intervals cross-checked against scipy and a
percentile bootstrap, degenerate samples."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from fairppl.marginal.estimate import (bca_interval, bits_per_char, effective_sample_size,
                                       gap_bits_per_char, is_estimate, log_mean_exp,
                                       log_sum_exp, percent_nd, relative_gap, wor_estimate)

LN2 = math.log(2.0)


def test_log_mean_exp_exact_and_stable():
    assert log_mean_exp([0.0, math.log(3.0)]) == pytest.approx(math.log(2.0), abs=1e-15)
    assert log_mean_exp([1000.0, 1000.0]) == 1000.0  # no overflow
    assert log_mean_exp([-1000.0, -1000.0 + math.log(3.0)]) == pytest.approx(-1000 + math.log(2))
    assert log_sum_exp([-math.inf, -math.inf]) == -math.inf
    assert log_mean_exp([-math.inf, 0.0]) == pytest.approx(-LN2)
    with pytest.raises(ValueError, match="at least one"):
        log_mean_exp([])
    with pytest.raises(ValueError, match="NaN at index 1"):
        log_mean_exp([0.0, math.nan])


def test_is_estimate_hand_example():
    # weights P/Q = 0.2/0.5 and 0.1/0.25: both 0.4, mean 0.4
    est = is_estimate(np.log([0.2, 0.1]), np.log([0.5, 0.25]))
    assert est == pytest.approx(math.log(0.4), abs=1e-14)
    # weights 0.3/0.1 = 3 and 0.1/0.1 = 1: mean 2
    assert is_estimate(np.log([0.3, 0.1]), np.log([0.1, 0.1])) == pytest.approx(LN2)
    with pytest.raises(ValueError, match="logp has 2 values but logq has 1"):
        is_estimate([0.0, 0.0], [0.0])
    with pytest.raises(ValueError, match="logq is infinite at index 0"):
        is_estimate([0.0], [-math.inf])


def test_wor_estimate_hand_example():
    # forced default (inclusion 1) with P 0.3, plus a path with P 0.2 included with prob 0.5
    assert wor_estimate(np.log([0.3, 0.2]), [0.0, math.log(0.5)]) == pytest.approx(math.log(0.7))
    with pytest.raises(ValueError, match=r"log_inclusion\[1\] = 0.5 > 0"):
        wor_estimate([0.0, 0.0], [0.0, 0.5])


# A toy discrete space of 4 tokenizations: the LM's P (not normalised over them: the rest of its
# mass is on other strings) and a proposal Q over exactly these 4.
TOY_P = np.array([0.20, 0.05, 0.01, 0.004])
TOY_Q = np.array([0.55, 0.25, 0.15, 0.05])


def test_is_estimate_is_unbiased_in_probability_space():
    rng = np.random.default_rng(12345)
    reps, k = 20000, 4
    draws = rng.choice(4, size=(reps, k), p=TOY_Q)
    est = np.array([math.exp(is_estimate(np.log(TOY_P[d]), np.log(TOY_Q[d]))) for d in draws])
    se = est.std(ddof=1) / math.sqrt(reps)
    assert abs(est.mean() - TOY_P.sum()) < 4 * se
    # ... while its log is biased low (Jensen): the mean log estimate is below log P(S)
    assert np.log(est).mean() < math.log(TOY_P.sum())


def test_wor_estimate_with_priority_sampling_is_unbiased():
    """Gumbel-top-k without replacement and the Horvitz-Thompson estimator with inclusion
    probabilities given the (k+1)-th perturbed key (Kool et al. 2019): unbiased."""
    rng = np.random.default_rng(7)
    reps, k = 20000, 2
    logq = np.log(TOY_Q)
    est = np.empty(reps)
    for r in range(reps):
        keys = logq + rng.gumbel(size=4)
        order = np.argsort(-keys)
        top, kappa = order[:k], keys[order[k]]
        log_incl = np.log(-np.expm1(-np.exp(logq[top] - kappa)))
        est[r] = math.exp(wor_estimate(np.log(TOY_P[top]), log_incl))
    se = est.std(ddof=1) / math.sqrt(reps)
    assert abs(est.mean() - TOY_P.sum()) < 4 * se


def test_effective_sample_size():
    assert effective_sample_size([0.0, 0.0, 0.0]) == pytest.approx(3.0)
    assert effective_sample_size([0.0, -50.0, -50.0]) == pytest.approx(1.0, abs=1e-12)
    assert effective_sample_size([math.log(3.0), 0.0]) == pytest.approx(16 / 10)


def _skewed_log_weights(n=60, seed=3):
    return np.random.default_rng(seed).normal(-5.0, 1.0, size=n)


def test_bca_interval_contains_estimate_and_matches_scipy_on_raw_weights():
    lw = _skewed_log_weights()
    low, high = bca_interval(lw, rng=np.random.default_rng(1))
    est = log_mean_exp(lw)
    assert low < est < high
    # BCa is scale-equivariant: scipy on the unscaled weights (same resamples) gives the same
    # bounds after the log
    ref = stats.bootstrap((np.exp(lw),), np.mean, method="BCa", confidence_level=0.9,
                          n_resamples=1000, rng=np.random.default_rng(1), vectorized=True)
    assert low == pytest.approx(math.log(ref.confidence_interval.low), abs=1e-9)
    assert high == pytest.approx(math.log(ref.confidence_interval.high), abs=1e-9)
    # a wider level gives a wider interval
    low99, high99 = bca_interval(lw, level=0.99, rng=np.random.default_rng(1))
    assert low99 < low and high < high99


def test_bca_close_to_percentile_bootstrap_and_shifted_right_for_skewed_weights():
    rng = np.random.default_rng(5)
    # nearly symmetric weights: BCa and percentile agree closely
    lw = np.log(1.0 + 0.1 * rng.standard_normal(400))
    low, high = bca_interval(lw, rng=np.random.default_rng(2), n_resamples=4000)
    pct = stats.bootstrap((np.exp(lw),), np.mean, method="percentile", confidence_level=0.9,
                          n_resamples=4000, rng=np.random.default_rng(2), vectorized=True)
    assert low == pytest.approx(math.log(pct.confidence_interval.low), abs=2e-3)
    assert high == pytest.approx(math.log(pct.confidence_interval.high), abs=2e-3)
    # right-skewed weights (log-normal, sigma 1.5): BCa corrects towards the long right tail
    lw = _skewed_log_weights(n=80, seed=9) * 1.5
    low, high = bca_interval(lw, rng=np.random.default_rng(2), n_resamples=4000)
    pct = stats.bootstrap((np.exp(lw - lw.max()),), np.mean, method="percentile",
                          confidence_level=0.9, n_resamples=4000, rng=np.random.default_rng(2),
                          vectorized=True)
    assert high > lw.max() + math.log(pct.confidence_interval.high)


def test_bca_interval_degenerate_samples():
    assert bca_interval([-3.0]) == (-3.0, -3.0)
    assert bca_interval([-3.0, -3.0, -3.0]) == pytest.approx((-3.0, -3.0))
    est = log_mean_exp([-2.0, -math.inf])
    # one weight underflows to 0: the resampled means reach 0 (a -inf bound) and the largest
    low, high = bca_interval([-2.0, -math.inf])
    assert low == -math.inf and high == pytest.approx(-2.0) and low < est < high
    assert bca_interval([-math.inf, -math.inf]) == (-math.inf, -math.inf)
    # deterministic without an rng
    lw = _skewed_log_weights(n=20)
    assert bca_interval(lw) == bca_interval(lw)
    with pytest.raises(ValueError, match="level=1.5"):
        bca_interval(lw, level=1.5)
    with pytest.raises(ValueError, match=r"\+inf"):
        bca_interval([0.0, math.inf])


def test_gap_summaries_exact():
    # default: 20 bits over 10 chars (2 BPC); marginal: 18 bits (1.8 BPC)
    d, m, n = [-20 * LN2], [-18 * LN2], [10]
    assert bits_per_char(d, n) == pytest.approx(2.0)
    assert gap_bits_per_char(d, m, n) == pytest.approx(0.2)
    assert relative_gap(d, m, n) == pytest.approx(0.1)
    # pooled over two texts: sums, not a mean of ratios
    d2, m2, n2 = [-20 * LN2, -10 * LN2], [-18 * LN2, -10 * LN2], [10, 20]
    assert gap_bits_per_char(d2, m2, n2) == pytest.approx(2 / 30)
    with pytest.raises(ValueError, match="expected one of each per text"):
        gap_bits_per_char(d2, m, n2)
    assert percent_nd([True, False, True, True]) == 25.0
    with pytest.raises(ValueError, match="at least one sampled block"):
        percent_nd([])


def test_bca_interval_nan_from_scipy_gives_the_estimate(monkeypatch):
    class _Result:
        confidence_interval = stats._resampling.ConfidenceInterval(math.nan, math.nan)

    monkeypatch.setattr(stats, "bootstrap", lambda *a, **k: _Result())
    lw = [-1.0, -2.0, -4.0]
    est = log_mean_exp(lw)
    assert bca_interval(lw) == (est, est)
