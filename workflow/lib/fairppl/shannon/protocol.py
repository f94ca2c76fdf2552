"""What every bettor of the Shannon game implements: :class:`Bettor`.

The game's code asks a bettor through these five methods only, never whether it has one: a
bettor that computes nothing ahead keeps the base class's :meth:`Bettor.prefetch` (it does
nothing), one without a window its :meth:`Bettor.fits` (every unit fits). The bettors:
:class:`~.bettors.WordNgramBettor`, :class:`~.bigram.BigramBettor`, :class:`~.neural.TokenBettor`
and :class:`~.bettors.ContextByContext` (tests/unit/test_shannon_bettors.py checks that every class
of the package with bets is one).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Sequence

import numpy as np


class Bettor(ABC):
    """A model betting over the m outcomes of :mod:`.outcomes` (the interface that
    :mod:`.bettors` describes). A subclass defines :meth:`bets`, :meth:`log_prob` and
    :meth:`take_cost` (it cannot be built without them); :meth:`prefetch` and :meth:`fits` have
    defaults here."""

    @abstractmethod
    def bets(self, context_words: Sequence[str]) -> np.ndarray:
        """The bets over the m outcomes after ``context_words`` (float64, outcome order,
        summing to 1)."""

    @abstractmethod
    def log_prob(self, context_words: Sequence[str], word: str) -> float:
        """ln p(word | context) of the actual next word, nats (``</s>`` spelled so)."""

    @abstractmethod
    def take_cost(self) -> dict:
        """The work since the last call: ``cost_passes``, ``cost_positions``,
        ``cost_seconds``."""

    def prefetch(self, contexts: Sequence[Sequence[str]],
                 words: Sequence[str] | None = None) -> None:
        """Compute the bets after every context of ``contexts`` (and the :meth:`log_prob` of
        each of ``words``, the word after each context) in one call, before they are asked one
        by one. Here nothing: the bets are computed when asked."""
        return None

    def fits(self, text: str) -> bool:
        """Whether the bettor can bet on every truncation of the unit ``text``. Here always:
        a bettor without a window."""
        return True
