"""Gambling perplexity (Bimbot et al., eqs. 3, 5, 6 and 8): uniform bets, the floor and the
consistency check of limited lists, and the draws of n_t truncations of the paper's Table 1."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairppl.core.errors import InputError
from fairppl.shannon.gambling import (
    consecutive_draws,
    consistency_problem,
    draw_summary,
    floor_bet,
    gambling_perplexity,
    limited_log_bets,
    randomized_draws,
    randomized_positions,
    summarize_bets,
)


def summaries(bets_rows, correct, lengths):
    return [summarize_bets(np.asarray(b), c, lengths) for b, c in zip(bets_rows, correct)]


def limited_perplexity(rows, m, length, index):
    logs = limited_log_bets([r["log_bet"] for r in rows], [r["rank"] for r in rows],
                            [r["listed_sum"][index] for r in rows], m, length)
    return gambling_perplexity(logs)


# --- Uniform bets, full and limited lists -----------------------------------------------------

@pytest.mark.parametrize("m", [2, 7, 101])
def test_uniform_bets_give_perplexity_m_for_every_list_length(m):
    rng = np.random.default_rng(m)
    correct = rng.integers(0, m, size=50)
    lengths = [1, 2, m // 2 or 1, m - 1, m]
    rows = summaries([np.full(m, 1.0 / m)] * 50, correct, lengths)
    assert gambling_perplexity([r["log_bet"] for r in rows]) == pytest.approx(m, rel=1e-12)
    for i, length in enumerate(lengths):
        # The floor of a uniform list is (1 - l/m) / (m - l) = 1/m: the same perplexity.
        assert limited_perplexity(rows, m, length, i) == pytest.approx(m, rel=1e-12)


# --- The floor and the consistency check, by hand ---------------------------------------------

def test_floor_by_hand():
    assert floor_bet(0.7, 10, 4) == pytest.approx(0.3 / 6, rel=1e-15)
    assert floor_bet(0.0, 5, 0) == pytest.approx(0.2, rel=1e-15)
    with pytest.raises(ValueError):
        floor_bet(1.0, 5, 5)


def test_consistency_by_hand():
    # 0.5, 0.2, 0.1 of m = 10: 1 - A = 0.2 <= 7 * 0.1 = 0.7.
    assert consistency_problem(0.8, 0.1, 10, 3) is None
    # A tail of equal bets: 1 - A = 3 * 0.1 exactly, the check's boundary, passes.
    assert consistency_problem(0.4 + 0.2 + 0.1, 0.1, 6, 3) is None
    # 0.5, 0.3, 0.02 of m = 5: the floor 0.18 / 2 = 0.09 exceeds the smallest listed bet 0.02.
    assert "exceeds the smallest listed bet" in consistency_problem(0.82, 0.02, 5, 3)
    # 0.6, 0.4 of m = 5: nothing left for the 3 unlisted outcomes.
    assert "nothing is left" in consistency_problem(1.0, 0.4, 5, 2)
    # A list summing above 1 fails too.
    assert "nothing is left" in consistency_problem(1.1, 0.5, 5, 2)
    # Full lists: only the sum matters.
    assert consistency_problem(1.0, 0.01, 4, 4) is None
    assert "expected at most 1" in consistency_problem(1.2, 0.3, 4, 4)


def test_the_models_own_top_lists_always_pass():
    rng = np.random.default_rng(0)
    for trial in range(200):
        m = int(rng.integers(2, 60))
        probs = rng.dirichlet(np.full(m, float(rng.choice([0.1, 1.0, 10.0]))))
        probs = np.maximum(probs, 1e-12)
        probs /= probs.sum()
        lengths = list(range(1, m))
        row = summarize_bets(probs, int(rng.integers(0, m)), lengths)
        for i, length in enumerate(lengths):
            assert consistency_problem(row["listed_sum"][i], row["listed_last"][i], m,
                                       length) is None, (trial, m, length)


def test_lists_that_are_not_the_best_bets_fail():
    # Listing 0.3, 0.3 and 0.05 of (0.3, 0.3, 0.3, 0.05, 0.05): the unlisted 0.3 leaves
    # 1 - 0.65 = 0.35 for 2 outcomes, more than 2 * 0.05.
    assert consistency_problem(0.65, 0.05, 5, 3) is not None


def test_limited_log_bets_by_hand():
    # m = 4; three truncations with bets (sorted by outcome order), correct outcomes 0, 2, 3.
    bets = [[0.5, 0.3, 0.15, 0.05], [0.1, 0.6, 0.2, 0.1], [0.4, 0.3, 0.2, 0.1]]
    rows = summaries(bets, [0, 2, 3], [1, 2, 4])
    assert [r["rank"] for r in rows] == [1, 2, 4]
    assert [r["listed_sum"][0] for r in rows] == pytest.approx([0.5, 0.6, 0.4])
    # l = 1: the first is listed (0.5); the others get (1 - 0.6) / 3 and (1 - 0.4) / 3.
    expected = [math.log(0.5), math.log(0.4 / 3), math.log(0.6 / 3)]
    got = limited_log_bets([r["log_bet"] for r in rows], [r["rank"] for r in rows],
                           [r["listed_sum"][0] for r in rows], 4, 1)
    assert got == pytest.approx(expected, rel=1e-12)
    # l = 2: the second is now listed (0.2); the third gets (1 - 0.7) / 2.
    assert limited_perplexity(rows, 4, 2, 1) == pytest.approx(
        (0.5 * 0.2 * 0.15) ** (-1 / 3), rel=1e-12)
    # l = m: the full list, the model's own perplexity.
    full = gambling_perplexity([r["log_bet"] for r in rows])
    assert full == pytest.approx((0.5 * 0.2 * 0.1) ** (-1 / 3), rel=1e-12)
    assert limited_perplexity(rows, 4, 4, 2) == full


def test_limited_at_m_equals_full_on_random_bets():
    rng = np.random.default_rng(3)
    m = 30
    rows = summaries(rng.dirichlet(np.ones(m), size=40), rng.integers(0, m, size=40), [5, m])
    full = gambling_perplexity([r["log_bet"] for r in rows])
    assert limited_perplexity(rows, m, m, 1) == full
    # A shorter list replaces the unlisted correct bets by their floor: another value.
    assert limited_perplexity(rows, m, 5, 0) != pytest.approx(full, rel=1e-6)


# --- Draws (Table 1) --------------------------------------------------------------------------

TINY = np.log(np.array([0.5, 0.25, 0.1, 0.2, 0.05, 0.4, 0.125]))


def test_consecutive_draws_by_hand():
    qs = consecutive_draws(TINY, n_t=3, n_draws=5, seed=11)
    starts = np.random.default_rng(11).integers(0, len(TINY) - 3 + 1, size=5)
    expected = [-(TINY[s] + TINY[s + 1] + TINY[s + 2]) / 3 for s in starts]
    assert qs == pytest.approx(expected, rel=1e-13)
    assert len(set(starts.tolist())) > 1
    # n_t = N: every draw is the whole sequence, the exhaustive value.
    full = consecutive_draws(TINY, n_t=len(TINY), n_draws=3, seed=5)
    assert full == pytest.approx([math.log(gambling_perplexity(TINY))] * 3, rel=1e-13)
    # n_t = 1: each Q is one truncation's -log bet.
    assert set(consecutive_draws(TINY, 1, 50, 0).round(12)) <= set((-TINY).round(12))


def test_randomized_draws_by_hand():
    units = [np.log([0.5, 0.25]), np.log([0.1]), np.log([0.2, 0.05, 0.4]), np.log([0.125, 0.5])]
    qs = randomized_draws(units, n_t=2, n_draws=6, seed=3, sampling="units")
    rng = np.random.default_rng(3)
    expected = []
    for _ in range(6):
        chosen = rng.choice(4, size=2, replace=False)
        positions = rng.integers(0, np.array([2, 1, 3, 2])[chosen])
        expected.append(-sum(units[u][p] for u, p in zip(chosen, positions)) / 2)
        assert chosen[0] != chosen[1]
    assert qs == pytest.approx(expected, rel=1e-13)


def test_systematic_positions_by_hand():
    class Start:  # an rng whose start is fixed
        def __init__(self, start):
            self.start = start

        def integers(self, low, high):
            assert (low, high) == (0, 12)
            return self.start

    # Units of 2, 1, 3, 2, 4 truncations (N = 12); n_t = 3 takes one every 4 from a start
    # anywhere in the 12, circularly.
    lengths = [2, 1, 3, 2, 4]
    units, positions = randomized_positions(lengths, 3, Start(1), sampling="systematic")
    # Flat positions 1, 5, 9 -> (unit 0, pos 1), (unit 2, pos 2), (unit 4, pos 1).
    assert units.tolist() == [0, 2, 4] and positions.tolist() == [1, 2, 1]
    units, positions = randomized_positions(lengths, 3, Start(3), sampling="systematic")
    assert units.tolist() == [2, 3, 4] and positions.tolist() == [0, 1, 3]
    # Start 10: picks 10, 14 - 12 = 2, 6, in corpus order 2 (unit 1), 6 (unit 3), 10 (unit 4).
    units, positions = randomized_positions(lengths, 3, Start(10), sampling="systematic")
    assert units.tolist() == [1, 3, 4] and positions.tolist() == [0, 0, 2]
    with pytest.raises(InputError, match="picked twice"):
        randomized_positions(lengths, 4, Start(0), sampling="systematic")


def test_consecutive_draws_converge_to_the_exhaustive_value():
    rng = np.random.default_rng(0)
    log_bets = np.log(rng.uniform(0.001, 1.0, size=200_000))
    exhaustive = math.log(gambling_perplexity(log_bets))
    qs = consecutive_draws(log_bets, n_t=5000, n_draws=400, seed=1)
    # sd of one draw ~ 1/sqrt(5000); of the mean of 400 draws ~ 7e-4.
    assert qs.mean() == pytest.approx(exhaustive, abs=3e-3)
    assert qs.std(ddof=1) == pytest.approx(log_bets.std() / math.sqrt(5000), rel=0.2)


def test_randomized_draws_converge_to_their_expected_values():
    # Short units (2 truncations) bet badly (-3 nats), long ones (10 truncations) well (-1 nat),
    # shuffled (a periodic order would defeat systematic sampling): exhaustive Q =
    # (1000 * 2 * 3 + 1000 * 10 * 1) / 12000 = 4/3; the mean over units of each unit's mean is
    # (3 + 1) / 2 = 2.
    short = np.random.default_rng(1).permutation(2000) % 2 == 1
    units = [np.full(2, -3.0) if s else np.full(10, -1.0) for s in short]
    flat = np.concatenate(units)
    assert math.log(gambling_perplexity(flat)) == pytest.approx(4 / 3, rel=1e-12)
    by_unit = randomized_draws(units, n_t=100, n_draws=400, seed=2, sampling="units")
    assert by_unit.mean() == pytest.approx(2.0, abs=0.03)
    systematic = randomized_draws(units, n_t=100, n_draws=400, seed=2, sampling="systematic")
    assert systematic.mean() == pytest.approx(4 / 3, abs=0.03)
    # Units of equal length: the default sampling converges to the exhaustive value too.
    rng = np.random.default_rng(4)
    equal = [np.log(rng.uniform(0.01, 1.0, size=5)) for _ in range(3000)]
    qs = randomized_draws(equal, n_t=500, n_draws=300, seed=5)
    assert qs.mean() == pytest.approx(math.log(gambling_perplexity(np.concatenate(equal))),
                                      abs=0.01)


def test_draw_summary_by_hand():
    summary = draw_summary([1.0, 2.0, 3.0])  # mean 2, sample sd 1
    assert summary["perplexity"] == pytest.approx(math.exp(2.0), rel=1e-14)
    assert summary["low"] == pytest.approx(math.exp(2.0 - 1.96), rel=1e-14)
    assert summary["high"] == pytest.approx(math.exp(2.0 + 1.96), rel=1e-14)
    assert summary["sd_nats"] == pytest.approx(1.0, rel=1e-14)
    assert summary["n_draws"] == 3
    # The geometric mean of the draws' perplexities.
    assert summary["perplexity"] == pytest.approx(
        math.prod(math.exp(q) for q in [1.0, 2.0, 3.0]) ** (1 / 3), rel=1e-12)
    assert draw_summary([1.0, math.inf])["perplexity"] == math.inf


def test_a_zero_bet_makes_the_draw_infinite():
    qs = consecutive_draws([math.log(0.5), -math.inf, math.log(0.5)], 3, 2, 0)
    assert np.isinf(qs).all()


def test_bad_draw_inputs_raise():
    with pytest.raises(InputError, match="exceeds the 7 truncations"):
        consecutive_draws(TINY, 8)
    for bad in (0, -1, True, 2.5):
        with pytest.raises(InputError, match="n_t"):
            consecutive_draws(TINY, bad)
    with pytest.raises(InputError, match="NaN"):
        consecutive_draws([0.0, math.nan], 1)
    with pytest.raises(InputError, match="above 1"):
        consecutive_draws([0.5, -1.0], 1)
    with pytest.raises(InputError, match="number of draws"):
        consecutive_draws(TINY, 2, n_draws=0)
    units = [np.log([0.5]), np.log([0.25, 0.5])]
    with pytest.raises(InputError, match="exceeds the 2 units"):
        randomized_draws(units, 3)
    with pytest.raises(InputError, match="positive integer number of truncations"):
        randomized_draws(units + [np.array([])], 1)
    with pytest.raises(InputError, match="unknown sampling 'stratified': expected one of auto, "
                                         "systematic, weighted, units"):
        randomized_draws(units, 1, sampling="stratified")
    with pytest.raises(InputError, match="at least two draws"):
        draw_summary([1.0])
    with pytest.raises(InputError, match="NaN"):
        draw_summary([1.0, math.nan])


# --- Both schemes estimate the per-word quantity (the exhaustive value) ---------------------

#: A toy whose bets get worse with the unit's length: every truncation of a unit of L
#: truncations has ln bet = -L / 4, so the exhaustive Q = sum L^2 / (4 sum L), while the mean
#: over units of each unit's mean is mean(L) / 4.
TOY_LENGTHS = [2, 9, 3, 12, 2, 5, 4, 11, 3, 6, 2, 8]
TOY_UNITS = [np.full(n, -n / 4) for n in TOY_LENGTHS]
TOY_Q = sum(n * n for n in TOY_LENGTHS) / (4 * sum(TOY_LENGTHS))


def test_schemes_by_exhaustive_enumeration():
    # Every outcome of a draw with its exact probability: the expected Q is the exhaustive one.
    lengths = np.array([1, 2, 3, 2])
    units = [np.log([0.5]), np.log([0.2, 0.05]), np.log([0.4, 0.1, 0.3]), np.log([0.6, 0.25])]
    flat = np.concatenate(units)
    exhaustive = -flat.mean()
    N, n_t = int(lengths.sum()), 2
    # systematic: N // n_t = 4 >= 3; each of the N starts has chance 1/N.
    step, ends = N // n_t, np.cumsum(lengths)
    expected = 0.0
    for start in range(N):
        picks = (start + step * np.arange(n_t)) % N
        owner = np.searchsorted(ends, picks, side="right")
        assert len(set(owner.tolist())) == n_t  # distinct units
        expected += -flat[picks].mean() / N
    assert expected == pytest.approx(exhaustive, rel=1e-13)
    # weighted: the first truncation uniform over N, then one of the other 3 units, uniform
    # position; the draw's Q is the length-weighted mean.
    expected = 0.0
    for first in range(N):
        u = int(np.searchsorted(ends, first, side="right"))
        for v in (k for k in range(4) if k != u):
            for pos in range(lengths[v]):
                chance = (1 / N) * (1 / 3) * (1 / lengths[v])
                q = -(lengths[u] * flat[first] + lengths[v] * units[v][pos]) / (
                    lengths[u] + lengths[v])
                expected += chance * q
    assert expected == pytest.approx(exhaustive, rel=1e-13)
    # The uniform-units scheme misses it: mean over units of each unit's mean.
    by_units = -np.mean([u.mean() for u in units])
    assert abs(by_units - exhaustive) > 0.05


@pytest.mark.parametrize("n_t,scheme", [(3, "systematic"), (4, "systematic"),
                                        (6, "weighted"), (12, "weighted")])
def test_draws_average_to_the_exhaustive_value(n_t, scheme):
    from fairppl.shannon.gambling import randomized_scheme

    # N = 67, longest 12: systematic up to n_t = 5, weighted beyond.
    assert randomized_scheme(TOY_LENGTHS, n_t) == scheme
    qs = randomized_draws(TOY_UNITS, n_t=n_t, n_draws=4000, seed=n_t)
    se = qs.std(ddof=1) / math.sqrt(qs.size)
    # Within 4 Monte Carlo standard errors (a false alarm about once in 16,000 runs; the seed
    # is fixed, so the test is deterministic); n_t = 12 draws every unit, so se = 0.
    assert abs(qs.mean() - TOY_Q) <= 4 * se + 1e-12, (qs.mean(), TOY_Q, se)
    # The uniform-units scheme converges elsewhere, many standard errors away.
    if n_t < 12:
        by_units = randomized_draws(TOY_UNITS, n_t=n_t, n_draws=4000, seed=n_t,
                                    sampling="units")
        assert abs(by_units.mean() - np.mean(TOY_LENGTHS) / 4) <= 4 * by_units.std(
            ddof=1) / math.sqrt(4000)
        assert abs(by_units.mean() - TOY_Q) > 10 * se


def test_weighted_draws_are_distinct_units_and_uniform_bets_give_m():
    from fairppl.shannon.gambling import randomized_scheme

    rng = np.random.default_rng(0)
    for _ in range(200):
        units, positions = randomized_positions(TOY_LENGTHS, 7, rng, sampling="weighted")
        assert len(set(units.tolist())) == 7
        assert all(0 <= p < TOY_LENGTHS[u] for u, p in zip(units, positions))
    # Length-weighted means of equal log bets: every draw is exactly ln m.
    flat = [np.full(n, -math.log(7.0)) for n in TOY_LENGTHS]
    assert randomized_draws(flat, 9, 50, 1) == pytest.approx([math.log(7.0)] * 50, rel=1e-14)
    with pytest.raises(InputError, match="exceeds the 12 units"):
        randomized_scheme(TOY_LENGTHS, 13)
