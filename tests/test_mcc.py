"""MCC counting rule (fairppl.morphology.mcc) on hand-made UniMorph lexicons with known answers,
the reader's errors for malformed rows, the published values and the MCC tables."""

from __future__ import annotations

import math

import polars as pl
import pytest
from scipy.stats import pearsonr, spearmanr

from conftest import ROOT
from fairppl.core.errors import InputError
from fairppl.morphology.mcc import (
    Row,
    bundles_by_pos,
    count,
    parse_features,
    part_of_speech,
    read_unimorph,
)
from fairppl.morphology.published import read_published_mcc, read_rule_check, rule_check_note
from fairppl.morphology.table import (count_record, mcc_table, published_record, read_record,
                                      validation_table, write_record)

# A small Spanish-like lexicon. Verbs: hablar has 4 distinct bundles (NFIN, two finite cells, and
# the feminine singular participle; the two spellings of PRS;1;SG are one bundle), comer adds one
# (the masculine participle: agreement gender is inflection). Nouns: gender is inherent, so
# N;MASC;SG and N;FEM;SG are one bundle N;SG, and N;PL another. Adjectives: gender is agreement,
# so 4 bundles. ADV and DET rows are not counted.
LEXICON = """\
hablar\thablar\tV;NFIN
hablar\thablo\tV;IND;PRS;1;SG
hablar\thablo\tV;1;SG;IND;PRS
hablar\thabla\tV;IND;PRS;3;SG
hablar\thablada\tV.PTCP;PST;FEM;SG
comer\tcomido\tV.PTCP;PST;MASC;SG
comer\tcome\tV;IND;PRS;3;SG

casa\tcasa\tN;FEM;SG
casa\tcasas\tN;FEM;PL
libro\tlibro\tN;MASC;SG
libro\tlibros\tN;MASC;PL
rojo\trojo\tADJ;MASC;SG
rojo\troja\tADJ;FEM;SG
rojo\trojos\tADJ;MASC;PL
rojo\trojas\tADJ;FEM;PL
bien\tbien\tADV
el\tla\tDET;FEM;SG
"""


