"""fairppl.marginal.lattice against brute-force enumeration of every path of small random
lattices (dead ends, unreachable arcs, parallel arcs, ties, tau != 1)."""

import math

import numpy as np
import pytest

from fairppl.marginal.lattice import (Lattice, backward, count_paths, entropy, enumerate_paths,
                                      forward, nbest, path_logq, sample, sample_wor, viterbi)


def random_lattice(seed, n=None, quantum=None):
    """Arcs of length <= 3 present at random; token = 100*length + r (unique per start node);
    logw normal, or on a grid of ``quantum`` (ties). Plus one dead-end arc into a node
    from which n is unreachable when possible."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 8)) if n is None else n
    arcs = []
    for s in range(n):
        for length in range(1, 4):
            e = s + length
            if e > n:
                continue
            for r in range(int(rng.integers(0, 3)) if length > 1 else 1 + int(rng.integers(0, 2))):
                w = rng.normal(-2.0, 1.5)
                if quantum:
                    w = round(w / quantum) * quantum
                if rng.random() < 0.75:
                    arcs.append((s, e, 100 * length + r, w))
    return Lattice.from_arcs(n, arcs)


def brute(lat):
    """Every complete path as (tokens, summed logw, arcs), by recursion over the raw arc list."""
    out = []

    def walk(node, arcs):
        if node == lat.n:
            out.append(arcs)
            return
        for a in range(len(lat.start)):
            if lat.start[a] == node:
                walk(int(lat.end[a]), arcs + [a])

    walk(0, [])
    return [(tuple(int(lat.token[a]) for a in arcs), float(sum(lat.logw[a] for a in arcs)), arcs)
            for arcs in out]


def lse(xs):
    xs = list(xs)
    if not xs:
        return -math.inf
    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))


def tie_key(lat, item):
    """The documented order: score descending, then the last arc's (start, token), then the
    prefix's, compared from the end."""
    toks, score, arcs = item
    return (-score, tuple((int(lat.start[a]), int(lat.token[a])) for a in reversed(arcs)))


SEEDS = list(range(12))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("tau", [1.0, 0.5, 2.5])
def test_forward_backward_entropy_against_enumeration(seed, tau):
    lat = random_lattice(seed)
    paths = brute(lat)
    alpha, logz = forward(lat, tau)
    beta = backward(lat, tau)
    assert logz == pytest.approx(lse(s / tau for _, s, _ in paths), abs=1e-12)
    assert beta[0] == pytest.approx(logz, abs=1e-12) if paths else beta[0] == -math.inf
    # alpha[i] over partial paths 0 -> i: sub-lattices cut at i
    for i in range(lat.n + 1):
        keep = lat.end <= i
        sub = Lattice(i, lat.start[keep], lat.end[keep], lat.token[keep], lat.logw[keep])
        want = lse(s / tau for _, s, _ in brute(sub))
        assert alpha[i] == pytest.approx(want, abs=1e-12) if want > -math.inf else alpha[i] == want
    assert count_paths(lat) == len(paths)
    if not paths:
        return
    logq = {t: s / tau - logz for t, s, _ in paths}
    assert len(logq) == len(paths)  # a token tuple names one path
    for t, lq in logq.items():
        assert path_logq(lat, t, tau) == pytest.approx(lq, abs=1e-12)
    want_h = -sum(math.exp(lq) * lq for lq in logq.values())
    assert entropy(lat, tau) == pytest.approx(want_h, abs=1e-10)


@pytest.mark.parametrize("seed", SEEDS)
def test_viterbi_nbest_enumerate_with_ties(seed):
    lat = random_lattice(seed, quantum=0.5)  # sums on a 0.5 grid: exact ties in float64
    paths = sorted(brute(lat), key=lambda it: tie_key(lat, it))
    if not paths:
        with pytest.raises(ValueError, match="no path from node 0"):
            viterbi(lat)
        assert enumerate_paths(lat, 10) == []
        return
    assert viterbi(lat) == (paths[0][0], paths[0][1])
    for m in (1, 2, 3, len(paths), len(paths) + 3):
        assert nbest(lat, m) == [(t, s) for t, s, _ in paths[:m]]
    listed = enumerate_paths(lat, len(paths))
    assert sorted(listed) == sorted(t for t, _, _ in paths) and len(set(listed)) == len(listed)
    assert enumerate_paths(lat, len(paths) - 1) is None


