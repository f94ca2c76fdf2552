"""Per-language tokenizers: SentencePiece unigram/BPE models and a character tokenizer, all open
vocabulary, all usable as ``transformers`` fast tokenizers.

Conventions (checked in tests/test_tokenizers.py):

* Input is a list of normalised units (``fairppl.text.normalize``: NFC, single ASCII spaces, no
  leading/trailing space). The tokenizers change nothing else in the text: SentencePiece is
  trained with ``normalization_rule_name="identity"`` and ``remove_extra_whitespaces=False``, so
  the only transformation is SentencePiece's own whitespace handling (every space becomes
  ``"▁"`` and one dummy ``"▁"`` is prepended to a non-empty unit).
* Open vocabulary: every model has the 256 byte pieces ``<0x00>`` ... ``<0xFF>``
  (``byte_fallback=True``); a character the model cannot spell otherwise (unseen in training) is
  encoded as the pieces of its UTF-8 bytes, so no unit ever yields ``<unk>`` and every character
  is charged.
* Special ids, the same in every tokenizer here: ``<unk>`` = 0, ``<s>`` = 1, ``</s>`` = 2,
  ``<pad>`` = 3; SentencePiece's byte pieces follow at 4..259 and the character tokenizer puts
  its byte tokens there too.
* The ``transformers`` tokenizers **never add special tokens**: they have no post-processor, so
  ``tokenizer(text)["input_ids"]`` with or without ``add_special_tokens`` is the bare piece
  sequence. The scoring code adds ``<s>``/``</s>`` itself (``bos_token_id``/``eos_token_id``).
  Literal text such as ``"<s>"`` is spelled as ordinary characters, never turned into a special
  id (``split_special_tokens=True``), as in SentencePiece.
* ``decode(encode(x)) == x`` for every normalised unit (decode with
  ``clean_up_tokenization_spaces=False``, which these tokenizers also set as their default). The
  one exception is SentencePiece's: a literal ``"▁"`` (U+2581) in the text decodes as a space.
* Unigram piece scores are rounded to multiples of 2**-8 after training
  (``quantize_unigram_scores``): SentencePiece adds path scores in float32, so segmentations of
  equal score (``000|0`` vs ``0|000``) were otherwise ranked by rounding noise that no other
  implementation reproduces (3 of 31,102 German Bible verses differed at 8,000 pieces). On the
  grid, sums are exact and ties go to the same path everywhere. The ``.model`` file holds the
  rounded scores, so SentencePiece, ``to_hf_tokenizer`` and any lattice code read one model.
* ``to_hf_tokenizer`` reproduces ``SentencePieceProcessor.encode`` id for id (tested on every
  unit of real text, and on literal ``"<s>"``, ``"<unk>"``, ``"<0x41>"``). One theoretical limit
  remains for BPE: two *different* splits of one piece that overlap (``ab|a`` and ``a|ba`` over
  the symbols ``ab a ba``) are merged by SentencePiece leftmost first, by ``tokenizers`` in merge
  rank order; the splits of a piece are ranked longer left part first, which is leftmost-first
  whenever the left symbol is the longer one.
"""

from __future__ import annotations

import io
import re
import struct
from collections import Counter
from pathlib import Path
from typing import Iterable

from .errors import InputError
from .io import atomic_path

UNK, BOS, EOS, PAD = "<unk>", "<s>", "</s>", "<pad>"
UNK_ID, BOS_ID, EOS_ID, PAD_ID = 0, 1, 2, 3
SPECIALS = (UNK, BOS, EOS, PAD)
BYTE_TOKENS = tuple(f"<0x{b:02X}>" for b in range(256))
SPACE = "\u2581"  # SentencePiece's visible space, "▁"
MODEL_TYPES = ("unigram", "bpe")
# Fixed, not taken from the machine: unigram EM sums per-thread counts in thread order, so
# the thread count may change the model's float scores.
NUM_THREADS = 2
SCORE_QUANTUM = 2.0 ** -8  # unigram piece scores are rounded to this grid (quantize_unigram_scores)

