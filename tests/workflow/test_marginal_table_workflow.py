"""`snakemake marginal` on the test config (runs Snakemake): the table's exact value is the forward
algorithm's. The table and the job module alone: tests/unit/test_marginal_table.py."""

from __future__ import annotations

import polars as pl
import pytest
import yaml

from conftest import ROOT, ahead, assert_ok, make_workdir, snakemake


@ahead("test_snakemake_marginal_on_the_tiny_config", fixtures=("resources_ready",))
def marginal_run(folder, resources_ready):
    """The run of test_snakemake_marginal_on_the_tiny_config, done ahead: its working folder and
    config."""
    wd = make_workdir(folder / "wd", ROOT / "tests" / "config")
    path = wd / "config" / "config.yaml"
    cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    cfg["marginal"].update(languages=["tur"], max_units=3)
    cfg["marginal"]["lm"]["estimators"] = []
    cfg["marginal"]["lengths"]["languages"] = []  # no length sweep (its languages must be tur's)
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    assert_ok(snakemake(wd, "marginal"))
    return wd, cfg


@pytest.mark.e2e
def test_snakemake_marginal_on_the_tiny_config(request, resources_ready):
    """`snakemake marginal` on the test config, one language, the n-gram estimators only (run
    ahead, :func:`marginal_run`): the table's exact value is the forward algorithm's, never below
    the default, never below nbest."""
    from fairppl.marginal.exact import ngram_marginal
    from fairppl.marginal.units import kenlm_lm

    wd, cfg = marginal_run.result(request)
    table = pl.read_csv(wd / "results" / "tables" / "marginal.csv")
    assert sorted(table["estimator"]) == sorted(cfg["marginal"]["ngram"]["estimators"])
    assert set(table["n_units"]) == {3} and set(table["model"]) == {"kenlm-subword-o3"}
    row = {r["estimator"]: r for r in table.iter_rows(named=True)}
    assert row["exact"]["n_exact_units"] == 3 and row["exact"]["gap_nats"] > 0
    assert row["exact"]["logp_nats"] >= row["nbest"]["logp_nats"] >= row["default"]["logp_nats"]
    out = wd / "results" / "marginal" / "bible" / "tur"
    per_unit = pl.read_parquet(out / "kenlm-subword-o3.spm-unigram-3000.parquet")
    wide = per_unit.pivot(on="estimator", index="unit_id", values="logp")
    assert wide.height == 3
    assert (wide["exact"] >= wide["default"]).all() and (wide["nbest"] <= wide["exact"]).all()
    assert row["exact"]["logp_nats"] == pytest.approx(wide["exact"].sum())
    # 3 units = the tests' min_units: intervals over units, and the Monte Carlo ones from the
    # per-unit K log-weights that the job kept (wr); exact has no Monte Carlo error, wor no
    # variance estimate
    assert set(table["min_units"]) == {3} and table["ci_note"].null_count() == table.height
    assert row["exact"]["logp_mc_ci_low_nats"] == pytest.approx(row["exact"]["logp_nats"])
    assert row["wor"]["logp_mc_ci_low_nats"] is None and "Horvitz" in row["wor"]["mc_note"]
    wr = per_unit.filter(estimator="wr").sort("unit_id")
    if not wr["enumerated"].all():
        assert wr.filter(~pl.col("enumerated"))["log_weights"].list.len().to_list() == [8] * (
            (~wr["enumerated"]).sum())
        assert row["wr"]["logp_mc_ci_low_nats"] < row["wr"]["logp_mc_ci_high_nats"]
    results = wd / "results"
    lm, vocab, _, _ = kenlm_lm(results / "ngram" / "bible" / "tur" / "spm-unigram-3000.o3.kenlm",
                               results / "tokenizers" / "bible" / "tur" / "spm-unigram-3000.model")
    unit = per_unit.filter(estimator="exact").row(1, named=True)
    want = ngram_marginal(lm.model, vocab, unit["text"], lm.words).logp
    assert unit["logp"] == pytest.approx(want, abs=1e-9)
    assert not list(out.glob(".*part*"))  # the partial file is removed once the table is written
