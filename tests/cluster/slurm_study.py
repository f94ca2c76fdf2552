"""Snakemake runs through the tests' SLURM cluster, in the background (the `slurm_runs` fixture
of conftest.py) while the other tests run: a job over its memory (:func:`config_for_out_of_memory`,
from the session's start) and the test config, in one of two modes:

* ``rerun`` (`make test`): once the local run of the test config is finished, a copy of it
  with one output of every rule family deleted (:data:`RERUN_OUTPUTS`, all of English, the one
  language with every model family: a tokenizer, an n-gram model and the scores of each n-gram
  kind, the character Transformer trained on the Bible and everything it scores and bets,
  the pretrained model's scores, each marginal estimator's table) is brought up to date
  through SLURM: those jobs, and the tables fed by them, run again (32 Snakemake jobs, the
  tables as local rules); each deleted file keeps its digest record, so the workflow's own
  check of deleted intermediates (common.smk, `integrity_rebuild`) is what asks for it again;
* ``full`` (`make test-heavy`): the whole config from scratch, from the session's start (146
  Snakemake jobs as 43 SLURM jobs; on 2 cores beside the rest of the suite it does not fit in
  `make test`).

Each SLURM job starts Snakemake twice (the job, then `srun` for each of its rules), about 2 s of
CPU each here: that, not the work, is most of a SLURM run's cost on 2 cores. The run and the
cluster's jobs run at nice 19 (their autogroups too), on the CPU time the other tests leave idle.
One fault is injected on the way: the English character Transformer's training job is cancelled
with `scancel` as soon as it has written its first checkpoint, and the workflow profile's retry
has to resume it (test_slurm.py checks the outcome).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

from conftest import checkpoint_step
from slurm_cluster import popen_niced

ROOT = Path(__file__).resolve().parents[2]
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
#: Niceness of the run's Snakemake (and of the tests' slurmd, whose jobs inherit it).
NICE = 19


def slurm_command(cluster, workdir: Path, args=(), timeout: int = 900):
    """Snakemake on the repository's Snakefile in ``workdir`` through ``cluster``, with the
    workflow profile and the tests' site profile (its `cores`, `max-threads` and status timing
    included), bounded by `timeout -k` (a stuck Snakemake ignores SIGTERM): the command and its
    environment."""
    cmd = ["timeout", "-k", "20", str(timeout), str(VENV_BIN / "snakemake"),
           "--snakefile", str(ROOT / "Snakefile"), "--directory", str(workdir),
           "--workflow-profile", str(PROFILE), "--profile", str(SITE_PROFILE), *args]
    env = dict(cluster.env, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return cmd, env


#: The background run's modes (environment variable FAIRPPL_SLURM_STUDY).
MODES = ("rerun", "full")
#: What the ``rerun`` mode deletes from the copy of the local run and rebuilds through SLURM, as
#: globs under results/ of one language's files: one job or more of each rule family of
#: test_slurm.RULE_FAMILIES. A model's files go with what it scores (a table whose inputs are all
#: there is not rebuilt), so that the chain of jobs behind each family runs.
RERUN_OUTPUTS = (
    "tokenizers/bible/eng/*spm-bpe-3000.*",  # train_tokenizer
    "ngram/bible-lemmas/eng/*char.o5.*",  # train_ngram
    "scores/bible-lemmas/eng/*kenlm-char-o5.char.*",  # score_char_ngram
    "scores/bible/eng/*kenlm-word-o3.word-v500.*",  # score_word_ngram
    "scores/bible/eng/*kenlm-subword-o3.spm-unigram-3000.*",  # score_subword_ngram
    "neural/bible/eng/char",  # train_neural (the job cancelled mid-run, CANCELLED)
    "scores/*/eng/*transformer.char.*",  # score_neural
    "shannon/bible/eng/*transformer.char.*",  # shannon_bets
    "scores/bible/eng/*tiny-random.native.*",  # score_pretrained
    "marginal/bible/eng/*kenlm-subword-o3.spm-unigram-3000.*",  # marginal_ngram, _lengths
    "marginal_analyses/bible/eng/*kenlm-subword-o3.spm-unigram-3000.*",  # samples needed
    "marginal/bible/eng/*tiny-random.native.*",  # marginal_lm
    "marginal/bible/eng/*caching.transformer.spm-unigram-3000.*",  # marginal_caching
)


def copy_without_outputs(local_wd: Path, dest: Path, patterns=RERUN_OUTPUTS) -> Path:
    """A copy of the finished study ``local_wd`` (symlinks kept) without the files and folders
    under results/ that ``patterns`` match, and without their hidden companions
    (`.<name>.part.jsonl` and the like), but with their digest records (`.<name>.sha256`): at
    start-up the workflow finds them deleted and rebuilds them, and the tables fed by them after
    them. A pattern that matches nothing raises (the test config changed under it)."""
    shutil.copytree(local_wd, dest, symlinks=True)
    shutil.rmtree(dest / ".snakemake" / "log", ignore_errors=True)
    results = dest / "results"
    for pattern in patterns:
        matched = sorted(results.glob(pattern))
        if not matched:
            raise FileNotFoundError(f"{pattern!r} matches nothing under {results}")
        for path in matched:
            for item in (path, *path.parent.glob(f".{path.name}*")):
                if item.name.endswith(".sha256"):
                    continue
                if item.is_dir() and not item.is_symlink():
                    shutil.rmtree(item)
                elif item.exists() or item.is_symlink():
                    item.unlink()
    return dest


#: First-attempt memory (MB) of the out-of-memory run's job: below what a Snakemake job process
#: alone needs, so the job ends OUT_OF_MEMORY and comes back with OOM_FIRST_MB * OOM_GROWTH
#: (config `resources`, read by the rule's attempt-scaled `mem_mb`).
OOM_FIRST_MB, OOM_GROWTH = 150, 16
#: What the out-of-memory run builds (rule prepare_corpus; nothing else is needed for it).
OOM_TARGET = "results/corpus/udhr/units.parquet"


def config_for_out_of_memory(wd: Path) -> Path:
    """The working folder ``wd`` (of the test config, nothing built) with prepare_corpus's first
    attempt asking for :data:`OOM_FIRST_MB` MB, OOM_GROWTH times more at each retry."""
    cfg_path = wd / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text(encoding="utf-8"))
    cfg["resources"] = {"memory_growth": OOM_GROWTH, "memory_mb": {"prepare_corpus": OOM_FIRST_MB}}
    cfg_path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return wd


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


class BackgroundStudy:
    """Snakemake on ``targets`` (default: rule `all`) of ``wd`` through ``cluster`` in a child
    process, with a watcher thread that cancels the :data:`CANCELLED` training job once where
    ``cancel``. :meth:`result` waits for the end."""

    def __init__(self, cluster, wd: Path, mode: str, targets: tuple[str, ...] = (),
                 cancel: bool = True, timeout: int = 1500):
        self.cluster, self.wd, self.mode, self.timeout = cluster, wd, mode, timeout
        self.targets, self.cancel = targets, cancel
        self.log_path = wd.parent / "snakemake.log"
        self.cancelled: dict = {}
        self.failure: str | None = None
        self.seconds: float | None = None
        self.child: subprocess.Popen | None = None
        self._watcher: threading.Thread | None = None

    def start(self) -> "BackgroundStudy":
        import torch  # noqa: F401  imported now, not while a job is frozen

        cmd, env = slurm_command(self.cluster, self.wd, self.targets, timeout=self.timeout)
        self._t0 = time.monotonic()
        with open(self.log_path, "w") as out:
            # at the lowest priority, as the cluster's jobs (Cluster(nice=19)): the run takes the
            # CPU time the rest of the suite leaves idle instead of slowing it down; in its own
            # session: stop() ends `timeout`, Snakemake and its children together
            self.child = popen_niced(cmd, NICE, stdout=out, stderr=subprocess.STDOUT, env=env)
        self.cluster.record_client(self.child.pid)
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()
        return self

    def _watch(self) -> None:
        if self.cancel:
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
        seen, text = 0, ""
        with open(self.log_path, encoding="utf-8", errors="replace") as log:
            while self.child.poll() is None:
                # what the log gained since the last look, after the last len(needle) - 1
                # characters of before: a needle straddling two reads is counted once
                text += log.read()
                seen += text.count(needle)
                text = text[-(len(needle) - 1):]
                if seen >= 2:
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


# -- the site profile's runs (test_slurm.py, fixture `slurm_site`) ------------------------------

#: A throwaway workflow for the site profile's checks, with the workflow's own runtime and GPU
#: logic (fairppl.config.resources; the checks of the planned run, fairppl.config.cluster): `overtime` sleeps past its first attempt's two minutes and
#: ends TIMEOUT, then finishes at once; `probe` records, from inside its SLURM job, the job-step
#: Snakemake's command line (the site profile's settings as the job got them), the network the
#: job sees and what a connection out of the node gets; `gpu_{setting}` asks for the GPUs of
#: config resources.gpu.
SITE_SNAKEFILE = """\
import json
import os
import socket

