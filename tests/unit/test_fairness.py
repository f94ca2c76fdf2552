"""Fairness across languages and the tokenizer premium (fairppl.stats.fairness): closed forms of
the Gini coefficient, the paired intervals against the bootstrap module, hand-counted premiums."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from fairppl.stats.bootstrap import BootstrapSettings, ratio_interval
from fairppl.stats.fairness import (
    FAIRNESS_COLUMNS,
    PREMIUM_COLUMNS,
    fairness_summary,
    gini,
    gini_rows,
    tokenizer_premium,
)

S = BootstrapSettings(replicates=1000, seed=4, level=0.9)


def direct_gini(x):
    x = np.asarray(x, dtype=float)
    return np.abs(x[:, None] - x[None, :]).sum() / (2 * len(x) ** 2 * x.mean())


def test_gini_closed_forms():
    assert gini([2.0, 2.0, 2.0, 2.0]) == pytest.approx(0.0)
    for n in (2, 3, 7):
        assert gini([0.0] * (n - 1) + [1.0]) == pytest.approx((n - 1) / n)
    assert gini([1.0, 3.0]) == pytest.approx(0.25)  # |1 - 3| * 2 / (2 * 4 * 2)
    rng = np.random.default_rng(0)
    matrix = rng.lognormal(size=(5, 9))
    assert gini_rows(matrix) == pytest.approx([direct_gini(row) for row in matrix])
    assert gini(matrix[0] * 7.5) == pytest.approx(gini(matrix[0]))  # scale-free
    with pytest.raises(ValueError, match="non-negative"):
        gini([1.0, -1.0])
    with pytest.raises(ValueError, match="sum to 0"):
        gini([0.0, 0.0])


def _scores(rates, n_units=40, seed=0, drop=None):
    rng = np.random.default_rng(seed)
    chars = rng.integers(50, 200, n_units)
    rows, english = [], []
    for i, c in enumerate(chars):
        english.append(("bible", f"u{i:03d}", int(c)))
        for lang, rate in rates.items():
            if drop and (lang, i) in drop:
                continue
            bits = rate * c * rng.lognormal(0.0, 0.2)
            rows.append(("bible", "test", "kenlm-char-o5", "char", lang, f"u{i:03d}", bits, True))
    scores = pl.DataFrame(rows, schema=["corpus", "split", "model", "tokenizer", "language",
                                        "unit_id", "bits", "open_vocabulary"], orient="row")
    eng = pl.DataFrame(english, schema=["corpus", "unit_id", "n_english_chars"], orient="row")
    return scores, eng


def test_fairness_summary_values_and_intervals():
    scores, eng = _scores({"eng": 2.0, "deu": 2.4, "kor": 3.0}, drop={("deu", 5), ("kor", 7)})
    table = fairness_summary(scores, eng, S)
    assert table.columns == list(FAIRNESS_COLUMNS)
    row = table.row(0, named=True)
    assert (row["n_languages"], row["n_units"]) == (3, 38)  # units 5 and 7 are not common
    common = scores.filter(~pl.col("unit_id").is_in(["u005", "u007"])).join(eng, on="unit_id")
    bpec = {lang: part["bits"].sum() / part["n_english_chars"].sum()
            for (lang,), part in common.group_by("language")}
    assert (row["hardest"], row["easiest"]) == ("kor", "eng")
    assert row["bpec_hardest"] == pytest.approx(bpec["kor"])
    assert row["ratio"] == pytest.approx(bpec["kor"] / bpec["eng"])
    assert row["gini"] == pytest.approx(direct_gini(list(bpec.values())))
    # On common units the pair's ratio of BPECs is the ratio of their bit sums: the same
    # interval as bootstrap.ratio_interval with the same draws (units sorted by id).
    kor = common.filter(language="kor").sort("unit_id")["bits"].to_numpy()
    eng_bits = common.filter(language="eng").sort("unit_id")["bits"].to_numpy()
    assert (row["ratio_low"], row["ratio_high"]) == pytest.approx(
        ratio_interval(kor, eng_bits, S))
    assert row["ratio_low"] < row["ratio"] < row["ratio_high"]
    assert row["gini_low"] < row["gini"] < row["gini_high"]
    assert (row["ci_level"], row["ci_replicates"], row["ci_seed"]) == (0.9, 1000, 4)


def test_fairness_of_equal_languages_and_skipped_models():
    scores, eng = _scores({"eng": 2.0, "deu": 2.0})
    same = scores.with_columns(bits=pl.col("unit_id").str.slice(1).cast(pl.Float64) + 1.0)
    row = fairness_summary(same, eng, S).row(0, named=True)
    assert (row["ratio"], row["ratio_low"], row["ratio_high"]) == (1.0, 1.0, 1.0)
    assert (row["gini"], row["gini_low"], row["gini_high"]) == (0.0, 0.0, 0.0)
    one = scores.filter(language="eng")
    closed = scores.with_columns(open_vocabulary=pl.lit(False))
    assert fairness_summary(one, eng, S).height == 0  # one language: nothing to compare
    assert fairness_summary(closed, eng, S).height == 0
    with pytest.raises(ValueError, match="scored unit 'u000' 2 times"):
        fairness_summary(pl.concat([scores, scores.head(1)]), eng, S)
    # Two training corpora of one model are two rows (train_corpus is a key when present).
    both = pl.concat([scores.with_columns(train_corpus=pl.lit("bible")),
                      scores.with_columns(train_corpus=pl.lit(None, dtype=pl.String))])
    table = fairness_summary(both, eng, S)
    assert table.columns[:5] == ["corpus", "split", "model", "tokenizer", "train_corpus"]
    assert table["train_corpus"].to_list() == ["bible", None]


def _tokens():
    # eng: 10 tokens per unit; fra 12 on u0..u2 (u3 missing); kor 25 on u0..u3.
    rows = [("bible", "spm-bpe-8000", "eng", f"u{i}", 10 + 1) for i in range(4)]
    rows += [("bible", "spm-bpe-8000", "fra", f"u{i}", 12 + 1) for i in range(3)]
    rows += [("bible", "spm-bpe-8000", "kor", f"u{i}", 20 + 2 * i + 1) for i in range(4)]
    return pl.DataFrame(rows, schema=["corpus", "tokenizer", "language", "unit_id", "n_tokens"],
                        orient="row")


def test_tokenizer_premium_by_hand():
    eng = pl.DataFrame({"corpus": ["bible"] * 4, "unit_id": [f"u{i}" for i in range(4)],
                        "n_english_chars": [50, 50, 50, 50]})
    table = tokenizer_premium(_tokens(), eng, settings=S, end_tokens=1)
    assert table.columns == ["corpus", "tokenizer"] + list(PREMIUM_COLUMNS)
    rows = {r["language"]: r for r in table.iter_rows(named=True)}
    assert rows["eng"]["premium"] == 1.0 and rows["eng"]["premium_low"] == 1.0
    assert (rows["fra"]["n_units"], rows["fra"]["tokens"], rows["fra"]["reference_tokens"]) == (
        3, 36, 30)
    assert rows["fra"]["premium"] == pytest.approx(1.2)
    assert rows["fra"]["premium_low"] == rows["fra"]["premium_high"] == pytest.approx(1.2)
    assert rows["fra"]["tokens_per_english_char"] == pytest.approx(36 / 150)
    # kor: 20 + 22 + 24 + 26 = 92 tokens against 40; per unit 2.0 to 2.6.
    assert rows["kor"]["premium"] == pytest.approx(92 / 40)
    assert 2.0 <= rows["kor"]["premium_low"] <= 2.3 <= rows["kor"]["premium_high"] <= 2.6
    # Without end_tokens the end-of-unit token counts: (12 + 1) / (10 + 1).
    assert tokenizer_premium(_tokens(), eng, settings=S).filter(language="fra")["premium"][0] == \
        pytest.approx(13 / 11)


def test_tokenizer_premium_bad_input():
    eng = pl.DataFrame({"corpus": ["bible"], "unit_id": ["u0"], "n_english_chars": [5]})
    with pytest.raises(ValueError, match="no rows of the reference language 'eng'"):
        tokenizer_premium(_tokens().filter(pl.col("language") != "eng"), eng, settings=S)
    with pytest.raises(ValueError, match="tokenized unit 'u0' 2 times in 'eng'"):
        tokenizer_premium(pl.concat([_tokens(), _tokens().head(1)]), eng, settings=S)
    with pytest.raises(ValueError, match="fewer than end_tokens=2"):
        tokenizer_premium(_tokens().with_columns(n_tokens=pl.lit(1)), eng, settings=S,
                          end_tokens=2)