# SentencePiece never matches <unk>, <s>, </s>, <pad> or the byte pieces against text;
# `tokenizers`' Unigram puts every vocabulary entry into its trie. `to_hf_tokenizer` keeps a
# literal "<s>" or "<0x41>" from matching them (see there) and gives them this score, so that
# they are never preferred even before that guard. The unknown-character score (min score - 10)
# moves with it, which changes no best path: every path pays it once per unknown character.
_UNMATCHABLE_SCORE = -1.0e6
# Stands for "<" inside the `tokenizers` unigram model when "<" is part of longer pieces: a
# Unicode noncharacter, reserved for internal use, never in text.
_LT_ESCAPE = "\ufdd0"

# SentencePiece 0.2.1 raises RuntimeError with these messages (src/trainer_interface.cc):
_TOO_HIGH = re.compile(r"Vocabulary size too high \((\d+)\)\.\s*Please set it to a value <= (\d+)")
_TOO_LOW = re.compile(r"Vocabulary size is smaller than required_chars\.\s*(\d+) vs (\d+)")


# ---------------------------------------------------------------------------------------------
# Training


def _check_training_input(texts, model_type, vocab_size, character_coverage):
    if model_type not in MODEL_TYPES:
        raise InputError(f"unknown tokenizer model type {model_type!r}: expected one of "
                         f"{', '.join(MODEL_TYPES)}")
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size <= 0:
        raise InputError(f"tokenizer vocabulary size {vocab_size!r}: expected a positive integer")
    if not 0.0 < float(character_coverage) <= 1.0:
        raise InputError(f"character_coverage {character_coverage!r}: expected a number in (0, 1]")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(f"training unit {i} is {type(text).__name__}: expected str")
        if "\n" in text or "\r" in text:
            raise InputError(f"training unit {i} contains a line break: expected normalised units "
                             f"(fairppl.text.normalize)")
    if not any(texts):
        raise InputError("no training text for the tokenizer: expected at least one non-empty unit")


def _spm_train(texts: list[str], model_type: str, vocab_size: int, seed: int,
               character_coverage: float) -> bytes:
    """Train once and return the serialized model (nothing is written to disk)."""
    import sentencepiece as spm

    # `seed` is deliberately not passed to spm.set_random_generator_seed: with no sampling and no
    # shuffling the training draws nothing, and sentencepiece 0.2.1's generator is process-wide
    # (seeding it here could change sampling elsewhere in the same process).
    del seed
    longest = max(len(t.encode("utf-8")) for t in texts)
    writer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts),
        model_writer=writer,
        model_type=model_type,
        vocab_size=vocab_size,
        character_coverage=float(character_coverage),
        normalization_rule_name="identity",
        remove_extra_whitespaces=False,
        add_dummy_prefix=True,
        byte_fallback=True,
        unk_id=UNK_ID, bos_id=BOS_ID, eos_id=EOS_ID, pad_id=PAD_ID,
        unk_piece=UNK, bos_piece=BOS, eos_piece=EOS, pad_piece=PAD,
        input_sentence_size=0,
        shuffle_input_sentence=False,
        max_sentence_length=max(4192, longest + 1),  # longer units would be dropped silently
        num_threads=NUM_THREADS,
        minloglevel=2,
    )
    return writer.getvalue()


def _vocab_text(model: bytes) -> str:
    """The ``.vocab`` file SentencePiece writes: one ``piece<TAB>score`` line per id."""
    pieces = parse_spm_model(model)["pieces"]
    return "".join(f"{piece}\t{score:g}\n" for piece, score, _ in pieces)


