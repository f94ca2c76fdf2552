"""Our byte premium on FLORES-200 beside Arnett, Chang & Bergen's (2024) published table: their
``byte_coef_flores_2000lines`` reproduced on all 204 codes to its printed precision (their
method: the geometric mean of per-line byte ratios over the first 2,000 stripped lines of dev +
devtest), our ratio of totals apart from it by the lines and the mean, and their Bible column
another text. The real-data tests read ../shared (skipped elsewhere, required under CI:
tests/shared_data.py); the rest run on text made here."""

from __future__ import annotations

import hashlib
import io
import math
import subprocess
import sys
import tarfile
from pathlib import Path

import polars as pl
import pytest

from fairppl.core.errors import InputError
from fairppl.corpus.flores import FLORES200_ARCHIVE, FLORES200_SHA256, read_flores
from fairppl.tokenizers.byte_premium import (BIBLE_COLUMN, COLUMNS, FLORES_COLUMN, agrees,
                                             arnett_flores_premium, arnett_lines,
                                             comparison_table, printed_decimals, read_arnett,
                                             sentences)
from fairppl.tokenizers.parity import flores_sentences

ARNETT = "byte_premium_arnett2024.tsv"


# --------------------------------------------------------------------------------------------
# The real files (../shared)
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def flores(shared_corpora):
    return read_flores(shared_corpora / FLORES200_ARCHIVE, FLORES200_SHA256)


@pytest.fixture(scope="module")
def arnett(shared_anchors):
    return read_arnett(shared_anchors / ARNETT)


@pytest.fixture(scope="module")
def table(flores, arnett):
    return comparison_table(flores, arnett)


def _rows(table, column, same):
    return table.filter((pl.col("their column") == column) & (pl.col("same method") == same))


def test_their_flores_premium_is_reproduced_on_all_204_codes(table, arnett):
    same = _rows(table, FLORES_COLUMN, "yes")
    assert same.height == 204 and same["agrees to printed precision"].all()
    # most are the very same double; the rest a few units in the last place, or rounded
    exact = same.filter(pl.col("difference (ratio)") == 0).height
    assert exact >= 150
    full = same.filter(pl.col("printed decimals") >= 15)
    assert (full["difference (ratio)"].abs() / full["theirs (ratio)"]).max() < 1e-15
    rounded = same.filter(pl.col("printed decimals") < 15)
    assert rounded.height == 12  # 11 printed with 9 decimals, English's "1.0"
    rows = {r["code"]: r for r in same.iter_rows(named=True)}
    assert rows["deu_Latn"]["ours (ratio)"] == float(arnett["deu_latn"][FLORES_COLUMN]) == \
        1.179976311910744
    assert rows["eng_Latn"]["ours (ratio)"] == 1.0


def test_the_method_found_also_gives_their_characters_and_bytes_per_character(flores, arnett):
    """What backs "the first 2,000 stripped lines": their bytes per character of those lines and
    their character premium (the same geometric mean over code points), on all 204 codes; and
    their 20- and 200-line columns repeat the 2,000-line ones."""
    english = arnett_lines(*flores["eng_Latn"])
    for code, files in flores.items():
        row = arnett[code.lower()]
        lines = arnett_lines(*files)
        assert len(lines) == 2000
        bytes_per_char = sum(len(s.encode("utf-8")) for s in lines) / sum(map(len, lines))
        assert agrees(bytes_per_char, row["bytes_per_char_flores_2000lines"]), code
        assert agrees(arnett_flores_premium(lines, english, len),
                      row["char_coef_flores_2000lines"]), code
        for measure in ("byte_coef", "char_coef", "bytes_per_char"):
            assert row[f"{measure}_flores_20lines"] == row[f"{measure}_flores_200lines"] == \
                row[f"{measure}_flores_2000lines"], (code, measure)
    # without the strip, most codes miss (13,106 FLORES lines have white space at an end)
    unstripped = [s for s in flores["ace_Arab"][0].split("\n")[:-1]]
    assert any(s != s.strip() for s in unstripped)


def test_our_ratio_of_totals_differs_by_the_lines_and_the_mean(table, flores):
    ours = _rows(table, FLORES_COLUMN, "no")
    reproduced = {r["code"]: r["ours (ratio)"] for r in
                  _rows(table, FLORES_COLUMN, "yes").iter_rows(named=True)}
    assert ours.height == 204
    for r in ours.iter_rows(named=True):
        explained = r["lines part (ratio)"] + r["mean part (ratio)"] + \
            (reproduced[r["code"]] - r["theirs (ratio)"])
        assert math.isclose(r["difference (ratio)"], explained, rel_tol=0, abs_tol=1e-12)
    # ours is the plain ratio of the bytes of the study's sentences (the parity table's)
    english = sum(len(s.encode("utf-8")) for s in flores_sentences(*flores["eng_Latn"]))
    rows = {r["code"]: r for r in ours.iter_rows(named=True)}
    for code in ("deu_Latn", "zho_Hans", "ace_Arab"):
        assert sentences(*flores[code]) == flores_sentences(*flores[code])
        here = sum(len(s.encode("utf-8")) for s in flores_sentences(*flores[code]))
        assert rows[code]["ours (ratio)"] == here / english
    # the mean dominates: a ratio of totals weights long English lines, the geometric mean not
    assert ours["mean part (ratio)"].abs().sum() > 5 * ours["lines part (ratio)"].abs().sum()
    assert (ours["difference (ratio)"].abs() / ours["theirs (ratio)"]).max() < 0.06
    assert ours["agrees to printed precision"].sum() == 1  # English


