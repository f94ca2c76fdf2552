"""One entry point over every marginal-likelihood estimator: :func:`estimate` runs one estimator
on one text and returns one flat record (a dict of plain values, one JSON line of the CLI).

Estimators (``ESTIMATORS``):

* ``default``: log P of the tokenizer's own tokenization (a lower bound on the marginal).
* ``exact``: the marginal itself, summed over every tokenization of the text's bytes
  (:mod:`.exact`): enumeration under a transformers LM (short texts; ``max_paths``), the
  n-gram forward algorithm at full length for a :class:`~fairppl.tokenlm.lm_kenlm.KenLMTokenLM`.
* ``beam``: the deterministic lower bound of :mod:`.beam` (``beam`` partial paths per byte
  position, the default tokenization kept in the beam).
* ``lm-guided``: Chirkova et al.'s block proposal (:mod:`.lm_guided`; ``K``, ``L``, ``M``).
* ``decoding-free``: Pohl, Cognetta et al. 2025's lower bound (:mod:`.decoding_free`): log of
  the summed P over the canonical tokenization, its off-by-one splits and uniform draws without
  replacement among the tokenizations of at most the canonical count plus ``slack`` tokens, up
  to ``K`` distinct paths.
* unigram tokenizers only (Cao & Rimell; proposal Q_tau from the SentencePiece unigram lattice,
  :mod:`.unigram`, in ``mode`` independent or consistent; all samples scored by one batched
  ``lm.logp``): ``wr`` (K samples with replacement, importance sampling), ``wor`` (K distinct
  paths, Horvitz-Thompson), ``wor-1best`` (the same with the Viterbi path forced in), ``nbest``
  (sum of P over the K best paths by unigram score: a lower bound). When the lattice has at
  most K paths, every one is scored instead and ``enumerated`` is true: the sum is then exact
  over the lattice's support (which omits byte-fallback spellings of characters that have a
  piece of their own, so it can sit below ``exact``).

Units and conventions: every log-probability is in **nats**, of the text given the start token
(``start_token``), the end token included iff ``end_scored`` (``lm.end_id`` set). The importance
samplers with replacement (``wr``, ``lm-guided``) keep their
K log-weights (``log_weights``, log P(T) - log Q(T), nats) and get a 90% Monte Carlo interval
(``ci_low`` / ``ci_high``, :func:`~.estimate.mc_interval` on the one unit: bootstrap-t over the
K weights, Jensen-corrected; a unit whose K weights are all equal, e.g. every sample the
default, gets the bound from its default log P to the estimate, never a zero-width interval;
K = 1 gets none, and ``ci_note`` says why). ``ci_low`` / ``ci_high`` equal ``logp`` where the
value is exact (``exact``, an enumerated unigram lattice) and are None otherwise (``default``,
``beam``, ``nbest``, ``decoding-free``: lower bounds; ``wor``, ``wor-1best``: Horvitz-Thompson
without a variance estimate). ``lower_bound`` is true where ``logp`` can only sit below the
marginal (default, beam, decoding-free, nbest, the consistent mode). Counts: ``n_tokens`` (default tokens, no
end token), ``n_chars`` (Unicode code points), ``n_bytes`` (UTF-8), ``n_words`` (whitespace-
separated); ``lm_calls``/``positions`` are the LM's forward calls and token positions for this
record (the default score included; in :func:`estimate_many`, the record's share of the calls
its unit shared with others, :mod:`fairppl.tokenlm.batch`); ``entropy`` is the unigram
lattice's entropy at ``tau`` (nats) and ``entropy_per_token`` that over ``n_tokens``; ``seconds``
is wall time. Every record has the same keys (``FIELDS``); a field an estimator does not produce
is None.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy.special import logsumexp

from ..core.errors import InputError
from ..tokenlm.batch import Logp
from .decoding_free import DEFAULT_SLACK
from .defaults import DEFAULT_K, DEFAULT_L, DEFAULT_M

ESTIMATORS = ("default", "exact", "beam", "lm-guided", "decoding-free", "wr", "wor",
              "wor-1best", "nbest")
UNIGRAM_ONLY = ("wr", "wor", "wor-1best", "nbest")
#: Estimators whose LM work :func:`estimate_many` shares across units (the others call the LM
#: themselves, one unit at a time).
BATCHED = ("default", "lm-guided", "decoding-free")

FIELDS = ("text", "estimator", "logp_default", "logp", "ci_low", "ci_high", "lower_bound",
          "n_samples", "seconds", "start_token", "end_scored", "n_tokenizations", "enumerated",
          "percent_nd", "t0", "t1", "t2", "n_blocks", "n_distinct", "ess", "lm_calls",
          "positions", "entropy", "entropy_per_token", "n_tokens", "n_chars", "n_bytes",
          "n_words", "K", "L", "M", "tau", "mode", "beam", "slack", "log_weights", "ci_note")

#: Central coverage of a record's Monte Carlo interval (ci_low, ci_high).
UNIT_CI_LEVEL = 0.9


def check_estimator(estimator: str, unigram_model=None) -> None:
    """InputError unless ``estimator`` is one of ``ESTIMATORS`` (and, for the unigram-only ones,
    a unigram model is given)."""
    if estimator not in ESTIMATORS:
        raise InputError(f"unknown estimator {estimator!r}: expected one of "
                         f"{', '.join(ESTIMATORS)}")
    if estimator in UNIGRAM_ONLY and unigram_model is None:
        raise InputError(f"estimator {estimator!r} samples from a SentencePiece unigram lattice: "
                         f"give the unigram model (--unigram-model FILE.model); without one use "
                         f"{', '.join(e for e in ESTIMATORS if e not in UNIGRAM_ONLY)}")


def check_unigram_ids(unigram_model, vocab) -> None:
    """InputError unless every normal and byte piece of ``unigram_model`` is the LM token of the
    same id spelling the same bytes (the LM must be over that model's pieces)."""
    from ..tokenizers.spm_model import BYTE, NORMAL, USER_DEFINED

    if len(unigram_model.pieces) > len(vocab.token_bytes):
        raise InputError(f"the unigram model has {len(unigram_model.pieces)} pieces but the LM's "
                         f"vocabulary {len(vocab.token_bytes)}: expected an LM over its pieces",
                         path=unigram_model.source)
    for i, (piece, kind) in enumerate(zip(unigram_model.pieces, unigram_model.types.tolist())):
        if kind == BYTE:
            want = bytes([int(piece[3:5], 16)])
        elif kind in (NORMAL, USER_DEFINED):
            want = piece.replace("\u2581", " ").encode("utf-8")
        else:
            continue
        if vocab.token_bytes[i] != want:
            raise InputError(f"piece {i} {piece!r} spells {want!r} but the LM's token {i} spells "
                             f"{vocab.token_bytes[i]!r}: expected an LM over this unigram "
                             f"model's pieces (same ids)", path=unigram_model.source)


def text_counts(text: str) -> dict:
    """``n_chars`` (code points), ``n_bytes`` (UTF-8) and ``n_words`` (whitespace-separated)."""
    return {"n_chars": len(text), "n_bytes": len(text.encode("utf-8")),
            "n_words": len(text.split())}


def _finite(x):
    """A plain float, None for NaN (JSON has no NaN)."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def _count(n: int):
    """A path count as a JSON-safe number: an int up to 2**63 - 1, a float above."""
    return int(n) if n < 2 ** 63 else float(n)


def estimate(lm, vocab, text: str, estimator: str, *, rng: np.random.Generator,
             default_ids: Sequence[int] | None = None, K: int = DEFAULT_K,
             L: int | None = DEFAULT_L, M: int = DEFAULT_M, tau: float = 1.0, unigram_model=None,
             mode: str = "independent",
             beam: int = 8, slack: int | None = DEFAULT_SLACK, max_paths: int = 20_000,
             start_token: str | None = None,
             blocks_out: list | None = None) -> dict:
    """Run ``estimator`` (module docstring) on ``text`` and return its record (``FIELDS``).
    :func:`estimate_steps` with the same arguments, its LM requests answered one by one
    (:func:`fairppl.tokenlm.batch.run_alone`); :func:`estimate_many` runs many texts together.

    ``lm``: a :class:`~fairppl.tokenlm.interface.TokenLM`; ``vocab``: its
    :class:`~.vocab.TokenVocab`; ``default_ids``: the tokenizer's token ids for ``text`` (None: the
    unigram model's Viterbi path, which is SentencePiece's encoding); ``rng``: all randomness;
    ``K``: samples (or paths); ``L``: block length in characters for lm-guided (None: the longest
    default token); ``M``: candidates per block; ``tau``: unigram temperature; ``mode``:
    ``"independent"`` or ``"consistent"`` (unigram estimators); ``beam``: width per byte position;
    ``slack``: for decoding-free, the tokens its uniform draws may have beyond the canonical count
    (None: no cap); ``max_paths``: enumeration limit of ``exact`` under a transformers LM;
    ``start_token``: the start token's name for the record. ``blocks_out``: for ``lm-guided``, a
    list that gets the proposal's per-block Q(default) records
    (:func:`~.lm_guided.lm_guided_marginal`); ignored by the other estimators. Raises InputError
    for a bad estimator name, option or text, ValueError from the estimators (e.g. too many
    tokenizations to enumerate)."""
    from ..tokenlm.batch import Meter, run_alone

    return run_alone(estimate_steps(
        lm, vocab, text, estimator, rng=rng, default_ids=default_ids, K=K, L=L, M=M, tau=tau,
        unigram_model=unigram_model, mode=mode, beam=beam, slack=slack, max_paths=max_paths,
        start_token=start_token, blocks_out=blocks_out, meter=Meter(lm)), lm)


def estimate_many(lm, vocab, jobs: Sequence[dict], *,
                  pass_tokens: int | None = None, lanes: int = 1):
    """Yield ``(index, record)`` for every job of ``jobs`` in order: each job is the keyword
    arguments of :func:`estimate` after ``lm`` and ``vocab`` (``text``, ``estimator``, ``rng``,
    ...). The lm-guided and decoding-free runs of units in flight share their LM calls
    (:func:`fairppl.tokenlm.batch.run_many`, ``pass_tokens`` new positions per forward pass,
    default :data:`fairppl.tokenlm.batch.PASS_TOKENS`), and so do the default scores of every run;
    the other estimators (``BATCHED`` lacks them) call the LM themselves within their step. Every
    record is :func:`estimate`'s for the same job (the same samples and log-weights; the LM's
    rounding aside) except ``lm_calls``, ``positions`` and ``seconds``: the unit's share of the
    shared calls (:mod:`fairppl.tokenlm.batch`); ``lanes``: lanes of units side by side
    (:func:`fairppl.tokenlm.batch.run_many`). Raises :class:`fairppl.tokenlm.batch.UnitFailed`
    naming the job that failed."""
    from ..tokenlm.batch import PASS_TOKENS, run_many

    starts = [lambda meter, job=job: estimate_steps(lm, vocab, meter=meter, batched=True, **job)
              for job in jobs]
    yield from run_many(lm, starts, pass_tokens=pass_tokens or PASS_TOKENS, lanes=lanes)


def estimate_steps(lm, vocab, text: str, estimator: str, *, rng: np.random.Generator,
                   default_ids: Sequence[int] | None = None, K: int = DEFAULT_K,
                   L: int | None = DEFAULT_L, M: int = DEFAULT_M, tau: float = 1.0,
                   unigram_model=None,
                   mode: str = "independent", beam: int = 8,
                   slack: int | None = DEFAULT_SLACK, max_paths: int = 20_000,
                   start_token: str | None = None, blocks_out: list | None = None, meter=None,
                   batched: bool = False):
    """:func:`estimate` as a generator of LM requests (:mod:`fairppl.tokenlm.batch`) returning the
    record. ``meter`` counts the unit's work (default: the LM's counters and the clock);
    ``batched``: the lm-guided run takes the default's log P from the record instead of asking for
    it again (the one-unit path asks twice, as it always has). The default score, lm-guided and
    decoding-free (``BATCHED``) ask the LM through requests; the other estimators call it
    themselves within the step."""
    from ..tokenlm.batch import Meter
    from . import unigram as uni

    check_estimator(estimator, unigram_model)
    if K < 1 or M < 1 or beam < 1:
        raise InputError(f"K={K}, M={M}, beam={beam}: each must be at least 1")
    if not (tau > 0 and math.isfinite(tau)):
        raise InputError(f"tau={tau}: expected a positive temperature")
    if slack is not None and (isinstance(slack, bool) or int(slack) != slack or slack < 0):
        raise InputError(f"slack={slack}: expected a whole number of tokens >= 0 (or None)")
    if L is not None and L < 1:
        raise InputError(f"L={L}: expected a block length of at least 1 character (or None)")
    if not text:
        raise InputError("empty text: expected at least one character")
    data = vocab.text_bytes(text)
    if unigram_model is not None:
        check_unigram_ids(unigram_model, vocab)
        if uni.text_bytes(unigram_model, text) != data:
            raise InputError(f"the unigram model normalises {text[:40]!r} differently from the "
                             f"LM's tokenizer (whitespace rules): expected the same bytes",
                             path=unigram_model.source)
        if default_ids is None:
            from .lattice import viterbi
            default_ids = viterbi(uni.lattice(unigram_model, text))[0]
    if default_ids is None:
        raise InputError("no default tokenization: give default_ids (the tokenizer's ids)")
    default_ids = tuple(int(t) for t in default_ids)
    bad = [t for t in default_ids if not 0 <= t < len(vocab.token_bytes)
           or vocab.token_bytes[t] is None]
    if bad or vocab.decode(default_ids) != data:
        raise InputError(f"the tokenizer's ids for {text[:40]!r} do not spell the text's bytes "
                         f"(round-trip check failed{', special token ' + str(bad[0]) if bad else ''}): "
                         f"the tokenizer cannot decode its own pieces back to the text")
    meter = Meter(lm) if meter is None else meter
    mark = meter.start()
    rec = dict.fromkeys(FIELDS)
    rec.update(text=text, estimator=estimator, start_token=start_token,
               end_scored=lm.end_id is not None, n_tokens=len(default_ids), **text_counts(text))
    rec["logp_default"] = float((yield Logp([default_ids]))[0])
    if estimator in UNIGRAM_ONLY:
        rec.update(_unigram(lm, unigram_model, text, estimator, rng, K, tau, mode, default_ids))
    else:
        rec.update((yield from _general(lm, vocab, text, estimator, rng, default_ids, K=K, L=L,
                                        M=M, beam=beam, slack=slack, max_paths=max_paths,
                                        logp_default=rec["logp_default"],
                                        blocks_out=blocks_out, meter=meter, batched=batched)))
    if unigram_model is not None:
        ent = _unigram_entropy(unigram_model, text, tau)
        rec.update(entropy=ent, entropy_per_token=ent / len(default_ids), tau=float(tau))
    if rec["log_weights"] is not None:
        _unit_interval(rec, rng)
    for key in ("logp", "ci_low", "ci_high", "percent_nd", "ess", "t0", "t1", "t2"):
        rec[key] = _finite(rec[key])
    calls, positions, seconds = meter.since(mark)
    rec.update(lm_calls=calls, positions=positions, seconds=seconds)
    return rec


def _unit_interval(rec: dict, rng: np.random.Generator) -> None:
    """Set ``ci_low``/``ci_high`` (or ``ci_note``) of a record with K log-weights to its Monte
    Carlo interval (:func:`~.estimate.mc_interval`, level :data:`UNIT_CI_LEVEL`)."""
    from .estimate import mc_interval

    got = mc_interval([rec["log_weights"]], [rec["logp_default"]], UNIT_CI_LEVEL,
                      seed=int(rng.integers(2 ** 32)))
    rec.update(ci_low=got.low, ci_high=got.high, ci_note=got.note)


def _unigram_entropy(model, text: str, tau: float) -> float:
    from .lattice import entropy
    from .unigram import lattice

    return float(entropy(lattice(model, text), tau))


def _general(lm, vocab, text, estimator, rng, default_ids, *, K, L, M, beam, slack,
             max_paths, logp_default, blocks_out=None, meter=None, batched=False):
    """The record fields of a non-unigram estimator (a generator step: lm-guided and
    decoding-free ask the LM through requests, the others call it themselves)."""
    if False:  # pragma: no cover - makes this function a generator
        yield
    if estimator == "default":
        return {"logp": logp_default, "n_samples": 1, "lower_bound": True, "n_tokenizations":
                None}
    if estimator == "exact":
        return _exact(lm, vocab, text, default_ids, max_paths)
    if estimator == "beam":
        from .beam import beam_marginal

        got = beam_marginal(lm, vocab, text, beam=beam, default=default_ids, force_default=True)
        return {"logp": got.logp_lower, "n_samples": got.n_complete, "lower_bound": True,
                "beam": beam}
    if estimator == "lm-guided":
        from .lm_guided import lm_guided_steps

        got = yield from lm_guided_steps(lm, vocab, text, default_ids=default_ids, K=K, L=L,
                                         M=M, rng=rng, blocks_out=blocks_out, meter=meter,
                                         logp_default=logp_default if batched else None)
        return {"logp": got.logp, "log_weights": [float(x) for x in got.log_weights],
                "n_samples": K, "lower_bound": False, "percent_nd": got.percent_nd,
                "t0": got.t0, "t1": got.t1, "t2": got.t2, "n_blocks": got.n_blocks,
                "K": K, "L": L, "M": M}
    from .decoding_free import decoding_free_steps

    got = yield from decoding_free_steps(lm, vocab, text, K=K, default_ids=default_ids, rng=rng,
                                         slack=slack, meter=meter)
    return {"logp": got.logp, "n_samples": got.distinct, "lower_bound": True,
            "percent_nd": got.percent_nd, "n_distinct": got.distinct,
            "n_tokenizations": _count(got.n_paths), "K": K, "slack": got.slack}


def _exact(lm, vocab, text, default_ids, max_paths) -> dict:
    from ..tokenlm.lm_kenlm import KenLMTokenLM
    from .exact import enumerate_marginal, ngram_marginal
    from .lattice import count_paths

    if isinstance(lm, KenLMTokenLM):
        lat = vocab.lattice(vocab.text_bytes(text))
        got = ngram_marginal(lm.model, vocab, text, lm.words, bos=lm.start_id is not None,
                             eos=lm.end_id is not None, unk_cost=-lm.unk_logp, lattice=lat)
        n = count_paths(lat)
    else:
        got = enumerate_marginal(lm, vocab, text, max_paths=max_paths)
        n = got.n_tokenizations
    return {"logp": got.logp, "ci_low": got.logp, "ci_high": got.logp, "n_samples": _count(n),
            "n_tokenizations": _count(n), "enumerated": True, "lower_bound": False}


def _unigram(lm, model, text, estimator, rng, K, tau, mode, default_ids) -> dict:
    from . import unigram as uni
    from .estimate import log_weights, wor_estimate
    from .lattice import nbest

    if mode not in uni.MODES:
        raise InputError(f"unknown mode {mode!r}: expected one of {', '.join(uni.MODES)}")
    out = {"K": K, "mode": mode, "lower_bound": estimator == "nbest" or mode == "consistent"}
    if estimator == "nbest":
        if mode == "consistent":
            tl = uni.type_lattice(model, text)
            lat, expand = tl.lattice, tl.expand
        else:
            lat, expand = uni.lattice(model, text), tuple
        paths = [expand(p) for p, _ in nbest(lat, K)]
        logp = lm.logp(paths)
        out.update(logp=float(logsumexp(logp)), n_samples=len(paths), n_distinct=len(paths),
                   percent_nd=100.0 * float(np.mean([p != default_ids for p in paths])))
        return out
    prop = uni.proposal(model, text, K, rng, tau, mode, wor=estimator != "wr",
                        include_best=estimator == "wor-1best")
    logp = np.asarray(lm.logp(prop.ids), dtype=np.float64)  # every sample in one batched call
    out.update(n_samples=len(prop.ids), n_distinct=len(set(prop.ids)),
               percent_nd=100.0 * float(np.mean([p != default_ids for p in prop.ids])),
               n_tokenizations=_count(prop.n_paths), enumerated=prop.exact)
    if prop.exact:
        value = float(logsumexp(logp))
        out.update(logp=value, ci_low=value, ci_high=value)
    elif estimator == "wr":
        lw = log_weights(logp, prop.logq)
        out.update(logp=float(logsumexp(lw) - math.log(len(lw))),
                   log_weights=[float(x) for x in lw])
    else:
        out.update(logp=wor_estimate(logp, prop.log_inclusion))
    return out
