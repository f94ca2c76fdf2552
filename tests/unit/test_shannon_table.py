"""The Shannon game's results table (fairppl.shannon.table) on per-truncation summaries with
known answers: uniform bets give m under every protocol, the limited protocol applies the floor
exactly, the rank bounds at l = m are eq. 9 of the rank frequencies, the randomized protocol
refuses more units than it has, and the likelihood reference is the mean of the log-probabilities."""

import html
import math

import numpy as np
import polars as pl
import pytest

from fairppl.shannon.gambling import summarize_bets
from fairppl.shannon.ranks import rank_frequencies, shannon_bounds
from fairppl.shannon.table import COLUMNS, list_lengths, rank_histogram_table, shannon_table

SETTINGS = {"list_lengths": [1, 2, "all"], "n_t": [2, 50], "n_draws": 20, "seed": 0}


def _frame(bets_rows, correct, units, log_probs=None, m=None):
    """Per-truncation rows as the bets job writes them, from explicit bet arrays."""
    m = m or len(bets_rows[0])
    lengths = list_lengths(SETTINGS["list_lengths"], m)
    rows = []
    for i, (bets, c, unit) in enumerate(zip(bets_rows, correct, units)):
        s = summarize_bets(np.asarray(bets), c, lengths)
        row = {"corpus": "bible", "language": "eng", "model": "toy", "tokenizer": "word-v2",
               "m": m, "unit_id": unit, "unit_order": int(unit[1:]), "position": i,
               "outcome": "<unk>" if c == m - 2 else "w", "log_bet": s["log_bet"],
               "log_prob": (log_probs[i] if log_probs is not None else s["log_bet"]),
               "rank": s["rank"], "rank_tied_first": s["rank_tied_first"],
               "n_tied": s["n_tied"], "cost_seconds": 0.5, "cost_positions": 3}
        for length, a, b in zip(lengths, s["listed_sum"], s["listed_last"]):
            row[f"listed_sum_{length}"] = a
            row[f"listed_last_{length}"] = b
        rows.append(row)
    return pl.DataFrame(rows)


def test_uniform_bets_give_m_under_every_protocol():
    m = 4
    frame = _frame([[0.25] * m] * 12, [0, 1, 2, 3] * 3, [f"u{i // 3}" for i in range(12)])
    table = shannon_table([frame], SETTINGS)
    assert table.columns == list(COLUMNS)
    scored = table.filter(pl.col("perplexity_per_word").is_not_null())
    assert scored["perplexity_per_word"].to_list() == pytest.approx([4.0] * scored.height)
    drawn = table.filter((pl.col("protocol") == "randomized") & (pl.col("n_t") == 2)).row(
        0, named=True)
    assert drawn["low_per_word"] == pytest.approx(4.0) and drawn["high_per_word"] == pytest.approx(4.0)
    # 4 units: 50 distinct units cannot be drawn; the row says so
    short = table.filter((pl.col("protocol") == "randomized") & (pl.col("n_t") == 50)).row(
        0, named=True)
    assert short["perplexity_per_word"] is None and "ran on 4" in short["note"]
    assert table["seconds_per_truncation"].drop_nulls().unique().to_list() == [0.5]
    common = table.filter(pl.col("protocol") == "common").row(0, named=True)
    assert common["perplexity_per_word"] == pytest.approx(4.0) and common["n_units"] == 4
    # 4 units, fewer than the campaign scorer's minimum: no interval, and the row says why
    for row in (common, table.filter((pl.col("protocol") == "exhaustive")
                                     & (pl.col("n_t") == 12)).row(0, named=True)):
        assert (row["ci_low_per_word"], row["ci_high_per_word"]) == (None, None)
        assert row["ci_note"].startswith("no interval: 4 unit(s), fewer than 20")
    # a uniform bettor's ties spread over every place: q_r = 1/m, both bounds m exactly
    bounds = table.filter((pl.col("protocol") == "rank-bounds") & (pl.col("l") == m))
    assert bounds["low_per_word"].to_list() == pytest.approx([4.0, 4.0], rel=1e-12)
    assert bounds["high_per_word"].to_list() == pytest.approx([4.0, 4.0], rel=1e-12)
    assert bounds["rank_bounds_valid"].to_list() == [True, True]
    assert bounds["rank_values_kind"].to_list() == ["estimates", "estimates"]
    # the Miller-Madow estimate and the 95% bound are capped at m, which the plug-in reaches
    assert bounds["high_mm_per_word"].to_list() == pytest.approx([4.0, 4.0], rel=1e-12)
    assert bounds["high_bound_per_word"].to_list() == pytest.approx([4.0, 4.0], rel=1e-12)
    # its own perplexity, 4, lies on both ends: neither above nor below
    assert not bounds["lower_above_perplexity"].any()
    assert not bounds["perplexity_above_upper"].any()
    assert bounds["above_cause"].to_list() == [None, None]
    assert bounds["n_truncations"].to_list() == [12, 12]


