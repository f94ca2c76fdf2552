"""Segmentation lattices: every tokenization of a text as a path through a DAG, in log space.

A :class:`Lattice` has nodes ``0..n`` (character or byte positions; the builder decides) and arcs
``start -> end`` (``end > start``) that each emit one token id with a log-weight ``logw`` (nats;
a unigram piece score, or 0.0 for a uniform lattice). A path from node 0 to node n is a
tokenization, written as the ``tuple[int, ...]`` of its token ids. A token id may label several
arcs, but at most one arc per start node (a token spells a fixed string), so a token tuple names
at most one path.

Under temperature ``tau`` the proposal over paths is ``Q(T) = exp(sum(logw)/tau) / Z_tau``. Every
function here is exact and deterministic given its ``numpy.random.Generator``; every
log-probability is in nats (float64). Arcs that no complete path uses (unreachable from 0, or
dead ends that never reach n) are allowed and get probability 0.

Tie-break (``viterbi`` and ``nbest``): among paths of equal total ``logw``, the one whose last arc
starts earliest comes first, then the smaller last token id, then the same rule on the prefix.
This is what SentencePiece's Viterbi does (strict ``>`` over arcs visited in increasing start), so
on quantised unigram models (``fairppl.tokenizers.spm_model``) the two agree exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterable

import numpy as np

Path = tuple  # tuple[int, ...] of token ids


@dataclass(frozen=True, eq=False)
class Lattice:
    """Arcs sorted by ``(end, start, token)``; see the module docstring."""
    n: int
    start: np.ndarray
    end: np.ndarray
    token: np.ndarray
    logw: np.ndarray

    def __post_init__(self):
        a = len(self.start)
        if not (len(self.end) == len(self.token) == len(self.logw) == a):
            raise ValueError("Lattice: start, end, token and logw must have the same length")
        if self.n < 0:
            raise ValueError(f"Lattice: n={self.n}, expected n >= 0")
        if a and (self.start.min() < 0 or self.end.max() > self.n
                  or np.any(self.end <= self.start)):
            raise ValueError(f"Lattice: every arc needs 0 <= start < end <= n={self.n}")
        if a > 1:
            order = np.lexsort((self.token, self.start, self.end))
            if np.any(order != np.arange(a)):
                raise ValueError("Lattice: arcs must be sorted by (end, start, token); "
                                 "build with Lattice.from_arcs")
        if len(self._arc_of) != a:
            raise ValueError("Lattice: two arcs share a start node and a token id "
                             "(a token must spell one fixed string)")

    @classmethod
    def from_arcs(cls, n: int, arcs: Iterable[tuple[int, int, int, float]]) -> "Lattice":
        """Build from ``(start, end, token, logw)`` tuples in any order (sorted here)."""
        arcs = sorted(((int(s), int(e), int(t), float(w)) for s, e, t, w in arcs),
                      key=lambda x: (x[1], x[0], x[2]))
        cols = list(zip(*arcs)) if arcs else [(), (), (), ()]
        return cls(int(n), np.array(cols[0], dtype=np.int64), np.array(cols[1], dtype=np.int64),
                   np.array(cols[2], dtype=np.int64), np.array(cols[3], dtype=np.float64))

    @cached_property
    def _end_off(self) -> np.ndarray:
        """Arcs ending at node i are ``_end_off[i]:_end_off[i+1]``."""
        return np.searchsorted(self.end, np.arange(self.n + 2))

    @cached_property
    def by_start(self) -> tuple[np.ndarray, np.ndarray]:
        """(arc indices sorted by (start, end, token), offsets by start node)."""
        order = np.lexsort((self.token, self.end, self.start))
        return order, np.searchsorted(self.start[order], np.arange(self.n + 2))

    @cached_property
    def _arc_of(self) -> dict:
        return {(int(s), int(t)): i for i, (s, t) in enumerate(zip(self.start, self.token))}


def _lse(x: np.ndarray) -> float:
    """log(sum(exp(x))), -inf for an empty or all -inf ``x``."""
    if x.size == 0:
        return -np.inf
    m = x.max()
    if m == -np.inf:
        return -np.inf
    return float(m + np.log(np.exp(x - m).sum()))


def forward(lat: Lattice, tau: float = 1.0) -> tuple[np.ndarray, float]:
    """Forward log-marginals: ``alpha[i]`` = log of the summed ``exp(logw/tau)`` of all partial
    paths 0 -> i (``alpha[0] = 0``, -inf where unreachable); returns
    ``(alpha, logZ = alpha[n])``."""
    w = lat.logw / tau
    alpha = np.full(lat.n + 1, -np.inf)
    alpha[0] = 0.0
    off = lat._end_off
    for i in range(1, lat.n + 1):
        seg = slice(off[i], off[i + 1])
        alpha[i] = _lse(alpha[lat.start[seg]] + w[seg])
    return alpha, float(alpha[lat.n])


def backward(lat: Lattice, tau: float = 1.0) -> np.ndarray:
    """Backward log-marginals: ``beta[i]`` = log-sum over partial paths i -> n (``beta[n] = 0``);
    ``beta[0]`` equals ``forward(lat, tau)[1]``."""
    w = lat.logw / tau
    order, off = lat.by_start
    beta = np.full(lat.n + 1, -np.inf)
    beta[lat.n] = 0.0
    for i in range(lat.n - 1, -1, -1):
        arcs = order[off[i]:off[i + 1]]
        beta[i] = _lse(w[arcs] + beta[lat.end[arcs]])
    return beta


def path_arcs(lat: Lattice, path) -> list[int]:
    """The arc indices of ``path`` (token ids) in order; ``ValueError`` if it is not a path."""
    arcs, pos = [], 0
    for k, tok in enumerate(path):
        arc = lat._arc_of.get((pos, int(tok)))
        if arc is None:
            raise ValueError(f"path token {k} (id {tok}) has no arc starting at node {pos}")
        arcs.append(arc)
        pos = int(lat.end[arc])
    if pos != lat.n:
        raise ValueError(f"path ends at node {pos}, expected node n={lat.n}")
    return arcs


def path_logq(lat: Lattice, path, tau: float = 1.0) -> float:
    """log Q_tau(path) in nats; ``ValueError`` if ``path`` is not a path of ``lat``."""
    arcs = path_arcs(lat, path)
    _, logz = forward(lat, tau)
    return float(lat.logw[arcs].sum() / tau - logz)


def _check_complete(lat: Lattice, logz: float) -> None:
    if logz == -np.inf:
        raise ValueError(f"lattice has no path from node 0 to node n={lat.n}")


def _backtrace(lat: Lattice, node_arc: list, node: int) -> tuple:
    toks = []
    while node > 0:
        arc = node_arc[node]
        toks.append(int(lat.token[arc]))
        node = int(lat.start[arc])
    return tuple(reversed(toks))


def viterbi(lat: Lattice) -> tuple[Path, float]:
    """The highest-``logw`` path and its summed ``logw`` (tie-break in the module docstring)."""
    best = np.full(lat.n + 1, -np.inf)
    best[0] = 0.0
    back = [-1] * (lat.n + 1)
    off = lat._end_off
    for i in range(1, lat.n + 1):
        lo, hi = off[i], off[i + 1]
        if lo == hi:
            continue
        cand = best[lat.start[lo:hi]] + lat.logw[lo:hi]
        j = int(np.argmax(cand))  # first maximum = earliest start, then smallest token
        if cand[j] > -np.inf:
            best[i], back[i] = cand[j], lo + j
    _check_complete(lat, best[lat.n])
    return _backtrace(lat, back, lat.n), float(best[lat.n])


def nbest(lat: Lattice, n: int) -> list[tuple[Path, float]]:
    """The ``n`` highest-``logw`` paths (all of them if fewer), best first, each with its summed
    ``logw``: k-best dynamic programming over the DAG (per node, the ``n`` best partial paths
    merged from its incoming arcs), ties broken as in the module docstring."""
    if n < 1:
        return []
    # per node: (scores desc, arc of the last step, rank of the prefix in the start node's list)
    lists: list = [None] * (lat.n + 1)
    lists[0] = (np.zeros(1), np.full(1, -1), np.zeros(1, dtype=np.int64))
    off = lat._end_off
    for i in range(1, lat.n + 1):
        parts = []
        for a in range(off[i], off[i + 1]):
            prev = lists[lat.start[a]]
            if prev is None:
                continue
            m = len(prev[0])
            parts.append((prev[0] + lat.logw[a], np.full(m, a), np.arange(m)))
        if not parts:
            continue
        sc, arc, rank = (np.concatenate(p) for p in zip(*parts))
        order = np.lexsort((rank, lat.token[arc], lat.start[arc], -sc))[:n]
        lists[i] = (sc[order], arc[order], rank[order])
    if lists[lat.n] is None:
        _check_complete(lat, -np.inf)
    out = []
    for r in range(len(lists[lat.n][0])):
        toks, node, rr = [], lat.n, r
        score = float(lists[lat.n][0][r])
        while node > 0:
            _, arcs, ranks = lists[node]
            a = int(arcs[rr])
            toks.append(int(lat.token[a]))
            node, rr = int(lat.start[a]), int(ranks[rr])
        out.append((tuple(reversed(toks)), score))
    return out


def count_paths(lat: Lattice) -> int:
    """The exact number of paths from node 0 to node n (a Python int: no overflow)."""
    counts = [0] * (lat.n + 1)
    counts[0] = 1
    for s, e in zip(lat.start.tolist(), lat.end.tolist()):  # sorted by end: counts[s] is final
        counts[e] += counts[s]
    return counts[lat.n]


def enumerate_paths(lat: Lattice, limit: int) -> list[Path] | None:
    """Every path (token tuples, in lexicographic order of (start, end, token) of their arcs),
    or ``None`` when there are more than ``limit``."""
    if count_paths(lat) > limit:
        return None
    beta = backward(lat)  # only arcs that can still reach n
    order, off = lat.by_start
    out: list[Path] = []

    def walk(node: int, prefix: tuple) -> None:
        if node == lat.n:
            out.append(prefix)
            return
        for a in order[off[node]:off[node + 1]]:
            if beta[lat.end[a]] > -np.inf:
                walk(int(lat.end[a]), prefix + (int(lat.token[a]),))

    if lat.n == 0 or beta[0] > -np.inf:
        walk(0, ())
    return out


def count_by_tokens(lat: Lattice, max_tokens: int) -> np.ndarray:
    """Exact path counts by token count: an object array ``C`` of shape
    ``(lat.n + 1, max_tokens + 1)`` of Python ints, ``C[i, t]`` the number of partial paths from
    node ``i`` to node ``n`` with exactly ``t`` tokens (``C[n, 0] = 1``). One backward pass over
    the arcs, ``O(arcs * max_tokens)`` additions: the DP over (position, tokens used)."""
    if max_tokens < 0:
        raise ValueError(f"max_tokens={max_tokens}: expected at least 0")
    counts = np.zeros((lat.n + 1, max_tokens + 1), dtype=object)
    counts[:, :] = 0
    counts[lat.n, 0] = 1
    order, off = lat.by_start
    for i in range(lat.n - 1, -1, -1):
        row = counts[i]
        for a in order[off[i]:off[i + 1]].tolist():
            row[1:] += counts[int(lat.end[a]), :-1]
    return counts


def count_paths_capped(lat: Lattice, max_tokens: int) -> int:
    """The exact number of paths with at most ``max_tokens`` tokens (a Python int)."""
    return int(sum(count_by_tokens(lat, max_tokens)[0].tolist()))


class CappedPaths:
    """The paths of ``lat`` with at most ``max_tokens`` tokens, numbered ``0 .. total - 1`` in
    the order of :func:`enumerate_paths` (lexicographic in (start, end, token) of their arcs):
    ``path(r)`` is the ``r``-th (unranking through :func:`count_by_tokens`, exact for any
    count)."""

    def __init__(self, lat: Lattice, max_tokens: int):
        self.lat, self.max_tokens = lat, int(max_tokens)
        # at_most[i, b]: partial paths i -> n with at most b tokens
        self._at_most = np.cumsum(count_by_tokens(lat, self.max_tokens), axis=1)
        self.total = int(self._at_most[0, self.max_tokens])

    def path(self, r: int) -> Path:
        """The ``r``-th path (``0 <= r < total``), as token ids."""
        if not 0 <= r < self.total:
            raise ValueError(f"path number {r} out of range: {self.total} paths with at most "
                             f"{self.max_tokens} tokens")
        lat, at_most = self.lat, self._at_most
        order, off = lat.by_start
        node, budget, toks = 0, self.max_tokens, []
        while node != lat.n:
            if budget == 0:  # unreachable for 0 <= r < total (at_most[node, 0] = 0 here)
                raise AssertionError("CappedPaths: no token left before the end")
            for a in order[off[node]:off[node + 1]].tolist():
                end = int(lat.end[a])
                c = at_most[end, budget - 1]
                if r < c:
                    toks.append(int(lat.token[a]))
                    node, budget = end, budget - 1
                    break
                r -= c
            else:  # unreachable for 0 <= r < total: the counts say a continuation exists
                raise AssertionError("CappedPaths: the counts and the arcs disagree")
        return tuple(toks)


def randbelow(rng: np.random.Generator, n: int) -> int:
    """A uniform integer in ``[0, n)`` for any Python int ``n >= 1`` (beyond int64: 64-bit words
    from ``rng``, masked to ``n``'s bit length, redrawn until below ``n``)."""
    if n < 1:
        raise ValueError(f"randbelow: n={n}, expected at least 1")
    if n <= 2 ** 62:
        return int(rng.integers(n))
    bits = n.bit_length()
    words = -(-bits // 64)
    while True:
        x = 0
        for w in rng.integers(0, 2 ** 64, size=words, dtype=np.uint64).tolist():
            x = (x << 64) | int(w)
        x &= (1 << bits) - 1
        if x < n:
            return x


def uniform_distinct(paths: CappedPaths, rng: np.random.Generator):
    """Yield the paths of ``paths`` in a uniformly random order (without replacement): a sparse
    Fisher-Yates shuffle of ``0 .. total - 1`` (one :func:`randbelow` per path, no rejection of
    repeats), each number unranked by ``paths.path``. The draws come one at a time from ``rng``'s
    stream, so the first m paths do not depend on how many more are taken."""
    total, moved = paths.total, {}
    for i in range(total):
        j = i + randbelow(rng, total - i)
        pick = moved.get(j, j)
        moved[j] = moved.pop(i, i)
        yield paths.path(pick)


def entropy(lat: Lattice, tau: float = 1.0) -> float:
    """Entropy of Q_tau over paths, in nats: H[i] = sum over arcs j -> i of p (H[j] - log p),
    p = exp(alpha[j] + logw/tau - alpha[i]) the probability that a path to i ends with that arc
    (Cao & Rimell 2021, Algorithm 1); returns H[n]."""
    alpha, logz = forward(lat, tau)
    _check_complete(lat, logz)
    w = lat.logw / tau
    h = np.zeros(lat.n + 1)
    off = lat._end_off
    for i in range(1, lat.n + 1):
        if alpha[i] == -np.inf:
            continue
        seg = slice(off[i], off[i + 1])
        j = lat.start[seg]
        logp = alpha[j] + w[seg] - alpha[i]
        ok = logp > -np.inf
        p = np.exp(logp[ok])
        h[i] = float(np.sum(p * (h[j[ok]] - logp[ok])))
    return float(h[lat.n])


def _global_cdf(lat: Lattice, alpha: np.ndarray, tau: float) -> np.ndarray:
    """For backward sampling: per arc, ``end + P(arc | path reaches end)`` cumulated over the arcs
    ending at the same node, the last one exactly ``end + 1``."""
    cdf = np.zeros(len(lat.start))
    off = lat._end_off
    w = lat.logw / tau
    for i in range(1, lat.n + 1):
        lo, hi = off[i], off[i + 1]
        if lo == hi or alpha[i] == -np.inf:
            cdf[lo:hi] = i  # never entered: the walk only visits reachable nodes
            continue
        c = np.cumsum(np.exp(alpha[lat.start[lo:hi]] + w[lo:hi] - alpha[i]))
        c = np.minimum(c / c[-1], 1.0)
        last = int(np.flatnonzero(c >= 1.0)[0])
        c[last:] = 1.0
        cdf[lo:hi] = i + c
    return cdf


def sample(lat: Lattice, k: int, rng: np.random.Generator,
           tau: float = 1.0) -> tuple[list[Path], np.ndarray]:
    """``k`` paths drawn independently (with replacement) from Q_tau by backward sampling:
    forward marginals, then from node n pick the last arc with probability
    ``exp(alpha[start] + logw/tau - alpha[n])``, and so on back to node 0. Returns the paths and
    their exact log Q_tau (nats)."""
    alpha, logz = forward(lat, tau)
    _check_complete(lat, logz)
    cdf = _global_cdf(lat, alpha, tau)
    pos = np.full(k, lat.n, dtype=np.int64)
    steps: list[list[int]] = [[] for _ in range(k)]
    active = np.flatnonzero(pos > 0)
    while active.size:
        u = rng.random(active.size)
        arcs = np.searchsorted(cdf, pos[active] + u, side="right")
        for s, a in zip(active.tolist(), arcs.tolist()):
            steps[s].append(a)
        pos[active] = lat.start[arcs]
        active = active[pos[active] > 0]
    paths = [tuple(int(lat.token[a]) for a in reversed(st)) for st in steps]
    logq = np.array([lat.logw[st].sum() / tau - logz if st else -logz for st in steps])
    return paths, logq


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - exp(x)) for x <= 0, accurate at both ends."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(x > -0.6931471805599453, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _stochastic_beam(lat: Lattice, beam: int, rng: np.random.Generator, tau: float):
    """Stochastic beam search (Kool et al. 2019) over suffixes built from node n back to node 0,
    with the forward marginals making the lattice locally normalised. Returns the ``beam`` paths
    of largest Gumbel-perturbed log Q_tau as ``(arc lists, logq, perturbed)``, perturbed
    descending: their joint law is that of the top ``beam`` of ``log Q(T) + Gumbel`` over all
    paths."""
    alpha, logz = forward(lat, tau)
    _check_complete(lat, logz)
    w = lat.logw / tau
    off = lat._end_off
    pos = np.array([lat.n])
    suff = np.zeros(1)  # summed logw/tau of the suffix
    pert = np.array([rng.gumbel()])  # the root's event (all paths) has log-probability 0
    hid = np.array([-1])  # the item's last arc in the history (-1: the root)
    h_arc, h_parent, n_hist = [], [], 0
    start_ok = alpha[lat.start] > -np.inf
    while True:
        i = int(pos.max())
        if i == 0:
            break
        here = pos == i
        seg = np.arange(off[i], off[i + 1])[start_ok[off[i]:off[i + 1]]]
        m, c = int(np.count_nonzero(here)), len(seg)
        s_here, p_here = suff[here, None], pert[here, None]
        g = (s_here + (w[seg] + alpha[lat.start[seg]] - logz)) + rng.gumbel(size=(m, c))
        # condition the children's maximum on the parent's perturbed value (Kool et al., eq. 23)
        with np.errstate(divide="ignore"):
            v = p_here - g + np.log(-np.expm1(g - g.max(axis=1, keepdims=True)))
        child = p_here - np.maximum(v, 0.0) - np.log1p(np.exp(-np.abs(v)))
        h_arc.append(np.broadcast_to(seg, (m, c)).ravel())
        h_parent.append(np.broadcast_to(hid[here, None], (m, c)).ravel())
        keep = ~here
        pos = np.concatenate([pos[keep], np.broadcast_to(lat.start[seg], (m, c)).ravel()])
        suff = np.concatenate([suff[keep], (s_here + w[seg]).ravel()])
        pert = np.concatenate([pert[keep], child.ravel()])
        hid = np.concatenate([hid[keep], np.arange(n_hist, n_hist + m * c)])
        n_hist += m * c
        if len(pert) > beam:
            top_b = np.argpartition(-pert, beam - 1)[:beam]
            pos, suff, pert, hid = pos[top_b], suff[top_b], pert[top_b], hid[top_b]
    order = np.argsort(-pert, kind="stable")
    arc_of = np.concatenate(h_arc) if h_arc else np.zeros(0, dtype=np.int64)
    parent_of = np.concatenate(h_parent) if h_parent else np.zeros(0, dtype=np.int64)
    arcs = []
    for h in hid[order].tolist():
        path = []
        while h >= 0:
            path.append(int(arc_of[h]))
            h = int(parent_of[h])
        arcs.append(path)
    return arcs, suff[order] - logz, pert[order]


def sample_wor(lat: Lattice, k: int, rng: np.random.Generator, tau: float = 1.0,
               include_best: bool = False) -> tuple[list[Path], np.ndarray, np.ndarray]:
    """``k`` distinct paths drawn without replacement from Q_tau (Gumbel-top-k by stochastic beam
    search), with their log Q_tau and log inclusion probabilities (nats).

    Plain: the top ``k`` of ``log Q(T) + G_T`` and ``kappa`` the ``(k+1)``-th largest perturbed
    value; ``log q_incl(T) = log(1 - exp(-exp(log Q(T) - kappa)))``, so that
    ``sum_T f(T) / q_incl(T)`` over the sample is unbiased for ``sum_T f(T)``.

    ``include_best``: the Viterbi path T* comes first with inclusion 1 (log 0.0), then ``k - 1``
    paths drawn without replacement from Q* = Q restricted to T != T* and renormalised: the top
    ``k - 1`` of the perturbed values of the paths other than T*, ``kappa*`` the ``k``-th largest of
    those, ``log q_incl(T) = log(1 - exp(-exp(log Q(T) - kappa*)))`` (log Q* - kappa* on the Q*
    scale: the renormalisation constant cancels). Then ``f(T*) + sum f(T)/q_incl(T)`` is unbiased
    for ``sum_T f(T)``. (Cao & Rimell's scheme: ``k + 1`` draws, drop T* or else the last.)

    When the lattice has at most ``k`` paths, all of them are returned with inclusion 1. Order:
    (T* first, then) by perturbed value, descending."""
    if k < 1:
        return [], np.zeros(0), np.zeros(0)
    arcs, logq, pert = _stochastic_beam(lat, k + 1, rng, tau)
    paths = [tuple(int(lat.token[a]) for a in p) for p in arcs]
    if include_best:
        best, _ = viterbi(lat)
        rest = [j for j, p in enumerate(paths) if p != best]
        first = [paths.index(best)] if best in paths else []
        if len(paths) <= k:
            return _pick(paths, logq, first + rest, np.zeros(len(paths)))
        kappa = pert[rest[k - 1]]
        chosen = rest[:k - 1]
        incl = _log1mexp(-np.exp(logq[chosen] - kappa))
        best_logq = path_logq(lat, best, tau)
        return ([best] + [paths[j] for j in chosen], np.concatenate([[best_logq], logq[chosen]]),
                np.concatenate([[0.0], incl]))
    if len(paths) <= k:
        return _pick(paths, logq, list(range(len(paths))), np.zeros(len(paths)))
    kappa = pert[k]
    return paths[:k], logq[:k], _log1mexp(-np.exp(logq[:k] - kappa))


def _pick(paths, logq, idx, incl):
    return [paths[j] for j in idx], logq[idx], incl
