"""The documentation's Snakemake commands, run (runs Snakemake): each `snakemake ...` line of
README.md and docs/*.md dry-runs as tests/unit/test_docs.py describes, and the Europarl recipe
without its digests stops at start-up naming the missing pairs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, SNAKEMAKE, VENV_BIN, make_workdir, slurm_not_answering
from test_docs import BLOCKS, COMMANDS, SHELL_LANGS, _program, _project_commands


def _profile_snippets() -> dict[str, tuple[str, str]]:
    """Profile name -> (file name, YAML text), for the snippets whose first line is a comment
    naming ``.../<name>/profile.yaml`` (or ``config.yaml``)."""
    found = {}
    for _, _, lang, text in BLOCKS:
        m = re.match(r"^#\s*\S*/([^/\s]+)/(profile\.yaml|config\.yaml)\b", text)
        if lang == "yaml" and m:
            found[m.group(1)] = (m.group(2), text)
    return found


def _copied_profiles() -> dict[str, Path]:
    """Profile path -> repository folder, for the docs' ``cp -r <folder> <path>`` lines (a site
    profile made from the shipped template: the dry run reads the template as copied)."""
    found = {}
    for _, _, lang, text in BLOCKS:
        if lang not in SHELL_LANGS:
            continue
        for m in re.finditer(r"^\s*cp -r (\S+) (\S+)", text, flags=re.M):
            if (ROOT / m.group(1)).is_dir():
                found[m.group(2)] = ROOT / m.group(1)
    return found


def _fill_europarl_digests(config_path: Path) -> None:
    """Step 1 of the Europarl recipe (docs/adding.md): a sha256 for every configured pair (any
    64 hex digits: a dry run downloads nothing)."""
    cfg = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    block = cfg.get("corpora", {}).get("europarl", {})
    if block.get("enabled") and isinstance(block.get("sha256"), dict):
        block["sha256"] = {pair: "0" * 64 for pair in block["sha256"]}
        config_path.write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")


def _dry_run(tokens: list[str], tmp_path: Path, fill_digests: bool = True):
    args = tokens[1:]
    config_dir = ROOT / "config" if "--configfile" in args else ROOT / "tests" / "config"
    wd = make_workdir(tmp_path / "wd", config_dir)
    snippets, copies = _profile_snippets(), _copied_profiles()
    resolved = []
    for i, arg in enumerate(args):
        option = args[i - 1] if i else ""
        if option == "--profile" and arg in copies:
            folder = tmp_path / "profiles" / Path(arg).name
            shutil.copytree(copies[arg], folder)
            arg = str(folder)
        elif option == "--profile" and arg in snippets:
            folder = tmp_path / "profiles" / arg
            folder.mkdir(parents=True)
            name, text = snippets[arg]
            (folder / name).write_text(text, encoding="utf-8")
            arg = str(folder)
        elif option in ("--profile", "--workflow-profile"):
            assert (ROOT / arg).is_dir(), f"{option} {arg}: no snippet of the docs and no " \
                                          f"folder of the repository defines it"
            arg = str(ROOT / arg)
        elif option == "--configfile" and fill_digests:
            _fill_europarl_digests(wd / arg)
        resolved.append(arg)
    cmd = [SNAKEMAKE, "--snakefile", str(ROOT / "Snakefile"), "--dry-run", *resolved]
    # The docs' site profile is the template, whose partition and account are placeholders
    # until a user edits them: where a SLURM cluster answers on this machine (the SLURM tests
    # start one), the start-up check would rightly refuse them. The docs' commands are dry-run
    # as on a machine whose SLURM commands do not answer (the check then only notes it).
    silent = slurm_not_answering(tmp_path / "no-slurm")
    env = dict(os.environ, PATH=os.pathsep.join([str(silent), str(VENV_BIN),
                                                 os.environ.get("PATH", "")]))
    return subprocess.run(cmd, cwd=wd, capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.e2e
@pytest.mark.parametrize("where,tokens", _project_commands({"snakemake"}))
def test_snakemake_command_dry_runs(where, tokens, tmp_path):
    proc = _dry_run(tokens, tmp_path)
    assert proc.returncode == 0, f"{where}: {' '.join(tokens)}\n{proc.stderr[-3000:]}"
    # A target the tests' resources already hold (KenLM's programs) plans nothing.
    out = proc.stdout + proc.stderr
    assert "This was a dry-run" in out or "Nothing to be done" in out, out[-2000:]


@pytest.mark.e2e
def test_europarl_without_digests_names_the_missing_pairs(tmp_path):
    """The recipe's comment: until every pair has its sha256 the run stops at start-up and
    names the missing pairs."""
    europarl = [tokens for _, tokens in COMMANDS
                if _program(tokens) == "snakemake" and "config/europarl/config.yaml" in tokens]
    assert europarl, "the Europarl command is gone from the docs"
    proc = _dry_run(europarl[0], tmp_path, fill_digests=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "`corpora.europarl.sha256` has no digest for the pair(s) bg-en, cs-en" in output, \
        output[-2000:]
