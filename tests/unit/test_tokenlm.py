"""fairppl.tokenlm: the TokenLM interface over a transformers LM and a KenLM piece n-gram.

Cross-checks: ``logp`` of the default tokenization equals the study's own scores
(``fairppl.lm.scoring.score_texts`` for a transformers LM, ``fairppl.ngram.subword.score_piece_units``
for the piece n-gram); ``logp_next`` equals log P(prefix + cont) - log P(prefix) from full
forwards; work counters on a hand-counted example."""

from __future__ import annotations

import math
import os
import random
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fairppl.lm.scoring import score_texts  # noqa: E402
from fairppl.tokenlm.interface import TokenLM  # noqa: E402
from fairppl.tokenlm.lm_hf import HFTokenLM  # noqa: E402
from fairppl.tokenlm.lm_kenlm import KenLMTokenLM  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SMOLLM2 = ROOT / "resources" / "models" / "smollm2-135m" / "hf"
TEXT = "in the beginning god created the heaven and the earth. and the earth was without form"


@pytest.fixture(scope="module")
def tiny():
    """A tiny random Llama (fixed seed) with a character tokenizer; context 32 positions."""
    from fairppl.neural import NeuralConfig, build_model, special_ids_of
    from fairppl.tokenizers import char_tokenizer, vocab_size

    tok = char_tokenizer([TEXT])
    special = special_ids_of(tok)
    cfg = NeuralConfig(d_model=16, n_layers=2, n_heads=2, d_ff=32, context=32, seed=7)
    model = build_model(cfg, vocab_size(tok), special["bos"], special["eos"], special["pad"])
    return model.eval(), tok


def _random_requests(rng, vocab, n_prefixes=9, n_conts=6):
    shared = list(rng.integers(4, vocab, size=5))
    prefixes = [list(rng.integers(4, vocab, size=rng.integers(0, 7))) for _ in range(n_prefixes)]
    prefixes += [shared, shared, []]  # a prefix repeated, and the empty prefix
    conts = [[list(rng.integers(4, vocab, size=rng.integers(0, 5))) for _ in range(n_conts)]
             for _ in prefixes]
    conts[1] = []  # an empty list of continuations
    conts[-2] = conts[-3][:2] + [[9, 9, 9]]  # equal prefix, overlapping continuations
    return prefixes, conts


def _check_next_against_full(lm, prefixes, conts, got):
    assert len(got) == len(prefixes)
    for p, cs, g in zip(prefixes, conts, got):
        assert g.dtype == np.float64 and g.shape == (len(cs),)
        if not cs:
            continue
        full = lm.logp([list(p) + list(c) for c in cs])
        base = lm.logp([list(p)])[0]
        np.testing.assert_allclose(g, full - base, atol=2e-4, rtol=0)


SHARES = pytest.mark.parametrize("share", ["tree", "cache"])


@SHARES
def test_logp_equals_score_texts_tiny(tiny, share):
    model, tok = tiny
    texts = ["in the", "god created the heaven", "e", ""]
    ids = [tok.encode(t, add_special_tokens=False) for t in texts]
    for kwargs, add_eos in (({}, True), ({"score_end": False}, False),
                            ({"start_token": "</s>", "end_token": "<pad>"}, True)):
        lm = HFTokenLM(model, tok, batch_size=2, share=share, **kwargs)
        ref_kwargs = {k: v for k, v in kwargs.items() if k != "score_end"}
        ref = [-u.nats for u in score_texts(model, tok, texts, add_eos=add_eos, progress=False,
                                            **ref_kwargs)]
        got = lm.logp(ids + [ids[1]])
        assert got.dtype == np.float64
        np.testing.assert_allclose(got[:4], ref, atol=1e-4, rtol=0)
        assert got[4] == got[1]
    assert isinstance(lm, TokenLM)
    assert lm.start_id == tok.convert_tokens_to_ids("</s>")
    assert lm.end_id == tok.convert_tokens_to_ids("<pad>")
    # the empty sequence without an end token has probability 1
    assert HFTokenLM(model, tok, score_end=False).logp([[]])[0] == 0.0


