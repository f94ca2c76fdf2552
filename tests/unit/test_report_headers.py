"""No code name reaches a reader as a table header (fairppl.report.html.column_label): the
report is built from small frames holding the column names that used to leak (tokens_per_word.<id>,
forms_per_lemma:<source>, paths_99_Q, reach_99_9), every header and row label of its tables is
read back, and none looks like an identifier."""

from __future__ import annotations

import html
import importlib
import re

import polars as pl
import pytest

from fairppl.report.html import column_label, html_table
from fairppl.report.pages import ReportInputs, build_report
from fairppl.stats.bootstrap import BootstrapSettings
from test_report_pages import SHEET, _models

#: An identifier in a header: words joined by underscores, a dot-qualified id, a colon-joined
#: source, or two numbers that were one ("99 9").
CODE = re.compile(r"\b[a-z]+_[a-z0-9_]+\b|\b[a-z_]+\.[a-z0-9-]+\b|\b\w+:\w|\b\d+ \d+\b")


def _headers(page: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r"<th>(.*?)<br>", page)]


def _row_labels(page: str) -> list[str]:
    return [html.unescape(c) for c in re.findall(r"<tr><td class='text'>(.*?)</td>", page)]


def test_column_label_reads_every_kind_of_name():
    assert column_label("tokens_per_word.spm-bpe-4000") == "spm-bpe-4000 tokens per word"
    assert column_label("forms_per_lemma:apertium") == "forms per lemma, Apertium"
    assert column_label("mcc:unimorph") == "MCC, UniMorph"
    assert column_label("paths_99_Q") == "paths to 99% of the mass, in Q's order"
    assert column_label("reach_99_9") == "units reaching 99.9% of the mass"
    assert column_label("n_unseen_chars") == "number of unseen characters"
    for label in ("kenlm-char-o5 / char", "word-v1000: naive", "fewest (count)", "gemma3-270m"):
        assert column_label(label) == label  # labels and prose stay


def test_built_report_has_no_code_names_in_headers():
    models = pl.concat([_models("bible"), _models("udhr", n_units=31)])
    langs = ["eng", "deu", "kor", "tur"]
    correlates = pl.DataFrame({
        "corpus": ["bible"] * 4, "language": langs, "train_chars": [400, 500, 300, 450],
        "train_words": [100, 90, 80, 70], "type_token_ratio": [0.1, 0.2, 0.3, 0.4],
        "unseen_char_rate": [0.0, 0.01, 0.02, 0.0], "n_unseen_chars": [0, 1, 2, 0],
        "unseen_chars": ["", "ß U+00DF 1", "가 U+AC00 2", ""],
        "tokens_per_word.spm-bpe-4000": [1.1, 1.3, 1.6, 1.8]})
    correlations = pl.DataFrame({
        "corpus": ["bible"] * 2, "model": ["kenlm-char-o5"] * 2, "tokenizer": ["char"] * 2,
        "feature": ["tokens_per_word.spm-bpe-4000", "unseen_char_rate"],
        "spearman_rho": [0.8, 0.2], "p_value": [0.2, 0.8], "n_languages": [4, 4]})
    predictors = pl.DataFrame({
        "corpus": ["bible"] * 3, "family": ["character"] * 3, "model": ["kenlm-char-o5"] * 3,
        "tokenizer": ["char"] * 3, "response": ["difficulty"] * 3,
        "predictor": ["forms_per_lemma:apertium", "tokens_per_word.spm-bpe-4000",
                      "chars_per_english_char"],
        "n_languages": [4] * 3, "pearson_r": [0.5] * 3, "spearman_rho": [0.4, 0.9, 0.1],
        "spearman_p": [0.5, 0.1, 0.9], "spearman_p_bh": [0.6, 0.3, 0.9]})
    difficulty = pl.DataFrame({
        "corpus": ["bible"] * 4, "model": ["kenlm-char-o5"] * 4, "tokenizer": ["char"] * 4,
        "language": langs, "difficulty": [0.8, 0.9, 1.1, 1.2], "difficulty_low": [0.7] * 4,
        "difficulty_high": [1.3] * 4, "n_units": [5] * 4,
        "difficulty_model": ["heteroscedastic"] * 4, "normalisation": ["arithmetic"] * 4})
    inp = ReportInputs(
        bpu=models, models=models, sheet=SHEET,
        settings={"corpora": {"bible": {}, "udhr": {}},
                  "word_ngram": {"corpora": ["bible"], "languages_without_spaces": [],
                                 "order": 3, "vocab_sizes": [100]}},
        bootstrap=BootstrapSettings(1000, 0, 0.95), correlates=correlates,
        correlations=correlations, morphology={"predictors": predictors, "difficulty": difficulty},
        tokenizers=pl.DataFrame({"corpus": ["bible"], "language": ["eng"],
                                 "tokenizer": ["spm-bpe-4000"], "vocab_size_requested": [4000],
                                 "vocab_size": [4000], "iso639_3": ["eng"]}))
    page = build_report(inp)
    headers, rows = _headers(page), _row_labels(page)
    assert "spm-bpe-4000 tokens per word" in headers
    assert "forms per lemma, Apertium" in rows and "spm-bpe-4000 tokens per word" in rows
    assert [h for h in headers if CODE.search(h)] == []
    assert [r for r in rows if CODE.search(r)] == []


