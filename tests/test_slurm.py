"""The study through a real SLURM cluster (slurm-wlm, munge, slurmdbd and MariaDB started by
tests/slurm_cluster.py): the cluster accounts jobs and enforces memory; a job over its memory ends
OUT_OF_MEMORY and comes back as a new SLURM job asking for more. Marked `heavy` (`make
test-heavy`, beyond the 20 minutes of `make test`): the test config under the shipped workflow
profile gives the local run's tables, every job went through SLURM (its job id in Snakemake's log
and in `sacct`), and a training job cancelled with `scancel` mid-run resumes from its checkpoint.

Skipped, with the reason in pytest's summary, where the machine cannot run a cluster (not root,
no apt-get, no cgroup v1 memory controller, a SLURM or MariaDB already running)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import polars as pl
import pytest
import yaml

import slurm_cluster
from conftest import ROOT, SNAKEMAKE, VENV_BIN, make_workdir, snakemake
from conftest import assert_ok as assert_local

PROFILE = ROOT / "workflow" / "profiles" / "slurm"
SITE_PROFILE = ROOT / "tests" / "slurm"
SUBMITTED = re.compile(r"Job (\S+) has been submitted with SLURM jobid (\d+)")


@pytest.fixture(scope="session")
def cluster():
    why = slurm_cluster.unavailable()
    if why:
        pytest.skip(f"no SLURM cluster here: {why}")
    # the daemons run as munge and mysql users: the folder must be traversable (pytest's is not)
    root = Path(tempfile.mkdtemp(prefix="fairppl-slurm-"))
    root.chmod(0o755)
    with open(root / "install.log", "ab") as log:
        slurm_cluster.install_packages(log)
    started = slurm_cluster.Cluster(root / "cluster").start()
    try:
        yield started
    finally:
        started.stop()
        shutil.rmtree(root, ignore_errors=True)


def run_slurm(cluster, workdir: Path, *args: str, timeout: int = 900):
    """Snakemake on the repository's Snakefile in ``workdir`` through the cluster, with the
    workflow profile and the tests' site profile; bounded by `timeout -k` (a stuck Snakemake
    ignores SIGTERM)."""
    cmd = ["timeout", "-k", "20", str(timeout), SNAKEMAKE, "--snakefile", str(ROOT / "Snakefile"),
           "--directory", str(workdir), "--workflow-profile", str(PROFILE),
           "--profile", str(SITE_PROFILE), "--slurm-init-seconds-before-status-checks", "2",
           "--cores", "2", *args]
    env = dict(cluster.env, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout + 60)


def slurm_ids(proc) -> dict[str, str]:
    """SLURM job id of every Snakemake job the run submitted (Snakemake job id -> SLURM id)."""
    return dict(SUBMITTED.findall(proc.stdout + proc.stderr))


def assert_ok(proc) -> None:
    assert proc.returncode == 0, (f"snakemake through SLURM failed ({proc.returncode}):\n"
                                  f"{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")


def test_cluster_accounts_a_job_and_enforces_memory(cluster, tmp_path):
    """The cluster itself: sbatch runs, sacct accounts, and a job over its memory ends
    OUT_OF_MEMORY (what the retry test relies on)."""
    env = cluster.env
    def sbatch(mem, code):
        out = subprocess.run(["sbatch", "--parsable", f"--mem={mem}", "-D", str(tmp_path),
                              "--wrap", f"python3 -c '{code}'"], env=env, capture_output=True,
                             text=True, check=True).stdout
        return out.strip().split(";")[0]
    ok = sbatch("200M", "print(6 * 7)")
    big = sbatch("100M", "x = bytearray(400 * 2**20); import time; time.sleep(2)")
    states = {}
    for _ in range(60):
        states = {r["JobID"]: r["State"] for r in cluster.sacct("JobID", "State")}
        if states.get(ok) == "COMPLETED" and states.get(big, "").startswith("OUT_OF_ME"):
            break
        time.sleep(1)
    assert states.get(ok) == "COMPLETED", states
    assert states.get(big) == "OUT_OF_MEMORY", states
    assert (tmp_path / f"slurm-{ok}.out").read_text().strip() == "42"


#: First-attempt memory (MB) of the out-of-memory test's job: below what a Snakemake job process
#: alone needs, so the job ends OUT_OF_MEMORY and comes back with OOM_FIRST_MB * OOM_GROWTH
#: (config `resources`, read by the rule's attempt-scaled `mem_mb`).
OOM_FIRST_MB, OOM_GROWTH = 150, 16


@pytest.fixture(scope="module")
def slurm_study(cluster, study):
    """The test config run through the cluster (the same sheet and tiny model as the local
    `study`)."""
    local_wd, _ = study
    wd = make_workdir(Path(tempfile.mkdtemp(prefix="slurm-study-")) / "wd", ROOT / "tests" / "config")
    shutil.copy(local_wd / "config" / "models.tsv", wd / "config" / "models.tsv")
    t0 = time.monotonic()
    proc = run_slurm(cluster, wd)
    seconds = time.monotonic() - t0
    assert_ok(proc)
    print(f"test config through SLURM: {seconds:.0f} s, {len(slurm_ids(proc))} SLURM jobs")
    yield wd, proc, local_wd
    shutil.rmtree(wd.parent, ignore_errors=True)


def _tables(wd: Path) -> dict[str, bytes]:
    folder = wd / "results" / "tables"
    # the hidden digest records (`.<name>.sha256`) follow their tables' bytes
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.name.startswith(".")}


#: Wall-clock columns: measurements of the run itself, the only columns two runs may differ in.
TIMING_COLUMNS = {"seconds", "seconds_per_truncation"}


def _columns(path: Path) -> set[str]:
    if path.suffix == ".parquet":
        return set(pl.read_parquet_schema(path))
    if path.suffix == ".csv":
        return set(pl.read_csv(path, n_rows=1).columns)
    return set()


def _without_timing(path: Path) -> pl.DataFrame:
    frame = pl.read_parquet(path) if path.suffix == ".parquet" else pl.read_csv(path)
    return frame.drop([c for c in frame.columns if c in TIMING_COLUMNS])


@pytest.mark.heavy
def test_every_table_equals_the_local_run(slurm_study):
    """Every file of results/tables is byte-identical to the local run's, except the tables with
    a wall-clock column, which are identical without it (and differ in nothing else)."""
    wd, _, local_wd = slurm_study
    ours, local = _tables(wd), _tables(local_wd)
    assert ours.keys() == local.keys()
    differ = sorted(name for name in ours if ours[name] != local[name])
    timed = [name for name in differ
             if TIMING_COLUMNS & _columns(wd / "results" / "tables" / name)]
    assert differ == timed, f"tables that differ from the local run: {sorted(set(differ) - set(timed))}"
    for name in timed:
        a = _without_timing(wd / "results" / "tables" / name)
        b = _without_timing(local_wd / "results" / "tables" / name)
        assert a.equals(b), name


def _declared_local_rules() -> set[str]:
    """Rules the workflow marks `localrule: True`, plus `all` (Snakemake runs a target rule
    without a body locally)."""
    found = {"all"}
    for path in (ROOT / "workflow" / "rules").glob("*.smk"):
        rule = None
        for line in path.read_text(encoding="utf-8").splitlines():
            m = re.match(r"^(?:local)?rule (\w+):", line)
            if m:
                rule = m.group(1)
            if line.strip() == "localrule: True" and rule:
                found.add(rule)
    return found


def _rules_of_the_run(log: str) -> tuple[set, set, set]:
    """Rules of the jobs Snakemake ran: local ones, jobs submitted alone, members of group jobs
    (printed indented under `Group job ...`)."""
    return (set(re.findall(r"^localrule (\w+):", log, flags=re.M)),
            set(re.findall(r"^rule (\w+):", log, flags=re.M)),
            set(re.findall(r"^ {4}rule (\w+):", log, flags=re.M)))


@pytest.mark.heavy
def test_every_job_went_through_slurm(slurm_study, cluster):
    """Every job that is not a local rule has a SLURM job id in Snakemake's log, and `sacct`
    knows every one of those ids with a final state."""
    _, proc, _ = slurm_study
    log = proc.stdout + proc.stderr
    ids = slurm_ids(proc)
    assert ids, "no job was submitted to SLURM"
    local, alone, grouped = _rules_of_the_run(log)
    assert local <= _declared_local_rules(), local - _declared_local_rules()
    paths = re.findall(r"submitted with SLURM jobid \d+ \(log: \S*/(rule|group)_([\w-]+?)/", log)
    submitted_alone = {name for kind, name in paths if kind == "rule"}
    group_names = " ".join(name for kind, name in paths if kind == "group")
    assert alone <= submitted_alone, f"ran but not submitted: {alone - submitted_alone}"
    assert grouped and all(rule in group_names for rule in grouped), (grouped, group_names)
    records = {r["JobID"]: r for r in cluster.sacct("JobID", "State", "Comment")}
    missing = [j for j in ids.values() if j not in records]
    assert not missing, f"SLURM job ids in the log that sacct does not know: {missing}"
    states = {records[j]["State"] for j in ids.values()}
    assert states == {"COMPLETED"}, states
    # the plugin's comment names each job's rule (what its efficiency report reads)
    assert all(records[j]["Comment"].startswith("rule_") for j in ids.values())


def _submissions(proc) -> list[tuple[str, str]]:
    return _submissions_of(proc.stdout + proc.stderr)


def _submissions_of(log: str) -> list[tuple[str, str]]:
    """(rule, SLURM job id) of every submission, in order, from the plugin's log lines
    (`... submitted with SLURM jobid N (log: .../rule_<name>/...)`)."""
    found = []
    for line in log.splitlines():
        m = re.search(r"submitted with SLURM jobid (\d+).*?/rule_(\w+?)/", line)
        if m:
            found.append((m.group(2), m.group(1)))
    return found


def test_out_of_memory_job_comes_back_as_a_new_job_asking_for_more(cluster, study, tmp_path):
    """A job over its memory ends OUT_OF_MEMORY and the profile's retry submits a *new* SLURM job
    asking for memory_growth times more (the rule's attempt-scaled `mem_mb`), which completes;
    `sacct` tells it from a retry inside the same allocation (one job id, one request)."""
    local_wd, _ = study
    wd = tmp_path / "wd"
    shutil.copytree(local_wd, wd, symlinks=True)
    target = wd / "results" / "corpus" / "udhr" / "units.parquet"
    expected = target.read_bytes()
    for path in (target, target.with_name("dropped.tsv")):
        path.unlink()
    cfg_path = wd / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text(encoding="utf-8"))
    cfg["resources"] = {"memory_growth": OOM_GROWTH, "memory_mb": {"prepare_corpus": OOM_FIRST_MB}}
    cfg_path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    proc = run_slurm(cluster, wd, str(target.relative_to(wd)))
    assert_ok(proc)
    assert target.read_bytes() == expected  # the rebuilt units, byte for byte
    records = {r["JobID"]: r for r in cluster.sacct("JobID", "State", "ReqMem")}
    ids = [j for rule, j in _submissions(proc) if rule == "prepare_corpus"]
    got = [(records[j]["State"], records[j]["ReqMem"]) for j in ids]
    assert got == [("OUT_OF_MEMORY", f"{OOM_FIRST_MB}M"),
                   ("COMPLETED", f"{OOM_FIRST_MB * OOM_GROWTH}M")], got
    assert int(ids[0]) < int(ids[1])


TARGET = "results/neural/bible/eng/char/model"


def _retrain_copy(source: Path, dest: Path, steps: int) -> Path:
    """A copy of a finished study whose English character Transformer is gone and set to
    ``steps`` steps (checkpoints every 20), so that only its training job runs."""
    shutil.copytree(source, dest, symlinks=True)
    folder = dest / TARGET / ".."
    for name in ("model", "train_stats.json", "train_log.tsv", "checkpoint.pt", "final.pt"):
        path = (folder / name).resolve()
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    cfg_path = dest / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text(encoding="utf-8"))
    cfg["neural"].update(steps=steps, checkpoint_every=20)
    cfg_path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return dest


@pytest.mark.heavy
def test_cancelled_training_job_resumes_from_its_checkpoint(study, cluster, tmp_path):
    """`scancel` of a train_neural job mid-training: the profile's retry submits a new SLURM job,
    which resumes from the checkpoint and ends with the uninterrupted run's weights."""
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file

    source, _ = study
    steps = 400
    wd = _retrain_copy(source, tmp_path / "wd", steps)
    checkpoint = wd / "results/neural/bible/eng/char/checkpoint.pt"
    log_path = tmp_path / "snakemake.log"
    cmd = ["timeout", "-k", "20", "600", SNAKEMAKE, "--snakefile", str(ROOT / "Snakefile"),
           "--directory", str(wd), "--workflow-profile", str(PROFILE), "--profile",
           str(SITE_PROFILE), "--slurm-init-seconds-before-status-checks", "2", "--cores", "2",
           TARGET]
    env = dict(cluster.env, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    with open(log_path, "w") as out:
        child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + 300
            while not checkpoint.exists():
                assert child.poll() is None, log_path.read_text()[-4000:]
                assert time.monotonic() < deadline, "no checkpoint within 300 s"
                time.sleep(0.05)
            running = [r["JobID"] for r in cluster.sacct("JobID", "State")
                       if r["State"] == "RUNNING" and "." not in r["JobID"]]
            assert len(running) == 1, running
            subprocess.run(["scancel", running[0]], env=env, check=True)
            killed_at = int(torch.load(checkpoint, map_location="cpu",
                                       weights_only=False)["step"])
            assert child.wait(timeout=600) == 0, log_path.read_text()[-4000:]
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    log = log_path.read_text()
    records = {r["JobID"]: r["State"] for r in cluster.sacct("JobID", "State")}
    ids = [j for rule, j in _submissions_of(log) if rule == "train_neural"]
    assert [records[j] for j in ids] == ["CANCELLED", "COMPLETED"], (ids, records)
    stats = json.loads((wd / TARGET / ".." / "train_stats.json").read_text())
    assert stats["finished"] and stats["steps"] == steps
    assert stats["resumed_from"] is not None and stats["resumed_from"] >= killed_at >= 20
    assert killed_at < steps, "training finished before the cancel: test inconclusive"

    # the same model trained without interruption, locally
    clean = _retrain_copy(source, tmp_path / "clean", steps)
    assert_local(snakemake(clean, TARGET))
    a = load_file(str(wd / TARGET / "model.safetensors"))
    b = load_file(str(clean / TARGET / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
