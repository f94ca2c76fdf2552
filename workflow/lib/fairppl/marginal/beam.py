"""A deterministic lower bound on the marginal likelihood over tokenizations, by beam search (in
the spirit of Vieira et al. 2024, "From language models over tokens to language models over
characters").

Partial tokenizations are indexed by the byte position of ``vocab.text_bytes(text)`` they have
spelled. Positions are processed left to right; at each position the ``beam`` partial paths
with the highest LM log-probability (ties: the smaller token tuple) are extended by every token
that matches there and lies on a complete path, all of them scored in one
``lm.logp_next_many`` request. Pruning is **per position** (every position keeps its own
``beam`` best), so short and long tokens compete only with paths that have spelled the same
bytes. Every partial path reaching the end is kept, scored with the end token (if
``lm.end_id`` is set), and the probabilities of these DISTINCT complete tokenizations are
summed: a lower bound on the marginal, equal to it once the beam holds every partial path.

A larger beam finds at least as many paths in practice, but per-position pruning does not
nest (a wider beam can let better paths push out ones a narrower beam kept), so the bound is
not guaranteed to grow with ``beam``; the tests check it on real strings. Log-probabilities
in nats (float64).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.special import logsumexp

from .exact import arcs_by_start
from .vocab import TokenVocab


@dataclass(frozen=True)
class BeamResult:
    """``logp_lower``: log of the summed probability of the distinct complete tokenizations
    found (nats), a lower bound on log P(text); ``n_complete``: how many; ``beam``: the width
    per byte position; ``logp_default``: log P of the given default tokenization when the
    search found it (None otherwise); ``n_expanded``: partial paths extended (LM prefixes
    scored)."""

    logp_lower: float
    n_complete: int
    beam: int
    logp_default: float | None = None
    n_expanded: int = 0


def beam_marginal(lm, vocab: TokenVocab, text: str, beam: int = 8,
                  default: Sequence[int] | None = None,
                  force_default: bool = False) -> BeamResult:
    """Lower bound on log P(text) (nats) from the distinct complete tokenizations a
    per-position beam search finds (module docstring). ``default``: a tokenization whose log P
    to report if found; ``force_default``: keep its prefixes in the beam at every position
    beyond the ``beam`` best, so that the bound always includes it."""
    if beam < 1:
        raise ValueError(f"beam={beam}: expected at least 1")
    data = vocab.text_bytes(text)
    lat = vocab.lattice(data)
    arcs = arcs_by_start(lat)
    default_key = None if default is None else tuple(int(t) for t in default)
    if default_key is not None and vocab.decode(default_key) != data:
        raise ValueError(f"default tokenization {default_key[:20]} does not spell {data[:40]!r}")
    forced = set()
    if force_default and default_key is not None:
        forced = {default_key[:k] for k in range(len(default_key) + 1)}
    hyps: list[dict[tuple[int, ...], float]] = [{} for _ in range(lat.n + 1)]
    hyps[0][()] = 0.0
    expanded = 0
    for pos in range(lat.n):
        here = hyps[pos]
        if not here:
            continue
        ranked = sorted(here.items(), key=lambda kv: (-kv[1], kv[0]))
        keep = ranked[:beam] + [kv for kv in ranked[beam:] if kv[0] in forced]
        expanded += len(keep)
        conts = [(t,) for t, _ in arcs[pos]]
        scored = lm.logp_next_many([p for p, _ in keep], [conts] * len(keep))
        for (prefix, lp), values in zip(keep, scored):
            for (tok, end), v in zip(arcs[pos], values):
                hyps[end][prefix + (tok,)] = lp + float(v)
        hyps[pos] = {}
    complete = hyps[lat.n]
    paths = list(complete)
    totals = np.array([complete[p] for p in paths], dtype=np.float64)
    if lm.end_id is not None and paths:
        ends = lm.logp_next_many(paths, [[(lm.end_id,)]] * len(paths))
        totals = totals + np.array([e[0] for e in ends], dtype=np.float64)
        expanded += len(paths)
    logp_default = None
    if default_key is not None and default_key in complete:
        logp_default = float(totals[paths.index(default_key)])
    return BeamResult(float(logsumexp(totals)) if paths else -np.inf, len(paths), beam,
                      logp_default, expanded)