def train_sentencepiece(texts: list[str], model_type: str, vocab_size: int, out_prefix: str, *,
                        allow_reduction: bool = False, seed: int = 0,
                        character_coverage: float = 1.0) -> dict:
    """Train a SentencePiece ``model_type`` ("unigram" or "bpe") model of ``vocab_size`` pieces on
    ``texts`` (normalised units, one sentence each, used in the given order, all of them) and
    write ``<out_prefix>.model`` and ``<out_prefix>.vocab``, each atomically.

    Settings: identity normalisation (nothing but the whitespace symbol and the dummy prefix),
    byte fallback (open vocabulary), ids ``<unk>``=0 ``<s>``=1 ``</s>``=2 ``<pad>``=3,
    ``NUM_THREADS`` threads, no sentence sampling or shuffling: the same input gives the same
    model bytes (``seed`` is accepted for the config's sake; nothing random happens).
    Unigram scores are then rounded to the ``SCORE_QUANTUM`` grid (``quantize_unigram_scores``).
    ``vocab_size`` counts every piece, the 4 specials and 256 byte pieces included.

    When the corpus cannot support ``vocab_size`` pieces, an ``InputError`` names the requested
    and the largest possible size, unless ``allow_reduction``: then the model is trained with the
    largest possible size and the record says ``reduced: True``. A size below what the corpus's
    characters need (specials + bytes + every character) is always an ``InputError``.

    Returns ``{model_type, vocab_size_requested, vocab_size, reduced, n_train_units,
    n_train_chars}`` (``vocab_size`` = the model's actual size).
    """
    texts = list(texts)
    _check_training_input(texts, model_type, vocab_size, character_coverage)
    n_units, n_chars = len(texts), sum(len(t) for t in texts)
    size = vocab_size
    reduced = False
    for _attempt in range(5):
        try:
            model = _spm_train(texts, model_type, size, seed, character_coverage)
            break
        except RuntimeError as err:
            message = str(err)
            high = _TOO_HIGH.search(message)
            low = _TOO_LOW.search(message)
            if high and int(high.group(2)) < size:
                largest = int(high.group(2))
                if not allow_reduction:
                    raise InputError(
                        f"{model_type} tokenizer vocabulary size {vocab_size} is too large for "
                        f"this training text ({n_units} units, {n_chars} characters): it supports "
                        f"at most {largest} pieces. Lower the vocabulary size in the config to "
                        f"<= {largest}, or set tokenizers.allow_vocab_reduction: true to train "
                        f"with {largest} instead") from None
                size, reduced = largest, True
                continue
            if low:
                needed = int(low.group(2))
                raise InputError(
                    f"{model_type} tokenizer vocabulary size {size} is too small for this "
                    f"training text ({n_units} units, {n_chars} characters): it needs at least "
                    f"{needed} pieces (4 special + 256 byte pieces + its distinct characters). "
                    f"Raise the vocabulary size in the config to >= {needed}") from None
            raise
    else:  # pragma: no cover - SentencePiece kept lowering its own maximum
        raise InputError(f"{model_type} tokenizer: SentencePiece kept rejecting the vocabulary "
                         f"size (last tried {size}) for this training text ({n_units} units)")

    if model_type == "unigram":
        model = quantize_unigram_scores(model)
    actual = len(parse_spm_model(model)["pieces"])
    out_prefix = str(out_prefix)
    with atomic_path(out_prefix + ".vocab") as tmp:
        tmp.write_text(_vocab_text(model), encoding="utf-8")
    with atomic_path(out_prefix + ".model") as tmp:
        tmp.write_bytes(model)
    return {
        "model_type": model_type,
        "vocab_size_requested": int(vocab_size),
        "vocab_size": actual,
        "reduced": reduced,
        "n_train_units": n_units,
        "n_train_chars": n_chars,
    }


# ---------------------------------------------------------------------------------------------
# Reading a SentencePiece model (protobuf wire format, no protobuf dependency)

