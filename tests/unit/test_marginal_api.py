"""fairppl.marginal.api: every estimator through one call, on a tiny random Llama over a unigram
model trained here; bounds against exact enumeration, interval coverage over seeds, the record's
keys and units, and the refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import logsumexp

torch = pytest.importorskip("torch")

from fairppl.core.errors import InputError  # noqa: E402
from fairppl.marginal import api  # noqa: E402
from fairppl.marginal.lattice import enumerate_paths  # noqa: E402
from fairppl.marginal.unigram import UnigramModel, lattice  # noqa: E402
from fairppl.tokenlm.lm_hf import HFTokenLM  # noqa: E402
from marginal_data import sentences, train_unigram  # noqa: E402
from fairppl.marginal.vocab import vocab_from_hf  # noqa: E402

@pytest.fixture(scope="module")
def spm_file(tmp_path_factory) -> str:
    return train_unigram(tmp_path_factory.mktemp("api_spm"))


@pytest.fixture(scope="module")
def tiny(spm_file):
    """(HFTokenLM of a tiny random Llama over the unigram pieces, its TokenVocab, the HF
    tokenizer, the UnigramModel)."""
    from fairppl.neural import NeuralConfig, build_model, special_ids_of
    from fairppl.tokenizers import vocab_size
    from fairppl.tokenizers.convert import to_hf_tokenizer

    tok = to_hf_tokenizer(spm_file)
    special = special_ids_of(tok)
    cfg = NeuralConfig(d_model=16, n_layers=2, n_heads=2, d_ff=32, context=64, seed=7)
    model = build_model(cfg, vocab_size(tok), special["bos"], special["eos"], special["pad"])
    return HFTokenLM(model.eval(), tok), vocab_from_hf(tok), tok, UnigramModel.from_file(spm_file)


def _ids(tok, text):
    return tok(text, add_special_tokens=False)["input_ids"]


def _run(tiny, text, estimator, seed=0, **kw):
    lm, vocab, tok, uni = tiny
    return api.estimate(lm, vocab, text, estimator, rng=np.random.default_rng(seed),
                        default_ids=_ids(tok, text), unigram_model=uni, **kw)


def test_every_estimator_runs_and_bounds_hold(tiny):
    text = "und Gott sah"
    recs = {e: _run(tiny, text, e, K=5, M=64, L=None, beam=4) for e in api.ESTIMATORS}
    exact = recs["exact"]
    for name, rec in recs.items():
        assert tuple(rec) == api.FIELDS, name
        assert rec["text"] == text and rec["estimator"] == name and rec["end_scored"] is True
        assert (rec["n_chars"], rec["n_bytes"], rec["n_words"]) == (12, 12, 3)
        assert rec["logp_default"] == pytest.approx(exact["logp_default"], abs=1e-9)
        assert math.isfinite(rec["logp"]) and rec["logp"] < 0 and rec["seconds"] >= 0
        assert rec["lm_calls"] >= 1 and rec["positions"] >= rec["n_tokens"]
        assert rec["entropy"] > 0 and rec["entropy_per_token"] == pytest.approx(
            rec["entropy"] / rec["n_tokens"])
    # lower bounds in nats, with float slack only
    for name in ("default", "beam", "nbest", "decoding-free"):
        assert recs[name]["lower_bound"] is True
        assert recs[name]["logp"] <= exact["logp"] + 1e-6, name
        assert recs[name]["ci_low"] is None and recs[name]["ci_high"] is None
    for name in ("beam", "decoding-free"):  # the default is among their paths
        assert recs[name]["logp"] >= recs["default"]["logp"] - 1e-6, name
    assert recs["decoding-free"]["slack"] == 2 and recs["decoding-free"]["n_distinct"] >= 1
    assert recs["default"]["logp"] == recs["default"]["logp_default"]
    assert exact["ci_low"] == exact["ci_high"] == exact["logp"]
    assert exact["n_tokenizations"] == exact["n_samples"] == len(
        enumerate_paths(tiny[1].lattice(tiny[1].text_bytes(text)), 10 ** 6))
    for name in ("wr", "lm-guided"):
        assert recs[name]["ci_low"] <= recs[name]["logp"] <= recs[name]["ci_high"], name
    assert recs["wor"]["ci_low"] is None and recs["wor-1best"]["n_samples"] == 5
    assert not recs["wr"]["enumerated"] and recs["wr"]["n_tokenizations"] > 5
    assert 0.0 <= recs["lm-guided"]["percent_nd"] <= 100.0
    assert recs["lm-guided"]["t0"] + recs["lm-guided"]["t1"] + recs["lm-guided"]["t2"] == \
        pytest.approx(1.0)


def test_exact_is_the_naive_sum_and_default_the_tokenizer_path(tiny):
    lm, vocab, tok, _ = tiny
    text = "Tag"
    rec = _run(tiny, text, "exact")
    paths = enumerate_paths(vocab.lattice(vocab.text_bytes(text)), 10 ** 6)
    assert rec["logp"] == pytest.approx(float(logsumexp(lm.logp(paths))), abs=1e-6)
    assert rec["logp_default"] == pytest.approx(float(lm.logp([_ids(tok, text)])[0]), abs=1e-9)


def _support_sum(tiny, text):
    """log sum of P over every path of the unigram lattice (what wr estimates), nats."""
    lm, _, _, uni = tiny
    return float(logsumexp(lm.logp(enumerate_paths(lattice(uni, text), 10 ** 6))))


def test_sampling_intervals_cover_the_truth_for_most_seeds(tiny):
    # lm-guided, one block, M covering every tokenization: its target is the exact marginal;
    # wr: the unigram lattice's support
    text, n_seeds = "Gott", 20
    truth = {"lm-guided": _run(tiny, text, "exact")["logp"]}
    truth["wr"] = _support_sum(tiny, "den dem der die das")
    texts = {"lm-guided": text, "wr": "den dem der die das"}
    for name in ("lm-guided", "wr"):
        # wr at tau=20: the tiny unigram model's Q is one-hot in practice at tau=1 (and at 4)
        recs = [_run(tiny, texts[name], name, seed, K=10 if name == "wr" else 30, L=None, M=128,
                     tau=20.0 if name == "wr" else 1.0) for seed in range(n_seeds)]
        assert all(r["enumerated"] is None or r["enumerated"] is False for r in recs)
        hits = sum(r["ci_low"] - 1e-9 <= truth[name] <= r["ci_high"] + 1e-9 for r in recs)
        ratio = np.mean([math.exp(r["logp"] - truth[name]) for r in recs])
        print(f"{name}: {hits}/{n_seeds} intervals contain the truth, mean P-hat/P {ratio:.3f}")
        assert hits >= 0.8 * n_seeds, name
        assert abs(ratio - 1.0) < 0.15, name  # 20 means of 10-30 weights: a few % spread
        assert np.mean([r["n_distinct"] or 2 for r in recs]) > 1.5, name  # not degenerate


def test_unigram_enumeration_is_flagged_and_exact_on_its_support(tiny):
    rec = _run(tiny, "Tag", "wr", K=10_000)
    assert rec["enumerated"] is True and rec["n_samples"] == rec["n_tokenizations"]
    assert rec["logp"] == pytest.approx(_support_sum(tiny, "Tag"), abs=1e-9)
    assert rec["ci_low"] == rec["ci_high"] == rec["logp"]


def test_consistent_mode_is_a_lower_bound_on_repeated_words(tiny):
    text = "und und und"
    ind = _run(tiny, text, "wor", K=10_000, mode="independent")
    con = _run(tiny, text, "wor", K=10_000, mode="consistent")
    assert ind["enumerated"] and con["enumerated"] and con["lower_bound"]
    assert con["n_tokenizations"] ** 3 == ind["n_tokenizations"]
    assert con["logp"] < ind["logp"]


def test_refusals_name_the_valid_choices(tiny):
    lm, vocab, tok, _ = tiny
    with pytest.raises(InputError, match=r"unknown estimator 'mcmc'.*default, exact, beam"):
        _run(tiny, "Tag", "mcmc")
    with pytest.raises(InputError, match=r"'nbest'.*unigram model.*default, exact"):
        api.estimate(lm, vocab, "Tag", "nbest", rng=np.random.default_rng(0),
                     default_ids=_ids(tok, "Tag"))
    with pytest.raises(InputError, match=r"K=0"):
        _run(tiny, "Tag", "wr", K=0)
    with pytest.raises(InputError, match="empty text"):
        _run(tiny, "", "default")
    with pytest.raises(InputError, match="round-trip"):
        api.estimate(lm, vocab, "Tag", "default", rng=np.random.default_rng(0),
                     default_ids=_ids(tok, "Tage"))


def test_records_keep_their_log_weights_and_an_honest_interval(tiny):
    # the record's interval is mc_interval's on its own K log-weights
    from fairppl.marginal.estimate import log_mean_exp, mc_interval

    rec = _run(tiny, "Gott", "lm-guided", 3, K=30, L=None, M=128)
    assert len(rec["log_weights"]) == 30
    assert rec["logp"] == pytest.approx(log_mean_exp(rec["log_weights"]), abs=1e-12)
    if len(set(rec["log_weights"])) > 1:
        assert rec["ci_low"] < rec["logp"] < rec["ci_high"] and rec["ci_note"] is None
    # K = 1: no interval, a note instead
    one = _run(tiny, "Gott", "lm-guided", 3, K=1, L=None, M=128)
    assert one["ci_low"] is None and one["ci_high"] is None and "K=1" in one["ci_note"]
    # every weight equal (all samples the default): the bound from the default's log P to the
    # estimate, not a zero-width interval
    same = mc_interval([[-3.0] * 8], [-5.0])
    assert (same.low, same.high, same.n_bounded) == (-5.0, -3.0, 1)
    recs = [_run(tiny, "und Gott", "lm-guided", seed, K=2, L=None, M=128) for seed in range(40)]
    flat = [r for r in recs if len(set(r["log_weights"])) == 1]
    assert flat, "expected some runs whose two samples are the same path"
    for r in flat:
        assert (r["ci_low"], r["ci_high"]) == (min(r["logp_default"], r["logp"]),
                                               max(r["logp_default"], r["logp"]))
        assert r["ci_high"] > r["ci_low"]  # -log Q(default) > 0: not zero-width
    for name in ("wor", "nbest", "default", "exact"):
        assert _run(tiny, "Gott", name if name != "wor" else "wor", 0)["log_weights"] is None
