"""Closed-vocabulary word n-gram models with an UNK class, and the UNK correction of perplexity.

This is the comparison of the blog post "Language models and the unknown token: Why perplexity
gets worse as the corpus size increases" (2018), not a good model of any language: a word is what
lies between two ASCII spaces of a normalised unit, the vocabulary is the ``size`` most frequent
word types of the train split, every other word becomes the UNK symbol, and KenLM's ``lmplz``
(modified Kneser-Ney) learns ``p(UNK | context)`` from the UNK tokens of the train split, like any
other word.

Naive cost of a unit: ``-log2`` of the model's probability of every token, the end-of-unit symbol
``</s>`` included, UNK charged ``p(UNK | context)`` as is. Smaller vocabularies then look better:
UNK swallows more and more of the text and becomes easy to predict.

Corrected cost (the blog's fix): every UNK token stands for one of the ``K`` distinct
out-of-vocabulary word types of the *evaluated* text, so spread its probability uniformly over
them, ``p(UNK | context) / K``, i.e. ``log2(K)`` extra bits per UNK token (``unk_corrected_bits``).
``K`` belongs to the set of units summed, not to a unit: per-unit tables keep each unit's OOV
types (``WordUnitScore.oov_types``) and whoever sums units counts ``K`` over exactly those
(``unk_corrected_bits_total``; ``fairppl.stats.metrics.bits_per_utterance``), so a subset of the test
units (e.g. the units every model scored) gets its own, smaller ``K``. Note ``K`` is read off the
evaluated text itself (an oracle no real decoder has), so the corrected cost is still optimistic;
the open-vocabulary character model (``fairppl.ngram.char``) is the principled answer.

The sweep's largest vocabulary, ``all``, is every train word type seen at least twice
(``ALL_MIN_COUNT``); the train split's singletons become UNK tokens, so lmplz learns
``p(UNK | context)`` for it too. (With every train type in the vocabulary the train text has no
UNK token, and a test OOV word would get KenLM's zeroton ``p(<unk>)``, far smaller than any
learned UNK probability: the corrected curve would jump at ``all``.) Its actual size is recorded.

Units: costs are bits (log base 2); perplexities are per token, a token being a word or the
end-of-unit symbol ``</s>``.

KenLM facts this module relies on (checked against a real run in tests/unit/test_wordlm.py):

* ``lmplz`` refuses the words ``<s>``, ``</s>`` and ``<unk>`` in its training text ("Special word
  <unk> is not allowed in the corpus"); ``--skip_symbols`` would turn them into whitespace, i.e.
  silently delete every UNK token. No flag makes lmplz learn ``<unk>`` from counts. So the UNK
  class is written as the ordinary word ``UNK = "<oov>"``: lmplz counts it like any word and
  smooths it (Kneser-Ney, with contexts), and the ARPA file gets a real, count-based
  ``p(<oov> | context)``. lmplz's own ``<unk>`` keeps its zeroton mass (a share of the
  interpolated uniform unigram mass); when the train split has UNK tokens, that mass is never
  used at test time (every test word is a vocabulary word or ``<oov>``), so the model is a
  sub-distribution over what we score: never an undercharge.
* If the train split has no UNK token at all (a vocabulary covering every train type), the ARPA
  file has no ``<oov>``; a test ``<oov>`` is then out of KenLM's vocabulary and
  charged KenLM's ``p(<unk> | context)``, the zeroton probability: the model's honest estimate for a
  word it never saw.
* KenLM's query side treats ``<UNK>`` (upper case) as ``<unk>`` too: an ARPA word ``<UNK>``
  replaces the ``<unk>`` entry when the model is loaded. So ``<UNK>``, like the reserved words and
  ``UNK`` itself, is never a vocabulary word (``RESERVED_WORDS``): such a word in a corpus is
  always out of vocabulary (mapped to ``UNK`` and counted as an OOV type), and lmplz never sees it.
* Training, loading and the scoring loop (log10 -> bits, ``math.fsum``) are
  ``fairppl.ngram.kenlm_tool``'s, shared with the character and subword n-grams.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass, field
from operator import index as _as_int
from typing import Collection, Iterable, Sequence

from ..core.errors import InputError
from ..core.io import atomic_path
from .kenlm_tool import load_model, score_tokens

#: The UNK class as written in the training text and at test time (an ordinary word for KenLM).
UNK = "<oov>"

#: The ``all`` vocabulary: train word types seen at least this often (singletons train UNK).
ALL_MIN_COUNT = 2

#: Words that can never be vocabulary words: KenLM's reserved ``<s> </s> <unk>``, ``<UNK>`` (which
#: KenLM's loader merges with ``<unk>``) and our ``UNK`` symbol. In a text they are always OOV.
RESERVED_WORDS = frozenset({"<s>", "</s>", "<unk>", "<UNK>", UNK})


def _bad_char(word: str) -> str | None:
    for ch in word:
        if ch == "\0" or ch.isspace():
            return ch
        if 0xD800 <= ord(ch) <= 0xDFFF:
            return ch
    return None


def words(text: str) -> list[str]:
    """Split one normalised unit (``fairppl.core.text.normalize``: single ASCII spaces, no leading or
    trailing space) into words at the ASCII space.

    The same rule for every language, on purpose: punctuation stays attached to its word
    (``"said, Lo!" -> ["said,", "Lo!"]``), and a text written without spaces (Chinese, Japanese,
    Thai) becomes a few very long "words" (a whole clause each), so it has a huge type inventory
    and a high OOV rate. That is the blog's comparison, not a good tokenizer.

    ``"" -> []``. Raises InputError if the unit is not normalised: an empty word (leading,
    trailing or double space), or a word containing other whitespace, NUL (KenLM would split
    there) or a lone surrogate (not encodable in UTF-8).
    """
    if text == "":
        return []
    out = text.split(" ")
    for i, word in enumerate(out):
        if word == "":
            raise InputError(f"word {i} of the unit is empty (a leading, trailing or repeated "
                             f"space): expected a normalised unit: {text[:60]!r}")
        bad = _bad_char(word)
        if bad is not None:
            raise InputError(f"word {i} of the unit contains U+{ord(bad):04X} ({bad!r}): expected "
                             f"a normalised unit (words separated by single ASCII spaces, no "
                             f"other whitespace, NUL or lone surrogates): {text[:60]!r}")
    return out


@dataclass(frozen=True)
class Vocabulary:
    """A closed word vocabulary.

    words: the vocabulary, most frequent first (ties in code-point order of the word).
    requested: the size asked for (``None`` = no limit on the size).
    n_train_types: distinct word types of the train split that could be vocabulary words
        (``RESERVED_WORDS`` excluded).
    min_count: the fewest train occurrences a vocabulary word has (1: any type).
    actual: ``len(words)``: at most ``requested`` and the number of types seen ``min_count``
        times; smaller than ``requested`` when the train split has fewer (record ``actual``).
    """

    words: tuple[str, ...]
    requested: int | None
    n_train_types: int
    min_count: int = 1
    _set: frozenset = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "words", tuple(self.words))
        object.__setattr__(self, "_set", frozenset(self.words))
        bad = self._set & RESERVED_WORDS
        if bad:
            raise ValueError(f"reserved word(s) {sorted(bad)} cannot be vocabulary words")
        if len(self._set) != len(self.words):
            raise ValueError("vocabulary words must be distinct")

    @property
    def actual(self) -> int:
        return len(self.words)

    @property
    def truncated(self) -> bool:
        """True if some train word types are out of vocabulary (the train text has UNK tokens)."""
        return self.actual < self.n_train_types

    def __contains__(self, word: object) -> bool:
        return word in self._set

    def __len__(self) -> int:
        return len(self.words)

    def __iter__(self):
        return iter(self.words)


def build_vocabulary(train_texts: Iterable[str], size: int | None,
                     min_count: int = 1) -> Vocabulary:
    """The ``size`` most frequent word types (``words``) of the normalised train units among
    those seen at least ``min_count`` times.

    Ties in frequency are broken by code-point order of the word (``sorted`` on ``str``), so the
    vocabulary depends only on the word counts, not on the order of the units. ``size=None`` keeps
    every type seen ``min_count`` times (the sweep's ``all``: ``min_count=ALL_MIN_COUNT``).
    ``RESERVED_WORDS`` are never vocabulary words (they stay OOV). If ``size`` exceeds the number
    of eligible types, all of them are kept and ``Vocabulary.actual`` says how many.
    """
    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 1:
        raise InputError(f"min_count must be a positive integer, got {min_count!r}")
    if size is not None:
        if isinstance(size, bool):
            raise InputError(f"vocabulary size must be a non-negative integer or null, got {size!r}")
        try:
            size = _as_int(size)
        except TypeError:
            raise InputError(f"vocabulary size must be a non-negative integer or null, got {size!r}") from None
        if size < 0:
            raise InputError(f"vocabulary size must be a non-negative integer or null, got {size}")
    counts: Counter[str] = Counter()
    for n, text in enumerate(train_texts, start=1):
        try:
            counts.update(words(text))
        except InputError as err:
            raise InputError(f"training unit {n}: {err}") from None
    for word in RESERVED_WORDS:
        counts.pop(word, None)
    ranked = sorted((w for w in counts if counts[w] >= min_count), key=lambda w: (-counts[w], w))
    if size is not None:
        ranked = ranked[:size]
    return Vocabulary(words=tuple(ranked), requested=size, n_train_types=len(counts),
                      min_count=min_count)


def require_unk_training(vocab: Vocabulary, field: str, where: str) -> None:
    """Refuse a requested size that keeps every train word type of ``where`` (a corpus/language):
    the train text then has no UNK token, lmplz learns no ``p(UNK | context)`` and every test OOV
    word gets KenLM's zeroton probability (English UNK-corrected perplexity went from 131 to 564
    when 1,000,000 was silently capped to the 962 types of a small train split). No cap: the size
    is a setting of the study (``field``, e.g. ``word_ngram.vocab_sizes``), so it must be changed
    there. ``all`` (``requested`` None, the types seen twice) is not concerned."""
    if vocab.requested is None or vocab.truncated:
        return
    raise InputError(f"field '{field}': {vocab.requested} is not below the "
                     f"{vocab.n_train_types} word types of the train split of {where}, so no "
                     f"train word is left out and <unk> is never trained; expected a size below "
                     f"{vocab.n_train_types} that leaves some train types out (or `all`)")


def map_words(ws: Sequence[str], vocab: Collection[str]) -> list[str]:
    """Each word, or ``UNK`` if it is not in ``vocab`` or is a reserved word."""
    return [w if (w in vocab and w not in RESERVED_WORDS) else UNK for w in ws]


def unk_text(texts: Iterable[str], vocab: Collection[str]) -> list[str]:
    """The units as KenLM lines: words separated by single spaces, every out-of-vocabulary word
    replaced by ``UNK`` (``"<oov>"``; not ``<unk>``, which lmplz refuses, see the module doc).
    An empty unit stays an empty line (lmplz counts it as ``<s> </s>``)."""
    out = []
    for n, text in enumerate(texts, start=1):
        try:
            ws = words(text)
        except InputError as err:
            raise InputError(f"unit {n}: {err}") from None
        out.append(" ".join(map_words(ws, vocab)))
    return out


def write_unk_text(texts: Iterable[str], vocab: Collection[str], path: str | os.PathLike) -> int:
    """Write ``unk_text(texts, vocab)`` to ``path`` (UTF-8, one line per unit), atomically; return
    the number of lines. This is lmplz's training text."""
    lines = unk_text(texts, vocab)
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as handle:
        for line in lines:
            handle.write(line)
            handle.write("\n")
    return len(lines)


