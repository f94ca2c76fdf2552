"""The study through a real SLURM cluster (slurm-wlm, munge, slurmdbd and MariaDB started by
tests/cluster/slurm_cluster.py), under the shipped workflow profile and the tests' site profile:

* the cluster itself accounts jobs and enforces memory;
* the test config run through it (tests/cluster/slurm_study.py: in `make test` one output of
  each rule family and the tables they feed, rebuilt on a copy of the local run; in
  `make test-heavy` the whole config from scratch) gives the local run's tables, every job having gone through SLURM (its job
  id in Snakemake's log and in `sacct`), although one training job was cancelled with `scancel`
  mid-run on the way: the retry resumed it from its checkpoint, to the local run's weights;
* a job over its memory ends OUT_OF_MEMORY and comes back as a new SLURM job asking for more.

The test config's run goes on in the background and the tests on the cluster run last
(conftest.py): its Snakemake and the cluster's jobs run at the lowest priority (nice 19), on the CPU
time the rest of the suite leaves idle.

Skipped, with the reason in pytest's summary, where the machine cannot run a cluster (not root,
no apt-get, no cgroup v1 memory controller, a SLURM or MariaDB already running)."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from typing import NamedTuple

import polars as pl
import pytest
import yaml

from conftest import ROOT, SUMMARY_LINES
from slurm_study import CANCELLED, OOM_FIRST_MB, OOM_GROWTH, OOM_TARGET, RERUN_OUTPUTS
from test_slurm_profile import _declared_local_rules

pytestmark = pytest.mark.slurm


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


@pytest.fixture(scope="module")
def slurm_study(cluster, study, slurm_runs):
    """The test config run through the cluster in the background (tests/cluster/slurm_study.py; the
    same sheet and tiny model as the local `study`), with the English character Transformer's
    training job cancelled on the way. Returns the working folder, the Snakemake log, the local
    study's folder, what was cancelled (SLURM id, the checkpoint's step at the cancel) and the
    run's mode (`rerun` or `full`)."""
    local_wd, _ = study
    run = slurm_runs["study"]
    returncode, log = run.result()
    assert run.failure is None, f"{run.failure}\n{log[-4000:]}"
    assert returncode == 0, f"snakemake through SLURM failed ({returncode}):\n{log[-8000:]}"
    steps = re.findall(r"^(\d+) of (\d+) steps", log, flags=re.M)
    SUMMARY_LINES.append(f"test config through SLURM ({run.mode}): {run.seconds:.0f} s, "
                         f"{steps[-1][1] if steps else '?'} Snakemake jobs as "
                         f"{len(submissions(log))} SLURM jobs; cancelled {run.cancelled}")
    return run.wd, log, local_wd, run.cancelled, run.mode


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


def test_every_table_equals_the_local_run(slurm_study):
    """Every file of results/tables is byte-identical to the local run's, except the tables with
    a wall-clock column, which are identical without it (and differ in nothing else): the
    cancelled and resumed training job included."""
    wd, _, local_wd, _, _ = slurm_study
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


#: Rules of every model family, which both modes of the SLURM run submit.
RULE_FAMILIES = {"train_tokenizer", "train_ngram", "score_char_ngram", "score_word_ngram",
                 "score_subword_ngram", "train_neural", "score_neural", "score_pretrained",
                 "marginal_ngram", "marginal_lm", "marginal_caching", "shannon_bets"}
#: And those that only the run from scratch submits (the rerun keeps their outputs).
FROM_SCRATCH = {"prepare_corpus", "lemmatize_corpus", "mcc_apertium", "forms_per_lemma"}


def _rules_of_the_run(log: str) -> tuple[set, set, set]:
    """Rules of the jobs Snakemake ran: local ones, jobs submitted alone, members of group jobs
    (printed indented under `Group job ...`)."""
    return (set(re.findall(r"^localrule (\w+):", log, flags=re.M)),
            set(re.findall(r"^rule (\w+):", log, flags=re.M)),
            set(re.findall(r"^ {4}rule (\w+):", log, flags=re.M)))