@pytest.mark.parametrize("share, work", [("tree", (1, 5)), ("cache", (1, 6))])
def test_logp_counts_each_distinct_sequence_once(tiny, share, work):
    model, tok = tiny
    lm = HFTokenLM(model, tok, batch_size=8, share=share)
    lm.logp([[5, 6, 7], [5, 6, 7], [8]])
    # cache: one batch of rows start 5 6 7 and start 8 (the end token is a target, never an
    # input); tree: the distinct inputs start, 5, 6, 7, 8 (start shared) in one row
    assert (lm.calls, lm.positions) == work


@SHARES
def test_logp_next_many_equals_differences_of_full_scores(tiny, share):
    model, tok = tiny
    lm = HFTokenLM(model, tok, score_end=False, batch_size=4, max_batch_tokens=12, share=share)
    prefixes, conts = _random_requests(np.random.default_rng(0), len(tok))
    got = lm.logp_next_many(prefixes, conts)
    _check_next_against_full(lm, prefixes, conts, got)
    assert got[1].shape == (0,)
    # logp_next is the one-prefix case
    np.testing.assert_array_equal(lm.logp_next(prefixes[0], conts[0]), got[0])
    assert lm.logp_next([5], []).shape == (0,)
    assert lm.logp_next([5], [[]])[0] == 0.0


def test_tree_rows_split_and_agree_with_cache(tiny):
    """Rows of 7 nodes: subtrees cut across rows (ancestors run again in the next row); the
    values equal the key/value-cache path's, and every node's pairs are computed once."""
    model, tok = tiny
    prefixes, conts = _random_requests(np.random.default_rng(1), len(tok), n_prefixes=12)
    tree = HFTokenLM(model, tok, score_end=False, share="tree", pass_tokens=7)
    cache = HFTokenLM(model, tok, score_end=False, share="cache")
    for a, b in zip(tree.logp_next_many(prefixes, conts), cache.logp_next_many(prefixes, conts)):
        np.testing.assert_allclose(a, b, atol=2e-5, rtol=0)
    assert tree.calls > 3
    seqs = [list(p) + list(c) for p, cs in zip(prefixes, conts) for c in cs]
    np.testing.assert_allclose(HFTokenLM(model, tok, pass_tokens=5).logp(seqs),
                               HFTokenLM(model, tok, share="cache").logp(seqs), atol=2e-5, rtol=0)


@pytest.mark.parametrize("window", [64, 4])
def test_gemma3_sliding_window(tiny, window):
    """A tiny random Gemma-3 (sliding and full attention layers): with a window longer than
    every sequence the tree path runs; with a window of 4 it falls back to the cache path
    (a tree mask would ignore the window). Both agree with one-sequence-at-a-time forwards."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    _, tok = tiny
    torch.manual_seed(0)
    cfg = Gemma3TextConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32,
                           num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                           head_dim=8, sliding_window=window, max_position_embeddings=64,
                           layer_types=["sliding_attention", "full_attention"],
                           bos_token_id=1, eos_token_id=2, pad_token_id=3)
    model = Gemma3ForCausalLM(cfg).eval()
    rng = np.random.default_rng(0)
    seqs = [list(rng.integers(4, len(tok), size=rng.integers(1, 12))) for _ in range(10)]
    lm = HFTokenLM(model, tok)
    one = [HFTokenLM(model, tok, share="cache").logp([s])[0] for s in seqs]
    np.testing.assert_allclose(lm.logp(seqs), one, atol=2e-5, rtol=0)
    row_positions = sum(len(s) + 1 for s in seqs)  # start + tokens per row, nothing shared
    assert (lm.positions < row_positions) == (window == 64)
    nxt = HFTokenLM(model, tok, score_end=False)
    prefixes = [s[:3] for s in seqs]
    conts = [[s[3:], s[3:5], [7]] for s in seqs]
    _check_next_against_full(nxt, prefixes, conts, nxt.logp_next_many(prefixes, conts))
    session = HFTokenLM(model, tok, score_end=False).session()  # kv_tree (falls back at 4)
    _check_next_against_full(nxt, prefixes, conts, session.logp_next_many(prefixes, conts))


def test_kv_tree_output_layer_equals_the_models_logits_with_soft_capping(tiny):
    """The session runs the decoder and applies the output layer to the kept positions only
    (kv_tree._output_layer): with Gemma's final logit soft-capping switched on (a tiny Gemma-3,
    float64), its log-probabilities equal those of the model's own forward within 1e-12."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    _, tok = tiny
    torch.manual_seed(1)
    cfg = Gemma3TextConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32,
                           num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                           head_dim=8, sliding_window=64, max_position_embeddings=64,
                           layer_types=["sliding_attention", "full_attention"],
                           final_logit_softcapping=0.05,
                           bos_token_id=1, eos_token_id=2, pad_token_id=3)
    model = Gemma3ForCausalLM(cfg).eval().double()
    lm = HFTokenLM(model, tok, score_end=False)
    prefixes = [[5, 6, 7], [8], [5, 6, 9, 10]]
    conts = [[[11], [11, 12]], [[13, 14, 15]], [[4]]]
    got = lm.session().logp_next_many(prefixes, conts)
    for p, cs, g in zip(prefixes, conts, got):
        for c, value in zip(cs, g):
            ids = [lm.start_id, *p, *c]
            with torch.inference_mode():
                rows = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0], -1)
            want = math.fsum(float(rows[len(p) + j, t]) for j, t in enumerate(c))
            assert value == pytest.approx(want, abs=1e-12)
    with torch.inference_mode():
        raw = model.lm_head(model.model(input_ids=torch.tensor([[1, 5]])).last_hidden_state)
    assert raw.abs().max() > 0.05  # the cap changes these logits: the test can fail


