"""fairppl.marginal.compare: hand-made tables with answers worked out by hand."""

import math

import polars as pl
import pytest

from fairppl.marginal import compare

LN2 = math.log(2.0)


#: Default and marginal log P (nats) of four languages, shared by the tests.
FEW_DEFAULTS = {"a": -40.0, "b": -30.0, "c": -29.0, "d": -10.0}
FEW_MARGINS = {"a": -39.0, "b": -25.0, "c": -28.0, "d": -9.9}


def _agg(language, model, estimator, logp, default, english=100, n_units=2, tau=None, K=None,
         **extra):
    row = {"corpus": "bible", "language": language, "model": model, "tokenizer": "spm",
           "estimator": estimator, "K": K, "tau": tau, "L": None, "M": None, "mode": None,
           "n_units": n_units, "logp_default_nats": default, "logp_nats": logp,
           "bpec_default": -default / LN2 / english,
           "bpec": None if logp is None else -logp / LN2 / english,
           "bpec_ci_low": None, "bpec_ci_high": None,
           "relative_gap_percent": None if logp is None else 100 * (logp - default) / -default,
           "gap_ci_low_nats": None, "gap_ci_high_nats": None, "n_chars": 50,
           "ppl_word_default": None, "ppl_word": None}
    return row | extra


def test_marginal_rows_prefer_exact_then_lm_guided():
    table = pl.DataFrame([
        _agg("eng", "m", "default", -10.0, -10.0),
        _agg("eng", "m", "wor", -9.5, -10.0, K=8, tau=1.0),
        _agg("eng", "m", "exact", -9.0, -10.0),
        _agg("deu", "m", "wor", -19.0, -20.0, K=8, tau=1.0),
        _agg("deu", "m", "lm-guided", -18.0, -20.0, K=8),
        _agg("fra", "m", "nbest", None, -5.0),
    ])
    rows = compare.marginal_rows(table)
    assert dict(zip(rows["language"], rows["estimator"])) == {"deu": "lm-guided", "eng": "exact"}


def test_fair_bits_per_utterance_and_bpec():
    fair = compare.fair_bits(pl.DataFrame([_agg("eng", "m", "exact", -8 * LN2, -10 * LN2,
                                                english=4, n_units=2)]))
    row = fair.row(0, named=True)
    assert row["bits_per_utterance_default"] == pytest.approx(5.0)
    assert row["bits_per_utterance_marginal"] == pytest.approx(4.0)
    assert row["bpec_default"] == pytest.approx(2.5)
    assert row["bpec_marginal"] == pytest.approx(2.0)
    assert row["relative_gap_percent"] == pytest.approx(20.0)


def test_ranking_change_counts_moved_languages():
    # default BPEC order a > b > c > d; the marginal swaps b and c
    table = pl.DataFrame([_agg(k, "m", "exact", FEW_MARGINS[k], v)
                          for k, v in FEW_DEFAULTS.items()])
    out = compare.ranking_change(compare.fair_bits(table), min_units=2).row(0, named=True)
    assert out["n_languages"] == 4 and out["note"] is None
    assert out["spearman_rho"] == pytest.approx(0.8)  # one adjacent swap: 1 - 6*2/(4*15)
    assert out["spearman_p"] == pytest.approx(1 / 3)  # exact: 8 of the 24 pairings reach 0.8
    assert out["languages_moved"] == 2 and out["max_rank_shift"] == 1
    assert out["largest_gap_language"] == "b"
    assert out["largest_gap_percent"] == pytest.approx(100 * 5 / 30)


def _few_units_fair():
    """Fair-bits rows of four languages whose table rows rest on 2 units each (below the
    default minimum of 20), and the note their table carries."""
    note = "2 units, fewer than min_units = 20: no intervals"
    table = pl.DataFrame([_agg(k, "m", "exact", FEW_MARGINS[k], v, ci_note=note)
                          for k, v in FEW_DEFAULTS.items()])
    return compare.fair_bits(table), note


