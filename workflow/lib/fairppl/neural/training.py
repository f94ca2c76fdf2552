"""The training loop of the neural LM (``train``): start or resume a run, step it, checkpoint it,
save the finished model. The conventions (data, optimisation, determinism, outputs) are in the
package doc."""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import random
import shutil
import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

import torch

from ..core.errors import InputError
from .checkpoint import (
    CHECKPOINT_NAME,
    FINAL_NAME,
    RunState,
    restore_final,
    resume_run,
    save_checkpoint,
    save_final_state,
)
from .config import NeuralConfig
from .data import Packed, check_ids, data_digest, pack, pack_whole_units
from .loss import batch_loss, mean_nll
from .model import bos_eos_pad, build_model, check_special, n_parameters
from .optim import make_optimizer
from .runtime import deterministic_kernels, num_threads, resolve_device
from .save import LOG_NAME, MODEL_DIR, STATS_NAME, save_final, write_log

_log = logging.getLogger(__name__)


def train(token_ids: Sequence[Sequence[int]], vocab_size: int, special_ids: Mapping[str, int],
          cfg: NeuralConfig, out_dir: str | os.PathLike, *,
          dev_token_ids: Sequence[Sequence[int]] | None = None, tokenizer=None,
          device: str | torch.device = "auto", threads: int | None = None,
          progress: bool = True, stop_after: int | None = None) -> dict:
    """Train a ``build_model`` LM on ``token_ids`` (the train units, token ids without specials),
    resuming from ``out_dir/checkpoint.pt`` when it exists, or saving the finished run kept in
    ``out_dir/final.pt`` again when it was trained with the same settings (see the package doc).

    ``special_ids`` maps ``"bos"``, ``"eos"``, ``"pad"`` to ids (``special_ids_of(tokenizer)``).
    ``dev_token_ids``: optional held-out units; their mean NLL per token is logged every
    ``cfg.eval_every`` steps (if > 0) and at the end. With ``isolate_units`` it is computed on
    whole units (the same number as scoring each unit alone, for units up to ``context`` tokens
    with <s> and </s>); otherwise on running text packed like the training data.
    ``tokenizer``: when given, the final model folder also holds it (``save_lm``), ready for
    ``AutoModelForCausalLM``/``AutoTokenizer``.
    ``threads``: torch CPU threads for this call (restored afterwards); None keeps torch's
    setting. Give the rule's thread count: on a busy machine more threads than free cores makes
    each step several times slower. Bitwise resumption needs the same count on every call.
    ``stop_after``: stop after that many completed steps (counting from step 0, resumed steps
    included) after writing a checkpoint, without the final save; returns
    ``{"finished": False, ...}``. A call with ``stop_after >= cfg.steps`` finishes normally.

    Returns ``{"finished", "steps", "final_loss", "dev_loss", "train_tokens", "tokens_seen",
    "seconds", "seconds_this_call", "device", "threads", "n_params", "resumed_from"}``:
    ``final_loss`` is the training loss of the last step's batch (nats per target token),
    ``train_tokens`` the tokens of the packed training data (with <s>/</s>, without padding),
    ``seconds`` the training wall time summed over resumed calls.
    """
    if not isinstance(cfg, NeuralConfig):
        raise InputError(f"cfg must be a NeuralConfig, got {type(cfg).__name__}")
    special = bos_eos_pad(special_ids)
    check_special(vocab_size, special["bos"], special["eos"], special["pad"])
    check_ids(token_ids, vocab_size, "training units")
    if dev_token_ids is not None:
        check_ids(dev_token_ids, vocab_size, "dev units")
    if stop_after is not None and (isinstance(stop_after, bool) or not isinstance(stop_after, int)
                                   or stop_after < 0):
        raise InputError(f"stop_after must be a non-negative integer, got {stop_after!r}")
    dev = torch.device(resolve_device(device))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    _clean_stale(out_dir)
    ckpt_path = out_dir / CHECKPOINT_NAME

    packed, dev_packed = _pack_data(token_ids, dev_token_ids, special, cfg)
    # what ties a checkpoint to this run (checked on resume)
    identity = {"config": cfg.to_dict(), "vocab": {"vocab_size": vocab_size, **special},
                "digest": data_digest(packed)}

    final_path = out_dir / FINAL_NAME
    with deterministic_kernels(dev), num_threads(threads):
        run = _start(cfg, vocab_size, special, dev)
        restored = False
        if final_path.exists():
            why = restore_final(final_path, run, **identity)
            restored = why is None
            if not restored:
                _log.info("%s: a finished run of other settings, discarded: %s", final_path, why)
        if not restored and ckpt_path.exists():
            resume_run(ckpt_path, run, device=dev, **identity)

        def checkpoint(seconds: float) -> None:
            save_checkpoint(ckpt_path, run, device=dev, seconds=seconds, **identity)
            write_log(out_dir / LOG_NAME, run.log)

        target = cfg.steps if stop_after is None else min(cfg.steps, stop_after)
        desc = f"train {out_dir.name}" if progress else None
        this_call = _loop(run, cfg, packed, dev_packed, dev, target, checkpoint, desc)
        stats = {
            "finished": run.step >= cfg.steps,
            "steps": run.step,
            "final_loss": run.log[-1][1] if run.log else float("nan"),
            "dev_loss": next((row[3] for row in reversed(run.log) if row[3] is not None), None),
            "train_tokens": packed.n_tokens,
            "tokens_seen": run.step * cfg.batch_size * cfg.context,
            "seconds": run.seconds_before + this_call,
            "seconds_this_call": this_call,
            "device": str(dev),
            "threads": torch.get_num_threads(),
            "n_params": n_parameters(run.model),
            "resumed_from": run.resumed_from,
        }
        if run.step < cfg.steps:
            return stats
        save_final(out_dir, run.model, tokenizer, run.log,
                   {**stats, "config": identity["config"], "vocab": identity["vocab"],
                    "data_sha256": identity["digest"]})
        if not restored:
            save_final_state(final_path, run, seconds=stats["seconds"], **identity)
        # The optimizer state is about twice the model and useless once the model is final.
        with contextlib.suppress(FileNotFoundError):
            ckpt_path.unlink()
        return stats


