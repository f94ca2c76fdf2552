"""The character tokenizer of the neural character LM (``char_tokenizer``)."""

from __future__ import annotations

from collections import Counter

from .hf import wrap
from .vocab import BYTE_TOKENS, SPECIALS, UNK


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
    return wrap(backend, "char")
