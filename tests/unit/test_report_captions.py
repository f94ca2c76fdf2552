"""The provenance page's captions (workflow/report/*.rst, shown by Snakemake's report) describe
the method the code runs now: checked against the code's defaults and a computation."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

from conftest import ROOT

CAPTIONS = ROOT / "workflow" / "report"


def _caption(name: str) -> str:
    return " ".join((CAPTIONS / name).read_text(encoding="utf-8").split())


def test_difficulty_caption_states_the_normalisation_the_fit_uses():
    from fairppl.morphology import difficulty as d

    default = inspect.signature(d.difficulty_table).parameters["normalisation"].default
    assert default == "arithmetic"
    # what "arithmetic" does: the difficulties average 1, their geometric mean is then below 1
    log_d, _ = d._normalise(np.array([0.3, -1.2, 0.9, 0.0]), None, default)
    assert np.exp(log_d).mean() == pytest.approx(1.0)
    assert np.exp(log_d.mean()) < 1 - 1e-3
    text = _caption("difficulty.rst")
    assert "average 1" in text and "arithmetic" in text
    assert "geometric mean" not in text
    default_model = inspect.signature(d.difficulty_table).parameters["model"].default
    assert f"{default_model}, the authors' published one, by default" in text


def test_morphology_caption_states_the_permutation_test():
    from fairppl.morphology import regression

    source = inspect.getsource(regression.regress)
    assert "slope_test(" in source and "bootstrap" not in source
    text = _caption("morphology.rst")
    assert "permutation test of the slope" in text and "inverts that test" in text
    assert "Benjamini-Hochberg" in text
    assert not re.search(r"bootstrap[^.;]*over languages", text)
