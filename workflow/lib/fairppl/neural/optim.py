"""AdamW with decoupled weight decay on matrices only, and the warm-up + cosine learning rate."""

from __future__ import annotations

import math

import torch

from .config import NeuralConfig


def lr_factor(step: int, cfg: NeuralConfig) -> float:
    """Learning-rate multiplier for the update that follows ``step`` completed steps: linear
    warm-up to 1 over ``warmup`` steps, then cosine decay to ``min_lr_ratio`` at ``steps``."""
    if cfg.warmup and step < cfg.warmup:
        return (step + 1) / cfg.warmup
    span = max(1, cfg.steps - cfg.warmup)
    progress = min(1.0, (step - cfg.warmup) / span)
    return cfg.min_lr_ratio + (1.0 - cfg.min_lr_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))


def make_optimizer(model, cfg: NeuralConfig):
    """AdamW (weight decay on matrices only) and its learning-rate schedule (:func:`lr_factor`) for
    ``model`` under ``cfg``."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg.lr, betas=(cfg.adam_beta1, cfg.adam_beta2), eps=1e-8)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: lr_factor(s, cfg))
    return optimizer, scheduler