@pytest.mark.parametrize("share, work", [("tree", (1, 5)), ("cache", (2, 6))])
def test_logp_next_many_work_counts_hand_example(tiny, share, work):
    model, tok = tiny
    lm = HFTokenLM(model, tok, score_end=False, share=share)
    out = lm.logp_next_many([[5, 6], [5, 6], [7], [9]],
                            [[[8], [8, 9]], [[8, 9, 10], [8]], [], [[]]])
    assert [len(o) for o in out] == [2, 2, 0, 1]
    assert out[0][0] == out[1][1] and out[3][0] == 0.0
    # cache: one prefix forward (start 5 6: 3 positions), then one batch of continuations run
    # after the cache: (8 9) needs input 8, (8 9 10) needs 8 9: 3 positions. tree: the distinct
    # inputs start, 5, 6, 8, 9 in one row. [7] and [9] have nothing to score; naive full
    # forwards of every prefix + continuation would run 3 + 4 + 5 + 3 positions.
    assert (lm.calls, lm.positions) == work


def test_kv_tree_session_extends_prefixes_and_runs_each_position_once(tiny):
    """The incremental scorer (lm.session(), fairppl.tokenlm.kv_tree) over steps that extend
    prefixes by drawn continuations, with passes of 3 positions: values equal the stateless
    scorer's; a hand-counted example runs each needed position once and keeps only the paths
    of the kept prefixes."""
    model, tok = tiny
    lm = HFTokenLM(model, tok, score_end=False, pass_tokens=3)
    ref = HFTokenLM(model, tok, score_end=False, share="cache")
    session = lm.session()
    rng = np.random.default_rng(4)
    prefixes = [()]
    for step in range(4):
        conts = [tuple(rng.integers(4, len(tok), size=rng.integers(1, 4))) for _ in range(5)]
        conts += [(), conts[0][:1]]
        got = session.logp_next_many(prefixes, [conts] * len(prefixes))
        for g, w in zip(got, ref.logp_next_many(prefixes, [conts] * len(prefixes))):
            np.testing.assert_allclose(g, w, atol=2e-5, rtol=0)
        prefixes = sorted({p + conts[int(j)] for p in prefixes for j in rng.integers(0, 5, 2)})
        session.keep(prefixes)
    assert len(prefixes) > 2 and lm.calls > 4
    lm = HFTokenLM(model, tok, score_end=False)
    session = lm.session()
    session.logp_next_many([[5, 6]], [[[8], [8, 9], [8, 9, 10], [7, 5]]])
    # inputs start 5 6 (the prefix), 8, 8 9, 7: six positions in one pass
    assert (lm.calls, lm.positions, len(session)) == (1, 6, 6)
    session.keep([[5, 6, 8, 9, 10], [5, 6, 7, 5]])
    assert len(session) == 6  # the paths' run parts: start 5 6 8 9 and 7; nothing dropped
    out = session.logp_next_many([[5, 6, 8, 9, 10], [5, 6, 7, 5]], [[[4], [4, 4]], [[4]]])
    # new inputs: 10 and 5 (the prefixes' last tokens), then 4 after 10
    assert (lm.calls, lm.positions) == (2, 9)
    want = ref.logp_next_many([[5, 6, 8, 9, 10], [5, 6, 7, 5]], [[[4], [4, 4]], [[4]]])
    for g, w in zip(out, want):
        np.testing.assert_allclose(g, w, atol=2e-5, rtol=0)
    session.keep([[5, 6, 7, 5, 4]])
    assert len(session) == 5  # start 5 6 7 5 stay; 8, 8 9, 8 9 10 and 10 4 are dropped
    session.keep([])
    assert len(session) == 0


