"""A run's settings checked once its jobs are planned, before anything is submitted, in a dry
run (`-n`) as in a real run: the rule names under `set-resources` and `set-threads`, and where
the executor is SLURM the group jobs' runtime against `resources.max_runtime` and the
partitions, accounts and QOS the jobs ask for against what `sinfo` and `sacctmgr` list (docs/cluster.md).

Why here and not in SLURM: sbatch refuses a wrong partition job by job, on two lines each, after
the run started; a wrong account is refused by snakemake-executor-plugin-slurm 2.8.0 for a single
job (retried, with more memory and time) while its error handler fails on a group job
(``job.rule.name``, which a group job lacks) and the run waits for ever. A check of the whole
plan at its start names every wrong value once, with where it was set and the valid ones.

Snakemake 9 reads the Snakefile before it knows the executor and runs `onstart` only in a real
run, so :func:`after_planning` hooks the checks in after the DAG's groups are formed, and
:func:`planned_executor` finds the executor the command line asked for (a dry run executes with
a stand-in executor that is not SLURM).
"""

from __future__ import annotations

import difflib
import getpass
import re
import shutil
import subprocess
import sys

from ..core.errors import InputError
from .resources import connected_pieces, oversized_groups, rule_list, unknown_partitions


def planned_executor(workflow=None) -> str | None:
    """The name of the executor this Snakemake run was asked for (`--executor`, or a profile's
    `executor:`), also in a dry run: found in Snakemake's ``execute_workflow`` call on the
    stack, else the workflow's own executor plugin; None when neither is known."""
    return _planned("executor") or getattr(getattr(workflow, "executor_plugin", None), "name",
                                           None)


def planned_executor_settings(workflow=None):
    """The executor plugin's settings of this run (`--slurm-qos` and the like), as
    :func:`planned_executor` finds them; None when unknown."""
    return _planned("executor_settings") or getattr(workflow, "executor_settings", None)


def _planned(name: str):
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "execute_workflow" and "executor" in frame.f_locals:
            return frame.f_locals.get(name)
        frame = frame.f_back
    return None


def after_planning(workflow, check) -> None:
    """Call ``check()`` once Snakemake has planned the run's jobs and formed its group jobs,
    before anything runs or is submitted, in a dry run as in a real run. Snakemake 9 builds the
    DAG (``Workflow._build_dag``) and then post-processes it once with ``check_initial=True``
    (which forms the groups), through ``Workflow.async_run``; the check follows that call, once
    it has returned, outside the event loop. A refusal (WorkflowError) is raised again from here
    with its message alone, so that Snakemake prints the one line and a single frame, as for the
    checks made while it parses the workflow (not the event loop's frames)."""
    from snakemake.exceptions import WorkflowError

    build = workflow._build_dag

    def build_then_hook():
        build()
        dag, run = workflow.dag, workflow.async_run
        postprocess = dag.postprocess
        due = []

        async def postprocess_then_flag(*args, **kwargs):
            result = await postprocess(*args, **kwargs)
            if kwargs.get("check_initial"):
                del dag.postprocess  # once: the class's own method again
                due.append(True)
            return result

        def run_then_check(coroutine):
            result = run(coroutine)
            if due:
                del workflow.async_run  # once: the class's own method again
                due.clear()
                try:
                    check()
                except WorkflowError as err:
                    raise WorkflowError(str(err)) from None
            return result

        dag.postprocess = postprocess_then_flag
        workflow.async_run = run_then_check

    workflow._build_dag = build_then_hook


def report_failed_group_submissions() -> bool:
    """Make snakemake-executor-plugin-slurm 2.8.0 report a group job whose submission failed,
    as it reports a single job's (the job fails with sbatch's message and is retried), instead
    of leaving the run waiting for it: the plugin's handler of a failed submission names
    ``job.rule.name``, which a group job lacks, so the handler itself raises, in the thread that
    submits, where nobody reads it. The original error is the context of that AttributeError.
    Once per process; False where the plugin is not there or has no such handler."""
    try:
        from snakemake_executor_plugin_slurm import Executor
        from snakemake_interface_executor_plugins.executors.base import SubmittedJobInfo
    except ImportError:
        return False
    original = Executor.run_job
    if getattr(original, "reports_group_failures", False):
        return True
    if not hasattr(Executor, "_report_job_error_threadsafe"):
        return False

    def run_job(self, job):
        try:
            return original(self, job)
        except AttributeError as err:
            if not job.is_group():
                raise
            cause = err.__context__ or err
            self.logger.error(f"Submitting group job {job.groupid} failed: {cause}")
            self._report_job_error_threadsafe(
                SubmittedJobInfo(job), f"Job submission failed with exception: {cause}")

    run_job.reports_group_failures = True
    Executor.run_job = run_job
    return True