def test_limited_lists_and_rank_bounds_by_hand():
    # m = 4 outcomes, two truncations: bets (0.5, 0.3, 0.15, 0.05) with the correct outcome at
    # rank 3 (0.15), then (0.7, 0.1, 0.1, 0.1) with the correct one at rank 1.
    bets = [[0.5, 0.3, 0.15, 0.05], [0.7, 0.1, 0.1, 0.1]]
    frame = _frame(bets, [2, 0], ["u0", "u1"], log_probs=[math.log(0.2), math.log(0.7)])
    table = shannon_table([frame], SETTINGS)
    lim = {r["l"]: r for r in table.filter(pl.col("protocol") == "limited").iter_rows(named=True)}
    # l = 1: first truncation unlisted -> floor (1 - 0.5) / 3; second listed -> 0.7
    assert lim[1]["perplexity_per_word"] == pytest.approx((0.5 / 3 * 0.7) ** -0.5)
    # l = 2: floor (1 - 0.8) / 2 = 0.1
    assert lim[2]["perplexity_per_word"] == pytest.approx((0.1 * 0.7) ** -0.5)
    assert lim[4]["perplexity_per_word"] == pytest.approx((0.15 * 0.7) ** -0.5)
    # the model's own lists of a distribution that sums to 1 always pass the check
    assert {r["n_inconsistent"] for r in lim.values()} == {0}
    full = table.filter(pl.col("protocol") == "exhaustive").row(0, named=True)
    assert full["likelihood_perplexity_per_word"] == pytest.approx((0.2 * 0.7) ** -0.5)
    assert full["perplexity_per_word"] == pytest.approx((0.15 * 0.7) ** -0.5)
    bounds = table.filter((pl.col("protocol") == "rank-bounds") & (pl.col("l") == 4))
    lower, upper = shannon_bounds(rank_frequencies(np.array([3, 1]), 4))
    for row in bounds.iter_rows(named=True):
        assert row["low_per_word"] == pytest.approx(math.exp(lower))
        assert row["high_per_word"] == pytest.approx(math.exp(upper))
    hist = rank_histogram_table([frame])
    assert dict(zip(hist["rank"], hist["count"])) == {1: 1, 3: 1}


def test_inconsistent_lists_are_counted():
    # bets (0.3, 0.01, 0.01, 0.01) sum to 0.33: with l = 1 the floor (1 - 0.3) / 3 = 0.233 is
    # below the listed 0.3 (passes); l = 2 leaves (1 - 0.31) / 2 = 0.345 > 0.01 (fails)
    frame = _frame([[0.3, 0.01, 0.01, 0.01]] * 2, [0, 1], ["u0", "u1"])
    table = shannon_table([frame], SETTINGS)
    lim = {r["l"]: r for r in table.filter(pl.col("protocol") == "limited").iter_rows(named=True)}
    assert lim[1]["n_inconsistent"] == 0 and lim[2]["n_inconsistent"] == 2
    # the report names them, and says when rounding alone makes a list fail
    from fairppl.report.shannon import shannon_body

    body = shannon_body({"table": table}, {"eng": "English"}, {}, lambda path, alt: "")
    assert "2 lists of our own bettors fail the consistency check (English " in body
    assert " at l = 2; shannon.csv, n_inconsistent)" in body and "float64 rounding" in body


