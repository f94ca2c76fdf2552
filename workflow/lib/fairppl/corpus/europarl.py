"""Europarl v7's parallel release as a multi-text aligned through English (corpus type
``europarl``).

The release is one archive per language paired with English
(``https://www.statmt.org/europarl/v7/<xx>-en.tgz``), holding two line-aligned files,
``europarl-v7.<xx>-en.<xx>`` and ``europarl-v7.<xx>-en.en``: one sentence per line, some lines
empty on one side. The multi-text of Cotterell et al. (2018) and Mielke et al. (2019) is the set
of English sentences present in every configured pair, each with its translation in every
language (:func:`align_pairs`):

- a unit is an English sentence, compared as its exact string with surrounding whitespace
  removed;
- an English sentence that occurs on more than one line of any pair's English file is dropped,
  since it cannot be aligned to one translation;
- a line whose English or foreign side is empty (or only whitespace) gives no unit: its English
  sentence is missing from that pair, hence from the multi-text;
- the units are ordered by their line in the *order pair* (the first configured pair in sorted
  order, e.g. ``bg-en`` for the paper's 21 languages) and their id is that pair and line,
  ``"bg-en:0001234"`` (1-based), so the ids, the order and hence the block split of
  :mod:`fairppl.corpus.splits` are reproducible from the archives and the configured languages.
  Adding a language can only remove units (the intersection shrinks) and can change the order
  pair; this is the multi-text's definition, unlike the Bible's fixed verse grid.

:func:`extract_multitext` reads the archives (downloaded, or copied from a local mirror, and
checked by :func:`fairppl.corpus.url.download_url`) and writes the multi-text as a Parquet table
(:data:`MULTITEXT_SCHEMA`) and one row per pair of what was dropped (:data:`PAIR_STATS_SCHEMA`);
:func:`read_multitext` reads it back in the reader shape ``{language: [(unit_id, raw_text),
...]}`` that :mod:`fairppl.corpus.prepare` aligns and splits like every other corpus.

Every bad input raises :class:`fairppl.core.errors.InputError` naming the archive (and member):
a missing member, files with different line counts, invalid UTF-8, a malformed URL pattern.
(A checksum missing from the config is refused at start-up, by
:func:`fairppl.config.sheet.check_against_config`.)
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import PurePosixPath
from typing import Iterable

import polars as pl
from tqdm import tqdm

from .align import Texts
from ..core.errors import InputError
from ..core.io import read_parquet, write_table
from ..core.text import decode_utf8
from .url import open_tar, split_lines

#: The release's download address; ``{pair}`` is e.g. ``fr-en``, ``{iso1}`` the 2-letter code.
DEFAULT_URL = "https://www.statmt.org/europarl/v7/{pair}.tgz"
#: File name of one side of a pair inside its archive (at the top or in any folder).
MEMBER = "europarl-v7.{pair}.{lang}"

#: The multi-text table: one row per unit and language (``source_id``: the 2-letter code).
MULTITEXT_SCHEMA = {"unit_id": pl.Utf8, "position": pl.Int64, "source_id": pl.Utf8,
                    "text": pl.Utf8}
#: What each pair contributed, in the order the pairs were read (``common``: units present in
#: this and every earlier pair).
PAIR_STATS_SCHEMA = {"pair": pl.Utf8, "lines": pl.Int64, "empty_english": pl.Int64,
                     "empty_foreign": pl.Int64, "duplicate_english": pl.Int64,
                     "usable": pl.Int64, "common": pl.Int64}


def pair_name(iso1: str, pivot: str) -> str:
    """The pair id of language ``iso1`` with the pivot: ``pair_name("fr", "en") == "fr-en"``."""
    return f"{iso1}-{pivot}"


def pair_url(template: str | None, iso1: str, pivot: str) -> str:
    """The download URL of one pair: ``template`` (None: the corpus block gives no ``url``,
    :data:`DEFAULT_URL`) with ``{pair}`` and/or ``{iso1}`` filled in (InputError for another
    field or a template with neither)."""
    template = template or DEFAULT_URL
    if "{pair}" not in template and "{iso1}" not in template:
        raise InputError(f"Europarl url {template!r} has neither {{pair}} nor {{iso1}}: expected "
                         f"a pattern such as {DEFAULT_URL!r}")
    try:
        return template.format(pair=pair_name(iso1, pivot), iso1=iso1)
    except (KeyError, IndexError, ValueError) as err:
        raise InputError(f"Europarl url {template!r} ({err!r}): expected a pattern whose only "
                         f"fields are {{pair}} and {{iso1}}") from None


def foreign_sources(sources: Iterable[str], pivot: str) -> list[str]:
    """The configured source ids other than the pivot, sorted: one archive each."""
    return sorted(s for s in set(sources) if s != pivot)


# --------------------------------------------------------------------------------------------
# One pair's archive
# --------------------------------------------------------------------------------------------

def _find_member(names: list[str], wanted: str, archive: str) -> str:
    hits = [n for n in names if PurePosixPath(n).name == wanted]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        shown = ", ".join(sorted(names)[:6]) or "none"
        raise InputError(f"member {wanted} not found in the archive (its files: {shown}): "
                         f"expected a Europarl v7 pair archive with that file", path=archive)
    raise InputError(f"member {wanted} found {len(hits)} times ({', '.join(hits)}): expected "
                     f"it once", path=archive)


def read_pair(archive: str | os.PathLike, iso1: str, pivot: str = "en"
              ) -> tuple[list[str], list[str]]:
    """The English and the foreign lines of one pair archive (``europarl-v7.<pair>.<pivot>``
    and ``europarl-v7.<pair>.<iso1>``, UTF-8), in file order. InputError naming the archive when
    it cannot be read, a member is missing, a member is not UTF-8 (member and line), or the two
    files have different line counts (both named, with their counts)."""
    archive = str(archive)
    pair = pair_name(iso1, pivot)
    tar = open_tar(archive, "Europarl archive", f"the downloaded .tgz of the pair {pair}")
    with tar:
        members = {m.name: m for m in tar.getmembers() if m.isfile()}
        names = list(members)
        sides = {}
        for lang in (pivot, iso1):
            member = _find_member(names, MEMBER.format(pair=pair, lang=lang), archive)
            data = tar.extractfile(members[member]).read()
            sides[lang] = (member, split_lines(decode_utf8(data, f"{archive}:{member}")))
    (en_member, english), (xx_member, foreign) = sides[pivot], sides[iso1]
    if len(english) != len(foreign):
        raise InputError(f"{en_member} has {len(english)} lines and {xx_member} has "
                         f"{len(foreign)}: expected line-aligned files (the same number of "
                         f"lines)", path=archive)
    return english, foreign


# --------------------------------------------------------------------------------------------
# The intersection through English
# --------------------------------------------------------------------------------------------

def _usable(pair: str, english: list[str], foreign: list[str]) -> tuple[dict, dict]:
    """{english sentence: (1-based line, foreign text)} of one pair's usable lines, and the
    pair's counts."""
    keys = [line.strip() for line in english]
    counts = Counter(k for k in keys if k)
    usable: dict[str, tuple[int, str]] = {}
    empty_en = empty_xx = dup = 0
    for i, (key, text) in enumerate(zip(keys, foreign), start=1):
        if not key:
            empty_en += 1
        elif counts[key] > 1:
            dup += 1
        elif not text.strip():
            empty_xx += 1
        else:
            usable[key] = (i, text)
    stats = {"pair": pair, "lines": len(english), "empty_english": empty_en,
             "empty_foreign": empty_xx, "duplicate_english": dup, "usable": len(usable)}
    return usable, stats


