"""The LM-guided block estimator (fairppl.marginal.lm_guided): unbiased for the proposal-covered
marginal (checked against exact enumeration), the covered set when M covers every block, the
batched estimator against the paper's one-sample-at-a-time procedure, determinism."""

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from fairppl.marginal.blocks import BlockCandidates, default_offsets, split_blocks, top_m_tokenizations
from fairppl.marginal.lm_guided import lm_guided_marginal, lm_guided_reference

ROOT = Path(__file__).resolve().parents[1]
SMOLLM2 = ROOT / "resources" / "models" / "smollm2-135m" / "hf"


class ListVocab:
    """A hand-made TokenVocab stand-in: id -> bytes (None: special), the text as UTF-8."""

    def __init__(self, pieces):
        self.token_bytes = list(pieces)

    def text_bytes(self, text):
        return text.encode("utf-8")

    def decode_len(self, ids):
        return sum(len(self.token_bytes[t]) for t in ids)

    def matches(self, data, pos):
        return [(t, pos + len(p)) for t, p in enumerate(self.token_bytes) if p and data.startswith(p, pos)]


def all_tokenizations(vocab, data):
    if not data:
        return [()]
    return [(t,) + rest for t, p in enumerate(vocab.token_bytes) if p and data.startswith(p)
            for rest in all_tokenizations(vocab, data[len(p):])]


class TrigramLM:
    """A random trigram LM over the ids of a vocabulary (numpy, exact and deterministic) with the
    TokenLM interface; id 0 is both start and end. Counts one call per prefix scored."""

    def __init__(self, size, seed=0, scale=0.7, end=True):
        rng = np.random.default_rng(seed)
        self.a = rng.normal(size=(size, size)) * scale
        self.b = rng.normal(size=(size, size)) * scale
        self.start_id, self.end_id = 0, (0 if end else None)
        self.calls = self.positions = 0

    def _cont(self, ctx, cont):
        ctx, total = list(ctx), 0.0
        for t in cont:
            logits = self.a[ctx[-2] if len(ctx) > 1 else 0] + self.b[ctx[-1]]
            total += logits[t] - math.log(np.exp(logits).sum())
            ctx.append(t)
        return total

    def logp_next(self, prefix, conts):
        self.calls += 1
        self.positions += len(prefix) + 1 + sum(len(c) for c in conts)
        return np.array([self._cont([self.start_id, *prefix], c) for c in conts])

    def logp_next_many(self, prefixes, conts_per_prefix):
        return [self.logp_next(p, c) for p, c in zip(prefixes, conts_per_prefix)]

    def logp(self, seqs):
        end = () if self.end_id is None else (self.end_id,)
        return np.array([self.logp_next((), [tuple(s) + end])[0] for s in seqs])


PIECES = [None, b"a", b"b", b"c", b" ", b"ab", b"bc", b"ca", b" a", b" c", b"abc", b"cab"]
TEXT = "abcab cab"  # blocks "abcab" and " cab"


def exact_logsum(lm, seqs):
    lp = lm.logp(list(seqs))
    top = lp.max()
    return top + math.log(np.exp(lp - top).sum())


def setup(text=TEXT, M=3, end=True, seed=3):
    vocab = ListVocab(PIECES)
    data = vocab.text_bytes(text)
    default = top_m_tokenizations(vocab, data, 1)[0]
    lm = TrigramLM(len(PIECES), seed=seed, end=end)
    return vocab, data, default, lm


@pytest.mark.parametrize("end", [True, False])
def test_unbiased_for_the_covered_marginal(end):
    vocab, data, default, lm = setup(end=end)
    M = 3
    blocks = split_blocks(data, default_offsets(vocab.token_bytes, default, data), 20)
    assert [data[b.start:b.end] for b in blocks] == [b"abcab", b" cab"]
    cands = [top_m_tokenizations(vocab, data[b.start:b.end], M) for b in blocks]
    covered = [sum(c, ()) for c in itertools.product(*cands)]
    exact = exact_logsum(lm, covered)
    res = lm_guided_marginal(lm, vocab, TEXT, default_ids=default, K=4000, L=20, M=M,
                             rng=np.random.default_rng(11), return_samples=True)
    assert set(res.samples) <= set(covered) and len(set(res.samples)) == len(covered)
    w = np.exp(res.log_weights - exact)
    se = w.std() / math.sqrt(w.size)
    assert abs(w.mean() - 1.0) < 4 * se and se < 0.02, (w.mean(), se)
    assert res.ci_low <= res.logp <= res.ci_high
    # the covered set misses tokenizations: the marginal over all of them is larger
    assert exact < exact_logsum(lm, all_tokenizations(vocab, data))


