"""Test data shared by the marginal-likelihood tests: short German sentences from a closed word
list, and a small SentencePiece unigram model trained on them (always available, no study
artefact needed)."""

from __future__ import annotations

import random

WORDS = ("der die das und ist nicht ein eine mit von zu dem den Gott Himmel Erde Wasser sprach "
         "sah gut Licht Finsternis Tag Nacht schuf war Geist über alle").split()


def sentences(n: int, seed: int) -> list[str]:
    """``n`` sentences of 3-12 words drawn from WORDS (deterministic for a seed)."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(n)]


def train_unigram(workdir) -> str:
    """Train a 320-piece unigram model on 300 sentences into ``workdir``; its .model path."""
    from fairppl.tokenizers import train_sentencepiece

    train_sentencepiece(sentences(300, seed=1), "unigram", 320, str(workdir / "spm"),
                        allow_reduction=True)
    return str(workdir / "spm.model")
