"""The open-vocabulary character n-gram model (KenLM over characters).

A unit of text becomes one KenLM "sentence" whose "words" are its characters, the space written as
the visible symbol ``SPACE`` (U+2581), e.g. ``"ab c" -> "a b ▁ c"``. The model is trained with
``lmplz`` (modified Kneser-Ney) on the train split and charged, at test time, for every character
of the unit and for the end-of-unit symbol ``</s>``.

Open vocabulary, with no UNK shortcut: a character never seen in training costs
``-log2 p(<unk> | context)`` from the model **plus** a uniform spell-out of its UTF-8 bytes,
8 bits per byte (``unseen_char_bits``). The result is a proper code length (see
``unseen_char_bits``).

KenLM conventions this module relies on (checked in tests/test_charlm.py):

* KenLM splits a line into words at ASCII whitespace (lmplz: NUL, TAB, LF, CR, space; the Python
  module: TAB, LF, VT, FF, CR, space). ``to_char_tokens`` therefore refuses any whitespace
  character other than the ASCII space (which becomes ``SPACE``), NUL, and the symbol ``SPACE``
  itself (it would be confused with a space).
* KenLM reserves the words ``<s>``, ``</s>`` and ``<unk>``. Every token we emit is one character,
  so no token can collide with them.
* Log-probabilities are log10 and stored as float32; we convert to bits exactly once per token,
  ``bits = log10p * -log2(10)``, and sum with ``math.fsum``.
* lmplz gives ``<unk>`` the probability of a zeroton: it shares the interpolation (uniform) mass
  of the unigram distribution, so ``p(<unk>) > 0`` and the distribution over
  seen characters + ``</s>`` + ``<unk>`` sums to 1 after any context. ``<s>`` is written with
  log10 probability 0 in lmplz's ARPA, but it is never predicted.
* The Python module is the PyPI ``kenlm`` sdist built with ``MAX_ORDER=7`` by the Makefile (its
  default, like prebuilt wheels', is 6), and its probing model needs order >= 2;
  ``lmplz``/``build_binary`` built by ``build_kenlm.sh`` take up to their ``KENLM_MAX_ORDER``. Binary files written by our ``build_binary`` load in the Python module.
"""

from __future__ import annotations

import math
import os
import subprocess
import tempfile
import unicodedata
from dataclasses import dataclass
from typing import Iterable, Sequence

from .errors import InputError
from .io import atomic_path

#: Visible symbol for the space character (U+2581 LOWER ONE EIGHTH BLOCK, as in SentencePiece).
SPACE = "\u2581"

#: log2(10): a log10-probability times -LOG2_10 is a code length in bits.
LOG2_10 = math.log2(10.0)

#: KenLM's reserved words. Single characters cannot collide with them; kept for documentation.
KENLM_RESERVED = ("<s>", "</s>", "<unk>")

# An unseen character whose p(<unk> | context) is below this (log10) means the model has no <unk>
# mass at all: KenLM substitutes log10 p = -100 when an ARPA file lacks <unk>.
_NO_UNK_LOG10 = -90.0


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


def lmplz_command(lmplz: str | os.PathLike, order: int, text: str | os.PathLike,
                  arpa: str | os.PathLike, tmpdir: str | os.PathLike, memory: str = "20%",
                  discount_fallback: bool | Sequence[float] = True) -> list[str]:
    """The argv that trains an order-``order`` modified Kneser-Ney model on ``text`` into ``arpa``.

    ``memory`` is lmplz's ``-S`` (e.g. ``"20%"``, ``"2G"``); ``tmpdir`` its ``-T`` (use the rule's
    tmpdir, not /tmp).

    ``discount_fallback``: lmplz estimates each order's discounts from counts-of-counts, which fails
    on tiny corpora (e.g. a 20-verse test set: "could not calculate Kneser-Ney discounts").
    ``True`` passes ``--discount_fallback`` (lmplz's defaults 0.5 1 1.5, used *only* for orders
    where estimation fails, so it changes nothing on a normal corpus); a sequence of three floats
    passes those fallback discounts; ``False`` omits the flag, so lmplz fails loudly instead.
    """
    order = int(order)
    if order < 2:
        raise InputError(f"n-gram order must be at least 2 (KenLM's query model needs a bigram), got {order}")
    argv = [str(lmplz), "-o", str(order), "-S", str(memory), "-T", str(tmpdir)]
    if discount_fallback is True:
        argv.append("--discount_fallback")
    elif discount_fallback is not False:
        values = [float(d) for d in discount_fallback]
        if len(values) != 3 or any(not (0 < d) for d in values):
            raise InputError(f"discount_fallback needs three positive discounts (D1 D2 D3+), got {values}")
        argv += ["--discount_fallback", *(repr(d) for d in values)]
    argv += ["--text", str(text), "--arpa", str(arpa)]
    return argv