def test_marginal_samples_needed_headers_are_readable():
    from fairppl.report.marginal import NEEDED_HEADERS, samples_needed_table

    summary = pl.DataFrame({
        "corpus": ["bible"] * 2, "language": ["eng"] * 2, "model": ["m"] * 2,
        "tokenizer": ["spm"] * 2, "order": ["Q", "P"], "n_units": [50, 50],
        "median_paths_to_99pct": [3.0, 1.0], "share_units_reaching_99pct": [1.0, 1.0],
        "median_paths_to_99_9pct": [None, 4.0], "share_units_reaching_99_9pct": [0.4, 0.4]})
    page = html_table(samples_needed_table(summary), NEEDED_HEADERS)
    headers = _headers(page)
    assert "paths to 99.9% of the mass, in P's order" in headers
    assert [h for h in headers if CODE.search(h)] == []


#: The column -> unit dicts of the tables the report shows (module, names).
_REGISTRIES = {
    "fairppl.report.marginal": ["NEEDED_HEADERS", "CACHING_HEADERS"],
    "fairppl.report.morphology": ["HEADERS"],
    "fairppl.report.pages": ["TOKENIZER_HEADERS", "UNITS"],
    "fairppl.report.shannon": ["HEADERS", "PLAYER_HEADERS"],
    "fairppl.marginal.compare": ["FAIR_COLUMNS", "RANKING_COLUMNS", "ACCURACY_COLUMNS",
                                 "ENTROPY_COLUMNS", "PUBLISHED_COLUMNS"],
    "fairppl.marginal.lengths": ["SUMMARY_COLUMNS"],
    "fairppl.shannon.table": ["COLUMNS"],
    "fairppl.morphology.difficulty": ["DIFFICULTY_COLUMNS", "AGREEMENT_COLUMNS"],
    "fairppl.morphology.regression": ["REGRESSION_COLUMNS", "PREDICTOR_COLUMNS"],
    "fairppl.stats.fairness": ["FAIRNESS_COLUMNS", "PREMIUM_COLUMNS"],
    "fairppl.stats.metrics": ["BPU_COLUMNS", "EXTRA_COLUMNS", "COMMON_SET_COLUMNS"],
    "fairppl.stats.correlates": ["FEATURES", "UNSEEN_COLUMNS", "TRAIN_SIZE"],
}


@pytest.mark.parametrize("module", sorted(_REGISTRIES))
def test_every_registered_column_renders_without_code_names(module):
    mod = importlib.import_module(module)
    names = sorted({n for attr in _REGISTRIES[module] for n in getattr(mod, attr)})
    page = html_table(pl.DataFrame({n: [1.0] for n in names}))
    assert [h for h in _headers(page) if CODE.search(h)] == []


def test_correlates_table_says_a_constant_column_once_in_its_caption():
    from fairppl.report.pages import correlates_section

    langs = ["eng", "deu", "kor", "tur"]
    correlates = pl.DataFrame({
        "corpus": ["bible"] * 4, "language": langs, "feature_units": [4751] * 4,
        "ttr_tokens": [10000] * 4, "type_token_ratio_fixed": [0.1, 0.2, 0.3, 0.25],
        "features_missing_reason": pl.Series([None] * 4, dtype=pl.String)})
    inp = ReportInputs(bpu=_models("bible"), models=_models("bible"), sheet=SHEET,
                       settings={"corpora": {"bible": {}}},
                       bootstrap=BootstrapSettings(1000, 0, 0.95), correlates=correlates)
    page = correlates_section(inp)
    headers = _headers(page)
    assert "type/token ratio on the first N words" in headers
    assert not {"feature units", "type/token ratio tokens", "features missing reason"} & set(
        headers)
    assert ("per language, hardest first; the same for every language: feature units = 4,751; "
            "type/token ratio tokens = 10,000") in html.unescape(page)
