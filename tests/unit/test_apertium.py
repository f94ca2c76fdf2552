"""The Apertium tag mapping (fairppl.morphology.apertium) on hand-made lt-paradigm lines with known
answers, its errors, and the real English and Spanish analysers of Debian's apertium-eng-spa.
In the workflow: tests/workflow/test_apertium_workflow.py."""

from __future__ import annotations

import shutil

import pytest

from fairppl.core.errors import InputError
from fairppl.morphology.apertium import (ANALYSERS, Skip, analyser_path, apertium_record,
                                         map_paradigm, map_tags, parse_line)
from fairppl.morphology.mcc import count

# Verbs: walk gives 5 bundles (subs, the -ing noun, is derivation); the pronominal verb's NFIN is
# walk's (pron is a lexical class); Polish "nm" (non-masculine-personal) plural expands to the 4
# genders it covers; the participle's case is dropped on verbs, so two cases are one bundle.
# Nouns: gender is inherent, "sp" is both numbers: 2 bundles. Adjectives: "mf" is both genders:
# 4 bundles; the possessive "mio" is a determiner. The doubled Polish analysis is inconsistent.
LINES = """\
walk<vblex><inf>:walk
walk<vblex><pres>:walk
walk<vblex><pri><p3><sg>:walks
walk<vblex><past>:walked
walk<vblex><pp>:walked
walk<vblex><subs>:walking
abstener<vblex><pron><inf>:abstenerse
robić<vblex><impf><past><p3><nm><pl>:robiły
robić<vblex><impf><pprs><f><sg><nom>:robiąca
robić<vblex><impf><pprs><f><sg><gen>:robiącej

casa<n><f><sg>:casa
casa<n><f><pl>:casas
crisis<n><f><sp>:crisis
verde<adj><mf><sg>:verde
verde<adj><mf><pl>:verdes
mío<adj><pos><m><sg>:mío
wiceminister<n><mp><pl><nom><mp><pl><dat>:wiceministrom
""".splitlines()


def test_mapping_on_hand_made_lines():
    mapped = map_paradigm(LINES)
    assert mapped.n_lines == 17 and mapped.n_skipped == 3
    assert mapped.raw_bundles == {"verb": 10, "noun": 4, "adjective": 3}
    counts = count(mapped.rows)
    assert {pos: c.mcc for pos, c in counts.items()} == {
        "verb": 10, "noun": 2, "adjective": 4, "total": 16}
    # walk walks walked abstenerse robiły robiąca robiącej over walk, abstener, robić
    assert (counts["verb"].n_forms, counts["verb"].n_lemmas) == (7, 3)
    assert (counts["noun"].n_forms, counts["noun"].n_lemmas) == (3, 2)


@pytest.mark.parametrize("tags, expected", [
    (["vblex", "pri", "p3", "sg"], [{"V", "IND", "PRS", "3", "SG"}]),
    # a Slavic lemma's aspect (right after vblex) is lexical; Hindi's later aspect is inflection
    (["vblex", "perf", "fut", "p1", "sg"], [{"V", "FUT", "1", "SG"}]),
    (["vblex", "tv", "perf", "m", "sg"], [{"V", "PFV", "MASC", "SG"}]),
    # Ukrainian biaspectual verbs: "dual" after vblex is aspect, elsewhere number
    (["vblex", "dual", "tv", "nonpast", "p3", "pl"], [{"V", "PRS", "3", "PL"}]),
    (["n", "m", "dual", "nom"], [{"N", "MASC", "DU", "NOM"}]),
    # Romanian: ind after the part of speech is a class, later it is indefiniteness
    (["n", "f", "sg", "nom", "ind"], [{"N", "FEM", "SG", "NOM", "INDF"}]),
    (["adj", "sint", "comp"], [{"ADJ", "CMPR"}]),
    (["adj", "an", "m", "sg", "acc"], [{"ADJ", "ANIM", "MASC", "SG", "ACC"},
                                       {"ADJ", "INAN", "MASC", "SG", "ACC"}]),
    (["vblex", "pp", "mfn", "pl"], [{"V", "V.PTCP", "PST", "MASC", "PL"},
                                    {"V", "V.PTCP", "PST", "FEM", "PL"},
                                    {"V", "V.PTCP", "PST", "NEUT", "PL"}]),
])
def test_map_tags(tags, expected):
    assert sorted(map(sorted, map_tags(tags))) == sorted(map(sorted, expected))


