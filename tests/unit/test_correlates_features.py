"""The text properties of the correlates table (fairppl.stats.correlates.language_features) on the
units common to a corpus's languages: hand counts of the fixed-length type/token ratio, mean word
length and UTF-8 bytes per character, one N per corpus, the languages the common set leaves out,
the tokenizer premium against SentencePiece itself, and which columns are predictors."""

from __future__ import annotations

import polars as pl
import pytest

from fairppl.morphology.predictors import predictor_table
from fairppl.stats.correlates import (TRAIN_SIZE, common_units, feature_description,
                                      feature_names, language_features)

N_TILDE, HIGH = "\u00f1", "\u65e5"  # ñ: 2 UTF-8 bytes; 日: 3


def _units(rows) -> pl.DataFrame:
    """(language, unit_id, position, split, text) rows of corpus c; eng is the reference."""
    return pl.DataFrame([{"corpus": "c", "language": lang, "unit_id": uid, "position": pos,
                          "split": split, "text": text, "english_reference": lang == "eng"}
                         for lang, uid, pos, split, text in rows])


# Rows out of unit order (u1 before u0): the fixed-length ratio reads the units by position.
TWO = [("eng", "u1", 1, "train", "b c"), ("eng", "u0", 0, "train", "a a b"),
       ("eng", "u2", 2, "train", "a d"), ("eng", "u3", 3, "test", "a z"),
       ("spa", "u1", 1, "train", f"{HIGH} x"), ("spa", "u0", 0, "train",
                                                f"{N_TILDE} {N_TILDE}\u00f3"),
       ("spa", "u2", 2, "train", f"{N_TILDE} y"), ("spa", "u3", 3, "test", f"{N_TILDE} q")]


def _by_language(table: pl.DataFrame) -> dict[str, dict]:
    return {r["language"]: r for r in table.iter_rows(named=True)}


def test_hand_counts_of_the_new_properties():
    feats = _by_language(language_features(_units(TWO)))
    eng, spa = feats["eng"], feats["spa"]
    # eng in unit order: a a b | b c | a d (7 words of 1 character); spa: ñ ñó | 日 x | ñ y (6)
    assert (eng["train_words"], spa["train_words"]) == (7, 6)
    # N = the fewest words (spa's 6) in both: eng a a b b c a -> 3 types; spa 5 types
    assert eng["ttr_tokens"] == spa["ttr_tokens"] == 6
    assert eng["type_token_ratio_fixed"] == pytest.approx(3 / 6)
    assert spa["type_token_ratio_fixed"] == pytest.approx(5 / 6)
    assert eng["mean_word_length"] == pytest.approx(1.0)
    assert spa["mean_word_length"] == pytest.approx(7 / 6)  # ñó has 2 characters
    # spa: "ñ ñó" 4 chars 7 bytes, "日 x" 3 chars 5 bytes, "ñ y" 3 chars 4 bytes
    assert spa["utf8_bytes_per_char"] == pytest.approx(16 / 10)
    assert eng["utf8_bytes_per_char"] == pytest.approx(1.0)
    assert (eng["feature_units"], eng["feature_test_units"]) == (3, 1)
    assert eng["features_missing_reason"] is None and spa["features_missing_reason"] is None
    # the unchanged definitions on units every language has: the whole train split
    assert eng["type_token_ratio"] == pytest.approx(4 / 7)
    assert spa["chars_per_english_char"] == pytest.approx(10 / 11)  # eng 5 + 3 + 3
    assert eng["oov_rate"] == pytest.approx(1 / 2)  # z unseen


def test_n_is_capped_and_read_in_unit_order():
    # cap 2: eng's first two words in unit order are "a a" (row order would give "b c")
    feats = _by_language(language_features(_units(TWO), ttr_tokens=2))
    assert feats["eng"]["ttr_tokens"] == feats["spa"]["ttr_tokens"] == 2
    assert feats["eng"]["type_token_ratio_fixed"] == pytest.approx(1 / 2)
    assert feats["spa"]["type_token_ratio_fixed"] == pytest.approx(1.0)  # ñ ñó
    # without positions the table's row order is the unit order
    no_pos = _by_language(language_features(_units(TWO).drop("position"), ttr_tokens=2))
    assert no_pos["eng"]["type_token_ratio_fixed"] == pytest.approx(1.0)  # b c
    with pytest.raises(ValueError, match="ttr_tokens 0"):
        language_features(_units(TWO), ttr_tokens=0)


def test_every_property_on_the_units_common_to_the_languages():
    # spa lacks u2: eng's properties are on u0 and u1 alone (a a b | b c), the same 2 units
    rows = [r for r in TWO if (r[0], r[1]) != ("spa", "u2")]
    feats = _by_language(language_features(_units(rows)))
    eng, spa = feats["eng"], feats["spa"]
    assert eng["feature_units"] == spa["feature_units"] == 2
    assert (eng["train_words"], eng["train_word_types"]) == (5, 3)
    assert eng["train_chars"] == 5 + 3
    assert eng["type_token_ratio"] == pytest.approx(3 / 5)
    # N = spa's 4 words (ñ ñó 日 x): eng a a b b -> 2 types
    assert eng["ttr_tokens"] == spa["ttr_tokens"] == 4
    assert eng["type_token_ratio_fixed"] == pytest.approx(2 / 4)
    assert spa["chars_per_english_char"] == pytest.approx((4 + 3) / (5 + 3))
    assert spa["utf8_bytes_per_char"] == pytest.approx((7 + 5) / (4 + 3))
    assert common_units(_units(rows), "train") == ({"u0", "u1"}, {})


