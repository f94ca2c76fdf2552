"""The SLURM profiles without a cluster (the cluster itself: tests/test_slurm.py): the workflow
profile holds only the workflow's keys, the site template and the tests' site profile cannot
drift apart, every key and snippet is one Snakemake accepts, a profile's `config:` reaches the
workflow as the rules need it, and a job's runtime grows with its attempt and its units."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
import yaml

from conftest import (ROOT, SNAKEMAKE, VENV_BIN, slurm_not_answering, snakemake,
                      workdir_of_test_config)
from fairppl.config.resources import (
    DEFAULTS,
    WHOLE_SPLIT_UNITS,
    connected_pieces,
    gpus_per_job,
    job_runtime,
    oversized_groups,
    unknown_partitions,
)
from fairppl.config.overrides import CONFIG_SCHEMA, read_schema, typed

WORKFLOW_PROFILE = ROOT / "workflow" / "profiles" / "slurm" / "profile.yaml"
TEMPLATE = ROOT / "workflow" / "profiles" / "site-template" / "profile.yaml"
TESTS_PROFILE = ROOT / "tests" / "slurm" / "profile.yaml"
DOCS = ROOT / "docs" / "cluster.md"

#: The keys of the workflow profile: the workflow's own settings, which replace a site's.
WORKFLOW_KEYS = {"executor", "retries", "rerun-incomplete", "keep-going", "groups",
                 "group-components"}
#: Where tests/slurm/profile.yaml may differ from the template in its keys, and why: the test
#: cluster has one partition and no accounts to charge.
TESTS_PROFILE_DIFFERS = {
    "set-resources": "the template's GPU partition block: the test cluster has one partition",
    "default-resources.slurm_account": "the test cluster's jobs take root's default account",
}


def _load(path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _keys(profile: dict) -> set[str]:
    """Top-level keys, and those of the blocks a site fills in (dotted)."""
    keys = set(profile)
    for block in ("default-resources", "config"):
        keys |= {f"{block}.{key}" for key in profile.get(block) or {}}
    keys |= {f"config.resources.{key}"
             for key in (profile.get("config") or {}).get("resources") or {}}
    return keys


def _snakemake_options() -> set[str]:
    """Every long option of Snakemake's command line, executor plugins' included, without `--`."""
    from snakemake.cli import get_argument_parser

    return {opt[2:] for action in get_argument_parser()._actions
            for opt in action.option_strings if opt.startswith("--")}


def test_workflow_profile_holds_only_the_workflows_keys():
    """A workflow profile's key replaces the same key of the user's profile: a site key there
    (jobs, cores, latency-wait, a status command, partitions) could not be changed by a site."""
    workflow, template = _load(WORKFLOW_PROFILE), _load(TEMPLATE)
    assert set(workflow) == WORKFLOW_KEYS
    assert not set(workflow) & set(template), set(workflow) & set(template)


def test_tests_profile_has_the_templates_keys():
    """tests/slurm/profile.yaml is the template filled in for the test cluster: the same keys but
    for the documented few, so that a key added to one is added to the other."""
    template, tests = _keys(_load(TEMPLATE)), _keys(_load(TESTS_PROFILE))
    assert template ^ tests == set(TESTS_PROFILE_DIFFERS), template ^ tests


def test_every_profile_key_is_a_snakemake_option():
    options = _snakemake_options()
    for path in (WORKFLOW_PROFILE, TEMPLATE, TESTS_PROFILE):
        unknown = set(_load(path)) - options
        assert not unknown, f"{path.relative_to(ROOT)}: not Snakemake options: {unknown}"


def test_template_marks_the_lines_a_site_edits():
    """The lines a site edits end in `# EDIT`, the four docs/cluster.md counts: partition,
    account, the GPU partition and the GPU switch."""
    lines = [line.split("#")[0].strip()
             for line in TEMPLATE.read_text(encoding="utf-8").splitlines()
             if line.rstrip().endswith("# EDIT")]
    assert lines == ["slurm_partition: cpu", "slurm_account: my-project",
                     "train_neural: &gpu {slurm_partition: gpu}", "gpu: 1"], lines


# -- runtime and GPUs -------------------------------------------------------------------------

def test_runtime_grows_with_the_attempt_up_to_max_runtime():
    block = {"runtime_growth": 2, "max_runtime": 100}
    assert [job_runtime(block, 30, attempt) for attempt in (1, 2, 3, 4)] == [30, 60, 100, 100]
    assert job_runtime({"runtime_growth": 1.5}, 10, 2) == 15
    # the schema's defaults where the block is empty: growth 2, at most 1440 minutes
    assert [job_runtime({}, 1000, attempt) for attempt in (1, 2)] == [1000, 1440]


def test_runtime_scales_up_with_the_configured_units_never_down():
    assert job_runtime({}, 30, 1, units=100, reference_units=50) == 60
    assert job_runtime({}, 30, 1, units=10, reference_units=50) == 30
    # null units: the whole split, taken as WHOLE_SPLIT_UNITS
    assert job_runtime({}, 2, 1, units=None, reference_units=200) == 2 * WHOLE_SPLIT_UNITS // 200
    # units and attempt together: 120 min at 20 units, 40 units, second attempt
    assert job_runtime({"max_runtime": 10_000}, 120, 2, units=40, reference_units=20) == 480


def test_gpu_switch_and_profile_numbers():
    assert gpus_per_job({}) == DEFAULTS["gpu"] == 1
    assert gpus_per_job({"gpu": 0}) == 0
    # a profile's numbers arrive as text and are read back where the schema wants numbers; a
    # text the schema refuses either way is left for it to name
    config = {"resources": {"gpu": "0", "max_runtime": "120", "runtime_growth": "1.5",
                            "memory_mb": {"train_neural": "6000"}, "memory_growth": "False"}}
    assert typed(config, read_schema(CONFIG_SCHEMA))["resources"] == {
        "gpu": 0, "max_runtime": 120, "runtime_growth": 1.5,
        "memory_mb": {"train_neural": 6000}, "memory_growth": "False"}


def test_defaults_are_the_schemas():
    schema = _load(ROOT / "workflow" / "schemas" / "config.schema.yaml")
    block = schema["properties"]["resources"]["properties"]
    for key, value in DEFAULTS.items():
        assert block[key]["default"] == value, key


def test_oversized_group_jobs_are_named_with_the_group_components_that_fit():
    # two chains a->b, c->d and a lone e: three pieces
    needs = {"b": ["a"], "d": ["c"], "a": [], "c": [], "e": []}
    assert connected_pieces(list(needs), needs.__getitem__) == 3
    rows = [("ngram_eng", "ngram_{language}", 19, 210, 8), ("small", "small", 2, 60, 2),
            ("alone", "alone", 3, 90, 1), ("untimed", "untimed", 3, None, 3)]
    assert oversized_groups(rows, 60) == [
        "group job 'ngram_eng' (19 jobs in 8 pieces) would ask for 210 minutes, more than "
        "resources.max_runtime (60): give its group fewer pieces, e.g. `--group-components "
        "'ngram_{language}=2'` on the command line, or make group jobs wider (a larger `cores` "
        "in your site profile)",
        "group job 'alone' (3 jobs in 1 pieces) would ask for 90 minutes, more than "
        "resources.max_runtime (60): one piece of the workflow already takes that long in one "
        "group; raise resources.max_runtime if your site allows, or a larger `cores`"]


def test_unknown_partitions_are_named_with_their_rules():
    wanted = {"cpu": {"train_ngram"}, "gpu": {"train_neural", "marginal_lm"}}
    assert unknown_partitions(wanted, {"cpu", "a100"}) == [
        "slurm_partition 'gpu' (rules marginal_lm, train_neural) is not a partition of this "
        "cluster; expected one of a100, cpu (`sinfo`), set in your site profile's "
        "default-resources or set-resources"]
    assert unknown_partitions(wanted, {"cpu"}, {"gpu": {"set-resources of train_neural"}})[0] \
        .startswith("slurm_partition 'gpu' (set in set-resources of train_neural; rules ")
    assert unknown_partitions(wanted, {"cpu", "gpu"}) == []


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


# -- docs/cluster.md --------------------------------------------------------------------------

def _fenced(language: str) -> list[str]:
    text = DOCS.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.M | re.S)


def test_docs_profile_snippets_are_profiles_snakemake_accepts():
    """Every YAML snippet of docs/cluster.md parses, and its top-level keys are Snakemake options
    (a snippet of the workflow's config, marked by a first comment line `# config`, is checked
    against the config schema's `resources` block instead)."""
    options = _snakemake_options()
    schema = _load(ROOT / "workflow" / "schemas" / "config.schema.yaml")
    resources = set(schema["properties"]["resources"]["properties"])
    snippets = _fenced("yaml")
    assert snippets
    for snippet in snippets:
        data = yaml.safe_load(snippet)
        assert isinstance(data, dict), snippet
        if snippet.startswith("# config"):
            assert set(data) == {"resources"} and set(data["resources"]) <= resources, snippet
        else:
            assert not set(data) - options, (set(data) - options, snippet)
            config = (data.get("config") or {}).get("resources") or {}
            assert set(config) <= resources, snippet


def test_docs_snakemake_commands_name_real_options_and_files():
    """Every `snakemake` command of docs/cluster.md's shell snippets uses options Snakemake has
    and the repository's profile folders (the command itself, with the template as the site
    profile, is dry-run by test_the_template_plans_the_study)."""
    options = _snakemake_options() | {"help"}
    commands = [line for snippet in _fenced("bash") for line in snippet.splitlines()
                if "snakemake" in line and not line.lstrip().startswith("#")]
    assert commands
    for line in commands:
        own = line.split("snakemake", 1)[1]  # an sbatch wrapped around it has its own options
        for option in re.findall(r"(?<![\w-])--([a-z][\w-]*)", own):
            assert option in options, (option, line)
        for folder in re.findall(r"--workflow-profile (\S+)", line):
            assert (ROOT / folder / "profile.yaml").is_file(), line
