"""Decoding-free lower bound as published (Pohl, Cognetta et al. 2025;
fairppl.marginal.decoding_free): on strings whose tokenizations can all be enumerated, under a
normalised toy LM, a hashed scorer on a real vocabulary and (when built) the subword n-gram, the
bound lies between the canonical tokenization's log P and the exact marginal, equals the exact
sum when the budget covers every path, grows with the budget (nested draws), holds the canonical
and every off-by-one split; the capped path counts and the uniform draws without replacement
(lattice.CappedPaths, lattice.uniform_distinct) are checked exactly and by chi-square."""

import itertools
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import chisquare

from fairppl.marginal import lattice
from fairppl.marginal.decoding_free import (DEFAULT_SLACK, candidates, decoding_free_marginal,
                                            off_by_one)
from fairppl.marginal.vocab import TokenVocab

PIECES = [None, b"a", b"b", b"c", b" ", b"ab", b"bc", b"ca", b" a", b" c", b"abc", b"cab", b"b c"]
TEXT = "abcab cab"
CANONICAL = (10, 5, 9, 5)  # "abc" "ab" " c" "ab"
SLACK_NATS = 1e-9


class TrigramLM:
    """A random trigram LM (numpy, exact, normalised) with the TokenLM interface; id 0 is start
    and end."""

    def __init__(self, size, seed=0, scale=0.7):
        rng = np.random.default_rng(seed)
        self.a = rng.normal(size=(size, size)) * scale
        self.b = rng.normal(size=(size, size)) * scale
        self.start_id, self.end_id = 0, 0
        self.calls = self.positions = 0
        self._rows = {}

    def _row(self, two, one):
        """log P(. | two, one), cached."""
        row = self._rows.get((two, one))
        if row is None:
            logits = self.a[two] + self.b[one]
            row = self._rows[(two, one)] = logits - logsumexp(logits)
        return row

    def logp(self, seqs):
        out = []
        for s in seqs:
            ctx, total = [0], 0.0
            for t in (*s, self.end_id):
                total += self._row(ctx[-2] if len(ctx) > 1 else 0, ctx[-1])[t]
                ctx.append(t)
            out.append(total)
        self.calls += 1
        self.positions += sum(len(s) + 1 for s in seqs)
        return np.array(out)


class HashedScorer:
    """A deterministic bigram scorer for vocabularies too large for a dense table: each (previous,
    token) pair costs 0.5 to 6.5 nats from a hash. Not normalised over the vocabulary, which the
    bounds do not need (they hold for any non-negative weights of the paths)."""

    start_id, end_id = -1, None

    def __init__(self):
        self.calls = self.positions = 0

    @staticmethod
    def cost(prev, tok):
        h = ((prev * 1_000_003 + tok * 7_919 + 12_345) * 2_654_435_761) % 2 ** 32
        return 0.5 + 6.0 * h / 2 ** 32

    def logp(self, seqs):
        self.calls += 1
        self.positions += sum(len(s) for s in seqs)
        return np.array([-sum(self.cost(p, t) for p, t in zip((self.start_id, *s), s))
                         for s in seqs])


def _exact(lm, paths):
    return float(logsumexp(lm.logp(paths)))


def _brute_off_by_one(vocab, every, canonical):
    """Paths that are the canonical with one token replaced by two spelling its bytes."""
    out = set()
    for p in every:
        if len(p) != len(canonical) + 1:
            continue
        for k in range(len(canonical)):
            if p[:k] == canonical[:k] and p[k + 2:] == canonical[k + 1:] and \
                    vocab.token_bytes[p[k]] + vocab.token_bytes[p[k + 1]] == \
                    vocab.token_bytes[canonical[k]]:
                out.add(p)
    return out


def _random_case(seed):
    """A random vocabulary over 'ab c' (every single byte kept, so every text tokenizes), a text
    with at most 5,000 tokenizations, and a random canonical path of it."""
    rng = np.random.default_rng(seed)
    alphabet = "ab c"
    pieces = {c.encode() for c in alphabet}
    while len(pieces) < 4 + int(rng.integers(4, 14)):
        n = int(rng.integers(2, 5))
        pieces.add("".join(rng.choice(list(alphabet), size=n)).encode())
    vocab = TokenVocab([None] + sorted(pieces))
    while True:
        text = "".join(rng.choice(list(alphabet), size=int(rng.integers(3, 11))))
        lat = vocab.lattice(vocab.text_bytes(text))
        if lattice.count_paths(lat) <= 5_000:
            break
    every = lattice.enumerate_paths(lat, 5_000)
    canonical = every[int(rng.integers(len(every)))]
    return vocab, text, lat, every, canonical


