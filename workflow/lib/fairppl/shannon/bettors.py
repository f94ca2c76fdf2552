"""Models of the study as bettors in the Shannon game, and the rows of a unit's truncations.

A bettor turns a context (the words before a position of a unit) into bets over the m outcomes
of :mod:`.outcomes` (float64, the outcomes' order): :meth:`bets(context_words)`, and gives
:meth:`log_prob(context_words, word)`, the model's ln probability of the actual next word (nats;
``</s>`` spelled so; an out-of-vocabulary word's own probability, not the pooled ``<unk>``), the
likelihood reference. For a vocabulary word and for ``</s>``, ``log(bets[i])`` and ``log_prob``
are the same number (to one rounding of ``exp``/``log``). ``<unk>`` takes the model's mass on
every other word: 1 - (the sum of the vocabulary words' and ``</s>``'s bets), clipped at 0
against rounding, so the bets sum to 1. ``take_cost()`` gives the work since its last call
(``cost_passes``, ``cost_positions``, ``cost_seconds``). Every bettor is a
:class:`~.protocol.Bettor`: ``prefetch`` (computing a unit's truncations in one call) and ``fits``
(the unit fits the bettor's window) are asked of each, and do nothing or say yes by default.

* :class:`WordNgramBettor`: the study's closed-vocabulary KenLM word n-gram
  (:mod:`fairppl.ngram.word`); p(w | the last n-1 context words), a context word outside the
  vocabulary read as the UNK class ``<oov>``. ``log_prob`` of an out-of-vocabulary word is
  p(``<oov>`` | context): the study's naive word-perplexity charge (the model has no
  probability of its own for a word it never saw; :mod:`fairppl.ngram.word` explains the UNK
  correction that the word tables apply on top). Its bet on ``<unk>`` (the rest) is slightly
  larger than p(``<oov>``): it also holds the zeroton mass of KenLM's own ``<unk>``.
* :class:`~.neural.TokenBettor` (:mod:`.neural`): a transformers causal LM over characters,
  pieces or bytes, betting on whole words.

:func:`truncation_rows` scores every truncation of one unit with a bettor,
:func:`truncation_rows_many` those of several units (in one call of a token bettor).
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from ..core.errors import InputError
from ..ngram.kenlm_tool import NO_UNK_LOG10
from ..ngram.word import UNK, words as split_words
from .gambling import summarize_bets
from .neural import TokenBettor
from .outcomes import END_OUTCOME, UNK_OUTCOME, Outcomes
from .protocol import Bettor

__all__ = ["Bettor", "WordNgramBettor", "TokenBettor", "ContextByContext", "truncation_rows",
           "truncation_rows_many", "LN_10"]

#: ln(10): KenLM's log10 probabilities times LN_10 are nats.
LN_10 = math.log(10.0)


def _record_path(model_path: Path) -> Path:
    return model_path.with_suffix(".json")


class WordNgramBettor(Bettor):
    """A KenLM word n-gram of the study (``results/ngram/<corpus>/<lang>/word-v<V>.o<N>.kenlm``
    with its ``.json`` record beside it) betting over ``outcomes``, which must be the record's
    vocabulary (the same words in the same order: the outcomes of that size); a mismatch is an
    InputError. ``record``: the record's path when it is not the model's with ``.json``."""

    kind = "word-ngram"

    def __init__(self, model_path: str | os.PathLike, outcomes: Outcomes,
                 record: str | os.PathLike | None = None):
        import kenlm

        from ..ngram.kenlm_tool import load_model

        model_path = Path(model_path)
        record_path = Path(record) if record is not None else _record_path(model_path)
        try:
            rec = json.loads(record_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(f"no record beside the word n-gram {model_path}: expected "
                             f"{record_path} (its vocabulary)") from None
        vocab = tuple(rec.get("words") or ())
        if rec.get("actual") != len(outcomes.words) or vocab != outcomes.words:
            raise InputError(
                f"the outcomes hold {len(outcomes.words)} vocabulary words but the model "
                f"{model_path.name} was trained with a vocabulary of {rec.get('actual')} "
                f"(requested {rec.get('requested')})"
                + ("" if rec.get("actual") != len(outcomes.words) else ", other words")
                + ": build the outcomes with the same vocabulary size from the same train split",
                path=str(record_path))
        self.outcomes = outcomes
        self.model = load_model(model_path)
        self._kenlm = kenlm
        self.order = int(self.model.order)
        self._known = set(vocab)
        missing = [w for w in vocab if w not in self.model]
        if missing:
            raise InputError(f"vocabulary words {missing[:5]} are unknown to the model: the "
                             f"vocabulary must come from the model's training text",
                             path=str(record_path))
        self._ctx_key: tuple | None = None
        self._log: np.ndarray | None = None
        self._oov: float = math.nan
        self._passes = 0
        self._positions = 0
        self._seconds = 0.0

    def _mapped(self, word: str) -> str:
        return word if word in self._known else UNK

    def _state(self, context_words: Sequence[str]):
        state = self._kenlm.State()
        self.model.BeginSentenceWrite(state)
        out = self._kenlm.State()
        # the whole context from <s>, word by word, as KenLM's full_scores walks a unit
        for w in context_words:
            self.model.BaseScore(state, self._mapped(w), out)
            state, out = out, state
            self._positions += 1
        return state

    def _score(self, state, word: str) -> float:
        out = self._kenlm.State()
        log10p = self.model.BaseScore(state, word, out)
        self._positions += 1
        if not math.isfinite(log10p) or (word == UNK and word not in self.model
                                          and log10p < NO_UNK_LOG10):
            raise InputError(f"KenLM gave log10 p = {log10p} to {word!r}: no probability")
        return log10p * LN_10

    def _compute(self, context_words: Sequence[str]) -> None:
        key = tuple(context_words)
        if key == self._ctx_key:
            return
        start = time.perf_counter()
        state = self._state(key)
        out = np.empty(self.outcomes.m)
        for i, w in enumerate(self.outcomes.words):
            out[i] = self._score(state, w)
        out[self.outcomes.end] = self._score(state, "</s>")
        self._oov = self._score(state, UNK)
        listed = np.exp(np.delete(out, self.outcomes.unk))
        rest = 1.0 - math.fsum(listed.tolist())
        out[self.outcomes.unk] = math.log(rest) if rest > 0 else -math.inf
        self._ctx_key, self._log = key, out
        self._passes += 1
        self._seconds += time.perf_counter() - start

    def log_bets(self, context_words: Sequence[str]) -> np.ndarray:
        """ln of every outcome's bet (outcome order)."""
        self._compute(context_words)
        return self._log.copy()

    def bets(self, context_words: Sequence[str]) -> np.ndarray:
        """The bets over the m outcomes after ``context_words`` (float64, summing to 1)."""
        return np.exp(self.log_bets(context_words))

    def log_prob(self, context_words: Sequence[str], word: str) -> float:
        """ln p(word | context), nats; an out-of-vocabulary word: p(``<oov>`` | context)."""
        self._compute(context_words)
        if word == UNK_OUTCOME:
            raise InputError(f"{UNK_OUTCOME!r} is an outcome, not a word: give the word itself")
        if word == END_OUTCOME:
            return float(self._log[self.outcomes.end])
        i = self.outcomes.index.get(word)
        if i is not None and i < self.outcomes.unk:
            return float(self._log[i])
        return self._oov

    def take_cost(self) -> dict:
        """KenLM lookups (``cost_positions``), distinct contexts scored (``cost_passes``) and
        seconds since the last call."""
        out = {"cost_passes": self._passes, "cost_positions": self._positions,
               "cost_seconds": self._seconds}
        self._passes = self._positions = 0
        self._seconds = 0.0
        return out


