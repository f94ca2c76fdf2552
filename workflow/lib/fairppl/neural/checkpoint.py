"""Checkpoints: the whole state of an unfinished run, written atomically and restored bit for bit.

A checkpoint (``torch.save`` of a dict, format ``_CHECKPOINT_FORMAT``) holds the model, optimizer
and scheduler state, the step, the batch generator's and the torch/CUDA/Python RNG states, the
loss log, the training seconds so far, the configuration, the vocabulary's special ids and a
SHA-256 of the packed training data. It is written to a temporary file, fsynced and renamed into
place, so a SIGKILL leaves the previous checkpoint or none. A checkpoint whose configuration (but
``_NOT_COMPARED``), vocabulary or data differ from the run's is refused, never mixed in.
"""

from __future__ import annotations

import contextlib
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import torch

from ..core.errors import InputError
from ..core.io import atomic_path

CHECKPOINT_NAME = "checkpoint.pt"
_CHECKPOINT_FORMAT = "fairppl-neural-checkpoint-1"
#: The finished run's weights, loss log and identity (no optimizer state), kept after training.
FINAL_NAME = "final.pt"
_FINAL_FORMAT = "fairppl-neural-final-1"

#: Config fields that do not change the training trajectory (not compared on resume).
_NOT_COMPARED = frozenset({"checkpoint_every", "eval_every"})


@dataclass
class RunState:
    """What a run changes as it trains, i.e. what a checkpoint saves and restores."""

    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    generator: torch.Generator              # draws the batches
    step: int = 0                           # completed steps
    log: list = field(default_factory=list)  # (step, loss, lr, dev_loss or None) per step
    seconds_before: float = 0.0             # training wall time of earlier calls (s)
    resumed_from: int | None = None         # the checkpoint's step, when resumed


def save_checkpoint(path: Path, run: RunState, *, config: dict, vocab: dict, digest: str,
                    device: torch.device, seconds: float) -> None:
    """Write ``run`` (after ``run.step`` steps, ``seconds`` of training in all) to ``path``."""
    _write_checkpoint(path, {
        "format": _CHECKPOINT_FORMAT,
        "config": config,
        "vocab": vocab,
        "data_sha256": digest,
        "step": run.step,
        "model": run.model.state_dict(),
        "optimizer": run.optimizer.state_dict(),
        "scheduler": run.scheduler.state_dict(),
        "generator": run.generator.get_state(),
        "torch_rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if device.type == "cuda" else None,
        "python_rng": random.getstate(),
        "log": [list(row) for row in run.log],
        "seconds": seconds,
        "device": str(device),
    })


def resume_run(path: Path, run: RunState, *, config: dict, vocab: dict, digest: str,
               device: torch.device) -> None:
    """Load the checkpoint at ``path`` into ``run`` (a freshly started run: same model and
    optimizer layout) and the global RNGs; ``InputError`` if it is unreadable or was written by
    a run with another configuration, vocabulary or training data."""
    state = load_checkpoint(path)
    diffs = config_differences(state["config"], config)
    diffs += config_differences(state["vocab"], vocab, prefix="vocab ")
    if state["data_sha256"] != digest:
        diffs.append("training data: the packed token ids differ (SHA-256 "
                     f"{state['data_sha256'][:12]}... in the checkpoint, "
                     f"{digest[:12]}... now)")
    if diffs:
        raise InputError("the checkpoint was written by a different run; refusing to "
                         "mix runs. Differences: " + "; ".join(diffs) + ". Delete the "
                         "checkpoint to train from scratch.", path=str(path))
    run.model.load_state_dict(state["model"])
    run.optimizer.load_state_dict(state["optimizer"])
    run.scheduler.load_state_dict(state["scheduler"])
    run.generator.set_state(state["generator"])
    torch.set_rng_state(state["torch_rng"])
    if device.type == "cuda" and state.get("cuda_rng"):
        with contextlib.suppress(RuntimeError):
            torch.cuda.set_rng_state_all(state["cuda_rng"])
    py = state["python_rng"]
    random.setstate((py[0], tuple(py[1]), py[2]))
    run.step = int(state["step"])
    run.log = [tuple(row) for row in state["log"]]
    run.seconds_before = float(state["seconds"])
    run.resumed_from = run.step


def save_final_state(path: Path, run: RunState, *, config: dict, vocab: dict, digest: str,
                     seconds: float) -> None:
    """Keep a finished run's weights, loss log and identity in ``path`` (about the model's size:
    no optimizer state), so that a rerun of the job whose outputs were discarded (Snakemake
    interrupted before it recorded them) saves the same model again instead of retraining."""
    _write_checkpoint(path, {
        "format": _FINAL_FORMAT, "config": config, "vocab": vocab, "data_sha256": digest,
        "step": run.step, "model": run.model.state_dict(),
        "log": [list(row) for row in run.log], "seconds": seconds,
    })


def restore_final(path: Path, run: RunState, *, config: dict, vocab: dict,
                  digest: str) -> str | None:
    """Load the finished run kept at ``path`` into ``run`` when it was trained with this
    configuration (``_NOT_COMPARED`` aside), vocabulary and data; returns None then. A finished
    run of other settings (or an unreadable file) is deleted, never used; returns why."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(state, dict) or state.get("format") != _FINAL_FORMAT:
            raise ValueError(f"not {_FINAL_FORMAT}")
    except Exception as err:  # noqa: BLE001 - any unusable file is the same: train again
        path.unlink()
        return f"unreadable ({type(err).__name__})"
    diffs = config_differences(state["config"], config, saved_as="recorded")
    diffs += config_differences(state["vocab"], vocab, prefix="vocab ", saved_as="recorded")
    if state["data_sha256"] != digest:
        diffs.append("training data: the packed token ids differ")
    if diffs:
        path.unlink()
        return "; ".join(diffs)
    run.model.load_state_dict(state["model"])
    run.step = int(state["step"])
    run.log = [tuple(row) for row in state["log"]]
    run.seconds_before = float(state["seconds"])
    run.resumed_from = run.step
    return None


def config_differences(saved: Mapping, now: Mapping, prefix: str = "",
                       saved_as: str = "in the checkpoint") -> list[str]:
    """One line per key whose value differs between ``saved`` and ``now`` (``prefix`` before the
    key; the fields that do not change training skipped at the top level)."""
    diffs = []
    for key in sorted(set(saved) | set(now)):
        if key in _NOT_COMPARED and not prefix:
            continue
        a, b = saved.get(key, "<absent>"), now.get(key, "<absent>")
        if a != b:
            diffs.append(f"{prefix}{key}: {a!r} {saved_as}, {b!r} now")
    return diffs


def _write_checkpoint(path: Path, state: dict) -> None:
    with atomic_path(path) as tmp:
        torch.save(state, tmp)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())


def load_checkpoint(path: Path) -> dict:
    """The checkpoint dict at ``path``; InputError naming the file when it is unreadable or not a
    fairppl checkpoint."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - any unreadable file is the same user problem
        raise InputError(f"unreadable checkpoint ({type(err).__name__}: {err}); delete it to "
                         f"train from scratch", path=str(path)) from None
    if not isinstance(state, dict) or state.get("format") != _CHECKPOINT_FORMAT:
        raise InputError(f"not a fairppl neural checkpoint (expected format "
                         f"{_CHECKPOINT_FORMAT}); delete it to train from scratch",
                         path=str(path))
    return state
