"""Apertium in the workflow (runs Snakemake): the test study's MCC tables with Debian's real
apertium-eng-spa analysers, and a missing analyser's package refused at start-up. The tag mapping
itself: tests/unit/test_apertium.py."""

from __future__ import annotations

import pytest

from test_apertium import _real_analyser


@pytest.mark.e2e
def test_mcc_tables_of_the_test_config(study):
    """The test study's MCC tables (Apertium eng, spa, pol): both tables, the published values
    beside the Apertium ones, the validation on the 3 languages with both, English on its verbs
    (the published value's lexicon of that time held verbs only) with the permutation p."""
    import itertools

    import polars as pl
    from scipy.stats import pearsonr

    _real_analyser("pol")
    wd, _ = study
    table = pl.read_csv(wd / "results" / "tables" / "mcc.csv")
    assert table.columns == ["language", "source", "pos", "mcc", "n_forms", "n_lemmas",
                             "forms_per_lemma", "note"]
    totals = {(r["source"], r["language"]): r["mcc"]
              for r in table.filter(pos="total").iter_rows(named=True)}
    assert len([k for k in totals if k[0] == "published"]) == 21
    assert totals["apertium", "eng"] == 12 and totals["apertium", "spa"] == 69
    assert totals["published", "pol"] == 112
    validation = pl.read_csv(wd / "results" / "tables" / "mcc_validation.csv")
    eng = validation.filter(row="language", language="eng").row(0, named=True)
    assert (eng["apertium_pos"], eng["lexicon_pos"], eng["apertium_mcc"]) == ("matched", "verb", 7)
    assert validation.filter(row="language", language="spa")["apertium_mcc"].item() == 69
    corr = validation.filter(row="correlation", apertium_pos="matched").row(0, named=True)
    assert corr["n"] == 3 and corr["language"] == "eng,pol,spa"
    x = [7, totals["apertium", "pol"], 69]
    assert corr["pearson_r"] == pytest.approx(pearsonr(x, [6, 112, 71]).statistic)
    # exact over the 6 orderings of the published values (the first is the observed one)
    rs = [abs(pearsonr(x, list(p)).statistic) for p in itertools.permutations([6, 112, 71])]
    assert corr["permutations"] == 6
    assert corr["permutation_p"] == pytest.approx(sum(r >= rs[0] - 1e-12 for r in rs) / 6)
    assert "pearson_p" not in validation.columns


@pytest.mark.e2e
def test_missing_analyser_is_refused_at_start_up_with_its_package(tmp_path):
    import yaml

    from conftest import ROOT, make_workdir, snakemake

    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    cfg_path = wd / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text(encoding="utf-8"))
    cfg["morphology"]["apertium_dir"] = str(tmp_path / "empty")
    cfg_path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    # refused at start-up (fairppl.config.stages.check_apertium_tools), before any job
    proc = snakemake(wd, "-n", "results/morphology/mcc/apertium/pol.json")
    assert proc.returncode != 0
    assert (f"field 'morphology.apertium_languages': the Apertium MCC source is on (eng, spa, "
            f"pol) but the analysers of eng, spa, pol ({tmp_path / 'empty'} does not exist): "
            f"expected the Debian packages apertium-eng-spa apertium-pol-szl") in (
        proc.stdout + proc.stderr)
    cfg["morphology"]["apertium_languages"] = ["eng", "deu"]
    cfg_path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    proc = snakemake(wd, "-n", "results/tables/mcc.csv")
    assert proc.returncode != 0
    assert "field 'morphology.apertium_languages': ['deu'] have no Apertium analyser" in (
        proc.stdout + proc.stderr)
