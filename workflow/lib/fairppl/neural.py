"""A small decoder-only Transformer LM per language, trained resumably and deterministically.

The model is a ``transformers.LlamaForCausalLM`` built from a ``LlamaConfig`` (random init from
the seed, tied input/output embeddings), so that the one scoring path
(``AutoModelForCausalLM.from_pretrained`` + ``AutoTokenizer.from_pretrained`` on one folder, see
``save_lm``) serves it exactly like a pretrained model.

Training data (``pack_sequences``)
    Each unit (a verse, a sentence) becomes ``[bos] + ids + [eos]``; the units are concatenated in
    order and cut into blocks of ``context`` tokens, so a unit may span two blocks. The model thus
    sees ``<s>`` at every unit start (it learns to predict the first token after BOS) and ``</s>``
    at every end. This matches the scoring convention used everywhere else: the input is
    ``[bos] + ids``, the model is charged for ``ids + [eos]``.

    Two details make training match that convention (see ``NeuralConfig.isolate_units``):

    * ``<s>`` is never a target (its label is masked): scoring never predicts it, so the model
      should not spend probability on it.
    * With ``isolate_units`` (the default) every unit is its own sequence inside the block: its
      position ids restart at 0 at its ``<s>`` and it cannot attend to the previous unit
      (transformers builds the block-diagonal causal mask from the position ids). A unit cut by a
      block boundary keeps its true positions in the second block but loses its prefix there.
      Without ``isolate_units`` the blocks are plain running text (GPT-2 style packing).

    The last, incomplete block is padded with ``<pad>`` (masked out of the loss) so no text is
    lost.

Optimisation
    AdamW (betas ``adam_beta1``/``adam_beta2``; weight decay on matrices only, not on norm
    gains), gradient clipping, learning rate with linear warm-up over ``warmup`` steps then cosine
    decay to ``min_lr_ratio * lr`` at ``steps``. Each step draws ``batch_size`` blocks uniformly
    at random (with replacement) from a seeded ``torch.Generator``.

Determinism and resumption
    Model init, batch sampling and dropout are seeded from ``NeuralConfig.seed``; ``train`` turns
    on ``torch.use_deterministic_algorithms(True, warn_only=True)`` for its duration (and sets
    ``CUBLAS_WORKSPACE_CONFIG`` if it is unset, for CUDA). Every ``checkpoint_every`` steps it
    writes ``out_dir/checkpoint.pt`` atomically (temporary file + ``os.replace``; a SIGKILL leaves
    the previous checkpoint or none) with the model, optimizer and scheduler state, the step, the
    batch generator's and the torch/CUDA/Python RNG states, the loss log, the configuration, the
    vocabulary's special ids and a SHA-256 of the packed training data. A later call with the same
    configuration, vocabulary and data resumes from it and reproduces the uninterrupted run
    **bit for bit** on the same device, torch build and thread count (checked in
    tests/test_neural.py). A checkpoint written with a different configuration, vocabulary or
    data is never mixed in: ``train`` raises ``InputError`` naming the differing fields.
    ``checkpoint_every`` and ``eval_every`` do not change the trajectory and are not compared.

Outputs of a finished run (``train``)
    ``out_dir/model/`` (``save_pretrained``, safetensors; with the tokenizer when one is given),
    ``out_dir/train_log.tsv`` (step, loss, lr, dev_loss), ``out_dir/train_stats.json``, each
    written to a temporary name and renamed into place, the stats last. Then
    ``checkpoint.pt`` is **deleted** (it holds the optimizer state, about twice the model's size,
    and is useless once the model is final): a call after a finished run trains again from
    scratch, reproducing the same model. A Snakemake rule should therefore declare
    ``out_dir/model`` and the stats file as outputs, never ``directory(out_dir)`` (Snakemake would
    delete the checkpoint with a failed job's outputs).

Device
    ``device="auto"`` is CUDA when ``torch.cuda.is_available()``, else CPU (a rule may declare a
    GPU resource and still runs on CPU). Resuming on another device works but is not bitwise
    identical to an uninterrupted run.

Dropout
    Llama has no residual or MLP dropout; ``NeuralConfig.dropout`` is its attention dropout.
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import hashlib
import json
import math
import os
import random
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping, Sequence

import torch

from .errors import InputError
from .io import atomic_path

CHECKPOINT_NAME = "checkpoint.pt"
MODEL_DIR = "model"
LOG_NAME = "train_log.tsv"
STATS_NAME = "train_stats.json"
_CHECKPOINT_FORMAT = "fairppl-neural-checkpoint-1"

#: Config fields that do not change the training trajectory (not compared on resume).
_NOT_COMPARED = frozenset({"checkpoint_every", "eval_every"})


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


# --------------------------------------------------------------------------------------- model

def _check_special(vocab_size: int, bos_id: int, eos_id: int, pad_id: int) -> None:
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

    _check_special(vocab_size, bos_id, eos_id, pad_id)
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
    _sync_generation_config(model)
    return model


def _sync_generation_config(model) -> None:
    gen = getattr(model, "generation_config", None)
    if gen is not None:
        gen.bos_token_id = model.config.bos_token_id
        gen.eos_token_id = model.config.eos_token_id
        gen.pad_token_id = model.config.pad_token_id


def n_parameters(model) -> int:
    """Distinct trainable parameters (a tied embedding counts once)."""
    return sum(p.numel() for p in model.parameters())


# ---------------------------------------------------------------------------------------- data

@dataclass
class _Packed:
    blocks: torch.Tensor     # [n, context] token ids (pad at the tail)
    positions: torch.Tensor  # [n, context] position ids (within-unit, or running if not isolated)
    targets: torch.Tensor    # [n, context] bool: this token is a training target
    n_tokens: int            # real (non-pad) tokens


def _check_ids(token_ids, vocab_size: int | None, what: str) -> None:
    if isinstance(token_ids, (str, bytes)) or not isinstance(token_ids, Sequence):
        raise InputError(f"{what}: expected a list of units, each a list of token ids")
    for i, unit in enumerate(token_ids):
        for t in unit:
            if isinstance(t, bool) or not isinstance(t, int) or t < 0 or (
                    vocab_size is not None and t >= vocab_size):
                bound = f"[0, {vocab_size})" if vocab_size is not None else ">= 0"
                raise InputError(f"{what}: unit {i} has token id {t!r}, expected an integer "
                                 f"{bound}")


def _pack(token_ids: Sequence[Sequence[int]], bos_id: int, eos_id: int, context: int,
          pad_id: int | None, isolate_units: bool) -> _Packed:
    if isinstance(context, bool) or not isinstance(context, int) or context < 2:
        raise InputError(f"context must be an integer >= 2, got {context!r}")
    _check_ids(token_ids, None, "pack_sequences")
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
    return _Packed(blocks, positions, targets, min(n_real, blocks.numel()))


def _pack_whole_units(token_ids: Sequence[Sequence[int]], bos_id: int, eos_id: int,
                      context: int, pad_id: int) -> _Packed:
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
    return _Packed(torch.tensor(blocks, dtype=torch.long), torch.tensor(positions, dtype=torch.long),
                   torch.tensor(targets, dtype=torch.bool), n_real)


def pack_sequences(token_ids: Sequence[Sequence[int]], bos_id: int, eos_id: int, context: int,
                   *, pad_id: int | None = None) -> torch.Tensor:
    """Pack units into a ``LongTensor [n_blocks, context]``.

    Each unit becomes ``[bos_id] + ids + [eos_id]``; the units are concatenated in order and cut
    into consecutive blocks of ``context`` tokens (a unit may span two blocks). The incomplete
    final block is dropped when ``pad_id`` is None, else padded with ``pad_id``.
    """
    return _pack(token_ids, bos_id, eos_id, context, pad_id, isolate_units=False).blocks


def _data_digest(packed: _Packed) -> str:
    h = hashlib.sha256()
    for t in (packed.blocks, packed.positions, packed.targets):
        h.update(str(tuple(t.shape)).encode())
        h.update(t.contiguous().numpy().tobytes())
    return h.hexdigest()


# ------------------------------------------------------------------------------- optimisation

def lr_factor(step: int, cfg: NeuralConfig) -> float:
    """Learning-rate multiplier for the update that follows ``step`` completed steps: linear
    warm-up to 1 over ``warmup`` steps, then cosine decay to ``min_lr_ratio`` at ``steps``."""
    if cfg.warmup and step < cfg.warmup:
        return (step + 1) / cfg.warmup
    span = max(1, cfg.steps - cfg.warmup)
    progress = min(1.0, (step - cfg.warmup) / span)
    return cfg.min_lr_ratio + (1.0 - cfg.min_lr_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))


def _make_optimizer(model, cfg: NeuralConfig):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg.lr, betas=(cfg.adam_beta1, cfg.adam_beta2), eps=1e-8)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: lr_factor(s, cfg))
    return optimizer, scheduler


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``"auto"`` -> CUDA if ``torch.cuda.is_available()`` else CPU; otherwise as given."""
    if isinstance(device, str) and device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise InputError(f"unknown device {device!r} ({err}); expected 'auto', 'cpu' or "
                         f"'cuda[:N]'") from None


