"""A site profile and `--config` in Snakemake's dry runs (runs Snakemake): the template's numbers
plan the study, command-line numbers are numbers, a replaced value is noted (and in the report's
settings), `set-resources` of an unknown rule, accounts, partitions and QOS are refused before
submitting, a failed group submission fails instead of hanging, and `fairppl profile check`
names file, line, key and the right spelling. SLURM's commands are stand-ins on PATH; the
checks without Snakemake: tests/unit/test_site_profile.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, SNAKEMAKE, VENV_BIN, workdir_of_test_config
from fairppl.config.overrides import ORIGIN
from test_site_profile import TEMPLATE, TESTS_PROFILE, WORKFLOW_PROFILE, _profile_check


SLURM_COMMANDS = ("sbatch", "squeue", "sacct", "sacctmgr", "scontrol", "sinfo", "sshare",
                  "srun", "scancel")


def _bin_without_slurm(tmp: Path, **answers: str) -> Path:
    """A folder of links to every program on PATH but SLURM's, with stand-ins printing
    ``answers`` (command -> its standard output; a value starting with `exit ` fails, as do the
    SLURM commands not named where any is)."""
    folder = tmp / "bin"
    folder.mkdir()
    for directory in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for name in os.listdir(directory):
            target = os.path.join(directory, name)
            if name in SLURM_COMMANDS or (folder / name).exists() or not os.access(target,
                                                                                  os.X_OK):
                continue
            (folder / name).symlink_to(target)
    if answers:  # the others answer nothing (the executor plugin wants squeue or sacct)
        answers = {**{command: "exit no answer" for command in SLURM_COMMANDS}, **answers}
    for command, output in answers.items():
        body = (f"echo '{command}: error: {output[5:]}' >&2; exit 1"
                if output.startswith("exit ") else f"cat <<'EOF'\n{output}\nEOF")
        (folder / command).write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        (folder / command).chmod(0o755)
    return folder


def _dry_run(wd: Path, *args: str, path: Path | None = None) -> tuple[int, str]:
    env = dict(os.environ, PATH=str(path) if path else
               f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run([SNAKEMAKE, "-n", "--snakefile", str(ROOT / "Snakefile"),
                           "--directory", str(wd), *args], capture_output=True, text=True,
                          env=env, cwd=wd, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def _site(tmp: Path, source: Path, edit) -> Path:
    site = tmp / "site"
    site.mkdir()
    profile = yaml.safe_load((source / "profile.yaml").read_text(encoding="utf-8"))
    edit(profile)
    (site / "profile.yaml").write_text(yaml.safe_dump(profile), encoding="utf-8")
    return site


@pytest.mark.e2e
def test_the_templates_numbers_plan_the_study_and_replacements_are_noted(tmp_path, tiny_model):
    """The site template with numbers in its `config:` block (marginal.lm.pass_tokens) plans
    the study; its `max_runtime: 1440` over an overlay's 600 is noted at start-up; the
    account and partitions it names pass the stand-in sacctmgr's and sinfo's lists."""
    wd = workdir_of_test_config(tmp_path / "wd", tiny_model)
    (wd / "config" / "site.yaml").write_text("resources: {max_runtime: 600, gpu: 0}\n",
                                             encoding="utf-8")

    def edit(profile):
        profile["config"]["marginal"] = {"lm": {"pass_tokens": 16384}}
    site = _site(tmp_path, TEMPLATE, edit)
    path = _bin_without_slurm(tmp_path, sinfo="cpu\ngpu", sacctmgr="my-project")
    code, said = _dry_run(wd, "--configfile", "config/config.yaml", "config/site.yaml",
                          "--workflow-profile", str(WORKFLOW_PROFILE), "--profile", str(site),
                          path=path)
    assert code == 0, said[-4000:]
    assert "note: resources.max_runtime: 1440 from the command line or a profile replaces 600 " \
           "in config/site.yaml" in said.splitlines(), said[-4000:]
    assert "note: resources.gpu: 1 from the command line or a profile replaces 0 in " \
           "config/site.yaml" in said.splitlines()
    assert "not of type" not in said and "note: the SLURM" not in said


@pytest.mark.e2e
def test_command_line_numbers_are_numbers(tmp_path, tiny_model):
    wd = workdir_of_test_config(tmp_path / "wd", tiny_model)
    code, said = _dry_run(wd, "--config", "shannon={units_per_call: 8}",
                          "scoring={max_units: 5}", "marginal={lm: {pass_tokens: 16384}}")
    assert code == 0, said[-4000:]
    assert "note: scoring.max_units: 5 from the command line or a profile replaces 20 in " \
           "config/config.yaml" in said.splitlines(), said[-3000:]
    code, said = _dry_run(wd, "--config", "marginal={lm: {pass_tokens: lots}}")
    assert code != 0
    assert f"invalid input: field 'marginal.lm.pass_tokens' {ORIGIN}: 'lots' is not of type " \
           f"'integer', 'null'" in said, said[-3000:]
    assert "config/config.yaml: field 'marginal.lm.pass_tokens'" not in said


#: The workflow read through Snakemake's API with `--config` values as the command line gives
#: them (text): prints the notes of the report's settings (report_settings() of metrics.smk).
REPORT_NOTES = """\
import json, sys
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings
with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
    workflow = api.workflow(resource_settings=ResourceSettings(cores=1),
                            config_settings=ConfigSettings(config=json.loads(sys.argv[3])),
                            snakefile=Path(sys.argv[1]), workdir=Path(sys.argv[2]))._workflow
    print("NOTES", json.dumps(workflow.globals["report_settings"]()["notes"]))
