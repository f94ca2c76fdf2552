"""Bits from known probabilities, and the aggregation into bits per utterance / BPEC."""

import math

import polars as pl
import pytest

from fairppl.metrics import SCORE_COLUMNS, bits_per_utterance, log10_to_bits, nats_to_bits


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
    return pl.DataFrame(
        dict(corpus="c", language=lang, model="m", tokenizer="char", split="test",
             unit_id=["u0", "u1"], n_chars=chars, n_bytes=nbytes, n_tokens=[c + 1 for c in chars],
             n_unseen=[0, 1], bits=bits),
        schema=SCORE_COLUMNS)


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