def test_every_job_went_through_slurm(slurm_study, cluster):
    """Every job that is not a local rule has a SLURM job id in Snakemake's log, and `sacct`
    knows every one of those ids with a final state: COMPLETED, but for the one cancelled."""
    _, log, _, cancelled, mode = slurm_study
    submitted = submissions(log)
    assert submitted, "no job was submitted to SLURM"
    local, alone, grouped = _rules_of_the_run(log)
    assert local <= _declared_local_rules(), local - _declared_local_rules()
    submitted_alone = {s.name for s in submitted if s.kind == "rule"}
    group_names = " ".join(s.name for s in submitted if s.kind == "group")
    assert alone <= submitted_alone, f"ran but not submitted: {alone - submitted_alone}"
    assert grouped and all(rule in group_names for rule in grouped), (grouped, group_names)
    # every model family went through the cluster, alone or in a group; from scratch, the stages
    # before them too
    expected = RULE_FAMILIES | (FROM_SCRATCH if mode == "full" else set())
    assert expected <= alone | grouped, f"never went through SLURM: {expected - alone - grouped}"
    records = {r["JobID"]: r for r in cluster.sacct("JobID", "State", "Comment", "Timelimit")}
    missing = [s.slurm_id for s in submitted if s.slurm_id not in records]
    assert not missing, f"SLURM job ids in the log that sacct does not know: {missing}"
    states = {s.slurm_id: records[s.slurm_id]["State"] for s in submitted}
    assert states.pop(cancelled["job"]).startswith("CANCELLED")
    assert set(states.values()) == {"COMPLETED"}, states
    # the plugin's comment names each job's rule (what its efficiency report reads)
    assert all(records[s.slurm_id]["Comment"].startswith("rule_") for s in submitted)
    # no job, group jobs included, asked for more than the site profile's max_runtime
    cap = yaml.safe_load((ROOT / "tests" / "slurm" / "profile.yaml").read_text(
        encoding="utf-8"))["config"]["resources"]["max_runtime"]
    limits = {s.slurm_id: _minutes(records[s.slurm_id]["Timelimit"]) for s in submitted}
    assert max(limits.values()) <= cap, limits


def test_deleted_outputs_were_found_at_start_up_and_rebuilt(slurm_study):
    """In `make test`'s rerun, each deleted file that had a digest record is named at start-up as
    deleted and rebuilt (the workflow's integrity check asked for it: a table whose inputs are
    missing is not rebuilt for that alone), and is there again (what they feed is compared by
    test_every_table_equals_the_local_run)."""
    wd, log, local_wd, _, mode = slurm_study
    if mode != "rerun":
        pytest.skip("the run from scratch deletes nothing")
    sealed = sorted({seal.parent / seal.name[1:-len(".sha256")]
                     for pattern in RERUN_OUTPUTS
                     for path in (local_wd / "results").glob(pattern)
                     for seal in path.parent.glob(f".{path.name}.sha256")})
    assert sealed, "none of the deleted files had a digest record"
    for path in sealed:
        relative = path.relative_to(local_wd)
        assert f"{relative}: missing (it was written, then deleted); this run rebuilds it" in log, \
            relative
        assert (wd / relative).exists(), relative


def _minutes(limit: str) -> int:
    """sacct's Timelimit ([D-]HH:MM:SS) in minutes."""
    days, _, clock = limit.rpartition("-")
    hours, minutes, _ = map(int, clock.split(":"))
    return (int(days or 0) * 24 + hours) * 60 + minutes


def test_cancelled_training_job_resumed_from_its_checkpoint(slurm_study, cluster):
    """`scancel` of a train_neural job mid-training: the profile's retry submitted a new SLURM
    job, which resumed from the checkpoint and ended with the uninterrupted local run's weights
    (the tables' equality above then covers what the model scored)."""
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file

    wd, log, local_wd, cancelled, _ = slurm_study
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


@pytest.fixture(scope="module")
def slurm_out_of_memory(cluster, study, slurm_runs):
    """The out-of-memory run (started in the background at the session's start,
    tests/cluster/slurm_study.py): a new working folder of the test config whose UDHR units are
    built by a job that first asks for OOM_FIRST_MB MB. Returns its working folder, its
    Snakemake log and the local study's folder (its units, the same bytes)."""
    run = slurm_runs["out_of_memory"]
    returncode, log = run.result()
    assert returncode == 0, f"snakemake through SLURM failed ({returncode}):\n{log[-8000:]}"
    return run.wd, log, study[0]


def test_out_of_memory_job_comes_back_as_a_new_job_asking_for_more(cluster, slurm_out_of_memory):
    """A job over its memory ends OUT_OF_MEMORY and the profile's retry submits a *new* SLURM job
    asking for memory_growth times more (the rule's attempt-scaled `mem_mb`), which completes;
    `sacct` tells it from a retry inside the same allocation (one job id, one request)."""
    wd, log, local_wd = slurm_out_of_memory
    # the units built through SLURM are the local run's, byte for byte
    assert (wd / OOM_TARGET).read_bytes() == (local_wd / OOM_TARGET).read_bytes()
    records = {r["JobID"]: r for r in cluster.sacct("JobID", "State", "ReqMem")}
    ids = [s.slurm_id for s in submissions(log) if s.name == "prepare_corpus"]
    got = [(records[j]["State"], records[j]["ReqMem"]) for j in ids]
    assert got == [("OUT_OF_MEMORY", f"{OOM_FIRST_MB}M"),
                   ("COMPLETED", f"{OOM_FIRST_MB * OOM_GROWTH}M")], got
    assert int(ids[0]) < int(ids[1])


# -- the site profile on the cluster (tests/cluster/slurm_study.py: SiteRuns) ------------------

