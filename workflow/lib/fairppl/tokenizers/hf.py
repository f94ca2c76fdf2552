"""The ``transformers`` side shared by every tokenizer here: the fast-tokenizer wrapper (specials,
no automatic special tokens, no decode clean-up) and encoding units without special tokens."""

from __future__ import annotations

from typing import Iterable

from ..core.errors import InputError
from .vocab import BOS, BOS_ID, EOS, EOS_ID, PAD, PAD_ID, UNK, UNK_ID


def wrap(backend, model_type: str):
    """A ``PreTrainedTokenizerFast`` around ``backend`` with the shared special tokens (vocab),
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