def test_hand_example_and_tie_break():
    # "abc": a|b|c, ab|c, a|bc, abc; all of score -3 except ab|c = -2.5
    lat = Lattice.from_arcs(3, [(0, 1, 1, -1.0), (1, 2, 2, -1.0), (2, 3, 3, -1.0),
                                (0, 2, 4, -1.5), (1, 3, 5, -2.0), (0, 3, 6, -3.0)])
    assert viterbi(lat) == ((4, 3), -2.5)
    # ties at -3: last arc starting at 0 (abc), then at 1 (a|bc), then at 2 (a|b|c)
    assert [p for p, _ in nbest(lat, 4)] == [(4, 3), (6,), (1, 5), (1, 2, 3)]
    assert count_paths(lat) == 4
    z = math.log(3 * math.exp(-3) + math.exp(-2.5))
    assert forward(lat)[1] == pytest.approx(z, abs=1e-14)
    assert path_logq(lat, (4, 3)) == pytest.approx(-2.5 - z, abs=1e-14)
    with pytest.raises(ValueError, match="path token 1 .id 9. has no arc starting at node 1"):
        path_logq(lat, (1, 9))
    with pytest.raises(ValueError, match="path ends at node 2, expected node n=3"):
        path_logq(lat, (1, 2))


def test_degenerate_lattices_and_validation():
    empty = Lattice.from_arcs(0, [])
    assert forward(empty)[1] == 0.0 and viterbi(empty) == ((), 0.0) and count_paths(empty) == 1
    assert enumerate_paths(empty, 1) == [()] and entropy(empty) == 0.0
    paths, logq = sample(empty, 3, np.random.default_rng(0))
    assert paths == [(), (), ()] and np.all(logq == 0.0)
    single = Lattice.from_arcs(4, [(0, 2, 7, -1.25), (2, 4, 8, -0.5), (1, 3, 9, -1.0)])
    assert count_paths(single) == 1 and entropy(single) == 0.0 and forward(single)[1] == -1.75
    p, lq, inc = sample_wor(single, 5, np.random.default_rng(1))
    assert p == [(7, 8)] and lq.tolist() == [0.0] and inc.tolist() == [0.0]
    p, lq, inc = sample_wor(single, 5, np.random.default_rng(1), include_best=True)
    assert p == [(7, 8)] and inc.tolist() == [0.0]
    with pytest.raises(ValueError, match="share a start node and a token id"):
        Lattice.from_arcs(3, [(0, 1, 5, 0.0), (0, 2, 5, 0.0)])
    with pytest.raises(ValueError, match="0 <= start < end <= n=2"):
        Lattice.from_arcs(2, [(1, 1, 5, 0.0)])
    with pytest.raises(ValueError, match="sorted by .end, start, token."):
        Lattice(2, np.array([0, 0]), np.array([2, 1]), np.array([1, 2]), np.array([0.0, 0.0]))
    dead = Lattice.from_arcs(3, [(0, 1, 1, 0.0), (2, 3, 2, 0.0)])
    with pytest.raises(ValueError, match="no path from node 0 to node n=3"):
        sample(dead, 1, np.random.default_rng(0))
    fib = Lattice.from_arcs(60, [(i, i + 1, 1, 0.0) for i in range(60)]
                            + [(i, i + 2, 2, 0.0) for i in range(59)])
    assert count_paths(fib) == 2504730781961  # Fibonacci(61): steps of 1 and 2


def rich_lattice():
    """A lattice with 10-30 paths for the Monte-Carlo tests."""
    for seed in range(100):
        lat = random_lattice(seed, n=6)
        if 10 <= count_paths(lat) <= 30:
            return lat
    raise AssertionError("no lattice with 10-30 paths")


@pytest.mark.parametrize("tau", [1.0, 0.7])
def test_sample_frequencies_and_logq(tau):
    lat = rich_lattice()
    truth = {t: s / tau for t, s, _ in brute(lat)}
    logz = lse(truth.values())
    paths, logq = sample(lat, 20000, np.random.default_rng(5), tau)
    for t, lq in zip(paths[:200], logq[:200]):
        assert lq == pytest.approx(truth[t] - logz, abs=1e-12)
    for t, s in truth.items():
        q = math.exp(s - logz)
        freq = sum(p == t for p in paths) / len(paths)
        assert abs(freq - q) <= 5 * math.sqrt(q * (1 - q) / len(paths)) + 1e-4, t
    assert sample(lat, 50, np.random.default_rng(6), tau)[0] == \
        sample(lat, 50, np.random.default_rng(6), tau)[0]


