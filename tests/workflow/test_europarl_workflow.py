"""The Europarl corpus type in the workflow (runs Snakemake): the full reproduction's profile plans
every stage for the paper's 21 languages, a wrong pair digest stops the run, and the test config
runs end to end against pair archives served over 127.0.0.1 (built at test time from Bible
verses of the installed package). The reader itself: tests/unit/test_europarl.py."""

from __future__ import annotations

import hashlib

import polars as pl
import pytest
import yaml

from conftest import ROOT, assert_ok, make_workdir, snakemake
from test_europarl import _tgz


LANGS = {"eng": ("en", "k"), "deu": ("de", "s"), "fra": ("fr", "l")}


def _europarl_workdir(tmp_path, base, shas):
    """The test config with only a Europarl corpus of eng, deu and fra, served at ``base``."""
    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    cfg_path = wd / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text(encoding="utf-8"))
    for spec in cfg["corpora"].values():
        spec["enabled"] = False
    cfg["corpora"]["europarl"] = {"enabled": True, "type": "europarl",
                                  "url": f"{base}/{{pair}}.tgz", "pivot": "en", "sha256": shas,
                                  "placeholder_patterns": []}
    cfg["char_ngram"]["orders"] = [3]
    cfg["lemmas"]["corpora"] = []  # no lemmatized copy: the morphology tables say so
    cfg["shannon"]["corpora"] = []  # the Bible is off: no Shannon game
    cfg["marginal"]["corpora"] = []  # nor a marginal stage (a disabled corpus there is refused)
    cfg["morphology"]["corpus"] = "europarl"
    cfg_path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    with (wd / "config" / "languages.tsv").open("a", encoding="utf-8") as sheet:
        for lang, (iso1, _) in LANGS.items():
            sheet.write(f"europarl\t{lang}\t{lang}\t{lang}\tLatn\t{iso1}\t"
                        f"{str(lang == 'eng').lower()}\n")
    return wd


@pytest.mark.e2e
def test_profile_has_the_papers_21_languages_and_plans_every_stage(tmp_path):
    sheet = pl.read_csv(ROOT / "config" / "europarl" / "languages.tsv", separator="\t")
    assert sorted(sheet["source_id"]) == sorted(
        "bg cs da de el en es et fi fr hu it lt lv nl pl pt ro sk sl sv".split())
    assert sheet.filter(pl.col("english_reference"))["source_id"].to_list() == ["en"]
    wd = make_workdir(tmp_path / "wd", ROOT / "config")
    profile = wd / "config" / "europarl" / "config.yaml"
    proc = snakemake(wd, "-n", "--configfile", str(profile))
    assert proc.returncode != 0  # the shipped profile has no checksums yet: it says which
    assert "has no digest for the pair(s) bg-en, cs-en" in proc.stdout + proc.stderr
    cfg = yaml.safe_load(profile.read_text(encoding="utf-8"))
    digests = cfg["corpora"]["europarl"]["sha256"]
    cfg["corpora"]["europarl"]["sha256"] = {pair: "a" * 64 for pair in digests}
    profile.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    proc = snakemake(wd, "-n", "--configfile", str(profile), "--quiet", "rules")
    assert_ok(proc)
    out = proc.stdout + proc.stderr
    # Transformers on words (2 tokenizers) and on lemmas (characters; simplemma covers all 21).
    for rule, jobs in (("download_corpus", 20), ("extract_europarl", 1), ("prepare_corpus", 1),
                       ("train_tokenizer", 42), ("train_neural", 42 + 21),
                       ("lemmatize_corpus", 1), ("mcc_published", 21), ("mcc_apertium", 7),
                       ("difficulty_table", 1),
                       # 7 languages x 4 bettors over words, pieces, characters; 2 x 2 pretrained
                       ("shannon_bets", 7 * 4 + 2 * 2), ("shannon_table", 1)):
        assert f"{rule} " in out and any(line.split()[:2] == [rule, str(jobs)]
                                         for line in out.splitlines()), (rule, out[-3000:])


