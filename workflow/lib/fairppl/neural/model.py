"""The model: a randomly initialised ``LlamaForCausalLM`` and the special ids it is built with."""

from __future__ import annotations

from typing import Mapping

import torch

from ..core.errors import InputError
from .config import NeuralConfig


def check_special(vocab_size: int, bos_id: int, eos_id: int, pad_id: int) -> None:
    """InputError unless ``vocab_size`` >= 2 and the bos/eos/pad ids are token ids, the pad id
    apart from the other two."""
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 2:
        raise InputError(f"vocab_size must be an integer >= 2, got {vocab_size!r}")
    for name, value in (("bos", bos_id), ("eos", eos_id), ("pad", pad_id)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < vocab_size:
            raise InputError(f"special id {name} = {value!r} is not a token id in "
                             f"[0, {vocab_size})")
    if pad_id in (bos_id, eos_id):
        raise InputError(f"the pad id ({pad_id}) must differ from bos ({bos_id}) and eos "
                         f"({eos_id})")


def build_model(cfg: NeuralConfig, vocab_size: int, bos_id: int, eos_id: int, pad_id: int):
    """A randomly initialised ``LlamaForCausalLM`` (float32, tied embeddings) for ``cfg``.

    The initialisation draws from a private RNG seeded with ``cfg.seed`` (the global torch RNG is
    left as it was), so the same config gives the same weights.
    """
    from transformers import LlamaConfig, LlamaForCausalLM

    check_special(vocab_size, bos_id, eos_id, pad_id)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=cfg.d_model,
        intermediate_size=cfg.d_ff,
        num_hidden_layers=cfg.n_layers,
        num_attention_heads=cfg.n_heads,
        num_key_value_heads=cfg.n_heads,
        max_position_embeddings=cfg.context,
        initializer_range=0.02,
        rms_norm_eps=1e-6,
        attention_dropout=cfg.dropout,
        tie_word_embeddings=True,
        bos_token_id=bos_id,
        eos_token_id=eos_id,
        pad_token_id=pad_id,
        use_cache=True,   # for users of the saved model; train() passes use_cache=False
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        model = LlamaForCausalLM(config)
    model.to(torch.float32)
    sync_generation_config(model)
    return model


def sync_generation_config(model) -> None:
    """Copy the model config's bos/eos/pad ids into its generation config (when it has one)."""
    gen = getattr(model, "generation_config", None)
    if gen is not None:
        gen.bos_token_id = model.config.bos_token_id
        gen.eos_token_id = model.config.eos_token_id
        gen.pad_token_id = model.config.pad_token_id


def n_parameters(model) -> int:
    """Distinct trainable parameters (a tied embedding counts once)."""
    return sum(p.numel() for p in model.parameters())


def bos_eos_pad(special_ids: Mapping[str, int]) -> dict[str, int]:
    """The ``bos``, ``eos`` and ``pad`` entries of ``special_ids``; InputError when one is
    missing."""
    try:
        return {k: special_ids[k] for k in ("bos", "eos", "pad")}
    except (KeyError, TypeError):
        raise InputError(f"special_ids must map 'bos', 'eos' and 'pad' to token ids, got "
                         f"{special_ids!r}") from None


def special_ids_of(tokenizer) -> dict[str, int]:
    """``{"bos", "eos", "pad"}`` ids of a transformers tokenizer (all three must exist)."""
    out = {"bos": tokenizer.bos_token_id, "eos": tokenizer.eos_token_id,
           "pad": tokenizer.pad_token_id}
    missing = [k for k, v in out.items() if v is None]
    if missing:
        raise InputError(f"the tokenizer has no {', '.join(missing)} token: a neural LM needs "
                         f"<s>, </s> and <pad>")
    return out