# ---- the capped path counts and the uniform draws ---------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_capped_counts_and_unranking_match_enumeration(seed):
    vocab, text, lat, every, _ = _random_case(seed)
    if seed == 0:
        vocab = TokenVocab(PIECES)
        lat = vocab.lattice(vocab.text_bytes(TEXT))
        every = lattice.enumerate_paths(lat, 10_000)
        # by hand: 84 tokenizations of "abcab cab" (f(0) = 42 + 28 + 14, see the suffix counts)
        assert len(every) == 84
    lengths = Counter(len(p) for p in every)
    longest = max(lengths)
    table = lattice.count_by_tokens(lat, longest + 2)
    assert table[0].tolist() == [lengths.get(t, 0) for t in range(longest + 3)]
    for cap in range(longest + 2):
        want = [p for p in every if len(p) <= cap]
        assert lattice.count_paths_capped(lat, cap) == len(want)
        capped = lattice.CappedPaths(lat, cap)
        assert capped.total == len(want)
        assert [capped.path(r) for r in range(capped.total)] == want  # enumeration order
    with pytest.raises(ValueError, match="out of range"):
        lattice.CappedPaths(lat, longest).path(len(every))


def test_capped_count_beyond_int64():
    # 400 bytes of "a" with tokens "a" and "aa": Fibonacci many paths; capped at 250 tokens,
    # sum over t of C(t, 400 - t) for 200 <= t <= 250
    vocab = TokenVocab([None, b"a", b"aa"])
    lat = vocab.lattice(b"a" * 400)
    want = sum(math.comb(t, 400 - t) for t in range(200, 251))
    assert want > 2 ** 200
    capped = lattice.CappedPaths(lat, 250)
    assert capped.total == lattice.count_paths_capped(lat, 250) == want
    last = capped.path(want - 1)
    assert len(last) <= 250 and vocab.decode(last) == b"a" * 400
    drawn = list(itertools.islice(lattice.uniform_distinct(capped, np.random.default_rng(0)), 50))
    assert len(set(drawn)) == 50 and all(len(p) <= 250 for p in drawn)


