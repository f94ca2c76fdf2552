"""fairppl.marginal.lengths: estimators against the exact n-gram marginal on prefixes."""

import math

import polars as pl
import pytest

from fairppl.marginal.lengths import length_summary, length_sweep, prefix, recommendation


def test_prefix_words():
    assert prefix("In  the beginning God", 2) == "In the"
    assert prefix("Amen.", 3) == "Amen."
    with pytest.raises(ValueError, match="at least 1"):
        prefix("a b", 0)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory, resources_ready):
    from marginal_data import sentences, tiny_piece_ngram

    from fairppl.marginal.units import kenlm_lm

    model, spm = tiny_piece_ngram(tmp_path_factory.mktemp("lengths"))
    lm, vocab, encode, unigram = kenlm_lm(model, spm)
    texts = [s for s in sentences(40, seed=11) if len(s.split()) >= 5][:3]
    units = pl.DataFrame({"unit_id": ["a", "b", "c"], "text": texts})
    return length_sweep(lm, vocab, encode, units, word_counts=[1, 3, 99], K=8, M=8, seed=0,
                        unigram_model=unigram), texts, (lm, vocab, unigram, encode)


def test_sweep_against_the_exact_forward(sweep):
    from fairppl.marginal.exact import ngram_marginal

    table, texts, (lm, vocab, _, _) = sweep
    # 3 units x 3 lengths x 4 estimators; 99 words = the whole unit
    assert table.height == 3 * 3 * 4
    assert set(table["estimator"]) == {"lm-guided", "decoding-free", "wor-1best", "beam"}
    row = table.filter(unit_id="b", n_words=99, estimator="beam").row(0, named=True)
    want = ngram_marginal(lm.model, vocab, " ".join(texts[1].split()), lm.words).logp
    assert row["exact"] == pytest.approx(want, abs=1e-9)
    assert row["n_chars"] == len(" ".join(texts[1].split()))
    # the beam, decoding-free and the default are lower bounds (the default among their paths);
    # the exact value is at least the default
    bounds = table.filter(pl.col("estimator").is_in(["beam", "decoding-free"]))
    assert bounds.height == 2 * 9 and bounds["lower_bound"].all()
    assert (bounds["error_nats"] <= 1e-9).all()
    assert (bounds["logp"] >= bounds["logp_default"] - 1e-9).all()
    assert not table.filter(estimator="lm-guided")["lower_bound"].any()
    assert (table["exact"] >= table["logp_default"] - 1e-9).all()
    assert (table["error_nats"] == table["logp"] - table["exact"]).all()


def test_summary_and_recommendation(sweep):
    table = sweep[0].with_columns(language=pl.lit("xx"))
    summary = length_summary(table)
    assert summary.height == 3 * 4
    assert summary.filter(estimator="decoding-free")["lower_bound"].all()
    part = table.filter(estimator="lm-guided", n_words=3)
    row = summary.filter(estimator="lm-guided", n_words=3).row(0, named=True)
    assert row["n_units"] == 3
    assert row["rmse_nats"] == pytest.approx(math.sqrt((part["error_nats"] ** 2).mean()))
    lines = recommendation(summary, tolerance_nats=1e9)  # everything qualifies: the cheapest
    assert len(lines) == 3 and lines[0].startswith("1 words")
    cheapest = summary.filter(n_words=1).sort("positions")["estimator"][0]
    assert cheapest in lines[0]
    assert "none within" in recommendation(summary, tolerance_nats=-1.0)[0]
    # a lower bound is named as one
    only_free = summary.filter(estimator="decoding-free")
    assert "a lower bound, never above the exact value" in recommendation(only_free, 1e9)[0]
    only_guided = summary.filter(estimator="lm-guided")
    assert "lower bound" not in recommendation(only_guided, 1e9)[0]


def test_positions_are_each_estimators_own_work(sweep):
    # the n-gram's prefix cache is cleared before each estimator: the order they run in does not
    # change what each one is charged (it would: beam and decoding-free share many prefixes)
    from fairppl.marginal.lengths import DEFAULT_ESTIMATORS

    table, texts, (lm, vocab, unigram, encode) = sweep
    units = pl.DataFrame({"unit_id": ["b"], "text": [texts[1]]})
    again = length_sweep(lm, vocab, encode, units, word_counts=[1, 3, 99], K=8, M=8, seed=0,
                         unigram_model=unigram, estimators=DEFAULT_ESTIMATORS[::-1])
    want = table.filter(unit_id="b").sort("n_words", "estimator")
    got = again.sort("n_words", "estimator")
    assert got["positions"].to_list() == want["positions"].to_list()
    assert got["logp"].to_list() == want["logp"].to_list()
    assert (got["positions"] > 0).all()
