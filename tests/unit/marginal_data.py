"""Test data shared by the marginal-likelihood tests: short German sentences from a closed word
list, and a small SentencePiece unigram model trained on them (always available, no study
artefact needed)."""

from __future__ import annotations

import random

WORDS = ("der die das und ist nicht ein eine mit von zu dem den Gott Himmel Erde Wasser sprach "
         "sah gut Licht Finsternis Tag Nacht schuf war Geist über alle").split()


def sentences(n: int, seed: int, words: list[str] = WORDS, longest: int = 12) -> list[str]:
    """``n`` sentences of 3 to ``longest`` words drawn from ``words`` (deterministic for a
    seed)."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(words) for _ in range(rng.randint(3, longest)))
            for _ in range(n)]


def train_unigram(workdir) -> str:
    """Train a 320-piece unigram model on 300 sentences into ``workdir``; its .model path."""
    from fairppl.tokenizers import train_sentencepiece

    train_sentencepiece(sentences(300, seed=1), "unigram", 320, str(workdir / "spm"),
                        allow_reduction=True)
    return str(workdir / "spm.model")


def train_piece_ngram(workdir, spm_model, texts: list[str]):
    """A 3-gram KenLM (binary, ``workdir/m.kenlm``) over the unigram pieces of ``texts``, built
    with the test session's KenLM programs (the ``resources_ready`` fixture sets
    FAIRPPL_KENLM_BIN); its path."""
    import os
    from pathlib import Path

    from fairppl.ngram.kenlm_tool import train_model
    from fairppl.ngram.subword import load_sentencepiece, pieces

    sp = load_sentencepiece(spm_model)
    corpus = workdir / "pieces.txt"
    corpus.write_text("".join(" ".join(pieces(sp, t)) + "\n" for t in texts), encoding="utf-8")
    binary = Path(os.environ["FAIRPPL_KENLM_BIN"])
    train_model(corpus, workdir / "m.kenlm", order=3, lmplz=binary / "lmplz",
                build_binary=binary / "build_binary", tmpdir=workdir / "tmp")
    return workdir / "m.kenlm"


def tiny_piece_ngram(workdir):
    """``(kenlm file, .model file)``: :func:`train_unigram` and a :func:`train_piece_ngram` over
    200 of :func:`sentences` (needs the ``resources_ready`` fixture)."""
    spm = train_unigram(workdir)
    return train_piece_ngram(workdir, spm, sentences(200, 3)), spm
