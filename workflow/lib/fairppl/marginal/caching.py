"""Cao & Rimell's (2021) caching analysis (their Table 2) and the consistent-vs-independent
comparison (their Table 1), for an LM over a SentencePiece unigram model's pieces.

A document is a run of consecutive evaluation units joined by a space, short enough that every
sampled tokenization fits in the LM's window (:func:`documents`). Its tokenizations are drawn
with replacement from the unigram lattice at temperature ``tau``
(:func:`fairppl.marginal.unigram.sample_document`) and scored token by token in batched forward
passes (:meth:`fairppl.tokenlm.lm_hf.HFTokenLM.token_logps`).

Caching (:func:`classify_occurrences`, :func:`word_losses`, :func:`caching_summary`): in each
sample of the INDEPENDENT mode (every word occurrence tokenized on its own), the loss of a
whitespace word occurrence is minus the sum of its tokens' log-probabilities (nats per word).
An occurrence is ``"first"`` (no earlier occurrence of its word type in the document), ``"same"``
(an earlier occurrence of the type had the same token sequence: the LM can copy it) or
``"different"`` (every earlier occurrence was tokenized otherwise). Losses are microaveraged per
class over all samples and documents, for all words and for multi-token words (occurrences of
at least two tokens in that sample). Cao & Rimell restrict their Table 2 to word types that some
sample tokenized in two ways; here every occurrence counts.

Comparison (:func:`mode_estimate`): the importance-sampling estimate of log P(document) with K
samples of each mode drawn from the same seed, with the spread of the log weights
``log P(T) - log Q(T)`` over the samples. The consistent mode only reaches consistent
tokenizations, so it estimates a lower bound on the marginal (:mod:`.unigram`).

All log-probabilities are natural logs (**nats**), float64; a document is scored after the LM's
start token, its end token charged (the convention of :class:`~fairppl.tokenlm.lm_hf.HFTokenLM`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..tokenizers.spm_model import NORMAL, USER_DEFINED
from .estimate import effective_sample_size, log_mean_exp, log_weights
from .unigram import SPACE, UnigramModel, sample_document, units

CLASSES = ("first", "same", "different")
SUBSETS = ("all", "multi-token")


def classify_occurrences(words: Sequence[str], tokens: Sequence[Sequence[int]]) -> list[str]:
    """The class of each word occurrence (``CLASSES``, module docstring) given the word types of
    a document's occurrences in order and the token ids each occurrence got."""
    if len(words) != len(tokens):
        raise ValueError(f"{len(words)} words but {len(tokens)} token sequences: expected one "
                         f"per word occurrence")
    seen: dict[str, set[tuple[int, ...]]] = {}
    out = []
    for word, toks in zip(words, tokens):
        toks = tuple(int(t) for t in toks)
        earlier = seen.setdefault(word, set())
        out.append("first" if not earlier else "same" if toks in earlier else "different")
        earlier.add(toks)
    return out


def word_starts(model: UnigramModel) -> np.ndarray:
    """Per token id, whether the piece begins a whitespace unit (a normal or user-defined piece
    starting with ``"▁"``); bool [V]."""
    return np.array([kind in (NORMAL, USER_DEFINED) and piece.startswith(SPACE)
                     for piece, kind in zip(model.pieces, model.types.tolist())])


def split_words(ids: Sequence[int], starts: np.ndarray, n_words: int) -> list[tuple[int, int]]:
    """Token index spans ``(lo, hi)`` of the whitespace units of a tokenization: a unit begins
    at the first token and at every token whose piece begins with ``"▁"`` (``starts``, from
    :func:`word_starts`). ValueError unless there are ``n_words`` of them."""
    cuts = [i for i, t in enumerate(ids) if i == 0 or starts[t]]
    if len(cuts) != n_words:
        raise ValueError(f"the tokenization has {len(cuts)} word-initial tokens but the text "
                         f"{n_words} whitespace units: expected pieces that never cross a "
                         f"whitespace unit")
    return list(zip(cuts, cuts[1:] + [len(ids)]))


@dataclass(frozen=True)
class Occurrence:
    """One word occurrence in one sampled tokenization: its class, tokens and loss (nats)."""
    cls: str
    n_tokens: int
    loss: float