def build_kenlm(text: str | os.PathLike, model: str | os.PathLike, *, order: int,
                lmplz: str | os.PathLike, build_binary: str | os.PathLike,
                tmpdir: str | os.PathLike, memory: str = "20%",
                discount_fallback: bool | Sequence[float] = True, log=None) -> None:
    """Train an order-``order`` model on ``text`` (lmplz) and write KenLM's binary form to
    ``model`` (build_binary), atomically: the ARPA file lives in a private folder under ``tmpdir``
    and is removed afterwards, and ``model`` appears only if both programs succeed.

    ``log``: an open text file that receives the commands and the programs' output (stderr is
    merged); None discards them. A failing program raises ``subprocess.CalledProcessError``.
    """
    with tempfile.TemporaryDirectory(prefix="kenlm-", dir=tmpdir) as work:
        arpa = os.path.join(work, "model.arpa")
        train = lmplz_command(lmplz, order, text, arpa, work, memory=memory,
                              discount_fallback=discount_fallback)
        with atomic_path(model) as tmp:
            binarize = [str(build_binary), "-S", "1G", arpa, str(tmp)]
            for argv in (train, binarize):
                if log is not None:
                    print("+", " ".join(argv), file=log, flush=True)
                subprocess.run(argv, check=True, stdout=log if log is not None else subprocess.DEVNULL,
                               stderr=subprocess.STDOUT)


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
    """

    n_chars: int
    n_bytes: int
    n_unseen: int
    bits_model: float
    bits_unseen_spellout: float
    bits: float


def score_tokens(model, tokens: list[str], unseen_bits, describe=repr) -> tuple[float, float, int]:
    """Score one token sequence under a loaded ``kenlm.Model`` (begin- and end-of-unit context on).

    Every token and the end-of-unit symbol ``</s>`` are charged ``-log2 p`` (bits); a token the
    model never saw (KenLM's OOV flag) is charged ``-log2 p(<unk> | context)`` plus
    ``unseen_bits(token)``, the bits of a proper code for the token given that it is unseen.
    Returns (bits_model, bits_unseen_spellout, n_unseen).
    """
    scores = list(model.full_scores(" ".join(tokens), bos=True, eos=True))
    if len(scores) != len(tokens) + 1:
        raise RuntimeError(
            f"KenLM returned {len(scores)} scores for {len(tokens)} tokens + </s>: {tokens[:20]!r}")
    model_bits = []
    spell_bits = []
    for i, (log10p, _ngram_len, oov) in enumerate(scores):
        if not math.isfinite(log10p):
            what = "</s>" if i == len(tokens) else describe(tokens[i])
            raise ValueError(f"KenLM gave a non-finite log-probability ({log10p}) to {what} "
                             f"at position {i} of {tokens[:20]!r}")
        if oov:
            if i == len(tokens):
                raise RuntimeError("KenLM flagged </s> as out of vocabulary")
            if log10p < _NO_UNK_LOG10:
                raise ValueError(
                    f"the model gives no probability to unseen tokens (log10 p(<unk>) = {log10p}; "
                    f"KenLM substitutes -100 when the ARPA file has no <unk>): cannot score "
                    f"{describe(tokens[i])} in {tokens[:20]!r}")
            spell_bits.append(unseen_bits(tokens[i]))
        model_bits.append(log10p * -LOG2_10)
    return math.fsum(model_bits), math.fsum(spell_bits), len(spell_bits)


def score_unit(model, text: str) -> UnitScore:
    """Score one unit under a loaded character ``kenlm.Model``: every character and ``</s>`` are
    charged; an unseen character costs ``-log2 p(<unk> | context)`` plus ``unseen_char_bits``."""
    tokens = to_char_tokens(text).split(" ") if text else []
    chars = list(text)
    bits_model, bits_spell, n_unseen = score_tokens(
        model, tokens, lambda tok: unseen_char_bits(" " if tok == SPACE else tok),
        describe=lambda tok: _describe(" " if tok == SPACE else tok))
    return UnitScore(
        n_chars=len(chars),
        n_bytes=len(text.encode("utf-8")),
        n_unseen=n_unseen,
        bits_model=bits_model,
        bits_unseen_spellout=bits_spell,
        bits=bits_model + bits_spell,
    )


def load_model(model_path: str | os.PathLike):
    """Load an ARPA or KenLM binary file with the Python module (quietly)."""
    import kenlm

    config = kenlm.Config()
    config.show_progress = False
    return kenlm.Model(str(model_path), config)


def score_units(model_path: str | os.PathLike, texts: Iterable[str], progress: bool = True) -> list[UnitScore]:
    """Load the model once and score each unit (see ``score_unit``), in order."""
    from tqdm import tqdm

    model = load_model(model_path)
    return [score_unit(model, text)
            for text in tqdm(texts, desc="scoring units", unit="unit", disable=not progress)]