def test_list_lengths_cap_at_m():
    assert list_lengths([1, 10, "all", 5000], 102) == [1, 10, 102]


def test_common_rows_keep_the_units_every_bettor_bet_on():
    # bettor a bets 1/4 on u0's truncations and 1/2 on u1's; bettor b bet only on u1 (1/8)
    a = _frame([[0.25] * 4] * 2 + [[0.5, 0.5, 0.0, 0.0]] * 2, [0, 1, 0, 1],
               ["u0", "u0", "u1", "u1"])
    b = _frame([[0.125] * 8] * 3, [0, 1, 2], ["u1"] * 3).with_columns(model=pl.lit("other"))
    table = shannon_table([a, b], SETTINGS)
    common = {r["model"]: r for r in table.filter(pl.col("protocol") == "common").iter_rows(
        named=True)}
    assert common["toy"]["n_units"] == 1 and common["toy"]["n_truncations"] == 2
    assert common["toy"]["perplexity_per_word"] == pytest.approx(2.0)
    assert common["other"]["perplexity_per_word"] == pytest.approx(8.0)
    full = table.filter((pl.col("model") == "toy") & (pl.col("protocol") == "exhaustive")
                        & (pl.col("n_t") == 4)).row(0, named=True)
    assert full["perplexity_per_word"] == pytest.approx((0.25 * 0.25 * 0.5 * 0.5) ** -0.25)


def test_fitting_units_keeps_what_the_bettor_can_hold():
    from fairppl.shannon.protocol import Bettor
    from fairppl.shannon.units import fitting_units

    units = pl.DataFrame({"unit_id": ["u0", "u1", "u2"], "text": ["a b", "a b c d e", "c"]})

    class NoWindow(Bettor):  # the base class's fits: every unit
        def bets(self, context_words):
            raise AssertionError("fitting_units asks no bets")

        def log_prob(self, context_words, word):
            raise AssertionError("fitting_units asks no probability")

        def take_cost(self):
            return {}

    class Window(NoWindow):
        def fits(self, text):
            return len(text) <= 3

    kept, left = fitting_units(units, Window())
    assert kept["unit_id"].to_list() == ["u0", "u2"] and left == ["u1"]
    kept, left = fitting_units(units, NoWindow())
    assert kept.equals(units) and left == []


def test_uniform_bettor_on_zipf_answers_gets_m_not_the_answers_frequencies():
    # m = 200 outcomes, answers drawn by a Zipf law over the outcome order (the vocabulary's
    # frequency order). Ties in outcome order would give the uniform bettor the answers' ranks;
    # spread over their places, q_r = 1/m and eq. 9 gives ln m at both ends (perplexity m).
    m = 200
    rng = np.random.default_rng(5)
    p = 1 / np.arange(1, m + 1)
    answers = rng.choice(m, size=400, p=p / p.sum())
    frame = _frame([np.full(m, 1 / m)] * 400, answers.tolist(),
                   [f"u{i // 8}" for i in range(400)])
    table = shannon_table([frame], SETTINGS)
    full = table.filter((pl.col("protocol") == "rank-bounds") & (pl.col("l") == m))
    assert full["low_per_word"].to_list() == pytest.approx([m, m], rel=1e-9)
    assert full["high_per_word"].to_list() == pytest.approx([m, m], rel=1e-9)
    # ranks in outcome order would have told a story: eq. 9 of the answers' own frequencies
    lower, upper = shannon_bounds(rank_frequencies(answers + 1, m))
    assert math.exp(upper) < 0.8 * m
    # the uniform tail completes the head 1/m with 1/m: the same m at every l, but a cut list
    # is flagged as no bound all the same
    cut = table.filter((pl.col("protocol") == "rank-bounds") & (pl.col("l") == 2)
                       & (pl.col("tail") == "uniform")).row(0, named=True)
    assert cut["low_per_word"] == pytest.approx(m) and cut["high_per_word"] == pytest.approx(m)
    assert cut["rank_bounds_valid"] is False
    assert cut["rank_bounds_note"].startswith("cut at l = 2 of m = 200: the ranks beyond l are "
                                              "assumed, so the upper end stays an upper bound")
    hist = rank_histogram_table([frame])
    assert hist.height == m and hist["count"].to_list() == pytest.approx([2.0] * m)


