"""The paper's bigram over the game's outcomes, with the absolute discount of its eq. 7.

Histories are the outcome of the previous word (a vocabulary word or ``<unk>``) or ``<s>`` at the
start of a unit; the predicted outcomes are the m outcomes of :class:`.outcomes.Outcomes` (the
vocabulary words, ``<unk>``, ``</s>``). With counts over the training units (every word mapped to
its outcome, each unit read as ``<s> w_1 .. w_n </s>``)::

    p(v | u) = (max(C(uv) - alpha, 0) + alpha * D(u*) * D(*v) / D) / C(u)

C(uv): occurrences of the bigram uv; C(u) = sum_v C(uv): occurrences of u as a history (every
occurrence of a word is followed by a word or ``</s>``, so this is u's count, and ``<s>``'s is the
number of units); D(u*): distinct successors of u; D(*v): distinct predecessors of v (``<s>``
included); D: distinct bigrams; 0 < alpha < 1.

Why it sums to 1 over the m outcomes, for a history seen in training: every seen bigram has
C(uv) >= 1 > alpha, so the discounted counts sum to sum_v (C(uv) - alpha) over the D(u*) seen
successors, C(u) - alpha * D(u*); and sum_v D(*v) = D, because every bigram ends on one of the m
outcomes (``<s>`` is never predicted), so the redistributed terms sum to alpha * D(u*). The
numerators add up to C(u).

A history never seen in training (C(u) = 0, e.g. ``<unk>`` when the vocabulary covers every train
type) gets the continuation distribution D(*v) / D, the shape eq. 7 redistributes with (it sums to
1 for the same reason). An outcome never seen as a successor (D(*v) = 0; again ``<unk>`` when the
vocabulary covers every train type) gets probability 0 from every history: its log bet is
``-inf`` and any text containing it has an infinite perplexity (``DiscountBigram.zero_outcomes``
lists them). Nothing is smoothed further: this is the paper's model.

alpha: the paper tuned it a posteriori on its test set (alpha = 0.7). We must not:
``DiscountBigram.select_alpha`` picks it on a development split (``model.select_alpha(dev_texts,
grid)``, or ``DiscountBigram.select_alpha(train_texts, dev_texts, outcomes, grid)``). The
paper's m = 20 003 counts ``<s>`` among its symbols; ``<s>`` is never an outcome here, so our m
excludes it. Log-probabilities are in nats.
"""

from __future__ import annotations

import math
import types
from collections import Counter
from typing import Iterable, Sequence

import numpy as np

from ..core.errors import InputError
from ..ngram.word import words
from .outcomes import Outcomes
from .protocol import Bettor

#: The history at the start of a unit.
START = "<s>"


