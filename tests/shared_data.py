"""The real archives and published figures beside the clone, in ``../shared`` (FLORES-200, the
Bible corpus of Christodouloupoulos & Steedman, the anchors' tables): never committed, present on
a developer's machine and in CI, absent from a user's fresh clone.

A test that needs them takes the fixture ``shared_corpora`` or ``shared_anchors`` (conftest.py),
which calls :func:`require`: the folder's path where it exists; elsewhere the test is skipped
with a line saying what is missing, except where the shared data is required (``CI=true``, or
``FAIRPPL_REQUIRE_SHARED=1``, which ``.ci/run`` sets): there it fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def shared_root(environ=os.environ) -> Path:
    """``$FAIRPPL_SHARED`` where set, else ``shared`` beside the repository."""
    return Path(environ.get("FAIRPPL_SHARED") or ROOT.parent / "shared")


def required(environ=os.environ) -> bool:
    """Whether a missing shared folder fails the tests instead of skipping them."""
    return environ.get("CI") == "true" or environ.get("FAIRPPL_REQUIRE_SHARED") == "1"


def require(name: str, environ=os.environ) -> Path:
    """The shared folder ``name`` (``corpora``, ``anchors``); skip (or fail, :func:`required`)
    the calling test with the reason when it is not there."""
    path = shared_root(environ) / name
    if path.is_dir():
        return path
    reason = (f"{path} not found: this test reads the real archives and published figures "
              f"kept beside the clone (../shared, or FAIRPPL_SHARED=folder)")
    if required(environ):
        pytest.fail(f"{reason}; required here (CI=true or FAIRPPL_REQUIRE_SHARED=1)",
                    pytrace=False)
    pytest.skip(reason)
