"""The per-language morphology table: BPEC on words and lemmas over one unit set, the marginal
estimate chosen, and every language listed with the reason where a value is missing."""

import polars as pl
import pytest

from fairppl.core.errors import InputError
from fairppl.morphology.languages import (
    bpec_column,
    languages_table,
    marginal_bpec,
    measures_long,
    parse_bpec_column,
    regression_inputs,
    text_bpec,
)


def _scores(rows):
    return pl.DataFrame(rows, schema=["corpus", "language", "model", "tokenizer", "unit_id",
                                      "bits"], orient="row")


ENGLISH = pl.DataFrame({"corpus": ["bible"] * 3, "unit_id": ["u1", "u2", "u3"],
                        "n_english_chars": [10, 20, 30]})


def test_words_and_lemmas_share_one_unit_set():
    words = _scores([("bible", lang, "m", "char", u, b)
                     for lang, bits in (("eng", (5.0, 8.0, 9.0)), ("deu", (6.0, 10.0, 12.0)))
                     for u, b in zip(("u1", "u2", "u3"), bits)])
    # deu's lemma copy lacks u3: every number of model m is then on u1 and u2 only.
    lemmas = _scores([("bible", "eng", "m", "char", "u1", 4.0), ("bible", "eng", "m", "char", "u2", 7.0),
                      ("bible", "eng", "m", "char", "u3", 8.0), ("bible", "deu", "m", "char", "u1", 3.0),
                      ("bible", "deu", "m", "char", "u2", 6.0)])
    got = {(r["language"], r["text"]): r for r in text_bpec(words, lemmas, ENGLISH).iter_rows(named=True)}
    assert got[("eng", "words")]["bpec"] == pytest.approx(13 / 30)
    assert got[("deu", "words")]["bpec"] == pytest.approx(16 / 30)
    assert got[("deu", "lemmas")]["bpec"] == pytest.approx(9 / 30)
    assert got[("eng", "lemmas")]["bpec"] == pytest.approx(11 / 30)
    assert {r["n_units"] for r in got.values()} == {2}


def test_unknown_unit_is_refused():
    words = _scores([("bible", "eng", "m", "char", "u9", 1.0)])
    with pytest.raises(InputError, match="English text does not have"):
        text_bpec(words, None, ENGLISH)


def test_marginal_prefers_the_exact_sum_then_the_first_estimator_run_everywhere():
    marginal = pl.DataFrame({
        "corpus": ["bible"] * 6, "language": ["eng", "deu"] * 3,
        "model": ["ng"] * 4 + ["lm"] * 2, "tokenizer": ["t"] * 6,
        "estimator": ["exact", "exact", "wor", "wor", "lm-guided", "default"],
        "bpec": [1.0, 2.0, 1.1, 2.1, 3.0, 3.5], "n_units": [50] * 4 + [20] * 2})
    got = marginal_bpec(marginal)
    ng = got.filter(model="ng")
    assert set(ng["estimator"]) == {"exact"} and ng.height == 2
    # lm-guided ran for eng only: not every language, so no marginal column for lm.
    assert got.filter(model="lm").height == 0


def test_languages_table_lists_every_language_with_reasons():
    mcc = pl.DataFrame({"language": ["eng", "eng", "deu"], "source": ["published", "apertium",
                                                                      "published"],
                        "pos": ["total"] * 3, "mcc": [6, 9, 38], "forms_per_lemma": [None, 2.5, None],
                        "note": [None, None, None]})
    forms = pl.DataFrame({"language": ["deu"], "source": ["simplemma"], "forms_per_lemma": [3.2],
                          "note": [None]})
    measures = measures_long(mcc, forms)
    bpec = pl.DataFrame({"corpus": ["bible"] * 3, "language": ["eng", "deu", "eng"],
                         "model": ["m"] * 3, "tokenizer": ["char"] * 3,
                         "text": ["words", "words", "lemmas"], "bpec": [1.0, 1.2, 0.9]})
    table = languages_table("bible", ["eng", "deu", "zho"], measures, bpec,
                            {"deu": "simplemma: no lemmatizer", "zho": "simplemma: no lemmatizer"})
    rows = {(r["language"], r["measure"], r["source"]): r for r in table.iter_rows(named=True)}
    assert len(rows) == 3 * 4  # mcc published, mcc apertium, fpl simplemma, fpl apertium
    assert rows[("eng", "mcc", "published")]["value"] == 6
    assert rows[("eng", "forms_per_lemma", "apertium")]["value"] == 2.5
    assert rows[("zho", "mcc", "published")]["value"] is None
    assert "no published mcc value for zho" in rows[("zho", "mcc", "published")]["note"]
    assert rows[("eng", "mcc", "apertium")][bpec_column("lemmas", "m", "char")] == 0.9
    assert rows[("deu", "mcc", "apertium")][bpec_column("lemmas", "m", "char")] is None
    assert rows[("deu", "mcc", "apertium")]["lemmas_note"] == "simplemma: no lemmatizer"
    assert parse_bpec_column(bpec_column("marginal", "kenlm-subword-o5", "spm-unigram-4000")) == (
        "marginal", "kenlm-subword-o5", "spm-unigram-4000")
    assert parse_bpec_column("value") is None


def test_duplicate_measure_is_refused():
    mcc = pl.DataFrame({"language": ["eng", "eng"], "source": ["published"] * 2,
                        "pos": ["total"] * 2, "mcc": [6, 7], "forms_per_lemma": [None, None],
                        "note": [None, None]})
    with pytest.raises(InputError, match="two published mcc values for eng"):
        measures_long(mcc)


def test_regression_inputs_compute_the_difference_and_say_why_a_language_is_out():
    table = pl.DataFrame({
        "corpus": ["bible"] * 3, "language": ["eng", "deu", "zho"], "measure": ["mcc"] * 3,
        "source": ["apertium"] * 3, "value": [6.0, 38.0, None],
        "note": [None, None, "no Apertium analyser"], "lemmas_note": [None, None, "no lemmatizer"],
        bpec_column("words", "m", "char"): [1.0, 1.5, 2.0],
        bpec_column("lemmas", "m", "char"): [0.8, 1.0, None]})
    long = {(r["language"], r["text"]): r
            for r in regression_inputs(table).iter_rows(named=True)}
    assert long[("deu", "difference")]["y"] == pytest.approx(0.5)
    assert long[("eng", "lemmas")]["x"] == 6.0 and long[("eng", "lemmas")]["excluded"] is None
    assert long[("zho", "words")]["excluded"] == "no Apertium analyser"
    assert long[("zho", "lemmas")]["excluded"] == "no Apertium analyser"
    assert len(long) == 9
