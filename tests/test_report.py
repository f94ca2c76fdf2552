"""The report's tables (fairppl.report.html): values carried to the right rows, units in headers."""

from __future__ import annotations

import polars as pl
import pytest

from fairppl.report.html import conventions_table, unk_table


def _row(model, tokenizer, open_vocabulary, bpu, language="eng", **extra):
    base = dict(corpus="bible", language=language, model=model, tokenizer=tokenizer,
                vocab_size=None, open_vocabulary=open_vocabulary, n_units=4, n_tokens=40,
                oov_rate=None, ppl_naive=None, ppl_unk_corrected=None, bits_per_utterance=bpu,
                bits_unk_corrected=None)
    base.update(extra)
    return base


@pytest.fixture
def bpu():
    return pl.DataFrame([
        _row("kenlm-char-o5", "char", True, 200.0),
        _row("kenlm-char-o7", "char", True, 190.0),
        _row("kenlm-char-o5", "char", True, 300.0, language="deu"),
        _row("transformer", "char", True, 150.0),  # a char-level LM, but not the n-gram
        _row("kenlm-word-o3", "word-v1000", False, 120.0, vocab_size=1000, oov_rate=0.1,
             ppl_naive=50.0, ppl_unk_corrected=80.0, bits_unk_corrected=600.0),
        _row("kenlm-word-o3", "word-v1000", False, 140.0, language="deu", vocab_size=1000,
             oov_rate=0.2, ppl_naive=60.0, ppl_unk_corrected=90.0, bits_unk_corrected=1000.0),
    ], infer_schema_length=None)


def test_unk_table_puts_the_char_model_beside_each_word_model(bpu):
    table = unk_table(bpu)
    eng = table.filter(language="eng").sort("char_model")
    assert eng["char_model"].to_list() == ["kenlm-char-o5", "kenlm-char-o7"]
    assert eng["char_bits_per_utterance"].to_list() == [200.0, 190.0]
    assert eng["unk_corrected_bits_per_utterance"].to_list() == [150.0, 150.0]  # 600 bits / 4
    deu = table.filter(language="deu")
    assert deu.height == 1
    assert deu.row(0, named=True)["char_bits_per_utterance"] == 300.0
    assert deu.row(0, named=True)["unk_corrected_bits_per_utterance"] == 250.0


def test_unk_and_conventions_tables_carry_units(bpu):
    from fairppl.report.html import html_table
    from fairppl.report.pages import unk_section

    harness = "HFLM(prefix_token_id=1, add_bos_token=False): ..."
    records = [dict(model="m", tokenizer="native", language=lang, start_token="<s>",
                    start_token_role="BOS", end_token="</s>", end_charged=True, windowing="none",
                    padding="right", weights="float32", lm_eval_harness=harness)
               for lang in ("eng", "deu")]
    # a record written before the lm-evaluation-harness sentence existed: an empty cell
    old = {k: v for k, v in records[0].items() if k != "lm_eval_harness"} | {"model": "old"}
    conventions = conventions_table([*records, old])
    assert conventions.columns[-1] == "lm_eval_harness"
    assert conventions.row(0, named=True)["languages"] == "eng deu"
    assert conventions["lm_eval_harness"].to_list() == [harness, None]
    assert "None" not in html_table(conventions)
    assert html_table(conventions).count(harness) == 1

    class Inputs:  # the one field unk_section reads
        figures: dict = {}

    inputs = Inputs()
    inputs.bpu = bpu.with_columns(split=pl.lit("test"))
    html = unk_section(inputs)
    assert "every p(&lt;unk&gt;) / #OOV types (bits/utterance)" in html
    assert "character n-gram, same units (bits/utterance)" in html
    assert "fall below the character model" in html


def test_weights_note_names_the_source(tmp_path):
    import json

    from fairppl.lm.pretrained import PROVENANCE_FILE, weights_note

    assert weights_note("org/model") == "hub: org/model"
    assert weights_note(tmp_path) == "as saved (float32)"
    (tmp_path / PROVENANCE_FILE).write_text(json.dumps(
        {"dtype": "float32", "note": "weights dequantised from the GGUF file by transformers",
         "gguf_file": "m.Q4_1.gguf", "gguf_sha256": "ab" * 32}), encoding="utf-8")
    assert weights_note(tmp_path) == ("float32, weights dequantised from the GGUF file by "
                                      "transformers m.Q4_1.gguf (sha256 abababababab…)")