@contextlib.contextmanager
def _deterministic(device: torch.device) -> Iterator[None]:
    """Deterministic kernels for the duration. On CUDA also the math attention kernel: in
    float32 PyTorch would pick the memory-efficient one, whose backward is not deterministic."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    was_on = torch.are_deterministic_algorithms_enabled()
    was_warn = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        if device.type == "cuda":
            from torch.nn.attention import SDPBackend, sdpa_kernel
            with sdpa_kernel(SDPBackend.MATH):
                yield
        else:
            yield
    finally:
        torch.use_deterministic_algorithms(was_on, warn_only=was_warn)


@contextlib.contextmanager
def _num_threads(threads: int | None) -> Iterator[None]:
    if threads is None:
        yield
        return
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InputError(f"threads must be a positive integer, got {threads!r}")
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _batch_loss(model, packed: _Packed, idx: torch.Tensor, device: torch.device,
                reduction: str = "mean"):
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
def mean_nll(model, packed: _Packed, device: torch.device, batch_size: int) -> float:
    """Mean NLL (nats per target token) of ``model`` over all blocks of ``packed``."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    n = packed.blocks.size(0)
    for start in range(0, n, batch_size):
        idx = torch.arange(start, min(n, start + batch_size))
        total += float(_batch_loss(model, packed, idx, device, reduction="sum"))
        count += int(packed.targets[idx][:, 1:].sum())
    model.train(was_training)
    return total / max(1, count)


