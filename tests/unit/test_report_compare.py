"""The report's end-of-unit and model-vs-model comparisons (fairppl.report.compare): hand
numbers carried into the tables and the generated sentences."""

from __future__ import annotations

import polars as pl
import pytest

from fairppl.stats.bootstrap import BootstrapSettings
from fairppl.report.compare import (
    end_of_unit_html,
    eos_sentences,
    eos_table,
    model_pair_sentence,
    model_pair_summary,
    model_pairs_html,
)


def _row(language, model, bits_total, eos, english_chars=100, n_units=10):
    no_eos = None if eos is None else bits_total - eos
    return dict(corpus="bible", language=language, model=model, tokenizer="native",
                open_vocabulary=True, split="test", n_units=n_units, bits_total=bits_total,
                bpec=bits_total / english_chars, bits_eos_total=eos,
                eos_share=None if eos is None else eos / bits_total,
                bpec_no_eos=None if eos is None else no_eos / english_chars)


def _models():
    """smollm2: English 100 bits of which 10 end-of-unit (10%), German 300 of which 90 (30%);
    pooled 100 of 400 = 25%, 100 bits over 20 units = 5 bits per utterance. The character
    n-gram does not record its end cost."""
    return pl.DataFrame([
        _row("eng", "smollm2", 100.0, 10.0), _row("deu", "smollm2", 300.0, 90.0),
        _row("fra", "smollm2", 200.0, 40.0),
        _row("eng", "transformer", 100.0, 1.0), _row("deu", "transformer", 200.0, 2.0),
        _row("eng", "kenlm-char-o6", 120.0, None), _row("deu", "kenlm-char-o6", 250.0, None),
    ], infer_schema_length=None)


def test_eos_table_pools_bits_and_states_the_range():
    models = _models().filter(pl.col("language") != "fra")
    table = eos_table(models, "bible")
    assert table["model"].to_list() == ["smollm2 / native", "transformer / native"]
    smol = table.row(0, named=True)
    assert smol["n_languages"] == 2
    assert smol["eos_bits_per_utterance"] == pytest.approx(100 / 20)
    assert smol["eos_share"] == pytest.approx(0.25)  # ratio of sums, not mean(0.1, 0.3) = 0.2
    assert (smol["eos_share_min"], smol["eos_share_max"]) == pytest.approx((0.1, 0.3))
    assert smol["bpec"] == pytest.approx((1.0 + 3.0) / 2)
    assert smol["bpec_no_eos"] == pytest.approx((0.9 + 2.1) / 2)
    assert smol["spearman_rho"] is None  # two languages: no rank correlation
    # Three languages: the ranking without the end token (eng 0.9, fra 1.6, deu 2.1) is the same.
    assert eos_table(_models(), "bible").row(0, named=True)["spearman_rho"] == pytest.approx(1.0)


def test_eos_sentences_name_share_and_missing_models():
    text = " ".join(eos_sentences(_models().filter(pl.col("language") != "fra"), "bible"))
    assert ("smollm2 / native: 25% of its bits (5.00 bits per utterance; 10%-30% by language), "
            "mean BPEC 1.50 without it instead of 2.00 bits/English char") in text
    # transformer: 3 of 300 bits = 1.0%; sorted after smollm2 (smaller share)
    assert text.index("smollm2 / native:") < text.index("transformer / native: 1.0% of its")
    assert "Not recorded for kenlm-char-o6 / native: their per-unit tables" in text
    assert eos_table(_models().drop("bits_eos_total"), "bible").height == 0
    assert end_of_unit_html(_models().filter(model="kenlm-char-o6"), "bible") == ""


def _differences():
    """kenlm-char vs transformer in three languages: the transformer lower by 0.5 and 0.2
    (intervals exclude 0) and higher by 0.1 (interval covers 0): mean difference 0.2."""
    rows = []
    for lang, diff, low, high in [("eng", 0.5, 0.4, 0.6), ("deu", 0.2, 0.1, 0.3),
                                  ("fra", -0.1, -0.3, 0.1)]:
        rows.append(dict(corpus="bible", split="test", language=lang, model_a="kenlm-char-o6",
                         tokenizer_a="char", model_b="transformer", tokenizer_b="char",
                         n_units=200, bpec_a=2.0, bpec_b=2.0 - diff, bpec_difference=diff,
                         ci_low=low, ci_high=high, excludes_zero=low > 0 or high < 0))
    rows.append(dict(rows[0], model_b="gpt", tokenizer_b="native", bpec_difference=-0.3,
                     ci_low=-0.4, ci_high=-0.2, excludes_zero=True))
    rows.append(dict(rows[0], corpus="udhr"))
    return pl.DataFrame(rows)


def test_model_pair_summary_counts_by_direction():
    summary = model_pair_summary(_differences(), "bible")
    assert summary.select("model_a", "model_b").rows() == [
        ("kenlm-char-o6 / char", "transformer / char"), ("kenlm-char-o6 / char", "gpt / native")]
    row = summary.row(0, named=True)
    assert row["n_languages"] == 3 and row["mean_difference"] == pytest.approx(0.2)
    assert (row["min_difference"], row["max_difference"]) == pytest.approx((-0.1, 0.5))
    assert (row["a_lower"], row["b_lower"], row["not_told_apart"]) == (0, 2, 1)
    gpt = summary.row(1, named=True)
    assert (gpt["a_lower"], gpt["b_lower"], gpt["not_told_apart"]) == (1, 0, 0)
    assert model_pair_summary(None, "bible").height == 0


def test_model_pair_sentence_and_html():
    text = model_pair_sentence(_differences(), "bible", 0.95)
    assert text.startswith("Model against model on bible (95% paired intervals per language")
    assert ("against kenlm-char-o6 / char, transformer / char's BPEC is lower by 0.200 "
            "bits/English char on average (lower in 2 of 3 languages, higher in 0, not told "
            "apart in 1)") in text
    assert "gpt / native's BPEC is higher by 0.300" in text
    assert ("Over all 2 pairs of models and their languages, the interval excludes 0 in 3 of 4 "
            "comparisons.") in text
    page = model_pairs_html(_differences(), "bible", BootstrapSettings(1000, 0, 0.95))
    assert "<td>0.200</td>" in page and "B = 1000" in page and "model_differences.csv" in page
    assert model_pair_sentence(_differences().filter(corpus="x"), "x", 0.95) is None
    assert model_pairs_html(None, "bible", BootstrapSettings()) == ""