"""


@pytest.mark.e2e
def test_the_replacement_note_is_in_the_reports_settings(tmp_path, tiny_model):
    wd = workdir_of_test_config(tmp_path / "wd", tiny_model)
    proc = subprocess.run([str(VENV_BIN / "python"), "-c", REPORT_NOTES, str(ROOT / "Snakefile"),
                           str(wd), '{"scoring": {"max_units": "5"}}'], capture_output=True,
                          text=True, timeout=300)
    line = next((line for line in proc.stdout.splitlines() if line.startswith("NOTES ")), None)
    assert line is not None, proc.stderr[-3000:]
    notes = json.loads(line[len("NOTES "):])
    assert notes[0] == ("scoring.max_units: 5 from the command line or a profile replaces 20 in "
                        "config/config.yaml"), notes


@pytest.mark.e2e
def test_a_set_resources_rule_that_no_rule_has_is_refused(tmp_path, tiny_model):
    wd = workdir_of_test_config(tmp_path / "wd", tiny_model)
    code, said = _dry_run(wd, "--set-resources", "train_nueral:mem_mb=9000",
                          "--set-threads", "score_neural=2")
    assert code != 0
    assert ("invalid input: set-resources names rule 'train_nueral', which the workflow does "
            "not have (misspelt?), so the setting would be ignored; expected a rule of the "
            "workflow such as train_neural") in said, said[-3000:]


@pytest.mark.e2e
@pytest.mark.parametrize("situation", ["wrong", "no-slurm-commands", "no-accounting"])
def test_accounts_partitions_and_qos_are_checked_before_submitting(tmp_path, tiny_model,
                                                                   situation):
    """The tests' site profile with an account, a QOS and a GPU partition: with stand-ins that
    list other values the dry run stops in one line per wrong value, naming where it was set
    and the valid ones; without SLURM's commands, or where sacctmgr fails (no accounting),
    it goes on and says what it did not check."""
    wd = workdir_of_test_config(tmp_path / "wd", tiny_model)

    def edit(profile):
        profile["default-resources"]["slurm_account"] = "nosuch"
        profile["set-resources"] = {"train_neural": {"slurm_partition": "gpu", "qos": "long"}}
    site = _site(tmp_path, TESTS_PROFILE, edit)
    answers = {"wrong": {"sinfo": "fairppl\ndebug", "sacctmgr": "proj_a\nproj_b"},
               "no-slurm-commands": {},
               "no-accounting": {"sinfo": "fairppl\ngpu",
                                 "sacctmgr": "exit You are not running a supported "
                                             "accounting_storage plugin"}}[situation]
    path = _bin_without_slurm(tmp_path, **answers)
    code, said = _dry_run(wd, "--workflow-profile", str(WORKFLOW_PROFILE), "--profile",
                          str(site), path=path)
    lines = said.splitlines()
    if situation == "wrong":
        assert code != 0
        assert ("invalid input: slurm_partition 'gpu' (set in set-resources of train_neural; "
                "rules train_neural) is not a partition of this cluster; expected one of debug, "
                "fairppl (`sinfo`), set in your site profile's default-resources or "
                "set-resources") in lines, said[-3000:]
        account = next(line for line in lines if line.startswith("slurm_account 'nosuch'"))
        assert re.fullmatch(
            r"slurm_account 'nosuch' \(set in default-resources; rules \w+, \w+, \w+, \w+ and "
            r"\d+ more\) is not one `sacctmgr show assoc user=\S+ format=account` lists; "
            r"expected one of proj_a, proj_b, set in your site profile's default-resources or "
            r"set-resources", account), account
        # sacctmgr lists QOS the same way: "proj_a" and "proj_b" are not "long"
        assert any(line.startswith("qos 'long' (set in set-resources of train_neural; rules "
                                   "train_neural) is not one `sacctmgr") for line in lines)
        return
    assert code == 0, said[-3000:]
    if situation == "no-slurm-commands":
        assert "note: the SLURM partitions were not checked: sinfo is not on PATH" in lines
        assert "note: the SLURM accounts were not checked: sacctmgr is not on PATH" in lines
    else:
        assert any(line.startswith("note: the SLURM accounts were not checked: `sacctmgr -n -P "
                                   "show assoc") and "accounting may not be configured" in line
                   for line in lines), said[-3000:]


GROUP_SNAKEFILE = """\
from fairppl.config.cluster import report_failed_group_submissions

