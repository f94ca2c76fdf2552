"""The m outcomes of the game for one language: the vocabulary words of its training split (the
``size`` most frequent types, :func:`fairppl.ngram.word.build_vocabulary`, so the word n-grams of the
study with the same size bet on exactly these words), then ``<unk>`` (every other word) and ``</s>``
(the end of the unit). A word is what lies between two ASCII spaces of a normalised unit
(:func:`fairppl.ngram.word.words`); the position after a unit's last word has the outcome ``</s>``.

That is the unit of the game ``word``. A language written without spaces (Chinese, Japanese:
``word_ngram.languages_without_spaces`` of the config) would make whole clauses its "words", so a
campaign may play with the unit ``char`` instead: every character of the normalised unit but the
ASCII space is one position (:func:`chars`), the outcomes are the ``size`` most frequent train
characters, then ``<unk>`` and ``</s>`` as for words. An ASCII space is never a position (it is
never an outcome either, so no vocabulary line is a space): it stays in the contexts as the text
has it, between the characters it separates, and no bettor is asked to predict it. This keeps
the score exact: the positions are the same whoever bets, and a character model's likelihood
over the same characters is the gambling perplexity of its exact bets. In the study's Chinese
Bible 96% of the spaces follow a full-width punctuation mark and 5% stand before 神 (God), a
typesetting convention rather than a character of the language.
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
#: The units of the game: a position per word (between ASCII spaces) or per character.
UNITS = ("word", "char")


def check_unit(unit) -> str:
    """``unit`` when it is one of :data:`UNITS`, else InputError."""
    if unit not in UNITS:
        raise InputError(f"unit {unit!r}: expected one of {', '.join(UNITS)}")
    return unit


def chars(text: str) -> list[str]:
    """The characters of a normalised unit that are positions of the game with the unit
    ``char``: every character but the ASCII space (``"起初， 神" -> ["起", "初", "，", "神"]``).
    The unit is checked as :func:`fairppl.ngram.word.words` checks it (InputError for a
    unit that is not normalised), so no other whitespace can become an outcome."""
    return [c for w in words(text) for c in w]


def tokens(text: str, unit: str = "word") -> list[str]:
    """The positions of a normalised unit but its end: its words, or its characters."""
    return words(text) if check_unit(unit) == "word" else chars(text)


def spaced(text: str, unit: str = "word") -> str:
    """The unit written as words for the word machinery (:func:`fairppl.ngram.word.words`,
    :class:`.bigram.DiscountBigram`): itself for ``word``, its characters separated by single
    ASCII spaces for ``char`` (``"起初， 神" -> "起 初 ， 神"``)."""
    return text if check_unit(unit) == "word" else " ".join(chars(text))


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
                   setting: str = "shannon.vocab_size", where: str = "this language",
                   unit: str = "word") -> Outcomes:
    """The outcomes of a language from its normalised train units (``size`` most frequent word
    types, or character types for the unit ``char``; ``None`` = every type). A ``size`` that
    keeps every train type is refused, naming ``setting`` and ``where`` (a corpus/language): no
    train word would be left to teach the bettors `<unk>`, and m would silently be smaller than
    asked."""
    check_unit(unit)
    vocab = build_vocabulary((spaced(t, unit) for t in train_texts), size)
    if unit == "char" and size is not None and not vocab.truncated:
        raise InputError(f"field '{setting}': {size} is not below the {vocab.n_train_types} "
                         f"character types of the train split of {where}, so no train "
                         f"character is left out and <unk> is never trained; expected a size "
                         f"below {vocab.n_train_types}")
    require_unk_training(vocab, setting, where)
    return Outcomes(vocab.words)


def unit_outcomes(text: str, outcomes: Outcomes, unit: str = "word") -> list[str]:
    """The correct outcome at every position of a normalised unit: one per word (per character
    for the unit ``char``), then ``</s>`` (so a unit of n words has n + 1 truncations)."""
    return [outcomes.outcome(w) for w in tokens(text, unit)] + [END_OUTCOME]


def contexts(text: str, unit: str = "word") -> list[str]:
    """The context of every truncation of a unit, in order: the words before the position,
    space-joined (``""`` at the first word; the whole unit before ``</s>``). For the unit
    ``char``: the text up to and including the previous character, as written (its ASCII spaces
    kept, but never one after the last character: a space tells where the next character
    starts, so it shows with that character, ``"起初， 神" -> "", "起", "起初", "起初，",
    "起初， 神"``)."""
    if check_unit(unit) == "word":
        ws = words(text)
        return [" ".join(ws[:k]) for k in range(len(ws) + 1)]
    chars(text)  # the unit is normalised
    return [""] + [text[:i + 1] for i, c in enumerate(text) if c != " "]


def check_outcome_labels(labels: Sequence[str]) -> None:
    """Refuse an outcome list that is not vocabulary words followed by ``<unk>`` and ``</s>``."""
    if len(labels) < 2 or tuple(labels[-2:]) != (UNK_OUTCOME, END_OUTCOME):
        raise InputError(f"expected the outcomes to end with {UNK_OUTCOME!r} and {END_OUTCOME!r}")
    Outcomes(tuple(labels[:-2]))