def word_losses(words: Sequence[str], ids: Sequence[int], token_lp: np.ndarray,
                starts: np.ndarray) -> list[Occurrence]:
    """The occurrences of one tokenization ``ids`` of a document whose whitespace units are
    ``words``: class (:func:`classify_occurrences`) and loss, minus the sum of its tokens' log-
    probabilities ``token_lp[lo:hi]`` (nats; ``token_lp`` has one value per token of ``ids``,
    any further values, e.g. the end token's, are ignored)."""
    if len(token_lp) < len(ids):
        raise ValueError(f"{len(token_lp)} token log-probabilities for {len(ids)} tokens")
    spans = split_words(ids, starts, len(words))
    classes = classify_occurrences(words, [ids[lo:hi] for lo, hi in spans])
    return [Occurrence(c, hi - lo, -math.fsum(token_lp[lo:hi]))
            for c, (lo, hi) in zip(classes, spans)]


def caching_summary(occurrences: Sequence[Occurrence]) -> list[dict]:
    """Per subset (``SUBSETS``) and class (``CLASSES``): ``n_occurrences`` and the microaveraged
    loss ``loss_nats_per_word`` (None for an empty class)."""
    rows = []
    for subset in SUBSETS:
        for cls in CLASSES:
            losses = [o.loss for o in occurrences if o.cls == cls
                      and (subset == "all" or o.n_tokens > 1)]
            rows.append({"subset": subset, "group": cls, "n_occurrences": len(losses),
                         "loss_nats_per_word": math.fsum(losses) / len(losses) if losses
                         else None})
    return rows


def mode_estimate(logp: np.ndarray, logq: np.ndarray) -> dict:
    """The importance-sampling estimate of one document from K samples with replacement:
    ``logp_nats`` (log mean of the weights), ``log_weight_sd_nats`` (sd over the samples of
    ``log P(T) - log Q(T)``, ddof 1; 0.0 for one sample) and ``ess`` (Kish)."""
    lw = log_weights(logp, logq)
    return {"logp_nats": log_mean_exp(lw),
            "log_weight_sd_nats": float(np.std(lw, ddof=1)) if lw.size > 1 else 0.0,
            "ess": effective_sample_size(lw)}