# ----------------------------------------------------------------------------------- checkpoint

def _special(special_ids: Mapping[str, int]) -> dict[str, int]:
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


def _differences(saved: Mapping, now: Mapping, prefix: str = "") -> list[str]:
    diffs = []
    for key in sorted(set(saved) | set(now)):
        if key in _NOT_COMPARED and not prefix:
            continue
        a, b = saved.get(key, "<absent>"), now.get(key, "<absent>")
        if a != b:
            diffs.append(f"{prefix}{key}: {a!r} in the checkpoint, {b!r} now")
    return diffs


def _write_checkpoint(path: Path, state: dict) -> None:
    with atomic_path(path) as tmp:
        torch.save(state, tmp)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())


def _load_checkpoint(path: Path) -> dict:
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


def _write_log(path: Path, log: list) -> None:
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write("step\tloss\tlr\tdev_loss\n")
        for step, loss, lr, dev in log:
            dev_text = "" if dev is None else repr(dev)
            handle.write(f"{step}\t{loss!r}\t{lr!r}\t{dev_text}\n")


@contextlib.contextmanager
def _atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary folder beside ``path``; swap it into place if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old",
                                        dir=path.parent))
            os.replace(path, old / "x")
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _clean_stale(out_dir: Path) -> None:
    """Remove temporary files and folders left by a killed run (never the checkpoint)."""
    for name in (CHECKPOINT_NAME, MODEL_DIR, LOG_NAME, STATS_NAME):
        for stale in glob.glob(str(out_dir / f".{glob.escape(name)}.*")):
            if stale.endswith((".part", ".old")):
                if os.path.isdir(stale):
                    shutil.rmtree(stale, ignore_errors=True)
                else:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(stale)


# ---------------------------------------------------------------------------------------- train

