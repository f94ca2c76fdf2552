"""The marginal table (fairppl.marginal.table) on hand-made records: exact sums, the identities
between columns, the paired bootstrap interval of the sum; and the job module
(fairppl.marginal.units): the run plan, a resumed run equal to a clean one. `snakemake marginal`:
tests/workflow/test_marginal_table_workflow.py."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest

from fairppl.stats.bootstrap import BootstrapSettings, percentile_interval, resample_counts
from fairppl.marginal.estimate import log_mean_exp, mc_interval
from fairppl.marginal.table import MARGINAL_COLUMNS, marginal_table
from fairppl.marginal.units import run_plan, unit_table

KEYS = {"corpus": "bible", "language": "deu", "model": "kenlm-subword-o5",
        "tokenizer": "spm-unigram-4000", "split": "test"}
SETTINGS = BootstrapSettings(replicates=200, seed=3, level=0.9)
# Work counters depend on what the LM has cached from earlier runs of the same job.
WORK = ["seconds", "lm_calls", "positions"]


def _rec(uid, estimator, logp_default, logp, text, **extra):
    return {"unit_id": uid, "estimator": estimator, "text": text, "logp_default": logp_default,
            "logp": logp, "n_tokens": len(text.split()) + 1, "n_chars": len(text),
            "n_bytes": len(text.encode("utf-8")), "n_words": len(text.split()),
            "start_token": "<s>", "end_scored": True, "seconds": 0.5, "lm_calls": 2,
            "positions": 10, "lower_bound": estimator == "default", "tau": 1.0,
            "entropy": 2.0, **extra}


def _units():
    rows = []
    for uid, eng, deu in (("u1", "In the beginning", "Am Anfang"), ("u2", "God", "Gott"),
                          ("u3", "and the earth", "und die Erde")):
        rows += [{"corpus": "bible", "unit_id": uid, "language": "eng", "split": "test",
                  "text": eng, "english_reference": True},
                 {"corpus": "bible", "unit_id": uid, "language": "deu", "split": "test",
                  "text": deu, "english_reference": False}]
    return pl.DataFrame(rows)


def _records():
    texts = {"u1": "Am Anfang", "u2": "Gott", "u3": "und die Erde"}
    default = {"u1": -20.0, "u2": -8.0, "u3": -15.0}
    exact = {"u1": -19.0, "u2": -7.5, "u3": -14.0}
    recs = []
    for uid, text in texts.items():
        recs.append(_rec(uid, "default", default[uid], default[uid], text))
        recs.append(_rec(uid, "exact", default[uid], exact[uid], text, enumerated=True))
        recs.append(_rec(uid, "wr", default[uid], exact[uid] + 0.1, text, K=32,
                         percent_nd={"u1": 50.0, "u2": 0.0, "u3": 25.0}[uid]))
    recs.append(_rec("u1", "lm-guided", -20.0, -19.5, texts["u1"], K=4, M=8, t0=0.5, t1=0.5,
                     t2=0.0, n_blocks=4, tau=None, entropy=None))
    recs.append(_rec("u2", "lm-guided", -8.0, -7.0, texts["u2"], K=4, M=8, t0=1.0, t1=0.0,
                     t2=0.0, n_blocks=1, tau=None, entropy=None))
    return recs


def _table(min_units=2):
    return marginal_table(unit_table(_records(), KEYS), _units(), SETTINGS, min_units)


def test_sums_and_identities_by_hand():
    table = _table()
    assert table.columns == list(MARGINAL_COLUMNS)
    exact = table.filter(estimator="exact").row(0, named=True)
    assert exact["n_units"] == 3 and exact["n_exact_units"] == 3
    assert exact["logp_default_nats"] == -43.0 and exact["logp_nats"] == -40.5
    assert exact["gap_nats"] == pytest.approx(2.5)
    n_chars = len("Am Anfang") + len("Gott") + len("und die Erde")
    english = len("In the beginning") + len("God") + len("and the earth")
    assert exact["n_chars"] == n_chars and exact["n_english_chars"] == english
    assert exact["n_words"] == 6 and exact["n_tokens"] == 9
    assert exact["gap_bits_per_char"] == pytest.approx(2.5 / math.log(2) / n_chars)
    assert exact["relative_gap_percent"] == pytest.approx(100 * 2.5 / 43.0)
    assert exact["bpec_default"] == pytest.approx(43.0 / math.log(2) / english)
    assert exact["bpec"] == pytest.approx(40.5 / math.log(2) / english)
    assert exact["bpec_default"] - exact["bpec"] == pytest.approx(
        exact["gap_nats"] / math.log(2) / english)
    assert exact["ppl_word"] == pytest.approx(math.exp(40.5 / 6))
    assert exact["ppl_word_default"] == pytest.approx(math.exp(43.0 / 6))
    assert exact["entropy_nats_per_token"] == pytest.approx(6.0 / 9)
    assert exact["seconds"] == 1.5 and exact["lm_calls"] == 6 and exact["token_positions"] == 30
    assert exact["lower_bound"] is False and exact["tau"] == 1.0 and exact["K"] is None
    default = table.filter(estimator="default").row(0, named=True)
    assert default["gap_nats"] == 0.0 and default["lower_bound"] is True
    assert default["gap_ci_low_nats"] == 0.0 == default["gap_ci_high_nats"]
    wr = table.filter(estimator="wr").row(0, named=True)
    assert wr["percent_nd"] == pytest.approx(25.0) and wr["K"] == 32
    assert wr["logp_nats"] == pytest.approx(-40.2)


def test_lm_guided_shares_weighted_by_blocks():
    row = _table().filter(estimator="lm-guided").row(0, named=True)
    assert row["n_units"] == 2 and row["M"] == 8 and row["L"] is None
    # u1: 4 blocks (2 T0, 2 T1); u2: 1 block (T0): 3 of 5 blocks T0, not the mean 0.75.
    assert row["t0_share"] == pytest.approx(3 / 5) and row["t1_share"] == pytest.approx(2 / 5)
    assert row["t2_share"] == 0.0 and row["entropy_nats_per_token"] is None
    assert row["tau"] is None


def test_interval_is_a_paired_bootstrap_of_the_sum():
    row = _table().filter(estimator="exact").row(0, named=True)
    # units sorted by id: u1, u2, u3
    logp, default = np.array([-19.0, -7.5, -14.0]), np.array([-20.0, -8.0, -15.0])
    counts = resample_counts(3, SETTINGS.replicates, SETTINGS.seed)
    low, high = percentile_interval(counts @ logp, SETTINGS.level)
    assert (row["logp_ci_low_nats"], row["logp_ci_high_nats"]) == pytest.approx((low, high))
    g_low, g_high = percentile_interval(counts @ (logp - default), SETTINGS.level)
    assert (row["gap_ci_low_nats"], row["gap_ci_high_nats"]) == pytest.approx((g_low, g_high))
    # not the sum of per-unit bounds, and around the point estimate
    assert row["logp_ci_low_nats"] <= row["logp_nats"] <= row["logp_ci_high_nats"]
    assert row["bpec_ci_low"] <= row["bpec"] <= row["bpec_ci_high"]
    assert row["ci_replicates"] == 200 and row["ci_level"] == 0.9 and row["ci_seed"] == 3


def test_fewer_units_than_the_minimum_keep_numbers_but_no_intervals():
    table = _table(min_units=3)
    lm = table.filter(estimator="lm-guided").row(0, named=True)  # 2 units
    assert lm["logp_nats"] == pytest.approx(-26.5) and lm["bpec"] is not None
    for col in MARGINAL_COLUMNS:
        if "_ci_" in col:
            assert lm[col] is None, col
    assert lm["ci_note"] == "2 units, fewer than min_units = 3: no intervals"
    assert lm["min_units"] == 3
    exact = table.filter(estimator="exact").row(0, named=True)  # 3 units
    assert exact["ci_note"] is None and exact["logp_ci_low_nats"] is not None
    with pytest.raises(ValueError, match="min_units=1"):
        _table(min_units=1)


def test_monte_carlo_interval_per_estimator():
    rng = np.random.default_rng(0)
    recs = _records()
    weights = {}
    for r in recs:  # wr: K = 32 log-weights whose log-mean is the record's logp
        if r["estimator"] == "wr":
            lw = rng.normal(0.0, 1.0, 32)
            lw = lw - log_mean_exp(lw) + r["logp"]
            weights[r["unit_id"]] = lw
            r["log_weights"] = lw.tolist()
    recs[-1]["log_weights"] = [-7.0] * 4  # lm-guided u2: every sample the same path
    recs[-2]["log_weights"] = (np.array([0.0, 0.1, -0.1, 0.0]) - 19.5).tolist()
    table = marginal_table(unit_table(recs, KEYS), _units(), SETTINGS, 2)
    row = {r["estimator"]: r for r in table.iter_rows(named=True)}
    # exact: no Monte Carlo error
    assert row["exact"]["logp_mc_ci_low_nats"] == row["exact"]["logp_mc_ci_high_nats"] == -40.5
    assert row["exact"]["gap_mc_ci_low_nats"] == pytest.approx(2.5)
    # a deterministic bound: no interval, and why
    assert row["default"]["logp_mc_ci_low_nats"] is None
    assert row["default"]["mc_note"].startswith("a lower bound without samples")
    # wr: mc_interval over the units' weights, gap = logp - summed default
    want = mc_interval([weights[u] for u in ("u1", "u2", "u3")], [-20.0, -8.0, -15.0],
                       SETTINGS.level, seed=SETTINGS.seed)
    assert (row["wr"]["logp_mc_ci_low_nats"], row["wr"]["logp_mc_ci_high_nats"]) == \
        pytest.approx((want.low, want.high))
    assert row["wr"]["gap_mc_ci_high_nats"] == pytest.approx(want.high + 43.0)
    # centred on the estimate plus the summed v_i / 2, v_i = s_i^2 / (K m_i^2)
    jensen = sum(np.exp(w - w.max()).var(ddof=1) / (32 * np.exp(w - w.max()).mean() ** 2) / 2
                 for w in weights.values())
    assert row["wr"]["mc_correction_nats"] == pytest.approx(jensen)
    assert (row["wr"]["logp_mc_ci_low_nats"] + row["wr"]["logp_mc_ci_high_nats"]) / 2 == \
        pytest.approx(row["wr"]["logp_nats"] + jensen)
    assert row["exact"]["mc_correction_nats"] == 0.0
    assert row["wr"]["logp_mc_ci_low_nats"] < row["wr"]["logp_nats"] < \
        row["wr"]["logp_mc_ci_high_nats"]
    # lm-guided: u2 enters by its bound [default -8, estimate -7]
    lm = row["lm-guided"]
    one = mc_interval([recs[-2]["log_weights"]], [-20.0], SETTINGS.level, seed=SETTINGS.seed)
    assert lm["mc_bounded_units"] == 1
    assert (lm["logp_mc_ci_low_nats"], lm["logp_mc_ci_high_nats"]) == pytest.approx(
        (one.low - 8.0, one.high - 7.0))
    # records without log-weights (written before they were kept): no interval, and why
    old = marginal_table(unit_table(_records(), KEYS), _units(), SETTINGS, 2)
    assert old.filter(estimator="wr")["mc_note"][0].startswith("no per-unit log-weights")
    # K = 1: labelled, never an interval
    for r in recs:
        if r["estimator"] == "wr":
            r["log_weights"] = r["log_weights"][:1]
    k1 = marginal_table(unit_table(recs, KEYS), _units(), SETTINGS, 2).filter(estimator="wr")
    assert k1["logp_mc_ci_low_nats"][0] is None and k1["mc_note"][0].startswith("K=1")


def test_monte_carlo_interval_refusals_and_zero_weights():
    with pytest.raises(ValueError, match="level=1.0"):
        mc_interval([[0.0, 1.0]], [-1.0], level=1.0)
    with pytest.raises(ValueError, match="2 units of log-weights but 1 default"):
        mc_interval([[0.0, 1.0], [0.0, 2.0]], [-1.0])
    with pytest.raises(ValueError, match=r"\+inf"):
        mc_interval([[0.0, math.inf]], [-1.0])
    # a sampled path of probability 0 is a zero weight, not an error; all zero: no interval
    some = mc_interval([[-math.inf, -1.0, -2.0, -1.5]], [-3.0])
    assert some.low < log_mean_exp([-math.inf, -1.0, -2.0, -1.5]) < some.high
    none = mc_interval([[-math.inf] * 3], [-3.0])
    assert none.low is None and "-inf" in none.note
    # two units, each with two distinct weights: a resample of one value has variance 0 while
    # its estimate moved, so the interval is unbounded, and says so
    flat = mc_interval([[0.0, 5.0], [0.0, 5.0]], [-1.0, -1.0])
    assert flat.low is None and flat.note.startswith("unbounded")


def _coverage(n_units, sigma, K, reps, level, seed):
    """Share of ``reps`` synthetic tables whose Monte Carlo interval holds the true total:
    unit i's K log-weights are normal(mu_i - sigma^2 / 2, sigma), so E[w] = exp(mu_i) exactly
    (log-normal weights: heavy right tail) and the truth is sum mu_i."""
    rng = np.random.default_rng(seed)
    mu = rng.uniform(-60.0, -10.0, n_units)  # units of very different probability
    lw = rng.normal(0.0, sigma, (reps, n_units, K)) + (mu - sigma ** 2 / 2)[None, :, None]
    hits = 0
    for r in range(reps):
        got = mc_interval(list(lw[r]), mu - 5.0, level, replicates=500, seed=r)
        hits += got.low <= mu.sum() <= got.high
    return hits / reps


def test_monte_carlo_interval_covers_the_truth_at_its_nominal_rate():
    # few units and heavy-tailed weights (log-normal, log-sd 1, K = 32): the Monte Carlo error
    # is all the error there is; 600 repetitions, 3 binomial standard errors either side
    reps, level = 600, 0.9
    cover = _coverage(5, 1.0, 32, reps, level, seed=11)
    slack = 3 * math.sqrt(level * (1 - level) / reps)
    print(f"coverage {cover:.3f} at nominal {level} (+-{slack:.3f})")
    assert abs(cover - level) <= slack
    # the percentile interval of the same resamples, without the Jensen correction or the
    # studentizing, misses: the method is what makes the difference (a test that can fail)
    rng = np.random.default_rng(11)
    mu = rng.uniform(-60.0, -10.0, 5)
    lw = rng.normal(0.0, 1.0, (reps, 5, 32)) + (mu - 0.5)[None, :, None]
    idx = np.random.default_rng(1).integers(0, 32, (reps, 5, 200, 32))
    resampled = np.take_along_axis(lw[:, :, None, :].repeat(200, 2), idx, 3)
    top = resampled.max(axis=3, keepdims=True)
    sums = (np.log(np.exp(resampled - top).mean(axis=3)) + top[..., 0]).sum(axis=1)
    low, high = np.quantile(sums, [(1 - level) / 2, (1 + level) / 2], axis=1)
    naive = float(np.mean((low <= mu.sum()) & (mu.sum() <= high)))
    print(f"percentile bootstrap of the same draws: {naive:.3f}")
    assert naive < level - slack


def test_unaligned_unit_and_duplicates_are_errors():
    recs = _records() + [_rec("u9", "exact", -1.0, -1.0, "x")]
    with pytest.raises(ValueError, match="corpus 'bible' unit 'u9'"):
        marginal_table(unit_table(recs, KEYS), _units(), SETTINGS)
    recs = _records() + [_rec("u1", "exact", -1.0, -1.0, "x")]
    with pytest.raises(ValueError,
                       match="unit 'u1' appears 2 times for deu kenlm-subword-o5 exact"):
        marginal_table(unit_table(recs, KEYS), _units(), SETTINGS)


def test_run_plan_expands_tau_only_for_sampling_estimators():
    runs = run_plan(["a", "b"], ["default", "exact", "wr", "nbest", "wor"], [1.0, 0.5])
    assert len(runs) == 2 * (1 + 1 + 2 + 1 + 2)
    assert runs[0] == ("a|default|1.0", "a", "default", 1.0)
    assert [r[3] for r in runs if r[1] == "b" and r[2] == "wor"] == [1.0, 0.5]
    assert len({r[0] for r in runs}) == len(runs)


@pytest.fixture(scope="module")
def tiny_ngram(tmp_path_factory, resources_ready):
    """A 3-gram KenLM over the pieces of the tests' small unigram model."""
    from marginal_data import tiny_piece_ngram

    return tiny_piece_ngram(tmp_path_factory.mktemp("tiny_ngram"))


