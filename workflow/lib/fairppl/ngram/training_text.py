"""Training text for KenLM n-grams over the three token streams of the study.

A stream id names what one KenLM "word" is: ``char`` (characters, ``fairppl.ngram.char``),
``word-v{size|all}`` (words of a closed vocabulary, OOV words as the UNK class, ``all`` = the
train types seen at least twice, ``fairppl.ngram.word``) or ``spm-{type}-{size}`` (SentencePiece
pieces on the default tokenization, ``fairppl.ngram.subword``)."""

from __future__ import annotations

import os

from .char import write_training_text
from ..core.errors import InputError
from ..core.io import write_lines
from .subword import load_sentencepiece, pieces
from .word import ALL_MIN_COUNT, build_vocabulary, require_unk_training, words, write_unk_text


def write_stream(stream: str, texts: list[str], path: str | os.PathLike,
                 tokenizer: str | os.PathLike | None = None, where: str = "the corpus") -> dict:
    """Write the training text of ``stream`` for ``texts`` to ``path`` (one line per unit);
    return what was trained on: ``n_tokens`` and, for words, the vocabulary (``requested``: the
    size asked for, null for ``all``; ``min_count``: the fewest train occurrences of a vocabulary
    word, ``ALL_MIN_COUNT`` for ``all``; ``actual``: its size; ``n_train_types``; ``words``).
    ``tokenizer``: the SentencePiece model file of a ``spm-`` stream. ``where``: the
    corpus/language of ``texts``, named when a word vocabulary size is not below the number of
    train word types (``word_ngram.vocab_sizes``: no ``<unk>`` would be trained; refused)."""
    if stream == "char":
        write_training_text(texts, path)
        return {"n_tokens": sum(len(t) for t in texts)}
    if stream.startswith("word-v"):
        requested = stream.removeprefix("word-v")
        if requested == "all":
            vocab = build_vocabulary(texts, None, min_count=ALL_MIN_COUNT)
        else:
            vocab = build_vocabulary(texts, int(requested))
            require_unk_training(vocab, "word_ngram.vocab_sizes", where)
        write_unk_text(texts, vocab, path)
        return {"n_tokens": sum(len(words(t)) for t in texts), "requested": vocab.requested,
                "min_count": vocab.min_count, "actual": vocab.actual,
                "n_train_types": vocab.n_train_types, "words": list(vocab.words)}
    if stream.startswith("spm-"):
        if tokenizer is None:
            raise InputError(f"stream {stream!r} needs its SentencePiece model file")
        sp = load_sentencepiece(tokenizer)
        lines = [" ".join(pieces(sp, text)) for text in texts]
        write_lines(path, lines)
        return {"n_tokens": sum(len(line.split()) for line in lines)}
    raise InputError(f"unknown n-gram stream {stream!r} (expected char, word-v<size|all> or "
                     f"spm-<type>-<size>)")
