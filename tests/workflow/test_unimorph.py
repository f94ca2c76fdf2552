"""UniMorph lexicons end to end: the download rule against a local HTTP server on 127.0.0.1
serving a small hand-made lexicon per language, the counting rule applied, the MCC table; and the
download's errors."""

from __future__ import annotations

import hashlib
import json

import polars as pl
import pytest
import yaml

from conftest import ROOT, assert_ok, make_workdir, snakemake
from fairppl.core.errors import InputError
from fairppl.morphology.unimorph import download, unimorph_url

pytestmark = pytest.mark.e2e

# English: verbs NFIN, PRS;3;SG, PST, V.PTCP;PRS, V.PTCP;PST (5); nouns SG, PL (2). Spanish
# (verbs only): 3 bundles, 4 forms of 1 lemma.
LEXICONS = {
    "eng": ("walk\twalk\tV;NFIN\nwalk\twalks\tV;PRS;3;SG\nwalk\twalked\tV;PST\n"
            "walk\twalking\tV.PTCP;PRS\nwalk\twalked\tV.PTCP;PST\nsing\tsang\tV;PST\n"
            "dog\tdog\tN;SG\ndog\tdogs\tN;PL\n"),
    "spa": ("hablar\thablar\tV;NFIN\nhablar\thablo\tV;IND;PRS;1;SG\n"
            "hablar\thabla\tV;IND;PRS;3;SG\nhablar\thabló\tV;IND;PRS;3;SG\n"),
}


def _workdir(tmp_path, base, languages):
    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    cfg_path = wd / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text(encoding="utf-8"))
    cfg["morphology"] = {"apertium_languages": [], "apertium_dir": "/usr/share/apertium",
                         "unimorph": {"enabled": True, "languages": languages,
                                      "url": f"{base}/unimorph/{{language}}/{{language}}.tsv"}}
    cfg_path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return wd


def _serve(www):
    for lang, text in LEXICONS.items():
        (www / "unimorph" / lang).mkdir(parents=True)
        (www / "unimorph" / lang / f"{lang}.tsv").write_text(text, encoding="utf-8")


def test_unimorph_download_and_count_end_to_end(tmp_path, http_dir):
    www, base = http_dir
    _serve(www)
    wd = _workdir(tmp_path, base, ["eng", "spa"])
    assert_ok(snakemake(wd, "results/tables/mcc.csv"))
    served = (www / "unimorph" / "eng" / "eng.tsv").read_bytes()
    assert (wd / "resources" / "downloads" / "unimorph" / "eng.tsv").read_bytes() == served
    record = json.loads((wd / "results" / "morphology" / "mcc" / "unimorph" / "eng.json")
                        .read_text(encoding="utf-8"))
    assert record["details"]["sha256"] == hashlib.sha256(served).hexdigest()
    assert record["details"]["url"] == f"{base}/unimorph/eng/eng.tsv"
    # the published rule beside this study's: 7 distinct strings (no blank line, so no empty one)
    assert record["details"]["feature_strings"] == 7
    table = pl.read_csv(wd / "results" / "tables" / "mcc.csv")
    uni = table.filter(source="unimorph")
    assert {(r["language"], r["pos"]): r["mcc"] for r in uni.iter_rows(named=True)} == {
        ("eng", "verb"): 5, ("eng", "noun"): 2, ("eng", "adjective"): 0, ("eng", "total"): 7,
        ("spa", "verb"): 3, ("spa", "noun"): 0, ("spa", "adjective"): 0, ("spa", "total"): 3}
    spa = uni.filter(language="spa", pos="verb").row(0, named=True)
    assert (spa["n_forms"], spa["n_lemmas"], spa["forms_per_lemma"]) == (4, 1, 4.0)
    # the published values are in the same table, kept apart by their source
    assert table.filter(source="published", language="eng")["mcc"].to_list() == [6]
    assert set(table["source"]) == {"published", "unimorph"}
    validation = pl.read_csv(wd / "results" / "tables" / "mcc_validation.csv")
    # no Apertium count: one comparison (matched) on no language
    assert validation.filter(row="correlation")["n"].to_list() == [0]


def test_unimorph_missing_file_fails_with_the_url(tmp_path, http_dir):
    www, base = http_dir
    _serve(www)
    # Turkish: a language of the sheet (so the start-up check lets it through; a language of
    # neither the sheet nor the published MCC is refused there) whose lexicon the server lacks
    wd = _workdir(tmp_path, base, ["tur"])
    proc = snakemake(wd, "results/tables/mcc.csv")
    assert proc.returncode != 0
    log = (wd / "logs" / "download_unimorph" / "tur.log")
    text = proc.stdout + proc.stderr + (log.read_text(encoding="utf-8") if log.exists() else "")
    assert f"{base}/unimorph/tur/tur.tsv failed" in text
    assert not (wd / "resources" / "downloads" / "unimorph" / "tur.tsv").exists()


def test_download_leaves_nothing_on_failure(tmp_path, http_dir):
    www, base = http_dir
    dest = tmp_path / "out" / "x.tsv"
    with pytest.raises(InputError, match="HTTP Error 404"):
        download(f"{base}/nothing.tsv", dest)
    assert not dest.exists() and list(dest.parent.iterdir()) == []
    (www / "x.tsv").write_text("a\tb\tN;SG\n", encoding="utf-8")
    assert download(f"{base}/x.tsv", dest) == hashlib.sha256(b"a\tb\tN;SG\n").hexdigest()


def test_url_pattern_needs_the_language():
    assert unimorph_url("https://h/{language}/{language}", "fra") == "https://h/fra/fra"
    with pytest.raises(InputError, match="no {language} placeholder"):
        unimorph_url("https://h/eng", "fra")
