"""fairppl.shannon.study_bettors: the study's bettors of a campaign found in a study's folders,
in order and with the reason a kind has none; the bettors refused where the campaign cannot
take them; and the play page's reference texts (fairppl.shannon.play_server.reference_texts).
The round trip through real models is tests/workflow/test_shannon_workflow.py's."""

from __future__ import annotations

from types import SimpleNamespace

import polars as pl
import pytest

from fairppl.core.errors import InputError
from fairppl.shannon.play_server import reference_texts
from fairppl.shannon.study_bettors import BETTOR_KINDS, build_bettor, find_study_bettors


def campaign(unit="word", folder="c"):
    return SimpleNamespace(settings={"language": "eng", "vocabulary_corpus": "bible",
                                     "vocab_size": 1000, "corpus": "bible"},
                           unit=unit, outcomes=None, folder=folder,
                           unit_ids=["u1", "u2", "u1", "u9"])


def study(root):
    """A study's folders with two word n-grams of the campaign's vocabulary, one of another
    vocabulary, and two Transformers."""
    ngram = root / "results" / "ngram" / "bible" / "eng"
    ngram.mkdir(parents=True)
    for name in ("word-v1000.o5.kenlm", "word-v1000.o3.kenlm", "word-v500.o3.kenlm"):
        (ngram / name).write_bytes(b"")
    for tokenizer in ("spm-bpe-4000", "char"):
        (root / "results" / "neural" / "bible" / "eng" / tokenizer / "model").mkdir(parents=True)


def test_the_studys_bettors_are_found_in_order(tmp_path):
    study(tmp_path)
    found, missing = find_study_bettors(campaign(), tmp_path, {},
                                        ["kenlm-word", "bigram", "transformer"])
    assert missing == []
    assert [(b.name, b.label) for b in found] == [
        ("kenlm-word-o3", "KenLM word 3-gram"), ("kenlm-word-o5", "KenLM word 5-gram"),
        ("bigram-eq7", "bigram, eq. 7"), ("transformer-char", "Transformer (char)"),
        ("transformer-spm-bpe-4000", "Transformer (spm-bpe-4000)")]
    ngram = tmp_path / "results" / "ngram" / "bible" / "eng"
    assert found[0].model == str(ngram / "word-v1000.o3.kenlm")
    assert found[2].model == "bigram-eq7" and found[2].bos is None
    assert set(BETTOR_KINDS) == {"kenlm-word", "bigram", "transformer", "pretrained"}


def test_a_kind_without_a_model_says_where_it_looked(tmp_path):
    found, missing = find_study_bettors(campaign(), tmp_path, {}, ["transformer", "kenlm-word"])
    assert found == []
    assert missing == [
        "transformer: none found (results/neural/bible/eng/*/model; run the study first)",
        "kenlm-word: none found (results/ngram/bible/eng/word-v1000.o*.kenlm; run the study "
        "first)"]


def test_a_char_campaign_takes_the_bigram_alone(tmp_path):
    study(tmp_path)
    found, missing = find_study_bettors(campaign("char"), tmp_path, {},
                                        ["kenlm-word", "bigram", "transformer"])
    assert [b.name for b in found] == ["bigram-eq7"]
    assert missing == [f"{kind}: the study has no character bettor of this kind (unit char)"
                       for kind in ("kenlm-word", "transformer")]
    model = tmp_path / "results" / "ngram" / "bible" / "eng" / "word-v1000.o3.kenlm"
    with pytest.raises(InputError, match=r"a KenLM word n-gram bets on words, and this "
                                         r"campaign's unit is char \(c\)"):
        build_bettor(campaign("char"), str(model))
    with pytest.raises(InputError, match="expected a KenLM word n-gram file .* or bigram-eq7"):
        build_bettor(campaign(), str(tmp_path / "no-such-model"))


def test_reference_texts_are_the_campaigns_units_in_the_other_language(tmp_path):
    units = tmp_path / "results" / "corpus" / "bible"
    units.mkdir(parents=True)
    pl.DataFrame({"unit_id": ["u1", "u2", "u3", "u1"], "language": ["deu", "deu", "deu", "eng"],
                  "text": ["Am Anfang", "Und", "Es", "In the beginning"]}).write_parquet(
        units / "units.parquet")
    assert reference_texts(campaign(), tmp_path, "deu") == {"u1": "Am Anfang", "u2": "Und"}
    assert reference_texts(campaign(), tmp_path, "eng") == {"u1": "In the beginning"}
    with pytest.raises(InputError, match=r"--reference fra: no units of that language; "
                                         r"expected one of deu, eng"):
        reference_texts(campaign(), tmp_path, "fra")