@dataclass(frozen=True)
class WordUnitScore:
    """The naive cost of one unit under a closed-vocabulary word model.

    n_words: words of the unit.
    n_tokens: n_words + 1 (the end-of-unit symbol ``</s>``): what perplexity is per.
    n_oov: UNK tokens (out-of-vocabulary words, reserved words included).
    bits: naive code length in bits: ``-sum log2 p`` over every token and ``</s>``, each UNK token
        charged ``p(UNK | context)`` as is (no correction).
    bits_eos: the end-of-unit ``</s>`` charge (part of bits).
    oov_types: the distinct out-of-vocabulary word types of the unit (original spelling), in order
        of first occurrence; the corpus-level ``K`` of the correction is the size of their union.
    """

    n_words: int
    n_tokens: int
    n_oov: int
    bits: float
    oov_types: tuple[str, ...]
    bits_eos: float


def score_word_unit(model, text: str, vocab: Collection[str]) -> WordUnitScore:
    """Score one normalised unit under a loaded ``kenlm.Model`` (begin- and end-of-unit context
    on). Words are mapped with OUR vocabulary first (``map_words``), so every token is a
    vocabulary word or ``UNK``.

    Raises ValueError if KenLM gives a non-finite log-probability, if a vocabulary word is unknown
    to the model (the vocabulary does not come from the model's training text: charging it
    ``p(<unk>)`` would be wrong), or if ``UNK`` is unknown to the model and the model has no
    ``<unk>`` mass (KenLM's stand-in log10 p = -100).
    """
    ws = words(text)
    mapped = map_words(ws, vocab)

    def charge_unseen(token: str) -> float:
        # UNK is out of KenLM's vocabulary only when the train text had no UNK token: it is then
        # charged p(<unk> | context), nothing more. A vocabulary word must be known to the model.
        if token != UNK:
            raise ValueError(
                f"vocabulary word {token!r} of {text[:60]!r} is unknown to the model: the "
                f"vocabulary must come from the model's training text")
        return 0.0

    charged = score_tokens(model, mapped, charge_unseen)
    oov_types = tuple(dict.fromkeys(w for w, m in zip(ws, mapped) if m == UNK))
    return WordUnitScore(
        n_words=len(ws),
        n_tokens=len(ws) + 1,
        n_oov=sum(1 for m in mapped if m == UNK),
        bits=charged.bits,
        oov_types=oov_types,
        bits_eos=charged.bits_eos,
    )


