"""MCC counting rules (fairppl.morphology.mcc: this study's and the published one) on hand-made
UniMorph lexicons with known answers, the reader's errors for malformed rows, the published
values, the rule check and the MCC tables (tests/unit/test_mcc_2017.py: both rules on the real
lexicons of 2017)."""

from __future__ import annotations

import itertools
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
    feature_string_count,
    feature_strings,
    parse_features,
    part_of_speech,
    read_feature_string_count,
    read_unimorph,
)
from fairppl.morphology.published import (
    read_published_mcc,
    read_rule_check,
    rule_check_counts,
    rule_check_note,
)
from fairppl.morphology.table import (count_record, lexicon_pos, mcc_table, published_record,
                                      read_record, validation_table, write_record)

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


def test_published_rule_counts_strings_as_written_and_the_blank_line(tmp_path):
    """LEXICON's 16 distinct feature strings (6 verb ones: V;IND;PRS;1;SG and V;1;SG;IND;PRS are
    two strings of one bundle; 4 noun ones, whose gender this study's rule drops; 4 adjective
    ones; ADV and DET;FEM;SG, which it leaves out) and its blank line's empty string: 17, where
    this study's rule gives 11. Without the blank line the published rule loses exactly the
    empty string."""
    path = _write(tmp_path, LEXICON)
    strings = feature_strings(LEXICON.splitlines(keepends=True), "fixture")
    assert len(strings) == 17 and "" in strings
    assert {"V;IND;PRS;1;SG", "V;1;SG;IND;PRS", "ADV", "DET;FEM;SG"} <= strings
    assert read_feature_string_count(path) == feature_string_count(
        LEXICON.splitlines(), "fixture") == 17
    no_blank = LEXICON.replace("\n\n", "\n")
    assert feature_string_count(no_blank.splitlines(), "fixture") == 16
    # a carriage return stays in the string, as cut keeps it: a third spelling of one bundle
    assert read_feature_string_count(_write(tmp_path, "a\ta\tV;PST\r\na\tb\tV;PST\n", "crlf")) == 2
    assert count(read_unimorph(tmp_path / "crlf")[0])["total"].mcc == 1


@pytest.mark.parametrize("line, expected", [
    ("hablar\thablo", "expected 3 tab-separated fields"),
    ("hablar\thablo\tV;PRS\textra", "got 4"),
    ("V;PRS", "got 1"),
])
def test_published_rule_refuses_lines_without_three_fields(tmp_path, line, expected):
    path = _write(tmp_path, "hablar\thablar\tV;NFIN\n\n" + line + "\n")
    with pytest.raises(InputError, match=expected) as err:
        read_feature_string_count(path)
    assert f"{path}, line 3:" in str(err.value)


def test_known_typos_are_corrected_and_other_odd_features_kept(tmp_path):
    """``V.PCTP`` is the participle marker misspelt, ``PRF:POS`` two features with a colon for
    the semicolon (FEATURE_ERRATA); a feature merely unknown to the rule is kept as written."""
    text = ("a\tb\tV.PCTP;ACT;PRS\na\tc\tV.PTCP;PRS;ACT\n"
            "d\te\tV;PRF:POS;COND\nd\tf\tV;COND;POS;PRF\nd\tg\tV;LGSPEC1\n")
    rows, other = read_unimorph(_write(tmp_path, text))
    assert other == 0 and [r.pos for r in rows] == ["verb"] * 5
    assert bundles_by_pos(rows)["verb"] == ["V.PTCP;ACT;PRS", "V;COND;POS;PRF", "V;LGSPEC1"]
    assert feature_string_count(text.splitlines(), "x") == 5


def test_non_utf8_lexicon_is_named(tmp_path):
    path = tmp_path / "latin1"
    path.write_bytes("f\u00e5\tf\u00e5r\tV;PRS\n".encode("latin-1"))
    for reader in (read_unimorph, read_feature_string_count):
        with pytest.raises(InputError, match="not UTF-8 text") as err:
            reader(path)
        assert str(path) in str(err.value)


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