@pytest.mark.parametrize("tags", [["vblex", "subs"], ["adj", "cmp"], ["adj", "itg", "sg"],
                                  ["n", "sg", "nya"], ["n", "nt", "sg", "indecl"]])
def test_derivation_clitics_and_determiners_are_not_counted(tags):
    with pytest.raises(Skip):
        map_tags(tags)


def test_unknown_tag_is_an_error_naming_tag_and_line():
    with pytest.raises(InputError, match=r"fixture, line 2: Apertium tag <xyz> has no mapping"):
        map_paradigm(["a<n><sg>:a", "b<n><xyz>:b"], source="fixture")


@pytest.mark.parametrize("line", ["walk:walk", "<vblex><inf>:walk", "walk<vblex><inf>:"])
def test_malformed_line_is_an_error(line):
    with pytest.raises(InputError, match="line 1"):
        map_paradigm([line], source="fixture")


def test_parse_line_keeps_spaces_and_colons_in_form():
    assert parse_line("take off<vblex><inf>:take: off") == ("take off", ["vblex", "inf"],
                                                            "take: off")


def test_missing_analyser_names_its_debian_package(tmp_path):
    with pytest.raises(InputError, match=r"apt-get install apertium-pol-szl"):
        analyser_path("pol", root=tmp_path)
    with pytest.raises(InputError, match="no Apertium analyser is configured for 'deu'"):
        analyser_path("deu", root=tmp_path)


def _real_analyser(language):
    if shutil.which("lt-paradigm") is None:
        pytest.skip("lt-paradigm is not installed (Debian lttoolbox-dev; `make setup` installs "
                    "it)")
    try:
        return analyser_path(language)
    except InputError as err:
        pytest.skip(f"{err} (`make setup` installs it)")


def test_real_english_analyser():
    # apertium-eng-spa 0.8.1 (Debian 12): verbs NFIN, PRS, IND;PRS;3;SG, PST, V.PTCP;PST,
    # V.PTCP;PRS, V.CVB; nouns SG, PL; adjectives positive, CMPR, SPRL.
    _real_analyser("eng")
    record = apertium_record("eng")
    mcc = {pos: c["mcc"] for pos, c in record["counts"].items()}
    assert mcc == {"verb": 7, "noun": 2, "adjective": 3, "total": 12}
    assert record["details"]["raw_bundles"] == {"verb": 8, "noun": 3, "adjective": 7}
    assert record["details"]["package"] == ANALYSERS["eng"][0] == "apertium-eng-spa"
    verbs = record["counts"]["verb"]
    assert 4.0 < verbs["n_forms"] / verbs["n_lemmas"] < 4.5  # 9,134 forms of 2,165 verbs


def test_real_spanish_analyser():
    # 8 finite tense-moods x 6 persons, 5 imperatives, NFIN, V.CVB and 4 participles = 59 verb
    # bundles; nouns SG, PL (gender inherent); adjectives 2 genders x 2 numbers, plain and SPRL.
    _real_analyser("spa")
    record = apertium_record("spa")
    mcc = {pos: c["mcc"] for pos, c in record["counts"].items()}
    assert mcc == {"verb": 59, "noun": 2, "adjective": 8, "total": 69}
    assert record["details"]["raw_bundles"] == {"verb": 118, "noun": 12, "adjective": 15}
