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


def test_unk_section_says_which_languages_the_sweep_leaves_out(bpu):
    """Japanese and Chinese have character rows but no word rows: the UNK section names them,
    with their characters per whitespace word from the correlates table and the config's
    limit; a study where every language is swept says nothing."""
    from fairppl.report.html import unswept_sentence
    from fairppl.report.pages import ReportInputs, unk_section
    from fairppl.stats.bootstrap import BootstrapSettings

    more = pl.concat([bpu, pl.DataFrame([_row("kenlm-char-o5", "char", True, 90.0, language="jpn"),
                                         _row("kenlm-char-o5", "char", True, 80.0, language="zho")],
                                        schema=bpu.schema)])
    correlates = pl.DataFrame({"corpus": ["bible"] * 4, "language": ["eng", "deu", "jpn", "zho"],
                               "train_chars": [500, 600, 1100, 404],
                               "train_words": [100, 100, 20, 40]})
    settings = {"word_ngram": {"corpora": ["bible"], "languages_without_spaces": ["zho", "jpn"],
                               "max_chars_per_token": 8.0}}
    names = {"jpn": "Japanese", "zho": "Chinese", "eng": "English", "deu": "German"}
    said = unswept_sentence(more, correlates, settings, names)
    assert "leaves out 2 languages written without spaces" in said
    assert "above the 8.00 characters per whitespace token" in said
    assert ("Japanese (jpn): 55.0 characters per whitespace word, listed in "
            "word_ngram.languages_without_spaces; Chinese (zho): 10.1 characters") in said
    assert "English" not in said and "German" not in said
    assert unswept_sentence(bpu, correlates, settings, names) == ""
    sheet = pl.DataFrame({"corpus": ["bible"] * 4, "language": list(names),
                          "name": list(names.values())})
    html = unk_section(ReportInputs(bpu=more.with_columns(split=pl.lit("test")), models=more,
                                    sheet=sheet, settings=settings, bootstrap=BootstrapSettings(),
                                    correlates=correlates))
    assert "Japanese (jpn)" in html and "word_sweep_decisions.csv" in html