def test_no_ranking_claims_below_min_units():
    # the same languages, but 2 units each against the default minimum of 20: the numbers stay,
    # the claims go, and a note says why
    fair, note = _few_units_fair()
    assert fair["ci_note"].to_list() == [note] * 4 and fair["bpec_ci_low"].null_count() == 4
    assert fair["bpec_marginal"].null_count() == 0
    out = compare.ranking_change(fair).row(0, named=True)
    for col in ("spearman_rho", "spearman_p", "languages_moved", "max_rank_shift",
                "largest_gap_language"):
        assert out[col] is None, col
    assert out["n_languages"] == 4 and out["min_units_per_language"] == 2
    assert out["note"] == "2 units per language, fewer than min_units = 20: no ranking claims"
    # one language short of the minimum is enough to withhold the claim
    table = pl.DataFrame([_agg(k, "m", "exact", FEW_MARGINS[k], v,
                               n_units=20 if k != "d" else 19) for k, v in FEW_DEFAULTS.items()])
    assert compare.ranking_change(compare.fair_bits(table))["spearman_rho"][0] is None


def _unit(language, unit, estimator, logp, default, ci=(None, None), entropy=None, n_tokens=4,
          enumerated=None, log_weights=None):
    return {"corpus": "bible", "language": language, "model": "m", "tokenizer": "spm",
            "unit_id": unit, "estimator": estimator, "K": None if estimator == "exact" else 8,
            "tau": 1.0, "logp": logp, "logp_default": default, "ci_low": ci[0],
            "ci_high": ci[1], "entropy": entropy, "n_tokens": n_tokens,
            "enumerated": enumerated, "log_weights": log_weights}


def test_estimator_accuracy_against_exact():
    per_unit = pl.DataFrame([
        _unit("eng", "u1", "exact", -9.0, -10.0), _unit("eng", "u2", "exact", -19.0, -20.0),
        _unit("eng", "u1", "wr", -8.9, -10.0, ci=(-9.5, -8.5)),
        _unit("eng", "u2", "wr", -19.3, -20.0, ci=(-19.5, -19.1)),
        _unit("eng", "u1", "nbest", -9.5, -10.0), _unit("eng", "u2", "nbest", -19.0, -20.0),
        # WOR: u1's lattice enumerated (its value exact, "interval" the value), u2 sampled
        # without any interval: no coverage, not 100%
        _unit("eng", "u1", "wor", -9.0, -10.0, ci=(-9.0, -9.0), enumerated=True),
        _unit("eng", "u2", "wor", -19.2, -20.0),
        # wr at K=16: an enumerated unit does not count towards coverage
        _unit("eng", "u1", "wr16", -9.0, -10.0, ci=(-9.0, -9.0), enumerated=True),
        _unit("eng", "u2", "wr16", -19.3, -20.0, ci=(-19.5, -19.1),
              log_weights=[-19.0, -20.0, -21.0]),
    ])
    acc = {r["estimator"]: r for r in compare.estimator_accuracy(per_unit).iter_rows(named=True)}
    wr, nbest = acc["wr"], acc["nbest"]
    assert wr["n_units"] == 2
    assert wr["bias_nats"] == pytest.approx((0.1 - 0.3) / 2)
    assert wr["rmse_nats"] == pytest.approx(math.sqrt((0.01 + 0.09) / 2))
    assert wr["max_abs_error_nats"] == pytest.approx(0.3)
    assert wr["gap_recovered_percent"] == pytest.approx(100 * (1.1 + 0.7) / 2.0)
    assert wr["above_exact_percent"] == pytest.approx(50.0)
    assert wr["coverage_percent"] == pytest.approx(50.0)  # u1 covered, u2 not
    assert wr["n_interval_units"] == 2 and wr["log_weight_sd_nats"] is None
    assert nbest["gap_recovered_percent"] == pytest.approx(100 * 1.5 / 2.0)
    assert nbest["above_exact_percent"] == 0.0 and nbest["coverage_percent"] is None
    assert acc["wor"]["coverage_percent"] is None and acc["wor"]["n_interval_units"] == 0
    assert acc["wr16"]["n_interval_units"] == 1 and acc["wr16"]["coverage_percent"] == 0.0
    assert acc["wr16"]["log_weight_sd_nats"] == pytest.approx(1.0)
    assert wr["n_mc_totals"] is None  # no summed table given
    # with the summed table: the Monte Carlo interval of each language's total against the
    # exact total of the same units
    table = pl.DataFrame([
        _agg("eng", "m", "exact", -28.0, -30.0, K=None, tau=1.0),
        _agg("eng", "m", "wr", -28.4, -30.0, K=8, tau=1.0, logp_mc_ci_low_nats=-29.0,
             logp_mc_ci_high_nats=-28.1),
        _agg("deu", "m", "exact", -18.0, -20.0, K=None, tau=1.0),
        _agg("deu", "m", "wr", -18.1, -20.0, K=8, tau=1.0, logp_mc_ci_low_nats=-18.5,
             logp_mc_ci_high_nats=-17.5)])
    with_totals = compare.estimator_accuracy(per_unit, table=table).filter(estimator="wr")
    assert (with_totals["n_mc_totals"][0], with_totals["mc_total_covered"][0]) == (2, 1)