class _Watched:
    """An LM seen through a proxy that notes the name of every attribute read or set on it."""

    def __init__(self, lm):
        object.__setattr__(self, "_lm", lm)
        object.__setattr__(self, "seen", set())

    def __getattr__(self, name):
        self.seen.add(name)
        return getattr(self._lm, name)

    def __setattr__(self, name, value):
        self.seen.add(name)
        setattr(self._lm, name, value)


def _protocol_members(proto) -> set[str]:
    """The attributes and methods a typing.Protocol lists, its protocol bases' included."""
    names = set()
    for klass in proto.__mro__:
        if getattr(klass, "_is_protocol", False) and klass.__module__ != "typing":
            names |= set(getattr(klass, "__annotations__", {}))
            names |= {n for n, v in vars(klass).items() if callable(v) and not n.startswith("_")}
    return names


def test_interface_lists_what_the_session_and_the_drivers_read(tiny):
    """The protocols of fairppl.tokenlm.interface are the whole interface: KVTree reads of its
    LM only what TreeLM lists, the batch drivers only what TokenLM lists (no private method, no
    capability probe), and both LMs satisfy their protocol (the KenLM one has no session)."""
    from fairppl.shannon.kv_masses import MassKVTree
    from fairppl.tokenlm.batch import Keep, Logp, Next, run_alone, run_many
    from fairppl.tokenlm.interface import Session, TreeLM

    model, tok = tiny
    tree_members, token_members = _protocol_members(TreeLM), _protocol_members(TokenLM)
    assert {"session", "device", "pad_id", "max_length"} <= token_members < tree_members
    lm = HFTokenLM(model, tok, pass_tokens=4)
    assert isinstance(lm, TreeLM) and isinstance(lm.session(), Session)
    watched = _Watched(lm)
    session = MassKVTree(watched)
    session.logp_next_many([(), (5, 6)], [[(8,), (8, 9, 10)], [(7,), ()]])
    session.keep([(5, 6, 8)])
    session.logp_next_masses_many([(5,), (5, 6)], [[(8,)], [(9, 10)]], [[4, 5], [6]])
    assert watched.seen and watched.seen <= tree_members, watched.seen - tree_members
    ref = HFTokenLM(model, tok, share="cache")
    want = (ref.logp_next_many([(), (5,)], [[(6,), (6, 7)], [(8,)]]),
            ref.logp_next_many([(5, 8)], [[(9,), (9, 4)]]), ref.logp([(5, 8, 9)]))

    def steps(meter=None):
        """An estimator's requests, as lm_guided_steps makes them."""
        yield Keep([(5,)])
        first = yield Next([(), (5,)], [[(6,), (6, 7)], [(8,)]])
        yield Keep([(5, 8)])
        second = yield Next([(5, 8)], [[(9,), (9, 4)]])
        return first, second, (yield Logp([(5, 8, 9)]))

    for drive in ("alone", "many"):
        watched = _Watched(HFTokenLM(model, tok))
        if drive == "alone":
            got = run_alone(steps(), watched)
        else:
            [(_, got)] = list(run_many(watched, [steps], pass_tokens=64))
        for g, w in zip([*got[0], *got[1], got[2]], [*want[0], *want[1], want[2]]):
            np.testing.assert_allclose(g, w, atol=2e-5, rtol=0)
        assert "session" in watched.seen and watched.seen <= token_members, \
            (drive, watched.seen - token_members)


