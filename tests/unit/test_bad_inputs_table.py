"""docs/troubleshooting.md's table against the catalogue of bad inputs
(tests/workflow/test_bad_inputs.py): one row per case, and the count the page gives."""

from __future__ import annotations

import re

from conftest import ROOT
from test_bad_inputs import CASES, troubleshooting_rows


def test_troubleshooting_says_how_many_cases_there_are():
    """The count the page gives (issue 37 asked for it) is the catalogue's."""
    text = (ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
    said = re.search(r"The catalogue holds (\d+) cases", text)
    assert said, "docs/troubleshooting.md no longer says how many cases the catalogue holds"
    assert int(said[1]) == len(CASES) == len(troubleshooting_rows())


def test_troubleshooting_table_lists_every_case():
    rows = troubleshooting_rows()
    assert sorted(rows) == sorted(CASES)
    assert len(rows) >= 20