@pytest.fixture(scope="module")
def slurm_site(cluster, slurm_runs):
    """The site profile's runs of a throwaway workflow (slurm_study.SITE_RUNS), started in the
    background at the session's start: a function from a run's name to its exit status, log and
    folder."""
    runs = slurm_runs["site"]
    return runs.result


def _records(cluster, *fields) -> dict[str, dict]:
    return {r["JobID"]: r for r in cluster.sacct("JobID", *fields)}


def test_timeout_job_comes_back_as_a_new_job_with_more_time(cluster, slurm_site):
    """A job over its time limit ends TIMEOUT and the workflow profile's retry submits a new
    SLURM job asking for resources.runtime_growth times more time (2 minutes, then 4: at the cluster's lowest priority, beside the tests and
    the shared study's build, a second attempt of 2 minutes has run out before its job-step
    Snakemake had started)."""
    returncode, log, wd = slurm_site("site")
    assert returncode == 0, log[-6000:]
    ids = [s.slurm_id for s in submissions(log) if s.name == "overtime"]
    records = _records(cluster, "State", "Timelimit")
    got = [(records[j]["State"], records[j]["Timelimit"]) for j in ids]
    assert got == [("TIMEOUT", "00:02:00"), ("COMPLETED", "00:04:00")], got
    assert (wd / "overtime.txt").read_text().strip() == ids[1]


def test_site_profile_settings_take_effect(cluster, slurm_site):
    """`jobs: 1` in the site profile: the run's three jobs never overlapped in time (sacct's
    start and end); `latency-wait: 7`: the job-step Snakemake inside a SLURM job was given it."""
    returncode, log, wd = slurm_site("site")
    assert returncode == 0, log[-6000:]
    ids = [s.slurm_id for s in submissions(log)]
    assert len(ids) == 4, ids  # overtime twice, probe, gpu_on
    records = _records(cluster, "Start", "End")
    spans = sorted((records[j]["Start"], records[j]["End"]) for j in ids)
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:])), spans
    cmdline = json.loads((wd / "probe.json").read_text())["cmdline"]
    assert cmdline[cmdline.index("--latency-wait") + 1] == "7", cmdline


def test_jobs_run_offline(cluster, slurm_site):
    """The compute node's jobs see only loopback and the link to slurmctld's host: a
    connection out of the node fails at once, by address (no route) and by name (no DNS)."""
    returncode, log, wd = slurm_site("site")
    assert returncode == 0, log[-6000:]
    from slurm_cluster import VETH_NODE

    facts = json.loads((wd / "probe.json").read_text())
    assert facts["interfaces"] == sorted(["lo", VETH_NODE]), facts
    assert facts["by_address"] == "OSError: [Errno 101] Network is unreachable", facts
    assert facts["by_name"].startswith("gaierror: "), facts


def test_gpu_switch_sets_the_submitted_gpus(cluster, slurm_site):
    """config resources.gpu in the site profile: 1 submits the GPU rule with `--gpus=1` (the
    node's GRES, in sacct's requested TRES), 0 with none."""
    on_code, on_log, _ = slurm_site("site")
    off_code, off_log, _ = slurm_site("no_gpu")
    assert on_code == 0 and off_code == 0, (on_log[-3000:], off_log[-3000:])
    [on] = [s.slurm_id for s in submissions(on_log) if s.name == "gpu"]
    [off] = [s.slurm_id for s in submissions(off_log) if s.name == "gpu"]
    records = _records(cluster, "ReqTRES")
    assert "gres/gpu=1" in records[on]["ReqTRES"].split(","), records[on]
    assert "gres/gpu" not in records[off]["ReqTRES"], records[off]


def test_wrong_partition_stops_before_submission_in_one_line(slurm_site):
    """A partition the cluster does not have: the workflow's check of the planned run (sinfo)
    stops the run in one line naming the partition, where it was set, its rules and the
    cluster's partitions, before sbatch would refuse each job on two lines; no SLURM job."""
    returncode, log, _ = slurm_site("wrong_partition")
    assert returncode != 0
    assert not submissions(log)
    assert ("slurm_partition 'nosuch' (set in default-resources; rules gpu) is not a partition "
            "of this cluster; expected one of fairppl (`sinfo`), set in your site profile's "
            "default-resources or set-resources") in log.splitlines(), log[-3000:]


def test_wrong_account_fails_before_submission(slurm_site):
    """An account the cluster does not have (accounting enforces associations): the workflow's
    check of the planned run asks the cluster's sacctmgr and stops in one line with the
    accounts there are, before the executor plugin (whose error handler fails on a group job
    and leaves the run waiting) submits anything."""
    returncode, log, _ = slurm_site("wrong_account")
    assert returncode != 0
    assert not submissions(log)
    line = next((line for line in log.splitlines()
                 if line.startswith("slurm_account 'nosuch' (set in default-resources; rules "
                                    "gpu) is not one `sacctmgr show assoc user=")), None)
    assert line is not None, log[-3000:]
    accounts = line.split("expected one of ", 1)[1].split(", set in")[0].split(", ")
    assert "fairppl" in accounts, line