def _pack_data(token_ids, dev_token_ids, special: dict[str, int],
               cfg: NeuralConfig) -> tuple[Packed, Packed | None]:
    """The packed training blocks, and the dev blocks (None without dev units)."""
    packed = pack(token_ids, special["bos"], special["eos"], cfg.context, special["pad"],
                  cfg.isolate_units)
    dev_packed = None
    if dev_token_ids is not None and len(dev_token_ids) > 0:
        if cfg.isolate_units:  # dev loss = per-unit scoring ([bos]+ids -> ids+[eos]) exactly
            dev_packed = pack_whole_units(dev_token_ids, special["bos"], special["eos"],
                                          cfg.context, special["pad"])
        else:
            dev_packed = pack(dev_token_ids, special["bos"], special["eos"], cfg.context,
                              special["pad"], False)
    return packed, dev_packed


def _start(cfg: NeuralConfig, vocab_size: int, special: dict[str, int],
           device: torch.device) -> RunState:
    """A fresh run at step 0: the seeded model on ``device``, its optimizer and scheduler, the
    batch generator, and the global torch (dropout) and Python RNGs seeded."""
    model = build_model(cfg, vocab_size, special["bos"], special["eos"], special["pad"])
    model.to(device)
    model.train()
    optimizer, scheduler = make_optimizer(model, cfg)
    generator = torch.Generator(device="cpu")
    generator.manual_seed(cfg.seed)
    torch.manual_seed(cfg.seed + 1)   # dropout (CPU and CUDA)
    random.seed(cfg.seed)
    return RunState(model, optimizer, scheduler, generator)


def _loop(run: RunState, cfg: NeuralConfig, packed: Packed, dev_packed: Packed | None,
          device: torch.device, target: int, checkpoint: Callable[[float], None],
          desc: str | None) -> float:
    """Step ``run`` until ``target`` completed steps, logging each step and evaluating the dev
    set every ``cfg.eval_every`` steps and at the last; ``checkpoint(training seconds so far)``
    every ``cfg.checkpoint_every`` steps and when stopping early. A progress bar when ``desc``
    is given. Returns this call's wall time in seconds."""
    bar = None
    if desc is not None:
        from tqdm.auto import tqdm
        bar = tqdm(total=cfg.steps, initial=run.step, desc=desc, unit="step",
                   dynamic_ncols=True, mininterval=1.0)
    t0 = time.monotonic()
    try:
        while run.step < target:
            loss_value, lr_now = _step(run, cfg, packed, device)
            dev_loss = None
            if dev_packed is not None and (
                    (cfg.eval_every and run.step % cfg.eval_every == 0) or run.step == cfg.steps):
                dev_loss = mean_nll(run.model, dev_packed, device, cfg.batch_size)
            run.log.append((run.step, loss_value, lr_now, dev_loss))
            if bar is not None:
                postfix = {"loss": f"{loss_value:.3f}", "lr": f"{lr_now:.2e}"}
                if dev_loss is not None:
                    postfix["dev"] = f"{dev_loss:.3f}"
                bar.set_postfix(postfix, refresh=False)
                bar.update(1)
            if run.step % cfg.checkpoint_every == 0 or (run.step == target
                                                        and run.step < cfg.steps):
                checkpoint(run.seconds_before + time.monotonic() - t0)
    finally:
        if bar is not None:
            bar.close()
    return time.monotonic() - t0


def _step(run: RunState, cfg: NeuralConfig, packed: Packed,
          device: torch.device) -> tuple[float, float]:
    """One optimizer update on ``cfg.batch_size`` blocks drawn with ``run.generator``; returns
    the batch's loss (nats per target token) and the learning rate it was trained with."""
    lr_now = run.optimizer.param_groups[0]["lr"]
    idx = torch.randint(packed.blocks.size(0), (cfg.batch_size,), generator=run.generator)
    loss = batch_loss(run.model, packed, idx, device)
    if not torch.isfinite(loss):
        raise FloatingPointError(f"training loss is {float(loss)} at step "
                                 f"{run.step + 1}; lower lr ({cfg.lr})")
    run.optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if cfg.grad_clip > 0:
        torch.nn.utils.clip_grad_norm_(run.model.parameters(), cfg.grad_clip)
    run.optimizer.step()
    run.scheduler.step()
    run.step += 1
    return float(loss.detach()), lr_now


def _clean_stale(out_dir: Path) -> None:
    """Remove temporary files and folders left by a killed run (never the checkpoint)."""
    for name in (CHECKPOINT_NAME, FINAL_NAME, MODEL_DIR, LOG_NAME, STATS_NAME):
        for stale in glob.glob(str(out_dir / f".{glob.escape(name)}.*")):
            if stale.endswith((".part", ".old")):
                if os.path.isdir(stale):
                    shutil.rmtree(stale, ignore_errors=True)
                else:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(stale)
