"""Subword n-grams: KenLM over a SentencePiece tokenizer's pieces, on the default (Viterbi /
merge) tokenization.

The pieces of a unit are KenLM's words (SentencePiece pieces never contain whitespace: the space is
"▁"). With byte fallback, every character is encodable, so the model is open-vocabulary; a piece
the n-gram never saw in training is charged ``-log2 p(<unk> | context)`` plus ``log2(V)`` bits, a
uniform choice among the tokenizer's V pieces (a proper code: the pieces are a finite set).
The end of the unit (``</s>``) is charged too. Costs are bits.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Iterable

from ..core.errors import InputError
from ..core.integrity import verify
from .kenlm_tool import KENLM_RESERVED, load_model, score_tokens


def load_sentencepiece(model_file: str | os.PathLike):
    """A ``sentencepiece.SentencePieceProcessor`` for ``model_file`` (its digest checked when
    it was sealed: ``fairppl.core.integrity``)."""
    import sentencepiece as spm

    verify(model_file)
    return spm.SentencePieceProcessor(model_file=str(model_file))


def pieces(sp, text: str) -> list[str]:
    """The default tokenization of one normalised unit as piece strings (no BOS/EOS)."""
    out = sp.encode(text, out_type=str)
    for piece in out:
        if not piece or any(ch.isspace() for ch in piece) or piece in KENLM_RESERVED:
            raise InputError(f"piece {piece!r} of {text[:60]!r} cannot be a KenLM word: expected "
                             f"pieces without whitespace (byte fallback on, no <unk>)")
    return out


@dataclass(frozen=True)
class PieceUnitScore:
    """n_tokens: pieces + </s>; n_unseen: pieces the n-gram never saw; bits: the unit's cost;
    bits_eos: the end-of-unit ``</s>`` charge (part of bits)."""

    n_tokens: int
    n_unseen: int
    bits: float
    bits_eos: float


def score_piece_units(model_path: str | os.PathLike, tokenizer_file: str | os.PathLike,
                      texts: Iterable[str], progress: bool = True) -> list[PieceUnitScore]:
    """Score each unit's default tokenization under the piece n-gram at ``model_path``."""
    from tqdm import tqdm

    sp = load_sentencepiece(tokenizer_file)
    unseen_bits = math.log2(sp.get_piece_size())
    model = load_model(model_path)
    out = []
    for text in tqdm(texts, desc="scoring units", unit="unit", disable=not progress):
        toks = pieces(sp, text)
        charged = score_tokens(model, toks, lambda _tok: unseen_bits)
        out.append(PieceUnitScore(len(toks) + 1, charged.n_unseen, charged.bits, charged.bits_eos))
    return out
