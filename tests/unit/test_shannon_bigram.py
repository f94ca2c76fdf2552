"""The paper's bigram with the discount of its eq. 7: counts and probabilities by hand,
normalisation over the m outcomes for every history, and the exhaustive gambling identity
(eqs. 2-3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairppl.core.errors import InputError
from fairppl.shannon.bigram import START, DiscountBigram
from fairppl.shannon.gambling import gambling_perplexity, summarize_bets
from fairppl.shannon.outcomes import Outcomes, build_outcomes, contexts, unit_outcomes

# <s> a b a </s> | <s> b a </s> | <s> a c </s>, with c out of the vocabulary (a, b).
TRAIN = ["a b a", "b a", "a c"]


@pytest.fixture()
def model():
    outcomes = build_outcomes(TRAIN, 2)
    assert outcomes.labels == ("a", "b", "<unk>", "</s>")
    return DiscountBigram.fit(TRAIN, outcomes, alpha=0.5)


def test_counts_by_hand(model):
    # Histories in the order a, b, <unk>, </s> (never one), <s>.
    assert model.history_counts.tolist() == [4, 2, 1, 0, 3]
    assert model.distinct_successors.tolist() == [3, 1, 1, 0, 2]
    # Predecessors: a <- <s>, b; b <- <s>, a; <unk> <- a; </s> <- a, <unk>.
    assert model.distinct_predecessors.tolist() == [2, 2, 1, 2]
    assert model.n_distinct == 7
    assert model.zero_outcomes == ()


def test_probabilities_by_hand(model):
    # Eq. 7 with alpha = 0.5, D = 7.
    expected = {
        ("a", START): 25 / 42, ("b", START): 11 / 42, ("<unk>", START): 2 / 42,
        ("</s>", START): 4 / 42,
        ("a", "a"): 6 / 56, ("b", "a"): 13 / 56, ("<unk>", "a"): 10 / 56, ("</s>", "a"): 27 / 56,
        ("a", "b"): 23 / 28, ("</s>", "b"): 2 / 28,
        ("</s>", "<unk>"): 9 / 14, ("b", "<unk>"): 2 / 14,
    }
    for (v, u), p in expected.items():
        assert model.prob(v, u) == pytest.approx(p, rel=1e-14), (v, u)
        assert model.bets(u)[model.outcomes.index[v]] == pytest.approx(p, rel=1e-14), (v, u)
    assert model.log_prob_unit("a b") == pytest.approx(
        math.log(25 / 42) + math.log(13 / 56) + math.log(2 / 28), rel=1e-14)
    assert model.log_prob_unit("") == pytest.approx(math.log(4 / 42), rel=1e-14)
    # An out-of-vocabulary word is <unk>, as a prediction and as a history.
    assert model.log_prob_unit("zz") == pytest.approx(math.log(2 / 42) + math.log(9 / 14),
                                                      rel=1e-14)


def test_histories(model):
    assert model.history("") == START
    assert model.history([]) == START
    assert model.history("b a") == "a"
    assert model.history(["a", "qq"]) == "<unk>"
    assert model.history("a </s>") == "<unk>"  # a reserved word in a text is out of vocabulary


def test_unseen_histories_and_outcomes():
    # z is a vocabulary word the training units never use: an unseen history and an outcome
    # never seen as a successor.
    model = DiscountBigram.fit(TRAIN, Outcomes(("a", "b", "z")), alpha=0.5)
    assert model.zero_outcomes == ("z",)
    assert model.bets("z").tolist() == pytest.approx([2 / 7, 2 / 7, 0.0, 1 / 7, 2 / 7],
                                                     rel=1e-14)
    assert model.prob("z", "a") == 0.0
    assert model.log_prob_unit("a z") == -math.inf
    assert model.perplexity(["a z", "a"]) == math.inf
    # A vocabulary covering every train type: <unk> is never a history nor a successor.
    full = DiscountBigram.fit(TRAIN, build_outcomes(TRAIN, None), alpha=0.3)
    assert full.zero_outcomes == ("<unk>",)
    bets = full.bets("<unk>")
    assert bets.tolist() == pytest.approx((full.distinct_predecessors / full.n_distinct).tolist())


def test_alpha_must_lie_in_the_open_unit_interval(model):
    for bad in (0, 0.0, 1, 1.0, -0.2, 1.5, True, "0.5", math.nan):
        with pytest.raises(InputError, match="alpha"):
            DiscountBigram.fit(TRAIN, model.outcomes, bad)
        with pytest.raises(InputError, match="alpha"):
            model.with_alpha(bad)


def synthetic_corpus(seed, n_units, n_types=60):
    rng = np.random.default_rng(seed)
    zipf = 1 / np.arange(1, n_types + 1)
    types = [f"w{i}" for i in range(n_types)]
    units = []
    for _ in range(n_units):
        n = int(rng.integers(0, 12))
        units.append(" ".join(types[i] for i in rng.choice(n_types, size=n, p=zipf / zipf.sum())))
    return units


@pytest.mark.parametrize("alpha", [0.1, 0.5, 0.7, 0.99])
def test_every_history_sums_to_one(alpha):
    train = synthetic_corpus(0, 300)
    outcomes = build_outcomes(train, 25)
    model = DiscountBigram.fit(train, Outcomes(outcomes.words + ("never",)), alpha)
    histories = list(model.outcomes.labels[:-1]) + [START]
    assert "never" in histories and "<unk>" in histories
    for u in histories:
        bets = model.bets(u)
        assert bets.dtype == np.float64 and bets.shape == (model.outcomes.m,)
        assert abs(math.fsum(bets.tolist()) - 1.0) < 1e-12, u
        assert (bets >= 0).all()
        # The scalar and the vector agree.
        for v in model.outcomes.labels[::7]:
            assert model.prob(v, u) == pytest.approx(bets[model.outcomes.index[v]], rel=1e-13)


def test_exhaustive_gambling_equals_likelihood_perplexity():
    train, test = synthetic_corpus(1, 400), synthetic_corpus(2, 60, n_types=80)
    outcomes = build_outcomes(train, 30)
    model = DiscountBigram.fit(train, outcomes, alpha=0.7)
    log_bets, n_truncations, log_likelihood = [], 0, []
    for text in test:
        for context, correct in zip(contexts(text), unit_outcomes(text, outcomes)):
            row = summarize_bets(model.bets(model.history(context)), outcomes.index[correct],
                                 [outcomes.m])
            log_bets.append(row["log_bet"])
        n_truncations += len(text.split(" ")) + 1 if text else 1
        log_likelihood.append(model.log_prob_unit(text))
    assert len(log_bets) == n_truncations
    assert "<unk>" in {c for t in test for c in unit_outcomes(t, outcomes)}
    likelihood = math.exp(-math.fsum(log_likelihood) / n_truncations)
    gambling = gambling_perplexity(log_bets)
    assert abs(gambling / likelihood - 1) < 1e-9
    assert model.perplexity(test) == pytest.approx(likelihood, rel=1e-12)


def test_select_alpha_on_a_development_split():
    train, dev = synthetic_corpus(3, 300), synthetic_corpus(4, 80)
    model = DiscountBigram.fit(train, build_outcomes(train, 30), alpha=0.5)
    grid = [0.1, 0.3, 0.5, 0.7, 0.9]
    scores = {}
    for a in grid:
        fitted = DiscountBigram.fit(train, model.outcomes, a)
        n = sum(len(t.split(" ")) + 1 if t else 1 for t in dev)
        scores[a] = math.exp(-sum(fitted.log_prob_unit(t) for t in dev) / n)
    best = model.select_alpha(dev, grid)
    assert scores[best] == min(scores.values())
    # Called on the class, it fits the counts first: the same choice.
    assert DiscountBigram.select_alpha(train, dev, model.outcomes, grid) == best
    assert DiscountBigram.select_alpha(train, dev, model.outcomes, grid[::-1]) == best
    assert "lowest perplexity" in DiscountBigram.select_alpha.__doc__
    assert "lowest perplexity" in model.select_alpha.__doc__
    assert len(set(scores.values())) == len(grid)  # the choice matters
    with pytest.raises(InputError, match="empty"):
        model.select_alpha(dev, [])
    with pytest.raises(InputError, match="empty"):
        DiscountBigram.select_alpha(train, dev, model.outcomes, [])
    with pytest.raises(InputError, match="alpha"):
        model.select_alpha(dev, [0.5, 1.0])
    # A vocabulary covering every train type gives a dev OOV word probability 0 for every alpha.
    full = DiscountBigram.fit(TRAIN, build_outcomes(TRAIN, None), alpha=0.5)
    with pytest.raises(InputError, match="infinite perplexity.*<unk>"):
        full.select_alpha(["a qq"], [0.3, 0.6])


def test_bad_input_raises(model):
    with pytest.raises(InputError, match="no training unit"):
        DiscountBigram.fit([], model.outcomes, 0.5)
    with pytest.raises(InputError, match="training unit 2"):
        DiscountBigram.fit(["a", "a  b"], model.outcomes, 0.5)
    with pytest.raises(InputError, match="not a history"):
        model.bets("</s>")
    with pytest.raises(InputError, match="not a history"):
        model.prob("a", "c")
    with pytest.raises(InputError, match="not one of the 4 outcomes"):
        model.prob(START, "a")
    with pytest.raises(InputError, match="no unit"):
        model.perplexity([])


def test_train_bettor_takes_the_given_alpha_or_the_dev_choice():
    from fairppl.shannon.bigram import train_bettor
    from fairppl.shannon.outcomes import build_outcomes

    train = ["a b a c", "b a b", "a a c b"]
    dev = ["a b c", "b a"]
    outcomes = build_outcomes(train, 2)
    bettor, alpha = train_bettor(train, dev, outcomes, [0.2, 0.5, 0.8])
    assert alpha == DiscountBigram.select_alpha(train, dev, outcomes, [0.2, 0.5, 0.8])
    assert bettor.model.alpha == alpha
    fixed, given = train_bettor(train, [], outcomes, [0.2], alpha=0.3)
    assert given == 0.3 and fixed.model.alpha == 0.3
    assert abs(fixed.bets([]).sum() - 1) < 1e-12