def test_inverted_and_impossible_rank_values_are_flagged():
    # m = 4: every correct outcome at rank 4 (the bettor's last guess). Eq. 9: q_4 = 1, lower =
    # 4 ln 4 - 3 ln 3 (perplexity 256/27 = 9.48) > ln 4 >= upper = 0: inverted and impossible.
    frame = _frame([[0.4, 0.3, 0.2, 0.1]] * 6, [3] * 6, [f"u{i // 2}" for i in range(6)])
    table = shannon_table([frame], SETTINGS)
    row = table.filter((pl.col("protocol") == "rank-bounds") & (pl.col("l") == 4)
                       & (pl.col("tail") == "uniform")).row(0, named=True)
    assert row["low_per_word"] == pytest.approx(256 / 27) and row["high_per_word"] == 1.0
    assert row["rank_bounds_valid"] is False
    assert row["rank_bounds_note"].startswith("inverted: the lower end")
    assert "impossible: the lower end 9.481 exceeds m = 4" in row["rank_bounds_note"]
    assert row["rank_bounds_note"].endswith("(6 truncations)")
    # nothing within the first rank: no Zipf law to fit, said in the row
    zipf = table.filter((pl.col("protocol") == "rank-bounds") & (pl.col("l") == 1)
                        & (pl.col("tail") == "zipf")).row(0, named=True)
    assert zipf["low_per_word"] is None and zipf["rank_bounds_valid"] is False
    assert zipf["rank_bounds_note"].startswith("no correct outcome within the first 1 ranks")


def test_randomized_rows_name_their_scheme_and_bootstrap_by_hand():
    from fairppl.stats.bootstrap import BootstrapSettings, ratio_interval

    # units u10..u33 of 2, 5, 2, 3, 2, 2 truncations, 4 times (N = 64; ids of one width, so
    # sorted ids are unit order), bets of their own per unit
    lengths = [2, 5, 2, 3, 2, 2] * 4
    units = [f"u{10 + k}" for k, n in enumerate(lengths) for _ in range(n)]
    bets = [[b, 1 - b] for k, n in enumerate(lengths) for b in [0.2 + 0.025 * k] * n]
    frame = _frame(bets, [0] * len(units), units)
    settings = dict(SETTINGS, n_t=[3, 16, 24])
    table = shannon_table([frame], settings, BootstrapSettings(replicates=200, seed=3))
    drawn = {r["n_t"]: r for r in table.filter(pl.col("protocol") == "randomized")
             .iter_rows(named=True)}
    # 64 // 3 = 21 >= 5: systematic; 64 // 16 = 4 < 5: weighted, and the note says why
    assert drawn[3]["scheme"] == "systematic" and drawn[3]["note"] is None
    assert drawn[16]["scheme"] == "weighted" and "could pick a unit twice" in drawn[16]["note"]
    # n_t = 24 draws every unit and the bets are constant within a unit here: every draw's
    # length-weighted mean is the exhaustive value
    full = table.filter((pl.col("protocol") == "exhaustive") & (pl.col("n_t") == 64)).row(
        0, named=True)
    assert drawn[24]["perplexity_per_word"] == pytest.approx(full["perplexity_per_word"])
    # the interval over units: per unit the sum of -ln bet and its count, sorted unit ids
    nats = [-n * math.log(0.2 + 0.025 * k) for k, n in enumerate(lengths)]
    low, high = ratio_interval(nats, lengths, BootstrapSettings(replicates=200, seed=3))
    assert (full["ci_low_per_word"], full["ci_high_per_word"]) == pytest.approx(
        (math.exp(low), math.exp(high)), rel=1e-12)
    assert full["ci_low_per_word"] < full["perplexity_per_word"] < full["ci_high_per_word"]
    assert (full["ci_replicates"], full["ci_level"]) == (200, 0.95)
    # 24 units, under 50: the interval is shown with its coverage caveat
    assert full["ci_note"].startswith("24 units: a percentile bootstrap over so few units covers "
                                      "below its level")