def _permutation_p(x, y):
    """|r| of every pairing of y with x, against the observed: a second method for the exact
    two-sided permutation p (small n only)."""
    def r(a, b):
        ma, mb = sum(a) / len(a), sum(b) / len(b)
        num = sum((p - ma) * (q - mb) for p, q in zip(a, b))
        return num / math.sqrt(sum((p - ma) ** 2 for p in a) * sum((q - mb) ** 2 for q in b))
    observed = abs(r(x, y))
    perms = list(itertools.permutations(y))
    return sum(abs(r(x, list(p))) >= observed - 1e-12 for p in perms) / len(perms), len(perms)


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
    # the exact permutation p, not the t test's (0.108): of the 24 pairings only the observed
    # one reaches |r| = 0.892
    assert (corr["permutation_p"], corr["permutations"]) == (pytest.approx(1 / 24), 24)
    assert corr["permutation_p"] == pytest.approx(_permutation_p(x, y)[0])
    assert "pearson_p" not in table.columns
    assert corr["spearman_rho"] == pytest.approx(spearmanr(x, y).statistic) == 1.0
    # exact two-sided p over the 24 orderings: |rho| = 1 for 2 of them
    assert corr["spearman_p"] == pytest.approx(2 / 24)
    assert corr["ratio"] == pytest.approx(math.exp(sum(math.log(a / b) for a, b in zip(x, y)) / 4))
    verb = table.filter(row="correlation", apertium_pos="verb").row(0, named=True)
    assert verb["pearson_r"] == pytest.approx(pearsonr([7, 51, 110, 59], y).statistic)


def test_validation_within_a_family_and_total_where_the_lexicon_is_unknown():
    """Three Romance languages get a row of their own (the within-family check); by default
    (``matched``) a language whose published value's lexicon is not known is compared on
    Apertium's total, and its row says so."""
    published = {"eng": 6, "spa": 71, "fra": 30, "ita": 52}
    ours = {"eng": (12, 7), "spa": (69, 59), "fra": (57, 51), "ita": (40, 30)}
    records = [published_record(k, v, "") for k, v in published.items()]
    records += [_apertium(k, *v) for k, v in ours.items()]
    table = validation_table(mcc_table(records))
    assert set(table["apertium_pos"]) == {"matched"}
    langs = table.filter(row="language")
    assert langs["apertium_mcc"].to_list() == [12, 57, 40, 69]  # eng, fra, ita, spa: totals
    assert langs["lexicon_pos"].to_list() == [None] * 4
    assert all("parts of speech are not known, Apertium's total compared" in n
               for n in langs["note"])
    romance = table.filter(row="correlation", subset="Romance").row(0, named=True)
    assert romance["n"] == 3 and romance["language"] == "fra,ita,spa"
    # ranks (2, 1, 3) against (1, 2, 3): rho = 1 - 6 * 2 / (3 * 8) = 0.5
    assert romance["spearman_rho"] == pytest.approx(0.5)
    assert romance["spearman_rho"] == pytest.approx(spearmanr([57, 40, 69], [30, 52, 71]).statistic)
    # exact: every one of the 3! orderings has |rho| >= 0.5 (1, 0.5, 0.5, -0.5, -0.5, -1)
    assert romance["spearman_p"] == pytest.approx(1.0)


def test_validation_compares_the_parts_of_speech_of_the_published_lexicon():
    """The published English value was counted on a lexicon of verbs only: ``matched`` compares
    Apertium's verbs with it (7, not the total 12); Spanish's lexicon of all three parts of
    speech gets the total, French's unknown lexicon the total with a note. ``total`` compares
    the totals and says on English's row that it is not like with like."""
    published = {"eng": 6, "spa": 71, "pol": 112, "fra": 30}
    ours = {"eng": (12, 7), "spa": (69, 59), "pol": (334, 110), "fra": (57, 51)}
    records = [published_record(k, v, "") for k, v in published.items()]
    records[0]["details"] = {"lexicon_pos": ["verb"]}
    records[1]["details"] = {"lexicon_pos": ["verb", "noun", "adjective"]}
    records += [_apertium(k, *v) for k, v in ours.items()]
    held = lexicon_pos(records)
    assert held == {"eng": ("verb",), "spa": ("verb", "noun", "adjective")}
    table = validation_table(mcc_table(records), apertium_poses=("matched", "total"),
                             lexicon_pos=held)
    matched = table.filter(row="language", apertium_pos="matched")
    assert matched["language"].to_list() == ["eng", "fra", "pol", "spa"]
    assert matched["apertium_mcc"].to_list() == [7, 57, 334, 69]
    assert matched["lexicon_pos"].to_list() == ["verb", None, None, "verb,noun,adjective"]
    notes = dict(zip(matched["language"], matched["note"]))
    assert notes["eng"] == ("the published value's lexicon held verbs only: Apertium's count "
                            "over the same compared")
    assert notes["spa"] == "" and "not known" in notes["fra"]
    assert matched["ratio"].to_list()[0] == pytest.approx(7 / 6)
    corr = table.filter(row="correlation", apertium_pos="matched").row(0, named=True)
    x, y = [7, 57, 334, 69], [6, 30, 112, 71]
    assert corr["pearson_r"] == pytest.approx(pearsonr(x, y).statistic)
    assert corr["permutation_p"] == pytest.approx(_permutation_p(x, y)[0])
    total = table.filter(row="language", apertium_pos="total")
    assert total["apertium_mcc"].to_list() == [12, 57, 334, 69]
    assert total["note"].to_list()[0] == ("not like with like: the published value's lexicon "
                                          "held verbs, Apertium's total compared")
    assert total["note"].to_list()[1:] == ["", "", ""]