report_failed_group_submissions()


rule b:
    input:
        "a.txt",
    output:
        "b.txt",
    group:
        "g"
    shell:
        "touch {output}"


rule a:
    output:
        "a.txt",
    group:
        "g"
    shell:
        "touch {output}"
"""


@pytest.mark.e2e
def test_a_group_job_whose_submission_fails_fails_instead_of_hanging(tmp_path):
    """Plugin 2.8.0 refuses a wrong account (its own sacctmgr check) in a handler that fails on
    a group job: without fairppl.config.cluster.report_failed_group_submissions the run waits
    for ever, even after SIGTERM (tried: killed after 60 s). With it, the group job fails with
    the plugin's message and is retried like a single job, and the run ends."""
    import signal

    (tmp_path / "Snakefile").write_text(GROUP_SNAKEFILE, encoding="utf-8")
    path = _bin_without_slurm(tmp_path, sinfo="p", sacctmgr="other")
    child = subprocess.Popen(
        [SNAKEMAKE, "--executor", "slurm", "--jobs", "1", "--retries", "1",
         "--default-resources", "slurm_partition=p", "slurm_account=nosuch",
         "--slurm-init-seconds-before-status-checks", "1", "b.txt"],
        cwd=tmp_path, env=dict(os.environ, PATH=f"{path}"), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = child.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        pytest.fail("the run waits for the group job whose submission failed")
    assert child.returncode != 0
    failed = [line for line in out.splitlines() if line.startswith("Submitting group job g failed")]
    assert len(failed) == 2, out[-3000:]  # the first attempt and its retry
    assert failed[0] == ("Submitting group job g failed: The given account nosuch appears to be "
                         "invalid. Available accounts:")
    assert not (tmp_path / "b.txt").exists()


@pytest.mark.e2e
def test_profile_check_names_file_line_key_and_the_right_spelling(tmp_path):
    """What Snakemake answers with its usage text (a misspelt or unknown key) or ignores (a
    misspelt rule name), and a `config:` value the schema refuses, each on its line."""
    text = (TEMPLATE / "profile.yaml").read_text(encoding="utf-8")
    text = text.replace("latency-wait: 60", "latency_wait: 60")
    text = text.replace("  score_neural: *gpu", "  score_nueral: *gpu")
    text = text.replace("    max_runtime: 1440", "    max_runtime: a day")
    text += "frobnicate: 1\n"
    site = tmp_path / "site"
    site.mkdir()
    (site / "profile.yaml").write_text(text, encoding="utf-8")
    lines = text.splitlines()

    def line_of(start):
        return next(i for i, line in enumerate(lines, 1) if line.startswith(start))
    file = str(site / "profile.yaml")
    proc = _profile_check(site)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"error: {file}, line {line_of('latency_wait')}: key 'latency_wait' is not an option of "
        f"Snakemake, which would stop with its usage text; expected an option such as "
        f"latency-wait",
        f"error: {file}, line {line_of('frobnicate')}: key 'frobnicate' is not an option of "
        f"Snakemake, which would stop with its usage text; expected a Snakemake option "
        f"(`snakemake --help` lists them; a key is an option without its `--`)",
        f"error: {file}, line {line_of('  score_nueral')}: set-resources: 'score_nueral' is "
        f"not a rule of the workflow, so its setting would be ignored; expected a rule such as "
        f"score_neural, score_word_ngram, score_pretrained",
        f"error: {file}, line {line_of('    max_runtime')}: field 'resources.max_runtime' in "
        f"the config: block: 'a day' is not of type 'integer'; expected: minutes: the most any "
        f"job asks for (the site's longest job, `sinfo -o \"%P %l\"`); the runtime growth stops "
        f"there, and a group job over it stops the run before submitting"]
    # what Snakemake itself says about the first: its usage text, without the file
    proc = subprocess.run([SNAKEMAKE, "-n", "--profile", str(site)], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode != 0
    assert "unrecognized arguments: --latency_wait=60" in proc.stderr
    assert len(proc.stderr.splitlines()) > 50
