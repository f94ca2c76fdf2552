"""The one canonical way to score texts with a causal (token-level) language model.

Every pretrained or neural token LM in the study is scored here, so every number in the tables
follows the same conventions (also returned by :func:`conventions`, for tables and the report):

* **Units.** Each ``token_nats`` entry is the natural-log *negative* log-probability of one token
  given everything before it in its window, in **nats** (convert with
  :func:`fairppl.stats.metrics.nats_to_bits`). A unit's score is the sum over its scored tokens.
* **Every character is charged.** The text is encoded *without* the tokenizer's automatic special
  tokens (``add_special_tokens=False``) and with ``split_special_tokens=True``, so a literal
  ``"</s>"`` in the text is spelled out with ordinary tokens, never read as a control token. The
  scorer prepends the start-of-text token itself -- the tokenizer's BOS, or, if it has none, its
  EOS used as the start-of-text context (recorded as such) -- so the **first** real token is
  scored. With ``add_eos`` (default) the EOS token is appended and scored too: the end of the unit
  is charged, like the n-gram model's ``</s>``. ``start_token``/``end_token`` (vocabulary
  entries, e.g. a pretrained model's document separator instead of its chat markers) replace the
  BOS/EOS; a token not in the vocabulary is a ScoringError, never a silent ``<unk>``. The end
  token's cost is the unit's last ``token_nats`` entry, so tables can show it apart. The start
  token is context only, never scored.
  Every real token (and the EOS) is scored exactly once. (``add_bos=False`` makes the first text
  token context only; its cost is then missing from the unit: use it only to compare with tools
  that do that.)
* **Round trip.** ``tokenizer.decode(ids) == text`` is checked per unit (no special tokens skipped,
  no clean-up of spaces). A unit that fails (an ``<unk>``, a normaliser that rewrote characters)
  gets ``lossless=False``: its score is not a code length for the text; the caller must report or
  refuse it. Nothing is dropped silently.
* **Numerics.** ``model.eval()`` and ``torch.inference_mode()``; log-probabilities are computed in
  float32 as ``-log_softmax(logits)[target]`` (= ``logsumexp(logits) - logits[target]``), whatever
  the model's dtype. A NaN or infinite value raises :class:`fairppl.core.errors.ScoringError` naming
  the unit (its index in ``texts``) and the token position.
* **Batching.** Rows are sorted by length (longest first: an out-of-memory shows up at once) to
  cut padding, right-padded with the pad token (or EOS, or 0), and results come back in the
  original order. Padded positions are never scored. Right padding leaves every real token's
  position id unchanged and, under causal attention, no real token can attend to a pad, so the
  padding mask is not passed to the model (it changes nothing for scored positions, and with it
  CUDA's float32 SDPA kernel misscored Gemma-3 tokens); batched and one-at-a-time scores agree
  up to float rounding (tested; 1e-5 nats on CPU and H100).
* **Long units.** A unit whose input (start token + tokens) is longer than ``max_length`` (default:
  the model's ``max_position_embeddings``) is scored in windows of at most ``max_length`` input
  positions. The first window is the unit's start. Each later window is the start token followed
  by the ``stride`` tokens just before the window's first scored token (its left context, which is
  not scored again) and then new tokens up to ``max_length`` positions; so every token is scored
  exactly once, and every token outside the first window sees at least ``stride`` tokens of left
  context (plus the start token). Default ``stride`` = ``max_length // 2``.
* **lm-evaluation-harness.** ``conventions()["lm_eval_harness"]`` says which settings of its
  ``loglikelihood_rolling`` give these scores (less the end token) and what its defaults change
  (:mod:`fairppl.lm.lm_eval_harness`).
* **Vocabulary.** Before any work, the tokenizer's largest id (and the start, end and pad ids) must
  be below the model's number of output rows, else ScoringError names both sizes.

The layout of units into windows, rows and padded batches lives in :mod:`fairppl.lm.batches`,
the start/end token lookups in :mod:`fairppl.lm.special_tokens`; their public names are importable
from here too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import torch
import torch.nn.functional as F

from ..core.errors import ScoringError
from .lm_eval_harness import lm_eval_harness_settings
from .batches import (Row, model_max_length, model_vocab_rows, pad_batch,  # noqa: F401
                              prepare_batches, window_params)
from .special_tokens import end_token_id, start_token_id, token_id  # noqa: F401

#: Floats in one chunk of logits turned into log-probabilities at a time: 16 MiB of float32 on
#: CPU (cache-friendly), 256 MiB on GPU (few kernel launches).
_CHUNK_FLOATS = 1 << 22
_CHUNK_FLOATS_GPU = 1 << 26
#: Pass the padding mask to the model? No: with right padding and causal attention no real
#: position can see a pad, so the mask changes nothing for scored positions -- and passing it made
#: CUDA's float32 SDPA kernel misscore tokens of Gemma-3 (0.69 nats on one token of 2,000,
#: batched vs one-at-a-time; none without the mask or with eager attention; H100, torch 2.11).
_PASS_ATTENTION_MASK = False
#: Batches whose scores stay on the device before one transfer (and NaN check) to the host.
_FLUSH_BATCHES = 16


@dataclass
class UnitTokens:
    """The scored tokens of one unit.

    ``token_ids``: the ids that were scored, in order (the text's tokens, then EOS if charged);
    ``token_nats``: their negative log-probabilities in nats; ``lossless``: whether decoding the
    text's ids gives back the text exactly (see the module docstring).
    """

    token_ids: list[int]
    token_nats: list[float]
    lossless: bool = True
    n_windows: int = field(default=1)

    @property
    def n_tokens(self) -> int:
        """Number of scored tokens (EOS included when charged)."""
        return len(self.token_ids)

    @property
    def nats(self) -> float:
        """Total negative log-probability of the unit, in nats (an exact float sum)."""
        return math.fsum(self.token_nats)

    @property
    def bits(self) -> float:
        """Total code length of the unit, in bits."""
        return self.nats / math.log(2.0)


# ---------------------------------------------------------------------------------------------
# Conventions
# ---------------------------------------------------------------------------------------------

def conventions(tokenizer, model=None, *, max_length: int | None = None,
                stride: int | None = None, add_bos: bool = True, add_eos: bool = True,
                start_token: str | None = None, end_token: str | None = None) -> dict[str, object]:
    """The scoring conventions for this tokenizer (and model) as a flat dict of plain values,
    for a table column or the report. Same arguments as :func:`score_texts`."""
    start_id, start_kind = start_token_id(tokenizer, start_token)
    end_id = end_token_id(tokenizer, end_token)
    max_length, stride = window_params(model, max_length, stride, add_bos)
    dtype = (str(next(model.parameters()).dtype).removeprefix("torch.") if model is not None
             else "float32")
    if not add_bos:
        start = "none: the first text token is context only (not charged)"
    elif start_kind == "given":
        start = "given start token prepended as context; the first text token is charged"
    elif start_kind == "bos":
        start = "BOS prepended as context; the first text token is charged"
    else:
        start = "no BOS in this tokenizer: EOS prepended as start-of-text context"
    return {
        "log_base": "e",
        "score_unit": "nats (negative log-probability per scored token; sum per unit)",
        "text_encoding": "add_special_tokens=False, split_special_tokens=True",
        "start_token": tokenizer.convert_ids_to_tokens(start_id) if add_bos else None,
        "start_token_id": start_id if add_bos else None,
        "start_token_role": start,
        "end_token": tokenizer.convert_ids_to_tokens(end_id) if add_eos else None,
        "end_token_id": end_id if add_eos else None,
        "end_token_role": (("given end token" if end_token is not None else "the tokenizer's EOS")
                           + ", appended and charged (its bits: the last scored token)"
                           if add_eos else "none: the end of the unit is not charged"),
        "end_charged": bool(add_eos),
        "max_length": max_length,
        "stride": stride,
        "windowing": ("none (no positional limit)" if max_length is None else
                      f"windows of <= {max_length} input positions; each later window = start "
                      f"token + {stride} tokens of left context + new tokens; every token "
                      f"scored once"),
        "dtype": dtype,
        "precision": (f"{dtype} weights and forward pass; float32 -log_softmax at the target "
                      f"(fused cross-entropy)"),
        "padding": ("right padding, rows sorted by length; no padding mask passed (causal "
                    "attention: no real token sees a pad)"),
        "lossless_check": "decode(ids, skip_special_tokens=False) == text",
        "lm_eval_harness": lm_eval_harness_settings(tokenizer, start_token=start_token,
                                                    add_bos=add_bos, add_eos=add_eos,
                                                    max_length=max_length),
    }


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------

def token_nats_from_logits(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Negative log-probability in nats (float32) of ``targets`` (shape ``[N]``) under
    ``logits`` (shape ``[N, V]``): ``-log_softmax(logits)[target]`` = ``logsumexp(logits) -
    logits[target]``, by the fused cross-entropy kernel, in float32, over chunks of rows (a few
    MiB on CPU, where cache-sized chunks run ~3x faster than one big call; 256 MiB on GPU)."""
    n, vocab = logits.shape
    if targets.shape != (n,):
        raise ValueError(f"targets of shape {tuple(targets.shape)} for logits of shape "
                         f"{tuple(logits.shape)}: expected ({n},)")
    chunk_floats = _CHUNK_FLOATS if logits.device.type == "cpu" else _CHUNK_FLOATS_GPU
    step = max(1, chunk_floats // max(1, vocab))
    if n <= step:
        return F.cross_entropy(logits.float(), targets, reduction="none")
    out = torch.empty(n, dtype=torch.float32, device=logits.device)
    for lo in range(0, n, step):
        out[lo:lo + step] = F.cross_entropy(logits[lo:lo + step].float(),
                                            targets[lo:lo + step], reduction="none")
    return out


def check_vocab(model, tokenizer) -> int:
    """Raise ScoringError unless every id the tokenizer can produce (and its BOS/EOS/pad ids) is
    a row of the model's output layer; return the number of rows."""
    rows = model_vocab_rows(model)
    vocab = tokenizer.get_vocab()
    tok_max = max(vocab.values()) if vocab else -1
    if tok_max >= rows:
        raise ScoringError(
            f"vocabulary mismatch: the tokenizer has ids up to {tok_max} ({len(vocab)} tokens) "
            f"but the model's output layer has only {rows} rows (vocab_size "
            f"{getattr(model.config, 'vocab_size', '?')}): they do not belong together")
    for name in ("bos_token_id", "eos_token_id", "pad_token_id"):
        value = getattr(tokenizer, name, None)
        if value is not None and value >= rows:
            raise ScoringError(f"vocabulary mismatch: the tokenizer's {name} is {value} but "
                               f"the model's output layer has only {rows} rows")
    return rows


def model_device(model) -> torch.device:
    """The device of the model's (first) parameters; CPU for a model without parameters."""
    try:
        return next(model.parameters()).device
    except StopIteration:
        return torch.device("cpu")


@torch.inference_mode()
def score_texts(model, tokenizer, texts: Sequence[str], *, batch_size: int = 16,
                max_length: int | None = None, stride: int | None = None, add_bos: bool = True,
                add_eos: bool = True, device=None, progress: bool = True,
                max_batch_tokens: int | None = None, start_token: str | None = None,
                end_token: str | None = None) -> list[UnitTokens]:
    """Score every unit of ``texts`` with a causal LM; return one :class:`UnitTokens` per unit,
    in the order of ``texts``. Conventions (start/end tokens, windows, precision, checks): see
    the module docstring and :func:`conventions`.

    ``batch_size``: rows per forward pass; ``max_batch_tokens``: padded tokens per forward pass
    (default: 2**28 / vocabulary size, about 1 GiB of float32 logits); ``max_length`` and
    ``stride``: window size and left context for long units; ``device``: where to run (default:
    where the model is; the model is moved if another is given); ``start_token`` and
    ``end_token``: the start context and the charged end of each unit (default: the tokenizer's
    BOS, else EOS, and its EOS).

    Raises ScoringError on a vocabulary mismatch (before any work) and on a NaN/infinite
    log-probability (naming the unit index and token position).
    """
    if isinstance(texts, str):
        raise TypeError("texts must be a list of strings, not one string")
    texts = list(texts)
    check_vocab(model, tokenizer)
    if device is not None:
        model.to(device)
    device = model_device(model)
    model.eval()
    encoded, batches = prepare_batches(
        tokenizer, texts, model=model, batch_size=batch_size, max_length=max_length,
        stride=stride, add_bos=add_bos, add_eos=add_eos, max_batch_tokens=max_batch_tokens,
        start_token=start_token, end_token=end_token)
    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        pad_id = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0

    end_id = end_token_id(tokenizer, end_token)
    n_units = len(texts)
    full_ids: list[list[int]] = []
    for ids in encoded:  # the scored tokens: (start + text + end)[1:]
        full = ([0] if add_bos else []) + list(ids) + ([end_id] if add_eos else [])
        full_ids.append(full[1:])
    nats: list[list[float]] = [[math.nan] * len(ids) for ids in full_ids]
    windows = [0] * n_units
    lossless: list[bool | None] = [None] * n_units

    total = sum(len(ids) for ids in full_ids)
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=total, unit="tok", desc="scoring", mininterval=2.0)
    pending: list[tuple[list[Row], torch.Tensor]] = []

    def flush() -> None:
        # one device->host transfer for several batches: the next forward passes are queued
        # while this runs, and the host never waits on the device inside the loop
        if not pending:
            return
        values = torch.cat([v for _, v in pending]).cpu().tolist()
        offset = 0
        for batch, _ in pending:
            for row in batch:
                count = len(row.inputs) - row.n_skip
                chunk = values[offset:offset + count]
                if not all(map(math.isfinite, chunk)):
                    k = next(k for k, v in enumerate(chunk) if not math.isfinite(v))
                    raise ScoringError(
                        f"unit {row.unit}: token {row.first + k} (counting from 0 over the "
                        f"unit's scored tokens, id {full_ids[row.unit][row.first + k]}) has "
                        f"negative log-probability {chunk[k]}: the model produced NaN/inf "
                        f"(broken weights or overflow)")
                nats[row.unit][row.first:row.first + count] = chunk
                windows[row.unit] += 1
                offset += count
        pending.clear()

    try:
        for batch in batches:
            inputs, mask, targets, scored = pad_batch(batch, pad_id, device)
            logits = model(input_ids=inputs,
                           attention_mask=mask if _PASS_ATTENTION_MASK else None,
                           use_cache=False).logits
            # all positions of the batch in a few large chunks (padding included: a few %),
            # then the scored ones: far fewer kernel launches than one call per row
            all_nats = token_nats_from_logits(logits.reshape(-1, logits.shape[-1]),
                                              targets.reshape(-1))
            pending.append((batch, all_nats[scored]))
            # round-trip check of the units that start in this batch, while the device works
            starts = [row.unit for row in batch if row.first == 0]
            for unit, text in zip(starts, tokenizer.batch_decode(
                    [list(encoded[u]) for u in starts], skip_special_tokens=False,
                    clean_up_tokenization_spaces=False)):
                lossless[unit] = text == texts[unit]
            del logits
            if bar is not None:
                bar.update(sum(len(row.inputs) - row.n_skip for row in batch))
            if len(pending) >= _FLUSH_BATCHES:
                flush()
        flush()
    finally:
        if bar is not None:
            bar.close()

    for unit in range(n_units):  # units with nothing to score (empty text, no EOS)
        if lossless[unit] is None:
            lossless[unit] = tokenizer.decode(list(encoded[unit]), skip_special_tokens=False,
                                              clean_up_tokenization_spaces=False) == texts[unit]
    out = []
    for i in range(n_units):
        if full_ids[i] and windows[i] == 0:  # a bug in the windowing, never user input
            raise AssertionError(f"unit {i}: its tokens were not scored")
        out.append(UnitTokens(token_ids=full_ids[i], token_nats=nats[i],
                              lossless=bool(lossless[i]), n_windows=windows[i]))
    return out