def test_kv_tree_rows_change_the_layout_not_the_values(tiny):
    """A pass of KVTree is a batch of rows (fairppl.tokenlm.kv_layout.PassLayout): each new subtree
    in one row with only the stored key/values its nodes descend from. In float64, sessions
    whose passes are split into rows of 1 or 4 positions, laid out as one row (every position
    of a pass attends over the whole pass) or chosen per pass by FLOPs ("auto") give the same
    values within 1e-12 nats over steps
    that extend, prune and ask after stored nodes (run again), for requests of several
    independent prefixes, as the batched marginal makes them; and the rows' layout holds each
    node's ancestors and nothing of other units, so the attention area shrinks."""
    import copy

    from fairppl.tokenlm import kv_layout, kv_tree

    model, tok = tiny
    m64 = copy.deepcopy(model).double()
    rng = np.random.default_rng(11)
    roots = [tuple(rng.integers(4, len(tok), size=3)) for _ in range(4)]
    steps = []
    prefixes = list(roots)
    for _ in range(3):
        conts = [[tuple(rng.integers(4, len(tok), size=rng.integers(1, 4))) for _ in range(4)]
                 for _ in prefixes]
        steps.append((list(prefixes), conts))
        # next: each prefix extended by a drawn continuation, and by the first token of a
        # longer one (an inner node this call runs: asked after once stored)
        longer = [next((c for c in cs if len(c) > 1), cs[0]) for cs in conts]
        prefixes = sorted({p + cs[0] for p, cs in zip(prefixes, conts)}
                          | {p + c[:1] for p, c in zip(prefixes, longer)})
    areas, got = {}, {}
    original = kv_layout.PassLayout
    for rows in (1, 4, None, "auto"):
        lm = HFTokenLM(m64, tok, score_end=False, pass_tokens=9)
        if rows == "auto":
            lm.max_batch_tokens = 3  # the output layer in slices of 3 positions
        session = kv_tree.KVTree(lm, row_nodes=rows if isinstance(rows, int) else None,
                                 layout={None: "one", "auto": "auto"}.get(rows, "rows"))
        area = []

        def layout(tree, rows_of, row, a, area=area):
            lay = original(tree, rows_of, row, a)
            S = lay.stored.shape[1]
            area.append(lay.batch * lay.width * (S + lay.width))
            for r in range(lay.batch):  # each row's stored columns: ancestors of its nodes
                mine = [q for q, rr in zip(rows_of, row) if rr == r]
                need = set()
                for q in mine:  # up the parent links, by hand
                    while q >= 0:
                        if q < a:
                            need.add(q)
                        q = tree.parent[q]
                have = {int(x) for x in lay.stored[r] if x} | ({0} if 0 in need else set())
                assert have == need
            return lay

        kv_layout.PassLayout = layout
        try:
            out = []
            for ps, conts in steps:
                out.append(session.logp_next_many(ps, conts))
                session.keep([p + c for p, cs in zip(ps, conts) for c in cs])
            got[rows] = out
        finally:
            kv_layout.PassLayout = original
        areas[rows] = sum(area)
    for rows in (1, 4, "auto"):
        for a_step, b_step in zip(got[rows], got[None]):
            for a, b in zip(a_step, b_step):
                np.testing.assert_allclose(a, b, atol=1e-12, rtol=0)
    assert areas[4] < areas[None]  # (rows of 1 pad every row to the widest: not smaller here)


def test_kv_tree_masses_equal_full_forwards(tiny):
    """MassKVTree.logp_next_masses (the Shannon bettors' scorer) against plain forwards in float64:
    the continuations' log-probabilities and the log mass of token sets at their ends; a later call
    keeps the stored prefix and runs again only the prefix's last token, then the new tree."""
    import copy

    model, tok = tiny
    from fairppl.shannon.kv_masses import MassKVTree

    m64 = copy.deepcopy(model).double()
    lm = HFTokenLM(m64, tok, score_end=False, pass_tokens=3)
    session = MassKVTree(lm)
    sets = [[4, 5, 6, 30], [2]]

    def check(prefix, conts):
        sums, masses = session.logp_next_masses(prefix, conts, sets)
        assert sums.shape == (len(conts),) and masses.shape == (len(conts), len(sets))
        for c, got, mass in zip(conts, sums, masses):
            ids = [lm.start_id, *prefix, *c]
            with torch.inference_mode():
                rows = torch.log_softmax(m64(input_ids=torch.tensor([ids])).logits[0], dim=-1)
            want = math.fsum(float(rows[len(prefix) + j, t]) for j, t in enumerate(c))
            assert got == pytest.approx(want, abs=1e-12)
            for s, value in zip(sets, mass):
                assert value == pytest.approx(float(torch.logsumexp(rows[-1, s], 0)), abs=1e-12)

    check([5, 6, 7], [[8], [8, 9], [10, 11, 12], []])
    # start 5 6 7, then 8 9 10 11 12: every continuation token is run, the last ones included
    assert (lm.calls, lm.positions) == (3, 9)
    check([5, 6, 7, 8, 9], [[13], [13, 14], []])
    # 9 again (its row is needed), then 13 and 14
    assert (lm.calls, lm.positions) == (4, 12)
    check([], [[5], []])  # the empty prefix: the start token's row, from a fresh store
    assert (lm.calls, lm.positions) == (5, 14)
    with pytest.raises(ValueError, match="non-empty token set"):
        session.logp_next_masses([5], [[6]], [[]])


