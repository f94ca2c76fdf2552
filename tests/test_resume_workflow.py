"""A `train_neural` job killed mid-training (Snakemake and its job SIGKILLed together, as when a
node or a session dies) resumes from its checkpoint when the workflow is run again, and ends with
the same weights, bit for bit, as a run that was never interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, SNAKEMAKE, VENV_BIN, assert_ok, make_workdir, snakemake

torch = pytest.importorskip("torch")
safetensors_torch = pytest.importorskip("safetensors.torch")

pytestmark = pytest.mark.e2e

TARGET = "results/neural/bible/eng/char/model"
STEPS = 300


def _workdir(path: Path) -> Path:
    wd = make_workdir(path, ROOT / "tests" / "config")
    cfg_path = wd / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text(encoding="utf-8"))
    cfg["neural"].update(steps=STEPS, checkpoint_every=20)
    cfg_path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return wd


def _weights(wd: Path) -> dict:
    return safetensors_torch.load_file(str(wd / TARGET / "model.safetensors"))


def _checkpoint_step(path: Path) -> int:
    return int(torch.load(path, map_location="cpu", weights_only=False)["step"])


def test_killed_training_job_resumes_to_the_same_model(tmp_path, resources_ready):
    killed = _workdir(tmp_path / "killed")
    checkpoint = killed / "results/neural/bible/eng/char/checkpoint.pt"
    cmd = [SNAKEMAKE, "--snakefile", str(ROOT / "Snakefile"), "--directory", str(killed),
           "--cores", "2", TARGET]
    env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    # Its own session, so that one killpg takes Snakemake and the job's Python process together.
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not checkpoint.exists():
            assert child.poll() is None, child.stderr.read().decode()[-4000:]
            assert time.monotonic() < deadline, "no checkpoint within 300 s"
            time.sleep(0.02)
        time.sleep(0.3)  # a few more steps: the kill lands anywhere, possibly mid-write
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    assert child.returncode == -signal.SIGKILL
    killed_at = _checkpoint_step(checkpoint)
    assert 1 <= killed_at < STEPS, "training finished before the kill: test inconclusive"
    assert not (killed / TARGET / "model.safetensors").exists()

    # What a user does after a crash: release Snakemake's lock, run again.
    assert_ok(snakemake(killed, "--unlock"))
    proc = snakemake(killed, "--rerun-incomplete", TARGET)
    assert_ok(proc)
    stats = json.loads((killed / "results/neural/bible/eng/char/train_stats.json").read_text())
    assert stats["finished"] and stats["steps"] == STEPS
    assert stats["resumed_from"] is not None and stats["resumed_from"] >= killed_at
    assert not checkpoint.exists()  # deleted once the final model is saved

    clean = _workdir(tmp_path / "clean")
    assert_ok(snakemake(clean, TARGET))
    clean_stats = json.loads((clean / "results/neural/bible/eng/char/train_stats.json").read_text())
    assert clean_stats["resumed_from"] is None
    assert clean_stats["final_loss"] == stats["final_loss"]
    a, b = _weights(killed), _weights(clean)
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), name
