"""The outputs of a finished run and ``save_lm``: one folder that both
``AutoModelForCausalLM.from_pretrained`` and ``AutoTokenizer.from_pretrained`` load.

Every file and folder is written under a temporary name beside its target and renamed into
place, so a killed run leaves the old output or none, never a partial one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Mapping

from ..core.errors import InputError
from ..core.io import atomic_dir, atomic_path
from .model import sync_generation_config

MODEL_DIR = "model"
LOG_NAME = "train_log.tsv"
STATS_NAME = "train_stats.json"
#: Inside the model folder: the settings the finished model was trained with (``check_trained``).
RECORD_NAME = "fairppl_training.json"


def write_log(path: Path, log: list) -> None:
    """``train_log.tsv``: one row per step; loss and dev_loss in nats per target token, dev_loss
    empty where the dev set was not evaluated."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write("step\tloss\tlr\tdev_loss\n")
        for step, loss, lr, dev in log:
            dev_text = "" if dev is None else repr(dev)
            handle.write(f"{step}\t{loss!r}\t{lr!r}\t{dev_text}\n")


def save_final(out_dir: Path, model, tokenizer, log: list, record: dict) -> None:
    """Write a finished run's outputs into ``out_dir``: ``model/`` (on the CPU, with the
    tokenizer when one is given, and ``record`` as ``fairppl_training.json``; sealed: its digest
    recorded), ``train_log.tsv``, then ``train_stats.json`` (``record``) last, so that the stats
    file stands for a complete set."""
    model.eval()
    with atomic_dir(out_dir / MODEL_DIR, seal=True) as tmp:
        if tokenizer is not None:
            _save_into(model.to("cpu"), tokenizer, tmp)
        else:
            model.to("cpu").save_pretrained(tmp, safe_serialization=True)
        (tmp / RECORD_NAME).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    write_log(out_dir / LOG_NAME, log)
    with atomic_path(out_dir / STATS_NAME) as tmp:
        tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


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
    sync_generation_config(model)
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)


def save_lm(model, tokenizer, folder: str | os.PathLike) -> Path:
    """Save ``model`` and ``tokenizer`` into one folder (written aside, then renamed into place),
    so that ``AutoModelForCausalLM.from_pretrained(folder)`` and
    ``AutoTokenizer.from_pretrained(folder)`` both load it. The model config's bos/eos/pad ids
    are set from the tokenizer; a tokenizer whose ids differ from the ids the model was built
    with, or with more tokens than the model has embeddings, is an ``InputError``."""
    folder = Path(folder)
    with atomic_dir(folder, seal=True) as tmp:
        _save_into(model, tokenizer, tmp)
    return folder


def check_trained(folder: str | os.PathLike, hyper: Mapping) -> dict:
    """Refuse a trained model folder whose recorded settings are not ``hyper`` (the config's
    ``NeuralConfig`` fields; the defaults fill the rest); returns the record.

    The record is ``fairppl_training.json`` in the folder (written by ``train`` with the finished
    model), else ``train_stats.json`` beside it. A model that is unfinished, trained with other
    settings, or without a record is an ``InputError`` naming the folder and the differences:
    such a model must never stand in for the configured one."""
    from .checkpoint import config_differences
    from .config import NeuralConfig

    folder = Path(folder)
    for source in (folder / RECORD_NAME, folder.parent / STATS_NAME):
        if source.is_file():
            break
    else:
        raise InputError(f"no training record ({RECORD_NAME} in the folder or {STATS_NAME} "
                         f"beside it): not a model finished by fairppl.neural.train; delete "
                         f"the folder and run the workflow again to train it", path=str(folder))
    try:
        record = json.loads(source.read_text(encoding="utf-8"))
        saved = record["config"]
    except (ValueError, KeyError, TypeError) as err:
        raise InputError(f"unreadable training record ({type(err).__name__}: {err})",
                         path=str(source)) from None
    wanted = NeuralConfig.from_dict(hyper)
    diffs = config_differences(saved, wanted.to_dict(), saved_as="recorded")
    if not record.get("finished", False) or int(record.get("steps", -1)) != wanted.steps:
        diffs.insert(0, f"trained steps: {record.get('steps')!r} (finished: "
                        f"{record.get('finished')!r}), {wanted.steps} configured")
    if diffs:
        raise InputError("the model was trained with other settings than the config's, "
                         "refusing to score it in their place. Differences: "
                         + "; ".join(diffs)
                         + ". Delete the model folder and run the workflow again to retrain it",
                         path=str(folder))
    return record
