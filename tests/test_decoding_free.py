"""Decoding-free lattice proposals (fairppl.marginal.decoding_free): unbiased for the full
marginal against exact enumeration, determinism, and the fewer-tokens proposal's concentration."""

import math

import numpy as np
import pytest

from fairppl.marginal import lattice
from fairppl.marginal.decoding_free import decoding_free_marginal, proposal_lattice
from fairppl.marginal.vocab import TokenVocab

PIECES = [None, b"a", b"b", b"c", b" ", b"ab", b"bc", b"ca", b" a", b" c", b"abc", b"cab", b"b c"]
TEXT = "abcab cab"


class TrigramLM:
    """A random trigram LM (numpy, exact) with the TokenLM interface; id 0 is start and end."""

    def __init__(self, size, seed=0, scale=0.7):
        rng = np.random.default_rng(seed)
        self.a = rng.normal(size=(size, size)) * scale
        self.b = rng.normal(size=(size, size)) * scale
        self.start_id, self.end_id = 0, 0
        self.calls = self.positions = 0

    def logp(self, seqs):
        out = []
        for s in seqs:
            ctx, total = [0], 0.0
            for t in (*s, self.end_id):
                logits = self.a[ctx[-2] if len(ctx) > 1 else 0] + self.b[ctx[-1]]
                total += logits[t] - math.log(np.exp(logits).sum())
                ctx.append(t)
            out.append(total)
        self.calls += 1
        self.positions += sum(len(s) + 1 for s in seqs)
        return np.array(out)


@pytest.fixture
def setup():
    vocab = TokenVocab(PIECES)
    lm = TrigramLM(len(PIECES), seed=1)
    every = lattice.enumerate_paths(vocab.lattice(vocab.text_bytes(TEXT)), 10_000)
    lp = lm.logp(every)
    exact = lp.max() + math.log(np.exp(lp - lp.max()).sum())
    return vocab, lm, every, exact


@pytest.mark.parametrize("proposal,lam", [("uniform", 0.0), ("fewer_tokens", 0.5),
                                          ("fewer_tokens", 2.0)])
def test_unbiased_with_replacement(setup, proposal, lam):
    vocab, lm, every, exact = setup
    # by hand, f(i) = tokenizations of the bytes from i: f(9..5) = 1, 1, 2, 4, 6; f(4) = f(5) +
    # f(7) ("b", "b c") = 8; f(3) = 8 + 6 = 14; f(2) = 14 + 8 + 6 = 28; f(1) = 28 + 14 = 42;
    # f(0) = 42 + 28 + 14 = 84
    assert len(every) == len(set(every)) == 84
    res = decoding_free_marginal(lm, vocab, TEXT, K=3000, proposal=proposal, lam=lam,
                                 rng=np.random.default_rng(4), return_samples=True)
    assert res.n_paths == 84 and res.distinct <= 84 and set(res.samples) <= set(every)
    w = np.exp(res.log_weights - exact)
    se = w.std() / math.sqrt(w.size)
    assert abs(w.mean() - 1.0) < 4 * se and se < 0.12, (w.mean(), se)
    assert res.ci_low <= res.logp <= res.ci_high
    assert res.logp == pytest.approx(exact + math.log(w.mean()))


def test_uniform_weights_are_n_paths_times_p(setup):
    vocab, lm, every, exact = setup
    res = decoding_free_marginal(lm, vocab, TEXT, K=50, proposal="uniform",
                                 rng=np.random.default_rng(0), return_samples=True)
    np.testing.assert_allclose(res.log_weights, lm.logp(res.samples) + math.log(84), atol=1e-9)


def test_without_replacement_is_unbiased_over_seeds_and_exact_when_k_covers_all(setup):
    vocab, lm, every, exact = setup
    est = [decoding_free_marginal(lm, vocab, TEXT, K=8, lam=1.0, wor=True,
                                  rng=np.random.default_rng(s)).logp for s in range(800)]
    ratio = np.exp(np.array(est) - exact)
    assert abs(ratio.mean() - 1.0) < 4 * ratio.std() / math.sqrt(ratio.size)
    res = decoding_free_marginal(lm, vocab, TEXT, K=200, lam=1.0, wor=True,
                                 rng=np.random.default_rng(0))
    assert res.distinct == 84 and res.logp == pytest.approx(exact, abs=1e-9)
    assert math.isnan(res.ci_low) and math.isnan(res.ci_high)


def test_deterministic_for_a_seed_and_default_summaries(setup):
    vocab, lm, every, exact = setup
    default = lattice.viterbi(proposal_lattice(vocab, TEXT, "fewer_tokens", 1.0))[0]
    kw = dict(K=20, lam=1.0, default_ids=default, return_samples=True)
    one = decoding_free_marginal(lm, vocab, TEXT, rng=np.random.default_rng(9), **kw)
    two = decoding_free_marginal(lm, vocab, TEXT, rng=np.random.default_rng(9), **kw)
    assert one.samples == two.samples and np.array_equal(one.log_weights, two.log_weights)
    assert (one.ci_low, one.ci_high) == (two.ci_low, two.ci_high)
    assert one.percent_nd == 100.0 * sum(s != default for s in one.samples) / 20
    assert one.logp_default == pytest.approx(float(lm.logp([default])[0]))


def test_large_lam_concentrates_on_the_fewest_token_paths(setup):
    vocab, lm, every, exact = setup
    fewest = min(len(p) for p in every)
    top = {p for p in every if len(p) == fewest}
    res = decoding_free_marginal(lm, vocab, TEXT, K=400, lam=30.0, rng=np.random.default_rng(1),
                                 return_samples=True)
    assert set(res.samples) == top  # every fewest-token path drawn, nothing else
    # the proposal puts all but exp(-30) of its mass on them, uniformly
    lat = proposal_lattice(vocab, TEXT, "fewer_tokens", 30.0)
    for p in top:
        assert lattice.path_logq(lat, p) == pytest.approx(-math.log(len(top)), abs=1e-9)


def test_bad_arguments_are_named(setup):
    vocab, lm, _, _ = setup
    with pytest.raises(ValueError, match="proposal must be one of"):
        decoding_free_marginal(lm, vocab, TEXT, K=2, proposal="greedy", rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="lam .* must be finite and >= 0"):
        decoding_free_marginal(lm, vocab, TEXT, K=2, lam=-1.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="K must be at least 1"):
        decoding_free_marginal(lm, vocab, TEXT, K=0, rng=np.random.default_rng(0))
