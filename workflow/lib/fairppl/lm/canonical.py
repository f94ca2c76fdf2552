"""Is a converted tokenizer the model's own? Token ids checked against a reference built from the
GGUF file.

The scorer's round-trip check (``decode(encode(text)) == text``) proves a tokenizer lossless, not
that it cuts text the way the model was trained to read it: transformers rebuilds a GGUF model's
tokenizer (for Gemma even its merges) from the file's metadata, and a wrong pre-tokenizer or merge
order still round-trips while giving the model token sequences it never saw, which inflates its
bits. So :func:`check_canonical` encodes a fixed set of texts with the converted tokenizer and
with an independent reference built straight from the GGUF metadata, and fails on the first id
that differs:

* ``tokenizer.ggml.model == "gpt2"`` (byte-level BPE, e.g. SmolLM2): a ``tokenizers`` BPE of the
  file's vocabulary and merges, with the pre-tokenizer that llama.cpp uses for the file's
  ``tokenizer.ggml.pre`` (:data:`BYTE_LEVEL_PRE`): e.g. ``smollm`` splits every digit, then the
  GPT-2 byte-level regex;
* ``tokenizer.ggml.model == "llama"`` (SentencePiece, e.g. Gemma-3): the ``sentencepiece``
  library itself, on a ModelProto serialised here from the file's tokens, scores and token types
  (the GGUF *is* that model, minus the proto wrapping; see :func:`sentencepiece_proto`).

Any other tokenizer model or pre-tokenizer name has no reference here and is an error (add one:
the check is never skipped silently). Both sides encode the raw text without special tokens;
control tokens spelled in the text are plain text to both.
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path
from typing import Callable, Sequence

from .gguf_meta import read_gguf_metadata

#: Texts that exercise pre-tokenisation rules (digits, runs of spaces, line breaks, scripts,
#: combining marks, emoji), checked besides the corpus texts.
EDGE_TEXTS = [
    "In the year 2024, 1,234.56 people read John 3:16 -- twice.",
    "  two leading spaces, three   inside and a trailing one ",
    "line one\nline two\n\nafter a blank line\tand a tab",
    "Im Anfang schuf Gott Himmel und Erde. Straße, Äpfel, naïve façade.",
    "В начале сотворил Бог небо и землю. 12 апостолов.",
    "فِي الْبَدْءِ خَلَقَ اللهُ السَّمَاوَاتِ وَالأَرْضَ ١٢٣",
    "आदि में परमेश्वर ने आकाश और पृथ्वी की सृष्टि की। १२३",
    "起初，神创造天地。第3章，共２０节。",
    "e\u0301 (e + combining acute) vs \u00e9; emoji 🙂👍🏽; zero\u200bwidth; ‘quotes’ “double”",
    "<|endoftext|> </s> <eos> [CLS] spelled out as text",
]

#: llama.cpp's pre-tokenizer names (``tokenizer.ggml.pre``) of byte-level BPE files that have a
#: reference here, and whether digits are split one by one before the GPT-2 byte-level regex.
BYTE_LEVEL_PRE = {"smollm": True, "gpt-2": False, "default": False}


class TokenizationError(RuntimeError):
    """A converted tokenizer disagrees with the reference (or has none)."""


def read_gguf_tokenizer(gguf_path: str | Path) -> dict:
    """The tokenizer metadata of a GGUF file: ``model``, ``pre``, ``tokens``, ``token_type``,
    ``scores`` (or None), ``merges`` (or None), ``add_space_prefix``, ``bos_id``, ``eos_id``,
    ``unk_id`` (read by :func:`fairppl.lm.gguf_meta.read_gguf_metadata`)."""
    fields = read_gguf_metadata(gguf_path, prefix="tokenizer.ggml.")

    def value(key, default=None):
        return fields.get(f"tokenizer.ggml.{key}", default)

    return {"model": value("model"), "pre": value("pre", "default"),
            "tokens": value("tokens"), "token_type": value("token_type"),
            "scores": value("scores"), "merges": value("merges"),
            "add_space_prefix": value("add_space_prefix"),
            "bos_id": value("bos_token_id"), "eos_id": value("eos_token_id"),
            "unk_id": value("unknown_token_id")}


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, wire: int, payload: bytes) -> bytes:
    return _varint(number << 3 | wire) + payload


def _bytes_field(number: int, data: bytes) -> bytes:
    return _field(number, 2, _varint(len(data)) + data)


def _int_field(number: int, value: int) -> bytes:
    return _field(number, 0, _varint(value))


def sentencepiece_proto(meta: dict) -> bytes:
    """A serialised ``sentencepiece.ModelProto`` of a ``llama``-type GGUF tokenizer (field numbers
    of sentencepiece_model.proto): every token as a piece with its score and type (GGUF token
    types use SentencePiece's numbering: 1 normal, 2 unknown, 3 control, 4 user-defined, 5
    unused, 6 byte; the unknown-token id is typed unknown, and spaces inside pieces are written
    as U+2581, as SentencePiece stores them), a BPE trainer spec with byte fallback when the file has byte pieces, and an
    identity normaliser that escapes spaces as U+2581 and adds a dummy prefix only when the
    file's ``add_space_prefix`` says so."""
    tokens, scores, types = meta["tokens"], meta["scores"], meta["token_type"]
    if scores is None or types is None:
        raise TokenizationError("the GGUF's SentencePiece tokenizer has no scores or token "
                                "types: no reference model can be built")
    # SentencePiece needs its unknown piece typed as such; GGUFs often type it "control"
    unk = meta.get("unk_id")
    if unk is None:
        unk = next((i for i, kind in enumerate(types) if int(kind) == 2), 0)
    pieces = bytearray()
    for i, (token, score, kind) in enumerate(zip(tokens, scores, types)):
        kind = 2 if i == unk else int(kind)
        # SentencePiece matches pieces in text whose spaces are escaped as U+2581; llama.cpp's
        # converter writes user-defined space runs with real spaces: escape them back
        token = token.replace(" ", "\u2581")
        piece = (_bytes_field(1, token.encode("utf-8")) + _field(2, 5, struct.pack("<f", score))
                 + _int_field(3, kind if kind in range(1, 7) else 1))
        pieces += _bytes_field(1, piece)
    trainer = (_int_field(3, 2)  # model_type = BPE
               + _int_field(4, len(tokens))
               + _int_field(35, int(any(int(k) == 6 for k in types)))  # byte_fallback
               + _int_field(40, unk)
               + _int_field(41, meta["bos_id"] if meta["bos_id"] is not None else -1 & (2**64 - 1))
               + _int_field(42, meta["eos_id"] if meta["eos_id"] is not None else -1 & (2**64 - 1))
               + _int_field(43, 2**64 - 1))  # pad_id = -1 (pad is looked up by piece)
    normalizer = (_bytes_field(1, b"identity") + _int_field(3, int(bool(meta["add_space_prefix"])))
                  + _int_field(4, 0) + _int_field(5, 1))
    return bytes(pieces) + _bytes_field(2, trainer) + _bytes_field(3, normalizer)