def test_a_table_without_the_tie_columns_is_refused():
    frame = _frame([[0.5, 0.5]], [0], ["u0"]).drop("n_tied")
    with pytest.raises(Exception, match=r"lacks \['n_tied'\].*run its shannon_bets job again"):
        shannon_table([frame], SETTINGS)


def _two_bettors(better: str):
    """Bettor toy on u0..u3 (1/4 on u0-u2, 1/2 on u3), bettor other on u3 only (1/8): on their
    one common unit toy scores 2 and other 8. ``better`` swaps the bets of the common unit."""
    a = _frame([[0.25] * 4] * 6 + [[0.5, 0.5, 0.0, 0.0]] * 2, [0, 1] * 4,
               ["u0", "u0", "u1", "u1", "u2", "u2", "u3", "u3"])
    b = _frame([[0.125] * 8] * 2, [0, 1], ["u3"] * 2).with_columns(model=pl.lit("other"))
    if better == "other":
        b = _frame([[0.75, 0.25]] * 2, [0, 0], ["u3"] * 2).with_columns(model=pl.lit("other"))
    return [a, b]


def test_report_sentences_follow_the_table():
    from fairppl.report.shannon import read_published, shannon_body

    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    published = read_published(root / "resources" / "published" / "shannon_bimbot.tsv")
    for better, order in (("toy", "toy / word-v2 2.00, other / word-v2 8.00"),
                          ("other", "other / word-v2 1.33, toy / word-v2 2.00")):
        table = shannon_table(_two_bettors(better), SETTINGS)
        body = html.unescape(shannon_body({"table": table, "published": published},
                                          {"eng": "English"}, {}, lambda path, alt: ""))
        assert (f"English (bible), on the 1 units all its 2 bettors bet on (2 truncations): "
                f"{order}; without a paired interval to tell the two best apart (too few "
                f"units).") in body
        # the full-set numbers come from 4 and 1 units: said, computed
        assert "come from 1, 4 units depending on the bettor" in body
        # no French bigram here: the published values stand alone, nothing fixed of ours
        assert "No fra eq. 7 bigram played here" in body
        assert "m = 20003 outcomes, 1707527 test words" in body
    # a French eq. 7 bigram: the shape, with the ratios at the l both have
    frame = _frame([[0.5, 0.3, 0.15, 0.05], [0.7, 0.1, 0.1, 0.1]], [2, 0], ["u0", "u1"])
    frame = frame.with_columns(language=pl.lit("fra"), model=pl.lit("bigram-eq7"))
    table = shannon_table([frame], SETTINGS)
    body = html.unescape(shannon_body({"table": table, "published": published},
                                      {"fra": "French"}, {}, lambda path, alt: ""))
    full = (0.15 * 0.7) ** -0.5
    ratio = (0.5 / 3 * 0.7) ** -0.5 / full
    assert f"{ratio:.3f}" == "0.949"
    assert (f"at l = 1 the paper's list gives {7349.12 / 159.77:.1f} times its full-list "
            f"value, ours 0.949 times.") in body
    assert "the perplexities themselves do not compare, only the shape" in body
    # every bettor's gambling perplexity against its own rank interval, counted
    # ranks 3 and 1: q = (1/2, 0, 1/2, 0) rises, so eq. 9 gives no interval, and it is said
    assert "are estimates of his bounds for 0 of 1 bettors (the rest no interval" in body
    assert "lies above the upper one for 1: for 0 below the Miller-Madow" in body
    assert "The lower value lies above the bettor's perplexity for 0 (lower_above" in body