def test_kv_tree_stage_timing_changes_no_value(tiny, monkeypatch):
    """kv_tree.PROFILE (the benchmark's stage timing) on: the same values, bit for bit, as with
    it off, every stage of a pass timed, and one pass counted per forward pass; off (None),
    nothing is recorded."""
    from fairppl.shannon.kv_masses import MassKVTree
    from fairppl.tokenlm import kv_tree

    model, tok = tiny
    prefixes, conts = [[5, 6], [5, 7, 8]], [[[8], [8, 9], [7, 5]], [[4], [4, 4], []]]
    sets = [[4, 5, 6], [2]]
    out = {}
    for profile in (None, {}):
        monkeypatch.setattr(kv_tree, "PROFILE", profile)
        lm = HFTokenLM(model, tok, score_end=False, pass_tokens=4)
        session = MassKVTree(lm)
        got = session.logp_next_many(prefixes, conts)
        session.keep([[5, 6, 8, 9]])
        masses = session.logp_next_masses([5, 6, 8], [[9], [10, 11]], sets)
        out[profile is None] = (got, masses, lm.calls)
    on, off = out[False], out[True]
    for a, b in zip(on[0] + list(on[1]), off[0] + list(off[1])):
        np.testing.assert_array_equal(a, b)
    assert set(profile) == {"requests", "layout", "decoder", "store", "output", "keep",
                            "passes"}
    assert profile["passes"] == on[2] == off[2]
    assert all(v > 0 for v in profile.values())


def test_too_long_sequences_are_refused(tiny):
    model, tok = tiny
    lm = HFTokenLM(model, tok)
    with pytest.raises(ValueError, match=r"sequence 1 \(32 tokens\): 33 input positions .* limit "
                                         r"of 32"):
        lm.logp([[5], [5] * 32])
    with pytest.raises(ValueError, match="prefix of 30 tokens: 33 input positions"):
        lm.logp_next([5] * 30, [[6, 7, 8]])
    with pytest.raises(ValueError, match="2 prefixes but 1 lists"):
        lm.logp_next_many([[5], [6]], [[[7]]])
    with pytest.raises(TypeError, match="sequence of token ids, got str"):
        lm.logp(["abc"])


@pytest.mark.pretrained
@pytest.mark.skipif(not (SMOLLM2 / "model.safetensors").exists(),
                    reason=f"SmolLM2 weights absent at {SMOLLM2} (make resources)")
def test_smollm2_default_path_and_next_tokens():
    from fairppl.lm.cache import load_lm

    model, tok = load_lm(SMOLLM2, device="cpu")
    verses = ["In the beginning God created the heaven and the earth.",
              "And God said, Let there be light: and there was light.",
              "Jesus wept."]
    lm = HFTokenLM(model, tok)
    ref = [-u.nats for u in score_texts(model, tok, verses, progress=False)]
    ids = [tok.encode(v, add_special_tokens=False) for v in verses]
    np.testing.assert_allclose(lm.logp(ids), ref, atol=1e-4, rtol=0)
    # a split of the first verse's words into other tokens: prefix + alternative continuations
    nxt = HFTokenLM(model, tok, score_end=False)
    first = ids[0]
    conts = [first[3:5], tok.encode(" God", add_special_tokens=False) + first[4:5],
             [tok.convert_tokens_to_ids(c) for c in ("ĠG", "od")]]
    got = nxt.logp_next_many([first[:3], first[:2]], [conts, [first[2:4]]])
    _check_next_against_full(nxt, [first[:3], first[:2]], [conts, [first[2:4]]], got)


