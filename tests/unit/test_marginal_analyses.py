"""fairppl.marginal.analyses: samples-needed curves against hand sums and exact enumeration of a
tiny unigram lattice under a tiny piece n-gram; Q(default) per block of the LM-guided proposal
against a direct computation with the LM, and the Q(default) bins against hand counts."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from scipy.special import logsumexp

from fairppl.marginal import analyses
from fairppl.marginal.blocks import top_m_tokenizations
from fairppl.marginal.lattice import count_paths, enumerate_paths, viterbi
from fairppl.marginal.lm_guided import lm_guided_marginal
from marginal_data import sentences, train_piece_ngram, train_unigram
from test_lm_guided import PIECES, TEXT, ListVocab, TrigramLM

# ---------------------------------------------------------------------------------------------
# Samples-needed curves


def test_missing_curve_and_paths_needed_by_hand():
    logp = np.log([0.1, 0.3, 0.2])
    q_curve = analyses.missing_curve(logp, np.array([3.0, 1.0, 2.0]), 0.0)  # order 0.1, 0.2, 0.3
    p_curve = analyses.missing_curve(logp, logp, 0.0)  # order 0.3, 0.2, 0.1
    np.testing.assert_allclose(np.exp(q_curve), [0.1, 0.3, 0.6], rtol=1e-12)
    np.testing.assert_allclose(np.exp(p_curve), [0.3, 0.5, 0.6], rtol=1e-12)
    assert analyses.paths_needed(q_curve, 0.5) == 3 and analyses.paths_needed(p_curve, 0.5) == 2
    assert analyses.paths_needed(p_curve, 0.3) == 1 and analyses.paths_needed(p_curve, 0.7) is None
    # ties keep the input order
    tie = analyses.missing_curve(np.log([0.25, 0.5]), np.zeros(2), math.log(0.75))
    np.testing.assert_allclose(np.exp(tie), [1 / 3, 1.0], rtol=1e-12)
    with pytest.raises(ValueError, match="two equal, non-empty vectors"):
        analyses.missing_curve(np.zeros(2), np.zeros(3), 0.0)


@pytest.fixture(scope="module")
def ngram(tmp_path_factory, resources_ready):
    """(KenLMTokenLM, TokenVocab, UnigramModel): a 3-gram over a tiny unigram model's pieces."""
    from fairppl.marginal.units import kenlm_lm

    work = tmp_path_factory.mktemp("analyses_ngram")
    spm = train_unigram(work)
    lm, vocab, _, unigram = kenlm_lm(train_piece_ngram(work, spm, sentences(300, seed=1)), spm)
    return lm, vocab, unigram


def _is_nondecreasing(x):
    return bool(np.all(np.diff(x) >= 0.0))


def test_curves_over_every_path_end_at_the_lattice_sum(ngram):
    from fairppl.marginal.unigram import lattice

    lm, vocab, unigram = ngram
    text = "der Tag und die Nacht"
    lat = lattice(unigram, text)
    every = enumerate_paths(lat, 10_000)
    assert 8 <= len(every) == count_paths(lat) <= 200
    got = analyses.unit_curves(lm, vocab, unigram, text, len(every), np.random.default_rng(0))
    assert sorted(got.paths) == sorted(every) and got.n_lattice_paths == len(every)
    support = float(logsumexp(lm.logp(every)))  # the lattice's paths, scored one by one
    assert got.support_missing_nats == pytest.approx(support - got.logp_exact, abs=1e-9)
    # the full marginal also sums byte-fallback spellings that the unigram lattice lacks (here
    # of negligible mass: unseen pieces under the n-gram)
    assert got.support_missing_nats <= 0.0
    for order in analyses.ORDERS:
        curve = got.curves[order]
        assert len(curve) == len(every) and _is_nondecreasing(curve)
        assert curve[-1] == pytest.approx(got.support_missing_nats, abs=1e-9)
        # against the lattice's own sum, every path holds all of it: exactly 0 at the end
        rel = analyses.missing_curve(got.logp, got.logq if order == "Q" else got.logp, support)
        assert rel[-1] == pytest.approx(0.0, abs=1e-12)
    assert np.all(got.curves["P"] >= got.curves["Q"] - 1e-12)
    assert got.curves["P"][0] == pytest.approx(got.logp.max() - got.logp_exact, abs=1e-12)
    assert got.curves["Q"][0] == pytest.approx(got.logp[np.argmax(got.logq)] - got.logp_exact,
                                               abs=1e-12)
    np.testing.assert_allclose(np.exp(got.logq).sum(), 1.0, rtol=1e-9)  # Q over every path


