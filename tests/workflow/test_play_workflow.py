"""The Shannon game's player files in the workflow (runs Snakemake): a dry run refuses a player
file cut short, as the workflow parses it. The game itself: tests/unit/test_play.py."""

from __future__ import annotations

import pytest

from test_play import _played
from test_play import campaign  # noqa: F401  a fixture: pytest finds it by name here


@pytest.mark.e2e
def test_a_dry_run_refuses_a_player_file_cut_short(campaign, tmp_path):
    """The check runs when Snakemake parses the workflow: the dry run stops with the line."""
    import yaml

    from conftest import ROOT, make_workdir, snakemake

    game = _played(campaign)
    with game.files.bets.open("ab") as handle:
        handle.write(b'{"id": "t0000')
    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    overlay = tmp_path / "players.yaml"
    overlay.write_text(yaml.safe_dump({"shannon": {"players": [
        {"campaign": str(campaign.folder), "player": "gil", "protocol": "money"}]}}))
    proc = snakemake(wd, "--dry-run", "--configfile", str(wd / "config" / "config.yaml"),
                     str(overlay))
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert f"{game.files.bets}, line 4: the last line is cut short" in out, out[-3000:]
    assert game.files.bets.read_bytes().endswith(b'"t0000')  # the run changed nothing