def _write(tmp_path, text, name="spa"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_counting_rule_on_a_hand_made_lexicon(tmp_path):
    rows, other = read_unimorph(_write(tmp_path, LEXICON))
    assert other == 2
    counts = count(rows)
    assert {pos: c.mcc for pos, c in counts.items()} == {
        "verb": 5, "noun": 2, "adjective": 4, "total": 11}
    # forms: hablar, hablo, habla, hablada, comido, come = 6 over 2 verb lemmas
    assert (counts["verb"].n_forms, counts["verb"].n_lemmas) == (6, 2)
    assert counts["verb"].forms_per_lemma == 3.0
    assert (counts["noun"].n_forms, counts["noun"].n_lemmas) == (4, 2)
    assert (counts["adjective"].n_forms, counts["adjective"].n_lemmas) == (4, 1)
    assert (counts["total"].n_forms, counts["total"].n_lemmas) == (14, 5)
    assert bundles_by_pos(rows) == {
        "verb": ["V.PTCP;FEM;PST;SG", "V.PTCP;MASC;PST;SG", "V;1;IND;PRS;SG", "V;3;IND;PRS;SG",
                 "V;NFIN"],
        "noun": ["N;PL", "N;SG"],
        "adjective": ["ADJ;FEM;PL", "ADJ;FEM;SG", "ADJ;MASC;PL", "ADJ;MASC;SG"]}


def test_total_counts_a_bundle_once_per_part_of_speech():
    # A verb's SG and a noun's SG are two bundles (the part of speech is in the bundle); a bundle
    # repeated over lemmas counts once.
    rows = [Row("a", "a", frozenset({"V", "SG"}), "verb"),
            Row("b", "b", frozenset({"V", "SG"}), "verb"),
            Row("c", "c", frozenset({"N", "SG"}), "noun"),
            Row("c", "cs", frozenset({"N", "PL", "NEUT"}), "noun")]
    counts = count(rows)
    assert [counts[p].mcc for p in ("verb", "noun", "adjective", "total")] == [1, 2, 0, 3]
    assert counts["adjective"].forms_per_lemma is None


@pytest.mark.parametrize("line, expected", [
    ("hablar\thablo", "expected 3 tab-separated fields"),
    ("hablar\thablo\tV;PRS\textra", "got 4"),
    ("\thablo\tV;PRS", "empty lemma or form"),
    ("hablar\thablo\tV;;PRS", "malformed feature bundle"),
    ("hablar\thablo\tV; PRS", "malformed feature bundle"),
    ("hablar\thablo\tPRS;1;SG", "no part-of-speech feature"),
    ("hablar\thablo\tV;N;SG", "two parts of speech"),
])
def test_malformed_rows_name_file_and_line(tmp_path, line, expected):
    path = _write(tmp_path, "hablar\thablar\tV;NFIN\n\n" + line + "\n")
    with pytest.raises(InputError, match=expected) as err:
        read_unimorph(path)
    assert f"{path}, line 3:" in str(err.value)


def test_missing_unimorph_file_is_named(tmp_path):
    with pytest.raises(InputError, match="UniMorph file not found"):
        read_unimorph(tmp_path / "nope")


def test_published_values_are_the_papers_table():
    values = read_published_mcc(ROOT / "resources" / "published" / "mcc_cotterell2018.tsv")
    assert len(values) == 21
    assert values["eng"] == 6 and values["fin"] == 198 and values["ces"] == 195
    assert values["spa"] == 71 and values["pol"] == 112 and values["deu"] == 38
    assert sum(values.values()) == 1638


@pytest.mark.parametrize("body, expected, line", [
    ("iso639_1\tlanguage\tmcc\nen\teng\tsix\n", "positive integer", 2),
    ("iso639_1\tlanguage\tmcc\nen\teng\t0\n", "positive integer", 2),
    ("iso639_1\tlanguage\tmcc\nen\teng\t6\nen\teng\t7\n", "appears twice", 3),
    ("iso639_1\tlanguage\tmcc\neng\teng\t6\n", "two-letter and a three-letter", 2),
    ("iso639_1\tlanguage\tmcc\nen\teng\n", "expected 3 tab-separated fields", 2),
    ("# c\nlang\tmcc\n", "expected the header", 2),
])
def test_published_file_errors_name_the_line(tmp_path, body, expected, line):
    path = _write(tmp_path, body, "mcc.tsv")
    with pytest.raises(InputError, match=expected) as err:
        read_published_mcc(path)
    assert f", line {line}:" in str(err.value)


def test_mcc_table_and_records_round_trip(tmp_path):
    rows, _ = read_unimorph(_write(tmp_path, LEXICON))
    record = count_record("spa", "unimorph", count(rows), note="fixture")
    write_record(tmp_path / "r.json", record)
    table = mcc_table([published_record("spa", 71, "paper"), read_record(tmp_path / "r.json")])
    assert table.columns == ["language", "source", "pos", "mcc", "n_forms", "n_lemmas",
                             "forms_per_lemma", "note"]
    assert table["source"].to_list() == ["published"] + ["unimorph"] * 4
    assert table["pos"].to_list() == ["total", "verb", "noun", "adjective", "total"]
    assert table["mcc"].to_list() == [71, 5, 2, 4, 11]
    assert table.filter(pos="verb")["forms_per_lemma"].item() == 3.0
    assert table.filter(source="published")["n_forms"].item() is None


def test_bad_record_is_named(tmp_path):
    path = _write(tmp_path, '{"language": "spa", "source": "wiki", "counts": {}}', "r.json")
    with pytest.raises(InputError, match="not an MCC record"):
        read_record(path)


def _apertium(language, total, verb):
    return {"language": language, "source": "apertium", "note": "",
            "counts": {"total": {"mcc": total, "n_forms": 1, "n_lemmas": 1},
                       "verb": {"mcc": verb, "n_forms": 1, "n_lemmas": 1}}}


def test_validation_against_scipy():
    published = {"eng": 6, "spa": 71, "pol": 112, "fra": 30}
    ours = {"eng": (12, 7), "spa": (69, 59), "pol": (334, 110), "fra": (57, 51), "rus": (285, 1)}
    records = [published_record(k, v, "") for k, v in published.items()]
    records += [_apertium(k, *v) for k, v in ours.items()]
    table = validation_table(mcc_table(records), apertium_poses=("total", "verb"))
    ratios = table.filter(row="language", apertium_pos="total")
    assert ratios["language"].to_list() == ["eng", "fra", "pol", "spa"]  # rus: no published
    assert ratios["ratio"].to_list() == pytest.approx([2.0, 1.9, 334 / 112, 69 / 71])
    assert ratios["family"].to_list() == ["Germanic", "Romance", "Slavic", "Romance"]
    assert not ratios["held_out"].any()  # all four were in view when the mapping was designed
    corr = table.filter(row="correlation", apertium_pos="total", subset="all").row(0, named=True)
    assert "0 of 4 languages held out" in corr["note"]
    # no family has 3 languages here: only the 'all' row
    assert table.filter(row="correlation", apertium_pos="total")["subset"].to_list() == ["all"]
    x, y = [12, 57, 334, 69], [6, 30, 112, 71]
    assert corr["n"] == 4
    assert corr["pearson_r"] == pytest.approx(pearsonr(x, y).statistic)
    assert corr["pearson_p"] == pytest.approx(pearsonr(x, y).pvalue)
    assert corr["spearman_rho"] == pytest.approx(spearmanr(x, y).statistic) == 1.0
    # exact two-sided p over the 24 orderings: |rho| = 1 for 2 of them
    assert corr["spearman_p"] == pytest.approx(2 / 24)
    assert corr["ratio"] == pytest.approx(math.exp(sum(math.log(a / b) for a, b in zip(x, y)) / 4))
    verb = table.filter(row="correlation", apertium_pos="verb").row(0, named=True)
    assert verb["pearson_r"] == pytest.approx(pearsonr([7, 51, 110, 59], y).statistic)


def test_validation_within_a_family_and_like_with_like_by_default():
    """Three Romance languages get a row of their own (the within-family check); by default only
    Apertium's total is compared with the published total."""
    published = {"eng": 6, "spa": 71, "fra": 30, "ita": 52}
    ours = {"eng": (12, 7), "spa": (69, 59), "fra": (57, 51), "ita": (40, 30)}
    records = [published_record(k, v, "") for k, v in published.items()]
    records += [_apertium(k, *v) for k, v in ours.items()]
    table = validation_table(mcc_table(records))
    assert set(table["apertium_pos"]) == {"total"}
    romance = table.filter(row="correlation", subset="Romance").row(0, named=True)
    assert romance["n"] == 3 and romance["language"] == "fra,ita,spa"
    # ranks (2, 1, 3) against (1, 2, 3): rho = 1 - 6 * 2 / (3 * 8) = 0.5
    assert romance["spearman_rho"] == pytest.approx(0.5)
    assert romance["spearman_rho"] == pytest.approx(spearmanr([57, 40, 69], [30, 52, 71]).statistic)
    # exact: every one of the 3! orderings has |rho| >= 0.5 (1, 0.5, 0.5, -0.5, -0.5, -1)
    assert romance["spearman_p"] == pytest.approx(1.0)


def test_validation_with_fewer_than_three_languages_says_why():
    records = [published_record("eng", 6, ""), published_record("spa", 71, ""),
               _apertium("eng", 12, 7), _apertium("spa", 69, 59)]
    table = validation_table(mcc_table(records))
    corr = table.filter(row="correlation", apertium_pos="total").row(0, named=True)
    assert corr["n"] == 2 and corr["pearson_r"] is None and corr["spearman_rho"] is None
    assert "fewer than 3" in corr["note"]
    assert isinstance(table, pl.DataFrame)


#: The bundles read in the Danish and English UniMorph lexicons (resources/published/
#: mcc_rule_check.tsv), as the files write them.
DANISH_READ = ("N;INDF;NOM;SG N;INDF;NOM;PL N;INDF;GEN;SG N;INDF;GEN;PL N;DEF;NOM;SG N;DEF;NOM;PL "
               "V;ACT;NFIN V;ACT;IMP V;ACT;IND;PRS V;ACT;IND;PST V;PASS;IND;PRS V;PASS;IND;PST "
               "V.PTCP;ACT;PRS V.PTCP;PASS;PST").split()
ENGLISH_READ = "V;NFIN V;3;SG;PRS V;PST V;V.PTCP;PRS V;V.PTCP;PST".split()


def test_rule_check_rows_follow_from_the_rule_and_the_published_table():
    published = read_published_mcc(ROOT / "resources" / "published" / "mcc_cotterell2018.tsv")
    check = read_rule_check(ROOT / "resources" / "published" / "mcc_rule_check.tsv")
    assert sorted(check) == ["dan", "eng", "est"]
    assert all(row["published"] == published[lang] for lang, row in check.items())
    for lang, bundles in (("eng", ENGLISH_READ), ("dan", DANISH_READ)):
        rows = [Row("x", f"x{i}", parse_features(b), part_of_speech(parse_features(b)))
                for i, b in enumerate(bundles)]
        assert count(rows)["total"].mcc == check[lang]["rule_mcc"] == len(bundles)
    assert [check[lang]["published"] - check[lang]["rule_mcc"] for lang in ("eng", "dan", "est")] \
        == [1, 1, 2]
    note = rule_check_note(check["dan"])
    assert note.startswith("this study's counting rule gives 14 on unimorph/dan@4eba5727 (3.8% of "
                           "its 833,048 characters read; ") and note.endswith("published 15")
    assert "is not known" in rule_check_note(None)


def test_bad_rule_check_is_refused(tmp_path):
    path = tmp_path / "check.tsv"
    path.write_text("# c\nlanguage\tcommit\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"check.tsv, line 2: expected the header language lexicon"):
        read_rule_check(path)
    header = "\t".join(["language", "lexicon", "commit", "chars_read", "chars_total", "rule_mcc",
                        "published", "note"])
    path.write_text(f"{header}\neng\tu/eng\tabc\t1\t2\tfive\t6\tn\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2: rule_mcc 'five': expected a non-negative"):
        read_rule_check(path)
    path.write_text(f"{header}\neng\tu/eng\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2: expected 8 tab-separated fields, got 2"):
        read_rule_check(path)
    with pytest.raises(InputError, match="MCC rule check file not found"):
        read_rule_check(tmp_path / "nope.tsv")
