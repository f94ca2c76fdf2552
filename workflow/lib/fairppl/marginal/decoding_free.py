"""Decoding-free proposals for the marginal likelihood over tokenizations (in the spirit of Pohl,
Cognetta et al. 2025): tokenizations drawn from the vocabulary lattice of the text with no LM in
the loop, then all scored by the LM in batched passes.

The lattice (``vocab.lattice(vocab.text_bytes(text), logw)``) holds every tokenization of the
text's bytes. Two proposals over its paths:

* ``"uniform"``: ``logw = 0``, every tokenization equally likely, ``Q(T) = 1 / N`` with N the
  number of paths;
* ``"fewer_tokens"``: ``logw = -lam`` per token, ``Q(T) proportional to exp(-lam * |T|)``; as
  ``lam`` grows it concentrates on the tokenizations with the fewest tokens, at ``lam = 0`` it is
  the uniform one.

``log Q(T)`` is exact (the lattice's forward pass), so the importance weights ``P(T) / Q(T)``
are exact and their mean is an unbiased estimate of the **full** marginal (every tokenization has
``Q > 0``, unlike the LM-guided block proposal). With replacement (default) the estimate is
``log mean(w)`` with a 90% BCa interval; without replacement (``wor=True``, Gumbel-top-k over the
lattice) it is the Horvitz-Thompson sum ``sum P(T) / q_incl(T)`` over K distinct paths, which has
no bootstrap interval here (``ci_low``/``ci_high`` are NaN).

Long texts: the number of paths grows exponentially with the length while the LM's probability
mass sits on very few of them (around the default tokenization). The uniform proposal then almost
rarely draws those: the weights ``N * P(T)`` span many nats, the effective sample size (``ess``)
falls towards 1, the variance of the estimate explodes, and with a practical K the log estimate
tends to fall below the marginal with a bootstrap interval that does not show it. ``fewer_tokens`` with a large ``lam`` tracks the default much better, but the LM's
posterior is not a function of the token count alone, so it also degrades with length; the
LM-guided proposal (:mod:`.lm_guided`) spends LM work to stay close to the posterior.

All log-probabilities are natural logs (**nats**), float64.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from . import lattice as lat_mod
from .estimate import bca_interval, effective_sample_size, log_mean_exp, wor_estimate

PROPOSALS = ("uniform", "fewer_tokens")


@dataclass
class DecodingFreeResult:
    """One text's estimate (field names as :class:`fairppl.marginal.lm_guided.Result` where they
    mean the same). ``logp_default``: log P(default tokenization [+ end]) (NaN without
    ``default_ids``); ``logp``: the marginal estimate; ``ci_low``/``ci_high``: its 90% BCa interval
    (NaN without replacement); ``log_weights``: per sample ``log P(T) - log Q(T)`` (with
    replacement) or ``log P(T) - log q_incl(T)`` (without); all nats. ``percent_nd``: percentage
    of samples that are not the default tokenization (NaN without ``default_ids``); ``n_paths``:
    the number of tokenizations of the text (exact); ``distinct``: distinct sampled paths; ``ess``:
    Kish's effective sample size of the weights; ``lm_calls``/``positions``: the LM's work for this
    text; ``seconds``: wall time; ``samples``: the sampled token sequences when asked for."""

    proposal: str
    lam: float
    wor: bool
    logp_default: float
    logp: float
    ci_low: float
    ci_high: float
    log_weights: np.ndarray
    percent_nd: float
    n_paths: int
    distinct: int
    ess: float
    lm_calls: int
    positions: int
    seconds: float
    samples: list[tuple[int, ...]] | None = field(default=None, repr=False)


def proposal_lattice(vocab, text: str, proposal: str = "fewer_tokens", lam: float = 1.0):
    """The lattice of ``text``'s tokenizations with the arc log-weights of ``proposal`` (module
    docstring); ``lam``: nats charged per token by ``"fewer_tokens"``."""
    if proposal not in PROPOSALS:
        raise ValueError(f"proposal must be one of {PROPOSALS}, got {proposal!r}")
    if proposal == "fewer_tokens" and not (math.isfinite(lam) and lam >= 0):
        raise ValueError(f"lam (nats per token) must be finite and >= 0, got {lam}")
    data = vocab.text_bytes(text)
    if proposal == "uniform":
        return vocab.lattice(data)
    return vocab.lattice(data, lambda _token: -float(lam))


def decoding_free_marginal(lm, vocab, text: str, *, K: int, proposal: str = "fewer_tokens",
                           lam: float = 1.0, wor: bool = False, rng: np.random.Generator,
                           default_ids: Sequence[int] | None = None,
                           return_samples: bool = False) -> DecodingFreeResult:
    """Estimate log P(text) (nats) from K tokenizations drawn from a decoding-free proposal
    (module docstring) and scored by ``lm`` (a TokenLM; its ``logp`` charges the end token when
    the LM has one) in batched passes, equal paths scored once. ``vocab``: the LM's TokenVocab;
    ``lam``: nats per token for ``"fewer_tokens"``; ``wor``: K distinct paths without
    replacement; ``default_ids``: the tokenizer's ids for the text, for ``logp_default`` and
    ``percent_nd``."""
    if K < 1:
        raise ValueError(f"the number of samples K must be at least 1, got {K}")
    t0 = time.perf_counter()
    calls0, pos0 = lm.calls, lm.positions
    lat = proposal_lattice(vocab, text, proposal, lam)
    if wor:
        paths, _logq, log_incl = lat_mod.sample_wor(lat, K, rng)
        logp = np.asarray(lm.logp(paths), dtype=np.float64)
        log_w = logp - np.minimum(log_incl, 0.0)
        estimate, low, high = wor_estimate(logp, log_incl), math.nan, math.nan
    else:
        paths, logq = lat_mod.sample(lat, K, rng)
        logp = np.asarray(lm.logp(paths), dtype=np.float64)
        log_w = logp - logq
        estimate = log_mean_exp(log_w)
        low, high = bca_interval(log_w, 0.9, rng)
    if default_ids is None:
        logp_default = nd = math.nan
    else:
        default = tuple(int(t) for t in default_ids)
        logp_default = float(lm.logp([default])[0])
        nd = 100.0 * sum(p != default for p in paths) / len(paths)
    return DecodingFreeResult(
        proposal=proposal, lam=float(lam) if proposal == "fewer_tokens" else 0.0, wor=wor,
        logp_default=logp_default, logp=estimate, ci_low=low, ci_high=high, log_weights=log_w,
        percent_nd=nd, n_paths=lat_mod.count_paths(lat), distinct=len(set(paths)),
        ess=effective_sample_size(log_w), lm_calls=lm.calls - calls0,
        positions=lm.positions - pos0, seconds=time.perf_counter() - t0,
        samples=list(paths) if return_samples else None)
