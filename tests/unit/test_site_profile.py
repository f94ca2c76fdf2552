"""A site profile and `--config` as a cluster user gives them (issue 37): numbers are numbers
wherever they come from, a value the schema refuses names where it came from, a profile's value
that replaces the config file's is noted, and `fairppl profile check`'s findings in a broken
file. In Snakemake's dry runs (a misspelt key or rule name named with its file, line and the
right spelling; the checks of the planned run, which stop a dry run as they stop a real run):
tests/workflow/test_site_profile_runs.py.

SLURM's commands are stand-ins on PATH (scripts that print what sinfo and sacctmgr would, or
nothing on PATH at all); the real cluster is tests/cluster/test_slurm.py's."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, VENV_BIN
from fairppl.config.cluster import unknown_rule_names, unknown_values
from fairppl.config.overrides import (
    CONFIG_SCHEMA,
    ORIGIN,
    read_schema,
    replaced_notes,
    type_overrides,
    typed,
)
from fairppl.config.profile import profile_problems, workflow_rules
from fairppl.core.errors import InputError

WORKFLOW_PROFILE = ROOT / "workflow" / "profiles" / "slurm"
TEMPLATE = ROOT / "workflow" / "profiles" / "site-template"
TESTS_PROFILE = ROOT / "tests" / "slurm"
SCHEMA = read_schema(CONFIG_SCHEMA)


# -- typing -----------------------------------------------------------------------------------

def test_text_is_read_as_the_schema_wants_it():
    """Snakemake's text for a profile's or the command line's nested values becomes what the
    schema wants at its place; a text that fits as text stays text."""
    given = {"marginal": {"lm": {"pass_tokens": "16384", "lanes": "2"}},
             "shannon": {"units_per_call": "8", "list_lengths": ["1", "10", "all"]},
             "scoring": {"max_units": "None"},
             "kenlm": {"version": "0.3", "discount_fallback": "False"},
             "resources": {"runtime_growth": "1.5", "memory_mb": {"train_neural": "6000"}},
             "languages": "123"}
    assert typed(given, SCHEMA) == {
        "marginal": {"lm": {"pass_tokens": 16384, "lanes": 2}},
        "shannon": {"units_per_call": 8, "list_lengths": [1, 10, "all"]},
        "scoring": {"max_units": None},
        "kenlm": {"version": "0.3", "discount_fallback": False},
        "resources": {"runtime_growth": 1.5, "memory_mb": {"train_neural": 6000}},
        "languages": "123"}
    # a text that fits nowhere is left for the schema to name
    assert typed({"marginal": {"lm": {"pass_tokens": "lots"}}}, SCHEMA) == \
        {"marginal": {"lm": {"pass_tokens": "lots"}}}


def test_a_value_that_does_not_fit_names_its_origin_not_the_config_file():
    config = {"marginal": {"lm": {"pass_tokens": None}}}
    with pytest.raises(InputError) as err:
        type_overrides(config, {"marginal": {"lm": {"pass_tokens": "lots"}}}, SCHEMA)
    assert str(err.value).startswith(
        f"field 'marginal.lm.pass_tokens' {ORIGIN}: 'lots' is not of type 'integer', 'null'; "
        f"expected: new positions per forward pass")
    with pytest.raises(InputError) as err:  # the key's earlier name: its new one
        type_overrides({}, {"marginal": {"lm": {"batch_tokens": "16384"}}}, SCHEMA)
    assert str(err.value) == (
        f"field 'marginal.lm.batch_tokens' {ORIGIN}: renamed to 'marginal.lm.pass_tokens' (the "
        f"same setting); expected pass_tokens: in place of batch_tokens:")
    with pytest.raises(InputError, match=re.escape(
            f"field 'scoring.max_unit' {ORIGIN}: unknown key 'max_unit' in block 'scoring' "
            f"(misspelt?); expected keys among ['batch_size', 'chunk_units', 'max_units']")):
        type_overrides({}, {"scoring": {"max_unit": "5"}}, SCHEMA)
    # the typed values land in the merged config
    config = {"scoring": {"max_units": "5", "batch_size": 8}}
    assert type_overrides(config, {"scoring": {"max_units": "5"}}, SCHEMA) == \
        {"scoring": {"max_units": 5}}
    assert config == {"scoring": {"max_units": 5, "batch_size": 8}}


def test_a_replaced_config_file_value_is_noted(tmp_path):
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text(
        "resources: {max_runtime: 600, gpu: 1}\nscoring: {max_units: 20}\n", encoding="utf-8")
    (tmp_path / "overlay.yaml").write_text("resources: {gpu: 0}\n", encoding="utf-8")
    notes = replaced_notes({"resources": {"max_runtime": 1440, "gpu": 0},
                            "scoring": {"max_units": 20}, "shannon": {"units_per_call": 8}},
                           ["config/config.yaml", "overlay.yaml"], cwd=str(tmp_path))
    # gpu: the overlay already says 0; max_units: the same value; units_per_call: no file has it
    assert notes == ["resources.max_runtime: 1440 from the command line or a profile replaces "
                     "600 in config/config.yaml"]


# -- the workflow's start-up checks, without Snakemake --------------------------------------


def test_a_number_out_of_bounds_is_refused_for_its_bound_not_its_type():
    """A number given as text that the schema's type takes but its bound refuses is read as a
    number, so the refusal names the bound (it said "'0' is not of type 'integer'")."""
    with pytest.raises(InputError) as err:
        type_overrides({}, {"shannon": {"units_per_call": "0"}}, SCHEMA)
    assert str(err.value).startswith(
        f"field 'shannon.units_per_call' {ORIGIN}: 0 is less than the minimum of 1; expected")
    with pytest.raises(InputError) as err:
        type_overrides({}, {"scoring": {"max_units": "2.5"}}, SCHEMA)
    assert str(err.value).startswith(
        f"field 'scoring.max_units' {ORIGIN}: 2.5 is not of type 'integer', 'null'; expected")
    # text where text is allowed stays text
    assert typed({"kenlm": {"version": "0"}}, SCHEMA) == {"kenlm": {"version": "0"}}


def test_checks_of_named_values():
    assert unknown_rule_names({"set-threads": ["score_nural", "train_ngram"]},
                              ["score_neural", "train_ngram"]) == [
        "set-threads names rule 'score_nural', which the workflow does not have (misspelt?), "
        "so the setting would be ignored; expected a rule of the workflow such as score_neural"]
    wanted = {"Proj": ({"default-resources"}, {"a"}), "other": ({"set-resources of b"}, {"b"})}
    # accounts are compared as the executor plugin compares them: without case
    assert unknown_values("slurm_account", wanted, {"proj"}, "sacctmgr",
                          case_sensitive=False) == [
        "slurm_account 'other' (set in set-resources of b; rules b) is not one sacctmgr lists; "
        "expected one of proj, set in your site profile's default-resources or set-resources"]


# -- fairppl profile check --------------------------------------------------------------------

def _profile_check(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(VENV_BIN / "fairppl"), "profile", "check", str(path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_profile_check_passes_the_shipped_profiles():
    for folder in (TEMPLATE, TESTS_PROFILE, WORKFLOW_PROFILE):
        proc = _profile_check(folder)
        assert proc.returncode == 0, proc.stderr
        assert "every key is a Snakemake option" in proc.stdout


def test_profile_problems_of_a_broken_file(tmp_path):
    rules = workflow_rules(ROOT)
    assert {"train_neural", "score_neural", "all", "report"} <= set(rules)
    profile = tmp_path / "profile.yaml"
    profile.write_text("jobs: 4\njobs: 5\n", encoding="utf-8")
    assert profile_problems(profile, str(CONFIG_SCHEMA), rules) == [
        f"{profile}, line 2: key 'jobs' is given twice in one mapping (first on line 1); "
        f"expected each key once"]
    profile.write_text("jobs: [4\n", encoding="utf-8")
    [problem] = profile_problems(profile, str(CONFIG_SCHEMA), rules)
    assert problem.startswith(f"{profile}, line 2: YAML syntax error")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no profile.yaml or config.yaml in this folder"):
        profile_problems(tmp_path / "empty", str(CONFIG_SCHEMA), rules)
    # a file that is not text (a binary copied by mistake): one line, no traceback
    profile.write_bytes(b"jobs: 4\n\xd0\x00\xff\n")
    assert profile_problems(profile, str(CONFIG_SCHEMA), rules) == [
        f"{profile}: invalid UTF-8 at byte 8: expected a UTF-8 YAML file of Snakemake options"]