# ---------------------------------------------------------------------------------------------
# KenLM

WORDS = ("the lord god light earth heaven waters beginning created said darkness was upon face "
         "deep spirit moved divided called day night evening morning first second").split()


def _sentences(n, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(n)]


@pytest.fixture(scope="module")
def piece_ngram(tmp_path_factory, resources_ready):
    """A unigram SentencePiece model and an order-3 KenLM over its pieces, trained here."""
    from fairppl.ngram.kenlm_tool import train_model
    from fairppl.ngram.subword import load_sentencepiece, pieces
    from fairppl.tokenizers import train_sentencepiece

    work = tmp_path_factory.mktemp("piece_ngram")
    train = _sentences(400, seed=1)
    train_sentencepiece(train, "unigram", 320, str(work / "spm"), allow_reduction=True)
    sp = load_sentencepiece(work / "spm.model")
    text = work / "pieces.txt"
    text.write_text("".join(" ".join(pieces(sp, t)) + "\n" for t in train), encoding="utf-8")
    binary = Path(os.environ["FAIRPPL_KENLM_BIN"])
    train_model(text, work / "m.kenlm", order=3, lmplz=binary / "lmplz",
                build_binary=binary / "build_binary", tmpdir=work / "tmp")
    words = [None if sp.is_control(i) or sp.is_unknown(i) else sp.id_to_piece(i)
             for i in range(sp.get_piece_size())]
    return work / "m.kenlm", work / "spm.model", sp, words


def test_kenlm_default_path_equals_subword_score(piece_ngram):
    from fairppl.ngram.subword import score_piece_units

    model, spm_file, sp, words = piece_ngram
    texts = _sentences(5, seed=2) + ["the lord über alles", "x"]  # unseen pieces: bytes of ü, x
    ref = score_piece_units(model, spm_file, texts, progress=False)
    assert sum(r.n_unseen for r in ref) >= 3
    lm = KenLMTokenLM(model, words)
    seqs = [sp.encode(t) for t in texts]
    got = lm.logp(seqs)
    np.testing.assert_allclose(got, [-r.bits * math.log(2.0) for r in ref], rtol=1e-12, atol=1e-9)
    # every distinct prefix's last piece is scored once (units starting alike share it), and
    # each unit's </s>
    distinct = {tuple(s[:k]) for s in seqs for k in range(1, len(s) + 1)}
    assert lm.calls == lm.positions == len(distinct) + len(texts) < sum(r.n_tokens for r in ref)
    assert isinstance(lm, TokenLM) and lm.end_id == KenLMTokenLM.END


def test_kenlm_next_equals_differences_and_shares_prefixes(piece_ngram):
    model, _, sp, words = piece_ngram
    lm = KenLMTokenLM(model, words, end=False)
    assert lm.end_id is None
    rng = np.random.default_rng(3)
    scorable = [i for i, w in enumerate(words) if w is not None]
    ids = lambda n: [int(t) for t in rng.choice(scorable, size=n)]  # noqa: E731
    prefixes = [ids(4), ids(0), ids(2)]
    prefixes.append(prefixes[0])
    conts = [[ids(1), ids(3), []], [ids(2)], [], [ids(2)]]
    got = lm.logp_next_many(prefixes, conts)
    _check_next_against_full(lm, prefixes, conts, got)
    # counters: a prefix already scored is not scored again
    before = lm.positions
    lm.logp_next(prefixes[0], [conts[0][1]])
    assert lm.positions == before
    lm.logp_next(prefixes[0] + conts[0][1], [[scorable[0]]])
    assert lm.positions == before + 1
    with pytest.raises(ValueError, match="token id 1 has no KenLM word"):
        lm.logp([[1]])
    with pytest.raises(ValueError, match=r"id_to_word\[0\] = 'a b'"):
        KenLMTokenLM(model, ["a b"])


