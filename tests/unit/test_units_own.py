"""Partial coverage (config `corpora.<corpus>.units: own` and `common_min_share`): each language
keeps the units its own translation has, the English reference's drops apply in every language,
the split of a unit is the same in every language, and the per-language comparisons leave the
languages with few units out of the common unit set. Counted by hand on small multi-texts and
score tables, and on three files of the real CES archive against a regex count of their
segments."""

from __future__ import annotations

import collections
import io
import logging
import re
import tarfile

import polars as pl
import pytest

from fairppl.core.errors import InputError
from fairppl.corpus.align import align_units
from fairppl.corpus.prepare import prepare_corpus, prepare_units, read_dropped
from fairppl.corpus.splits import SplitScheme
from fairppl.stats.metrics import (
    bits_per_utterance,
    common_unit_set,
    describe_common_set,
    majority_counts,
    on_common_units,
    score_frame,
    with_common_set,
    with_unit_set,
)

#: Blocks of 6 units: position 0 of each block is dev, position 1 test, the rest train.
SCHEME = {"block_size": 6, "dev_start": 1, "dev_end": 1, "test_start": 2, "test_end": 2}
MEMBERS = ["data/{source_id}.txt"]


def _lines(word: str, placeholders=()) -> list[str]:
    """12 lines of one length; the 0-based positions in ``placeholders`` are "-"."""
    return ["-" if i in placeholders else f"{word} {i:02d} here." for i in range(12)]