class _Intersection:
    """The English sentences usable in every pair added so far, with their line and text in each."""

    def __init__(self):
        self.common: dict[str, dict[str, tuple[int, str]]] | None = None
        self.stats: list[dict] = []
        self.langs: list[str] = []

    def add(self, iso1: str, pivot: str, english: list[str], foreign: list[str]) -> None:
        pair = pair_name(iso1, pivot)
        if len(english) != len(foreign):
            raise InputError(f"pair {pair}: {len(english)} English lines and {len(foreign)} "
                             f"{iso1} lines: expected line-aligned sides")
        usable, stats = _usable(pair, english, foreign)
        if self.common is None:
            self.common = {key: {iso1: hit} for key, hit in usable.items()}
        else:
            self.common = {key: {**seen, iso1: usable[key]}
                           for key, seen in self.common.items() if key in usable}
        stats["common"] = len(self.common)
        self.stats.append(stats)
        self.langs.append(iso1)

    def texts(self, pivot: str, order: str) -> Texts:
        """``{source_id: [(unit_id, text), ...]}`` (the pivot's text is the English sentence),
        ordered by the line in pair ``order``."""
        pair = pair_name(order, pivot)
        common = sorted((hits[order][0], key, hits) for key, hits in (self.common or {}).items())
        out: Texts = {pivot: [(f"{pair}:{line:07d}", key) for line, key, _ in common]}
        for lang in sorted(self.langs):
            out[lang] = [(f"{pair}:{line:07d}", hits[lang][1]) for line, _, hits in common]
        return out


