"""A `train_neural` job killed mid-training (Snakemake and its job SIGKILLed together, as when a
node or a session dies) resumes from its checkpoint when the workflow is run again, and ends with
the same weights, bit for bit, as a run that was never interrupted."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest
import yaml

from conftest import assert_ok, checkpoint_step, snakemake, start_snakemake, wait_for

torch = pytest.importorskip("torch")
safetensors_torch = pytest.importorskip("safetensors.torch")

pytestmark = pytest.mark.e2e

TARGET = "results/neural/bible/eng/char/model"
FOLDER = "results/neural/bible/eng/char"


def _retrain_copy(study, path: Path) -> Path:
    """A copy of the session's finished test study whose English character Transformer is gone,
    so that only its training job runs (120 steps, a checkpoint every 10)."""
    source, _ = study
    shutil.copytree(source, path, symlinks=True)
    folder = path / FOLDER
    for name in ("model", "train_stats.json", "train_log.tsv", "checkpoint.pt", "final.pt"):
        target = folder / name
        shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
    return path


def _weights(wd: Path) -> dict:
    return safetensors_torch.load_file(str(wd / TARGET / "model.safetensors"))


# Heavy (make test-heavy): the checkpoint's resume to the same weights is tested on the library
# in tests/unit/test_neural.py (SIGKILL mid-training), and a cancelled training job of the SLURM
# run resumes in the workflow (tests/cluster/test_slurm.py); this is the local workflow's own
# (~23 s).
@pytest.mark.heavy
def test_killed_training_job_resumes_to_the_same_model(tmp_path, study):
    killed = _retrain_copy(study, tmp_path / "killed")
    checkpoint = killed / FOLDER / "checkpoint.pt"
    steps = yaml.safe_load((killed / "config/config.yaml").read_text())["neural"]["steps"]
    child = start_snakemake(killed, TARGET)
    try:
        # the tiny model trains its 120 steps in about a second: kill at the first checkpoint
        wait_for(child, checkpoint.exists, "checkpoint", poll=0.005)
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    assert child.returncode == -signal.SIGKILL
    killed_at = checkpoint_step(checkpoint)
    assert killed_at is not None and 1 <= killed_at < steps, "training finished before the kill: test inconclusive"
    assert not (killed / TARGET / "model.safetensors").exists()

    # What a user does after a crash: release Snakemake's lock, run again.
    assert_ok(snakemake(killed, "--unlock"))
    proc = snakemake(killed, "--rerun-incomplete", TARGET)
    assert_ok(proc)
    stats = json.loads((killed / FOLDER / "train_stats.json").read_text())
    assert stats["finished"] and stats["steps"] == steps
    assert stats["resumed_from"] is not None and stats["resumed_from"] >= killed_at
    assert not checkpoint.exists()  # deleted once the final model is saved

    # the study's own model, trained without interruption
    clean, _ = study
    clean_stats = json.loads((clean / FOLDER / "train_stats.json").read_text())
    assert clean_stats["resumed_from"] is None
    assert clean_stats["final_loss"] == stats["final_loss"]
    a, b = _weights(killed), _weights(clean)
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), name
