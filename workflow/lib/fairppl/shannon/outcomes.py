"""The m outcomes of the game for one language: the vocabulary words of its training split (the
``size`` most frequent types, :func:`fairppl.ngram.word.build_vocabulary`, so the word n-grams of the
study with the same size bet on exactly these words), then ``<unk>`` (every other word) and ``</s>``
(the end of the unit). A word is what lies between two ASCII spaces of a normalised unit
(:func:`fairppl.ngram.word.words`); the position after a unit's last word has the outcome ``</s>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ..core.errors import InputError
from ..ngram.word import RESERVED_WORDS, build_vocabulary, require_unk_training, words

#: The outcome of every word outside the vocabulary, as written in campaign files.
UNK_OUTCOME = "<unk>"
#: The outcome at the end of a unit.
END_OUTCOME = "</s>"


@dataclass(frozen=True)
class Outcomes:
    """The closed outcome set: ``labels`` = vocabulary words (most frequent first), ``<unk>``,
    ``</s>``; ``m = len(labels)``. ``index[label]`` is a label's position in every bets array."""

    words: tuple[str, ...]
    labels: tuple[str, ...] = field(init=False)
    index: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        ws = tuple(self.words)
        bad = sorted(set(ws) & (RESERVED_WORDS | {UNK_OUTCOME, END_OUTCOME}))
        if bad:
            raise InputError(f"reserved word(s) {bad} cannot be vocabulary words")
        if len(set(ws)) != len(ws):
            raise InputError("vocabulary words must be distinct")
        labels = ws + (UNK_OUTCOME, END_OUTCOME)
        object.__setattr__(self, "words", ws)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "index", {w: i for i, w in enumerate(labels)})

    @property
    def m(self) -> int:
        return len(self.labels)

    @property
    def unk(self) -> int:
        return len(self.words)

    @property
    def end(self) -> int:
        return len(self.words) + 1

    def outcome(self, word: str) -> str:
        """The outcome label of a text word: itself when in the vocabulary, else ``<unk>``."""
        return word if word in self.index and self.index[word] < self.unk else UNK_OUTCOME

    def outcome_id(self, word: str) -> int:
        i = self.index.get(word)
        return i if i is not None and i < self.unk else self.unk


def build_outcomes(train_texts: Iterable[str], size: int | None,
                   setting: str = "shannon.vocab_size", where: str = "this language") -> Outcomes:
    """The outcomes of a language from its normalised train units (``size`` most frequent word
    types; ``None`` = every type). A ``size`` that keeps every train type is refused, naming
    ``setting`` and ``where`` (a corpus/language): no train word would be left to teach the
    bettors `<unk>`, and m would silently be smaller than asked."""
    vocab = build_vocabulary(train_texts, size)
    require_unk_training(vocab, setting, where)
    return Outcomes(vocab.words)


def unit_outcomes(text: str, outcomes: Outcomes) -> list[str]:
    """The correct outcome at every position of a normalised unit: one per word, then ``</s>``
    (so a unit of n words has n + 1 truncations)."""
    return [outcomes.outcome(w) for w in words(text)] + [END_OUTCOME]


def contexts(text: str) -> list[str]:
    """The context of every truncation of a unit, in order: the words before the position,
    space-joined (``""`` at the first word; the whole unit before ``</s>``)."""
    ws = words(text)
    return [" ".join(ws[:k]) for k in range(len(ws) + 1)]


def check_outcome_labels(labels: Sequence[str]) -> None:
    """Refuse an outcome list that is not vocabulary words followed by ``<unk>`` and ``</s>``."""
    if len(labels) < 2 or tuple(labels[-2:]) != (UNK_OUTCOME, END_OUTCOME):
        raise InputError(f"expected the outcomes to end with {UNK_OUTCOME!r} and {END_OUTCOME!r}")
    Outcomes(tuple(labels[:-2]))