def test_randbelow_is_uniform_beyond_int64():
    rng = np.random.default_rng(5)
    n = 3 * 2 ** 70
    draws = [lattice.randbelow(rng, n) for _ in range(3000)]
    assert all(0 <= x < n for x in draws)
    thirds = Counter(x // 2 ** 70 for x in draws)
    assert chisquare([thirds[i] for i in range(3)]).pvalue > 1e-3
    with pytest.raises(ValueError, match="at least 1"):
        lattice.randbelow(rng, 0)


def test_uniform_distinct_draws_every_ordering_equally_often():
    vocab = TokenVocab(PIECES)
    capped = lattice.CappedPaths(vocab.lattice(vocab.text_bytes(TEXT)), 4)
    assert capped.total == 6  # the fewest tokens is 4, and 6 paths have 4 (count_by_tokens)
    full = list(lattice.uniform_distinct(capped, np.random.default_rng(1)))
    assert sorted(full) == sorted(capped.path(r) for r in range(6))  # a permutation, then stop
    firsts = Counter(tuple(itertools.islice(lattice.uniform_distinct(
        capped, np.random.default_rng(s)), 3)) for s in range(6_000))
    assert len(firsts) == 6 * 5 * 4  # every ordered triple of distinct paths
    assert chisquare(list(firsts.values())).pvalue > 1e-3


def test_fill_is_uniform_without_replacement_over_the_capped_paths_not_near():
    vocab = TokenVocab(PIECES)
    lat = vocab.lattice(vocab.text_bytes(TEXT))
    near = [CANONICAL] + off_by_one(lat, CANONICAL)
    pool = [p for p in lattice.enumerate_paths(lat, 10_000)
            if len(p) <= len(CANONICAL) + 1 and p not in near]
    assert len(pool) >= 5
    pairs = Counter()
    for s in range(6_000):
        paths, n_near, _ = candidates(lat, CANONICAL, len(near) + 2, np.random.default_rng(s), 1)
        assert paths[:n_near] == near
        pairs[tuple(paths[n_near:])] += 1
    assert set(pairs) == {pair for pair in itertools.permutations(pool, 2)}
    assert chisquare(list(pairs.values())).pvalue > 1e-3


# ---- the candidates --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_off_by_one_is_every_split_of_one_canonical_token(seed):
    vocab, _, lat, every, canonical = _random_case(seed)
    got = off_by_one(lat, canonical)
    assert len(got) == len(set(got))
    assert set(got) == _brute_off_by_one(vocab, every, canonical)


def test_off_by_one_by_hand():
    vocab = TokenVocab(PIECES)
    lat = vocab.lattice(vocab.text_bytes(TEXT))
    # "abc" -> a|bc, ab|c; "ab" -> a|b (twice); " c" -> " "|c
    assert off_by_one(lat, CANONICAL) == [(1, 6, 5, 9, 5), (5, 3, 5, 9, 5), (10, 1, 2, 9, 5),
                                          (10, 5, 4, 3, 5), (10, 5, 9, 1, 2)]
    with pytest.raises(ValueError, match="no arc"):
        off_by_one(lat, (10, 4, 11))


# ---- the bound -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(16))
def test_between_the_canonical_and_the_exact_marginal(seed):
    vocab, text, lat, every, canonical = _random_case(seed)
    lm = TrigramLM(len(vocab.token_bytes), seed=seed)
    exact = _exact(lm, every)
    near = {canonical} | _brute_off_by_one(vocab, every, canonical)
    for K, slack in itertools.product((1, 3, 8, 40), (0, 1, 2, None)):
        res = decoding_free_marginal(lm, vocab, text, K=K, default_ids=canonical, slack=slack,
                                     rng=np.random.default_rng(seed), return_samples=True)
        assert res.logp_default == pytest.approx(float(lm.logp([canonical])[0]), abs=1e-12)
        assert res.logp_default - SLACK_NATS <= res.logp <= exact + SLACK_NATS, (K, slack)
        assert res.samples[0] == canonical and near <= set(res.samples)
        assert len(set(res.samples)) == len(res.samples) == res.distinct
        assert set(res.samples) <= set(every)
        cap = len(canonical) + slack if slack is not None else len(text)
        assert all(len(p) <= cap for p in res.samples[res.n_near:])
        assert res.distinct == max(res.n_near, min(K, len(near | {
            p for p in every if len(p) <= cap})))
        assert res.logp == pytest.approx(float(logsumexp(lm.logp(res.samples))), abs=1e-12)
        assert math.isnan(res.ci_low) and math.isnan(res.ci_high) and res.bound == "lower"
        assert res.n_paths == len(every)


def test_exact_when_the_budget_covers_every_path():
    vocab = TokenVocab(PIECES)
    lm = TrigramLM(len(PIECES), seed=1)
    every = lattice.enumerate_paths(vocab.lattice(vocab.text_bytes(TEXT)), 10_000)
    exact = _exact(lm, every)
    res = decoding_free_marginal(lm, vocab, TEXT, K=84, default_ids=CANONICAL, slack=None,
                                 rng=np.random.default_rng(0), return_samples=True)
    assert res.distinct == res.n_capped == 84 and res.cap is None
    assert res.logp == pytest.approx(exact, abs=SLACK_NATS)
    # a cap that admits every path (the longest has 9 tokens) does the same
    res = decoding_free_marginal(lm, vocab, TEXT, K=500, default_ids=CANONICAL,
                                 slack=9 - len(CANONICAL), rng=np.random.default_rng(3))
    assert res.distinct == 84 and res.logp == pytest.approx(exact, abs=SLACK_NATS)
    # a tighter cap with a large budget: the exact sum over the capped paths and the near ones
    res = decoding_free_marginal(lm, vocab, TEXT, K=500, default_ids=CANONICAL, slack=0,
                                 rng=np.random.default_rng(3), return_samples=True)
    lat = vocab.lattice(vocab.text_bytes(TEXT))
    want = set(p for p in every if len(p) <= 4) | {CANONICAL} | set(off_by_one(lat, CANONICAL))
    assert set(res.samples) == want and res.cap == 4
    assert res.logp == pytest.approx(_exact(lm, sorted(want)), abs=SLACK_NATS)
    assert res.logp < exact - 0.01  # the five-token paths outside the near set are missing


@pytest.mark.parametrize("seed", range(6))
def test_nested_draws_and_monotone_in_the_budget(seed):
    vocab, text, lat, every, canonical = _random_case(seed)
    lm = TrigramLM(len(vocab.token_bytes), seed=seed)
    runs = [decoding_free_marginal(lm, vocab, text, K=K, default_ids=canonical, slack=2,
                                   rng=np.random.default_rng(100 + seed), return_samples=True)
            for K in range(1, len(every) + 3)]
    for small, big in zip(runs, runs[1:]):
        assert big.samples[:small.distinct] == small.samples
        assert big.logp >= small.logp
    assert runs[-1].distinct == runs[-1].n_near + runs[-1].n_drawn


def test_real_sentencepiece_vocabulary(tmp_path):
    from marginal_data import WORDS, train_unigram

    from fairppl.marginal.vocab import vocab_from_sentencepiece
    from fairppl.ngram.subword import load_sentencepiece

    spm = train_unigram(tmp_path)
    sp, vocab = load_sentencepiece(spm), vocab_from_sentencepiece(spm)
    lm = TrigramLM(len(vocab.token_bytes), seed=4, scale=1.5)
    checked = 0
    for text in [*WORDS, "Gott sah", "und Licht", "der Tag"]:
        lat = vocab.lattice(vocab.text_bytes(text))
        every = lattice.enumerate_paths(lat, 3_000)
        if every is None:
            continue
        canonical = tuple(sp.encode(text))
        exact = _exact(lm, every)
        assert set(off_by_one(lat, canonical)) == _brute_off_by_one(vocab, every, canonical)
        for K in (1, 16, 64):
            res = decoding_free_marginal(lm, vocab, text, K=K, default_ids=canonical,
                                         rng=np.random.default_rng(K), return_samples=True)
            assert res.logp_default - SLACK_NATS <= res.logp <= exact + SLACK_NATS
        res = decoding_free_marginal(lm, vocab, text, K=len(every), default_ids=canonical,
                                     slack=None, rng=np.random.default_rng(0))
        assert res.logp == pytest.approx(exact, abs=SLACK_NATS)
        checked += 1
    assert checked >= 10


@pytest.mark.pretrained
def test_real_byte_level_vocabulary():
    hf = Path(__file__).resolve().parents[2] / "resources" / "models" / "smollm2-135m" / "hf"
    if not (hf / "tokenizer.json").exists():
        pytest.skip("SmolLM2-135M not installed (make resources)")
    from transformers import AutoTokenizer

    from fairppl.marginal.vocab import vocab_from_hf

    tok = AutoTokenizer.from_pretrained(str(hf))
    vocab, lm = vocab_from_hf(tok), HashedScorer()
    for text in ("In the beginning", "Gott sprach", "Свет", "太初有道"):
        lat = vocab.lattice(vocab.text_bytes(text))
        every = lattice.enumerate_paths(lat, 50_000)
        assert every is not None, text
        canonical = tuple(tok(text, add_special_tokens=False)["input_ids"])
        exact = _exact(lm, every)
        assert set(off_by_one(lat, canonical)) == _brute_off_by_one(vocab, every, canonical)
        for K in (1, 8, 32):
            res = decoding_free_marginal(lm, vocab, text, K=K, default_ids=canonical,
                                         rng=np.random.default_rng(K), return_samples=True)
            assert res.logp_default - SLACK_NATS <= res.logp <= exact + SLACK_NATS, text
            assert res.samples[0] == canonical


def test_subword_ngram(tmp_path_factory, resources_ready):
    from marginal_data import sentences, tiny_piece_ngram

    from fairppl.marginal.exact import ngram_marginal
    from fairppl.marginal.units import kenlm_lm

    model, spm = tiny_piece_ngram(tmp_path_factory.mktemp("df_ngram"))
    lm, vocab, encode, _ = kenlm_lm(model, spm)
    for text in sentences(6, seed=21, longest=6):
        exact = ngram_marginal(lm.model, vocab, text, lm.words).logp  # full length, exact
        for K in (1, 8, 32):
            res = decoding_free_marginal(lm, vocab, text, K=K, default_ids=encode(text),
                                         rng=np.random.default_rng(K))
            assert res.logp_default - SLACK_NATS <= res.logp <= exact + SLACK_NATS, text


def test_bad_arguments_are_named():
    vocab = TokenVocab(PIECES)
    lm = TrigramLM(len(PIECES))
    kw = dict(rng=np.random.default_rng(0), default_ids=CANONICAL)
    assert DEFAULT_SLACK == 2
    with pytest.raises(ValueError, match="K must be at least 1"):
        decoding_free_marginal(lm, vocab, TEXT, K=0, **kw)
    with pytest.raises(ValueError, match="slack .* integer >= 0"):
        decoding_free_marginal(lm, vocab, TEXT, K=2, slack=-1, **kw)
    with pytest.raises(ValueError, match="canonical tokenization does not spell"):
        decoding_free_marginal(lm, vocab, TEXT, K=2, rng=np.random.default_rng(0),
                               default_ids=(10, 4, 11))
    with pytest.raises(ValueError, match="needs the canonical"):
        decoding_free_marginal(lm, vocab, TEXT, K=2, rng=np.random.default_rng(0),
                               default_ids=())