def _archive(path) -> str:
    """English with a placeholder at position 9; aaa at 3, bbb at 4; unc (shipped, never
    configured) at 5. Every other line has the usual length, so no line holds merged text."""
    files = {"eng": _lines("Line", {9}), "aaa": _lines("Ahhh", {3}),
             "bbb": _lines("Bhhh", {4}), "unc": _lines("Uhhh", {5})}
    with tarfile.open(path, "w:gz") as tar:
        for stem, lines in files.items():
            data = ("\n".join(lines) + "\n").encode("utf-8")
            info = tarfile.TarInfo(f"data/{stem}.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(path)


def _spec(units=None, **more):
    spec = {"type": "url", "format": "tar_lines", "members": MEMBERS,
            "placeholder_patterns": [r"-"], **more}
    if units:
        spec["units"] = units
    return spec


SOURCES = {"eng": "eng", "a": "aaa", "b": "bbb"}


def _kept(units: pl.DataFrame) -> dict[str, list[int]]:
    return {lang: sorted(g["position"].to_list())
            for (lang,), g in units.group_by("language")}


def test_own_keeps_each_languages_units_shared_drops_them_everywhere(tmp_path):
    source = _archive(tmp_path / "toy.tar.gz")
    every = list(range(12))
    shared, dropped_shared = prepare_units("toy", source, _spec(), SOURCES, SCHEME, "eng")
    # shared: 3 (aaa), 4 (bbb), 5 (unc, not configured) and 9 (English) in every language.
    assert _kept(shared) == {lang: [p for p in every if p not in (3, 4, 5, 9)]
                             for lang in ("a", "b", "eng")}
    assert sorted(dropped_shared["translation"].to_list()) == ["aaa", "bbb", "eng", "unc"]
    own, dropped = prepare_units("toy", source, _spec("own"), SOURCES, SCHEME, "eng")
    # own: each language loses its own placeholder and English's; unc's no longer matters.
    assert _kept(own) == {"a": [p for p in every if p not in (3, 9)],
                          "b": [p for p in every if p not in (4, 9)],
                          "eng": [p for p in every if p != 9]}
    assert dropped.select("position", "translation", "reason", "dropped_in").rows() == [
        (3, "aaa", "placeholder", "a"), (4, "bbb", "placeholder", "b"),
        (9, "eng", "placeholder", "every language")]
    # The split of a unit depends on its position only: the same in every language.
    scheme = SplitScheme(block_size=6, dev_start=1, dev_end=1, test_start=2, test_end=2)
    assert all(split == scheme.split_of(pos) for pos, split in
               own.select("position", "split").rows())
    per_unit = own.group_by("unit_id").agg(pl.col("split").n_unique())
    assert per_unit["split"].max() == 1
    # The text of a kept unit is the language's own, whatever the mode.
    both = own.join(shared, on=["language", "unit_id"])
    assert (both["text"] == both["text_right"]).all()


def test_units_key_absent_or_shared_gives_the_same_tables(tmp_path):
    source = _archive(tmp_path / "toy.tar.gz")
    out = {}
    for name, spec in (("absent", _spec()), ("shared", _spec("shared"))):
        units_out, dropped_out = tmp_path / name / "units.parquet", tmp_path / name / "dropped.tsv"
        prepare_corpus("toy", source, spec, SOURCES, SCHEME, "eng", units_out=units_out,
                       dropped_out=dropped_out)
        out[name] = (units_out.read_bytes(), dropped_out.read_bytes())
    assert out["absent"] == out["shared"]
    # The shared table has no dropped_in column; read_dropped says "every language".
    assert out["shared"][1].decode().splitlines()[0].split("\t") == [
        "corpus", "position", "unit_id", "translation", "reason", "how", "detail"]
    read = read_dropped(tmp_path / "shared" / "dropped.tsv")
    assert set(read["dropped_in"]) == {"every language"} and read.height == 4


def test_own_dropped_tsv_names_the_languages_and_is_read_back(tmp_path):
    source = _archive(tmp_path / "toy.tar.gz")
    units_out, dropped_out = tmp_path / "o" / "units.parquet", tmp_path / "o" / "dropped.tsv"
    prepare_corpus("toy", source, _spec("own"), SOURCES, SCHEME, "eng", units_out=units_out,
                   dropped_out=dropped_out)
    lines = dropped_out.read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t")[-1] == "dropped_in"
    assert [line.split("\t")[-1] for line in lines[1:]] == ["a", "b", "every language"]
    assert read_dropped(dropped_out)["dropped_in"].to_list() == ["a", "b", "every language"]


def test_own_logs_each_languages_units_per_split(tmp_path, caplog):
    source = _archive(tmp_path / "toy.tar.gz")
    with caplog.at_level(logging.INFO, logger="fairppl.corpus.prepare"):
        prepare_units("toy", source, _spec("own"), SOURCES, SCHEME, "eng")
    # a: positions 0-11 less 3 and 9: dev 0, 6; test 1, 7; train 2, 4, 5, 8, 10, 11.
    assert "toy/a: 10 of 12 units kept (train 6, dev 2, test 2)" in caplog.messages
    assert "toy/b: 10 of 12 units kept (train 6, dev 2, test 2)" in caplog.messages
    assert ("toy/eng: 11 of 12 units kept (train 7, dev 2, test 2) (English reference)"
            in caplog.messages)
    assert "toy: test units common to 3 of 3 languages: 2" in caplog.messages
    assert "toy/aaa: 1 placeholder units (unknown), dropped in a" in caplog.messages


def test_bad_units_value_is_refused(tmp_path):
    source = _archive(tmp_path / "toy.tar.gz")
    with pytest.raises(InputError, match=r"field 'corpora.toy.units': 'mine': expected one of "
                                         r"shared, own"):
        prepare_units("toy", source, _spec("mine"), SOURCES, SCHEME, "eng")


# --------------------------------------------------------------------------------------------
# align_units on its own: a merged-verse host, and a language left with an empty split
# --------------------------------------------------------------------------------------------

def test_align_own_drops_a_host_in_its_language_only():
    scheme = SplitScheme(**SCHEME)
    eng = [(f"u{i}", f"English verse {i:02d} text.") for i in range(12)]
    # a: unit 5 empty, its text merged into unit 4 (twice the usual length).
    a = [(uid, "" if i == 5 else (f"Verse a {i:02d} txt. " * (2 if i == 4 else 1)).strip())
         for i, (uid, _) in enumerate(eng)]
    b = [(uid, f"Verse b {i:02d} txt.") for i, (uid, _) in enumerate(eng)]
    texts = {"eng": eng, "a": a, "b": b}
    shared, dropped = align_units("t", texts, [], scheme, english="eng")
    assert dropped.select("position", "translation", "reason").rows() == [
        (4, "a", "host"), (5, "a", "empty")]
    assert set(shared.filter(language="b")["position"]) == set(range(12)) - {4, 5}
    own, dropped_own = align_units("t", texts, [], scheme, english="eng", units="own")
    assert _kept(own) == {"a": [p for p in range(12) if p not in (4, 5)],
                          "b": list(range(12)), "eng": list(range(12))}
    assert dropped_own["dropped_in"].to_list() == ["a", "a"]


def test_align_own_refuses_a_language_left_without_a_split():
    scheme = SplitScheme(**SCHEME)
    eng = [(f"u{i}", f"English verse {i:02d}.") for i in range(12)]
    part = [(uid, "" if i in (1, 7) else "Some text here.") for i, (uid, _) in enumerate(eng)]
    with pytest.raises(InputError, match=r"corpus 't', language p \(units: own\): split\(s\) "
                                         r"test empty"):
        align_units("t", {"eng": eng, "p": part}, [], scheme, english="eng", units="own")


# --------------------------------------------------------------------------------------------
# CES XML: the union of the configured files' books, the common set, the refusal
# --------------------------------------------------------------------------------------------

def _ces(tmp_path, files, sources, **spec):
    from test_bible_ces import CHAPTERS, MEMBER, make_archive, make_db, ces_xml

    db = make_db(tmp_path / "bible.db", CHAPTERS)
    archive = make_archive(tmp_path / "a.tar.gz", {s: ces_xml(t) for s, t in files.items()})
    spec = {"type": "url", "format": "ces_xml", "members": [MEMBER], "placeholder_patterns": [],
            **spec}
    return prepare_units("bc", archive, spec, {"eng": "k", **sources}, SCHEME, "eng",
                         reference_db=db)


def _ces_files():
    from test_bible_ces import CHAPTERS, CODES, translation

    return {"A-NT": translation(CHAPTERS, CODES),          # Matthew 1 and Mark 1, 40 verses each
            "B-NT": translation(CHAPTERS, CODES, empty={(40, 1, 7)}),
            "P-PART": translation({(41, 1): 40}, CODES),   # Mark only
            "Q-PART": translation({(40, 1): 40}, CODES),   # Matthew only
            "U-NT": translation(CHAPTERS, CODES, empty={(41, 1, 3)})}  # never configured


def test_ces_own_reads_the_union_of_the_books(tmp_path):
    sources = {"a": "A-NT", "b": "B-NT", "p": "P-PART"}
    shared, _ = _ces(tmp_path, _ces_files(), sources)
    # shared: Mark only (the books every configured file has), so B's empty Matthew 1:7 is
    # not among the units.
    assert {lang: len(v) for lang, v in _kept(shared).items()} == {"a": 40, "b": 40, "eng": 40,
                                                                     "p": 40}
    own, dropped = _ces(tmp_path, _ces_files(), sources, units="own", common_min_share=0.7)
    # own: Matthew and Mark (80 verses); b lacks Matthew 1:7, p all of Matthew; U-NT's empty
    # Mark 1:3 drops nothing.
    assert {lang: len(v) for lang, v in _kept(own).items()} == {"a": 80, "b": 79, "eng": 80,
                                                                  "p": 40}
    assert set(own.filter(language="p")["unit_id"].str.slice(0, 2)) == {"41"}
    assert "41.001.003" in set(own.filter(language="a")["unit_id"])
    counts = dropped.group_by("translation", "dropped_in", "how").len().sort(
        "translation").rows()
    # P-PART has no verse of Matthew: its 40 empty units say so ("no book").
    assert counts == [("B-NT", "b", "unknown", 1), ("P-PART", "p", "no book", 40)]


def test_ces_own_without_a_common_unit_is_refused_naming_common_min_share(tmp_path):
    files = _ces_files()
    with pytest.raises(InputError, match=r"corpus 'bc' \(units: own\): the train units of the 4 "
                                         r"languages of its common unit set have none in common "
                                         r".*`corpora.bc.common_min_share` \(now 0\)"):
        _ces(tmp_path, files, {"a": "A-NT", "p": "P-PART", "q": "Q-PART"}, units="own")
    # Leaving the partials out of the common set lets it through. Per split (positions 0-79 in
    # blocks of 6, Matthew 0-39, Mark 40-79): train a, eng 52, p 26, q 26 (0.7 x 52 = 36.4);
    # test and dev 14 against 7 (0.7 x 14 = 9.8): both partials out in every split.
    units, _ = _ces(tmp_path, files, {"a": "A-NT", "p": "P-PART", "q": "Q-PART"}, units="own",
                    common_min_share=0.7)
    counts = units.group_by("language", "split").len().sort("language", "split").rows()
    assert counts == [(lang, split, n) for lang, full in (("a", 1), ("eng", 1), ("p", 0.5),
                                                          ("q", 0.5))
                      for split, n in (("dev", int(14 * full)), ("test", int(14 * full)),
                                       ("train", int(52 * full)))]
    with pytest.raises(InputError, match=r"common_min_share` \(now 0.4\)"):
        _ces(tmp_path, files, {"a": "A-NT", "p": "P-PART", "q": "Q-PART"}, units="own",
             common_min_share=0.4)  # 0.4 x 14 = 5.6: both partials stay in


# --------------------------------------------------------------------------------------------
# The common unit set of the per-language comparisons (fairppl.stats.metrics)
# --------------------------------------------------------------------------------------------

def _score(lang, unit_ids, model="m", bits=1.0):
    n = len(unit_ids)
    return score_frame(corpus="c", language=lang, model=model, tokenizer="char", vocab_size=9,
                       open_vocabulary=True, split="test", unit_ids=unit_ids, n_chars=[2] * n,
                       n_bytes=[2] * n, n_tokens=[3] * n, bits=[bits] * n)


def _toy_scores():
    """eng u1-u6; a u1-u5; b u2-u6; p (a partial) u5, u6; g u1 only."""
    return pl.concat([_score("eng", [f"u{i}" for i in range(1, 7)]),
                      _score("a", [f"u{i}" for i in range(1, 6)]),
                      _score("b", [f"u{i}" for i in range(2, 7)]),
                      _score("p", ["u5", "u6"]), _score("g", ["u1"])])


def test_majority_units_count_only_what_half_the_languages_have():
    sets = {lang: set(g["unit_id"]) for (lang,), g in _toy_scores().group_by("language")}
    # 5 languages: a unit counts where at least 2.5 of them have it (u1: eng, a, g = 3 ...).
    assert majority_counts(sets) == {"eng": 6, "a": 5, "b": 5, "p": 2, "g": 1}


def test_common_min_share_leaves_the_languages_with_few_units_out():
    scores = _toy_scores()
    # Without it, g (u1) and p (u5, u6) share nothing with each other: refused.
    with pytest.raises(ValueError, match=r"corpus 'c', split test: the 5 languages of its common "
                                         r"unit set have no unit in common .*"
                                         r"`corpora.c.common_min_share` \(now 0\)"):
        on_common_units(scores)
    # 0.5 x 6 = 3: p (2) and g (1) left out; the common set is u2-u5 of eng, a, b.
    common, languages = common_unit_set(scores, {"c": 0.5})
    assert sorted(set(common["language"])) == ["a", "b", "eng"]
    assert sorted(set(common["unit_id"])) == ["u2", "u3", "u4", "u5"]
    assert languages.filter(~pl.col("in_common_set"))["language"].to_list() == ["g", "p"]
    assert languages["min_units"].unique().to_list() == [3.0]
    assert describe_common_set(languages)["common_set_languages"].to_list() == [
        "3 of 5 languages; left out by common_min_share (fewer than 3 majority units): g 1, p 2"]
    # 0.3 x 6 = 1.8: only g left out; eng, a, b, p share u5.
    common, _ = common_unit_set(scores, {"c": 0.3})
    assert sorted(set(common["unit_id"])) == ["u5"] and common.height == 4
    # Another corpus's share does not apply here.
    with pytest.raises(ValueError, match="common_min_share"):
        common_unit_set(scores, {"other": 0.5})


def test_the_models_table_says_which_languages_are_in_the_common_set():
    scores = _toy_scores()
    units = pl.DataFrame([dict(corpus="c", unit_id=f"u{i}", language="eng", split="test",
                               text="abcd", english_reference=True) for i in range(1, 7)])
    common, languages = common_unit_set(scores, {"c": 0.5})
    table = with_common_set(with_unit_set(bits_per_utterance(common, units), common=True),
                            languages)
    assert table["language"].to_list() == ["a", "b", "eng"]
    assert set(table["unit_set"]) == {"common to every language and model of c but the 2 left "
                                      "out by common_min_share (4 test units)"}
    assert table["bits_total"].to_list() == [4.0, 4.0, 4.0]
    # Every language in: the columns as before, the count only.
    full = _toy_scores().filter(pl.col("language").is_in(["eng", "a", "b"]))
    common, languages = common_unit_set(full)
    table = with_common_set(with_unit_set(bits_per_utterance(common, units), common=True),
                            languages)
    assert set(table["unit_set"]) == {"common to every language and model of c (4 test units)"}
    assert set(table["common_set_languages"]) == {"3 languages"}


# --------------------------------------------------------------------------------------------
# The real archive: Cherokee (New Testament), Potawatomi (Matthew, Acts), Gaelic (Mark)
# --------------------------------------------------------------------------------------------

REAL = {"chr": "Cherokee-NT", "pot": "Potawatomi-PART", "gla": "Gaelic-PART"}


@pytest.fixture(scope="module")
def real_own(shared_corpora, resources_ready):
    from fairppl.corpus.readers import DEFAULT_PLACEHOLDER_PATTERNS

    archive = str(shared_corpora / "bible-corpus-master.tar.gz")
    spec = {"type": "url", "format": "ces_xml",
            "members": ["bible-corpus-master/bibles/{source_id}.xml"],
            "placeholder_patterns": list(DEFAULT_PLACEHOLDER_PATTERNS), "units": "own",
            "common_min_share": 0.2}
    scheme = dict(block_size=30, dev_start=1, dev_end=5, test_start=6, test_end=10)
    units, dropped = prepare_units("bc", archive, spec, {"eng": "k", **REAL}, scheme, "eng",
                                   reference_db=str(resources_ready["FAIRPPL_BIBLE_DB"]))
    segments = {}
    with tarfile.open(archive) as tar:
        for lang, stem in REAL.items():
            text = tar.extractfile(f"bible-corpus-master/bibles/{stem}.xml").read().decode()
            segments[lang] = re.findall(r'<seg id="b\.([0-9A-Z]{3})\.(\d+)\.(\d+)"[^>]*>'
                                        r'\s*(\S.*?)\s*</seg>', text, flags=re.S)
    return units, dropped, segments


def test_real_slice_unit_counts_match_a_count_of_the_segments(real_own):
    units, dropped, segments = real_own
    kept = dict(units.group_by("language").len().rows())
    # Non-empty <seg> elements (a regex over the XML) less the language's merged-verse hosts.
    hosts = collections.Counter(dropped.filter(reason="host")["dropped_in"].to_list())
    assert {lang: len(segs) for lang, segs in segments.items()} == {
        "chr": 7957, "pot": 2078, "gla": 677}
    assert kept == {"eng": 7957, "chr": 7957, "pot": 2078, "gla": 676}
    assert {lang: len(segments[lang]) - hosts.get(lang, 0) for lang in REAL} == {
        lang: kept[lang] for lang in REAL}
    # The books: Cherokee all 27, Potawatomi Matthew and Acts, Gaelic Mark.
    books = {lang: collections.Counter(code for code, *_ in segs)
             for lang, segs in segments.items()}
    assert set(books["pot"]) == {"MAT", "ACT"} and set(books["gla"]) == {"MAR"}
    # The KJV's 7,957 verses at positions 0..7956 (the union is the New Testament): dev
    # p % 30 < 5, test 5 <= p % 30 < 10; 265 blocks of 30 and 7 more positions.
    per_split = dict(units.filter(language="chr").group_by("split").len().rows())
    assert per_split == {"dev": 265 * 5 + 5, "test": 265 * 5 + 2, "train": 265 * 20}
    assert dict(units.filter(language="eng").group_by("split").len().rows()) == per_split
    # Gaelic's Mark: the KJV's 678 verses, one missing, its neighbour holding it (the host).
    assert dropped.filter(dropped_in="gla", reason="host").height == 1


def test_real_slice_splits_agree_across_languages(real_own):
    units, _, _ = real_own
    per_unit = units.group_by("unit_id").agg(pl.col("split").n_unique(), pl.len())
    assert per_unit["split"].max() == 1
    # Matthew's verses are in eng, chr and pot: the same split in all three.
    assert per_unit.filter(pl.col("unit_id").str.starts_with("40."))["len"].unique().to_list() \
        == [3]


def test_bad_values_are_refused_at_start_up():
    from test_bible_ces import SCHEMA, wide_config

    from fairppl.config.settings import check_config

    config = wide_config()
    assert config["corpora"]["bible-ces"]["units"] == "own"
    check_config(config, SCHEMA, "config/wide/config.yaml")  # the profile passes
    for key, value, message in (
            ("units", "mine", r"corpora.bible-ces.units.*'mine' is not one of \['shared', 'own'\]"),
            ("common_min_share", 1.5, r"corpora.bible-ces.common_min_share.*1.5 is greater than "
                                      r"the maximum of 1"),
            ("common_min_share", "half", r"corpora.bible-ces.common_min_share.*'half' is not of "
                                         r"type 'number'")):
        bad = wide_config()
        bad["corpora"]["bible-ces"][key] = value
        with pytest.raises(InputError, match=message):
            check_config(bad, SCHEMA, "config/wide/config.yaml")


def test_language_differences_fall_back_to_the_common_units():
    """fairppl.stats.bootstrap.language_differences (bpu_table.py's): a model whose languages
    scored different units (units: own) gets its adjacent-language differences on the common
    units; the others keep all their units."""
    from fairppl.stats.bootstrap import BootstrapSettings, language_differences
    from fairppl.stats.metrics import english_char_counts

    ids = [f"u{i}" for i in range(1, 7)]
    scores = pl.concat([_score("eng", ids, bits=2.0), _score("a", ids[:5], bits=3.0),
                        _score("b", ids[1:], bits=5.0)])
    units = pl.DataFrame([dict(corpus="c", unit_id=u, language="eng", split="test",
                               text="abcd", english_reference=True) for u in ids])
    common = on_common_units(scores)
    settings = BootstrapSettings(replicates=20, seed=0, level=0.9)
    table = language_differences(scores, common, english_char_counts(units), settings)
    # On u2-u5 (4 units of 4 English characters): b 5/4, a 3/4, eng 2/4 bits per character.
    assert table.select("language", "next_language", "n_units", "bpec_difference").rows() == [
        ("b", "a", 4, pytest.approx(0.5)), ("a", "eng", 4, pytest.approx(0.25))]
