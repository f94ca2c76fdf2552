"""The SLURM profiles without a cluster and without Snakemake runs (the cluster itself:
tests/cluster/test_slurm.py; the profiles in dry runs:
tests/workflow/test_cluster_profiles_runs.py):
the workflow profile holds only the workflow's keys, the site template and the tests' site profile
cannot drift apart, every key and snippet is one Snakemake accepts, and a job's runtime grows with
its attempt and its units."""

from __future__ import annotations

import re

import yaml

from conftest import ROOT
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
