"""The open-vocabulary character n-gram model (KenLM over characters).

A unit of text becomes one KenLM "sentence" whose "words" are its characters, the space written as
the visible symbol ``SPACE`` (U+2581), e.g. ``"ab c" -> "a b ▁ c"``. The model is trained with
``lmplz`` (modified Kneser-Ney) on the train split and charged, at test time, for every character
of the unit and for the end-of-unit symbol ``</s>``.

Open vocabulary, with no UNK shortcut: a character never seen in training costs
``-log2 p(<unk> | context)`` from the model **plus** a uniform spell-out of its UTF-8 bytes,
8 bits per byte (``unseen_char_bits``). The result is a proper code length (see
``unseen_char_bits``).

KenLM itself (training, loading, the scoring loop, log10 -> bits) is ``fairppl.ngram.kenlm_tool``. What
this module adds: KenLM splits a line into words at ASCII whitespace, so ``to_char_tokens`` refuses
any whitespace character other than the ASCII space (which becomes ``SPACE``), NUL, and the
symbol ``SPACE`` itself (it would be confused with a space); every token is one character, so none
can collide with KenLM's reserved ``<s> </s> <unk>``.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from typing import Iterable

from ..core.errors import InputError
from ..core.io import atomic_path
from .kenlm_tool import load_model, score_tokens

#: Visible symbol for the space character (U+2581 LOWER ONE EIGHTH BLOCK, as in SentencePiece).
SPACE = "\u2581"


def _describe(ch: str) -> str:
    name = unicodedata.name(ch, "unnamed")
    return f"U+{ord(ch):04X} {name} ({ch!r})"


def to_char_tokens(text: str) -> str:
    """Turn one normalised unit (NFC, single ASCII spaces, no newlines) into KenLM's input: its
    characters separated by spaces, each space written as ``SPACE``.

    ``"ab c" -> "a b ▁ c"``; ``"" -> ""``.

    Raises InputError naming the character (and its position) if the text contains ``SPACE``
    itself (it could not be told apart from a space), a whitespace character other than the ASCII
    space (KenLM would split on it or, for Unicode spaces, the unit was not normalised), NUL (a
    word delimiter for lmplz), or a lone surrogate (not encodable in UTF-8).
    """
    out = []
    for i, ch in enumerate(text):
        if ch == " ":
            out.append(SPACE)
            continue
        if ch == SPACE:
            reason = "is the symbol that stands for a space in the character model"
        elif ch == "\0":
            reason = "is a word separator for KenLM"
        elif ch.isspace():
            reason = "is whitespace other than a single ASCII space (normalise the unit first)"
        elif 0xD800 <= ord(ch) <= 0xDFFF:
            reason = "is a lone surrogate, not encodable in UTF-8"
        else:
            out.append(ch)
            continue
        raise InputError(f"character {i} of the unit, {_describe(ch)}, {reason}: {text[:60]!r}")
    return " ".join(out)


def from_char_tokens(tokens: str) -> str:
    """Inverse of ``to_char_tokens``."""
    if not tokens:
        return ""
    return "".join(" " if t == SPACE else t for t in tokens.split(" "))


def write_training_text(units: Iterable[str], path: str | os.PathLike) -> int:
    """Write one line of character tokens per unit (UTF-8) to ``path``, atomically; return the
    number of lines. Empty units are kept as empty lines: lmplz counts them as ``<s> </s>``, just as
    scoring charges an empty unit ``p(</s> | <s>)``."""
    n = 0
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as handle:
        for n, unit in enumerate(units, start=1):
            try:
                line = to_char_tokens(unit)
            except InputError as err:
                raise InputError(f"training unit {n}: {err}") from None
            handle.write(line)
            handle.write("\n")
    return n


def unseen_char_bits(ch: str) -> float:
    """Bits for spelling out a character unseen in training: 8 per UTF-8 byte.

    Uniform over bytes, a character of L UTF-8 bytes costs 8L bits, i.e. probability 256^-L.
    UTF-8 is a prefix-free code, so by Kraft's inequality the sum of 256^-len(utf8(c)) over all
    characters c is <= 1: the spell-out is a (sub-)probability distribution over characters, and
    log2 p(<unk> | context) + 8L is a proper code length for an unseen character. It never charges
    less than the model could have, and the total over a unit stays the code length of a
    well-defined open-vocabulary model.
    """
    if len(ch) != 1:
        raise ValueError(f"expected one character, got {ch!r}")
    return 8.0 * len(ch.encode("utf-8"))


@dataclass(frozen=True)
class UnitScore:
    """The cost of one unit under the character model.

    n_chars: characters of the unit (spaces included, </s> excluded).
    n_bytes: UTF-8 bytes of the unit.
    n_unseen: characters not in the model's vocabulary.
    bits_model: -log2 of the model's probabilities: every character (unseen ones as <unk>) and </s>.
    bits_unseen_spellout: the UTF-8 spell-out of the unseen characters (8 bits a byte).
    bits: bits_model + bits_unseen_spellout, the unit's code length.
    bits_eos: the end-of-unit ``</s>`` charge (part of bits_model).
    """

    n_chars: int
    n_bytes: int
    n_unseen: int
    bits_model: float
    bits_unseen_spellout: float
    bits: float
    bits_eos: float


def score_unit(model, text: str) -> UnitScore:
    """Score one unit under a loaded character ``kenlm.Model``: every character and ``</s>`` are
    charged; an unseen character costs ``-log2 p(<unk> | context)`` plus ``unseen_char_bits``."""
    tokens = to_char_tokens(text).split(" ") if text else []
    charged = score_tokens(
        model, tokens, lambda tok: unseen_char_bits(" " if tok == SPACE else tok),
        describe=lambda tok: _describe(" " if tok == SPACE else tok))
    return UnitScore(
        n_chars=len(text),
        n_bytes=len(text.encode("utf-8")),
        n_unseen=charged.n_unseen,
        bits_model=charged.bits_model,
        bits_unseen_spellout=charged.bits_unseen,
        bits=charged.bits,
        bits_eos=charged.bits_eos,
    )


def score_units(model_path: str | os.PathLike, texts: Iterable[str], progress: bool = True) -> list[UnitScore]:
    """Load the model once and score each unit (see ``score_unit``), in order."""
    from tqdm import tqdm

    model = load_model(model_path)
    return [score_unit(model, text)
            for text in tqdm(texts, desc="scoring units", unit="unit", disable=not progress)]
