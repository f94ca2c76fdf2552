"""The SLURM profiles in Snakemake's dry runs: a profile's `config:` merged into the config files
and read back as numbers, the site template planning the study, and a group job over the site's
maximum runtime stopping the run before anything is submitted. The profiles' files alone:
tests/unit/test_cluster_profiles.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from conftest import (ROOT, SNAKEMAKE, VENV_BIN, slurm_not_answering, snakemake,
                      workdir_of_test_config)
from test_cluster_profiles import TEMPLATE, TESTS_PROFILE, WORKFLOW_PROFILE


PROBE = """\
from fairppl.config.overrides import CONFIG_SCHEMA, read_schema, type_overrides

type_overrides(config, workflow.config_settings.config, read_schema(CONFIG_SCHEMA))
print("RESOURCES", sorted(config["resources"].items()))


rule probe:
    output:
        "probe.txt",
    shell:
        "touch {output}"
"""


@pytest.mark.e2e
def test_a_profiles_config_merges_into_the_configfile(tmp_path):
    """Snakemake merges a profile's `config:` into the config files key by key (the rest of the
    workflow's `resources` block stays), its nested values as text: the workflow reads them back
    as numbers (fairppl.config.overrides), and the site's value wins over config/config.yaml's."""
    (tmp_path / "Snakefile").write_text(PROBE, encoding="utf-8")
    (tmp_path / "config.yaml").write_text("resources: {memory_growth: 3, gpu: 1}\n",
                                          encoding="utf-8")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "config.yaml").write_text(
        "config:\n  resources:\n    gpu: 0\n    max_runtime: 90\n", encoding="utf-8")
    proc = subprocess.run([SNAKEMAKE, "-n", "--cores", "1", "--configfile", "config.yaml",
                           "--profile", "site"], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
                                   PYTHONPATH=str(ROOT / "workflow" / "lib")))
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(line for line in proc.stdout.splitlines() if line.startswith("RESOURCES"))
    assert line == "RESOURCES [('gpu', 0), ('max_runtime', 90), ('memory_growth', 3)]"


def _jobs_of_dry_run(text: str) -> dict[str, list[str]]:
    """Each rule's `resources:` lines in a dry run's plan."""
    jobs, rule = {}, None
    for line in text.splitlines():
        m = re.match(r"^\s*(?:local)?rule (\w+):", line)
        if m:
            rule = m.group(1)
        elif rule and line.strip().startswith("resources:"):
            jobs.setdefault(rule, []).append(line.strip())
    return jobs


@pytest.mark.e2e
def test_the_template_plans_the_study(tmp_path, tiny_model):
    """The study's dry run with the workflow profile and the site template as shipped (and as
    docs/cluster.md has the user run it): the GPU rules ask for a GPU on the GPU partition, the
    n-gram bettors for none, the others go to the CPU partition; with `gpu: 0` in the site's
    copy (the one switch) none asks for a GPU."""
    wd = workdir_of_test_config(tmp_path / "wd", tiny_model)
    # the template's partitions and account are placeholders: planned as where SLURM does not
    # answer (a cluster of the SLURM tests may be running here)
    silent = slurm_not_answering(tmp_path / "no-slurm")
    proc = snakemake(wd, "-n", "--workflow-profile", str(WORKFLOW_PROFILE.parent),
                     "--profile", str(TEMPLATE.parent), path_first=silent)
    assert proc.returncode == 0, proc.stderr[-4000:]
    jobs = _jobs_of_dry_run(proc.stdout)
    gpu_rules = {"train_neural", "score_neural", "score_pretrained", "marginal_lm",
                 "marginal_caching"}
    assert gpu_rules <= set(jobs), gpu_rules - set(jobs)
    for rule in gpu_rules:
        assert all("slurm_partition=gpu" in r and r.endswith("gpu=1") for r in jobs[rule]), rule
    assert all("slurm_partition=cpu" in r and "gpu=" not in r for r in jobs["train_ngram"])
    bettors = jobs["shannon_bets"]
    assert {r.endswith("gpu=1") for r in bettors} == {True, False}, bettors
    # the one switch, as a site without GPUs sets it
    site = tmp_path / "site"
    shutil.copytree(TEMPLATE.parent, site)
    text = (site / "profile.yaml").read_text(encoding="utf-8")
    (site / "profile.yaml").write_text(re.sub(r"(?m)^(    gpu: )1(  # EDIT)$", r"\g<1>0\2", text),
                                       encoding="utf-8")
    proc = snakemake(wd, "-n", "--workflow-profile", str(WORKFLOW_PROFILE.parent),
                     "--profile", str(site), path_first=silent)
    assert proc.returncode == 0, proc.stderr[-4000:]
    jobs = _jobs_of_dry_run(proc.stdout)
    assert "    gpu: 0  # EDIT" in (site / "profile.yaml").read_text(encoding="utf-8")
    assert not [r for rule in jobs for r in jobs[rule] if "gpu=1" in r]
    assert all(r.endswith("gpu=0") for rule in gpu_rules for r in jobs[rule])


@pytest.mark.e2e
@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "run"])
def test_a_group_job_over_max_runtime_stops_the_run_before_submitting(tmp_path, tiny_model,
                                                                       dry_run):
    """With the profiles and a site maximum below a group job's summed runtime, the run stops
    at its start (the workflow's check of the planned run, before the executor submits
    anything), and so does the dry run that docs/cluster.md has a user run first, naming the
    group and the `group-components` that fits, once. No cluster: SLURM's commands are
    stand-ins that fail."""
    wd = workdir_of_test_config(tmp_path / "wd", tiny_model)
    cmd = [SNAKEMAKE, *(["-n"] if dry_run else []), "--snakefile", str(ROOT / "Snakefile"),
           "--directory", str(wd),
           *(f"results/tokenizers/bible/{language}/spm-unigram-3000.model"
             for language in ("eng", "kor", "tur")),
           "--workflow-profile", str(WORKFLOW_PROFILE.parent), "--profile",
           str(TESTS_PROFILE.parent), "--config", "resources={max_runtime: 45}"]
    # SLURM's commands answer nothing at once (a missing SLURM_CONF makes them retry for a
    # minute): a submission could not happen
    fake = tmp_path / "no-slurm"
    fake.mkdir()
    for command in ("sbatch", "squeue", "sacct", "sacctmgr", "scontrol", "sinfo", "sshare"):
        (fake / command).write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
        (fake / command).chmod(0o755)
    env = dict(os.environ, PATH=f"{fake}{os.pathsep}{VENV_BIN}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode != 0
    # three 30-minute tokenizers of 2 threads each on the site profile's 2 cores: one after
    # another, 90 minutes; one piece per group job fits
    line = ("group job 'tokenizers' (3 jobs in 3 pieces) would ask for 90 minutes, more than "
            "resources.max_runtime (45): give its group fewer pieces, e.g. `--group-components "
            "'tokenizers=1'` on the command line, or make group jobs wider (a larger `cores` in "
            "your site profile)")
    said = proc.stdout + proc.stderr  # a dry run logs to stdout
    assert said.count(line) == 1, said[-3000:]
    assert not (wd / "results" / "corpus").exists(), "a job ran"