def test_resumed_job_equals_a_clean_run(tiny_ngram, tmp_path):
    from marginal_data import sentences

    from fairppl.marginal.exact import ngram_marginal
    from fairppl.marginal.units import kenlm_lm, run_units

    model, spm = tiny_ngram
    units = pl.DataFrame({"unit_id": ["v1", "v2", "v3"], "text": sentences(3, seed=9)})
    opts = dict(keys=KEYS, estimators=["default", "exact", "wr", "nbest"], taus=[1.0, 0.5],
                K=4, L=None, M=8, seed=0, progress=False)

    def run(folder, **extra):
        lm, vocab, encode, unigram = kenlm_lm(model, spm)
        return run_units(lm, vocab, encode, units, part=folder / ".part.jsonl",
                         out=folder / "out.parquet", unigram_model=unigram,
                         start_token="<s>", **(opts | extra))

    clean = run(tmp_path / "clean")
    assert clean.height == 3 * (1 + 1 + 2 + 1)
    assert not (tmp_path / "clean" / ".part.jsonl").exists()
    exact = clean.filter(estimator="exact", unit_id="v2").row(0, named=True)
    lm, vocab, _, _ = kenlm_lm(model, spm)
    want = ngram_marginal(lm.model, vocab, exact["text"], lm.words).logp
    assert exact["logp"] == pytest.approx(want, abs=1e-9)
    by_unit = clean.pivot(on="estimator", index="unit_id", values="logp",
                          aggregate_function="first")
    assert (by_unit["exact"] >= by_unit["default"] - 1e-9).all()
    assert (by_unit["nbest"] <= by_unit["exact"] + 1e-9).all()

    # a job killed after 4 runs, the 5th line cut short: a rerun keeps the 4, does the rest
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    plan = run_plan(["v1", "v2", "v3"], opts["estimators"], opts["taus"])
    first = clean.head(4).to_dicts()
    part = resumed / ".part.jsonl"
    (resumed / ".part.jsonl.json").write_text(json.dumps(
        {"estimators": opts["estimators"], "taus": opts["taus"], "K": 4, "L": None, "M": 8,
         "seed": 0}, sort_keys=True) + "\n", encoding="utf-8")
    first[0]["logp"] = 1.0  # marks the kept line: the rerun must not recompute it
    part.write_text("".join(json.dumps({"id": plan[i][0], **r}) + "\n"
                            for i, r in enumerate(first)) + '{"id": "v2|cut', encoding="utf-8")
    again = run(resumed)
    assert again["logp"][0] == 1.0
    assert again.drop(WORK)[1:].equals(clean.drop(WORK)[1:])

    # a partial file of other options is discarded, not mixed in
    part.write_text(json.dumps({"id": plan[0][0], **first[0]}) + "\n", encoding="utf-8")
    (resumed / ".part.jsonl.json").write_text('{"K": 99}\n', encoding="utf-8")
    again = run(resumed)
    assert again.drop(WORK).equals(clean.drop(WORK))