from fairppl.config.cluster import after_planning, check_planned_run
from fairppl.config.overrides import CONFIG_SCHEMA, read_schema, type_overrides
from fairppl.config.resources import gpus_per_job, job_runtime

type_overrides(config, workflow.config_settings.config, read_schema(CONFIG_SCHEMA))
RESOURCES = config.get("resources", {})

if workflow.is_main_process:
    after_planning(workflow, lambda: check_planned_run(workflow, 24 * 60))


rule overtime:
    output:
        "overtime.txt",
    resources:
        runtime=lambda wildcards, attempt: job_runtime(RESOURCES, 2, attempt),
    shell:
        "if [ -e overtime.started ]; then echo $SLURM_JOB_ID > {output}; "
        "else touch overtime.started; sleep 600; fi"


def connect(host, port):
    try:
        socket.create_connection((host, port), timeout=10).close()
        return "connected"
    except OSError as err:
        return f"{type(err).__name__}: {err}"


rule probe:
    output:
        "probe.json",
    resources:
    run:
        with open("/proc/self/cmdline", "rb") as f:
            cmdline = f.read().decode().split("\\0")
        facts = {
            "cmdline": cmdline,
            "interfaces": sorted(name for _, name in socket.if_nameindex()),
            "by_address": connect("1.1.1.1", 443),
            "by_name": connect("pypi.org", 443),
            "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE"),
        }
        with open(output[0], "w") as f:
            json.dump(facts, f)


