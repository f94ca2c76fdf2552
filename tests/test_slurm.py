"""The study through a real SLURM cluster (slurm-wlm, munge, slurmdbd and MariaDB started by
tests/slurm_cluster.py), under the shipped workflow profile and the tests' site profile:

* the cluster itself accounts jobs and enforces memory;
* the test config run through it gives the local run's tables, every job having gone through
  SLURM (its job id in Snakemake's log and in `sacct`), although one training job was cancelled
  with `scancel` mid-run on the way: the retry resumed it from its checkpoint, to the local run's
  weights;
* a job over its memory ends OUT_OF_MEMORY and comes back as a new SLURM job asking for more.

The test config's run is marked `heavy` (`make test-heavy`): beside the rest of the suite it costs
the two cores about ten minutes, beyond the 20 minutes of `make test`.

Skipped, with the reason in pytest's summary, where the machine cannot run a cluster (not root,
no apt-get, no cgroup v1 memory controller, a SLURM or MariaDB already running)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import NamedTuple

import polars as pl
import pytest
import yaml

from conftest import ROOT
from slurm_study import CANCELLED, slurm_command


def run_slurm(cluster, workdir: Path, *args: str, timeout: int = 900):
    cmd, env = slurm_command(cluster, workdir, args, timeout)
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout + 60)


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
def slurm_study(cluster, study, slurm_study_started):
    """The test config run through the cluster (started in the background when the session
    began, tests/slurm_study.py; the same sheet and tiny model as the local `study`), with the
    English character Transformer's training job cancelled on the way. Yields the working folder,
    the Snakemake log, the local study's folder and what was cancelled (SLURM id, the
    checkpoint's step at the cancel)."""
    local_wd, _ = study
    run = slurm_study_started
    returncode, log = run.result()
    assert run.failure is None, f"{run.failure}\n{log[-4000:]}"
    assert returncode == 0, f"snakemake through SLURM failed ({returncode}):\n{log[-8000:]}"
    print(f"test config through SLURM: {run.seconds:.0f} s, {len(submissions(log))} SLURM jobs; "
          f"cancelled {run.cancelled}")
    return run.wd, log, local_wd, run.cancelled


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
    a wall-clock column, which are identical without it (and differ in nothing else): the
    cancelled and resumed training job included."""
    wd, _, local_wd, _ = slurm_study
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
    knows every one of those ids with a final state: COMPLETED, but for the one cancelled."""
    _, log, _, cancelled = slurm_study
    submitted = submissions(log)
    assert submitted, "no job was submitted to SLURM"
    local, alone, grouped = _rules_of_the_run(log)
    assert local <= _declared_local_rules(), local - _declared_local_rules()
    submitted_alone = {s.name for s in submitted if s.kind == "rule"}
    group_names = " ".join(s.name for s in submitted if s.kind == "group")
    assert alone <= submitted_alone, f"ran but not submitted: {alone - submitted_alone}"
    assert grouped and all(rule in group_names for rule in grouped), (grouped, group_names)
    records = {r["JobID"]: r for r in cluster.sacct("JobID", "State", "Comment")}
    missing = [s.slurm_id for s in submitted if s.slurm_id not in records]
    assert not missing, f"SLURM job ids in the log that sacct does not know: {missing}"
    states = {s.slurm_id: records[s.slurm_id]["State"] for s in submitted}
    assert states.pop(cancelled["job"]).startswith("CANCELLED")
    assert set(states.values()) == {"COMPLETED"}, states
    # the plugin's comment names each job's rule (what its efficiency report reads)
    assert all(records[s.slurm_id]["Comment"].startswith("rule_") for s in submitted)


@pytest.mark.heavy
def test_cancelled_training_job_resumed_from_its_checkpoint(slurm_study, cluster):
    """`scancel` of a train_neural job mid-training: the profile's retry submitted a new SLURM
    job, which resumed from the checkpoint and ended with the uninterrupted local run's weights
    (the tables' equality above then covers what the model scored)."""
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file

    wd, log, local_wd, cancelled = slurm_study
    assert cancelled, "the training job was never seen running with a checkpoint"
    records = {r["JobID"]: r["State"] for r in cluster.sacct("JobID", "State")}
    ids = [s.slurm_id for s in submissions(log)
           if s.name == "train_neural" and s.wildcards == "bible_eng_char"]
    assert ids[0] == cancelled["job"]
    assert [records[j].split()[0] for j in ids] == ["CANCELLED", "COMPLETED"], (ids, records)
    stats = json.loads((wd / CANCELLED / "train_stats.json").read_text())
    steps = yaml.safe_load((wd / "config" / "config.yaml").read_text())["neural"]["steps"]
    assert stats["finished"] and stats["steps"] == steps
    assert cancelled["step"] is not None and cancelled["step"] < steps, \
        "training finished before the cancel: test inconclusive"
    assert stats["resumed_from"] is not None and stats["resumed_from"] >= cancelled["step"]
    a = load_file(str(wd / CANCELLED / "model" / "model.safetensors"))
    b = load_file(str(local_wd / CANCELLED / "model" / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


class Submission(NamedTuple):
    slurm_id: str
    kind: str  # "rule" or "group"
    name: str  # the rule's name, or the group job's
    wildcards: str  # as the plugin writes them ("bible_eng_char"), "" for none


#: The plugin's line for each submission; the log path is
#: `<slurm-logdir>/<rule_NAME|group_NAME>/[<wildcards>/]<id>.log`.
SUBMITTED = re.compile(r"submitted with SLURM jobid (\d+) \(log: (\S+?)\.?\)")


def submissions(log: str) -> list[Submission]:
    """Every submission of a Snakemake log, in order, parsed from the plugin's lines."""
    found = []
    for slurm_id, path in SUBMITTED.findall(log):
        parts = path.split("/")
        head = next(i for i, part in enumerate(parts) if part.startswith(("rule_", "group_")))
        kind, _, name = parts[head].partition("_")
        wildcards = parts[head + 1] if len(parts) - head == 3 else ""
        found.append(Submission(slurm_id, kind, name, wildcards))
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
    ids = [s.slurm_id for s in submissions(proc.stdout + proc.stderr) if s.name == "prepare_corpus"]
    got = [(records[j]["State"], records[j]["ReqMem"]) for j in ids]
    assert got == [("OUT_OF_MEMORY", f"{OOM_FIRST_MB}M"),
                   ("COMPLETED", f"{OOM_FIRST_MB * OOM_GROWTH}M")], got
    assert int(ids[0]) < int(ids[1])