def test_rank_rows_are_estimates_and_say_why_a_perplexity_lies_above():
    # m = 1002 outcomes, answers at rank r with P(r) = (1 - rho) rho^(r - 1), rho = 0.97
    # (entropy in closed form: perplexity 89.2), 1000 truncations in 50 units of 20.
    m, rho, n = 1002, 0.97, 1000
    truth = (1 - rho) * rho ** np.arange(m)
    truth /= truth.sum()
    entropy = (-(1 - rho) * math.log(1 - rho) - rho * math.log(rho)) / (1 - rho)
    answers = np.random.default_rng(5).choice(m, size=n, p=truth)
    units = [f"u{10 + i // 20}" for i in range(n)]
    flat = 0.995 ** np.arange(m)  # the same ranking, far too flat probabilities
    rows = {}
    for name, bets in (("calibrated", truth), ("flat", flat / flat.sum())):
        frame = _frame([bets] * n, answers.tolist(), units).with_columns(model=pl.lit(name))
        table = shannon_table([frame], dict(SETTINGS, n_t=[]))
        own = table.filter((pl.col("protocol") == "exhaustive")).row(0, named=True)
        rank = table.filter((pl.col("protocol") == "rank-bounds") & (pl.col("l") == m)
                            & (pl.col("tail") == "uniform")).row(0, named=True)
        rows[name] = (own["perplexity_per_word"], rank)
    # the same ranks: the same rank values for both bettors
    assert rows["calibrated"][1]["high_per_word"] == rows["flat"][1]["high_per_word"]
    perplexity, rank = rows["calibrated"]
    assert rank["rank_values_kind"] == "estimates"
    assert "as estimates from the sample, not bounds" in rank["rank_bounds_note"]
    # the plug-in upper end lies below the truth, the 95% bound above it; Miller-Madow between
    assert rank["high_per_word"] < rank["high_mm_per_word"] < math.exp(entropy)
    assert rank["high_bound_per_word"] > math.exp(entropy)
    assert rank["once_seen_percent"] > 20
    # a bettor that bets the true distribution lies above the plug-in end by sampling alone,
    # and the row says so rather than blaming calibration
    assert perplexity == pytest.approx(math.exp(entropy), rel=0.05)
    assert rank["perplexity_above_upper"] is True
    assert rank["above_cause"] in ("undersampled", "undersampled or calibration")
    assert rank["lower_above_perplexity"] is False
    # the flat bettor: cross-entropy (in closed form about 5.45 nats) beyond even the bound
    perplexity, rank = rows["flat"]
    assert perplexity > rank["high_bound_per_word"]
    assert rank["above_cause"] == "calibration"


def test_a_lower_end_above_the_bettors_perplexity_is_flagged():
    # m = 4, bets (0.4, 0.3, 0.2, 0.1), the correct outcome always 2nd: perplexity 1/0.3 = 3.33,
    # eq. 9's lower end 2 ln 2 (perplexity 4) above it, the upper one 0 (perplexity 1)
    frame = _frame([[0.4, 0.3, 0.2, 0.1]] * 6, [1] * 6, [f"u{i // 2}" for i in range(6)])
    table = shannon_table([frame], SETTINGS)
    row = table.filter((pl.col("protocol") == "rank-bounds") & (pl.col("l") == 4)
                       & (pl.col("tail") == "uniform")).row(0, named=True)
    assert (row["low_per_word"], row["high_per_word"]) == pytest.approx((4.0, 1.0))
    assert row["rank_values_kind"] == "no interval"
    assert row["lower_above_perplexity"] is True and row["perplexity_above_upper"] is True
    # Miller-Madow adds (1 - 1) / 12 = 0; the bound reaches m = 4 > 3.33
    assert row["high_mm_per_word"] == pytest.approx(1.0)
    assert row["high_bound_per_word"] == pytest.approx(4.0)
    assert row["above_cause"] == "undersampled or calibration"
    # cut at l = 1 (uniform tail): not bounds, and no cause can be told
    cut = table.filter((pl.col("protocol") == "rank-bounds") & (pl.col("l") == 1)
                       & (pl.col("tail") == "uniform")).row(0, named=True)
    assert cut["rank_values_kind"] in ("not bounds (cut at l)", "no interval")
    assert cut["high_mm_per_word"] is None and cut["high_bound_per_word"] is None


