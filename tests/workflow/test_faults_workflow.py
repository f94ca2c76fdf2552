"""Faults a finished study survives, each on a copy of the session's finished test study (never
the study itself) and aimed at single outputs:

* an intermediate damaged on disk with its size and modification time kept, and one deleted, are
  rebuilt by the next run and the final tables equal the undamaged study's;
* a marginal-likelihood estimator job SIGKILLed after some units resumes and ends with the table
  of an uninterrupted run;
* a Transformer trained with other settings never stands in for the configured one, after a
  config change and a SIGKILLed training job;
* SIGINT to Snakemake alone: the rerun saves the finished training job's model again instead of
  training it again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import time
from pathlib import Path

import polars as pl
import pytest
import yaml

from conftest import assert_ok, snakemake, start_snakemake, wait_for
from test_integrity import zero_block

pytestmark = pytest.mark.e2e


def _copy(study, tmp_path: Path) -> Path:
    wd, _ = study
    copy = tmp_path / "wd"
    shutil.copytree(wd, copy, symlinks=True)  # with .snakemake: its metadata and rerun triggers
    return copy


def _set_config(wd: Path, section: str, **values) -> None:
    path = wd / "config" / "config.yaml"
    cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    cfg[section].update(values)
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_corrupt_and_deleted_intermediates_are_rebuilt(study, tmp_path):
    """4 KiB zeroed inside Turkish's character 5-gram (size and mtime kept) and English's
    character 5-gram scores deleted: the loader refuses the model, the next plain `snakemake`
    removes it, rebuilds both (the same bytes) and the tables equal the undamaged study's."""
    from fairppl.core.integrity import CorruptFileError
    from fairppl.ngram.kenlm_tool import load_model

    _, bpu = study
    wd = _copy(study, tmp_path)
    model = wd / "results/ngram/bible/tur/char.o5.kenlm"
    scores = wd / "results/scores/bible/eng/kenlm-char-o5.char.parquet"
    model_digest, scores_digest = _sha256(model), _sha256(scores)
    zero_block(model)
    with pytest.raises(CorruptFileError) as err:
        load_model(model)
    assert str(model) in str(err.value) and model_digest in str(err.value)
    scores.unlink()

    proc = snakemake(wd)
    assert_ok(proc)
    out = proc.stdout + proc.stderr
    assert "results/ngram/bible/tur/char.o5.kenlm: the file changed after it was written" in out
    assert "results/scores/bible/eng/kenlm-char-o5.char.parquet: missing" in out
    assert "1 corrupt, 1 missing" in out
    assert _sha256(model) == model_digest  # rebuilt, not consumed
    assert _sha256(scores) == scores_digest
    after = pl.read_parquet(wd / "results/tables/bpu.parquet")
    assert after.equals(bpu)
    for name in ("bpu.csv", "difficulty.csv", "marginal.csv"):
        assert (wd / "results/tables" / name).read_bytes() == \
            (study[0] / "results/tables" / name).read_bytes(), name


@pytest.mark.heavy
def test_killed_marginal_estimator_job_resumes_to_the_same_table(study, tmp_path):
    """The subword n-gram's estimators (marginal_ngram) SIGKILLed with Snakemake after some
    units: the rerun computes only the rest and the table equals an uninterrupted run's."""
    wd = _copy(study, tmp_path)
    _set_config(wd, "marginal", max_units=12)  # enough units for the kill to land mid-run
    target = "results/marginal/bible/eng/kenlm-subword-o3.spm-unigram-3000.parquet"
    part = wd / "results/marginal/bible/eng/.kenlm-subword-o3.spm-unigram-3000.part.jsonl"

    def lines() -> int:
        return part.read_bytes().count(b"\n") if part.exists() else 0

    child = start_snakemake(wd, target)
    try:
        wait_for(child, lambda: lines() >= 3, "finished unit in the partial file")
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    done = lines()

    assert_ok(snakemake(wd, "--unlock"))
    proc = snakemake(wd, "--rerun-incomplete", target)
    assert_ok(proc)
    log = (wd / "logs/marginal_ngram/bible/eng.spm-unigram-3000.o3.log").read_text()
    computed, total, found = map(int, re.search(
        r"(\d+) of (\d+) runs computed in this attempt, (\d+) found", log).groups())
    assert found == done and computed + found == total
    assert computed >= 1, "the kill did not land mid-run: test inconclusive"
    resumed = pl.read_parquet(wd / target)
    assert resumed.height == total and not part.exists()

    (wd / target).unlink()
    assert_ok(snakemake(wd, "--forcerun", "marginal_ngram", target))
    log = (wd / "logs/marginal_ngram/bible/eng.spm-unigram-3000.o3.log").read_text()
    assert f"{total} of {total} runs computed in this attempt, 0 found" in log
    clean = pl.read_parquet(wd / target)
    # Every column but the cost records: the seconds, and the LM calls and positions of the first
    # unit computed after the kill (its estimators share a cache that the kill emptied).
    cost = {"seconds", "lm_calls", "positions"}
    differ = [c for c in clean.columns
              if c not in cost and not resumed[c].equals(clean[c], null_equal=True)]
    assert differ == []