def check_alpha(alpha) -> float:
    """``alpha`` as a float, refused unless 0 < alpha < 1."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)):
        raise InputError(f"alpha must be a number in (0, 1), got {alpha!r}")
    value = float(alpha)
    if not 0.0 < value < 1.0:
        raise InputError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    return value


class _InstanceOrClass:
    """``select_alpha`` on a fitted model, ``model.select_alpha(dev_texts, grid)``, or on the
    class, ``DiscountBigram.select_alpha(train_texts, dev_texts, outcomes, grid)`` (fits the
    counts first): one name, the two calls."""

    def __init__(self, on_instance, on_class):
        self.on_instance, self.on_class = on_instance, on_class.__func__
        self.__doc__ = on_instance.__doc__

    def __get__(self, obj, owner):
        if obj is None:
            return types.MethodType(self.on_class, owner)
        return types.MethodType(self.on_instance, obj)


class DiscountBigram:
    """Eq. 7's bigram: build with :meth:`fit`; bets over ``outcomes.labels`` per history."""

    def __init__(self, outcomes: Outcomes, alpha: float, successors: list[dict[int, int]],
                 predecessors: np.ndarray):
        self.outcomes = outcomes
        self.alpha = check_alpha(alpha)
        # Histories: outcome ids 0 .. m - 2 (words, <unk>), and m for <s>; </s> (m - 1) never is.
        self._successors = successors
        self._ids = [np.fromiter(s.keys(), dtype=np.int64, count=len(s)) for s in successors]
        self._counts = [np.fromiter(s.values(), dtype=np.float64, count=len(s))
                        for s in successors]
        self.history_counts = np.array([sum(s.values()) for s in successors], dtype=np.int64)
        self.distinct_successors = np.array([len(s) for s in successors], dtype=np.int64)
        self.distinct_predecessors = np.asarray(predecessors, dtype=np.int64)
        self.n_distinct = int(self.distinct_successors.sum())
        self._continuation = self.distinct_predecessors / self.n_distinct

    @classmethod
    def fit(cls, train_texts: Iterable[str], outcomes: Outcomes, alpha: float) -> DiscountBigram:
        """Counts from normalised train units (words by :func:`fairppl.ngram.word.words`)."""
        alpha = check_alpha(alpha)
        m = outcomes.m
        successors: list[Counter] = [Counter() for _ in range(m + 1)]
        n_units = 0
        for n, text in enumerate(train_texts, start=1):
            try:
                ws = words(text)
            except InputError as err:
                raise InputError(f"training unit {n}: {err}") from None
            previous = m
            for v in [outcomes.outcome_id(w) for w in ws] + [outcomes.end]:
                successors[previous][v] += 1
                previous = v
            n_units = n
        if n_units == 0:
            raise InputError("no training unit: the bigram needs at least one")
        predecessors = np.zeros(m, dtype=np.int64)
        for s in successors:
            for v in s:
                predecessors[v] += 1
        return cls(outcomes, alpha, [dict(s) for s in successors], predecessors)

    def with_alpha(self, alpha: float) -> DiscountBigram:
        """The same counts with another alpha."""
        return DiscountBigram(self.outcomes, alpha, self._successors, self.distinct_predecessors)

    @property
    def zero_outcomes(self) -> tuple[str, ...]:
        """Outcomes never seen as a successor in training: every history bets 0 on them."""
        unseen = np.nonzero(self.distinct_predecessors == 0)[0]
        return tuple(self.outcomes.labels[v] for v in unseen)

    def history(self, context_words: str | Sequence[str]) -> str:
        """The history of a context (a normalised string, or its words): the outcome of its last
        word, ``<s>`` for an empty context."""
        ws = words(context_words) if isinstance(context_words, str) else list(context_words)
        return self.outcomes.outcome(ws[-1]) if ws else START

    def _history_id(self, u: str) -> int:
        if u == START:
            return self.outcomes.m
        i = self.outcomes.index.get(u)
        if i is None or i == self.outcomes.end:
            raise InputError(f"{u!r} is not a history: expected {START!r}, a vocabulary word or "
                             f"'<unk>'")
        return i

    def _outcome_id(self, v: str) -> int:
        i = self.outcomes.index.get(v)
        if i is None:
            raise InputError(f"{v!r} is not one of the {self.outcomes.m} outcomes")
        return i

    def _prob(self, v: int, h: int) -> float:
        total = int(self.history_counts[h])
        if total == 0:
            return float(self._continuation[v])
        c = self._successors[h].get(v, 0)
        shared = self.alpha * float(self.distinct_successors[h]) * float(
            self.distinct_predecessors[v]) / self.n_distinct
        return (max(c - self.alpha, 0.0) + shared) / total

    def prob(self, v: str, u: str) -> float:
        """p(v | u) by eq. 7 (outcome label ``v``, history label ``u``)."""
        return self._prob(self._outcome_id(v), self._history_id(u))

    def bets(self, u: str) -> np.ndarray:
        """p(. | u) over the m outcomes, in ``outcomes.labels`` order (float64, sums to 1)."""
        h = self._history_id(u)
        total = int(self.history_counts[h])
        if total == 0:
            return self._continuation.copy()
        shared = self.alpha * float(self.distinct_successors[h]) * (
            self.distinct_predecessors.astype(np.float64)) / self.n_distinct
        shared[self._ids[h]] += self._counts[h] - self.alpha
        return shared / total

    def _log_prob(self, v: int, h: int) -> float:
        p = self._prob(v, h)
        return math.log(p) if p > 0 else -math.inf

    def log_prob_unit(self, text: str) -> float:
        """ln p of a normalised unit: every word's outcome given the previous one, then ``</s>``
        (-inf when an outcome has probability 0, see :attr:`zero_outcomes`)."""
        h = self.outcomes.m
        logs = []
        for v in [self.outcomes.outcome_id(w) for w in words(text)] + [self.outcomes.end]:
            logs.append(self._log_prob(v, h))
            h = v
        return -math.inf if -math.inf in logs else math.fsum(logs)

    def perplexity(self, texts: Iterable[str]) -> float:
        """The likelihood perplexity of units, per truncation (word or ``</s>``):
        exp(-sum ln p / number of truncations)."""
        total, n = [], 0
        for text in texts:
            total.append(self.log_prob_unit(text))
            n += len(words(text)) + 1
        if n == 0:
            raise InputError("no unit to score")
        return math.exp(-math.fsum(total) / n) if -math.inf not in total else math.inf

    def _select_alpha(self, dev_texts: Sequence[str], grid: Sequence[float]) -> float:
        """The alpha of ``grid`` with the lowest perplexity on the development units (the first
        of equal ones); these counts, whatever this model's own alpha. Raises InputError when
        every alpha gives an infinite perplexity (a dev outcome in :attr:`zero_outcomes`)."""
        grid = [check_alpha(a) for a in grid]
        if not grid:
            raise InputError("the alpha grid is empty")
        dev_texts = list(dev_texts)
        scores = [self.with_alpha(a).perplexity(dev_texts) for a in grid]
        best = min(range(len(grid)), key=lambda i: scores[i])
        if math.isinf(scores[best]):
            raise InputError(f"every alpha gives the development units an infinite perplexity: "
                             f"they contain an outcome never seen as a successor in training "
                             f"({', '.join(self.zero_outcomes)})")
        return grid[best]

    @classmethod
    def _fit_and_select_alpha(cls, train_texts: Iterable[str], dev_texts: Sequence[str],
                              outcomes: Outcomes, grid: Sequence[float]) -> float:
        """The alpha of ``grid`` with the lowest perplexity on the development units, for the
        counts of ``train_texts`` (alpha does not change them; see :meth:`_select_alpha`)."""
        grid = list(grid)
        if not grid:
            raise InputError("the alpha grid is empty")
        return cls.fit(train_texts, outcomes, grid[0])._select_alpha(dev_texts, grid)

    select_alpha = _InstanceOrClass(_select_alpha, _fit_and_select_alpha)