def test_their_bible_column_is_another_text(table):
    bible = table.filter(pl.col("their column") == BIBLE_COLUMN)
    assert bible.height == 77 and (bible["same method"] == "no").all()
    ours, theirs = bible["ours (ratio)"].to_list(), bible["theirs (ratio)"].to_list()
    # the same ordering by and large (Spearman), far from the same numbers
    rank = pl.DataFrame({"a": ours, "b": theirs}).select(
        pl.corr(pl.col("a").rank(), pl.col("b").rank())).item()
    assert rank > 0.8
    assert bible["difference (ratio)"].abs().max() > 0.5


# --------------------------------------------------------------------------------------------
# On text made here
# --------------------------------------------------------------------------------------------

def test_the_geometric_mean_of_per_line_ratios():
    english = ["ab", "abcd"]
    assert arnett_flores_premium(["abcd", "ab"], english) == 1.0  # 2 x 1/2
    assert math.isclose(arnett_flores_premium(["äb", "abcd"], english), math.sqrt(1.5))
    assert arnett_flores_premium(["äb", "abcd"], english, len) == 1.0
    assert arnett_lines(" a \nb\n", "c \n", 2) == ["a", "b"]
    with pytest.raises(InputError, match="1 lines against English's 2: expected line-aligned"):
        arnett_flores_premium(["a"], english)
    with pytest.raises(InputError, match="line 2 is empty: expected text on every aligned line"):
        arnett_flores_premium(["a", ""], english)


def test_printed_precision():
    assert printed_decimals("1.0") == 1 and printed_decimals("1.550152569") == 9
    assert agrees(1.5501525694, "1.550152569") and not agrees(1.5501525696, "1.550152569")
    assert agrees(1.0000000000000002, "1.0") and agrees(1.04, "1.0") and not agrees(1.06, "1.0")
    full = "1.179976311910744"
    assert agrees(float(full) * (1 + 5e-16), full) and not agrees(float(full) * (1 + 5e-15), full)


def test_their_table_is_checked(tmp_path):
    (tmp_path / "t.tsv").write_text("lang\tbyte_coef_nllb\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_arnett(tmp_path / "t.tsv")
    assert str(err.value) == (f"{tmp_path / 't.tsv'}, line 1: header lacks "
                              f"byte_coef_flores_2000lines, byte_coef_bible_whole: expected "
                              f"Arnett et al.'s table (byte_premium_arnett2024.tsv)")
    with pytest.raises(InputError, match="none.tsv: byte premium table not found: expected"):
        read_arnett(tmp_path / "none.tsv")


def test_the_comparison_command(tmp_path):
    files = {"eng_Latn": ("One two.\nThree.\n", " Four, five.\n"),
             "deu_Latn": ("Eins zwei.\nDrei.\n", "Vier, fünf. \n"),
             "xyz_Latn": ("a\nb\n", "c\n")}
    with tarfile.open(tmp_path / "f.tar.gz", "w:gz") as tar:
        for code, pair in files.items():
            for split, text in zip(("dev", "devtest"), pair):
                info = tarfile.TarInfo(f"flores200_dataset/{split}/{code}.{split}")
                info.size = len(text.encode())
                tar.addfile(info, io.BytesIO(text.encode()))
    sha = hashlib.sha256((tmp_path / "f.tar.gz").read_bytes()).hexdigest()
    english = ["One two.", "Three.", "Four, five."]
    german = ["Eins zwei.", "Drei.", "Vier, fünf."]
    geometric = math.exp(sum(math.log(len(g.encode()) / len(e)) for g, e in zip(german, english))
                         / 3)
    printed = f"{geometric:.9f}"
    (tmp_path / "a.tsv").write_text(
        f"lang\t{FLORES_COLUMN}\t{BIBLE_COLUMN}\n"
        f"eng_latn\t1.0\t1.0\ndeu_latn\t{printed}\t1.2\n", encoding="utf-8")
    out = tmp_path / "bp.csv"
    fairppl = str(Path(sys.executable).parent / "fairppl")
    proc = subprocess.run([fairppl, "parity", "--flores", str(tmp_path / "f.tar.gz"), "--sha256",
                           sha, "--byte-premium", str(tmp_path / "a.tsv"), "--out", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:2] == [
        f"{FLORES_COLUMN}, same method no: 1 of 2 agree to printed precision; largest "
        f"|difference| {abs(28 / 26 - float(printed)):.3g}",
        f"{FLORES_COLUMN}, same method yes: 2 of 2 agree to printed precision; largest "
        f"|difference| {abs(geometric - float(printed)):.3g}"]
    got = pl.read_csv(out)
    assert got.columns == list(COLUMNS)
    assert got["code"].to_list() == ["deu_Latn"] * 3 + ["eng_Latn"] * 3  # xyz_latn: not theirs
    rows = {(r["code"], r["their column"], r["same method"]): r for r in got.iter_rows(named=True)}
    # ours: the sentences as stored (" Four, five." and "Vier, fünf. " keep their spaces)
    assert rows["deu_Latn", FLORES_COLUMN, "no"]["ours (ratio)"] == 28 / 26
    assert rows["deu_Latn", BIBLE_COLUMN, "no"]["ours (ratio)"] == 28 / 26
    assert rows["deu_Latn", FLORES_COLUMN, "yes"]["agrees to printed precision"]