def test_entropy_gap_spearman_pooled_and_per_language():
    rows = []
    for i, lang in enumerate(["eng"] * 4 + ["deu"] * 3):
        gap = [0.1, 0.2, 0.4, 0.3, 0.5, 0.6, 0.7][i]
        rows.append(_unit(lang, f"u{i}", "exact", -10.0 + 4 * gap, -10.0, entropy=4.0 * i,
                          n_tokens=4))
    out = compare.entropy_gap(pl.DataFrame(rows), min_units=3)
    by_lang = {r["language"]: r for r in out.iter_rows(named=True)}
    assert out["language"][0] == "all"
    assert by_lang["all"]["n_units"] == 7
    # pooled entropy ranks 0..6, gap ranks swap only positions 2 and 3
    assert by_lang["all"]["spearman_rho"] == pytest.approx(1 - 6 * 2 / (7 * 48))
    assert by_lang["deu"]["spearman_rho"] == pytest.approx(1.0)
    assert by_lang["eng"]["mean_gap_nats_per_token"] == pytest.approx(0.25)
    # below the minimum: the means stay, rho and p go
    few = {r["language"]: r for r in compare.entropy_gap(pl.DataFrame(rows), min_units=4)
           .iter_rows(named=True)}
    assert few["deu"]["spearman_rho"] is None and few["deu"]["spearman_p"] is None
    assert few["deu"]["mean_gap_nats_per_token"] == pytest.approx(0.6)
    assert few["eng"]["spearman_rho"] == pytest.approx(by_lang["eng"]["spearman_rho"])


def test_published_comparison_matches_estimator_and_language():
    published = pl.DataFrame({
        "source": ["A", "B"], "table": ["t", "t"], "data": ["WMT", "Wiki"],
        "model": ["X", "Y"], "tokenizer": ["uni", "bpe"], "language": ["eng", "eus"],
        "estimator": ["wr", "lm-guided"], "measure": ["word_ppl", "bpc"],
        "default": [20.0, 1.2], "estimate": [21.0, 1.1]})
    table = pl.DataFrame([_agg("eng", "m", "wr", -9.0, -10.0, K=8, tau=1.0, mode="independent",
                               ppl_word_default=50.0, ppl_word=49.0)])
    out = compare.published_comparison(table, published)
    first, second = out.row(0, named=True), out.row(1, named=True)
    assert first["their_change_percent"] == pytest.approx(5.0)
    assert first["our_change_percent"] == pytest.approx(-2.0)
    assert "independent" in first["what_differs"]
    assert second["our_model"] is None and "eus" in second["what_differs"]


def test_published_file_is_well_formed():
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "resources/published/marginal.tsv"
    table = pl.read_csv(path, separator="\t")
    assert set(table["measure"]) <= {"word_ppl", "bpc"}
    assert table.filter(pl.col("source").str.starts_with("Chirkova"))["estimate"].to_list() == [
        1.1026, 1.9303, 1.2269]