def test_lm_guided_runs_record_their_blocks_and_resume_with_them(tiny_ngram, tmp_path):
    """The lm-guided runs of a job leave their per-block Q(default) records (Chirkova et al.'s
    Table 2) beside the per-unit table; a job resumed from its partial file writes the same
    blocks; the blocks of a unit spell its text."""
    from marginal_data import sentences

    from fairppl.marginal.analyses import qdefault_bins
    from fairppl.marginal.units import kenlm_lm, run_units

    model, spm = tiny_ngram
    texts = sentences(2, seed=5)
    units = pl.DataFrame({"unit_id": ["v1", "v2"], "text": texts})

    def run(folder, fail_on=None):
        lm, vocab, encode, unigram = kenlm_lm(model, spm)

        def flaky(text):  # a job that dies at the unit ``fail_on``
            if text == fail_on:
                raise ValueError("killed")
            return encode(text)

        return run_units(lm, vocab, flaky, units, keys=KEYS, estimators=["default", "lm-guided"],
                         taus=[1.0], K=6, L=None, M=4, seed=0, part=folder / ".part.jsonl",
                         out=folder / "out.parquet", unigram_model=unigram,
                         blocks=folder / "blocks.parquet", progress=False)

    run(tmp_path / "clean")
    blocks = pl.read_parquet(tmp_path / "clean" / "blocks.parquet")
    assert set(blocks["unit_id"]) == {"v1", "v2"} and blocks["model"][0] == KEYS["model"]
    for uid, text in zip(["v1", "v2"], texts):
        part = blocks.filter(unit_id=uid).sort("block_index")
        assert "".join(part["block"]) == " " + text  # SentencePiece's dummy prefix
        assert part["block_index"].to_list() == list(range(part.height))
    assert (blocks["logq_default_nats"] <= 1e-12).all()
    assert (blocks["block_chars"] == blocks["block"].str.len_chars()).all()
    assert qdefault_bins(blocks)["n_blocks"].sum() == blocks.height
    # killed at the second unit: v1's runs, blocks included, survive in the partial file
    folder = tmp_path / "resumed"
    with pytest.raises(Exception, match="killed"):
        run(folder, fail_on=texts[1])
    kept = [json.loads(line) for line in (folder / ".part.jsonl").read_text().splitlines()]
    assert {r["unit_id"] for r in kept} == {"v1"} and any(r["blocks"] for r in kept)
    run(folder)
    assert pl.read_parquet(folder / "blocks.parquet").equals(blocks)


def test_fitting_units_leave_out_what_overflows_the_context():
    from fairppl.marginal.units import fitting_units

    units = pl.DataFrame({"unit_id": ["a", "b", "c"], "text": ["xx", "xxxxxxxx", "xxxx"]})
    encode = list  # one token per character
    kept, skipped = fitting_units(units, encode, max_length=10, fill=0.8)  # at most 8 positions
    assert kept["unit_id"].to_list() == ["a", "c"] and skipped == ["b"]  # 4, 10, 6 positions
    assert fitting_units(units, encode, None)[0].height == 3