def test_curves_with_fewer_samples_than_paths(ngram):
    from fairppl.marginal.unigram import lattice

    lm, vocab, unigram = ngram
    text = "Gott sah das Licht und die Erde"
    K = 6
    lat = lattice(unigram, text)
    assert count_paths(lat) > 4 * K
    got = analyses.unit_curves(lm, vocab, unigram, text, K, np.random.default_rng(3))
    assert K <= len(got.paths) <= 2 * K and len(set(got.paths)) == len(got.paths)
    assert viterbi(lat)[0] in got.paths
    np.testing.assert_allclose(got.logp, lm.logp(got.paths), rtol=0, atol=0)
    for order in analyses.ORDERS:
        assert _is_nondecreasing(got.curves[order])
        assert got.curves[order][-1] <= got.support_missing_nats + 1e-12
    assert np.all(got.curves["P"] >= got.curves["Q"] - 1e-12)
    again = analyses.unit_curves(lm, vocab, unigram, text, K, np.random.default_rng(3))
    assert again.paths == got.paths and np.array_equal(again.curves["Q"], got.curves["Q"])


def test_curve_table_and_summary(ngram):
    lm, vocab, unigram = ngram
    units = pl.DataFrame({"unit_id": ["a", "b", "c"],
                          "text": ["und ja", "Gott sah gut", "der Tag und die Nacht"]})
    keys = {"corpus": "c", "language": "deu", "model": "m", "tokenizer": "t"}
    curves = analyses.samples_needed_curves(lm, vocab, unigram, units, K=4, tau=1.0, seed=0,
                                            keys=keys)
    assert {"missing_nats", "logp_exact_nats", "support_missing_nats", "n_paths",
            "order"} <= set(curves.columns)
    assert curves.filter(pl.col("missing_nats") > 1e-12).height == 0
    summary = analyses.samples_needed_summary(curves)
    assert summary.height == 2 and summary["order"].to_list() == ["Q", "P"]
    for row in summary.iter_rows(named=True):
        part = curves.filter(pl.col("order") == row["order"])
        needed = [analyses.paths_needed(u.sort("n_paths")["missing_nats"].to_numpy(), 0.99)
                  for _, u in part.group_by("unit_id", maintain_order=True)]
        assert row["n_units"] == 3
        assert row["share_units_reaching_99pct"] == pytest.approx(
            sum(n is not None for n in needed) / 3)


def test_summary_medians_by_hand():
    def unit(uid, values):
        return [{"language": "x", "unit_id": uid, "order": "Q", "n_paths": n,
                 "missing_nats": math.log(v), "support_missing_nats": -1e-4}
                for n, v in enumerate(values, start=1)]

    rows = (unit("a", [0.5, 0.995, 0.9995]) + unit("b", [0.995, 0.999, 1.0])
            + unit("c", [0.1, 0.2, 0.3]))
    got = analyses.samples_needed_summary(pl.DataFrame(rows)).row(0, named=True)
    # 99%: a needs 2, b 1, c never -> median of (1, 2, inf) = 2; 99.9%: a 3, b 2, c never
    assert got["median_paths_to_99pct"] == 2 and got["median_paths_to_99_9pct"] == 3
    assert got["share_units_reaching_99pct"] == pytest.approx(2 / 3)
    rows += unit("d", [0.1, 0.1, 0.1])  # now half never reach: the median is not a number
    got = analyses.samples_needed_summary(pl.DataFrame(rows)).row(0, named=True)
    assert got["median_paths_to_99pct"] is None and got["share_units_reaching_99pct"] == 0.5