class ContextByContext(Bettor):
    """``bettor`` without its ``prefetch`` (the base class's, which computes nothing ahead):
    :func:`truncation_rows` then asks its bets context by context (the reference the prefetched
    path is tested and benchmarked against)."""

    def __init__(self, bettor: Bettor):
        self.inner = bettor

    def bets(self, context_words: Sequence[str]) -> np.ndarray:
        return self.inner.bets(context_words)

    def log_prob(self, context_words: Sequence[str], word: str) -> float:
        return self.inner.log_prob(context_words, word)

    def take_cost(self) -> dict:
        return self.inner.take_cost()

    def fits(self, text: str) -> bool:
        return self.inner.fits(text)


def truncation_rows(bettor, unit_id: str, text: str, outcomes: Outcomes,
                    list_lengths: Sequence[int]) -> list[dict]:
    """One row per position of the normalised unit ``text`` (its n words, then ``</s>``):
    ``unit_id``, ``position`` (0-based), ``outcome`` (the correct outcome's label),
    ``in_vocabulary`` (the word is a vocabulary word; ``</s>`` counts as one), ``log_bet`` (ln
    of the bet on the correct outcome, ``<unk>``'s for an out-of-vocabulary word), ``log_prob``
    (the model's ln probability of the actual word, :meth:`log_prob`), ``rank`` (1-based place in
    the list of best bets), ``rank_tied_first`` and ``n_tied`` (the tie the correct outcome is
    in, for Shannon's rank bounds), per list length l ``listed_sum_<l>`` and
    ``listed_last_<l>`` (:func:`.gambling.summarize_bets`), and the bettor's cost of the
    position (``cost_passes``, ``cost_positions``, ``cost_seconds``). Nats.

    Every bettor's ``prefetch`` is called first with every truncation (the token bettors,
    :class:`TokenBettor`, compute their bets there in one call; the others nothing); that
    call's cost is shared out evenly over the unit's positions (integer counts so that they sum
    to the call's)."""
    return truncation_rows_many(bettor, [(unit_id, text)], outcomes, list_lengths)[0]