def score_word_units(model_path: str | os.PathLike, texts: Iterable[str], vocab: Collection[str],
                     progress: bool = False) -> list[WordUnitScore]:
    """Load the model (ARPA or KenLM binary) once and score each unit (``score_word_unit``), in
    order."""
    from tqdm import tqdm

    model = load_model(model_path)
    out = []
    for n, text in enumerate(tqdm(texts, desc="scoring units", unit="unit", disable=not progress),
                             start=1):
        try:
            out.append(score_word_unit(model, text, vocab))
        except InputError as err:
            raise InputError(f"test unit {n}: {err}") from None
    return out


def count_oov_types(scores: Iterable[WordUnitScore]) -> int:
    """Distinct out-of-vocabulary word types over all the scored units (the correction's ``K``)."""
    types: set[str] = set()
    for s in scores:
        types.update(s.oov_types)
    return len(types)


def unk_corrected_bits(bits_naive: float, n_unk_tokens: int, n_oov_types: int) -> float:
    """The blog's correction, in bits: ``bits_naive + n_unk_tokens * log2(n_oov_types)``.

    Each UNK token's probability is divided by ``n_oov_types``, the number of distinct
    out-of-vocabulary word types of the whole evaluated text (as if UNK were spread uniformly over
    them); equivalently the text's probability is divided by ``n_oov_types ** n_unk_tokens``.
    No UNK token: ``bits_naive`` unchanged. Raises ValueError for negative counts, a non-finite
    ``bits_naive``, or UNK tokens with ``n_oov_types < 1`` (an UNK token is an OOV type).
    """
    n_unk = _as_int(n_unk_tokens)
    k = _as_int(n_oov_types)
    if not math.isfinite(bits_naive):
        raise ValueError(f"bits_naive must be finite, got {bits_naive}")
    if n_unk < 0 or k < 0:
        raise ValueError(f"counts must be non-negative, got n_unk_tokens={n_unk}, n_oov_types={k}")
    if n_unk == 0:
        return float(bits_naive)
    if k < 1:
        raise ValueError(f"{n_unk} UNK token(s) but n_oov_types={k}: each UNK token is an "
                         f"out-of-vocabulary type, so n_oov_types must be at least 1")
    return bits_naive + n_unk * math.log2(k)


