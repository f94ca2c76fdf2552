"""Shannon's rank bounds (Bimbot et al., eqs. 9-12): hand computations, the paper's Table 2 at
l = 1, and the bracket of the true conditional entropy of known sources."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairppl.core.errors import InputError
from fairppl.shannon.ranks import (
    bounds_as_perplexity,
    rank_frequencies,
    rank_histogram,
    shannon_bounds,
    shannon_bounds_limited,
    zipf_lambda,
    zipf_tail,
)

LN = math.log


def test_eq9_by_hand():
    lower, upper = shannon_bounds([0.5, 0.3, 0.2])
    # r = 1: 1 * 0.2 * ln 1 = 0; r = 2: 2 * 0.1 * ln 2; r = 3: 3 * 0.2 * ln 3.
    assert lower == pytest.approx(0.2 * LN(2) + 0.6 * LN(3), rel=1e-14)
    assert upper == pytest.approx(-(0.5 * LN(0.5) + 0.3 * LN(0.3) + 0.2 * LN(0.2)), rel=1e-14)
    # Zeros: 0 ln 0 = 0, and q_{m+1} = 0 after a zero.
    lower, upper = shannon_bounds([0.75, 0.25, 0.0, 0.0])
    assert lower == pytest.approx(2 * 0.25 * LN(2), rel=1e-14)
    assert upper == pytest.approx(-(0.75 * LN(0.75) + 0.25 * LN(0.25)), rel=1e-14)
    assert bounds_as_perplexity((LN(2), LN(5))) == pytest.approx((2.0, 5.0), rel=1e-14)


def test_eqs_10_to_12_by_hand():
    # m = 5, head q_1 = 0.5, q_2 = 0.3: S = 0.8, t = 0.2 / 3.
    t = 0.2 / 3
    lower, upper = shannon_bounds_limited([0.5, 0.3], 5, 2)
    assert lower == pytest.approx(1 * 0.2 * 0.0 + 2 * (0.3 - t) * LN(2) + 5 * t * LN(5),
                                  rel=1e-14)
    assert upper == pytest.approx(-(0.5 * LN(0.5) + 0.3 * LN(0.3)) - 3 * t * LN(t), rel=1e-14)
    # Eqs. 11-12 are eq. 9 on the head completed by t: a cross-check of the two formulas.
    assert (lower, upper) == pytest.approx(shannon_bounds([0.5, 0.3, t, t, t]), rel=1e-14)
    # l = 1, as in the paper's first column: lower = m t ln m.
    lower, upper = shannon_bounds_limited([0.4], 4, 1)
    assert lower == pytest.approx(4 * 0.2 * LN(4), rel=1e-14)
    assert upper == pytest.approx(-0.4 * LN(0.4) - 3 * 0.2 * LN(0.2), rel=1e-14)


def test_uniform_tail_equals_eq9_on_the_completed_head_for_random_heads():
    rng = np.random.default_rng(8)
    for _ in range(50):
        m = int(rng.integers(2, 40))
        q = np.sort(rng.dirichlet(np.ones(m)))[::-1]
        l = int(rng.integers(1, m))
        t = (1 - q[:l].sum()) / (m - l)
        completed = np.concatenate([q[:l], np.full(m - l, t)])
        assert shannon_bounds_limited(q[:l], m, l) == pytest.approx(
            shannon_bounds(completed), rel=1e-10, abs=1e-12)


def test_zipf_tail_by_hand():
    # Head 0.5, 0.2 of m = 6: lambda = exp(mean(ln 0.5 + ln 1, ln 0.2 + ln 2)) = sqrt(0.2).
    lam = math.sqrt(0.2)
    assert zipf_lambda([0.5, 0.2]) == pytest.approx(lam, rel=1e-14)
    # 1 - S = 0.3: lambda/3 + lambda/4 = 0.261 < 0.3 < 0.261 + lambda/5: rank 5 gets the rest.
    tail = zipf_tail([0.5, 0.2], 6)
    assert tail == pytest.approx([lam / 3, lam / 4, 0.3 - lam / 3 - lam / 4, 0.0], rel=1e-12)
    q = [0.5, 0.2, *tail]
    assert shannon_bounds_limited([0.5, 0.2], 6, 2, tail="zipf") == pytest.approx(
        shannon_bounds(q), rel=1e-14)
    # Head 0.5, 0.01 of m = 4: lambda = 0.1, lambda/3 + lambda/4 = 0.058 < 0.49: scaled up.
    assert zipf_lambda([0.5, 0.01]) == pytest.approx(0.1, rel=1e-14)
    assert zipf_tail([0.5, 0.01], 4) == pytest.approx([0.28, 0.21], rel=1e-12)
    # Zeros in the head are left out of the fit; a head that sums to 1 leaves no tail.
    assert zipf_lambda([0.5, 0.0, 0.1]) == pytest.approx(math.sqrt(0.5 * 0.3), rel=1e-14)
    assert zipf_tail([0.6, 0.4], 5).tolist() == [0.0, 0.0, 0.0]


def test_the_papers_table2_at_l1():
    # Table 2 (m = 20 003, l = 1): the uniform lower bound 5160.64 = exp(m t ln m) gives q_1.
    m = 20003
    q1 = 1 - LN(5160.64) * (m - 1) / (m * LN(m))
    uniform = bounds_as_perplexity(shannon_bounds_limited([q1], m, 1))
    assert uniform == pytest.approx((5160.64, 7688.94), rel=2e-6)
    zipf = bounds_as_perplexity(shannon_bounds_limited([q1], m, 1, tail="zipf"))
    assert zipf == pytest.approx((49.53, 160.51), abs=0.01)


@pytest.mark.parametrize("tail", ["uniform", "zipf"])
def test_limited_at_m_equals_the_full_bounds(tail):
    rng = np.random.default_rng(1)
    for m in (1, 2, 7, 50):
        q = np.sort(rng.dirichlet(np.ones(m)))[::-1]
        assert shannon_bounds_limited(q, m, m, tail) == shannon_bounds(q)


# --- Known sources: an ideal predictor ranks by the true conditional distribution -------------

def exact_rank_frequencies(p_context, p_given):
    """q_r = sum_c p(c) p_(r)(c), p_(r)(c) the r-th largest p(x | c)."""
    return (np.asarray(p_context)[:, None] * -np.sort(-np.asarray(p_given), axis=1)).sum(axis=0)


def conditional_entropy(p_context, p_given):
    p = np.asarray(p_given)
    logs = np.log(np.where(p > 0, p, 1.0))
    return float(-(np.asarray(p_context) * (p * logs).sum(axis=1)).sum())


@pytest.mark.parametrize("seed", range(6))
def test_bounds_bracket_the_entropy_of_random_sources(seed):
    rng = np.random.default_rng(seed)
    n_contexts, m = int(rng.integers(2, 8)), int(rng.integers(2, 30))
    p_context = rng.dirichlet(np.ones(n_contexts))
    p_given = rng.dirichlet(np.full(m, float(rng.choice([0.2, 1.0, 5.0]))), size=n_contexts)
    q = exact_rank_frequencies(p_context, p_given)
    lower, upper = shannon_bounds(q)
    entropy = conditional_entropy(p_context, p_given)
    assert lower <= entropy + 1e-12 and entropy <= upper + 1e-12
    assert lower < upper


def test_deterministic_and_uniform_sources():
    # Each context has one outcome (a different one): ranks are all 1, H = 0, both bounds 0.
    p_given = np.eye(4)
    q = exact_rank_frequencies([0.1, 0.2, 0.3, 0.4], p_given)
    assert q.tolist() == [1.0, 0.0, 0.0, 0.0]
    assert shannon_bounds(q) == (0.0, 0.0)
    assert conditional_entropy([0.1, 0.2, 0.3, 0.4], p_given) == 0.0
    # Uniform over m in every context: q_r = 1/m, both bounds ln m = H.
    m = 9
    q = exact_rank_frequencies([0.5, 0.5], np.full((2, m), 1 / m))
    assert shannon_bounds(q) == pytest.approx((LN(m), LN(m)), rel=1e-13)


def test_bounds_from_sampled_ranks():
    rng = np.random.default_rng(42)
    n_contexts, m = 5, 12
    p_context = rng.dirichlet(np.ones(n_contexts))
    p_given = rng.dirichlet(np.ones(m), size=n_contexts)
    exact = shannon_bounds(exact_rank_frequencies(p_context, p_given))
    # Sample (context, outcome) pairs; the ideal predictor's rank of the outcome.
    n = 200_000
    contexts = rng.choice(n_contexts, size=n, p=p_context)
    order = np.argsort(-p_given, axis=1)
    rank_of = np.argsort(order, axis=1) + 1  # rank_of[c, x]
    cumulative = np.cumsum(p_given, axis=1)
    outcomes = (rng.random(n)[:, None] > cumulative[contexts]).sum(axis=1)
    ranks = rank_of[contexts, np.minimum(outcomes, m - 1)]
    sampled = shannon_bounds(rank_frequencies(ranks, m))
    assert sampled == pytest.approx(exact, abs=0.02)
    entropy = conditional_entropy(p_context, p_given)
    assert sampled[0] <= entropy <= sampled[1]
    histogram = rank_histogram(ranks)
    assert sum(c for _, c in histogram) == n
    assert [c / n for _, c in histogram] == pytest.approx(
        rank_frequencies(ranks, m)[[r - 1 for r, _ in histogram]].tolist(), rel=1e-15)


def test_rank_frequencies_and_histogram_by_hand():
    ranks = [3, 1, 1, 7, 3, 1]
    assert rank_frequencies(ranks, 8).tolist() == [0.5, 0, 1 / 3, 0, 0, 0, 1 / 6, 0]
    assert rank_histogram(ranks) == [(1, 3), (3, 2), (7, 1)]


def test_bad_input_raises():
    with pytest.raises(InputError, match="exceeds the number of outcomes"):
        rank_frequencies([1, 5], 4)
    with pytest.raises(InputError, match="below 1"):
        rank_frequencies([0, 1], 4)
    with pytest.raises(InputError, match="integers"):
        rank_frequencies([1.5, 2.0], 4)
    with pytest.raises(InputError, match="non-empty"):
        rank_histogram([])
    with pytest.raises(InputError, match="expected at most 1"):
        shannon_bounds([0.7, 0.5])
    with pytest.raises(InputError, match="expected 1 for all m ranks"):
        shannon_bounds([0.5, 0.4])
    with pytest.raises(InputError, match="non-negative"):
        shannon_bounds([1.2, -0.2])
    with pytest.raises(InputError, match="non-negative"):
        shannon_bounds([math.nan, 1.0])
    with pytest.raises(InputError, match="exceeds the m = 3"):
        shannon_bounds_limited([0.2] * 4, 3, 4)
    with pytest.raises(InputError, match="expected at most 1"):
        shannon_bounds_limited([0.7, 0.5], 5, 2)
    with pytest.raises(InputError, match="expected the 2 frequencies"):
        shannon_bounds_limited([0.5], 5, 2)
    with pytest.raises(InputError, match="positive integer"):
        shannon_bounds_limited([], 5, 0)
    with pytest.raises(InputError, match="unknown tail"):
        shannon_bounds_limited([0.5], 5, 1, tail="geometric")
    with pytest.raises(InputError, match="expected 1 for all m ranks"):
        shannon_bounds_limited([0.5, 0.4], 2, 2)
    with pytest.raises(InputError, match="cannot be fitted"):
        shannon_bounds_limited([0.0, 0.0], 5, 2, tail="zipf")


def test_ties_are_spread_over_their_places():
    from fairppl.shannon.ranks import shared_rank_frequencies

    # Three truncations of m = 5: rank 2 alone; tied with 2 others at places 1-3; tied with
    # every outcome (a uniform bettor).
    q = shared_rank_frequencies([2, 1, 1], [1, 3, 5], 5)
    assert q == pytest.approx([(1 / 3 + 1 / 5) / 3, (1 + 1 / 3 + 1 / 5) / 3,
                               (1 / 3 + 1 / 5) / 3, 1 / 15, 1 / 15], rel=1e-14)
    assert q.sum() == pytest.approx(1.0, rel=1e-14)
    # no tie: the plain frequencies
    assert shared_rank_frequencies([1, 3, 3], [1, 1, 1], 4).tolist() == pytest.approx(
        rank_frequencies(np.array([1, 3, 3]), 4).tolist())
    # a uniform bettor: q_r = 1/m, both ends of eq. 9 ln m
    m = 7
    lower, upper = shannon_bounds(shared_rank_frequencies([1] * 3, [m] * 3, m))
    assert (lower, upper) == pytest.approx((LN(m), LN(m)), rel=1e-13)
    with pytest.raises(InputError, match="a tie reaches rank 6, beyond the m = 5"):
        shared_rank_frequencies([3], [4], 5)


def test_which_values_are_bounds():
    from fairppl.shannon.ranks import bounds_status

    # Two equally likely words among m = 10 (an ideal predictor: q = 1/2, 1/2): H = ln 2 and
    # eq. 9 gives exactly [ln 2, ln 2], a bound.
    q = [0.5, 0.5] + [0.0] * 8
    assert shannon_bounds(q) == pytest.approx((LN(2), LN(2)), rel=1e-14)
    assert bounds_status(LN(2), LN(2), 10, 10, "uniform")[0] is True
    # Cut at l = 1 with a uniform tail: eq. 11 gives 10 t ln 10 = (10/18) ln 10 = 1.28 > ln 2,
    # above the true entropy: no lower bound; eq. 12's upper end stays above H.
    lower, upper = shannon_bounds_limited([0.5], 10, 1)
    assert lower == pytest.approx(10 / 18 * LN(10), rel=1e-14) and lower > LN(2)
    assert upper >= LN(2)
    valid, note = bounds_status(lower, upper, 10, 1, "uniform")
    assert valid is False and "the upper end stays an upper bound" in note
    assert "neither end is a bound" in bounds_status(0.1, 0.2, 10, 1, "zipf")[1]
    # The uniform tail's upper end is never below eq. 9's on the full frequencies.
    rng = np.random.default_rng(2)
    for _ in range(100):
        m = int(rng.integers(3, 30))
        full = np.sort(rng.dirichlet(np.ones(m) * 0.3))[::-1]
        l = int(rng.integers(1, m))
        assert shannon_bounds_limited(full[:l], m, l)[1] >= shannon_bounds(full)[1] - 1e-12
    # inverted and impossible
    valid, note = bounds_status(LN(9), LN(3), 4, 4, "uniform")
    assert valid is False and note.startswith("inverted") and "impossible: the lower end 9" in note


# --- Finite samples: the upper end is a plug-in entropy, biased low ---------------------------

def test_finite_sample_upper_ends_by_hand():
    from fairppl.shannon.ranks import (miller_madow_upper, once_seen_share,
                                       upper_confidence_bound)

    # counts (2, 1, 1) of n = 4 among m = 10: plug-in 1.5 ln 2, K = 3 ranks seen
    q = [0.5, 0.25, 0.25] + [0.0] * 7
    assert shannon_bounds(q)[1] == pytest.approx(1.5 * LN(2), rel=1e-14)
    assert miller_madow_upper(q, 4) == pytest.approx(1.5 * LN(2) + 2 / 8, rel=1e-14)
    # 1.04 + ln(1 + 9/4) + (1 + ln 4) sqrt(ln 20 / 8) = 3.68 > ln 10: capped at ln m
    assert upper_confidence_bound(q, 4) == pytest.approx(LN(10), rel=1e-14)
    assert once_seen_share(q, 4) == pytest.approx(2 / 3, rel=1e-14)
    # (0.7, 0.2, 0.1) of n = 10,000 among m = 3: not capped
    q = [0.7, 0.2, 0.1]
    plug = -(0.7 * LN(0.7) + 0.2 * LN(0.2) + 0.1 * LN(0.1))
    bound = plug + LN(1 + 2 / 10_000) + (1 + LN(10_000)) * math.sqrt(LN(20) / 20_000)
    assert bound < LN(3)
    assert upper_confidence_bound(q, 10_000) == pytest.approx(bound, rel=1e-14)
    assert upper_confidence_bound(q, 10_000, level=0.5) < bound
    assert miller_madow_upper(q, 10_000) == pytest.approx(plug + 2 / 20_000, rel=1e-14)
    with pytest.raises(InputError, match="positive integer"):
        miller_madow_upper(q, 0)
    with pytest.raises(InputError, match="expected a fraction in"):
        upper_confidence_bound(q, 10, level=1.0)


def _geometric(rho: float):
    """P(r) = (1 - rho) rho^(r - 1), r >= 1, and its entropy in closed form (nats)."""
    return lambda rng, n: rng.geometric(1 - rho, size=n), (
        -(1 - rho) * LN(1 - rho) - rho * LN(rho)) / (1 - rho)


def _zipf(m: int):
    """P(r) = (1 / r) / H_m over 1..m, and its entropy (an exact finite sum, nats)."""
    p = 1 / np.arange(1, m + 1)
    p /= p.sum()
    return lambda rng, n: rng.choice(m, size=n, p=p) + 1, float(-(p * np.log(p)).sum())


@pytest.mark.parametrize("source", ["geometric", "zipf"])
def test_finite_samples_of_known_rank_distributions(source):
    from fairppl.shannon.ranks import miller_madow_upper, upper_confidence_bound

    # m = 1002 ranks as in the study; geometric rho = 0.97 (perplexity 89, P(r > m) ~ 1e-13)
    # or Zipf 1/r (perplexity 180, the heavy tail that leaves most seen ranks seen once)
    m = 1002
    draw, entropy = _geometric(0.97) if source == "geometric" else _zipf(m)
    for n in (150, 1500):
        plug, corrected, bound = [], [], []
        for seed in range(100):
            ranks = draw(np.random.default_rng(seed), n)
            assert ranks.max() <= m
            q = rank_frequencies(ranks, m)
            plug.append(shannon_bounds(q)[1])
            corrected.append(miller_madow_upper(q, n))
            bound.append(upper_confidence_bound(q, n))
        plug, corrected, bound = map(np.array, (plug, corrected, bound))
        # the plug-in upper end sits below the true entropy: an estimate, biased low, no bound
        assert (plug < entropy).mean() >= 0.99
        # Miller-Madow comes closer on average, from below
        assert np.abs(corrected - entropy).mean() < 0.8 * np.abs(plug - entropy).mean()
        # the 95% bound holds (here in every sample) and says something at n = 1500
        assert (bound >= entropy).mean() >= 0.95
        if n == 1500:
            assert math.exp(bound.max()) < 0.4 * m


def test_above_causes():
    from fairppl.shannon.ranks import ABOVE_CAUSES, above_cause

    assert above_cause(10.0, 12.0, 13.0, 20.0) is None
    assert above_cause(12.5, 12.0, 13.0, 20.0) == "undersampled"
    assert above_cause(15.0, 12.0, 13.0, 20.0) == "undersampled or calibration"
    assert above_cause(25.0, 12.0, 13.0, 20.0) == "calibration"
    assert above_cause(25.0, 12.0, None, None) == "cut list"
    assert set(ABOVE_CAUSES) == {"undersampled", "undersampled or calibration", "calibration",
                                 "cut list"}