def test_with_every_block_tokenization_the_cover_is_all_tokenizations_respecting_block_edges():
    vocab, data, default, _ = setup()
    vocab = ListVocab(PIECES + [b"b c"])  # a token across the block edge at byte 5
    lm = TrigramLM(len(vocab.token_bytes), seed=4)
    blocks = split_blocks(data, default_offsets(vocab.token_bytes, default, data), 20)
    edges = {b.end for b in blocks}
    everything = all_tokenizations(vocab, data)

    def ends(seq):
        out, pos = set(), 0
        for t in seq:
            pos += len(vocab.token_bytes[t])
            out.add(pos)
        return out

    respecting = {s for s in everything if edges <= ends(s)}
    assert 0 < len(respecting) < len(everything)  
    res = lm_guided_marginal(lm, vocab, TEXT, default_ids=default, K=4000, L=20, M=1000,
                             rng=np.random.default_rng(5), return_samples=True)
    cands = [top_m_tokenizations(vocab, data[b.start:b.end], 1000) for b in blocks]
    covered = [sum(c, ()) for c in itertools.product(*cands)]
    assert len(covered) == len(set(covered)) and set(covered) == respecting
    assert set(res.samples) <= respecting
    w = np.exp(res.log_weights - exact_logsum(lm, respecting))
    assert abs(w.mean() - 1.0) < 4 * w.std() / math.sqrt(w.size)


def test_batched_equals_the_one_sample_at_a_time_procedure_and_shares_work():
    vocab, data, default, lm = setup(text="abc cab abcab cab ab", seed=8)
    kw = dict(default_ids=top_m_tokenizations(vocab, b"abc cab abcab cab ab", 1)[0], K=40, L=4,
              M=4, return_samples=True)
    fast = lm_guided_marginal(lm, vocab, "abc cab abcab cab ab", rng=np.random.default_rng(2), **kw)
    slow = lm_guided_reference(lm, vocab, "abc cab abcab cab ab", rng=np.random.default_rng(2), **kw)
    assert fast.samples == slow.samples
    np.testing.assert_allclose(fast.log_weights, slow.log_weights, rtol=0, atol=1e-12)
    assert (fast.logp, fast.ci_low, fast.ci_high, fast.percent_nd) == pytest.approx(
        (slow.logp, slow.ci_low, slow.ci_high, slow.percent_nd), abs=1e-12)
    assert fast.n_blocks == slow.n_blocks == 6 and fast.t1 == pytest.approx(2 / 6)
    assert slow.prefixes == 40 * (6 + 1)
    assert fast.prefixes < slow.prefixes / 3 and fast.lm_calls < slow.lm_calls / 3
    again = lm_guided_marginal(lm, vocab, "abc cab abcab cab ab", rng=np.random.default_rng(2), **kw)
    assert again.samples == fast.samples and np.array_equal(again.log_weights, fast.log_weights)
    # scoring blocks ahead along the default path changes when the work is done, not the result
    flat = lm_guided_marginal(lm, vocab, "abc cab abcab cab ab", rng=np.random.default_rng(2),
                              lookahead=0, **kw)
    assert flat.samples == fast.samples and np.array_equal(flat.log_weights, fast.log_weights)
    assert flat.prefixes < fast.prefixes  # the lookahead scored default paths not drawn
    other = lm_guided_marginal(lm, vocab, "abc cab abcab cab ab", rng=np.random.default_rng(3), **kw)
    assert not np.array_equal(other.log_weights, fast.log_weights)