def unk_corrected_bits_total(scores) -> float:
    """UNK-corrected bits of the units of a per-unit score table (a polars DataFrame with the
    columns ``bits``, the naive bits; ``n_oov``, UNK tokens; ``oov_types``, the unit's distinct
    OOV word types as a list), summed over exactly these units:
    ``sum(bits) + sum(n_oov) * log2(K)``, ``K`` the distinct OOV types of these units together.

    Restricting the table to a subset of units restricts ``K`` too: the correction of a subset is
    not the subset's share of the full set's correction. Raises ValueError for a unit whose
    ``oov_types`` is missing (null) or, through ``unk_corrected_bits``, UNK tokens without types.
    """
    missing = scores.filter(scores["oov_types"].is_null())
    if missing.height:
        unit = missing["unit_id"][0] if "unit_id" in missing.columns else "?"
        raise ValueError(f"{missing.height} unit(s) have no oov_types (e.g. unit {unit!r}): the "
                         f"UNK correction needs every summed unit's OOV types")
    types: set[str] = set()
    for unit_types in scores["oov_types"]:
        types.update(unit_types)
    return unk_corrected_bits(math.fsum(scores["bits"]), int(scores["n_oov"].sum()), len(types))


def perplexity(bits_total: float, n_tokens: int) -> float:
    """Per-token perplexity ``2 ** (bits_total / n_tokens)``; tokens are words plus one ``</s>``
    per unit. Raises ValueError if ``n_tokens < 1``."""
    n = _as_int(n_tokens)
    if n < 1:
        raise ValueError(f"perplexity needs at least one token, got n_tokens={n}")
    return 2.0 ** (bits_total / n)


