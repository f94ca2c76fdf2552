"""Scoring one language's evaluation split with a token LM (a trained Transformer or a pretrained
model), in resumable chunks, through the one scoring path (:func:`fairppl.lm.scoring.score_texts`).

:func:`score_split_with_lm` is the whole job: read the split, load the model, score the units
chunk by chunk (:func:`fairppl.core.resume.run_chunked`: a restarted job reuses the chunks already
written under ``parts_dir``), write the score table (Parquet, the columns of
:func:`fairppl.stats.metrics.score_frame` plus ``bits_eos``, ``token_ids`` and ``token_nats``) and the
conventions record (JSON), then remove the chunks. :func:`score_units` is its core, for a model
already in memory.

Units: ``bits`` per unit (all its scored tokens, the end token included), ``bits_eos`` the end
token's share, ``token_nats`` per token in nats. A unit the tokenizer does not reproduce exactly
would not charge every character: it is a ScoringError, never a silent score.

A chunk's fingerprint is the model folder's file names, sizes and modification times (or the
hub id) and the conventions: a chunk from another model or other conventions is never reused.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import polars as pl

from ..corpus.readers import read_split
from ..core.errors import ScoringError
from ..core.io import write_table, write_text
from .cache import load_lm, weights_note
from ..stats.metrics import nats_to_bits, score_frame
from ..core.resume import clear_parts, fingerprint, run_chunked
from .scoring import conventions, score_texts
from .special_tokens import check_special_tokens

_log = logging.getLogger(__name__)


def model_identity(load_from: str | os.PathLike):
    """What the scores depend on: the folder's files as sorted ``(name, bytes, mtime)``, or
    ``load_from`` itself when it is not a folder (a hub id)."""
    folder = Path(load_from)
    if not folder.is_dir():
        return load_from
    return sorted((p.name, p.stat().st_size, p.stat().st_mtime) for p in folder.iterdir())


def score_chunk(model, tokenizer, chunk: list[tuple[str, str]], *, batch_size: int,
                model_id: str, start_token: str | None = None,
                end_token: str | None = None) -> pl.DataFrame:
    """Score ``chunk`` (``(unit_id, text)`` pairs); return one row per unit, in order: unit_id,
    n_tokens, bits, bits_eos (the charged end token's bits), token_ids, token_nats (nats).
    ScoringError naming ``model_id`` and up to 5 unit ids if any unit is not reproduced exactly
    by the tokenizer."""
    texts = [text for _, text in chunk]
    scored = score_texts(model, tokenizer, texts, batch_size=batch_size, progress=False,
                         start_token=start_token, end_token=end_token)
    lossy = [uid for (uid, _), s in zip(chunk, scored) if not s.lossless]
    if lossy:
        raise ScoringError(
            f"{model_id}: the tokenizer does not reproduce {len(lossy)} units exactly (e.g. "
            f"{lossy[:5]}): their scores would not charge every character")
    return pl.DataFrame({
        "unit_id": [uid for uid, _ in chunk],
        "n_tokens": [s.n_tokens for s in scored],
        "bits": [nats_to_bits(s.nats) for s in scored],
        # the charged end token is each unit's last scored token
        "bits_eos": [nats_to_bits(s.token_nats[-1]) for s in scored],
        "token_ids": [s.token_ids for s in scored],
        "token_nats": [s.token_nats for s in scored],
    })


def score_units(units: pl.DataFrame, model, tokenizer, *, corpus: str, language: str,
                split: str, model_id: str, tokenizer_id: str, load_from: str | os.PathLike,
                parts_dir: str | os.PathLike, chunk_units: int, batch_size: int,
                special: dict | None = None) -> tuple[pl.DataFrame, dict]:
    """Score ``units`` (columns unit_id, text; in order) with a loaded ``model`` and
    ``tokenizer``, resumably in chunks of ``chunk_units`` under ``parts_dir``; return
    ``(table, record)``: the score table and the conventions record (ids, where the model was
    loaded from, its weights in words, the sheet's start/end tokens, the scoring conventions).

    ``special`` is a pretrained model's sheet entry (``model``, ``bos``, ``eos``, ``sheet``,
    ``line``: :func:`fairppl.lm.special_tokens.check_special_tokens`); its ``bos``/``eos`` replace
    the tokenizer's start and end tokens. The chunks are left in ``parts_dir`` (the caller
    clears them once the outputs are written)."""
    special = special or {}
    if special:
        check_special_tokens(tokenizer, **special)
    tokens = {"start_token": special.get("bos"), "end_token": special.get("eos")}
    conv = conventions(tokenizer, model, **tokens)
    _log.info("model %s from %s; conventions %s", model_id, load_from, conv)
    key = fingerprint(model_identity(load_from), conv)

    def compute(chunk):
        return score_chunk(model, tokenizer, chunk, batch_size=batch_size, model_id=model_id,
                           **tokens)

    items = list(zip(units["unit_id"].to_list(), units["text"].to_list()))
    done = run_chunked(items, chunk_units, parts_dir, key, compute, log=_log.info)
    table = score_frame(
        corpus=corpus,
        language=language,
        model=model_id,
        tokenizer=tokenizer_id,
        vocab_size=len(tokenizer),
        open_vocabulary=True,
        split=split,
        unit_ids=done["unit_id"].to_list(),
        texts=units["text"].to_list(),
        n_tokens=done["n_tokens"].to_list(),
        bits=done["bits"].to_list(),
        extra={"bits_eos": done["bits_eos"].to_list(), "token_ids": done["token_ids"].to_list(),
               "token_nats": done["token_nats"].to_list()},
    )
    _log.info("%d units, %d tokens, %.1f bits", table.height, table["n_tokens"].sum(),
              table["bits"].sum())
    record = {"corpus": corpus, "language": language, "model": model_id,
              "tokenizer": tokenizer_id, "loaded_from": str(load_from),
              "weights": weights_note(load_from), "model_sheet": special or None, **conv}
    return table, record


def score_split_with_lm(units_path: str | os.PathLike, *, corpus: str, language: str,
                        split: str, model_id: str, tokenizer_id: str,
                        load_from: str | os.PathLike, scoring: dict,
                        parts_dir: str | os.PathLike, scores_out: str | os.PathLike,
                        conventions_out: str | os.PathLike, special: dict | None = None,
                        device=None, dtype: str = "float32") -> pl.DataFrame:
    """Score ``language``'s ``split`` of the prepared units table ``units_path`` with the model
    at ``load_from`` (:func:`fairppl.lm.cache.load_lm`; ``device`` as there); write the score
    table to ``scores_out`` (Parquet) and the conventions record to ``conventions_out`` (JSON),
    then remove ``parts_dir``; return the table.

    ``scoring`` is the config's ``scoring`` block: ``batch_size``, ``chunk_units`` and
    ``max_units`` (an evenly spaced subset, or None for the whole split). ``special``: see
    :func:`score_units`; ``dtype``: the precision the model is loaded in (config
    ``pretrained.dtype`` for a pretrained model; float32 for a trained Transformer), recorded as
    the conventions' ``dtype``."""
    units = read_split(units_path, language, split, scoring.get("max_units"))
    model, tokenizer = load_lm(load_from, device=device, dtype=dtype)
    table, record = score_units(
        units, model, tokenizer, corpus=corpus, language=language, split=split,
        model_id=model_id, tokenizer_id=tokenizer_id, load_from=load_from,
        parts_dir=parts_dir, chunk_units=scoring["chunk_units"],
        batch_size=scoring["batch_size"], special=special)
    write_text(conventions_out, json.dumps(record, ensure_ascii=False, indent=1))
    write_table(table, parquet=scores_out)
    clear_parts(parts_dir)
    return table