rule gpu:
    output:
        "gpu_{setting}.txt",
    resources:
        gpu=gpus_per_job(RESOURCES),
    shell:
        "echo $SLURM_JOB_ID > {output}"
"""

#: The site profile's runs, in order: name -> (changes to tests/slurm/profile.yaml, targets).
#: `site` sets `jobs: 1` and `latency-wait: 7` and switches the GPUs on; `no_gpu` off; the last
#: two name a partition and an account the cluster does not have.
SITE_RUNS = {
    "site": ({"jobs": 1, "latency-wait": 7, "config": {"resources": {"gpu": 1}}},
             ("overtime.txt", "probe.json", "gpu_on.txt")),
    "no_gpu": ({"config": {"resources": {"gpu": 0}}}, ("gpu_off.txt",)),
    "wrong_partition": ({"default-resources": {"slurm_partition": "nosuch"}},
                        ("gpu_partition.txt",)),
    "wrong_account": ({"default-resources": {"slurm_account": "nosuch"}},
                      ("gpu_account.txt",)),
}


def site_profile(dest: Path, changes: dict) -> Path:
    """A copy of the tests' site profile with ``changes`` (a block's keys merged into it; None
    removes a key)."""
    profile = yaml.safe_load((SITE_PROFILE / "profile.yaml").read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is None:
            profile.pop(key, None)
        elif isinstance(value, dict):
            merged = dict(profile.get(key) or {})
            for inner, inner_value in value.items():
                if isinstance(inner_value, dict):
                    merged[inner] = {**(merged.get(inner) or {}), **inner_value}
                else:
                    merged[inner] = inner_value
            profile[key] = merged
        else:
            profile[key] = value
    dest.mkdir(parents=True)
    (dest / "profile.yaml").write_text(yaml.safe_dump(profile), encoding="utf-8")
    return dest


class SiteRuns:
    """The :data:`SITE_RUNS` one after another in a background thread, each Snakemake on
    :data:`SITE_SNAKEFILE` in its own folder under ``base`` with the workflow profile and its
    site profile; :meth:`result` waits for one and returns (exit status, log, folder)."""

    def __init__(self, cluster, base: Path, timeout: int = 900):
        self.cluster, self.base, self.timeout = cluster, base, timeout
        self.done: dict[str, tuple[int, str, Path]] = {}
        self.seconds: dict[str, float] = {}
        self._events = {name: threading.Event() for name in SITE_RUNS}
        self._child: subprocess.Popen | None = None
        self._stopped = False

    def start(self) -> "SiteRuns":
        self._thread = threading.Thread(target=self._run_all, daemon=True)
        self._thread.start()
        return self

    def _run_all(self) -> None:
        for name, (changes, targets) in SITE_RUNS.items():
            wd = self.base / name
            wd.mkdir(parents=True)
            (wd / "Snakefile").write_text(SITE_SNAKEFILE, encoding="utf-8")
            profile = site_profile(self.base / f"{name}-profile", changes)
            cmd = ["nice", "-n", str(NICE), "timeout", "-k", "20", str(self.timeout),
                   str(VENV_BIN / "snakemake"), "--snakefile", str(wd / "Snakefile"),
                   "--directory", str(wd), "--workflow-profile", str(PROFILE),
                   "--profile", str(profile), *targets]
            env = dict(self.cluster.env,
                       PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
            log = self.base / f"{name}.log"
            t0 = time.monotonic()
            with open(log, "w") as out:
                if self._stopped:
                    return
                self._child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                               env=env, start_new_session=True)
                self.cluster.record_client(self._child.pid)
                self._child.wait()
            self.seconds[name] = time.monotonic() - t0
            self.done[name] = (self._child.returncode, log.read_text(), wd)
            self._events[name].set()

    def result(self, name: str) -> tuple[int, str, Path]:
        """Wait for run ``name``: its exit status, its log and its folder."""
        assert self._events[name].wait(self.timeout * len(SITE_RUNS) + 60), f"{name} never ended"
        return self.done[name]

    def stop(self) -> None:
        self._stopped = True
        if self._child is not None and self._child.poll() is None:
            os.killpg(self._child.pid, signal.SIGKILL)
            self._child.wait()
