"""The lemmatized control: simplemma's coverage of the study's languages, the token rule (word
tokens lemmatized, every other character kept), the case rule, and the units table's round trip.

The expected strings are simplemma 2.0.0's output, checked by hand against each language's
grammar (its known misses are kept and commented: the test pins the tool's behaviour)."""

import polars as pl
import pytest

from fairppl.core.errors import InputError
from fairppl.morphology.lemmatize import (
    NOT_COVERED,
    SIMPLEMMA_CODES,
    TextLemmatizer,
    lemmatize_text,
    lemmatize_units,
    lemmatizer_for,
    restore_case,
)

# The 22 Bible languages of config/languages.tsv.
STUDY = ("eng fra spa ita por deu ron pol rus ukr tur ara fas hin ben swa ind vie tgl zho jpn "
         "kor").split()

SENTENCES = [
    # Genesis 1:3 and John 11:35 of the study's translations (KJV, Segond, RV1909, Schlachter,
    # Synodal, BW).
    ("eng", "And God said, Let there be light: and there was light.",
     "And God say, Let there be light: and there be light."),
    ("eng", "Jesus wept.", "Jesus weep."),
    # capitals kept where the lemma is the form (LORD), moved onto a changed lemma (Were -> Be);
    # the possessive goes with the inflection (LORD's -> the dictionary's Lord)
    ("eng", "Were the children of the LORD hungry?", "Be the child of the LORD hungry?"),
    ("eng", "the LORD's house", "the Lord house"),
    ("fra", "Dieu dit: Que la lumière soit! Et la lumière fut.",
     "Dieu dire: Que le lumière être! Et le lumière être."),
    ("fra", "Jésus pleura.", "Jésus pleurer."),
    # "fué" (the 1909 spelling of "fue") is not in simplemma's dictionary: left as written
    ("spa", "Y dijo Dios: Sea la luz: y fué la luz.", "Y decir Dios: Ser el luz: y fué el luz."),
    ("spa", "Y lloró Jesús.", "Y llorar Jesús."),
    ("deu", "Und Gott sprach: Es werde Licht! Und es ward Licht.",
     "Und Gott sprechen: Es werden Licht! Und es werden Licht."),
    ("deu", "Die Häuser der Kinder", "Der Haus der Kind"),
    ("rus", "И сказал Бог: да будет свет. И стал свет.",
     "И сказать Бог: да быть свет. И стать свет."),
    ("rus", "Иисус прослезился.", "Иисус прослезиться."),
    # "stała" (became, fem.) is missed: simplemma keeps it
    ("pol", "I rzekł Bóg: Niech stanie się światłość. I stała się światłość.",
     "I rzec Bóg: Niech stać się światłość. I stała się światłość."),
    ("pol", "I zapłakał Jezus.", "I zapłakać Jezus."),
    ("ita", "E Gesù disse: Sia la luce.", "E Gesù dire: Essere il luce."),
    ("ukr", "І сказав Бог: Хай станеться світло!", "І сказати Бог: Хай статися світло!"),
    ("tur", "İsa ağladı.", "İsa ağla."),
]


@pytest.mark.parametrize("language, text, expected", SENTENCES)
def test_hand_checked_sentences(language, text, expected):
    assert lemmatize_text(text, language) == expected


def test_every_character_outside_word_tokens_is_kept():
    lemmatizer = TextLemmatizer("en")
    text = "  «Children»,  12 children;\u200c(wept)… 3,50 €  "
    done = lemmatizer(text)
    assert done.text == "  «Child»,  12 child;\u200c(weep)… 3,50 €  "
    assert (done.n_tokens, done.n_changed) == (3, 3)
    assert lemmatizer("").text == ""
    assert lemmatizer(" ,.; 1 2 ").text == " ,.; 1 2 "


def test_case_rule():
    assert restore_case("The", "the") == "The"
    assert restore_case("LORD", "lord") == "LORD"
    assert restore_case("Was", "be") == "Be"
    assert restore_case("WENT", "go") == "GO"
    assert restore_case("went", "go") == "go"
    assert restore_case("Häuser", "Haus") == "Haus"
    # simplemma lowercases an unknown Spanish word; the control keeps it as written
    assert TextLemmatizer("es").word("Xyzzyq") == "Xyzzyq"
    assert TextLemmatizer("en").word("Xyzzyq") == "Xyzzyq"