def test_common_rows_compare_bettors_paired():
    from fairppl.stats.bootstrap import BootstrapSettings, difference_interval

    # 24 units of 2 truncations; bettor "a" bets 0.5 on the answer in unit k's first truncation
    # and 0.25 in its second, bettor "b" 0.25 and 0.2: per unit -ln bets sum to ln 8 and ln 20
    units = [f"u{10 + i // 2}" for i in range(48)]
    a = _frame([[0.5, 0.5], [0.25, 0.75]] * 24, [0, 0] * 24, units)
    b = _frame([[0.25, 0.75], [0.2, 0.8]] * 24, [0, 0] * 24, units, m=2).with_columns(
        model=pl.lit("b"))
    boot = BootstrapSettings(replicates=200, seed=4)
    table = shannon_table([b, a], SETTINGS, boot)
    common = {r["model"]: r for r in table.filter(pl.col("protocol") == "common")
              .iter_rows(named=True)}
    assert common["toy"]["perplexity_per_word"] == pytest.approx(math.sqrt(8))
    assert common["b"]["perplexity_per_word"] == pytest.approx(math.sqrt(20))
    # the reference is the best bettor, whatever the order of the frames
    assert common["toy"]["reference"] == common["b"]["reference"] == "toy/word-v2"
    assert common["toy"]["ratio_to_reference"] == 1.0 and common["toy"]["ratio_ci_low"] is None
    assert common["b"]["ratio_to_reference"] == pytest.approx(math.sqrt(20 / 8))
    # the paired interval: the same per-unit sums through the project's paired bootstrap; every
    # unit has the same ratio, so every replicate gives it
    _, low, high = difference_interval([math.log(20)] * 24, [2] * 24, [math.log(8)] * 24,
                                       [2] * 24, boot)
    assert (common["b"]["ratio_ci_low"], common["b"]["ratio_ci_high"]) == pytest.approx(
        (math.exp(low), math.exp(high)), rel=1e-12)
    assert common["b"]["ratio_ci_low"] == pytest.approx(math.sqrt(20 / 8), rel=1e-9)
    # hard and easy units: bettor b bets 0.8 times what toy bets on every answer. Their
    # intervals over units overlap, yet b is worse on every unit by the same factor, and the
    # paired interval says so: every replicate gives exactly 1 / 0.8
    bets = [0.1 + 0.035 * (i // 2) for i in range(48)]
    a = _frame([[p, 1 - p] for p in bets], [0] * 48, units)
    b = _frame([[0.8 * p, 1 - 0.8 * p] for p in bets], [0] * 48, units).with_columns(
        model=pl.lit("b"))
    common = {r["model"]: r for r in shannon_table([a, b], SETTINGS, boot)
              .filter(pl.col("protocol") == "common").iter_rows(named=True)}
    assert common["toy"]["ci_high_per_word"] > common["b"]["ci_low_per_word"]  # overlap
    assert common["b"]["ratio_to_reference"] == pytest.approx(1.25, rel=1e-12)
    assert (common["b"]["ratio_ci_low"], common["b"]["ratio_ci_high"]) == pytest.approx(
        (1.25, 1.25), rel=1e-9)



def test_report_tells_bettors_apart_paired():
    from fairppl.report.shannon import common_sentences

    units = [f"u{10 + i // 2}" for i in range(48)]
    bets = [0.1 + 0.035 * (i // 2) for i in range(48)]
    a = _frame([[p, 1 - p] for p in bets], [0] * 48, units)
    b = _frame([[0.8 * p, 1 - 0.8 * p] for p in bets], [0] * 48, units).with_columns(
        model=pl.lit("b"))
    (sentence,) = common_sentences(shannon_table([a, b], SETTINGS), {"eng": "English"})
    assert sentence.endswith("b / word-v2's perplexity is 1.25 [1.25, 1.25] times toy / "
                             "word-v2's (paired bootstrap over the same units): these units "
                             "tell them apart.")