class BigramBettor(Bettor):
    """The eq. 7 bigram as a bettor of the game (the interface of :mod:`.bettors`): its bets are
    p(. | the last context word's outcome) over the m outcomes, exactly normalised, so the bet on
    ``<unk>`` is the model's own p(``<unk>`` | history); ``log_prob`` of a word is the same
    number as its outcome's bet (a closed-vocabulary model: an out-of-vocabulary word is charged
    ``<unk>``'s probability, like the study's naive word perplexity)."""

    def __init__(self, model: DiscountBigram):
        self.model = model
        self._seconds = 0.0
        self._calls = 0

    def bets(self, context_words: Sequence[str]) -> np.ndarray:
        import time

        start = time.perf_counter()
        out = self.model.bets(self.model.history(list(context_words)))
        self._seconds += time.perf_counter() - start
        self._calls += 1
        return out

    def log_prob(self, context_words: Sequence[str], word: str) -> float:
        h = self.model._history_id(self.model.history(list(context_words)))
        v = self.model.outcomes.end if word == "</s>" else self.model.outcomes.outcome_id(word)
        return self.model._log_prob(v, h)

    def take_cost(self) -> dict:
        """Work since the last call: history lookups and seconds (no forward pass)."""
        out = {"cost_passes": 0, "cost_positions": self._calls, "cost_seconds": self._seconds}
        self._seconds, self._calls = 0.0, 0
        return out


def train_bettor(train_texts: Sequence[str], dev_texts: Sequence[str], outcomes: Outcomes,
                 alphas: Sequence[float], alpha: float | None = None):
    """The eq. 7 bigram as a bettor, trained on ``train_texts`` with ``alpha``, or with the
    discount among ``alphas`` whose dev-split perplexity is lowest; returns (bettor, alpha)."""
    if alpha is None:
        alpha = DiscountBigram.select_alpha(train_texts, dev_texts, outcomes, alphas)
    return BigramBettor(DiscountBigram.fit(train_texts, outcomes, alpha)), alpha