def test_curve_quantiles_by_hand(tmp_path):
    def unit(uid, order, values):
        return [{"language": "x", "unit_id": uid, "order": order, "n_paths": n,
                 "missing_nats": math.log(v)} for n, v in enumerate(values, start=1)]

    # unit c drew only 1 distinct path: its share 0.3 is carried to n = 2 and 3
    rows = (unit("a", "Q", [0.5, 0.9, 1.0]) + unit("b", "Q", [0.7, 0.8, 0.95])
            + unit("c", "Q", [0.3]) + unit("a", "P", [0.9, 1.0]))
    got = analyses.samples_needed_quantiles(pl.DataFrame(rows))
    q = got.filter(order="Q").sort("n_paths")
    assert q["n_units"].to_list() == [3, 3, 3]
    assert q["share_median_percent"].to_list() == pytest.approx([50.0, 80.0, 95.0])
    # numpy's linear percentile of (30, 50, 70) and (30, 80, 90): 40/60 and 55/85
    assert q["share_q25_percent"].to_list()[:2] == pytest.approx([40.0, 55.0])
    assert q["share_q75_percent"].to_list()[:2] == pytest.approx([60.0, 85.0])
    p = got.filter(order="P").sort("n_paths")
    assert p["share_median_percent"].to_list() == pytest.approx([90.0, 100.0])
    assert analyses.samples_needed_quantiles(pl.DataFrame()).columns == got.columns

    from fairppl.report.plots_marginal import samples_needed_figure

    # read back from per-language CSVs as the workflow writes them: the same quantiles
    for i, language_rows in enumerate((rows[:7], rows[7:])):
        pl.DataFrame(language_rows).write_csv(tmp_path / f"curves{i}.csv")
    read = analyses.read_curves([str(tmp_path / "curves0.csv"), str(tmp_path / "curves1.csv")])
    assert analyses.samples_needed_quantiles(read).equals(got)
    assert analyses.read_curves([]).height == 0
    for frame, name in ((read, "curves.png"), (pl.DataFrame(), "none.png")):
        samples_needed_figure(frame, str(tmp_path / name))
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------------------------------------
# Q(default)


def test_blocks_out_equals_direct_computation_and_changes_nothing():
    vocab, M = ListVocab(PIECES), 3
    lm = TrigramLM(len(PIECES), seed=3)
    first, second = (top_m_tokenizations(vocab, b, 1)[0] for b in (b"abcab", b" cab"))
    default = first + second
    out: list = []
    kw = dict(default_ids=default, K=40, L=20, M=M, return_samples=True)
    res = lm_guided_marginal(lm, vocab, TEXT, rng=np.random.default_rng(1), blocks_out=out, **kw)
    plain = lm_guided_marginal(lm, vocab, TEXT, rng=np.random.default_rng(1), **kw)
    assert res.samples == plain.samples and np.array_equal(res.log_weights, plain.log_weights)
    assert [(r["block_index"], r["block"]) for r in out] == [(0, "abcab"), (1, " cab")]
    for rec, prefix, block, dflt in zip(out, [(), first], [b"abcab", b" cab"], [first, second]):
        cands = top_m_tokenizations(vocab, block, M)
        lp = lm.logp_next(prefix, cands)
        q = math.exp(lp[cands.index(dflt)]) / np.exp(lp).sum()
        assert rec["logq_default_nats"] == pytest.approx(math.log(q), abs=1e-12)
        assert (rec["kind"], rec["n_candidates"]) == ("T0", len(cands)) and 0 < q < 1