def truncation_rows_many(bettor, units: Sequence[tuple[str, str]], outcomes: Outcomes,
                         list_lengths: Sequence[int]) -> list[list[dict]]:
    """:func:`truncation_rows` of every ``(unit_id, text)`` of ``units``, in order. A token
    bettor's ``prefetch`` computes the truncations of all of them in one call (their contexts'
    positions share the forward passes: config ``shannon.units_per_call``), and that call's
    cost is shared out evenly over all their positions; the rows are those of one unit at a
    time (up to the float rounding of other passes)."""
    lengths = [int(x) for x in list_lengths]
    if any(x < 1 for x in lengths):
        raise InputError(f"list lengths must be positive, got {lengths}")
    words = [split_words(text) for _, text in units]
    bettor.take_cost()
    total = sum(len(ws) + 1 for ws in words)
    # every truncation's bets in one call (none for a bettor that computes nothing ahead), its
    # cost shared out
    bettor.prefetch([ws[:k] for ws in words for k in range(len(ws) + 1)],
                    [w for ws in words for w in ws + [END_OUTCOME]])
    shared = bettor.take_cost()
    out, done = [], 0  # done: positions before the current one, over the call's units
    for (unit_id, _), ws in zip(units, words):
        rows = []
        for k in range(len(ws) + 1):
            ctx = ws[:k]
            word = ws[k] if k < len(ws) else END_OUTCOME
            label = outcomes.outcome(word) if k < len(ws) else END_OUTCOME
            correct = outcomes.index[label]
            bets = bettor.bets(ctx)
            summary = summarize_bets(bets, correct, lengths)
            row = {"unit_id": str(unit_id), "position": k, "outcome": label,
                   "in_vocabulary": label != UNK_OUTCOME, "log_bet": summary["log_bet"],
                   "log_prob": bettor.log_prob(ctx, word), "rank": summary["rank"],
                   "rank_tied_first": summary["rank_tied_first"], "n_tied": summary["n_tied"]}
            for length, listed, last in zip(lengths, summary["listed_sum"],
                                            summary["listed_last"]):
                row[f"listed_sum_{length}"] = listed
                row[f"listed_last_{length}"] = last
            row.update(bettor.take_cost())
            for key, value in shared.items():
                row[key] += (value / total if isinstance(value, float) else
                             round(value * (done + 1) / total) - round(value * done / total))
            done += 1
            rows.append(row)
        out.append(rows)
    return out


def records_maker(bettor, outcomes: Outcomes, list_lengths: Sequence[int], per_call: int):
    """``make_records`` of :func:`fairppl.core.runner.run_documents` for the game: the units
    not yet done, ``per_call`` at a time (one :func:`truncation_rows_many` call each: config
    ``shannon.units_per_call``), each unit's record ``{"rows": ...}`` yielded (and so appended)
    as soon as its call is done."""
    if int(per_call) < 1:
        raise ValueError(f"units per call must be at least 1, got {per_call}")

    def make_records(todo):
        for start in range(0, len(todo), per_call):
            group = [(unit_id, text) for text, unit_id in todo[start:start + per_call]]
            for rows in truncation_rows_many(bettor, group, outcomes, list_lengths):
                yield {"rows": rows}

    return make_records


def listed_bets(bets: np.ndarray, outcomes: Outcomes, length: int | None) -> dict[str, float]:
    """The ``length`` best bets as ``{outcome: bet}`` (all m for ``None``), best first, ties in
    the outcomes' order (the ranks of :func:`.gambling.summarize_bets`)."""
    order = np.argsort(-np.asarray(bets, dtype=np.float64), kind="stable")
    if length is not None:
        order = order[:length]
    return {outcomes.labels[i]: float(bets[i]) for i in order}


def campaign_bets(bettor, contexts: Sequence[tuple[str, str]], outcomes: Outcomes,
                  length: int | None):
    """A bets record ``(id, {outcome: bet})`` per truncation ``(id, context)`` of a campaign
    (the context: the words before the position, space-joined), with lists of the ``length``
    best bets (``None``: all m), in order."""
    for tid, context in contexts:
        ctx = split_words(context) if context else []
        yield tid, listed_bets(bettor.bets(ctx), outcomes, length)