def train(token_ids: Sequence[Sequence[int]], vocab_size: int, special_ids: Mapping[str, int],
          cfg: NeuralConfig, out_dir: str | os.PathLike, *,
          dev_token_ids: Sequence[Sequence[int]] | None = None, tokenizer=None,
          device: str | torch.device = "auto", threads: int | None = None,
          progress: bool = True, stop_after: int | None = None) -> dict:
    """Train a ``build_model`` LM on ``token_ids`` (the train units, token ids without specials),
    resuming from ``out_dir/checkpoint.pt`` when it exists (see the module doc).

    ``special_ids`` maps ``"bos"``, ``"eos"``, ``"pad"`` to ids (``special_ids_of(tokenizer)``).
    ``dev_token_ids``: optional held-out units; their mean NLL per token is logged every
    ``cfg.eval_every`` steps (if > 0) and at the end. With ``isolate_units`` it is computed on
    whole units (the same number as scoring each unit alone, for units up to ``context`` tokens
    with <s> and </s>); otherwise on running text packed like the training data. ``tokenizer``: when given, the final model
    folder also holds it (``save_lm``), ready for ``AutoModelForCausalLM``/``AutoTokenizer``.
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
    special = _special(special_ids)
    _check_special(vocab_size, special["bos"], special["eos"], special["pad"])
    _check_ids(token_ids, vocab_size, "training units")
    if dev_token_ids is not None:
        _check_ids(dev_token_ids, vocab_size, "dev units")
    if stop_after is not None and (isinstance(stop_after, bool) or not isinstance(stop_after, int)
                                   or stop_after < 0):
        raise InputError(f"stop_after must be a non-negative integer, got {stop_after!r}")
    dev = torch.device(resolve_device(device))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    _clean_stale(out_dir)
    ckpt_path = out_dir / CHECKPOINT_NAME

    packed = _pack(token_ids, special["bos"], special["eos"], cfg.context, special["pad"],
                   cfg.isolate_units)
    dev_packed = None
    if dev_token_ids is not None and len(dev_token_ids) > 0:
        if cfg.isolate_units:  # dev loss = per-unit scoring ([bos]+ids -> ids+[eos]) exactly
            dev_packed = _pack_whole_units(dev_token_ids, special["bos"], special["eos"],
                                           cfg.context, special["pad"])
        else:
            dev_packed = _pack(dev_token_ids, special["bos"], special["eos"], cfg.context,
                               special["pad"], False)
    digest = _data_digest(packed)
    vocab_info = {"vocab_size": vocab_size, **special}
    n_blocks = packed.blocks.size(0)

    with _deterministic(dev), _num_threads(threads):
        model = build_model(cfg, vocab_size, special["bos"], special["eos"], special["pad"])
        model.to(dev)
        model.train()
        optimizer, scheduler = _make_optimizer(model, cfg)
        generator = torch.Generator(device="cpu")
        generator.manual_seed(cfg.seed)
        torch.manual_seed(cfg.seed + 1)   # dropout (CPU and CUDA)
        random.seed(cfg.seed)
        step, log, seconds_before, resumed_from = 0, [], 0.0, None

        if ckpt_path.exists():
            state = _load_checkpoint(ckpt_path)
            diffs = _differences(state["config"], cfg.to_dict())
            diffs += _differences(state["vocab"], vocab_info, prefix="vocab ")
            if state["data_sha256"] != digest:
                diffs.append("training data: the packed token ids differ (SHA-256 "
                             f"{state['data_sha256'][:12]}... in the checkpoint, "
                             f"{digest[:12]}... now)")
            if diffs:
                raise InputError("the checkpoint was written by a different run; refusing to "
                                 "mix runs. Differences: " + "; ".join(diffs) + ". Delete the "
                                 "checkpoint to train from scratch.", path=str(ckpt_path))
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            scheduler.load_state_dict(state["scheduler"])
            generator.set_state(state["generator"])
            torch.set_rng_state(state["torch_rng"])
            if dev.type == "cuda" and state.get("cuda_rng"):
                with contextlib.suppress(RuntimeError):
                    torch.cuda.set_rng_state_all(state["cuda_rng"])
            py = state["python_rng"]
            random.setstate((py[0], tuple(py[1]), py[2]))
            step = int(state["step"])
            log = [tuple(row) for row in state["log"]]
            seconds_before = float(state["seconds"])
            resumed_from = step

        def checkpoint(now_seconds: float) -> None:
            _write_checkpoint(ckpt_path, {
                "format": _CHECKPOINT_FORMAT,
                "config": cfg.to_dict(),
                "vocab": vocab_info,
                "data_sha256": digest,
                "step": step,
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "generator": generator.get_state(),
                "torch_rng": torch.get_rng_state(),
                "cuda_rng": torch.cuda.get_rng_state_all() if dev.type == "cuda" else None,
                "python_rng": random.getstate(),
                "log": [list(row) for row in log],
                "seconds": now_seconds,
                "device": str(dev),
            })
            _write_log(out_dir / LOG_NAME, log)

        target = cfg.steps if stop_after is None else min(cfg.steps, stop_after)
        bar = None
        if progress:
            from tqdm.auto import tqdm
            bar = tqdm(total=cfg.steps, initial=step, desc=f"train {out_dir.name}",
                       unit="step", dynamic_ncols=True, mininterval=1.0)
        t0 = time.monotonic()
        loss_value = log[-1][1] if log else float("nan")
        try:
            while step < target:
                lr_now = optimizer.param_groups[0]["lr"]
                idx = torch.randint(n_blocks, (cfg.batch_size,), generator=generator)
                loss = _batch_loss(model, packed, idx, dev)
                if not torch.isfinite(loss):
                    raise FloatingPointError(f"training loss is {float(loss)} at step "
                                             f"{step + 1}; lower lr ({cfg.lr})")
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                if cfg.grad_clip > 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
                optimizer.step()
                scheduler.step()
                step += 1
                loss_value = float(loss.detach())
                dev_loss = None
                if dev_packed is not None and (
                        (cfg.eval_every and step % cfg.eval_every == 0) or step == cfg.steps):
                    dev_loss = mean_nll(model, dev_packed, dev, cfg.batch_size)
                log.append((step, loss_value, lr_now, dev_loss))
                if bar is not None:
                    postfix = {"loss": f"{loss_value:.3f}", "lr": f"{lr_now:.2e}"}
                    if dev_loss is not None:
                        postfix["dev"] = f"{dev_loss:.3f}"
                    bar.set_postfix(postfix, refresh=False)
                    bar.update(1)
                if step % cfg.checkpoint_every == 0 or (step == target and step < cfg.steps):
                    checkpoint(seconds_before + time.monotonic() - t0)
        finally:
            if bar is not None:
                bar.close()
        this_call = time.monotonic() - t0
        stats = {
            "finished": step >= cfg.steps,
            "steps": step,
            "final_loss": loss_value,
            "dev_loss": next((row[3] for row in reversed(log) if row[3] is not None), None),
            "train_tokens": packed.n_tokens,
            "tokens_seen": step * cfg.batch_size * cfg.context,
            "seconds": seconds_before + this_call,
            "seconds_this_call": this_call,
            "device": str(dev),
            "threads": torch.get_num_threads(),
            "n_params": n_parameters(model),
            "resumed_from": resumed_from,
        }
        if step < cfg.steps:
            return stats

        model.eval()
        with _atomic_dir(out_dir / MODEL_DIR) as tmp:
            if tokenizer is not None:
                _save_into(model.to("cpu"), tokenizer, tmp)
            else:
                model.to("cpu").save_pretrained(tmp, safe_serialization=True)
        _write_log(out_dir / LOG_NAME, log)
        with atomic_path(out_dir / STATS_NAME) as tmp:
            tmp.write_text(json.dumps({**stats, "config": cfg.to_dict(), "vocab": vocab_info,
                                       "data_sha256": digest}, indent=2) + "\n",
                           encoding="utf-8")
        with contextlib.suppress(FileNotFoundError):
            ckpt_path.unlink()
        return stats


# ------------------------------------------------------------------------------------- save_lm

def _save_into(model, tokenizer, folder: Path) -> None:
    config = model.config
    for name in ("bos", "eos", "pad"):
        tok_id = getattr(tokenizer, f"{name}_token_id")
        model_id = getattr(config, f"{name}_token_id")
        if tok_id is None:
            if name == "pad":
                continue
            raise InputError(f"the tokenizer has no {name} token: the scoring convention needs "
                             f"<s> and </s>")
        if model_id is not None and model_id != tok_id:
            raise InputError(f"{name} id mismatch: the model was trained with {model_id}, the "
                             f"tokenizer has {tok_id}; this tokenizer does not belong to the "
                             f"model")
        setattr(config, f"{name}_token_id", tok_id)
    n_tok = len(tokenizer)
    if n_tok > config.vocab_size:
        raise InputError(f"the tokenizer has {n_tok} tokens but the model only "
                         f"{config.vocab_size} embeddings")
    _sync_generation_config(model)
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)


def save_lm(model, tokenizer, folder: str | os.PathLike) -> Path:
    """Save ``model`` and ``tokenizer`` into one folder (written aside, then renamed into place),
    so that ``AutoModelForCausalLM.from_pretrained(folder)`` and
    ``AutoTokenizer.from_pretrained(folder)`` both load it. The model config's bos/eos/pad ids
    are set from the tokenizer; a tokenizer whose ids differ from the ids the model was built
    with, or with more tokens than the model has embeddings, is an ``InputError``."""
    folder = Path(folder)
    with _atomic_dir(folder) as tmp:
        _save_into(model, tokenizer, tmp)
    return folder
