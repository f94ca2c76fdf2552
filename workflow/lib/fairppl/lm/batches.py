"""Laying units out for a causal LM: windows for long units, rows, batches, right padding.

The conventions these implement are the contract of :mod:`fairppl.lm.scoring` (its module
docstring): the start token is context only; a unit longer than ``max_length`` input positions is
cut into windows, each later window re-reading ``stride`` tokens of left context that are not
scored again, so every token is scored exactly once; rows are sorted longest first and
right-padded. Nothing here runs a model: :func:`prepare_batches` is also what the benchmark times
a bare forward loop on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from ..core.errors import ScoringError
from .special_tokens import end_token_id, start_token_id

#: Default padded tokens per batch: logits of a batch stay near 1 GiB in float32.
_BATCH_LOGIT_FLOATS = 1 << 28


@dataclass
class Row:
    """One model input: a unit, or one window of a long unit."""

    unit: int           # index of the unit in ``texts``
    inputs: list[int]   # model input ids (at most max_length)
    targets: list[int]  # the next token after each input position
    n_skip: int         # leading targets that are context only (scored in an earlier window)
    first: int          # index, among the unit's scored tokens, of this row's first scored one


def text_config(model):
    """The model's configuration of its text decoder (a multimodal model's text part, e.g.
    Gemma-3's; the model's own configuration otherwise)."""
    config = model.config
    return config.get_text_config() if hasattr(config, "get_text_config") else config


def model_max_length(model) -> int | None:
    """The model's positional limit (``max_position_embeddings`` or ``n_positions``), or None."""
    config = text_config(model)
    for name in ("max_position_embeddings", "n_positions", "n_ctx"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def model_vocab_rows(model) -> int:
    """Rows of the model's output distribution (output embedding rows, else config.vocab_size)."""
    out = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    weight = getattr(out, "weight", None)
    if weight is not None:
        return int(weight.shape[0])
    return int(text_config(model).vocab_size)


def window_params(model, max_length, stride, add_bos) -> tuple[int | None, int | None]:
    """``(max_length, stride)`` in tokens: the window size (default: the model's positional
    limit; None, None without one) and the left context re-read by each later window (default
    ``max_length // 2``). ValueError for a window under 2 or a stride that does not fit."""
    if max_length is None:
        max_length = model_max_length(model) if model is not None else None
    if max_length is None:
        return None, None
    max_length = int(max_length)
    if max_length < 2:
        raise ValueError(f"max_length={max_length}: expected at least 2")
    if stride is None:
        stride = max_length // 2
    stride = int(stride)
    prefix = 1 if add_bos else 0
    if not 1 <= stride <= max_length - prefix:
        raise ValueError(f"stride={stride}: expected 1 <= stride <= max_length - {prefix} "
                         f"= {max_length - prefix} (tokens of left context kept per window)")
    return max_length, stride


def unit_rows(unit: int, full: list[int], prefix: list[int], max_length: int | None,
              stride: int | None) -> list[Row]:
    """Rows (windows) scoring ``full[1:]`` given ``full[0]``: see :mod:`fairppl.lm.scoring`."""
    n = len(full) - 1  # tokens to score: full[1..n]
    if n <= 0:
        return []
    if max_length is None or n <= max_length:
        return [Row(unit, full[:-1], full[1:], 0, 0)]
    rows = []
    p = 1  # full index of the next token to score
    while p <= n:
        if p == 1:
            c0, pre = 0, []
        else:
            c0, pre = p - stride, prefix
        e = min(c0 + max_length - len(pre), n)  # last full index scored in this window
        seq = pre + full[c0:e + 1]
        rows.append(Row(unit, seq[:-1], seq[1:], p - c0 - 1 + len(pre), p - 1))
        p = e + 1
    return rows


def length_batches(lengths: list[int], batch_size: int, max_batch_tokens: int) -> list[list[int]]:
    """Indices of ``lengths`` grouped into batches, longest first (equal lengths in input order),
    of at most ``batch_size`` rows and at most ``max_batch_tokens`` padded positions (a single
    longer row is a batch of its own)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches, current = [], []
    for i in order:
        if current and (len(current) >= batch_size
                        or lengths[current[0]] * (len(current) + 1) > max_batch_tokens):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def make_batches(rows: list[Row], batch_size: int, max_batch_tokens: int) -> list[list[Row]]:
    """Group ``rows`` into batches by :func:`length_batches` of their input lengths."""
    return [[rows[i] for i in batch]
            for batch in length_batches([len(r.inputs) for r in rows], batch_size,
                                        max_batch_tokens)]


def pad_batch(batch: list[Row], pad_id: int, device) -> tuple[torch.Tensor, ...]:
    """Right-padded ``(input_ids, attention_mask, targets, scored)`` of a batch, on ``device``;
    ``scored`` holds the flat positions (row * width + column) of the scored targets, row by
    row, in order."""
    width = len(batch[0].inputs)
    inputs = torch.full((len(batch), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    targets = torch.zeros((len(batch), width), dtype=torch.long)
    scored = []
    for i, row in enumerate(batch):
        m = len(row.inputs)
        inputs[i, :m] = torch.tensor(row.inputs, dtype=torch.long)
        targets[i, :m] = torch.tensor(row.targets, dtype=torch.long)
        mask[i, :m] = 1
        scored.append(torch.arange(i * width + row.n_skip, i * width + m))
    tensors = (inputs, mask, targets, torch.cat(scored))
    if torch.device(device).type == "cuda":  # asynchronous copies: the host runs ahead
        return tuple(t.pin_memory().to(device, non_blocking=True) for t in tensors)
    return tuple(t.to(device) for t in tensors)


def prepare_batches(tokenizer, texts: Sequence[str], *, model=None, batch_size: int = 16,
                    max_length: int | None = None, stride: int | None = None,
                    add_bos: bool = True, add_eos: bool = True,
                    max_batch_tokens: int | None = None, start_token: str | None = None,
                    end_token: str | None = None):
    """Tokenise ``texts`` and lay them out as the scorer does: returns ``(encoded, batches)``
    where ``encoded[i]`` is unit i's text ids and ``batches`` a list of lists of rows, each row
    with ``inputs``, ``targets``, ``n_skip`` (leading context-only targets), ``unit``, ``first``.
    Used by :func:`fairppl.lm.scoring.score_texts` and by the benchmark (to time a bare forward loop on the very
    same batches)."""
    if isinstance(texts, str):
        raise TypeError("texts must be a list of strings, not one string")
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is {type(text).__name__}: expected str")
    if batch_size < 1:
        raise ValueError(f"batch_size={batch_size}: expected at least 1")
    max_length, stride = window_params(model, max_length, stride, add_bos)
    start_id, _ = start_token_id(tokenizer, start_token)
    eos_id = end_token_id(tokenizer, end_token)
    if add_eos and eos_id is None:
        raise ScoringError("add_eos=True but the tokenizer has no EOS token: pass add_eos=False "
                           "(and record that the end of each unit is not charged)")
    if max_batch_tokens is None:
        vocab = model_vocab_rows(model) if model is not None else len(tokenizer)
        max_batch_tokens = max(1, _BATCH_LOGIT_FLOATS // max(1, vocab))
    encoded = (tokenizer(texts, add_special_tokens=False, split_special_tokens=True,
                         return_attention_mask=False)["input_ids"] if texts else [])
    prefix = [start_id] if add_bos else []
    rows = []
    for i, ids in enumerate(encoded):
        full = prefix + list(ids) + ([eos_id] if add_eos else [])
        rows.extend(unit_rows(i, full, prefix, max_length, stride))
    return encoded, make_batches(rows, batch_size, max_batch_tokens)