def test_a_default_outside_the_candidates_has_q_zero_and_ends_the_records():
    vocab, lm = ListVocab(PIECES), TrigramLM(len(PIECES), seed=3)
    chars = tuple(PIECES.index(bytes([c])) for c in TEXT.encode())  # one token per character
    out: list = []
    lm_guided_marginal(lm, vocab, TEXT, default_ids=chars, K=10, L=20, M=2,
                       rng=np.random.default_rng(0), blocks_out=out)
    assert len(out) == 1 and out[0]["logq_default_nats"] == -math.inf  # no sample has its prefix


def test_qdefault_bins_by_hand():
    qs = [0.0, 0.05, 0.1, 0.3, 0.5, 0.9, 0.95, 0.99, 1.0, 1.0]
    blocks = ["a", "bb", "ccc", "dd", "e", "ff", "g", "the", "the", " of"]
    rows = [{"model": "m", "language": "x", "block": b, "block_chars": len(b),
             "logq_default_nats": math.log(q) if q else -math.inf} for q, b in zip(qs, blocks)]
    rows.append({"model": "n", "language": "x", "block": "zz", "block_chars": 2,
                 "logq_default_nats": 0.0})
    got = analyses.qdefault_bins(pl.DataFrame(rows))
    m = got.filter(pl.col("model") == "m")
    assert m["bin"].to_list() == list(analyses.BIN_LABELS)
    # 0 and 0.05 | 0.1 and 0.3 | 0.5 | 0.9 and 0.95 | 0.99, 1 and 1: lower edges inclusive
    assert m["n_blocks"].to_list() == [2, 2, 1, 2, 3]
    assert m["share_blocks_pct"].to_list() == pytest.approx([20, 20, 10, 20, 30])
    assert m["mean_block_chars"].to_list() == pytest.approx([1.5, 2.5, 1.0, 1.5, 3.0])
    assert json.loads(m["examples"][4]) == ["the", " of"]
    assert json.loads(m["examples"][0]) == ["a", "bb"]
    n = got.filter(pl.col("model") == "n")
    assert n["n_blocks"].to_list() == [0, 0, 0, 0, 1] and n["mean_block_chars"][0] is None
    with pytest.raises(ValueError, match="must be <= 0 nats"):
        analyses.qdefault_bin(np.array([0.1]))
    with pytest.raises(Exception, match="lack columns"):
        analyses.qdefault_bins(pl.DataFrame({"model": ["m"]}))
    with pytest.raises(Exception, match="none of the grouping columns"):
        analyses.qdefault_bins(pl.DataFrame({"block": ["m"]}))
    assert got.columns[:2] == ["language", "model"]  # the key columns it has, in table order


def test_empty_inputs_give_typed_tables_with_every_column():
    # A study whose marginal stage covers no language still writes both tables (the report reads
    # their headers): an empty summary and empty bins, with the columns of a full one.
    from fairppl.marginal.units import block_table
    summary = analyses.samples_needed_summary(pl.DataFrame())
    assert summary.height == 0
    assert summary.columns[:5] == ["corpus", "language", "model", "tokenizer", "order"]
    assert summary.schema["median_paths_to_99_9pct"] == pl.Float64
    full = analyses.samples_needed_summary(pl.DataFrame(
        [{"corpus": "c", "language": "x", "model": "m", "tokenizer": "t", "unit_id": "1",
          "order": "Q", "n_paths": 1, "missing_nats": 0.0, "support_missing_nats": 0.0}]))
    assert full.columns == summary.columns and full.height == 1
    bins = analyses.qdefault_bins(block_table([], {}))
    assert bins.height == 0 and bins.columns == [
        "corpus", "language", "model", "tokenizer", "bin", "n_blocks", "share_blocks_pct",
        "mean_block_chars", "examples"]
