"""Training and evaluation data: units packed into blocks of ``context`` tokens (see the package
doc, "Training data"), and the SHA-256 that ties a checkpoint to its data."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

import torch

from ..core.errors import InputError


@dataclass
class Packed:
    """Training or evaluation blocks: token ids, position ids, which tokens are targets, and the
    real tokens' count."""
    blocks: torch.Tensor     # [n, context] token ids (pad at the tail)
    positions: torch.Tensor  # [n, context] position ids (within-unit, or running if not isolated)
    targets: torch.Tensor    # [n, context] bool: this token is a training target
    n_tokens: int            # real (non-pad) tokens


def check_ids(token_ids, vocab_size: int | None, what: str) -> None:
    """InputError naming ``what`` unless ``token_ids`` is a list of units of integer ids in [0,
    ``vocab_size``) (>= 0 when None)."""
    if isinstance(token_ids, (str, bytes)) or not isinstance(token_ids, Sequence):
        raise InputError(f"{what}: expected a list of units, each a list of token ids")
    for i, unit in enumerate(token_ids):
        for t in unit:
            if isinstance(t, bool) or not isinstance(t, int) or t < 0 or (
                    vocab_size is not None and t >= vocab_size):
                bound = f"[0, {vocab_size})" if vocab_size is not None else ">= 0"
                raise InputError(f"{what}: unit {i} has token id {t!r}, expected an integer "
                                 f"{bound}")


def pack(token_ids: Sequence[Sequence[int]], bos_id: int, eos_id: int, context: int,
         pad_id: int | None, isolate_units: bool) -> Packed:
    """The units, each framed by ``bos_id``/``eos_id``, in blocks of ``context`` tokens; the tail
    dropped (``pad_id`` None) or padded; positions restart per unit when ``isolate_units``."""
    if isinstance(context, bool) or not isinstance(context, int) or context < 2:
        raise InputError(f"context must be an integer >= 2, got {context!r}")
    check_ids(token_ids, None, "pack_sequences")
    ids: list[int] = []
    pos: list[int] = []
    for unit in token_ids:
        seq = [bos_id, *unit, eos_id]
        ids.extend(seq)
        pos.extend(range(len(seq)))
    n_real = len(ids)
    if n_real == 0:
        raise InputError("no training text: the list of units is empty")
    remainder = n_real % context
    if remainder:
        if pad_id is None:
            ids, pos = ids[:n_real - remainder], pos[:n_real - remainder]
            if not ids:
                raise InputError(f"too little text for one block: {n_real} tokens "
                                 f"(with <s> and </s>) < context {context}")
        else:
            n_pad = context - remainder
            ids.extend([pad_id] * n_pad)
            pos.extend(range(n_pad))  # a separate (masked) sequence
    blocks = torch.tensor(ids, dtype=torch.long).view(-1, context)
    positions = torch.tensor(pos, dtype=torch.long).view(-1, context)
    if not isolate_units:  # running text: every block is one sequence at positions 0..context-1
        positions = torch.arange(context).expand_as(blocks).contiguous()
    targets = torch.zeros(blocks.numel(), dtype=torch.bool)
    targets[:min(n_real, blocks.numel())] = True
    targets = targets.view(-1, context) & (blocks != bos_id)  # <s> is never predicted
    return Packed(blocks, positions, targets, min(n_real, blocks.numel()))


def pack_whole_units(token_ids: Sequence[Sequence[int]], bos_id: int, eos_id: int,
                     context: int, pad_id: int) -> Packed:
    """Evaluation packing: whole units side by side in rows of ``context`` (first fit, in order),
    each its own sequence, the row's rest padded; a unit longer than ``context`` (with <s> and
    </s>) is cut into rows, its continuation keeping its positions. With the isolated mask, the
    mean NLL over these rows is exactly per-unit scoring for every unit that fits."""
    rows_ids: list[list[int]] = [[]]
    rows_pos: list[list[int]] = [[]]
    for unit in token_ids:
        seq = [bos_id, *unit, eos_id]
        if len(rows_ids[-1]) + len(seq) > context and rows_ids[-1]:
            rows_ids.append([])
            rows_pos.append([])
        for start in range(0, len(seq), context):
            if start:
                rows_ids.append([])
                rows_pos.append([])
            piece = seq[start:start + context]
            rows_ids[-1].extend(piece)
            rows_pos[-1].extend(range(start, start + len(piece)))
    blocks, positions, targets = [], [], []
    n_real = 0
    for ids, pos in zip(rows_ids, rows_pos):
        n_pad = context - len(ids)
        n_real += len(ids)
        blocks.append(ids + [pad_id] * n_pad)
        positions.append(pos + list(range(n_pad)))
        targets.append([t != bos_id for t in ids] + [False] * n_pad)
    return Packed(torch.tensor(blocks, dtype=torch.long),
                  torch.tensor(positions, dtype=torch.long),
                  torch.tensor(targets, dtype=torch.bool), n_real)


def pack_sequences(token_ids: Sequence[Sequence[int]], bos_id: int, eos_id: int, context: int,
                   *, pad_id: int | None = None) -> torch.Tensor:
    """Pack units into a ``LongTensor [n_blocks, context]``.

    Each unit becomes ``[bos_id] + ids + [eos_id]``; the units are concatenated in order and cut
    into consecutive blocks of ``context`` tokens (a unit may span two blocks). The incomplete
    final block is dropped when ``pad_id`` is None, else padded with ``pad_id``.
    """
    return pack(token_ids, bos_id, eos_id, context, pad_id, isolate_units=False).blocks


def data_digest(packed: Packed) -> str:
    """SHA-256 of the packed blocks, positions and targets (shapes and bytes): what ties a
    checkpoint to its training data."""
    h = hashlib.sha256()
    for t in (packed.blocks, packed.positions, packed.targets):
        h.update(str(tuple(t.shape)).encode())
        h.update(t.contiguous().numpy().tobytes())
    return h.hexdigest()