def align_pairs(pairs: Iterable[tuple[str, list[str], list[str]]], pivot: str = "en"
                ) -> tuple[Texts, pl.DataFrame]:
    """The multi-text of line-aligned pairs ``(iso1, english_lines, foreign_lines)`` through
    the ``pivot`` (see the module docstring for the rules): ``({source_id: [(unit_id, text),
    ...]}, pair counts)``, the pivot's key holding the English sentences (stripped), every
    other language its line as given. The order pair is the first ``iso1`` in sorted order;
    the counts have the columns of :data:`PAIR_STATS_SCHEMA`, one row per pair in the order
    given. InputError for no pair, a pair given twice, or the pivot given as a pair."""
    inter = _Intersection()
    seen: list[str] = []
    for iso1, english, foreign in pairs:
        if iso1 == pivot or iso1 in seen:
            raise InputError(f"Europarl pair {pair_name(iso1, pivot)} given "
                             f"{'as the pivot' if iso1 == pivot else 'twice'}: expected each "
                             f"non-pivot language once")
        seen.append(iso1)
        inter.add(iso1, pivot, english, foreign)
    if not seen:
        raise InputError(f"no Europarl pair given: expected at least one language paired with "
                         f"{pivot!r}")
    return inter.texts(pivot, min(seen)), pl.DataFrame(inter.stats, schema=PAIR_STATS_SCHEMA)


def multitext_table(texts: Texts) -> pl.DataFrame:
    """``texts`` (:func:`align_pairs`) as the multi-text table (:data:`MULTITEXT_SCHEMA`), sorted
    by source id and position."""
    rows = [(uid, pos, sid, text) for sid in sorted(texts)
            for pos, (uid, text) in enumerate(texts[sid])]
    return pl.DataFrame(rows, schema=MULTITEXT_SCHEMA, orient="row")


def extract_multitext(archives: dict[str, str | os.PathLike], pivot: str, *, out: str,
                      stats_out: str, log=None) -> pl.DataFrame:
    """Read every pair archive (``{iso1: path}``, smallest file first to keep the intersection
    small), align them through ``pivot`` (:func:`align_pairs`), write the multi-text table to
    ``out`` (Parquet) and the pair counts to ``stats_out`` (TSV), each atomically; return the
    table. A progress bar counts the pairs; ``log`` (a text file) gets one line per pair."""
    if not archives:
        raise InputError(f"no Europarl pair archive given: expected at least one language "
                         f"paired with {pivot!r}")
    order = sorted(archives, key=lambda s: (os.path.getsize(archives[s])
                                            if os.path.isfile(archives[s]) else 0, s))

    def pairs():
        for iso1 in tqdm(order, desc="europarl: aligning pairs", unit="pair"):
            english, foreign = read_pair(archives[iso1], iso1, pivot)
            yield iso1, english, foreign

    texts, stats = align_pairs(pairs(), pivot)
    if log is not None:
        for row in stats.iter_rows(named=True):
            print(f"{row['pair']}: {row['lines']} lines, {row['empty_english']} empty English, "
                  f"{row['empty_foreign']} empty {row['pair'].split('-')[0]}, "
                  f"{row['duplicate_english']} with a repeated English sentence, "
                  f"{row['usable']} usable; {row['common']} in every pair so far",
                  file=log, flush=True)
    if not texts[pivot]:
        raise InputError(f"no English sentence is usable in every pair "
                         f"({', '.join(stats['pair'])}): expected a non-empty intersection",
                         path=str(archives[order[0]]))
    table = multitext_table(texts)
    write_table(table, parquet=out)
    write_table(stats, tsv=stats_out)
    return table


def read_multitext(path: str | os.PathLike, sources: dict[str, str] | None = None) -> Texts:
    """The multi-text table written by :func:`extract_multitext` in the reader shape
    ``{language: [(unit_id, raw_text), ...]}`` in unit order. ``sources`` maps language ids to
    source ids (2-letter codes); ``None`` returns every source id the table holds, keyed by
    itself. InputError naming the file for an unreadable table or a source id it lacks."""
    table = read_parquet(path, columns=list(MULTITEXT_SCHEMA))
    held = sorted(table["source_id"].unique().to_list())
    if sources is None:
        sources = {sid: sid for sid in held}
    absent = {lang: sid for lang, sid in sources.items() if sid not in held}
    if absent:
        raise InputError(f"source id(s) {absent} not in the Europarl multi-text: expected among "
                         f"{held} (the languages it was extracted for; rerun its extraction "
                         f"after changing the language sheet)", path=str(path))
    out: Texts = {}
    for lang, sid in sources.items():
        rows = table.filter(pl.col("source_id") == sid).sort("position")
        out[lang] = list(zip(rows["unit_id"].to_list(), rows["text"].to_list()))
    return out
