"""The loss of a model on packed blocks: per batch for training, over all blocks for the dev set.
Losses are in nats per target token (``<s>`` and padding are never targets)."""

from __future__ import annotations

import torch

from .data import Packed


def batch_loss(model, packed: Packed, idx: torch.Tensor, device: torch.device,
               reduction: str = "mean"):
    """Cross-entropy (nats) of ``model`` on the target tokens of the blocks ``idx`` of ``packed``,
    reduced by ``reduction``."""
    x = packed.blocks[idx].to(device)
    pos = packed.positions[idx].to(device)
    tgt = packed.targets[idx].to(device)
    out = model(input_ids=x, position_ids=pos, use_cache=False)
    logits = out.logits[:, :-1].float()
    labels = x[:, 1:].masked_fill(~tgt[:, 1:], -100)
    return torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100,
        reduction=reduction)


@torch.no_grad()
def mean_nll(model, packed: Packed, device: torch.device, batch_size: int) -> float:
    """Mean NLL (nats per target token) of ``model`` over all blocks of ``packed``."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    n = packed.blocks.size(0)
    for start in range(0, n, batch_size):
        idx = torch.arange(start, min(n, start + batch_size))
        total += float(batch_loss(model, packed, idx, device, reduction="sum"))
        count += int(packed.targets[idx][:, 1:].sum())
    model.train(was_training)
    return total / max(1, count)