def summarize(scores: Sequence[WordUnitScore], n_oov_types: int | None = None) -> dict:
    """Totals over the evaluated units.

    n_oov_types: the correction's ``K``; ``None`` counts it from the scores (``count_oov_types``).
    Returns a dict: ``n_units``, ``n_words``, ``n_tokens`` (words + one ``</s>`` per unit),
    ``n_oov`` (UNK tokens), ``n_oov_types``, ``oov_rate`` (UNK tokens / words, ``</s>`` not
    counted; NaN with no words), ``bits_naive`` and ``bits_corrected`` (bits, whole text),
    ``ppl_naive`` and ``ppl_unk_corrected`` (per token).
    """
    scores = list(scores)
    if not scores:
        raise ValueError("no scored units to summarize")
    if n_oov_types is None:
        n_oov_types = count_oov_types(scores)
    n_words = sum(s.n_words for s in scores)
    n_tokens = sum(s.n_tokens for s in scores)
    n_oov = sum(s.n_oov for s in scores)
    bits_naive = math.fsum(s.bits for s in scores)
    bits_corrected = unk_corrected_bits(bits_naive, n_oov, n_oov_types)
    return {
        "n_units": len(scores),
        "n_words": n_words,
        "n_tokens": n_tokens,
        "n_oov": n_oov,
        "n_oov_types": int(n_oov_types),
        "oov_rate": n_oov / n_words if n_words else math.nan,
        "bits_naive": bits_naive,
        "bits_corrected": bits_corrected,
        "ppl_naive": perplexity(bits_naive, n_tokens),
        "ppl_unk_corrected": perplexity(bits_corrected, n_tokens),
    }