def reference_encoder(meta: dict) -> tuple[Callable[[list[str]], list[list[int]]], str]:
    """``(encode, description)``: a function from texts to token ids built only from the GGUF
    metadata ``meta`` (see the module docstring), and what it is, in words."""
    if meta["model"] == "gpt2":
        from tokenizers import Tokenizer, models, pre_tokenizers
        from tokenizers.pre_tokenizers import ByteLevel

        if meta["pre"] not in BYTE_LEVEL_PRE or meta["merges"] is None:
            raise TokenizationError(
                f"byte-level BPE with pre-tokenizer {meta['pre']!r}: no reference for it "
                f"(known: {sorted(BYTE_LEVEL_PRE)}); add its rule to fairppl.lm.canonical")
        vocab = {token: i for i, token in enumerate(meta["tokens"])}
        merges = [tuple(merge.split(" ", 1)) for merge in meta["merges"]]
        tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
        steps = [ByteLevel(add_prefix_space=False, use_regex=True)]
        if BYTE_LEVEL_PRE[meta["pre"]]:
            steps.insert(0, pre_tokenizers.Digits(individual_digits=True))
        tok.pre_tokenizer = pre_tokenizers.Sequence(steps)

        def encode(texts):
            return [e.ids for e in tok.encode_batch(list(texts), add_special_tokens=False)]

        digits = "digits split one by one, then " if BYTE_LEVEL_PRE[meta["pre"]] else ""
        return encode, (f"tokenizers BPE from the GGUF's {len(vocab)} tokens and {len(merges)} "
                        f"merges; pre-tokenizer '{meta['pre']}': {digits}GPT-2 byte-level regex")
    if meta["model"] == "llama":
        import sentencepiece

        proc = sentencepiece.SentencePieceProcessor(model_proto=sentencepiece_proto(meta))

        def encode(texts):
            return [list(ids) for ids in proc.encode(list(texts), out_type=int)]

        return encode, (f"sentencepiece {sentencepiece.__version__} on a ModelProto of the GGUF's "
                        f"{len(meta['tokens'])} pieces, scores and types")
    raise TokenizationError(f"tokenizer model {meta['model']!r}: no reference for it (known: "
                            f"'gpt2' byte-level BPE, 'llama' SentencePiece)")