def documents(texts: Sequence[str], n_documents: int, verses: int,
              n_tokens: Callable[[str], int], max_tokens: int) -> list[tuple[int, str]]:
    """Up to ``n_documents`` documents as ``(index of the first unit, text)``: runs of up to
    ``verses`` consecutive ``texts`` joined by a space, starting at evenly spaced units and not
    overlapping; trailing units are dropped while the default tokenization (``n_tokens``) has
    more than ``max_tokens`` tokens (a single unit is kept only if it fits)."""
    if n_documents < 1 or verses < 1:
        raise ValueError(f"n_documents={n_documents}, verses={verses}: expected at least 1")
    n = len(texts)
    starts = sorted({i * n // n_documents for i in range(n_documents)})
    out = []
    for s, nxt in zip(starts, starts[1:] + [n]):
        for m in range(min(verses, nxt - s), 0, -1):
            text = " ".join(texts[s:s + m])
            if n_tokens(text) <= max_tokens:
                out.append((s, text))
                break
    return out


def analyse_document(lm, model: UnigramModel, text: str, K: int, tau: float,
                     rng_for: Callable[[], np.random.Generator], default_ids: Sequence[int],
                     starts: np.ndarray | None = None) -> dict | None:
    """Caching occurrences and both modes' estimates of one document, or None when a sampled
    tokenization does not fit in the LM's window. ``rng_for()`` returns a fresh generator, the
    same seed for each mode; ``default_ids``: the one-best tokenization."""
    starts = word_starts(model) if starts is None else starts
    drawn = {mode: sample_document(model, text, K, rng_for(), tau, mode)
             for mode in ("independent", "consistent")}
    seqs = [tuple(default_ids)] + [ids for mode in drawn.values() for ids, _, _ in mode]
    # model inputs: the start token, then every token but the last target (the end, if any)
    inputs = max(len(s) for s in seqs) + (lm.end_id is not None)
    if lm.max_length is not None and inputs > lm.max_length:
        return None
    lps = lm.token_logps(seqs)
    totals = np.array([math.fsum(lp) for lp in lps])
    words = units(model, text)
    occ = []
    for (ids, _, _), lp in zip(drawn["independent"], lps[1:K + 1]):
        occ += word_losses(words, ids, lp, starts)
    out = {"occurrences": occ, "n_words": len(words), "default": float(totals[0]),
           "max_tokens": max(len(s) for s in seqs)}
    for k, (mode, got) in enumerate(drawn.items()):
        out[mode] = mode_estimate(totals[1 + k * K:1 + (k + 1) * K],
                                  np.array([q for _, q, _ in got]))
    return out


#: Columns of :func:`summary_rows` (units in the names; None where a row has no such value).
SUMMARY_COLUMNS = ("analysis", "group", "subset", "n_occurrences", "loss_nats_per_word",
                   "n_documents", "n_words", "logp_nats", "nats_per_word", "ppl_per_word",
                   "log_weight_sd_nats", "ess")


def summary_rows(results: Sequence[dict]) -> list[dict]:
    """The table of one (model, language) from :func:`analyse_document` results: ``caching``
    rows per subset and class, and ``estimate`` rows per group (``default``: the one-best
    tokenization; ``independent``, ``consistent``: the modes' IS estimates) with ``logp_nats``
    summed over the documents, ``nats_per_word`` and ``ppl_per_word`` over their whitespace
    words, and ``log_weight_sd_nats`` and ``ess`` averaged over the documents."""
    if not results:
        raise ValueError("no documents: expected at least one analysed document")
    base = dict.fromkeys(SUMMARY_COLUMNS)
    rows = [base | {"analysis": "caching", "n_documents": len(results)} | row
            for row in caching_summary([o for r in results for o in r["occurrences"]])]
    n_words = sum(r["n_words"] for r in results)
    for group in ("default", "independent", "consistent"):
        per_doc = [r[group] if group == "default" else r[group]["logp_nats"] for r in results]
        logp = math.fsum(per_doc)
        row = base | {"analysis": "estimate", "group": group, "n_documents": len(results),
                      "n_words": n_words, "logp_nats": logp, "nats_per_word": -logp / n_words,
                      "ppl_per_word": math.exp(-logp / n_words)}
        if group != "default":
            row["log_weight_sd_nats"] = float(np.mean([r[group]["log_weight_sd_nats"]
                                                       for r in results]))
            row["ess"] = float(np.mean([r[group]["ess"] for r in results]))
        rows.append(row)
    return rows


def caching_table(lm, model: UnigramModel, texts: Sequence[str], unit_ids: Sequence[str],
                  keys: dict, *, n_documents: int, verses: int, K: int, tau: float, seed: int,
                  fill: float = 0.85):
    """The polars table of one (model, language): :func:`summary_rows` of up to
    ``n_documents`` documents of up to ``verses`` consecutive units (``texts`` in order, ids
    ``unit_ids``), each with K samples per mode at temperature ``tau``, both modes seeded from
    ``(seed, first unit id)`` (:func:`fairppl.core.runner.document_rng`). A document's
    one-best tokenization may fill ``fill`` of the LM's window (the rest is room for longer
    samples); one whose samples still overflow is skipped and counted in
    ``n_documents_skipped``. ``keys``: leading columns (corpus, language, model, ...)."""
    import polars as pl

    from ..core.runner import document_rng
    from .lattice import viterbi
    from .unigram import lattice

    if K < 1 or not (0 < fill <= 1):
        raise ValueError(f"K={K}, fill={fill}: expected K >= 1 and 0 < fill <= 1")
    window = (lm.max_length or 10 ** 9) - (lm.end_id is not None)
    best = {}

    def n_tokens(text: str) -> int:
        best[text] = viterbi(lattice(model, text))[0]
        return len(best[text])

    docs = documents(texts, n_documents, verses, n_tokens, int(fill * window))
    if not docs:
        raise ValueError(f"no document of consecutive units fits in {int(fill * window)} "
                         f"tokens: expected units shorter than the LM's window")
    starts = word_starts(model)
    results = []
    for first, text in docs:
        uid = str(unit_ids[first])
        got = analyse_document(lm, model, text, K, tau, lambda: document_rng(seed, uid),
                               best[text], starts)
        if got is not None:
            results.append(got)
    lead = dict(keys) | {"K": K, "tau": float(tau), "max_units_per_document": verses,
                         "n_documents_skipped": len(docs) - len(results)}
    return pl.DataFrame([lead | row for row in summary_rows(results)],
                        infer_schema_length=None)