# -- rule names -----------------------------------------------------------------------------

def unknown_rule_names(settings: dict[str, list[str]], rules: list[str]) -> list[str]:
    """One sentence per rule name under a per-rule setting (``settings``: `set-resources` or
    `set-threads` -> the rule names given there) that is not among ``rules``: Snakemake
    ignores such a setting without a word."""
    problems = []
    for setting, names in settings.items():
        for name in sorted(set(names) - set(rules)):
            close = difflib.get_close_matches(name, rules, n=3, cutoff=0.6)
            expected = (f"expected a rule of the workflow such as {', '.join(close)}" if close
                        else "expected a rule of the workflow (`snakemake --list-rules` lists "
                             "them)")
            problems.append(f"{setting} names rule {name!r}, which the workflow does not have "
                            f"(misspelt?), so the setting would be ignored; {expected}")
    return problems


def check_rule_names(set_resources, set_threads, rules: list[str]) -> None:
    """Refuse a `set-resources` or `set-threads` entry (a profile's or the command line's: the
    rule names ``set_resources`` and ``set_threads``, Snakemake's
    ``workflow.resource_settings.overwrite_resources`` and ``overwrite_threads``) naming a rule
    that is not among ``rules``."""
    problems = unknown_rule_names({"set-resources": list(set_resources),
                                   "set-threads": list(set_threads)}, list(rules))
    if problems:
        raise InputError(problems[0] + (f" (and {len(problems) - 1} more)"
                                        if len(problems) > 1 else ""))


# -- group jobs -----------------------------------------------------------------------------

def group_rows(workflow) -> list[tuple[str, str, int, int | None, int]]:
    """Per distinct group job of the planned run: its id, the name its `group-components` is
    set under, its number of jobs, its runtime and its number of connected pieces. Several
    group jobs of one group that look the same (same size, runtime and pieces) are one row, so
    that a message does not repeat a line."""
    dag = workflow.dag
    groups = {id(g): g for g in getattr(dag, "_group", {}).values()}.values()
    dependencies = dag._dependencies
    rows = []
    for group in groups:
        name = workflow.parent_groupids.get(group.groupid, group.groupid)
        row = (group.groupid, name, len(group.jobs), group.resources.get("runtime"),
               connected_pieces(group.jobs, lambda job: dependencies[job]))
        if row not in rows:
            rows.append(row)
    return sorted(rows, key=lambda r: (r[0], r[2]))


# -- SLURM's own lists ----------------------------------------------------------------------

def _ask(command: list[str]) -> tuple[set[str] | None, str]:
    """The words a SLURM query prints (one value per line, commas splitting several), or None
    and why, where the command is missing, fails or prints nothing."""
    if shutil.which(command[0]) is None:
        return None, f"{command[0]} is not on PATH"
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        return None, f"`{' '.join(command)}` did not answer ({err})"
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        return None, (f"`{' '.join(command)}` failed ({said[-1] if said else 'no output'}); "
                      f"accounting may not be configured")
    words = {word.strip().rstrip("*") for line in done.stdout.splitlines()
             for word in line.split(",") if word.strip()}
    if not words:
        return None, f"`{' '.join(command)}` printed nothing"
    return words, ""


def _wanted(workflow, jobs, resource: str) -> dict[str, tuple[set[str], set[str]]]:
    """value -> (where it was set, its rules) of ``resource`` over the planned ``jobs``."""
    overwrite = workflow.resource_settings.overwrite_resources
    wanted: dict[str, tuple[set[str], set[str]]] = {}
    for job in jobs:
        value = job.resources.get(resource)
        if value in (None, ""):
            continue
        rule = job.rule.name
        where = (f"set-resources of {rule}" if resource in (overwrite.get(rule) or {})
                 else "default-resources")
        for part in re.split(r"[,\s]+", str(value)):
            if part:
                places, rules = wanted.setdefault(part, (set(), set()))
                places.add(where)
                rules.add(rule)
    return wanted