def repair_pre_tokenizer(tokenizer, meta: dict) -> str | None:
    """Give a byte-level BPE ``tokenizer`` (transformers, converted from the GGUF of ``meta``)
    the digit split its pre-tokenizer name calls for, if the conversion left it out (transformers
    does for ``smollm``: numbers in other scripts, e.g. Arabic-Indic digits, were then cut
    differently from the model's training); return what was changed, or None."""
    from tokenizers import pre_tokenizers
    from tokenizers.pre_tokenizers import ByteLevel

    if meta["model"] != "gpt2" or not BYTE_LEVEL_PRE.get(meta["pre"], False):
        return None
    backend = tokenizer.backend_tokenizer
    if "Digits" in str(backend.pre_tokenizer):
        return None
    before = type(backend.pre_tokenizer).__name__
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True),
         ByteLevel(add_prefix_space=False, use_regex=True)])
    return (f"pre-tokenizer {before} replaced by Digits(individual) + ByteLevel, as "
            f"'{meta['pre']}' prescribes")


def first_difference(a: Sequence[int], b: Sequence[int]) -> int | None:
    """The first index where ``a`` and ``b`` differ (the shorter length if one is a prefix of
    the other), or None if they are equal."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def check_canonical(tokenizer, gguf_path: str | Path, texts: Sequence[str], *,
                    model: str, meta: dict | None = None) -> dict:
    """Encode ``EDGE_TEXTS + texts`` with ``tokenizer`` (transformers, no special tokens, special
    tokens in the text split as plain text) and with the reference of ``gguf_path``; raise
    TokenizationError naming ``model``, the text and the first differing token position on a
    mismatch; return a record of the check (reference, text and token counts, sha256 of the
    texts) for the model's provenance file. ``meta``: the file's :func:`read_gguf_tokenizer`,
    where the caller has read it already."""
    all_texts = EDGE_TEXTS + [t for t in texts if t]
    try:
        encode, reference = reference_encoder(meta if meta is not None
                                               else read_gguf_tokenizer(gguf_path))
    except TokenizationError as err:
        raise TokenizationError(f"model {model!r} ({Path(gguf_path).name}): {err}") from None
    expected = encode(all_texts)
    got = tokenizer(all_texts, add_special_tokens=False, split_special_tokens=True,
                    return_attention_mask=False)["input_ids"]
    for text, want, have in zip(all_texts, expected, got):
        pos = first_difference(want, have)
        if pos is not None:
            show = tokenizer.convert_ids_to_tokens
            raise TokenizationError(
                f"model {model!r}: the converted tokenizer does not reproduce the model's own "
                f"segmentation of {text[:120]!r}: first difference at token {pos}: reference "
                f"{want[pos:pos + 3]} {show(list(want[pos:pos + 3]))} vs converted "
                f"{have[pos:pos + 3]} {show(list(have[pos:pos + 3]))} (reference: {reference})")
    digest = hashlib.sha256("\n".join(all_texts).encode("utf-8")).hexdigest()
    return {"reference": reference, "texts": len(all_texts),
            "tokens": sum(len(ids) for ids in expected), "mismatches": 0,
            "texts_sha256": digest}
