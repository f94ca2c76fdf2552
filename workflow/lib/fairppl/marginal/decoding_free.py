"""Decoding-free marginal likelihood as published by Pohl, Cognetta et al. 2025 ("Decoding-Free
Sampling Strategies for LLM Marginalization", arXiv 2510.20208): a set of *distinct*
tokenizations chosen with no LM in the loop, all scored by the LM in batched teacher-forced
passes, and the estimate ``log sum P(T)`` over that set: a **lower bound** on the marginal.

The candidates, in this order (each path once):

1. the canonical tokenization (the tokenizer's own ids, ``default_ids``), always;
2. the **off-by-one** candidates: the canonical one with one of its tokens split into two
   vocabulary tokens that spell the same bytes, every such split the vocabulary allows (every
   token, every inner byte offset, every pair of token ids spelling the two halves), in order
   of the canonical token, then the split offset, then the ids; always all of them;
3. **uniform draws without replacement** until ``K`` distinct paths are reached: tokenizations
   of the text's bytes (the lattice of :meth:`~.vocab.TokenVocab.lattice`, every tokenization)
   with at most ``cap = len(canonical) + slack`` tokens, in a uniformly random order (a sparse
   Fisher-Yates shuffle of the path numbers ``0 .. N_cap - 1``, each unranked through the exact
   count of paths by (position, tokens used), :class:`~.lattice.CappedPaths`); a draw equal to
   an earlier candidate is skipped, so the fill is a uniform draw without replacement from the
   capped paths that are not already in. ``slack=None``: no cap (every tokenization).

The cap. Every extra token is one more prediction the LM must make, and in practice costs it
several nats, while the number of tokenizations grows combinatorially with the token count: an
uncapped uniform draw over the lattice of a verse is almost surely a near byte-by-byte path
worth nothing next to the canonical one, which is why the old uncapped importance samplers sat
*below* the canonical probability on most long prefixes. The cap keeps the draws among the
tokenizations no longer than the canonical one plus ``slack`` tokens (default
:data:`DEFAULT_SLACK` = 2). Measured on the study's length sweep (subword n-gram, 6 languages,
10 units, K = 32, against the exact marginal), pooled RMSE at 1 / 2 / 4 words: slack 0
0.0043 / 0.042 / 0.0088 nats, slack 1 0.00054 / 0.042 / 0.0080, slack 2 0.0000050 / 0.00045 /
0.0075, slack 3 0.0043 / 0.00057 / 0.0099 (a wider cap spreads the K draws over more paths
that matter less); from 8 words on the canonical and off-by-one candidates fill most or all
of K and the cap barely matters (0.0409 to 0.0411 nats at 8 words for every slack, the same
from 16 words on). The off-by-one candidates are kept even when ``slack=0``.

Budget and nesting. ``K`` is the number of distinct tokenizations scored; the canonical and
off-by-one candidates are always all scored, even past ``K`` (then no draw is made); fewer
than ``K`` when they and the capped paths together are fewer (then every one is scored: the
estimate is the exact sum over them, and the exact marginal when the cap admits every path).
The draws come one at a time from ``rng``, so with the same seed the paths for budget ``K``
are the first paths of those for ``K + 1``: the estimate only grows with ``K``.

What the estimate is. ``logp = log sum_{T in S} P(T)`` over the distinct set S: never below
the canonical's log P (it is in S), never above the exact marginal (S is a subset of all
tokenizations); deterministic given the draw. It is **not** an unbiased estimate and has no
sampling interval: ``ci_low``/``ci_high`` are NaN and ``bound`` is ``"lower"``.

All log-probabilities are natural logs (**nats**), float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from scipy.special import logsumexp

from ..tokenlm.batch import Logp
from . import lattice as lat_mod

#: Tokens allowed beyond the canonical tokenization's count in the uniform draws (module
#: docstring, "The cap").
DEFAULT_SLACK = 2


@dataclass
class DecodingFreeResult:
    """One text's lower bound (field names as :class:`fairppl.marginal.lm_guided.Result` where
    they mean the same). ``logp_default``: log P(canonical tokenization [+ end]); ``logp``: log
    of the summed P over the distinct scored paths (a lower bound on the marginal); ``ci_low``/
    ``ci_high``: NaN (a bound has no sampling interval); ``bound``: ``"lower"``; ``log_probs``:
    log P(T) per scored path, in candidate order (canonical first); all nats. ``n_near``: the
    canonical plus the off-by-one candidates; ``n_drawn``: uniform draws kept (distinct, not
    near); ``distinct``: paths scored (``n_near + n_drawn``); ``slack``/``cap``: the uniform
    draws' token cap (``cap = len(canonical) + slack``; both None without a cap);
    ``n_capped``: tokenizations with at most ``cap`` tokens (exact); ``n_paths``: every
    tokenization of the text (exact); ``percent_nd``: percentage of the scored paths that are not
    the canonical one; ``lm_calls``/``positions``: the LM's work for this text; ``seconds``:
    wall time; ``samples``: the scored paths in order when asked for."""

    logp_default: float
    logp: float
    ci_low: float
    ci_high: float
    log_probs: np.ndarray
    n_near: int
    n_drawn: int
    distinct: int
    slack: int | None
    cap: int | None
    n_capped: int
    n_paths: int
    percent_nd: float
    lm_calls: int
    positions: int
    seconds: float
    bound: str = "lower"
    samples: list[tuple[int, ...]] | None = field(default=None, repr=False)


def off_by_one(lat: lat_mod.Lattice, canonical: Sequence[int]) -> list[tuple[int, ...]]:
    """Every tokenization that is ``canonical`` with exactly one token replaced by two tokens
    spelling its bytes (both arcs of ``lat``): in order of the token, then the split offset,
    then the two ids. ``ValueError`` if ``canonical`` is not a path of ``lat``."""
    canonical = tuple(int(t) for t in canonical)
    arcs = lat_mod.path_arcs(lat, canonical)
    order, off = lat.by_start
    out = []
    for k, arc in enumerate(arcs):
        s, e = int(lat.start[arc]), int(lat.end[arc])
        for first in order[off[s]:off[s + 1]].tolist():  # by end (split offset), then token
            mid = int(lat.end[first])
            if mid >= e:
                continue
            for second in order[off[mid]:off[mid + 1]].tolist():
                if int(lat.end[second]) == e:
                    out.append(canonical[:k] + (int(lat.token[first]), int(lat.token[second]))
                               + canonical[k + 1:])
    return out


def candidates(lat: lat_mod.Lattice, canonical: Sequence[int], K: int,
               rng: np.random.Generator, slack: int | None = DEFAULT_SLACK):
    """The distinct candidate paths (module docstring) and ``(n_near, capped)``: ``capped`` is
    the :class:`~.lattice.CappedPaths` of the uniform draws."""
    canonical = tuple(int(t) for t in canonical)
    near = [canonical] + off_by_one(lat, canonical)
    paths = list(dict.fromkeys(near))  # distinct already; kept defensive and ordered
    seen = set(paths)
    cap = lat.n if slack is None else len(canonical) + int(slack)
    capped = lat_mod.CappedPaths(lat, cap)
    if len(paths) < K:
        for path in lat_mod.uniform_distinct(capped, rng):
            if path in seen:
                continue
            seen.add(path)
            paths.append(path)
            if len(paths) == K:
                break
    return paths, len(near), capped


def decoding_free_marginal(lm, vocab, text: str, *, K: int, default_ids: Sequence[int],
                           rng: np.random.Generator, slack: int | None = DEFAULT_SLACK,
                           return_samples: bool = False) -> DecodingFreeResult:
    """The lower bound of Pohl, Cognetta et al. 2025 on log P(text) (nats; module docstring):
    the canonical tokenization ``default_ids``, its off-by-one splits and uniform draws without
    replacement under the token cap, up to ``K`` distinct paths, scored by ``lm`` (a TokenLM; its
    ``logp`` charges the end token when the LM has one) in one batched call. ``vocab``: the LM's
    TokenVocab; ``slack``: tokens allowed beyond the canonical count (None: no cap)."""
    from ..tokenlm.batch import Meter, run_alone

    return run_alone(decoding_free_steps(lm, vocab, text, K=K, default_ids=default_ids, rng=rng,
                                         slack=slack, return_samples=return_samples,
                                         meter=Meter(lm)), lm)


def decoding_free_steps(lm, vocab, text: str, *, K: int, default_ids: Sequence[int],
                        rng: np.random.Generator, slack: int | None = DEFAULT_SLACK,
                        return_samples: bool = False, meter=None):
    """:func:`decoding_free_marginal` as a generator of LM requests (:mod:`fairppl.tokenlm.batch`):
    its one :class:`~fairppl.tokenlm.batch.Logp` ``(paths)`` request, then the result. ``meter``:
    the unit's work (default: the LM's counters and the clock)."""
    from ..tokenlm.batch import Meter

    if K < 1:
        raise ValueError(f"the number of paths K must be at least 1, got {K}")
    if slack is not None and (int(slack) != slack or slack < 0):
        raise ValueError(f"slack (tokens beyond the canonical count) must be an integer >= 0 "
                         f"or None, got {slack!r}")
    if default_ids is None or len(default_ids) == 0:
        raise ValueError("decoding-free needs the canonical tokenization (default_ids)")
    meter = Meter(lm) if meter is None else meter
    mark = meter.start()
    lat = vocab.lattice(vocab.text_bytes(text))
    canonical = tuple(int(t) for t in default_ids)
    try:
        paths, n_near, capped = candidates(lat, canonical, K, rng, slack)
    except ValueError as err:
        raise ValueError(f"the canonical tokenization does not spell the text's bytes: {err}") \
            from None
    logp = np.asarray((yield Logp(list(paths))), dtype=np.float64)
    nd = sum(p != canonical for p in paths)
    calls, positions, seconds = meter.since(mark)
    return DecodingFreeResult(
        logp_default=float(logp[0]), logp=float(logsumexp(logp)), ci_low=math.nan,
        ci_high=math.nan, log_probs=logp, n_near=n_near, n_drawn=len(paths) - n_near,
        distinct=len(paths), slack=None if slack is None else int(slack),
        cap=None if slack is None else capped.max_tokens, n_capped=capped.total,
        n_paths=lat_mod.count_paths(lat), percent_nd=100.0 * nd / len(paths),
        lm_calls=calls, positions=positions, seconds=seconds,
        samples=list(paths) if return_samples else None)