def _job_pids(session: int, script: str) -> list[int]:
    """Processes of Snakemake's session ``session`` running the workflow script ``script``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            if os.getsid(int(entry.name)) != session:
                continue
        except (OSError, ProcessLookupError):
            continue
        if any(arg.endswith(script.encode()) for arg in cmdline):
            pids.append(int(entry.name))
    return pids


NEURAL = "results/neural/bible/eng/char"
NEURAL_SCORES = "results/scores/bible/eng/transformer.char.parquet"


def _recorded_steps(wd: Path) -> int:
    return json.loads((wd / NEURAL / "model" / "fairppl_training.json").read_text())["steps"]


@pytest.mark.heavy  # a retraining of the Transformer: about 40 s on 2 cores
def test_config_change_then_killed_training_job_never_keeps_the_old_model(study, tmp_path):
    """The Transformers' steps raised (120 -> 160) and the retraining job SIGKILLed alone: the
    rerun retrains it from its 160-step checkpoint and scores the 160-step model; the study's
    120-step model and numbers are not kept."""
    wd = _copy(study, tmp_path)
    assert _recorded_steps(wd) == 120
    _set_config(wd, "neural", steps=160)
    child = start_snakemake(wd, NEURAL_SCORES)
    try:
        wait_for(child, lambda: (wd / NEURAL / "checkpoint.pt").exists(), "checkpoint")
        pids = _job_pids(child.pid, "train_neural.py")
        assert pids, "no train_neural process found"
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        child.wait(timeout=300)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    assert child.returncode != 0
    assert not (wd / NEURAL / "model").exists()  # no model of either setting is left to score

    proc = snakemake(wd, NEURAL_SCORES)
    assert_ok(proc)
    out = proc.stdout + proc.stderr
    assert "Nothing to be done" not in out
    assert _recorded_steps(wd) == 160
    stats = json.loads((wd / NEURAL / "train_stats.json").read_text())
    assert stats["steps"] == 160 and stats["resumed_from"] is not None  # from the checkpoint
    # the scores are the 160-step model's, not the study's 120-step ones
    new = pl.read_parquet(wd / NEURAL_SCORES)
    old = pl.read_parquet(study[0] / NEURAL_SCORES)
    assert new.height == old.height and new["unit_id"].equals(old["unit_id"])
    assert not new["bits"].equals(old["bits"])


@pytest.mark.heavy  # a retraining of the Transformer: about 40 s on 2 cores
def test_interrupted_snakemake_reruns_a_finished_training_job_without_training(study, tmp_path):
    """SIGINT to Snakemake alone while a training job runs: the job finishes, Snakemake does
    not record it; the rerun (--rerun-incomplete) saves the kept finished model again, with
    no training step, bit for bit the same weights."""
    safetensors_torch = pytest.importorskip("safetensors.torch")
    wd = _copy(study, tmp_path)
    _set_config(wd, "neural", steps=160)
    target = f"{NEURAL}/model"
    child = start_snakemake(wd, target)
    try:
        wait_for(child, lambda: (wd / NEURAL / "checkpoint.pt").exists(), "checkpoint")
        os.kill(child.pid, signal.SIGINT)
        child.wait(timeout=300)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    deadline = time.monotonic() + 300
    while _job_pids(child.pid, "train_neural.py"):
        assert time.monotonic() < deadline, "the training job did not end"
        time.sleep(0.1)
    assert _recorded_steps(wd) == 160  # the job finished ...
    proc = snakemake(wd, target)
    assert proc.returncode != 0  # ... but Snakemake did not record it
    assert "incomplete" in (proc.stdout + proc.stderr).lower()
    weights = safetensors_torch.load_file(str(wd / target / "model.safetensors"))

    proc = snakemake(wd, "--rerun-incomplete", target)
    assert_ok(proc)
    stats = json.loads((wd / NEURAL / "train_stats.json").read_text())
    assert stats["steps"] == 160 and stats["resumed_from"] == 160  # no training step
    again = safetensors_torch.load_file(str(wd / target / "model.safetensors"))
    assert again.keys() == weights.keys()
    assert all(bool((again[k] == weights[k]).all()) for k in weights)
