"""Forms per lemma from simplemma's dictionaries: a known answer on a tiny dictionary, and the
real values of English and German (simplemma 2.0.0)."""

import pytest

from fairppl.morphology.forms_per_lemma import count_forms, forms_per_lemma_table

TINY = {
    # go: 4 forms (the lemma itself among them); child: 2; be: 3; Xmas: a lemma that is not a key
    "go": "go", "goes": "go", "went": "go", "gone": "go",
    "child": "child", "children": "child",
    "be": "be", "was": "be", "were": "be",
    "Christmas": "Xmas",
}


def test_tiny_dictionary():
    counts = count_forms(TINY)
    assert counts == {"n_forms": 10, "n_lemmas": 4, "forms_per_lemma": 2.5, "largest": "go",
                      "largest_forms": 4, "lemmas_not_forms": 1}
    with pytest.raises(ValueError, match="empty"):
        count_forms({})


def test_table_with_a_given_dictionary():
    table = forms_per_lemma_table(["eng", "kor"], dictionary=lambda code: TINY, progress=False)
    assert table.columns == ["language", "source", "n_forms", "n_lemmas", "forms_per_lemma",
                             "note"]
    eng, kor = table.iter_rows(named=True)
    assert (eng["source"], eng["n_forms"], eng["n_lemmas"], eng["forms_per_lemma"]) == (
        "simplemma", 10, 4, 2.5)
    assert eng["note"] == ("dictionary en; most forms: 'go' with 4; 1 lemmas are not listed as "
                           "forms themselves")
    assert kor["n_forms"] is None and kor["forms_per_lemma"] is None
    assert kor["note"].startswith("not covered: simplemma 2.0.0 ships no Korean dictionary")


def test_real_english_and_german():
    table = forms_per_lemma_table(["eng", "deu"], progress=False)
    eng, deu = table.iter_rows(named=True)
    assert (eng["n_forms"], eng["n_lemmas"]) == (181612, 77504)
    assert eng["forms_per_lemma"] == pytest.approx(2.3433, abs=1e-4)
    assert (deu["n_forms"], deu["n_lemmas"]) == (1116464, 334456)
    assert deu["forms_per_lemma"] == pytest.approx(3.3381, abs=1e-4)