def test_coverage_of_the_study_languages():
    covered = [lang for lang in STUDY if lemmatizer_for(lang).covered]
    assert covered == ("eng fra spa ita por deu ron pol rus ukr tur ara fas hin swa ind "
                       "tgl").split()
    assert sorted(NOT_COVERED) == ["ben", "jpn", "kor", "vie", "zho"]
    assert set(SIMPLEMMA_CODES) | set(NOT_COVERED) >= set(STUDY)
    europarl = "bul ces dan deu ell eng spa est fin fra hun ita lit lav nld pol por ron slk slv swe"
    assert all(lemmatizer_for(lang).covered for lang in europarl.split())
    from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES
    assert set(SIMPLEMMA_CODES.values()) <= SUPPORTED_LANGUAGES
    # no neighbouring language stands in: Bengali is not lemmatized with Hindi's dictionary
    ben = lemmatizer_for("ben")
    assert (ben.covered, ben.code) == (False, None)
    assert "no Bengali dictionary" in ben.reason and "not used in its place" in ben.reason
    assert "without spaces" in lemmatizer_for("zho").reason
    assert "without spaces" in lemmatizer_for("jpn").reason
    unknown = lemmatizer_for("xyz")
    assert not unknown.covered and "no entry for 'xyz'" in unknown.reason
    with pytest.raises(InputError, match="'kor' is not lemmatized: simplemma 2.0.0 ships no "
                                         "Korean dictionary"):
        lemmatize_text("안녕", "kor")
    with pytest.raises(InputError, match="simplemma has no dictionary 'bn'"):
        TextLemmatizer("bn")


def _units():
    rows = []
    texts = {"eng": ["Jesus wept.", "And God said, Let there be light."],
             "deu": ["Jesus weinte.", "Und Gott sprach: Es werde Licht!"],
             "kor": ["예수께서 눈물을 흘리시더라", "하나님이 가라사대 빛이 있으라"]}
    for language, pair in texts.items():
        for i, (text, split) in enumerate(zip(pair, ["train", "test"])):
            rows.append({"corpus": "bible", "unit_id": f"43.011.03{i}", "position": i,
                         "language": language, "split": split, "text": text,
                         "english_reference": language == "eng"})
    return pl.DataFrame(rows)


def test_units_round_trip():
    units = _units()
    lemmas, coverage = lemmatize_units(units, progress=False)
    assert lemmas.columns == units.columns
    assert lemmas.schema == units.schema
    assert lemmas["corpus"].unique().to_list() == ["bible-lemmas"]
    kept = units.filter(pl.col("language") != "kor")
    for column in ("unit_id", "position", "language", "split", "english_reference"):
        assert lemmas[column].to_list() == kept[column].to_list()
    assert lemmas["text"].to_list() == ["Jesus weep.", "And God say, Let there be light.",
                                        "Jesus weinen.", "Und Gott sprechen: Es werden Licht!"]
    cov = {row["language"]: row for row in coverage.iter_rows(named=True)}
    assert cov["eng"]["covered"] and cov["eng"]["code"] == "en"
    assert (cov["eng"]["n_tokens"], cov["eng"]["n_changed"]) == (9, 2)
    assert cov["eng"]["share_changed"] == pytest.approx(2 / 9)
    assert (cov["deu"]["n_tokens"], cov["deu"]["n_changed"]) == (8, 3)
    assert not cov["kor"]["covered"] and cov["kor"]["n_tokens"] is None
    assert "Korean" in cov["kor"]["reason"]
    assert coverage["lemmatizer"].unique().to_list() == ["simplemma 2.0.0"]


def test_units_bad_input():
    units = _units()
    with pytest.raises(InputError, match=r"lacks columns \['split'\]"):
        lemmatize_units(units.drop("split"), progress=False)
    with pytest.raises(InputError, match="one corpus"):
        lemmatize_units(units.with_columns(corpus=pl.Series(["bible", "udhr"] * 3)),
                        progress=False)
    no_english = units.with_columns(english_reference=pl.col("language") == "kor")
    with pytest.raises(InputError, match="English reference language 'kor'.*not lemmatized"):
        lemmatize_units(no_english, progress=False)
