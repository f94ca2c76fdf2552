"""`make setup`'s parallel install (workflow/scripts/install_requirements.py): pip's resolution
split into shares that together hold every package once, and the script's answers to bad
arguments and to a requirements file with nothing left to install, run for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, workflow_script

SCRIPT = ROOT / "workflow" / "scripts" / "install_requirements.py"
install_requirements = workflow_script("install_requirements")


def run_script(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """The script run for real, with pip offline (no index, an empty folder of wheels: it
    answers at once)."""
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(folder))
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=300, env=env)


@pytest.mark.parametrize("n, streams", [(0, 2), (1, 2), (2, 2), (7, 2), (154, 2), (10, 3),
                                        (5, 1), (3, 8)])
def test_shares_hold_every_line_once_in_pips_order(n, streams):
    lines = [f"package-{i}==1.{i}" for i in range(n)]
    shares = install_requirements.shares(lines, streams)
    assert sorted(line for share in shares for line in share) == sorted(lines)
    assert len(shares) == min(n, streams) and all(shares)
    for share in shares:  # each share keeps pip's order, and their sizes differ by one at most
        assert share == sorted(share, key=lines.index)
    assert max(map(len, shares), default=0) - min(map(len, shares), default=0) <= 1


def test_resolved_reads_pins_and_urls_from_pips_report(tmp_path, monkeypatch):
    report = {"install": [
        {"is_direct": False, "metadata": {"name": "torch", "version": "2.13.0+cpu"},
         "download_info": {"url": "file:///opt/wheels/torch.whl"}},
        {"is_direct": True, "metadata": {"name": "local", "version": "0.1"},
         "download_info": {"url": "file:///src/local"}},
        {"is_direct": False, "metadata": {"name": "PyYAML", "version": "6.0.3"},
         "download_info": {"url": "https://files.example/pyyaml.whl"}}]}

    def fake_pip(cmd, *args, **kwargs):
        assert "--dry-run" in cmd and "--report" in cmd
        Path(cmd[cmd.index("--report") + 1]).write_text(json.dumps(report), encoding="utf-8")
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(install_requirements.subprocess, "run", fake_pip)
    assert install_requirements.resolved(tmp_path / "r.txt", tmp_path) == [
        "torch==2.13.0+cpu", "file:///src/local", "PyYAML==6.0.3"]


def test_nothing_left_to_install_runs_pip_for_real(tmp_path):
    """Packages this environment has: pip resolves nothing to install, and pip check passes."""
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("pyyaml\npytest\n", encoding="utf-8")
    proc = run_script(tmp_path, str(requirements))
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("args, message", [
    (["missing.txt"], "missing.txt: no such file"),
    (["."], ": not a file"),
    (["REQ", "--streams", "0"], "--streams: expected a positive number, got 0"),
    (["REQ", "--streams", "two"], "invalid int value: 'two'"),
])
def test_bad_arguments_are_named(tmp_path, args, message):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("pyyaml\n", encoding="utf-8")
    args = [str(requirements) if a == "REQ" else str(tmp_path / a) if a.endswith(".txt") else a
            for a in args]
    proc = run_script(tmp_path, *args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_unresolvable_requirement_fails_naming_the_file(tmp_path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("this-package-does-not-exist-fairppl==0.0.1\n", encoding="utf-8")
    proc = run_script(tmp_path, str(requirements))
    assert proc.returncode == 1, proc.stderr
    assert f"pip could not resolve {requirements}" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_share_pip_cannot_install_fails_naming_its_packages(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    with pytest.raises(SystemExit, match="installing one of: absent-fairppl-a==1.0, "
                                         "absent-fairppl-b==2.0"):
        install_requirements.install(["absent-fairppl-a==1.0", "absent-fairppl-b==2.0"], 2,
                                     tmp_path)
