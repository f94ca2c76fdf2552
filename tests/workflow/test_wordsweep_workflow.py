"""The word sweep's decision in the workflow (runs Snakemake): the default config's dry run plans
word models for the spaced Bible languages only, and a languages_without_spaces list the data
contradict stops the run. The decision itself: tests/unit/test_wordsweep.py."""

from __future__ import annotations

import polars as pl
import pytest
import yaml

from conftest import ROOT
from fairppl.ngram.word_sweep import DECISION_COLUMNS


@pytest.mark.e2e
def test_languages_without_spaces_get_no_word_jobs(tmp_path):
    """The decision is in the job graph: a dry run of the default config plans word models for
    the 20 spaced Bible languages and none for zho or jpn, plus the decision table."""
    from conftest import make_workdir, snakemake

    wd = make_workdir(tmp_path / "wd", ROOT / "config")
    proc = snakemake(wd, "--dry-run", "--forceall", "--quiet", "rules", "--printshellcmds",
                     "--verbose")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout + proc.stderr
    scored = {line.split("/")[3] for line in out.split()
              if line.startswith("results/scores/bible/") and ".word-v" in line}
    assert len(scored) == 20 and not scored & {"zho", "jpn"}, sorted(scored)
    assert "results/scores/bible/zho/kenlm-char-o5.char.parquet" in out
    assert "results/tables/word_sweep_decisions.csv" in out


@pytest.mark.e2e
def test_a_list_the_data_contradict_fails_the_run(tmp_path, resources_ready):
    """The tiny study with Korean listed as written without spaces: the rule measures 2.88
    characters per whitespace token and stops the run with a message naming the language."""
    from conftest import make_workdir, snakemake

    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    cfg_path = wd / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text(encoding="utf-8"))
    cfg["word_ngram"]["languages_without_spaces"] = ["kor"]
    cfg["shannon"]["languages"] = ["eng"]  # the game refuses a language without spaces
    cfg_path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    proc = snakemake(wd, "results/tables/word_sweep_decisions.csv")
    assert proc.returncode != 0
    log = (wd / "logs" / "word_sweep_decisions.log").read_text(encoding="utf-8")
    expected = "corpus 'bible', language 'kor': listed in word_ngram.languages_without_spaces"
    assert expected in log and expected in proc.stderr
    assert "has 2.88 characters per whitespace token (<= max_chars_per_token 8.0)" in log
    assert not (wd / "results" / "tables" / "word_sweep_decisions.csv").exists()
    # With the default list (zho, jpn: not in this sheet) the table is written.
    cfg["word_ngram"].pop("languages_without_spaces")
    cfg_path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    proc = snakemake(wd, "results/tables/word_sweep_decisions.csv")
    assert proc.returncode == 0, proc.stderr[-4000:]
    table = pl.read_csv(wd / "results" / "tables" / "word_sweep_decisions.csv")
    assert table.columns == list(DECISION_COLUMNS)
    assert table.select("corpus", "language", "swept").rows() == [
        ("bible", "eng", True), ("bible", "kor", True), ("bible", "tur", True)]
