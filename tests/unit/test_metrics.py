"""Bits from known probabilities, and the aggregation into bits per utterance / BPEC."""

import math

import polars as pl
import pytest

from fairppl.stats.metrics import (
    bits_per_utterance,
    log10_to_bits,
    model_order,
    nats_to_bits,
    on_common_units,
    score_frame,
)


def test_bit_conversions_exact():
    assert log10_to_bits(math.log10(0.5)) == pytest.approx(1.0, abs=1e-12)
    assert log10_to_bits(-1.0) == pytest.approx(math.log2(10), abs=1e-12)
    assert nats_to_bits(math.log(8)) == pytest.approx(3.0, abs=1e-12)


def _units():
    rows = []
    for lang, texts in {"eng": ["abcd", "ef"], "deu": ["abcdefgh", "x"]}.items():
        for i, text in enumerate(texts):
            rows.append(dict(corpus="c", unit_id=f"u{i}", position=i, language=lang, split="test",
                             text=text, english_reference=lang == "eng"))
    return pl.DataFrame(rows)


def _scores(lang, bits, chars, nbytes):
    return score_frame(corpus="c", language=lang, model="m", tokenizer="char", vocab_size=50,
                       open_vocabulary=True, split="test", unit_ids=["u0", "u1"], n_chars=chars,
                       n_bytes=nbytes, n_tokens=[c + 1 for c in chars], bits=bits,
                       n_unseen=[0, 1])


def test_bits_per_utterance_is_ratio_of_sums():
    # Unit probabilities 2^-10 and 2^-5 (German), English 2^-3 and 2^-9.
    scores = pl.concat([_scores("deu", [10.0, 5.0], [8, 1], [8, 2]),
                        _scores("eng", [3.0, 9.0], [4, 2], [4, 2])])
    table = bits_per_utterance(scores, _units())
    deu = table.filter(language="deu").row(0, named=True)
    assert deu["n_units"] == 2 and deu["bits_total"] == 15.0
    assert deu["bits_per_utterance"] == 7.5
    assert deu["n_english_chars"] == 6 and deu["bpec"] == pytest.approx(15 / 6)
    assert deu["bits_per_char"] == pytest.approx(15 / 9)  # not mean(10/8, 5/1)
    assert deu["bits_per_byte"] == pytest.approx(15 / 10)
    assert deu["n_unseen"] == 1
    eng = table.filter(language="eng").row(0, named=True)
    assert eng["bpec"] == pytest.approx(eng["bits_per_char"]) == pytest.approx(2.0)


def test_unaligned_scores_are_rejected():
    scores = _scores("deu", [1.0, 1.0], [1, 1], [1, 1]).with_columns(unit_id=pl.lit("zz"))
    with pytest.raises(ValueError, match="unit 'zz'.*not aligned"):
        bits_per_utterance(scores, _units())


def test_closed_vocabulary_perplexities():
    # Two units of 3 words each (+ </s>): 8 tokens, 2 of them <unk>, 2 distinct OOV types.
    scores = score_frame(corpus="c", language="eng", model="w", tokenizer="word-v2", vocab_size=2,
                         open_vocabulary=False, split="test", unit_ids=["u0", "u1"],
                         n_chars=[4, 2], n_bytes=[4, 2], n_tokens=[4, 4], bits=[8.0, 8.0],
                         n_oov=[1, 1], oov_types=[["x"], ["y"]])
    row = bits_per_utterance(scores, _units()).row(0, named=True)
    assert row["ppl_naive"] == pytest.approx(2 ** (16 / 8))
    assert row["ppl_unk_corrected"] == pytest.approx(2 ** (18 / 8))  # + 2 tokens * log2(2)
    assert row["oov_rate"] == pytest.approx(2 / 6)
    open_row = bits_per_utterance(_scores("eng", [3.0, 9.0], [4, 2], [4, 2]), _units()).row(0, named=True)
    assert open_row["ppl_naive"] is None and open_row["oov_rate"] is None


def test_models_are_compared_on_common_units():
    a = _scores("deu", [10.0, 5.0], [8, 1], [8, 2])
    b = score_frame(corpus="c", language="deu", model="lm", tokenizer="native", vocab_size=9,
                    open_vocabulary=True, split="test", unit_ids=["u1"], n_chars=[1],
                    n_bytes=[2], n_tokens=[2], bits=[4.0])
    common = on_common_units(pl.concat([a, b]))
    assert sorted(common.select("model", "unit_id").rows()) == [("lm", "u1"), ("m", "u1")]
    table = bits_per_utterance(common, _units())
    assert dict(table.select("model", "bits_total").rows()) == {"lm": 4.0, "m": 5.0}


