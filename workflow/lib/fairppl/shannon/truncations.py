"""Building a campaign's truncations (Bimbot et al., sections 4.1-4.2 and 5): from units in
corpus order, or from the units of a finished study (:func:`build_campaign`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from ..core.errors import InputError
from ..core.io import read_parquet
from .campaign_folder import PROTOCOLS, read_settings, write_campaign
from .gambling import randomized_positions, randomized_scheme
from .outcomes import Outcomes, build_outcomes, check_unit, contexts, unit_outcomes


def truncation_id(k: int) -> str:
    """The id of the k-th truncation (1-based) of a campaign file."""
    return f"t{k:06d}"


def make_truncations(units: Sequence[tuple[str, str]], outcomes: Outcomes, protocol: str,
                     n: int | None = None, seed: int = 0, unit: str = "word") -> list[dict]:
    """The truncations of ``units`` (``(unit_id, normalised text)`` in corpus order) as dicts
    ``id, unit_id, context, word`` (``word``: the correct outcome), and for the randomized
    protocol ``scheme`` and ``weight``. A position is a word, or a character for the ``unit``
    ``char`` (:func:`.outcomes.contexts`); "word" below reads "character" then.

    ``exhaustive``: every position of every unit (the first ``n`` units when ``n`` is given),
    the end of the unit included. ``randomized``: one truncation in each of ``n`` distinct
    units (all when ``None``), drawn with ``numpy.random.default_rng(seed)`` by
    :func:`fairppl.shannon.gambling.randomized_positions`: the paper's systematic scheme where
    ``n`` allows distinct units (every truncation equally likely, ``weight`` 1), else the
    length-weighted scheme (``weight``: the unit's number of truncations, by which the scorer
    weighs the truncation's log bet). Either way the score estimates the per-word gambling
    perplexity of the exhaustive protocol on the same units, without bias in log terms.
    Written in corpus order."""
    if protocol not in PROTOCOLS:
        raise InputError(f"protocol {protocol!r}: expected one of {', '.join(PROTOCOLS)}")
    check_unit(unit)
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise InputError(f"n = {n!r}: expected a number of units >= 1")
    if not units:
        raise InputError("no units to truncate")
    if n is not None and n > len(units):
        raise InputError(f"n = {n}: only {len(units)} units to draw from; expected n <= "
                         f"{len(units)}")
    out = []
    if protocol == "exhaustive":
        for uid, text in units[:n]:
            ctx, answers = contexts(text, unit), unit_outcomes(text, outcomes, unit)
            for p in range(len(ctx)):
                out.append({"id": truncation_id(len(out) + 1), "unit_id": uid,
                            "context": ctx[p], "word": answers[p]})
        return out
    lengths = np.array([len(contexts(text, unit)) for _, text in units], dtype=np.int64)
    size = n or len(units)
    scheme = randomized_scheme(lengths, size)
    picks, positions = randomized_positions(lengths, size, np.random.default_rng(seed), scheme)
    for i, p in sorted(zip(picks.tolist(), positions.tolist())):
        uid, text = units[i]
        out.append({"id": truncation_id(len(out) + 1), "unit_id": uid,
                    "context": contexts(text, unit)[p],
                    "word": unit_outcomes(text, outcomes, unit)[p],
                    "scheme": scheme,
                    "weight": int(lengths[i]) if scheme == "weighted" else 1})
    return out


# ---------------------------------------------------------------- building from a study


def load_config(path: str | os.PathLike) -> dict | None:
    """The YAML mapping at ``path``, None when there is no such file; InputError naming the file
    for bad YAML or a non-mapping."""
    import yaml

    path = Path(path)
    if not path.is_file():
        return None
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise InputError(f"not valid YAML ({str(err).splitlines()[0]})", path=str(path)) from None
    if not isinstance(config, dict):
        raise InputError("expected a YAML mapping (the study's config)", path=str(path))
    return config


def _config_vocab_size(config: dict | None, config_path) -> int | None:
    where = f"the key shannon.vocab_size in {config_path}"
    if config is None:
        raise InputError(f"no --vocab-size and no config file {config_path}: expected "
                         f"--vocab-size V or {where}")
    block = config.get("shannon")
    if not isinstance(block, dict) or "vocab_size" not in block:
        raise InputError(f"no --vocab-size and no key shannon.vocab_size: expected --vocab-size "
                         f"V or {where}", path=str(config_path))
    size = block["vocab_size"]
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise InputError(f"shannon.vocab_size = {size!r}: expected an integer >= 1 or null "
                         f"(every train word type)", path=str(config_path))
    return size


def default_unit(config: dict | None, language: str, config_path) -> tuple[str, str]:
    """The unit of a campaign without ``--unit``, and why: ``char`` for a language listed in
    ``word_ngram.languages_without_spaces`` of the config (its "words" would be whole clauses),
    else ``word``."""
    if config is None:
        return "word", f"no config file {config_path}"
    block = config.get("word_ngram")
    listed = (block.get("languages_without_spaces") if isinstance(block, dict) else None) or []
    if not isinstance(listed, list):
        raise InputError(f"word_ngram.languages_without_spaces = {listed!r}: expected a list of "
                         f"language ids", path=str(config_path))
    where = f"word_ngram.languages_without_spaces of {config_path}"
    if language in listed:
        return "char", f"{language} is in {where}"
    return "word", f"{language} is not in {where}"


def vocabulary_corpus(config: dict | None, corpus: str) -> str:
    """The corpus whose train split gives the outcomes: the one that trains the models scored
    on ``corpus`` (``models_from`` of an evaluation-only corpus such as the UDHR), or the corpus
    itself when the config does not name it."""
    if config is None or corpus not in (config.get("corpora") or {}):
        return corpus
    from ..config.design import train_corpus

    return train_corpus(config, corpus)


def _units(frame, path: str, language: str, split: str | None) -> list[tuple[str, str]]:
    langs = frame.filter(frame["language"] == language)
    if langs.height == 0:
        have = sorted(set(frame["language"].to_list()))
        raise InputError(f"no units of language {language!r}: expected one of "
                         f"{', '.join(have)}", path=path)
    part = langs if split is None else langs.filter(langs["split"] == split)
    if part.height == 0:
        have = sorted(set(langs["split"].to_list()))
        raise InputError(f"no units of {language!r} in split {split!r}: expected one of "
                         f"{', '.join(have)} (or all)", path=path)
    part = part.sort("position")
    return list(zip(part["unit_id"].to_list(), part["text"].to_list()))


def build_campaign(root: str | os.PathLike, corpus: str, language: str, out: str | os.PathLike,
                   *, split: str = "test", protocol: str = "exhaustive", n: int | None = None,
                   seed: int = 0, vocab_size: int | None = None, unit: str | None = None,
                   config_path: str | os.PathLike = "config/config.yaml") -> dict:
    """Write a campaign for one corpus and language of a finished study under ``root``: the
    units of ``split`` (``all``: every unit) of ``results/corpus/<corpus>/units.parquet``, the
    outcomes from the language's train split of the vocabulary corpus (:func:`vocabulary_corpus`)
    with ``vocab_size`` words or characters (else the config's ``shannon.vocab_size``), a
    position per ``unit`` (``None``: :func:`default_unit`). Returns campaign.json's content with
    ``status`` (``written`` or ``unchanged``) and ``unit_reason`` (``--unit``, or why the
    default)."""
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise InputError(f"--n {n!r}: expected a number of units >= 1 (or no --n: every unit)")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"--seed {seed!r}: expected an integer >= 0")
    root = Path(root)
    cfg_path = Path(config_path) if Path(config_path).is_absolute() else root / config_path
    config = load_config(cfg_path)
    if unit is None:
        unit, unit_reason = default_unit(config, language, config_path)
    else:
        if unit not in ("word", "char"):
            raise InputError(f"--unit {unit!r}: expected word or char")
        unit_reason = "--unit"
    setting = "--vocab-size"
    if vocab_size is None:
        vocab_size = _config_vocab_size(config, cfg_path)
        setting = "shannon.vocab_size"
    elif isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 1:
        raise InputError(f"--vocab-size {vocab_size!r}: expected an integer >= 1")
    source = vocabulary_corpus(config, corpus)
    cols = ["unit_id", "position", "language", "split", "text"]
    units_path = root / "results" / "corpus" / corpus / "units.parquet"
    frame = read_parquet(units_path, columns=cols)
    train_path = root / "results" / "corpus" / source / "units.parquet"
    train_frame = frame if source == corpus else read_parquet(train_path, columns=cols)
    train = _units(train_frame, str(train_path), language, "train")
    try:
        outcomes = build_outcomes((text for _, text in train), vocab_size,
                                  setting=setting, where=f"{source}/{language}", unit=unit)
    except InputError as err:
        raise InputError(str(err), path=str(train_path)) from None
    units = _units(frame, str(units_path), language, None if split == "all" else split)
    try:
        truncations = make_truncations(units, outcomes, protocol, n, seed, unit)
    except InputError as err:
        raise InputError(str(err), path=str(units_path)) from None
    settings = {"corpus": corpus, "language": language, "unit": unit, "split": split,
                "protocol": protocol, "n": n, "seed": seed, "vocab_size": vocab_size,
                "vocabulary_corpus": source}
    status = write_campaign(out, truncations, outcomes, settings)
    return read_settings(Path(out)) | {"status": status, "unit_reason": unit_reason}