def unknown_values(kind: str, wanted: dict[str, tuple[set[str], set[str]]], known: set[str],
                   listed_by: str, case_sensitive: bool = True) -> list[str]:
    """One sentence per value of a job setting ``kind`` (``wanted``: value -> (where it was set,
    its rules)) that is not among ``known`` (what ``listed_by`` lists)."""
    fold = (lambda s: s) if case_sensitive else str.lower
    have = {fold(k) for k in known}
    problems = []
    for value, (places, rules) in sorted(wanted.items()):
        if fold(value) in have:
            continue
        problems.append(f"{kind} {value!r} (set in {', '.join(sorted(places))}; rules "
                        f"{rule_list(rules)}) is not one {listed_by} lists; expected one "
                        f"of {', '.join(sorted(known))}, set in your site profile's "
                        f"default-resources or set-resources")
    return problems


def _queued(workflow, job) -> bool:
    """Whether ``job`` goes to SLURM: not a local rule's (`localrule: True`, `localrules:`),
    which runs where Snakemake runs (``job.is_local`` says True for every job of a dry run)."""
    return not (job.rule.name in getattr(workflow, "_localrules", ()) or job.rule.norun)


def slurm_problems(workflow, jobs, qos: str | None = None) -> tuple[list[str], list[str]]:
    """What is wrong with the partitions, accounts and QOS that the planned ``jobs`` ask for
    (and the executor's own `--slurm-qos` ``qos``), and notes on what could not be checked.
    Nothing where a job names another cluster (`slurm_cluster`, `clusters`): the lists are the
    login node's cluster's."""
    members = [member for job in jobs for member in (job.jobs if job.is_group() else [job])
               if _queued(workflow, member)]
    if any(m.resources.get("slurm_cluster") or m.resources.get("clusters") for m in members):
        return [], ["the SLURM partitions and accounts were not checked: a job names another "
                    "cluster"]
    problems, notes = [], []
    partitions = _wanted(workflow, members, "slurm_partition")
    if partitions:
        known, why = _ask(["sinfo", "-a", "-h", "-o", "%R"])
        if known is None:
            notes.append(f"the SLURM partitions were not checked: {why}")
        else:
            problems += unknown_partitions(
                {p: rules for p, (_, rules) in partitions.items()}, known,
                {p: places for p, (places, _) in partitions.items()})
    user = getpass.getuser()
    for kind, resource, field in (("slurm_account", "slurm_account", "account"),
                                  ("qos", "qos", "qos")):
        wanted = _wanted(workflow, members, resource)
        if kind == "qos" and qos:
            wanted.setdefault(str(qos), (set(), set()))[0].add("--slurm-qos")
        if not wanted:
            continue
        command = ["sacctmgr", "-n", "-P", "show", "assoc", f"user={user}", f"format={field}"]
        known, why = _ask(command)
        if known is None:
            notes.append(f"the SLURM {field}s were not checked: {why}")
            continue
        problems += unknown_values(kind, wanted, known,
                                   f"`sacctmgr show assoc user={user} format={field}`",
                                   case_sensitive=False)
    return problems, notes


def check_planned_run(workflow, max_runtime: int) -> list[str]:
    """The checks of a planned run (:func:`after_planning`): rule names always; where the
    executor is SLURM, the group jobs against ``max_runtime`` minutes and the partitions,
    accounts and QOS. Raises InputError naming every problem (one per line; the first line
    alone is the message where there is one); returns the notes on what was not checked."""
    settings = workflow.resource_settings
    check_rule_names(settings.overwrite_resources, settings.overwrite_threads,
                     [rule.name for rule in workflow.rules])
    if planned_executor(workflow) != "slurm":
        return []
    problems = oversized_groups(group_rows(workflow), max_runtime)
    settings = planned_executor_settings(workflow)
    more, notes = slurm_problems(workflow, list(workflow.dag.needrun_jobs()),
                                 getattr(settings, "qos", None))
    problems += more
    if problems:
        raise InputError("\n".join(problems))
    return notes