def test_common_units_are_shared_across_languages():
    """One unit set per corpus: a model that scored only u1 in German restricts English too."""
    a = _scores("deu", [10.0, 5.0], [8, 1], [8, 2])
    b = score_frame(corpus="c", language="deu", model="lm", tokenizer="native", vocab_size=9,
                    open_vocabulary=True, split="test", unit_ids=["u1"], n_chars=[1],
                    n_bytes=[2], n_tokens=[2], bits=[4.0])
    eng = _scores("eng", [3.0, 9.0], [4, 2], [4, 2])
    common = on_common_units(pl.concat([a, b, eng]))
    assert set(common["unit_id"]) == {"u1"}
    table = bits_per_utterance(common, _units())
    assert table.filter(language="eng")["bits_total"].to_list() == [9.0]


def test_closed_vocabulary_rows_have_no_open_vocabulary_rates():
    scores = score_frame(corpus="c", language="eng", model="w", tokenizer="word-v2", vocab_size=2,
                         open_vocabulary=False, split="test", unit_ids=["u0", "u1"],
                         n_chars=[4, 2], n_bytes=[4, 2], n_tokens=[4, 4], bits=[8.0, 8.0])
    row = bits_per_utterance(scores, _units()).row(0, named=True)
    assert row["bpec"] is None and row["bits_per_char"] is None and row["bits_per_byte"] is None
    assert row["bits_per_utterance"] == 8.0


def test_unit_set_is_stated():
    from fairppl.stats.metrics import with_unit_set

    table = bits_per_utterance(_scores("eng", [3.0, 9.0], [4, 2], [4, 2]), _units())
    assert with_unit_set(table, common=True)["unit_set"].to_list() == [
        "common to every language and model of c (2 test units)"]
    assert with_unit_set(table, common=False)["unit_set"].to_list() == [
        "every unit this model scored (2 test units)"]
    whole = with_unit_set(table.with_columns(split=pl.lit("all")), common=True)
    assert whole["unit_set"].to_list() == [
        "common to every language and model of c (2 units (all splits))"]


def test_end_of_unit_bits_and_rates_without_them():
    """German units of 10 and 5 bits whose end tokens cost 2 and 1 bits: 3 of 15 bits (20%);
    without them 12 bits over 2 units and 6 English characters."""
    deu = _scores("deu", [10.0, 5.0], [8, 1], [8, 2]).with_columns(bits_eos=pl.Series([2.0, 1.0]))
    eng = _scores("eng", [3.0, 9.0], [4, 2], [4, 2])  # an n-gram table: no bits_eos column
    table = bits_per_utterance(pl.concat([deu, eng], how="diagonal_relaxed"), _units())
    row = table.filter(language="deu").row(0, named=True)
    assert row["bits_eos_total"] == 3.0 and row["eos_share"] == pytest.approx(0.2)
    assert row["bits_per_utterance_no_eos"] == 6.0 and row["bpec_no_eos"] == pytest.approx(2.0)
    assert row["bpec"] - row["bpec_no_eos"] == pytest.approx(3 / 6)
    row = table.filter(language="eng").row(0, named=True)
    assert row["bits_eos_total"] is None and row["bpec_no_eos"] is None
    assert row["bpec"] == pytest.approx(2.0)  # the rates with the end charge are untouched
    alone = bits_per_utterance(eng, _units()).row(0, named=True)
    assert alone["bits_eos_total"] is None and alone["bits_per_utterance_no_eos"] is None


def test_one_unit_without_its_end_cost_makes_the_total_unknown():
    deu = _scores("deu", [10.0, 5.0], [8, 1], [8, 2]).with_columns(
        bits_eos=pl.Series([2.0, None], dtype=pl.Float64))
    row = bits_per_utterance(deu, _units()).row(0, named=True)
    assert row["bits_eos_total"] is None and row["eos_share"] is None  # not 2 bits
    assert row["bits_total"] == 15.0


def test_model_order_puts_character_ngrams_first():
    assert model_order(["transformer / char", "b / x", "kenlm-char-o6 / char", "b / x"]) == [
        "kenlm-char-o6 / char", "b / x", "transformer / char"]
