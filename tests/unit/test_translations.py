"""Translations of one language (fairppl.morphology.translations): the one-way decomposition of
ln d against hand-computed closed forms, a language with one translation adding nothing within,
grouping by ISO 639-3 code rather than by sheet id, the cross-corpus scale relative to each
corpus's English, the coverage of the share's interval, bad input and the report's sentence."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from fairppl.core.errors import InputError
from fairppl.morphology.translations import (
    TRANSLATION_COLUMNS,
    TRANSLATION_ROW_COLUMNS,
    decompose,
    translation_tables,
)
from fairppl.report.translations import translation_parts, translation_sentences


def test_decomposition_matches_the_closed_form():
    # a: 0 +- 0.1, b: 0.6 +- 0.1, c: -0.3 alone. SS_W = 4 (0.01), N - G = 2, MS_W = 0.02; grand
    # mean 0.18, SS_B = 2 (0.18)^2 + 2 (0.42)^2 + (0.48)^2 = 0.648, MS_B = 0.324;
    # n0 = (5 - 9/5) / 2 = 1.6, sigma_b^2 = (0.324 - 0.02) / 1.6 = 0.19, share = 0.02 / 0.21.
    result = decompose([0.1, -0.1, 0.7, 0.5, -0.3], ["a", "a", "b", "b", "c"])
    assert result.within_sd == pytest.approx(math.sqrt(0.02))
    assert result.between_sd == pytest.approx(math.sqrt(0.21))  # means 0, 0.6, -0.3
    assert result.within_share == pytest.approx(2 / 21)
    assert (result.n_translations, result.n_languages, result.n_multi, result.df_within) == (
        5, 3, 2, 2)
    assert result.within_share_low < 2 / 21 < result.within_share_high


def test_balanced_interval_is_the_f_interval():
    # G = 3 languages of 2: F = MS_B / MS_W on (2, 3) df; theta = sigma_b^2 / sigma_w^2 in
    # [(F / F_hi - 1) / 2, (F / F_lo - 1) / 2], share = 1 / (1 + theta).
    from scipy.stats import f
    x = [0.0, 0.2, 1.0, 1.4, -0.5, -0.4]
    result = decompose(x, list("aabbcc"), level=0.9)
    ms_w = (0.02 + 0.08 + 0.005) / 3
    means = np.array([0.1, 1.2, -0.45])
    ms_b = 2 * ((means - means.mean()) ** 2).sum() / 2
    ratio = ms_b / ms_w
    lo, hi = f.ppf([0.05, 0.95], 2, 3)
    assert result.within_share_low == pytest.approx(1 / (1 + (ratio / lo - 1) / 2))
    assert result.within_share_high == pytest.approx(1 / (1 + max(0.0, ratio / hi - 1) / 2))
    assert result.within_share == pytest.approx(ms_w / (ms_w + (ms_b - ms_w) / 2))


def test_interval_covers_the_true_share_at_its_level():
    rng = np.random.default_rng(7)
    sigma_b, sigma_w, groups, per = 0.3, 0.1, 8, 2
    truth = sigma_w ** 2 / (sigma_w ** 2 + sigma_b ** 2)
    labels = np.repeat(np.arange(groups), per).tolist()
    hits, trials = 0, 2000
    for _ in range(trials):
        x = (rng.normal(0, sigma_b, groups)[labels] + rng.normal(0, sigma_w, groups * per))
        r = decompose(x, labels)
        hits += r.within_share_low <= truth <= r.within_share_high
    assert abs(hits / trials - 0.95) < 0.015  # s.e. 0.005 at 2000 trials


def test_a_language_with_one_translation_adds_nothing_within():
    base = decompose([0.1, -0.1, 0.7, 0.5], ["a", "a", "b", "b"])
    more = decompose([0.1, -0.1, 0.7, 0.5, 3.0, -2.0], ["a", "a", "b", "b", "c", "d"])
    assert more.within_sd == pytest.approx(base.within_sd)
    assert more.df_within == base.df_within == 2
    assert more.n_multi == base.n_multi == 2
    alone = decompose([0.1, 0.4, 0.9], ["a", "b", "c"])
    assert alone.within_sd is None and alone.within_share is None and alone.df_within == 0
    assert alone.between_sd == pytest.approx(float(np.std([0.1, 0.4, 0.9], ddof=1)))


def _corpus(corpus, languages, codes, logs, english="eng"):
    difficulty = pl.DataFrame({
        "corpus": [corpus] * len(languages), "model": ["m"] * len(languages),
        "tokenizer": ["char"] * len(languages), "language": languages,
        "difficulty": np.exp(logs), "log_difficulty": logs,
        "log_difficulty_se": [0.01 * (i + 1) for i in range(len(languages))]})
    sheet = pl.DataFrame({"corpus": [corpus] * len(languages), "language": languages,
                          "iso639_3": codes,
                          "english_reference": [lang == english for lang in languages]})
    return difficulty, sheet


def test_translations_are_grouped_by_iso_code_not_by_id():
    # quc and quc-sil are one language (quc); swa is swh; "xyz" differs from both
    difficulty, sheet = _corpus("ces", ["eng", "quc", "quc-sil", "swa", "xyz"],
                                ["eng", "quc", "quc", "swh", "xyz"],
                                [0.0, 0.3, 0.1, -0.2, 0.5])
    summary, rows = translation_tables(difficulty, sheet)
    one = summary.row(0, named=True)
    assert (one["n_translations"], one["n_languages"], one["n_multi"]) == (5, 4, 1)
    assert one["multi_languages"] == "quc"
    assert one["within_sd"] == pytest.approx(math.sqrt(0.02))  # (0.3 - 0.1)^2 / 2, 1 df
    assert one["within_pct"] == pytest.approx(100 * math.expm1(math.sqrt(0.02)))
    assert one["between_sd"] == pytest.approx(float(np.std([0.0, 0.2, -0.2, 0.5], ddof=1)))
    assert one["noise_sd"] == pytest.approx(math.sqrt((0.02 ** 2 + 0.03 ** 2) / 2))
    assert rows["language"].to_list() == ["quc", "quc-sil"]
    assert rows["deviation"].to_list() == pytest.approx([0.1, -0.1])
    assert rows["language_range"].to_list() == pytest.approx([0.2, 0.2])
    assert list(summary.columns[3:]) == list(TRANSLATION_COLUMNS)
    assert list(rows.columns[3:]) == list(TRANSLATION_ROW_COLUMNS)
    # the same table with every id its own code: no language has two translations
    distinct = sheet.with_columns(iso639_3=pl.Series(["eng", "quc", "qua", "swh", "xyz"]))
    summary, rows = translation_tables(difficulty, distinct)
    assert summary["n_multi"].to_list() == [0] and summary["within_sd"].to_list() == [None]
    assert rows.height == 0


def test_across_corpora_each_translation_is_relative_to_its_own_english():
    a, sheet_a = _corpus("bible", ["eng", "ukr", "fra"], ["eng", "ukr", "fra"],
                         [0.1, 0.4, -0.1])
    b, sheet_b = _corpus("bible-ces", ["eng", "ukr", "quc"], ["eng", "ukr", "quc"],
                         [-0.3, 0.2, 0.9])
    summary, rows = translation_tables(pl.concat([a, b]), pl.concat([sheet_a, sheet_b]))
    across = summary.filter(pl.col("corpus") == "bible+bible-ces").row(0, named=True)
    # ukr: 0.4 - 0.1 = 0.3 and 0.2 + 0.3 = 0.5; fra -0.2, quc 1.2; English left out
    assert (across["n_translations"], across["n_languages"], across["n_multi"]) == (4, 3, 1)
    assert across["within_sd"] == pytest.approx(math.sqrt(0.02))
    assert across["between_sd"] == pytest.approx(float(np.std([0.4, -0.2, 1.2], ddof=1)))
    ukr = rows.filter(pl.col("corpus") == "bible+bible-ces").sort("translation_corpus")
    assert ukr["log_difficulty"].to_list() == pytest.approx([0.3, 0.5])
    assert ukr["difficulty"].to_list() == pytest.approx(np.exp([0.3, 0.5]).tolist())
    # a corpus's normalisation (a common shift of its ln d) changes nothing across corpora
    shifted = b.with_columns(pl.col("log_difficulty") + 0.7)
    again, _ = translation_tables(pl.concat([a, shifted]), pl.concat([sheet_a, sheet_b]))
    assert again.filter(pl.col("corpus") == "bible+bible-ces").row(0, named=True) == (
        pytest.approx(across))
    # within one corpus, a model fitted in one corpus only gets no cross-corpus row
    single, _ = translation_tables(a, sheet_a)
    assert single["corpus"].to_list() == ["bible"]


def test_bad_input_names_what_is_wrong():
    difficulty, sheet = _corpus("ces", ["eng", "quc"], ["eng", "quc"], [0.0, 0.1])
    with pytest.raises(InputError, match="'quc' of corpus 'ces'.*not in the language sheet"):
        translation_tables(difficulty, sheet.filter(pl.col("language") == "eng"))
    with pytest.raises(InputError, match=r"lacks columns \['iso639_3'\]"):
        translation_tables(difficulty, sheet.drop("iso639_3"))
    tsv = sheet.with_columns(english_reference=pl.Series(["true", "maybe"]))
    with pytest.raises(InputError, match="english_reference that is not true or false"):
        translation_tables(difficulty, tsv)
    ok = sheet.with_columns(english_reference=pl.Series(["True", "false"]))
    assert translation_tables(difficulty, ok)[0].height == 1


def test_report_sentence_states_the_table_numbers():
    difficulty, sheet = _corpus("ces", ["eng", "quc", "quc-sil", "fra"],
                                ["eng", "quc", "quc", "fra"], [0.0, 0.3, 0.1, -0.2])
    summary, rows = translation_tables(difficulty, sheet)
    names = {"quc": "K'iche'", "quc-sil": "K'iche' (SIL)", "eng": "English"}
    [sentence] = translation_sentences(summary, {"quc": "K'iche'"})
    within = 100 * math.expm1(math.sqrt(0.02))
    between = 100 * math.expm1(float(np.std([0.0, 0.2, -0.2], ddof=1)))
    assert f"varies by {within:.1f}%" in sentence and f"languages by {between:.1f}%" in sentence
    assert "1 language with more than one translation: K'iche'; 1 degree of freedom" in sentence
    one = summary.row(0, named=True)
    assert (f"holds {100 * one['within_share']:.1f}% of the variance (one-way analysis of "
            f"variance; 95% interval {100 * one['within_share_low']:.1f}% to "
            f"{100 * one['within_share_high']:.1f}%)") in sentence
    # two models: the smallest to the largest, and the interval holding both models' intervals
    # (the second model's: 0.5% to 80%), never a point estimate without its uncertainty
    two = pl.concat([summary, summary.with_columns(
        model=pl.lit("m2"), within_pct=pl.col("within_pct") * 2,
        within_share_low=pl.lit(0.005), within_share_high=pl.lit(0.8))])
    [sentence] = translation_sentences(two, {"quc": "K'iche'"})
    assert f"varies by {within:.1f}% to {2 * within:.1f}%" in sentence
    assert "over the 2 models" in sentence
    high = 100 * max(one["within_share_high"], 0.8)
    assert sentence.endswith(f"(one-way analysis of variance; the models' 95% intervals "
                             f"together span 0.5% to {high:.1f}%).")
    html = "".join(translation_parts({"translations": summary, "translation_rows": rows},
                                     names))
    assert "K&#x27;iche&#x27; (SIL)" in html and f"{within:.1f}%" in html
    none = summary.with_columns(n_multi=pl.lit(0, dtype=pl.Int64))
    assert translation_parts({"translations": none}, names) == []