def test_report_section_states_the_ranking_change():
    from fairppl.report.marginal import marginal_body, ranking_sentences

    table = pl.DataFrame([_agg(k, "m", "exact", FEW_MARGINS[k], v)
                          for k, v in FEW_DEFAULTS.items()])
    fair = compare.fair_bits(table)
    rankings = compare.ranking_change(fair, min_units=2)
    (sentence,) = ranking_sentences(rankings, fair)
    assert sentence.startswith("m / spm (exact, bible, 2 units per language)")
    assert "2 of 4 languages change place (by at most 1)" in sentence
    assert "largest: b" in sentence
    body = marginal_body({"fair": fair, "rankings": rankings}, {"b": "Bislama"}, {},
                         lambda path, alt: "")
    assert "Bislama" in body and "bits/utterance" in body
    assert marginal_body({"fair": fair.head(0)}, {}, {}, lambda p, a: "") is None


def test_report_makes_no_claim_from_too_few_units():
    from fairppl.report.marginal import marginal_body, ranking_sentences

    fair, note = _few_units_fair()
    rankings = compare.ranking_change(fair)  # min_units 20
    (sentence,) = ranking_sentences(rankings, fair)
    assert sentence.startswith("m / spm (exact, bible, 2 units per language): on these units")
    assert "1.000% to 16.7% of the bits" in sentence
    assert "fewer than the 20" in sentence
    assert "no intervals, p-values or ranking claims" in sentence
    for claim in ("rho", "p =", "change place", "largest"):
        assert claim not in sentence, claim
    body = marginal_body({"fair": fair, "rankings": rankings}, {}, {}, lambda p, a: "")
    assert "shown without intervals" in body and "(m / spm: 2 units per language)" in body
    # the rankings table shows no rho or p, only the numbers and the note
    assert "no ranking claims" in body


def test_report_states_coverage_as_a_finding():
    from fairppl.report.marginal import coverage_sentences

    acc = pl.DataFrame({
        "corpus": ["bible"] * 3, "model": ["m"] * 3, "tokenizer": ["spm"] * 3,
        "estimator": ["wr", "lm-guided", "wor"], "K": [32, 32, 32], "tau": [1.0, None, 1.0],
        "n_units": [300, 300, 300], "n_interval_units": [300, 300, 0],
        "coverage_percent": [76.7, 89.0, None], "log_weight_sd_nats": [2.5, 0.2, None],
        "n_mc_totals": [6, None, None], "mc_total_covered": [2, None, None]})
    wr, lm, trust, none = coverage_sentences(acc)
    assert trust.startswith("Which intervals to trust") and "1 nat" in trust
    assert wr.endswith("holds the exact total in 2 of 6 languages.")
    # 76.7% of 300 against 90%: 2 standard errors are 3.46 points, far short
    assert "76.7% of 300 units, below the nominal rate beyond binomial error" in wr
    assert "heavy-tailed" in wr and "2.50 nats" in wr and "too narrow" in wr
    assert "89.0% of 300 units, within binomial error" in lm
    assert none.startswith("No interval, so no coverage: wor")


def test_report_shows_one_published_table_per_setting():
    from fairppl.report.marginal import marginal_body

    fair = compare.fair_bits(pl.DataFrame([_agg("eng", "m", "exact", -9.0, -10.0)]))
    published = pl.DataFrame({
        "source": ["A 2021", "A 2021", "B 2023"], "data": ["WMT"] * 2 + ["Wiki"],
        "their_model": ["X"] * 2 + ["Y"], "language": ["eng", "deu", "eng"],
        "estimator": ["wr", "wr", "lm-guided"], "their_default": [20.0, 30.0, 1.2]})
    body = marginal_body({"fair": fair, "published": published}, {}, {}, lambda p, a: "")
    tables = [c for c in body.split("<p class='caption'>")[1:] if c.startswith("Published")]
    assert len(tables) == 2
    # The two rows of A's setting state it once in the caption; B's single row is its own table.
    assert "source = A 2021; data = WMT; their model = X" in tables[0].split("</p>")[0]
    assert "B 2023" in tables[1] and "A 2021" not in tables[1]


