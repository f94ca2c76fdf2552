"""The test config through the tests' SLURM cluster, run in the background from the start of the
test session (the `slurm_study_started` fixture of conftest.py) while the other tests run.

Most of a SLURM run is waiting (submission, status checks every two seconds, each job's Snakemake
starting up) and most of the other tests keep one of the two cores busy, so the two overlap
instead of adding up. One fault is injected on the way: the English character Transformer's
training job is cancelled with `scancel` as soon as it has written its first checkpoint, and the
workflow profile's retry has to resume it (test_slurm.py checks the outcome).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
PROFILE = ROOT / "workflow" / "profiles" / "slurm"
SITE_PROFILE = ROOT / "tests" / "slurm"

#: The training job the run cancels mid-run: its output folder and its SLURM job comment (the
#: plugin's `rule_<rule>_wildcards_<wildcards>`).
CANCELLED = "results/neural/bible/eng/char"
CANCELLED_WILDCARDS = "bible_eng_char"
CANCELLED_COMMENT = f"rule_train_neural_wildcards_{CANCELLED_WILDCARDS}"
#: How long the cancelled job may take to come back as a new SLURM job (the plugin's status checks
#: back off by 10 s per check that finds nothing finished).
RESUBMISSION_SECONDS = 240


def slurm_command(cluster, workdir: Path, args=(), timeout: int = 900):
    """Snakemake on the repository's Snakefile in ``workdir`` through ``cluster``, with the
    workflow profile and the tests' site profile, bounded by `timeout -k` (a stuck Snakemake
    ignores SIGTERM): the command and its environment."""
    cmd = ["timeout", "-k", "20", str(timeout), str(VENV_BIN / "snakemake"),
           "--snakefile", str(ROOT / "Snakefile"), "--directory", str(workdir),
           "--workflow-profile", str(PROFILE), "--profile", str(SITE_PROFILE),
           "--slurm-init-seconds-before-status-checks", "2", "--cores", "2", *args]
    env = dict(cluster.env, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return cmd, env


def running_job(cluster, comment: str) -> str | None:
    """SLURM id of the running job with this comment (squeue answers from slurmctld's memory,
    faster than sacct), or None."""
    out = subprocess.run(["squeue", "-h", "-t", "RUNNING", "-o", "%i|%k"], env=cluster.env,
                         capture_output=True, text=True).stdout
    ids = [line.split("|", 1)[0] for line in out.splitlines() if line.endswith(f"|{comment}")]
    return ids[0] if ids else None


def job_pids(cluster, job: str) -> list[int]:
    """The processes of SLURM job ``job`` on this node (`scontrol listpids`), none of another
    job's (two training jobs may run side by side in the same folder)."""
    out = subprocess.run(["scontrol", "listpids", job], env=cluster.env, capture_output=True,
                         text=True).stdout
    return [int(line.split()[0]) for line in out.splitlines()[1:]
            if line.split() and line.split()[0].isdigit()]


def checkpoint_step(path: Path) -> int | None:
    import torch

    try:
        return int(torch.load(path, map_location="cpu", weights_only=False)["step"])
    except Exception:  # gone (the job finished) or caught mid-replace
        return None


class BackgroundStudy:
    """Snakemake on ``wd`` through ``cluster`` in a child process, with a watcher thread that
    cancels the :data:`CANCELLED` training job once. :meth:`result` waits for the end."""

    def __init__(self, cluster, wd: Path, timeout: int = 1500):
        self.cluster, self.wd, self.timeout = cluster, wd, timeout
        self.log_path = wd.parent / "snakemake.log"
        self.cancelled: dict = {}
        self.failure: str | None = None
        self.seconds: float | None = None
        self.child: subprocess.Popen | None = None
        self._watcher: threading.Thread | None = None

    def start(self) -> "BackgroundStudy":
        import torch  # noqa: F401  imported now, not while a job is frozen

        cmd, env = slurm_command(self.cluster, self.wd, timeout=self.timeout)
        self._t0 = time.monotonic()
        with open(self.log_path, "w") as out:
            # its own session: stop() ends `timeout`, Snakemake and its children together
            self.child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                                          start_new_session=True)
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()
        return self

    def _watch(self) -> None:
        self._cancel_once()
        if self.cancelled:
            self._expect_resubmission()
        self.child.wait()
        self.seconds = time.monotonic() - self._t0

    def _expect_resubmission(self, seconds: float = RESUBMISSION_SECONDS) -> None:
        """Stop the run when the cancelled job is not resubmitted in time, rather than wait for
        the whole run's timeout: with sacct as its status command, plugin 2.8.0 takes the
        cancelled job for a running one and waits forever."""
        deadline = time.monotonic() + seconds
        needle = f"/rule_train_neural/{CANCELLED_WILDCARDS}/"
        while self.child.poll() is None:
            if self.log_path.read_text().count(needle) >= 2:
                return
            if time.monotonic() > deadline:
                self.failure = (f"the cancelled SLURM job {self.cancelled['job']} was not "
                                f"resubmitted within {seconds:.0f} s: is its state read as "
                                f"still running?")
                os.killpg(self.child.pid, signal.SIGKILL)
                return
            time.sleep(1)

    def _cancel_once(self) -> None:
        checkpoint = self.wd / CANCELLED / "checkpoint.pt"
        while self.child.poll() is None:
            if not checkpoint.exists():
                time.sleep(0.01)
                continue
            # The tiny model trains its 120 steps in about a second: freeze the job at once
            # (SIGSTOP to its processes) so that the cancel lands mid-run; `scancel` then ends
            # it as on any cluster (SIGCONT, SIGTERM, then SIGKILL).
            job = running_job(self.cluster, CANCELLED_COMMENT)
            if job is None:  # the job ended between the two looks: nothing to cancel
                return
            frozen = job_pids(self.cluster, job)
            for pid in frozen:
                try:
                    os.kill(pid, signal.SIGSTOP)
                except ProcessLookupError:
                    pass
            self.cancelled = {"job": job, "frozen": len(frozen),
                              "step": checkpoint_step(checkpoint)}
            subprocess.run(["scancel", job], env=self.cluster.env, check=True)
            return

    def result(self) -> tuple[int, str]:
        """Wait for the run's end: its exit status and its log."""
        self.child.wait(timeout=self.timeout + 60)
        self._watcher.join()
        return self.child.returncode, self.log_path.read_text()

    def stop(self) -> None:
        if self.child is not None and self.child.poll() is None:
            os.killpg(self.child.pid, signal.SIGKILL)
            self.child.wait()
