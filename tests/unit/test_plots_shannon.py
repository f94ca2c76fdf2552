"""Panel (c) of the Shannon figure (fairppl.report.plots_shannon.rank_shares): floating-point
residue left where tie-shared fractions cancel is not plotted as a rank frequency."""

from __future__ import annotations

import polars as pl
import pytest

from fairppl.report.plots_shannon import RESIDUE, rank_shares


def test_rank_shares_drop_floating_point_residue():
    part = pl.DataFrame({"rank": [4, 1, 2, 3, 5, 6],
                         "count": [2.5, 5.0, 3e-16, 2.5, -1e-17, 0.0]})
    got = rank_shares(part)
    assert got["rank"].to_list() == [1, 3, 4]
    assert got["share"].to_list() == pytest.approx([0.5, 0.25, 0.25])
    # a genuine small count (a tie shared by 1,000 outcomes) stays
    small = rank_shares(pl.DataFrame({"rank": [1, 2], "count": [1.0, 1e-3]}))
    assert small["rank"].to_list() == [1, 2]
    assert small["share"][1] == pytest.approx(1e-3 / 1.001)
    # the threshold is relative to the bettor's total truncations
    big = rank_shares(pl.DataFrame({"rank": [1, 2], "count": [1e6, 1e6 * RESIDUE / 2]}))
    assert big["rank"].to_list() == [1]
    assert rank_shares(pl.DataFrame({"rank": [1], "count": [0.0]})).height == 0