def test_caching_tables_pivot_the_classes():
    from fairppl.report.marginal import caching_tables

    rows = [{"language": "eng", "analysis": "caching", "group": g, "subset": "all",
             "n_occurrences": n, "loss_nats_per_word": loss, "ppl_per_word": None,
             "log_weight_sd_nats": None}
            for g, n, loss in (("first", 10, 7.0), ("same", 5, 3.0), ("different", 2, 20.0))]
    rows += [{"language": "eng", "analysis": "estimate", "group": g, "subset": None,
              "n_occurrences": None, "loss_nats_per_word": None, "ppl_per_word": ppl,
              "log_weight_sd_nats": sd}
             for g, ppl, sd in (("default", 50.0, None), ("independent", 49.0, 2.0),
                                ("consistent", 49.5, 2.5))]
    losses, ppl = caching_tables(pl.DataFrame(rows))
    assert losses.row(0, named=True) == {"language": "eng", "subset": "all", "first": 7.0,
                                         "same": 3.0, "different": 20.0, "n_different": 2}
    assert ppl.row(0, named=True) == {"language": "eng", "default": 50.0, "independent": 49.0,
                                      "consistent": 49.5, "sd_independent": 2.0,
                                      "sd_consistent": 2.5}


def test_samples_needed_and_qdefault_tables():
    from fairppl.report.marginal import qdefault_table, samples_needed_table

    summary = pl.DataFrame({
        "corpus": ["bible"] * 2, "language": ["eng"] * 2, "model": ["m"] * 2,
        "tokenizer": ["spm"] * 2, "order": ["Q", "P"], "n_units": [50, 50],
        "median_paths_to_99pct": [3.0, 1.0], "share_units_reaching_99pct": [1.0, 1.0],
        "median_paths_to_99_9pct": [None, 4.0], "share_units_reaching_99_9pct": [0.4, 0.4]})
    row = samples_needed_table(summary).row(0, named=True)
    assert row == {"language": "eng", "model": "m", "tokenizer": "spm", "paths_99_Q": 3.0,
                   "paths_99_P": 1.0, "paths_99_9_Q": None, "paths_99_9_P": 4.0,
                   "reach_99_9": 0.4, "n_units": 50}
    bins = pl.DataFrame({"model": ["m"] * 2, "language": ["eng"] * 2,
                         "bin": ["[0.9,0.99)", "[0.99,1]"], "n_blocks": [1, 3],
                         "share_blocks_pct": [25.0, 75.0]})
    out = qdefault_table(bins).row(0, named=True)
    assert out == {"model": "m", "language": "eng", "[0.9,0.99)": 25.0, "[0.99,1]": 75.0,
                   "n_blocks": 4}


def test_interval_figure_cuts_a_degenerate_interval_and_counts_it(tmp_path):
    """One unit's interval reaching 1e6 nats is cut at the axis (which stays at the scale of the
    other units) and counted; units without an interval are counted apart, and the caption says
    both numbers the figure drew."""
    from fairppl.report.marginal import interval_caption
    from fairppl.report.plots_marginal import interval_figure, interval_panels

    rows = []
    for i in range(12):
        gap = 0.1 * i
        ci = None if i >= 10 else (gap - 0.05, gap + (1e6 if i == 3 else 0.05))
        rows.append({"corpus": "bible", "language": "eng", "model": "m", "tokenizer": "t",
                     "unit_id": f"u{i:02d}", "estimator": "lm-guided", "logp": -10.0 + gap,
                     "logp_default": -10.0,
                     "ci_low": None if ci is None else -10.0 + ci[0],
                     "ci_high": None if ci is None else -10.0 + ci[1]})
    per_unit = pl.DataFrame(rows)
    panel = interval_panels(per_unit).row(0, named=True)
    assert (panel["n_units"], panel["n_intervals"], panel["n_cut"]) == (12, 10, 1)
    # The same unit ids in a second language are other units: counts double, never below the
    # intervals drawn.
    two = pl.concat([per_unit, per_unit.with_columns(language=pl.lit("deu"))])
    both = interval_panels(two).row(0, named=True)
    assert (both["n_units"], both["n_intervals"], both["n_languages"]) == (24, 20, 2)
    assert panel["y_high"] < 10 and panel["y_low"] <= 0  # not 1e6: the rest stay readable
    assert panel["y_high"] >= 0.9  # every drawn estimate inside (largest 0.9)
    caption = interval_caption(interval_panels(per_unit))
    assert "10 of its 12 units (2 without an interval" in caption
    assert "1 interval(s) reach beyond the axis" in caption
    interval_figure(per_unit, str(tmp_path / "f.png"))
    assert (tmp_path / "f.png").stat().st_size > 1000
