"""The hyper-parameters of one neural LM run (``NeuralConfig``), checked when built."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Mapping

from ..core.errors import InputError


@dataclass
class NeuralConfig:
    """Hyper-parameters of one neural LM run. The defaults are a tiny model for CPU."""

    d_model: int = 128
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 512
    context: int = 256          # block length = max positions
    batch_size: int = 16        # blocks per step
    steps: int = 300
    lr: float = 1e-3
    warmup: int = 30
    min_lr_ratio: float = 0.1   # the cosine decays to lr * min_lr_ratio at the last step
    weight_decay: float = 0.1
    adam_beta1: float = 0.9
    adam_beta2: float = 0.95
    grad_clip: float = 1.0      # max global grad norm; 0 = no clipping
    dropout: float = 0.0        # attention dropout (Llama has no other dropout)
    isolate_units: bool = True  # each unit its own sequence in a block (see module doc)
    seed: int = 0
    checkpoint_every: int = 50  # steps
    eval_every: int = 0         # steps between dev evaluations (0 = only at the end)

    def __post_init__(self):
        ints = ("d_model", "n_layers", "n_heads", "d_ff", "context", "batch_size", "steps",
                "warmup", "seed", "checkpoint_every", "eval_every")
        for name in ints:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InputError(f"neural config: {name} must be an integer, got {value!r}")
        for name in ("d_model", "n_layers", "n_heads", "d_ff", "batch_size", "steps",
                     "checkpoint_every"):
            if getattr(self, name) < 1:
                raise InputError(f"neural config: {name} must be >= 1, got {getattr(self, name)}")
        for name in ("warmup", "eval_every", "seed"):
            if getattr(self, name) < 0:
                raise InputError(f"neural config: {name} must be >= 0, got {getattr(self, name)}")
        if self.context < 2:
            raise InputError(f"neural config: context must be >= 2, got {self.context}")
        if self.d_model % self.n_heads:
            raise InputError(f"neural config: d_model ({self.d_model}) must be a multiple of "
                             f"n_heads ({self.n_heads})")
        if (self.d_model // self.n_heads) % 2:
            raise InputError(f"neural config: the head size d_model / n_heads "
                             f"({self.d_model // self.n_heads}) must be even (rotary embeddings)")
        floats = ("lr", "min_lr_ratio", "weight_decay", "adam_beta1", "adam_beta2", "grad_clip",
                  "dropout")
        for name in floats:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(f"neural config: {name} must be a number, got {value!r}")
            setattr(self, name, float(value))
        if not self.lr > 0:
            raise InputError(f"neural config: lr must be > 0, got {self.lr}")
        for name in ("min_lr_ratio", "adam_beta1", "adam_beta2", "dropout"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise InputError(f"neural config: {name} must be in [0, 1], got "
                                 f"{getattr(self, name)}")
        if self.weight_decay < 0 or self.grad_clip < 0:
            raise InputError("neural config: weight_decay and grad_clip must be >= 0")
        if not isinstance(self.isolate_units, bool):
            raise InputError(f"neural config: isolate_units must be true or false, got "
                             f"{self.isolate_units!r}")

    @classmethod
    def from_dict(cls, values: Mapping | None) -> "NeuralConfig":
        """Build from a config mapping (e.g. the workflow's YAML); unknown keys are an error."""
        values = dict(values or {})
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise InputError(f"neural config: unknown key(s) {unknown}; expected some of "
                             f"{sorted(known)}")
        return cls(**values)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)