# Field numbers of sentencepiece_model.proto (read from sentencepiece 0.2.1's descriptor):
# ModelProto: pieces=1, trainer_spec=2, normalizer_spec=3. SentencePiece: piece=1, score=2,
# type=3 (NORMAL=1, UNKNOWN=2, CONTROL=3, USER_DEFINED=4, UNUSED=5, BYTE=6).
# TrainerSpec: model_type=3 (UNIGRAM=1, BPE=2, WORD=3, CHAR=4), vocab_size=4,
# treat_whitespace_as_suffix=24, byte_fallback=35. NormalizerSpec: name=1,
# precompiled_charsmap=2, add_dummy_prefix=3, remove_extra_whitespaces=4, escape_whitespaces=5.
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
_MODEL_TYPE_NAMES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(buf: bytes):
    """Yield ``(field number, value, offset)``: the value is an int for varints, bytes otherwise;
    ``offset`` is where the value's bytes start in ``buf`` (for a length-delimited field, after
    the length)."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        start = pos
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(buf, pos)
            start = pos
            value, pos = buf[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        if pos > len(buf):
            raise ValueError("truncated field")
        yield number, value, start


def parse_spm_model(model: bytes) -> dict:
    """Read the parts of a SentencePiece ``.model`` (bytes) this module needs: ``pieces`` as
    ``[(piece, score, type)]`` in id order, ``model_type`` ("unigram", "bpe", ...),
    ``byte_fallback``, ``treat_whitespace_as_suffix`` and the normaliser settings
    (``normalizer_name``, ``precompiled_charsmap``, ``add_dummy_prefix``,
    ``remove_extra_whitespaces``, ``escape_whitespaces``), with proto2 defaults."""
    out = {"pieces": [], "model_type": "unigram", "byte_fallback": False,
           "treat_whitespace_as_suffix": False, "normalizer_name": "", "precompiled_charsmap": b"",
           "add_dummy_prefix": True, "remove_extra_whitespaces": True, "escape_whitespaces": True}
    for number, value, _ in _fields(model):
        if number == 1:
            piece, score, kind = "", 0.0, NORMAL
            for n, v, _ in _fields(value):
                if n == 1:
                    piece = v.decode("utf-8")
                elif n == 2:
                    score = struct.unpack("<f", v)[0]
                elif n == 3:
                    kind = v
            out["pieces"].append((piece, score, kind))
        elif number == 2:
            for n, v, _ in _fields(value):
                if n == 3:
                    out["model_type"] = _MODEL_TYPE_NAMES.get(v, str(v))
                elif n == 24:
                    out["treat_whitespace_as_suffix"] = bool(v)
                elif n == 35:
                    out["byte_fallback"] = bool(v)
        elif number == 3:
            for n, v, _ in _fields(value):
                if n == 1:
                    out["normalizer_name"] = v.decode("utf-8")
                elif n == 2:
                    out["precompiled_charsmap"] = v
                elif n == 3:
                    out["add_dummy_prefix"] = bool(v)
                elif n == 4:
                    out["remove_extra_whitespaces"] = bool(v)
                elif n == 5:
                    out["escape_whitespaces"] = bool(v)
    return out


def quantize_unigram_scores(model: bytes) -> bytes:
    """Round every normal piece's score of a unigram ``.model`` (bytes) to the nearest multiple
    of ``SCORE_QUANTUM`` (2**-8); return the new model bytes (the same length: scores are fixed
    4-byte fields, patched in place).

    Why: SentencePiece's Viterbi adds path scores in float32, so two segmentations of equal
    score in exact arithmetic (``000|0`` vs ``0|000`` in "0000") compare by rounding noise,
    which ``tokenizers`` (float64) and any re-implementation cannot reproduce. With scores on
    this grid every partial sum above -2**16 is exact in float32 and float64, equal scores are
    equal, and every implementation breaks the tie the same way (earliest start of the last
    piece). The change per piece is at most 2**-9 nats.
    """
    out = bytearray(model)
    for number, value, offset in _fields(model):
        if number != 1:
            continue
        kind, score_at = NORMAL, None
        for n, v, sub in _fields(value):
            if n == 2:
                score_at = offset + sub
            elif n == 3:
                kind = v
        if kind == NORMAL and score_at is not None:
            score = struct.unpack_from("<f", out, score_at)[0]
            struct.pack_into("<f", out, score_at, round(score / SCORE_QUANTUM) * SCORE_QUANTUM)
    return bytes(out)


# ---------------------------------------------------------------------------------------------
# transformers tokenizers


def _wrap(backend, model_type: str):
    """A ``PreTrainedTokenizerFast`` around ``backend`` with this module's special tokens,
    no automatic special tokens and no decode clean-up."""
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token=UNK, bos_token=BOS, eos_token=EOS, pad_token=PAD,
        add_bos_token=False, add_eos_token=False,
        split_special_tokens=True,
        clean_up_tokenization_spaces=False,
        model_input_names=["input_ids", "attention_mask"],
    )
    tokenizer.backend_tokenizer.post_processor = None
    for name, token, expected in (("unk", UNK, UNK_ID), ("bos", BOS, BOS_ID), ("eos", EOS, EOS_ID),
                                  ("pad", PAD, PAD_ID)):
        got = tokenizer.convert_tokens_to_ids(token)
        if got != expected:  # pragma: no cover - guards the construction above
            raise InputError(f"{model_type} tokenizer: {name} token {token} has id {got}, "
                             f"expected {expected}")
    return tokenizer


def _bpe_merges(pieces: list[tuple[str, float, int]]) -> list[tuple[str, str]]:
    """Every merge SentencePiece's BPE encoder can make: a pair of adjacent symbols whose
    concatenation is a normal piece, i.e. every split of every normal piece into two normal
    pieces. Ranked like SentencePiece's priority: higher score of the merged piece first (its
    id breaks exact ties, as SentencePiece's scores are -id for BPE); splits of one piece
    longest left part first."""
    normal = {p: i for i, (p, _, kind) in enumerate(pieces) if kind == NORMAL}
    merges = []
    for piece, i in normal.items():
        score = pieces[i][1]
        for cut in range(len(piece) - 1, 0, -1):
            left, right = piece[:cut], piece[cut:]
            if left in normal and right in normal:
                merges.append((-score, i, -cut, left, right))
    merges.sort()
    return [(left, right) for *_, left, right in merges]


def to_hf_tokenizer(model_file: str):
    """A ``transformers.PreTrainedTokenizerFast`` that encodes exactly like
    ``SentencePieceProcessor(model_file).encode(text)`` (same ids, byte pieces for unseen
    characters) for a unigram or BPE model trained by ``train_sentencepiece``.

    Construction: normaliser = replace each space by ``"▁"`` and prepend the dummy ``"▁"``
    (non-empty text only); no pre-tokenizer (SentencePiece encodes the whole unit at once);
    model = ``tokenizers.models.Unigram`` with the pieces' (quantised) scores, or
    ``tokenizers.models.BPE`` with the merges of ``_bpe_merges``, both with byte fallback;
    decoder = ``"▁"`` -> space, bytes -> characters, strip the dummy space.

    Unigram only: SentencePiece never matches ``<unk> <s> </s> <pad> <0xNN>`` against text, but
    ``tokenizers`` matches every vocabulary entry. All of them start with ``"<"``, so: if no
    piece longer than one character contains ``"<"``, the text is cut on each side of every
    ``"<"`` (a ``Split`` pre-tokenizer; every segmentation has those boundaries anyway);
    otherwise ``"<"`` is written as U+FDD0 (a noncharacter) in the text and in the normal pieces,
    so ``convert_ids_to_tokens`` shows U+FDD0 for ``"<"`` in those pieces (ids and decoding are
    unaffected).

    Specials as in the module docstring; no special tokens are added when encoding. Raises
    ``InputError`` for a model this construction does not cover (other normalisation, no byte
    fallback, user-defined pieces, unquantised unigram scores, ...).
    """
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

    path = str(model_file)
    try:
        raw = Path(path).read_bytes()
        spec = parse_spm_model(raw)
    except (OSError, ValueError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read the SentencePiece model ({err}): expected a .model file "
                         f"written by train_sentencepiece", path=path) from None
    problems = []
    if spec["model_type"] not in MODEL_TYPES:
        problems.append(f"model type {spec['model_type']} (expected unigram or bpe)")
    if not spec["byte_fallback"]:
        problems.append("no byte fallback")
    if spec["precompiled_charsmap"] or spec["normalizer_name"] not in ("identity", ""):
        problems.append(f"normalisation {spec['normalizer_name']!r} (expected identity)")
    if spec["remove_extra_whitespaces"]:
        problems.append("remove_extra_whitespaces=true")
    if not spec["add_dummy_prefix"] or not spec["escape_whitespaces"]:
        problems.append("no dummy prefix or no whitespace escaping")
    if spec["treat_whitespace_as_suffix"]:
        problems.append("whitespace as suffix")
    pieces = spec["pieces"]
    expected_head = list(SPECIALS) + list(BYTE_TOKENS)
    if [p for p, _, _ in pieces[:len(expected_head)]] != expected_head:
        problems.append("ids 0-259 are not <unk> <s> </s> <pad> <0x00>..<0xFF>")
    kinds = {kind for _, _, kind in pieces}
    if kinds - {NORMAL, UNKNOWN, CONTROL, BYTE}:
        problems.append("user-defined or unused pieces")
    if spec["model_type"] == "unigram" and any(
            kind == NORMAL and score != round(score / SCORE_QUANTUM) * SCORE_QUANTUM
            for _, score, kind in pieces):
        problems.append("unigram scores not on the 2**-8 grid (ties would be broken by "
                        "float32 rounding)")
    if problems:
        raise InputError("unsupported SentencePiece model: " + "; ".join(problems) +
                         ". Expected a model trained by fairppl.tokenizers.train_sentencepiece",
                         path=path)

    norm = [normalizers.Replace(" ", SPACE),
            normalizers.Prepend(SPACE)]  # tokenizers prepends nothing to "", like SentencePiece
    pre_tokenizer = None
    decode = [decoders.Replace(SPACE, " ")]
    if spec["model_type"] == "unigram":
        # `tokenizers` matches every vocabulary entry against the text, SentencePiece only the
        # normal pieces: keep "<unk>", "<s>", "</s>", "<pad>", "<0xNN>" (all start with "<")
        # from ever matching literal text.
        if any("<" in p and len(p) > 1 for p, _, kind in pieces if kind == NORMAL):
            # "<" occurs inside longer pieces (so it is a known character): write it as
            # _LT_ESCAPE in the text and in the normal pieces.
            if any(_LT_ESCAPE in p for p, _, _ in pieces):
                raise InputError(f"unsupported SentencePiece model: a piece contains "
                                 f"U+{ord(_LT_ESCAPE):04X}, which the converter reserves",
                                 path=path)
            vocab = [(p.replace("<", _LT_ESCAPE) if kind == NORMAL else p,
                      float(score) if kind == NORMAL else _UNMATCHABLE_SCORE)
                     for p, score, kind in pieces]
            norm.insert(0, normalizers.Replace("<", _LT_ESCAPE))
            decode.append(decoders.Replace(_LT_ESCAPE, "<"))
        else:
            # "<" is a piece of its own or unknown: every segmentation has a boundary on each
            # side of it, so cutting the text there changes nothing and nothing can match
            # across it.
            vocab = [(p, float(score) if kind == NORMAL else _UNMATCHABLE_SCORE)
                     for p, score, kind in pieces]
            pre_tokenizer = pre_tokenizers.Split("<", "isolated")
        model = models.Unigram(vocab, UNK_ID, True)
    else:  # BPE starts from characters and merges normal pieces only: nothing to guard
        vocab_ids = {p: i for i, (p, _, _) in enumerate(pieces)}
        model = models.BPE(vocab_ids, _bpe_merges(pieces), unk_token=UNK, fuse_unk=True,
                           byte_fallback=True, dropout=None)
    backend = Tokenizer(model)
    backend.normalizer = normalizers.Sequence(norm)
    backend.pre_tokenizer = pre_tokenizer
    backend.decoder = decoders.Sequence(decode + [
        decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    return _wrap(backend, spec["model_type"])


def char_tokenizer(train_texts: list[str]):
    """A character-level ``PreTrainedTokenizerFast`` for the neural character LM.

    Vocabulary: ``<unk>``=0 ``<s>``=1 ``</s>``=2 ``<pad>``=3, the byte tokens ``<0x00>``..
    ``<0xFF>`` at 4..259, then every character of ``train_texts`` (the space included, as an
    ordinary character), most frequent first, ties by code point. Every character is one token;
    a character not seen in training is its UTF-8 bytes as byte tokens (``"é"`` ->
    ``<0xC3> <0xA9>``). Nothing else is done to the text (no normaliser, no pre-tokenizer), so
    ``decode(encode(x)) == x``. No special tokens are added when encoding.
    Built as ``tokenizers.models.BPE`` with no merges and byte fallback.
    """
    from tokenizers import Tokenizer, decoders, models

    counts: Counter[str] = Counter()
    for text in train_texts:
        counts.update(text)
    chars = sorted(counts, key=lambda c: (-counts[c], ord(c)))
    vocab = {token: i for i, token in enumerate(list(SPECIALS) + list(BYTE_TOKENS))}
    for c in chars:
        vocab[c] = len(vocab)
    backend = Tokenizer(models.BPE(vocab, [], unk_token=UNK, fuse_unk=False, byte_fallback=True,
                                   dropout=None))
    backend.normalizer = None
    backend.pre_tokenizer = None
    backend.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])
    return _wrap(backend, "char")


def tokenize_units(tokenizer, texts: Iterable[str]) -> list[list[int]]:
    """Token ids of each unit, without special tokens (literal ``"<s>"`` stays characters)."""
    texts = list(texts)
    if not texts:
        return []
    encoded = tokenizer(texts, add_special_tokens=False, split_special_tokens=True,
                        return_attention_mask=False, return_token_type_ids=False)
    return [list(ids) for ids in encoded["input_ids"]]


def vocab_size(tokenizer) -> int:
    """The number of ids the tokenizer can emit (specials and byte tokens included): the size of
    an LM's output layer."""
    return len(tokenizer)
