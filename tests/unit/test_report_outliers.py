"""A second domain's outlier gets its cause in the report, computed: the robust z rule picks the
language, and its unseen characters (count and which) come from the units (fairppl.stats.
correlates) and the models table (fairppl.report.outliers)."""

from __future__ import annotations

from collections import Counter

import polars as pl
import pytest

from fairppl.report.outliers import ROBUST_Z, domain_outliers, outlier_sentences, robust_z
from fairppl.stats.correlates import describe_characters, language_features, unseen_characters

HYPHEN = "\u2010"


def test_unseen_characters_are_counted_and_named():
    # the Bible-like train text spells "sînt" without "â"; the UDHR-like text has 3 "â" and
    # 2 U+2010 hyphens: 5 unseen characters, both named with their counts
    train = ["sînt oameni liberi", "în demnitate"]
    scored = ["sunt în România", f"cetățean{HYPHEN}ul român{HYPHEN}ul", "câte"]
    got = unseen_characters(train, scored)
    # "ă", "ț", "c", "R", "â" ... everything not in the train text, counted
    assert got["â"] == 3 and got[HYPHEN] == 2
    assert sum(got.values()) == sum(1 for t in scored for ch in t if ch not in set("".join(train)))
    assert describe_characters(Counter({"â": 3, HYPHEN: 2})) == "â U+00E2 3, \u2010 U+2010 2"
    assert describe_characters(Counter("abcdefg"), top=2) == "a U+0061 1, b U+0062 1 (+ 5 more)"

    units = pl.DataFrame({
        "corpus": ["bible", "bible", "udhr", "udhr"], "unit_id": ["b1", "b2", "u1", "u2"],
        "language": ["ron"] * 4, "split": ["train", "test", "test", "test"],
        "text": ["sînt oameni liberi în demnitate", "sînt",
                 f"sînt oameni{HYPHEN}liberi în demnitâte", f"ââ{HYPHEN}"],
        "english_reference": [False] * 4})
    feats = {r["corpus"]: r for r in language_features(
        units, train_corpora={"udhr": "bible"}, eval_splits={"udhr": "all"}).iter_rows(named=True)}
    assert feats["udhr"]["n_unseen_chars"] == 5
    assert feats["udhr"]["unseen_chars"] == "â U+00E2 3, \u2010 U+2010 2"
    assert feats["udhr"]["unseen_char_rate"] == pytest.approx(5 / (31 + 3))  # 31 + 3 characters
    assert feats["bible"]["n_unseen_chars"] == 0 and feats["bible"]["unseen_chars"] == ""


def _models(bpec: dict[str, float], unseen: dict[str, int]) -> pl.DataFrame:
    return pl.DataFrame([dict(corpus="udhr", language=lang, model="kenlm-char-o5",
                              tokenizer="char", open_vocabulary=True, bpec=value,
                              n_unseen=unseen[lang]) for lang, value in bpec.items()])


def test_robust_z_picks_the_outlier_and_the_sentence_names_its_cause():
    bpec = {"eng": 2.7, "deu": 2.6, "fra": 3.06, "spa": 2.9, "rus": 2.8, "ron": 4.03}
    unseen = {"eng": 6, "deu": 4, "fra": 94, "spa": 0, "rus": 0, "ron": 5}
    # closed form: median 2.85, |deviations| 0.15 0.25 0.21 0.05 0.05 1.18 -> MAD 0.18
    z = robust_z(pl.Series(list(bpec.values())))
    assert z[-1] == pytest.approx((4.03 - 2.85) / (1.4826 * 0.18))
    assert z[-1] > ROBUST_Z > abs(z[2])
    out = domain_outliers(_models(bpec, unseen), "udhr")
    assert out["language"].to_list() == ["ron"]
    row = out.row(0, named=True)
    assert (row["next_language"], row["next_bpec"], row["n_unseen"]) == ("fra", 3.06, 5)
    correlates = pl.DataFrame({"corpus": ["udhr"], "language": ["ron"],
                               "unseen_chars": ["â U+00E2 3, \u2010 U+2010 2"]})
    [said] = outlier_sentences(_models(bpec, unseen), correlates, "udhr",
                               {"ron": "Romanian", "fra": "French"}, "bible")
    assert said.startswith("Romanian (ron) stands apart on udhr: BPEC 4.03")
    assert "against 3.06 for the next harder language, French" in said
    assert "has 5 characters the model never saw in training (the train split of bible)" in said
    assert "â U+00E2 3, \u2010 U+2010 2" in said
    # no outlier when the languages are spread evenly; none with fewer than 5 languages
    even = {k: 2.5 + 0.1 * i for i, k in enumerate(bpec)}
    assert domain_outliers(_models(even, unseen), "udhr").height == 0
    few = {k: bpec[k] for k in ("eng", "deu", "fra", "ron")}
    assert domain_outliers(_models(few, unseen), "udhr").height == 0
    # an outlier without unseen characters: the sentence says the cause is elsewhere
    [none] = outlier_sentences(_models(bpec, {**unseen, "ron": 0}), None, "udhr", {})
    assert "It has no characters the model never saw" in none


def test_second_domain_section_states_the_outlier_cause():
    from fairppl.report.pages import ReportInputs, second_domain_section
    from fairppl.stats.bootstrap import BootstrapSettings

    bpec = {"eng": 2.7, "deu": 2.6, "fra": 3.06, "spa": 2.9, "rus": 2.8, "ron": 4.03}
    unseen = {"eng": 6, "deu": 4, "fra": 94, "spa": 0, "rus": 0, "ron": 58}
    models = pl.concat([_models(bpec, unseen).with_columns(corpus=pl.lit(c)) for c in
                        ("bible", "udhr")]).with_columns(
        split=pl.lit("test"), n_units=pl.lit(31), bpec_ci_low=pl.col("bpec") - 0.1,
        bpec_ci_high=pl.col("bpec") + 0.1)
    sheet = pl.DataFrame({"corpus": ["bible"] * 2, "language": ["ron", "fra"],
                          "name": ["Romanian", "French"], "script": ["Latn"] * 2,
                          "iso639_3": ["ron", "fra"]})
    correlates = pl.DataFrame({"corpus": ["udhr"], "language": ["ron"],
                               "unseen_chars": ["â U+00E2 46, \u2010 U+2010 12"]})
    html = second_domain_section(ReportInputs(
        bpu=models, models=models, sheet=sheet, settings={"corpora": {"bible": {}, "udhr": {}}},
        bootstrap=BootstrapSettings(1000, 0, 0.95), correlates=correlates))
    assert "Romanian (ron) stands apart on udhr" in html
    assert "58 characters the model never saw" in html and "â U+00E2 46" in html
