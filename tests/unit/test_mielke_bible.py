"""Our Bible difficulties beside Mielke et al. (2019)'s per-translation values
(fairppl.morphology.mielke_bible): counting, the verdict rule, the renormalised comparison and
its rank correlation on toy tables, refusals of bad tables, and the shipped matches re-derived
from the real archives (../shared, skipped elsewhere)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy.stats import spearmanr

from fairppl.core.errors import InputError
from fairppl.morphology import mielke_bible as mb
from fairppl.stats.bootstrap import BootstrapSettings

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "resources" / "published" / "mielke2019_bible_translations.tsv"
MATCHES = ROOT / "resources" / "published" / "mielke2019_bible_matches.tsv"


# --------------------------------------------------------------------------------------------
# Counting and the verdict
# --------------------------------------------------------------------------------------------

def test_tokens_keep_inner_apostrophes_and_split_punctuation():
    assert mb.tokens("the LORD's word, l'homme—(q'ij) 'tis 12:3.") == [
        "the", "LORD's", "word", ",", "l'homme", "—", "(", "q'ij", ")", "'", "tis", "12", ":",
        "3", "."]
    # A combining mark stays in its word (Gujarati vowel sign).
    assert mb.tokens("\u0a95\u0abe \u0a95") == ["\u0a95\u0abe", "\u0a95"]


def test_text_counts_by_hand():
    # 30 verses: 1-10 are dev/test, 11-30 train. Verse i is "a b ." for i <= 10, "a a" after.
    texts = ["a b ."] * 10 + ["a a"] * 20
    counts = mb.text_counts(texts)
    assert counts["words"] == 10 * 3 + 20 * 2
    assert counts["chars"] == 10 * (3 + 3) + 20 * (2 + 2)
    assert counts["types"] == 1 and counts["entropy_bits"] == 0.0
    # Lines 31-40 are the next block's dev/test; 41 ("a b") and 42 ("b") are train: the
    # training tokens are 41 a's and 2 b's.
    counts = mb.text_counts(texts + ["b"] + ["a b"] * 10 + ["b"])
    assert counts["types"] == 2 and counts["words"] == 70 + 1 + 20 + 1
    p = 41 / 43
    assert counts["entropy_bits"] == pytest.approx(-(p * math.log2(p) + (1 - p)
                                                      * math.log2(1 - p)))


def test_in_train_is_their_split():
    assert [mb.in_train(i) for i in (1, 5, 10, 11, 30, 31, 40, 41, 60)] == [
        False, False, False, True, True, False, False, True, True]


def published_row(words, chars, types, entropy):
    return {"word_tokens": words, "char_tokens": chars, "word_types": types,
            "unigram_word_entropy_bits": entropy}


def test_evidence_is_ratio_of_ratios_and_verdicts():
    ours = (100, {"words": 110, "chars": 500, "types": 40, "entropy_bits": 6.0},
            {"words": 100, "chars": 400, "types": 50, "entropy_bits": 5.0})
    kjv = published_row(1000, 4000, 500, 5.5)
    same = published_row(1100, 5000, 400, 6.5)
    ev = mb.evidence(ours, same, kjv, "whole")
    assert ev["d_words"] == pytest.approx(0) and ev["d_types"] == pytest.approx(0)
    assert ev["d_entropy_bits"] == pytest.approx(0) and ev["verdict"] == "same"
    off = published_row(1100 * math.exp(-0.03), 5000, 400, 6.5 - 0.04)
    ev = mb.evidence(ours, off, kjv, "whole")
    assert ev["d_words"] == pytest.approx(0.03)
    assert ev["d_entropy_bits"] == pytest.approx(0.04)
    assert ev["distance"] == pytest.approx(1.5) and ev["verdict"] == "different"
    # A New Testament: different only beyond the length limit, else undecided.
    assert mb.evidence(ours, off, kjv, "nt")["verdict"] == "undecided"
    far = published_row(1100 * math.exp(-0.11), 5000, 400, 6.5)
    assert mb.evidence(ours, far, kjv, "nt")["verdict"] == "different"


def test_pair_counts_use_common_verses_and_scope():
    kjv = [("01.001.001", "a b"), ("40.001.001", "c"), ("40.001.002", "d")]
    ours = [("01.001.001", "x y z"), ("40.001.001", ""), ("40.001.002", "w")]
    verses, mine, kj = mb.pair_counts(ours, kjv, "whole")
    assert verses == 2 and mine["words"] == 4 and kj["words"] == 3
    verses, mine, kj = mb.pair_counts(ours, kjv, "nt")
    assert verses == 1 and mine["words"] == 1 and kj["words"] == 1


# --------------------------------------------------------------------------------------------
# The comparison on a toy table
# --------------------------------------------------------------------------------------------

def toy_published() -> pl.DataFrame:
    return pl.DataFrame({
        "translation": ["eng-a", "deu-a", "deu-b", "fra-a", "ita-a"],
        "iso639_3": ["eng", "deu", "deu", "fra", "ita"],
        "difficulty_bpe_rnnlm": [0.9, 1.2, 1.0, 1.1, 0.8],
        "difficulty_char_rnnlm": [1.0, 0.8, 1.0, 1.1, 1.3],
        "char_tokens": [1] * 5, "bpe_tokens": [1] * 5, "word_tokens": [1] * 5,
        "word_types": [1] * 5, "unigram_word_entropy_bits": [1.0] * 5})


def toy_matches() -> pl.DataFrame:
    rows = [("eng-a", "eng", "eng", True, 0.0, "same"),
            ("deu-a", "deu", "deu", True, 0.6, "same"),
            ("deu-b", "deu", "deu", True, 0.3, "same"),   # the closer of two: chosen
            ("fra-a", "fra", "fra", True, 0.5, "same"),
            ("ita-a", "ita", "ita", True, 3.0, "different")]
    return pl.DataFrame([{"translation": t, "iso639_3": c, "corpus": "bible", "language": lang,
                          "source_id": "x", "in_study": s, "scope": "whole", "verses": 1,
                          "d_words": 0.0, "d_chars": 0.0, "d_types": 0.0,
                          "d_entropy_bits": 0.0, "distance": dist, "verdict": v}
                         for t, c, lang, s, dist, v in rows])


def toy_difficulty(values: dict[str, float]) -> pl.DataFrame:
    return pl.DataFrame({"corpus": "bible", "model": "m", "tokenizer": "t",
                         "language": list(values), "difficulty": list(values.values()),
                         "difficulty_low": 0.0, "difficulty_high": 9.0, "n_units": 10})


def test_renormalise_exact():
    assert mb.renormalise([1.0, 2.0, 3.0]).tolist() == [0.5, 1.0, 1.5]
    with pytest.raises(ValueError):
        mb.renormalise([1.0, -1.0])


def test_compare_renormalises_over_the_matched_languages():
    diff = toy_difficulty({"eng": 0.5, "deu": 1.0, "fra": 1.5, "ita": 7.0, "spa": 2.0})
    rows, summary = mb.compare(diff, toy_matches(), toy_published(),
                               BootstrapSettings(replicates=200))
    bpe = rows.filter(pl.col("published_model") == "bpe").sort("language")
    assert bpe["language"].to_list() == ["deu", "eng", "fra"]
    assert bpe["translation"].to_list() == ["deu-b", "eng-a", "fra-a"]
    # Ours 1.0, 0.5, 1.5 (mean 1); theirs 1.0, 0.9, 1.1 (mean 1): unchanged.
    assert bpe["ours"].to_list() == pytest.approx([1.0, 0.5, 1.5], abs=1e-15)
    assert bpe["theirs"].to_list() == pytest.approx([1.0, 0.9, 1.1], abs=1e-15)
    char = rows.filter(pl.col("published_model") == "char").sort("language")
    # Their char 1.0, 1.0, 1.1 over mean 31/30.
    assert char["theirs"].to_list() == pytest.approx([30 / 31, 30 / 31, 33 / 31], abs=1e-15)
    s = summary.filter(pl.col("published_model") == "bpe").row(0, named=True)
    assert s["n_matched"] == 3 and s["spearman_rho"] == pytest.approx(1.0)
    assert s["rho_low"] == pytest.approx(1.0) and s["rho_high"] == pytest.approx(1.0)
    assert "over the 3 languages" in s["summary"] and "steps of 0.50" in s["summary"]
    # Their two models there: bpe (1.0, 0.9, 1.1) vs char (1.0, 1.0, 1.1), renormalised.
    bpe_r = np.array([1.0, 0.9, 1.1])
    char_r = np.array([1.0, 1.0, 1.1]) * 30 / 31
    assert s["their_models_mean_abs_diff"] == pytest.approx(np.abs(bpe_r - char_r).mean())
    assert s["their_sd_bpe"] == pytest.approx(bpe_r.std())
    assert s["their_models_rho"] == pytest.approx(spearmanr(bpe_r, char_r).statistic)


def test_spearman_and_interval_against_scipy_and_by_hand():
    published = pl.DataFrame({
        "translation": [f"l{i:02d}-a" for i in range(8)],
        "iso639_3": [f"l{i:02d}" for i in range(8)],
        "difficulty_bpe_rnnlm": [0.8, 1.3, 0.9, 1.1, 1.0, 0.95, 1.2, 0.85],
        "difficulty_char_rnnlm": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
        "char_tokens": [1] * 8, "bpe_tokens": [1] * 8, "word_tokens": [1] * 8,
        "word_types": [1] * 8, "unigram_word_entropy_bits": [1.0] * 8})
    matches = pl.DataFrame([{"translation": f"l{i:02d}-a", "iso639_3": f"l{i:02d}",
                             "corpus": "bible", "language": f"l{i:02d}", "source_id": "x",
                             "in_study": True, "scope": "whole", "verses": 1, "d_words": 0.0,
                             "d_chars": 0.0, "d_types": 0.0, "d_entropy_bits": 0.0,
                             "distance": 0.0, "verdict": "same"} for i in range(8)])
    ours = [1.0, 3.0, 2.0, 4.0, 6.0, 5.0, 8.0, 7.0]
    diff = toy_difficulty({f"l{i:02d}": v for i, v in enumerate(ours)})
    settings = BootstrapSettings(replicates=500, seed=3)
    _, summary = mb.compare(diff, matches, published, settings)
    char = summary.filter(pl.col("published_model") == "char").row(0, named=True)
    # By hand: rank differences 0,1,-1,0,1,-1,1,-1: sum d^2 = 6; 1 - 6*6/(8*63) = 13/14.
    assert char["spearman_rho"] == pytest.approx(13 / 14)
    bpe = summary.filter(pl.col("published_model") == "bpe").row(0, named=True)
    theirs = published["difficulty_bpe_rnnlm"].to_numpy()
    assert bpe["spearman_rho"] == pytest.approx(spearmanr(ours, theirs).statistic)
    # The interval is the percentile interval of rho over languages resampled with the
    # study's draws: recomputed here with scipy on every replicate.
    from fairppl.stats.bootstrap import percentile_interval, resample_counts

    counts = resample_counts(8, 500, 3).astype(int)
    reps = []
    for row in counts:
        idx = np.repeat(np.arange(8), row)
        x, y = np.asarray(ours)[idx], theirs[idx]
        if np.ptp(x) > 0 and np.ptp(y) > 0:
            reps.append(spearmanr(x, y).statistic)
    low, high = percentile_interval(np.array(reps), 0.95)
    assert (bpe["rho_low"], bpe["rho_high"]) == pytest.approx((low, high))
    assert bpe["rho_low"] <= bpe["spearman_rho"] <= bpe["rho_high"]


def test_compare_with_too_few_languages_says_so():
    matches = toy_matches().with_columns(
        verdict=pl.when(pl.col("translation") == "eng-a").then(pl.lit("same"))
        .otherwise(pl.lit("different")),
        distance=pl.when(pl.col("translation") == "eng-a").then(0.0).otherwise(3.0))
    rows, summary = mb.compare(toy_difficulty({"eng": 1.2, "deu": 0.8}), matches,
                               toy_published())
    assert rows.height == 2 and rows["ours"].to_list() == [1.0, 1.0]
    s = summary.row(0, named=True)
    assert s["n_matched"] == 1 and s["spearman_rho"] is None
    assert "too few" in s["summary"]


# --------------------------------------------------------------------------------------------
# Refusals
# --------------------------------------------------------------------------------------------

HEADER = "\t".join(mb.MATCH_COLUMNS)
GOOD = "eng-a\teng\tbible\teng\tk\ttrue\twhole\t10\t0\t0\t0\t0\t0\tsame"


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "matches.tsv"
    path.write_text(text, encoding="utf-8")
    return path


def test_matches_refuse_a_missing_column(tmp_path):
    header = HEADER.replace("\tverdict", "")
    path = write(tmp_path, f"# comment\n{header}\n")
    with pytest.raises(InputError, match=rf"{path}, line 2: .*missing: verdict"):
        mb.read_matches(path, toy_published())


def test_matches_refuse_an_unknown_translation(tmp_path):
    path = write(tmp_path, f"# c\n{HEADER}\n{GOOD}\n{GOOD.replace('eng-a', 'eng-zzz')}\n")
    with pytest.raises(InputError, match=rf"{path}, line 4: unknown translation 'eng-zzz'"):
        mb.read_matches(path, toy_published())


def test_matches_refuse_a_verdict_the_evidence_does_not_give(tmp_path):
    bad = GOOD.replace("\t0\t0\t0\t0\t0\tsame", "\t0.05\t0\t0\t0\t2.5\tsame")
    path = write(tmp_path, f"{HEADER}\n{bad}\n")
    with pytest.raises(InputError, match=rf"{path}, line 2: verdict 'same' but the evidence "
                                         r"gives 'different'"):
        mb.read_matches(path, toy_published())
    path = write(tmp_path, f"{HEADER}\n{GOOD.replace('whole', 'old')}\n")
    with pytest.raises(InputError, match=rf"{path}, line 2: scope 'old'"):
        mb.read_matches(path, toy_published())


def test_published_refuses_a_bad_count(tmp_path):
    path = tmp_path / "p.tsv"
    path.write_text("\t".join(mb.PUBLISHED_COLUMNS) + "\n"
                    "eng-a\teng\t1.0\t1.0\t10\t10\tmany\t10\t1.0\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{path}, line 2: word_tokens 'many'"):
        mb.read_published(path)


def test_shipped_tables_read():
    published = mb.read_published(PUBLISHED)
    assert published.height == 106 and published["iso639_3"].n_unique() == 62
    # Their normalisation: arithmetic mean 1 over the 106.
    assert published["difficulty_bpe_rnnlm"].mean() == pytest.approx(1.0, abs=1e-9)
    assert published["difficulty_char_rnnlm"].mean() == pytest.approx(1.0, abs=1e-9)
    matches = mb.read_matches(MATCHES, published)
    chosen = mb.matched(matches)
    assert sorted(zip(chosen["corpus"], chosen["language"], chosen["translation"])) == [
        ("bible", "deu", "deu-schlachter"), ("bible", "eng", "eng-kingjames"),
        ("bible", "tgl", "tgl-1905"), ("bible", "ukr", "ukr-1962"),
        ("bible-ces", "eng", "eng-kingjames")]


def test_shipped_published_table_is_the_anchor(shared_anchors):
    ours = mb.read_published(PUBLISHED)
    theirs = pl.read_csv(shared_anchors / "mielke2019_bible_translations.tsv", separator="\t")
    assert ours.equals(theirs.select(ours.columns).cast(ours.schema))


# --------------------------------------------------------------------------------------------
# The shipped verdicts, re-derived from the archives
# --------------------------------------------------------------------------------------------

def test_matches_rederived_from_the_archives(shared_corpora, resources_ready):
    published = mb.read_published(PUBLISHED)
    shipped = mb.read_matches(MATCHES, published)
    picks = [("eng-kingjames", "k"), ("tgl-1905", "f"), ("ita-nuovadiodati1991", "1"),
             ("fra-louissegond", "l"), ("deu-zuercher", "s"),
             ("cak-central2003", "Cakchiquel-NT")]
    want = shipped.filter(pl.struct("translation", "source_id").is_in(
        [{"translation": t, "source_id": s} for t, s in picks])).unique(
        subset=["translation", "source_id"], keep="first", maintain_order=True)
    assert want.height == len(picks)
    pairs = want.select("translation", "iso639_3", "corpus", "language", "source_id",
                        "in_study", "scope").to_dicts()
    got = mb.derive_matches(str(resources_ready["FAIRPPL_BIBLE_DB"]),
                            str(shared_corpora / "bible-corpus-master.tar.gz"), published,
                            pairs)
    for old, new in zip(want.iter_rows(named=True), got.iter_rows(named=True)):
        assert new["verdict"] == old["verdict"], new
        assert new["verses"] == old["verses"]
        for column in mb.EVIDENCE + ("distance",):
            assert new[column] == pytest.approx(old[column], abs=6e-5), (new, column)
    verdicts = dict(zip(got["translation"], got["verdict"]))
    assert verdicts == {"eng-kingjames": "same", "tgl-1905": "same",
                        "ita-nuovadiodati1991": "same", "fra-louissegond": "different",
                        "deu-zuercher": "different", "cak-central2003": "different"}


def test_the_report_states_the_matches_the_correlations_and_how_weak_the_check_is():
    from fairppl.report.morphology import mielke_bible_parts

    diff = toy_difficulty({"eng": 0.5, "deu": 1.0, "fra": 1.5, "ita": 7.0, "spa": 2.0})
    rows, summary = mb.compare(diff, toy_matches(), toy_published(),
                               BootstrapSettings(replicates=200))
    html = "".join(mielke_bible_parts({"mielke_bible": summary, "mielke_bible_rows": rows},
                                      {"eng": "English"}))
    assert "3 of their translations are ours here (deu-b, eng-a, fra-a)" in html
    s = summary.row(0, named=True)
    assert (f"standard deviation of {s['their_sd_bpe']:.3f} (BPE) and "
            f"{s['their_sd_char']:.3f} (character)") in html
    for sentence in summary["summary"]:
        assert sentence.replace("'", "&#x27;") in html
    assert mielke_bible_parts({}, {}) == []