def test_validation_with_fewer_than_three_languages_says_why():
    records = [published_record("eng", 6, ""), published_record("spa", 71, ""),
               _apertium("eng", 12, 7), _apertium("spa", 69, 59)]
    table = validation_table(mcc_table(records))
    corr = table.filter(row="correlation", apertium_pos="matched").row(0, named=True)
    assert corr["n"] == 2 and corr["pearson_r"] is None and corr["spearman_rho"] is None
    assert corr["permutation_p"] is None and corr["permutations"] is None
    assert "fewer than 3" in corr["note"]
    assert isinstance(table, pl.DataFrame)


def test_rule_check_rows_follow_from_the_rules_and_the_published_table():
    """The rule check's nine lexicons of 2017 (recounted from the files in
    tests/unit/test_mcc_2017.py): the published column is the paper's, the published rule matches
    it but for Lithuanian, this study's rule is one lower (two on Estonian's typo), and the notes
    say so."""
    published = read_published_mcc(ROOT / "resources" / "published" / "mcc_cotterell2018.tsv")
    check = read_rule_check(ROOT / "resources" / "published" / "mcc_rule_check.tsv")
    assert sorted(check) == ["bul", "dan", "eng", "est", "lit", "nld", "ron", "slv", "swe"]
    assert all(row["published"] == published[lang] for lang, row in check.items())
    assert [lang for lang, row in check.items() if row["feature_strings"] != row["published"]] \
        == ["lit"]
    assert {lang: row["feature_strings"] - row["rule_mcc"] for lang, row in check.items()} == {
        **{lang: 1 for lang in check}, "est": 2}
    assert check["eng"]["pos"] == ("verb",) and check["nld"]["pos"] == ("verb", "adjective")
    assert rule_check_note(check["eng"]) == (
        "on the lexicon of that time, unimorph/eng@bbd8c137 of 2017-08-03 (verbs only), the "
        "published rule (distinct feature strings, a blank line's empty one included) gives 6 "
        "as published, this study's rule 5")
    assert rule_check_note(check["lit"]).startswith(
        "on the lexicon of that time, unimorph/lit@49baeafc of 2017-08-03 (verbs, nouns and "
        "adjectives), the published rule (distinct feature strings, a blank line's empty one "
        "included) gives 140 against the published 152, this study's rule 139 (not reproduced")
    assert "neither counting rule could be checked" in rule_check_note(None)


def test_rule_check_counts_of_a_hand_made_lexicon():
    assert rule_check_counts(LEXICON.splitlines(), "fixture") == {
        "feature_strings": 17, "rule_mcc": 11, "pos": ("verb", "noun", "adjective")}
    english = "walk\twalk\tV;NFIN\nwalk\twalked\tV;PST\n\n"
    assert rule_check_counts(english.splitlines(), "fixture") == {
        "feature_strings": 3, "rule_mcc": 2, "pos": ("verb",)}


HEADER = "\t".join(["language", "lexicon", "commit", "date", "pos", "feature_strings", "rule_mcc",
                    "published", "note"])


@pytest.mark.parametrize("body, expected", [
    ("eng\tu/eng\tabc\t2017\tverb\t6\tfive\t6\tn\n", r"line 2: rule_mcc 'five': expected a "
     "non-negative"),
    ("eng\tu/eng\n", r"line 2: expected 9 tab-separated fields, got 2"),
    ("eng\tu/eng\tabc\t2017\tverb,adverb\t6\t5\t6\tn\n", r"line 2: pos 'verb,adverb': "
     "expected parts of speech from verb,noun,adjective"),
    ("eng\tu/eng\tabc\t2017\t\t6\t5\t6\tn\n", r"line 2: pos '': expected"),
    ("eng\tu/eng\tabc\t2017\tverb\t6\t5\t6\t\neng\tu/eng\tabc\t2017\tverb\t6\t5\t6\t\n",
     r"line 3: language 'eng' appears twice"),
])
def test_bad_rule_check_is_refused(tmp_path, body, expected):
    path = tmp_path / "check.tsv"
    path.write_text(f"{HEADER}\n{body}", encoding="utf-8")
    with pytest.raises(InputError, match=expected) as err:
        read_rule_check(path)
    assert str(path) in str(err.value)


def test_rule_check_without_its_header_or_file_is_refused(tmp_path):
    path = tmp_path / "check.tsv"
    path.write_text("# c\nlanguage\tcommit\n", encoding="utf-8")
    with pytest.raises(InputError,
                       match=r"check.tsv, line 2: expected the header language lexicon"):
        read_rule_check(path)
    with pytest.raises(InputError, match="MCC rule check file not found"):
        read_rule_check(tmp_path / "nope.tsv")