def test_summaries_count_default_blocks_and_kinds():
    vocab, data, default, lm = setup()
    res = lm_guided_marginal(lm, vocab, TEXT, default_ids=default, K=200, L=20, M=3,
                             rng=np.random.default_rng(0), return_samples=True)
    ids_first = top_m_tokenizations(vocab, b"abcab", 1)[0]
    ids_second = top_m_tokenizations(vocab, b" cab", 1)[0]
    assert default == ids_first + ids_second  # the fewest-token path respects the block edge
    nd = 0
    for s in res.samples:
        cut = next(i for i in range(len(s) + 1) if vocab.decode_len(s[:i]) == 5)
        nd += (s[:cut] != ids_first) + (s[cut:] != ids_second)
    assert 0 < nd < 2 * 200
    assert res.percent_nd == pytest.approx(100 * nd / (2 * 200))
    assert (res.t0, res.t1, res.t2, res.n_unaligned, res.n_default_outside) == (1.0, 0.0, 0.0, 0, 0)
    assert res.default_covered
    assert res.logp_default == pytest.approx(float(lm.logp([default])[0]))
    # L=2 forces raw cuts through the 3-byte default tokens: T2 blocks, default not covered
    res2 = lm_guided_marginal(lm, vocab, TEXT, default_ids=default, K=5, L=2, M=3,
                              rng=np.random.default_rng(0))
    assert res2.t2 > 0 and res2.n_unaligned > 0 and not res2.default_covered


def test_errors_name_the_problem():
    vocab, data, default, lm = setup()
    with pytest.raises(ValueError, match="does not match the text bytes at offset 0"):
        lm_guided_marginal(lm, vocab, TEXT, default_ids=[2], K=3, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="K must be at least 1"):
        lm_guided_marginal(lm, vocab, TEXT, default_ids=default, K=0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="top-3 lists but M=4"):
        lm_guided_marginal(lm, vocab, TEXT, default_ids=default, K=3, M=4,
                           cache=BlockCandidates(vocab, 3), rng=np.random.default_rng(0))


@pytest.fixture(scope="module")
def tiny_hf():
    """A tiny random Llama over SmolLM2's tokenizer (embeddings scaled up so that the LM has
    preferences beyond the token count), as an HFTokenLM, and SmolLM2's TokenVocab."""
    if not (SMOLLM2 / "tokenizer.json").exists():
        pytest.skip(f"SmolLM2 tokenizer not installed at {SMOLLM2} (make resources)")
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from fairppl.marginal.lm import HFTokenLM
    from fairppl.marginal.vocab import vocab_from_hf

    tok = AutoTokenizer.from_pretrained(SMOLLM2)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32,
                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                      max_position_embeddings=128, tie_word_embeddings=True,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(3)
        model = LlamaForCausalLM(cfg).eval()
    with torch.no_grad():
        model.model.embed_tokens.weight.mul_(60.0)
    return HFTokenLM(model, tok), vocab_from_hf(tok), tok


def test_hf_lm_batched_equals_reference_and_is_unbiased_for_the_covered_set(tiny_hf):
    lm, vocab, tok = tiny_hf
    text = "In the beginning"
    ids = tok(text, add_special_tokens=False)["input_ids"]
    kw = dict(default_ids=ids, M=3, return_samples=True)
    fast = lm_guided_marginal(lm, vocab, text, K=10, rng=np.random.default_rng(1), **kw)
    slow = lm_guided_reference(lm, vocab, text, K=10, rng=np.random.default_rng(1), **kw)
    assert fast.samples == slow.samples
    np.testing.assert_allclose(fast.log_weights, slow.log_weights, atol=1e-5, rtol=0)
    assert fast.lm_calls < slow.lm_calls
    flat = lm_guided_marginal(lm, vocab, text, K=10, rng=np.random.default_rng(1), lookahead=0,
                              **kw)
    assert flat.samples == fast.samples
    np.testing.assert_allclose(flat.log_weights, fast.log_weights, atol=1e-5, rtol=0)
    assert fast.lm_calls < flat.lm_calls  # 3 blocks and the end: one pass ahead, not four
    data = vocab.text_bytes(text)
    blocks = split_blocks(data, default_offsets(vocab.token_bytes, ids, data), 20)
    cands = [top_m_tokenizations(vocab, data[b.start:b.end], 3) for b in blocks]
    covered = [sum(c, ()) for c in itertools.product(*cands)]
    exact = exact_logsum(lm, covered)
    res = lm_guided_marginal(lm, vocab, text, K=600, rng=np.random.default_rng(2), **kw)
    assert set(res.samples) <= set(covered) and 0 < res.percent_nd < 100
    w = np.exp(res.log_weights - exact)
    assert abs(w.mean() - 1.0) < 4 * w.std() / math.sqrt(w.size)
    assert exact > res.logp_default  # the covered set holds the default and more
