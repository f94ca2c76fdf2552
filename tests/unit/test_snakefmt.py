"""The rules' formatting: `snakefmt --check` is clean on the Snakefile and workflow/rules (no
Snakemake run). The workflow's lint and dry runs: tests/workflow/test_workflow.py."""

import subprocess

from conftest import ROOT, VENV_BIN


def test_snakefmt_check_is_clean():
    proc = subprocess.run([str(VENV_BIN / "snakefmt"), "--check", "Snakefile", "workflow/rules"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
