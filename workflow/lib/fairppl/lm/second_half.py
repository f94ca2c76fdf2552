"""Bits of the second half of a sentence given its first half, as Goldfish measure FLORES.

Chang, Arnett, Tu & Bergen (2024, "Goldfish: Monolingual Language Models for 350 Languages")
report per FLORES code the log2-loss of the *second half* of each sentence. The definition here
is read from their evaluation code, repository tylerachang/goldfish, files
``eval_code/flores_eval_goldfish.py`` (their monolingual models) and
``eval_code/flores_eval_othermodels.py`` (XGLM, BLOOM, MaLA-500), commit dd48259; both do the
same per sentence:

1. the line is the FLORES line with surrounding white space stripped (``l.strip()``);
2. the whole line is tokenized without special tokens and the model's start token (their
   ``prepend_token_id``) is put in front; every token of the line is scored given all tokens
   before it (one forward pass over the whole line, at most 512 input positions: tokens past
   the 511th are cut off, not scored);
3. the **first half is counted in characters** (Python code points): ``half =
   line[:len(line) // 2]``; ``k`` = the number of tokens of ``half`` tokenized *on its own*
   (no special tokens); the losses of the whole line's first ``k`` tokens are set to zero;
4. the loss of an unknown token is replaced by ``log2(vocab_size)``; the sentence's figure is
   the **sum** of the remaining losses, in bits (natural-log losses times ``log2(e)``);
5. one number per sentence is saved (``<code>_<model>_surprisals.npy``). The per-code table of
   the repository (``data/flores_logperplexities.tsv``, our ``goldfish_flores_chang2024.tsv``)
   is, by its magnitudes (English about 69 bits under the 1 GB model, for a second half of 64
   characters on average in dev+devtest), the **mean over sentences** of these sums; the
   script that averages is not in the repository. Neither script says which FLORES split
   ``flores_texts/<lang>.txt`` holds: the sample here is a parameter
   (:mod:`fairppl.lm.goldfish`).

**A split inside a token.** ``k`` is a count, not a position: when the character midpoint falls
inside a token of the whole line, or when the half tokenizes differently alone (a half ending in
a space: byte-level BPE keeps that space as its own token, where the whole line has it merged
into the next word), the first ``k`` tokens of the whole line do not cover exactly the first
half. Goldfish zero the first ``k`` losses whatever they cover, and so does this module: the
whole line's tokens from index ``k`` on are counted. Usually the token holding the midpoint is
then left out of the second half (the half alone needs at least one token for its part of that
token), and a half that needs more or fewer tokens alone moves the boundary by the difference.
This is their definition, kept so that the figures are comparable; it is
``bits(whole) - bits(half scored alone)`` exactly when the half's own tokens are the
whole line's first ``k`` (:attr:`SecondHalf.aligned`; tested).

Scoring itself is the study's canonical scorer (:func:`fairppl.lm.scoring.score_texts`), with
``add_eos=False`` (Goldfish charge no end of sentence) and the model's start token of the sheet;
no other forward pass is written here. Its windows (for lines longer than the model's positional
limit) never apply to FLORES lines under the 135M/270M models (8,192/32,768 positions);
Goldfish's cut at 511 tokens is applied afterwards (:data:`GOLDFISH_MAX_TOKENS`, counted per
line in :attr:`SecondHalf.truncated`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .scoring import score_texts

#: Where the definition is read from.
GOLDFISH_SOURCE = ("tylerachang/goldfish, eval_code/flores_eval_goldfish.py and "
                   "eval_code/flores_eval_othermodels.py (commit dd48259)")
#: Goldfish's MAX_SEQ_LEN (512 input positions, the start token included): text tokens after the
#: 511th are not scored.
GOLDFISH_MAX_TOKENS = 511


def goldfish_line(line: str) -> str:
    """A FLORES line as Goldfish score it: surrounding white space stripped."""
    return line.strip()


def first_half(line: str) -> str:
    """The first half of ``line`` in characters (code points): ``line[:len(line) // 2]``."""
    return line[:len(line) // 2]


@dataclass
class SecondHalf:
    """One sentence's second-half figure.

    ``bits``: the summed bits of the whole line's tokens ``k .. n-1`` (n: tokens scored, after
    Goldfish's cut); ``tokens``: the line's tokens; ``k``: tokens of the first half tokenized
    alone; ``aligned``: whether those are the whole line's first ``k`` tokens (else the
    midpoint falls inside a token or the half tokenizes differently alone: see the module
    docstring); ``truncated``: whether tokens past :data:`GOLDFISH_MAX_TOKENS` were left out;
    ``unknown``: tokens charged ``log2(vocab_size)`` as unknown; ``lossless``: the scorer's
    round-trip check of the line; ``line_bits``: the summed bits of all the line's tokens (the
    same costs, no cut, no end token): the whole sentence given the start token."""

    bits: float
    tokens: int
    k: int
    aligned: bool
    truncated: bool
    unknown: int
    lossless: bool
    line_bits: float = float("nan")


def score_second_halves(model, tokenizer, lines: Sequence[str], *,
                        start_token: str | None = None, batch_size: int = 16,
                        max_tokens: int | None = GOLDFISH_MAX_TOKENS,
                        progress: bool = False) -> list[SecondHalf]:
    """The second-half bits of each of ``lines`` (already stripped: :func:`goldfish_line`) under
    a causal token LM, as Goldfish define them (module docstring): the whole line scored once by
    :func:`fairppl.lm.scoring.score_texts` (``add_eos=False``, ``start_token`` as context), the
    first ``k`` token costs dropped, ``k`` = tokens of :func:`first_half` alone; tokens after
    ``max_tokens`` (None: none) not counted; unknown tokens charged ``log2(vocab_size)``."""
    if isinstance(lines, str):
        raise TypeError("lines must be a list of strings, not one string")
    lines = list(lines)
    units = score_texts(model, tokenizer, lines, batch_size=batch_size, add_eos=False,
                        start_token=start_token, progress=progress)
    halves = (tokenizer([first_half(line) for line in lines], add_special_tokens=False,
                        split_special_tokens=True, return_attention_mask=False)["input_ids"]
              if lines else [])
    unk = tokenizer.unk_token_id
    unk_bits = math.log2(tokenizer.vocab_size)
    out = []
    for unit, half in zip(units, halves):
        k = len(half)
        n = len(unit.token_ids) if max_tokens is None else min(len(unit.token_ids), max_tokens)
        every = [unk_bits if unk is not None and tid == unk else nats / math.log(2.0)
                 for tid, nats in zip(unit.token_ids, unit.token_nats)]
        costs = every[k:n]
        out.append(SecondHalf(
            bits=math.fsum(costs), tokens=len(unit.token_ids), k=k, line_bits=math.fsum(every),
            aligned=list(unit.token_ids[:k]) == list(half),
            truncated=n < len(unit.token_ids),
            unknown=sum(1 for tid in unit.token_ids[k:n] if unk is not None and tid == unk),
            lossless=unit.lossless))
    return out
