"""Reading a SentencePiece ``.model`` (protobuf wire format, no protobuf dependency) and
rounding its unigram scores to the ``SCORE_QUANTUM`` grid (see the package doc for why)."""

from __future__ import annotations

import struct

SCORE_QUANTUM = 2.0 ** -8  # unigram piece scores are rounded to this grid (quantize_unigram_scores)

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


def on_grid(score: float) -> bool:
    """Whether ``score`` is a multiple of ``SCORE_QUANTUM`` (as ``quantize_unigram_scores``
    leaves every normal piece's score)."""
    return score == round(score / SCORE_QUANTUM) * SCORE_QUANTUM
