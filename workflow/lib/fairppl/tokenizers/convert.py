"""``to_hf_tokenizer``: a SentencePiece model trained by ``train_sentencepiece`` as a
``transformers`` fast tokenizer that encodes id for id like SentencePiece."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import InputError
from ..core.integrity import verify
from .hf import wrap
from .spm_model import BYTE, CONTROL, NORMAL, UNKNOWN, on_grid, parse_spm_model
from .training import MODEL_TYPES
from .vocab import BYTE_TOKENS, SPACE, SPECIALS, UNK, UNK_ID

# SentencePiece never matches <unk>, <s>, </s>, <pad> or the byte pieces against text;
# `tokenizers`' Unigram puts every vocabulary entry into its trie. `to_hf_tokenizer` keeps a
# literal "<s>" or "<0x41>" from matching them (see there) and gives them this score, so that
# they are never preferred even before that guard. The unknown-character score (min score - 10)
# moves with it, which changes no best path: every path pays it once per unknown character.
_UNMATCHABLE_SCORE = -1.0e6
# Stands for "<" inside the `tokenizers` unigram model when "<" is part of longer pieces: a
# Unicode noncharacter, reserved for internal use, never in text.
_LT_ESCAPE = "\ufdd0"


def bpe_merges(pieces: list[tuple[str, float, int]]) -> list[tuple[str, str]]:
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
    ``tokenizers.models.BPE`` with the merges of ``bpe_merges``, both with byte fallback;
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
    verify(path)
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
            kind == NORMAL and not on_grid(score)
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
        model = models.BPE(vocab_ids, bpe_merges(pieces), unk_token=UNK, fuse_unk=True,
                           byte_fallback=True, dropout=None)
    backend = Tokenizer(model)
    backend.normalizer = normalizers.Sequence(norm)
    backend.pre_tokenizer = pre_tokenizer
    backend.decoder = decoders.Sequence(decode + [
        decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    return wrap(backend, spec["model_type"])
