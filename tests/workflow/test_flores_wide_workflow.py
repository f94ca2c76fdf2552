"""The FLORES-200 rules end to end (runs Snakemake; workflow/rules/flores.smk): the tables they
write on a FLORES archive made here with the tiny random LM, every number re-derived by a direct
computation, and the wide profile's plan of the FLORES jobs. The library's parts:
tests/unit/test_flores_wide.py."""

from __future__ import annotations

import math
import os
import re

import polars as pl
import pytest
import yaml

from conftest import ahead, assert_ok, snakemake, workdir_of_test_config
from fairppl.lm.flores_table import token_premium
from fairppl.marginal import flores as marginal_flores
from test_flores_wide import ENG
from test_parity import FILES, _archive


KOREAN = {**FILES, "kor_Hang": ("하나 둘.\n셋.\n", "넷, 다섯.\n")}


@ahead("test_the_rules_write_tables_a_direct_computation_confirms",
       fixtures=("resources_ready", "tiny_model"))
def flores_run(folder, resources_ready, tiny_model):
    """The run of test_the_rules_write_tables_a_direct_computation_confirms, done ahead: its
    working folder and config."""
    mirror = folder / "mirror"
    mirror.mkdir()
    sha = _archive(mirror / "flores200_dataset.tar.gz", KOREAN)
    wd = workdir_of_test_config(folder / "wd", tiny_model)
    config = yaml.safe_load((wd / "config" / "config.yaml").read_text(encoding="utf-8"))
    config["corpora"]["flores-copy"] = {
        "enabled": False, "type": "url", "format": "tar_lines", "sha256": sha,
        "url": "https://example.org/data/flores200_dataset.tar.gz",
        "members": ["flores200_dataset/dev/{source_id}.dev",
                    "flores200_dataset/devtest/{source_id}.devtest"],
        "placeholder_patterns": []}
    config["flores"] = {"enabled": True, "corpus": "flores-copy", "codes": ["kor_Hang"],
                        "models": ["tiny-random"], "sentences": 2, "spm_corpora": ["bible"],
                        "marginal": {"models": ["tiny-random"], "codes": ["kor_Hang"],
                                     "sentences": 2}}
    (wd / "config" / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    assert_ok(snakemake(wd, "results/tables/flores.csv",
                        env=dict(os.environ, FAIRPPL_MIRROR=str(mirror))))
    return wd, config


@pytest.mark.e2e
def test_the_rules_write_tables_a_direct_computation_confirms(request, resources_ready,
                                                              tiny_model):
    """flores.enabled, corpus (an entry of another name), codes (one code and English),
    models, sentences (2 of 3), spm_corpora (the test study's Bible tokenizers: English's and
    Korean's, whose FLORES code kor_Hang the sheet's kor/Kore maps to) and marginal (the same
    sentences: its canonical bits are the canonical scorer's, by another code path) at work;
    the run done ahead (:func:`flores_run`)."""
    wd, config = flores_run.result(request)
    table = pl.read_csv(wd / "results" / "tables" / "flores.csv")
    parity = pl.read_csv(wd / "results" / "flores" / "parity.csv")
    petrov = pl.read_csv(wd / "results" / "tables" / "flores_petrov.csv")
    assert table["code"].to_list() == [ENG, "kor_Hang"]
    lines = {c: [s for text in KOREAN[c] for s in text.split("\n")[:-1]] for c in (ENG, "kor_Hang")}
    # tokens: each sentence encoded alone, by the tiny LM's tokenizer and by each language's
    # own SentencePiece model of the study
    from transformers import AutoTokenizer
    import sentencepiece

    tok = AutoTokenizer.from_pretrained(str(tiny_model))
    count = {c: sum(len(tok(s, add_special_tokens=False)["input_ids"]) for s in ls)
             for c, ls in lines.items()}
    rows = {r["code"]: r for r in table.iter_rows(named=True)}
    assert rows["kor_Hang"][token_premium("tiny-random")] == count["kor_Hang"] / count[ENG]
    for spm_id in ("spm-unigram-3000", "spm-bpe-3000"):
        pieces = {}
        for code, language in ((ENG, "eng"), ("kor_Hang", "kor")):
            sp = sentencepiece.SentencePieceProcessor(
                model_file=str(wd / "results" / "tokenizers" / "bible" / language /
                               f"{spm_id}.model"))
            pieces[code] = sum(len(ids) for ids in sp.encode(lines[code]))
        got = parity.filter(pl.col("tokenizer") == f"bible/{spm_id}").sort("code")
        assert got["tokens (count)"].to_list() == [pieces[ENG], pieces["kor_Hang"]]
        assert rows["kor_Hang"][token_premium(f"bible/{spm_id}")] == \
            pieces["kor_Hang"] / pieces[ENG]
    # bits: the sample is sentences 0 and 1 (of 3, evenly spaced), scored whole, no end token
    from fairppl.lm.cache import load_lm
    from fairppl.lm.scoring import score_texts

    model, tokenizer = load_lm(str(tiny_model), device="cpu")
    direct = {}
    for code, ls in lines.items():
        units = score_texts(model, tokenizer, [ls[0].strip(), ls[1].strip()], add_eos=False)
        direct[code] = sum(math.fsum(u.token_nats) for u in units) / math.log(2)
    for code in lines:
        assert rows[code]["tiny-random sentences scored (count)"] == 2
        assert rows[code][f"tiny-random bits relative to {ENG} (ratio)"] == \
            pytest.approx(direct[code] / direct[ENG], rel=1e-6)
        assert rows[code]["tiny-random bits per sentence (bits)"] == \
            pytest.approx(direct[code] / 2, rel=1e-6)
    # Petrov's rows for the two codes: every integer is ours (made-up text: none equal theirs)
    assert set(petrov["code"]) == {ENG, "kor_Hang"} and petrov.height == 2 * 4
    whole = " ".join(text.replace("\n", " ") for text in KOREAN[ENG])
    assert petrov.filter(pl.col("code") == ENG)["ours (count)"].to_list()[2:] == [
        len(whole.encode()), len(whole)]
    assert not petrov["equal"].any()
    assert (wd / "results" / "figures" / "flores.png").stat().st_size > 10_000
    # the marginal slice: the LM-guided records' canonical bits (the KV-tree scorer of the
    # marginal stage) equal the canonical scorer's whole-sentence bits on the same sentences
    records = pl.read_parquet(wd / "results" / "flores" / "marginal" / "tiny-random.parquet")
    per_sentence = marginal_flores.sentence_rows(records).sort("code", "sentence")
    scored = pl.read_parquet(wd / "results" / "flores" / "bits" / "tiny-random.parquet")
    paired = per_sentence.join(scored, on=["code", "sentence"])
    assert paired.height == per_sentence.height == 4
    assert paired["canonical bits"].to_list() == pytest.approx(paired["bits"].to_list(),
                                                               rel=1e-6)
    assert paired["tokens"].to_list() == paired["tokens_right"].to_list()
    assert records["K"].unique().to_list() == [config["marginal"]["K"]]
    marginal = {r["code"]: r for r in pl.read_csv(
        wd / "results" / "tables" / "flores_marginal.csv").iter_rows(named=True)}
    sums = {code: part["marginal bits"].sum()
            for (code,), part in per_sentence.group_by(["code"])}
    assert marginal["kor_Hang"][f"marginal bits relative to {ENG} (ratio)"] == \
        pytest.approx(sums["kor_Hang"] / sums[ENG], rel=1e-9)


def test_the_wide_profile_plans_the_flores_jobs(wide_plan):
    """config/wide turns the analyses on for every code: the archive of corpora.flores200, both
    pretrained LMs and both Bibles' SentencePiece models (22 and 47 languages) go in, and the
    report takes the section's tables; the default config plans none of it."""
    proc = wide_plan
    jobs = dict(re.findall(r"^(flores_\w+)\s+(\d+)$", proc.stdout, re.M))
    assert jobs == {"flores_parity": "1", "flores_bits": "2", "flores_marginal": "1",
                    "flores_tables": "1"}
    marginal = proc.stdout.split("rule flores_marginal:")[1].split("\n\n")[0]
    assert "output: results/flores/marginal/smollm2-135m.parquet" in marginal
    assert "mem_mb=2345," in marginal
    parity = proc.stdout.split("rule flores_parity:")[1].split("\n\n")[0]
    inputs = parity.split("input: ")[1].split("\n")[0].split(", ")
    assert inputs[:3] == ["resources/downloads/flores200/flores200_dataset.tar.gz",
                          "resources/models/smollm2-135m/hf", "resources/models/gemma3-270m/hf"]
    assert "mem_mb=1234," in parity
    bits = proc.stdout.split("rule flores_bits:")[1].split("\n\n")[0]
    assert "mem_mb=4321," in bits
    spm = [p for p in inputs if p.startswith("results/tokenizers/")]
    assert len(spm) == (22 + 47) * 2 and "results/tokenizers/bible/kor/spm-bpe-4000.model" in spm
    assert "results/tokenizers/bible-ces/lav/spm-unigram-4000.model" in spm  # lvs_Latn's
    report = proc.stdout.split("rule report:")[1].split("\n\n")[0]
    assert "results/tables/flores.csv" in report and "results/figures/flores.png" in report
    # (the default config plans none of it:
    # tests/workflow/test_workflow.py::test_dry_run_default_config)