def test_token_logps_sum_to_logp_across_batches():
    """Per-token log-probabilities of several sequences (batched, padded) sum to logp's value,
    the end token's last; an empty sequence has just the end token's."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from fairppl.tokenizers import char_tokenizer
    from fairppl.tokenlm.lm_hf import HFTokenLM

    tok = char_tokenizer(["abcdefgh "])
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32,
                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                      max_position_embeddings=64, bos_token_id=tok.bos_token_id,
                      eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    lm = HFTokenLM(LlamaForCausalLM(cfg).eval(), tok, batch_size=2, share="cache")
    seqs = [[5, 6, 7], [8], [5, 5, 6, 9, 10], []]
    got = lm.token_logps(seqs)
    assert [len(v) for v in got] == [4, 2, 6, 1]
    np.testing.assert_allclose([v.sum() for v in got], lm.logp(seqs), atol=1e-5)
    assert all((v < 0).all() for v in got)


def test_pass_layout_lets_each_position_see_its_ancestors_and_no_padding(tiny):
    """fairppl.tokenlm.kv_layout.PassLayout of a pass in rows of unequal stored parts: a real
    position may attend to exactly its ancestors' columns (stored or new) and itself; node 0,
    the start token, is an ancestor of all, so its own column is seen in every row, while the
    padding copies of it at the end of a shorter row's stored part are seen by no position; a
    padding position sees itself only. Each row's stored part lists its ancestors by node id."""
    from fairppl.tokenlm import kv_layout
    from fairppl.tokenlm.kv_tree import KVTree

    model, tok = tiny
    session = KVTree(HFTokenLM(model, tok, score_end=False), layout="rows", row_nodes=1)
    session.logp_next_many([[5, 6, 7], [8]], [[[4]], [[4]]])  # stores start 5 6 7 and 8
    stored = len(session)
    under_deep = session.child(session._find((5, 6, 7)), 9)  # a subtree under node "5 6 7"
    session.child(under_deep, 10)
    session.child(session._find((8,)), 11)  # a one-node subtree under node "8"
    pass_nodes = list(range(stored, len(session.token)))
    lay = kv_layout.lay_out(session, pass_nodes, stored, 1, "rows", lambda: 0.0)
    assert lay.batch == 2 and lay.width == 2
    n_stored = lay.stored.shape[1]
    seen = set(zip(*(a.tolist() for a in lay.allowed)))
    want = set()
    for q in pass_nodes:
        r, c = int(lay.row_of([q])[0]), int(lay.col_of([q])[0])
        a = q
        while a >= 0:  # up the parent links, by hand
            col = (list(lay.stored[r]).index(a) if a < stored
                   else n_stored + int(lay.col_of([a])[0]))
            want.add((r, c, col))
            a = session.parent[a]
    for r in range(lay.batch):
        real = sum(1 for q in pass_nodes if lay.row_of([q])[0] == r)
        want |= {(r, c, n_stored + c) for c in range(real, lay.width)}
    assert seen == want
    assert [sorted(int(x) for x in row if x) for row in lay.stored] == [[1, 2, 3], [4]]
    assert lay.stored[1].tolist() == [0, 4, 0, 0]  # node 0 then the padding copies of it
    assert (1, 0, 0) in seen and not {(1, c, col) for c in range(2) for col in (2, 3)} & seen


def test_run_many_admission_budget_is_apart_from_the_pass_size(tiny):
    """run_many's admit_tokens (units admitted while the pending requests weigh less) is its
    own setting: with a budget of 1 token every round carries one unit (rounds == requests),
    with the default (pass_tokens) several; the values are the same either way, and an
    untyped request tuple is refused with the types it expects."""
    from fairppl.tokenlm.batch import Logp, Next, run_alone, run_many

    model, tok = tiny

    def steps(first, meter=None):
        a = yield Next([(first,)], [[(6,), (6, 7)]])
        return list(a[0]) + list((yield Logp([(first, 6)]))[0:1])

    want = [run_alone(steps(t), HFTokenLM(model, tok)) for t in (5, 8, 9)]
    for admit, one_per_round in ((1, True), (None, False)):
        stats = {}
        got = [r for _, r in run_many(HFTokenLM(model, tok),
                                      [lambda m, t=t: steps(t, m) for t in (5, 8, 9)],
                                      pass_tokens=64, admit_tokens=admit, stats=stats)]
        np.testing.assert_allclose(np.array(got, dtype=float), np.array(want, dtype=float),
                                   atol=2e-5, rtol=0)
        assert stats["requests"] == 6
        assert (stats["rounds"] == stats["requests"]) is one_per_round

    def untyped(meter=None):
        yield ("next", [()], [[(6,)]])

    with pytest.raises(ValueError, match=r"unknown LM request .*expected a Keep, Next or Logp"):
        run_alone(untyped(), HFTokenLM(model, tok))