def test_a_language_the_common_set_leaves_out_is_null_with_the_reason():
    # gla has one train unit of 3: 1 < 0.7 x 3 majority units, left out; the others keep 3
    rows = TWO + [("gla", "u1", 1, "train", "p q r s t u v w"), ("gla", "u3", 3, "test", "p")]
    feats = _by_language(language_features(_units(rows), min_share={"c": 0.7}))
    gla = feats["gla"]
    assert gla["features_missing_reason"] == (
        "left out of the common train units by common_min_share 0.7 (1 majority units, "
        "fewer than 2.1)")
    for column in ("train_words", "type_token_ratio_fixed", "ttr_tokens", "mean_word_length",
                   "utf8_bytes_per_char", "chars_per_english_char", "oov_rate",
                   "feature_units", "word_unigram_entropy"):
        assert gla[column] is None, column
    assert gla["unseen_char_rate"] == pytest.approx(0.0)  # "p" is in its train text
    # the others as without gla
    alone = _by_language(language_features(_units(TWO)))
    for lang in ("eng", "spa"):
        for column in ("train_words", "type_token_ratio_fixed", "ttr_tokens",
                       "utf8_bytes_per_char", "oov_rate"):
            assert feats[lang][column] == alone[lang][column], (lang, column)
    # share 0: gla is in the set, every language on u1 alone; N = 2 (eng "b c", spa "日 x")
    shared = _by_language(language_features(_units(rows)))
    assert {r["feature_units"] for r in shared.values()} == {1}
    assert {r["ttr_tokens"] for r in shared.values()} == {2}
    assert shared["gla"]["type_token_ratio_fixed"] == pytest.approx(1.0)
    assert shared["gla"]["train_words"] == 8


def test_tokenizer_premium_against_sentencepiece(tmp_path):
    import sentencepiece as spm

    models = {}
    for lang, line in (("eng", "a a b b c a d z"), ("spa", f"{N_TILDE} {N_TILDE}\u00f3 x y q")):
        text = tmp_path / f"{lang}.txt"
        text.write_text("\n".join([line] * 100) + "\n", encoding="utf-8")
        spm.SentencePieceTrainer.train(input=str(text), model_prefix=str(tmp_path / lang),
                                       vocab_size=12, model_type="bpe", minloglevel=2,
                                       character_coverage=1.0)
        models[lang] = tmp_path / f"{lang}.model"
    tokenizers = {("c", lang, "spm-bpe-12"): path for lang, path in models.items()}
    feats = _by_language(language_features(_units(TWO), tokenizers=tokenizers))

    def pieces(lang):
        sp = spm.SentencePieceProcessor(model_file=str(models[lang]))
        texts = _units(TWO).filter(language=lang, split="train")["text"].to_list()
        return sum(len(sp.encode(t)) for t in texts)

    assert feats["spa"]["tokenizer_premium.spm-bpe-12"] == pytest.approx(
        pieces("spa") / pieces("eng"))
    assert feats["eng"]["tokenizer_premium.spm-bpe-12"] == pytest.approx(1.0)
    assert feats["spa"]["tokens_per_word.spm-bpe-12"] == pytest.approx(pieces("spa") / 6)
    # no English model of the tokenizer: no premium, the pieces per word stay
    only = _by_language(language_features(
        _units(TWO), tokenizers={("c", "spa", "spm-bpe-12"): models["spa"]}))
    assert only["spa"]["tokenizer_premium.spm-bpe-12"] is None
    assert only["spa"]["tokens_per_word.spm-bpe-12"] == pytest.approx(pieces("spa") / 6)


def test_new_properties_are_predictors_and_the_counts_are_not():
    columns = ["corpus", "language", *TRAIN_SIZE, "type_token_ratio_fixed", "mean_word_length",
               "utf8_bytes_per_char", "train_words", "train_word_types",
               "tokenizer_premium.spm-bpe-4000", "tokens_per_word.spm-bpe-4000"]
    names = feature_names(columns)
    assert names == ["train_words", "train_word_types", "type_token_ratio_fixed",
                     "mean_word_length", "utf8_bytes_per_char", "tokens_per_word.spm-bpe-4000",
                     "tokenizer_premium.spm-bpe-4000"]
    for name in names + list(TRAIN_SIZE):  # every column says its unit
        assert feature_description(name).endswith(")"), name
    assert feature_description("tokenizer_premium.spm-bpe-4000").startswith(
        "spm-bpe-4000 pieces / spm-bpe-4000 pieces of the English text")
    feats = language_features(_units(TWO))
    predictors = predictor_table(feats, pl.DataFrame(schema={
        "corpus": pl.String, "language": pl.String, "measure": pl.String, "source": pl.String,
        "value": pl.Float64}))
    got = set(predictors["predictor"])
    assert {"type_token_ratio_fixed", "mean_word_length", "utf8_bytes_per_char",
            "train_words", "train_word_types"} <= got
    assert not got & set(TRAIN_SIZE)
    spa = predictors.filter(language="spa", predictor="utf8_bytes_per_char")
    assert spa["value"].to_list() == [pytest.approx(1.6)]


def test_caption_states_the_cap_on_n():
    from conftest import ROOT
    from fairppl.stats.correlates import TTR_TOKENS

    text = " ".join((ROOT / "workflow" / "report" / "correlates.rst").read_text(
        encoding="utf-8").split())
    assert f"at most {TTR_TOKENS:,})" in text and "common_min_share" in text