def gumbel_top_k_reference(logq, k, rng, reps):
    """Inclusion frequencies of plain Gumbel-top-k on the enumerated list (independent of the
    beam search)."""
    g = logq[None, :] + rng.gumbel(size=(reps, len(logq)))
    top = np.argsort(-g, axis=1)[:, :k]
    counts = np.zeros(len(logq))
    np.add.at(counts, top.ravel(), 1)
    return counts / reps


@pytest.mark.parametrize("include_best", [False, True])
def test_sample_wor_unbiased_and_inclusion(include_best):
    lat = rich_lattice()
    tau, k, reps = 0.8, 4, 3000
    items = brute(lat)
    toks = [t for t, _, _ in items]
    logz = lse(s / tau for _, s, _ in items)
    logq = np.array([s / tau - logz for _, s, _ in items])
    p_model = np.random.default_rng(11).dirichlet(np.full(len(items), 0.5))  # a random "P"
    p_of = dict(zip(toks, p_model))
    best = viterbi(lat)[0]
    estimates, hits = [], np.zeros(len(items))
    weighted = np.zeros((reps, len(items)))  # 1{T in S} / q_incl(T) per draw
    for seed in range(reps):
        paths, lq, inc = sample_wor(lat, k, np.random.default_rng(seed), tau, include_best)
        assert len(paths) == k and len(set(paths)) == k
        if include_best:
            assert paths[0] == best and inc[0] == 0.0
        for t, q in zip(paths, lq):
            assert q == pytest.approx(logq[toks.index(t)], abs=1e-12)
        assert np.all(inc <= 0.0)
        estimates.append(sum(p_of[t] / math.exp(i) for t, i in zip(paths, inc)))
        for t, i in zip(paths, inc):
            hits[toks.index(t)] += 1
            weighted[seed, toks.index(t)] = math.exp(-i)
    est = np.array(estimates)
    tol = 4 * est.std(ddof=1) / math.sqrt(reps)
    assert abs(est.mean() - 1.0) <= tol, (est.mean(), tol)  # sum_T P(T) = 1
    # E[1{T in S} / q_incl(T)] = 1 for every path seen often enough to estimate it
    for j in range(len(items)):
        if include_best and toks[j] == best:
            assert hits[j] == reps
        elif hits[j] >= 50:
            col = weighted[:, j]
            assert abs(col.mean() - 1.0) <= 5 * col.std(ddof=1) / math.sqrt(reps), toks[j]
    # inclusion frequencies match plain Gumbel-top-k on the enumerated list
    if include_best:
        others = [j for j in range(len(items)) if toks[j] != best]
        ref = np.zeros(len(items))
        ref[others] = gumbel_top_k_reference(logq[others], k - 1, np.random.default_rng(99), 20000)
        ref[toks.index(best)] = 1.0
    else:
        ref = gumbel_top_k_reference(logq, k, np.random.default_rng(99), 20000)
    freq = hits / reps
    assert np.all(np.abs(freq - ref) <= 5 * np.sqrt(ref * (1 - ref) / reps) + 0.01), (freq, ref)


def test_sample_wor_small_lattice_returns_everything():
    lat = Lattice.from_arcs(3, [(0, 1, 1, -1.0), (1, 2, 2, -1.0), (2, 3, 3, -1.0),
                                (0, 2, 4, -1.5), (1, 3, 5, -2.0), (0, 3, 6, -3.0)])
    for include_best in (False, True):
        paths, logq, inc = sample_wor(lat, 4, np.random.default_rng(3), include_best=include_best)
        assert sorted(paths) == sorted(enumerate_paths(lat, 4)) and np.all(inc == 0.0)
        assert np.exp(logq).sum() == pytest.approx(1.0, abs=1e-12)
        if include_best:
            assert paths[0] == (4, 3)
    paths, _, inc = sample_wor(lat, 3, np.random.default_rng(3))
    assert len(paths) == 3 and np.all(inc < 0.0)
    a = sample_wor(lat, 3, np.random.default_rng(8), include_best=True)
    b = sample_wor(lat, 3, np.random.default_rng(8), include_best=True)
    assert a[0] == b[0] and np.array_equal(a[2], b[2])