def _fixture_archives(www, bible_db):
    """de-en and fr-en archives of Ruth and Jonah (133 verses) from the installed Bible, with
    a repeated English verse and empty sides; returns {pair: sha256}."""
    from fairppl.corpus.readers import read_bible_db

    texts = read_bible_db(str(bible_db), {lang: code for lang, (_, code) in LANGS.items()},
                          books=[8, 32])
    english = [t for _, t in texts["eng"]]
    shas = {}
    for lang in ("deu", "fra"):
        iso1 = LANGS[lang][0]
        rows = list(zip(english, [t for _, t in texts[lang]]))
        if iso1 == "de":
            rows[4] = ("", rows[4][1])  # empty English side
            rows.append((english[0], "Ein zweites Mal."))  # repeats verse 1: dropped
        else:
            rows[10] = (rows[10][0], "   ")  # empty French side
            rows.insert(0, ("Only in the French pair.", "Seulement ici."))
        shas[f"{iso1}-en"] = _tgz(www / f"{iso1}-en.tgz", f"{iso1}-en", rows)
    return shas


@pytest.mark.e2e
@pytest.mark.heavy  # every stage on a downloaded corpus: about a minute on 2 cores
def test_europarl_end_to_end_against_a_local_server(tmp_path, http_dir, resources_ready):
    www, base = http_dir
    shas = _fixture_archives(www, resources_ready["FAIRPPL_BIBLE_DB"])
    wd = _europarl_workdir(tmp_path, base, shas)
    assert_ok(snakemake(wd))
    for pair, sha in shas.items():
        archive = wd / "resources" / "downloads" / "europarl" / f"{pair}.tgz"
        assert hashlib.sha256(archive.read_bytes()).hexdigest() == sha
    pairs = pl.read_csv(wd / "results" / "corpus" / "europarl" / "europarl_pairs.tsv",
                        separator="\t")
    assert sorted(pairs["pair"]) == ["de-en", "fr-en"]
    # 133 verses less verse 1 (repeated in de-en), verse 5 (empty English in de-en) and
    # verse 11 (empty French): 130, in KJV order, ids from the de-en lines.
    assert pairs["common"].to_list()[-1] == 130
    units = pl.read_parquet(wd / "results" / "corpus" / "europarl" / "units.parquet")
    eng = units.filter(language="eng")
    assert eng.height == 130 and eng["unit_id"].to_list()[:3] == [
        "de-en:0000002", "de-en:0000003", "de-en:0000004"]
    assert eng["position"].to_list() == list(range(130))
    assert units.filter(language="fra")["unit_id"].to_list() == eng["unit_id"].to_list()
    bpu = pl.read_csv(wd / "results" / "tables" / "bpu.csv")
    rows = bpu.filter((pl.col("corpus") == "europarl") & (pl.col("model") == "kenlm-char-o3"))
    assert sorted(rows["language"]) == ["deu", "eng", "fra"], bpu.head(5)
    # 5 test positions in each of the 5 blocks of 30 (the fifth holds 10 units: 5 test).
    assert set(rows["n_units"]) == {25}
    assert (rows["bpec"] > 1).all() and (rows["bpec"] < 8).all()
    assert not (wd / "results" / "corpus" / "bible").exists()


@pytest.mark.e2e
def test_a_wrong_pair_digest_stops_the_run(tmp_path, http_dir, resources_ready):
    www, base = http_dir
    shas = _fixture_archives(www, resources_ready["FAIRPPL_BIBLE_DB"])
    good = shas["fr-en"]
    shas["fr-en"] = ("0" if good[0] != "0" else "1") + good[1:]
    wd = _europarl_workdir(tmp_path, base, shas)
    proc = snakemake(wd, "results/corpus/europarl/units.parquet")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert (f"checksum mismatch for {base}/fr-en.tgz: expected sha256 {shas['fr-en']}, got "
            f"{good}") in out, out[-3000:]
    assert not (wd / "resources" / "downloads" / "europarl" / "fr-en.tgz").exists()
    assert not (wd / "results" / "corpus" / "europarl" / "multitext.parquet").exists()
