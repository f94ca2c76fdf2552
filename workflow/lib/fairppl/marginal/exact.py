"""Exact marginal likelihood over tokenizations: the ground truth the estimators are checked
against.

* :func:`enumerate_marginal`: log sum over EVERY tokenization T of a short text of P_LM(T), for
  any :class:`~fairppl.tokenlm.interface.TokenLM`. The tokenizations form a trie of token
  prefixes and each trie node (a distinct prefix) is scored once, not once per tokenization that
  shares it: a transformers LM runs every node through the model exactly once (tree attention:
  one position per node, attending to its ancestors), any other TokenLM gets one
  :meth:`~fairppl.tokenlm.interface.TokenLM.logp_next_many` request per trie depth in which each
  node is one prefix. The end token (if ``lm.end_id`` is set) is scored once per complete
  tokenization. Cost grows with the number of tokenizations, which grows exponentially with
  length: ``max_paths`` refuses long texts with a clear error.
* :func:`ngram_marginal`: the same sum, exactly and for whole verses, under a token-level KenLM
  n-gram: a forward algorithm over (byte position, KenLM state) pairs, with equal states at a
  position merged (an n-gram's future depends on the past only through its state, so summing
  there is exact). ``kenlm.State`` hashes and compares by its context words (verified in the
  tests).

Unseen tokens under the n-gram follow the study's subword scorer (:mod:`fairppl.ngram.subword`,
:func:`fairppl.ngram.kenlm_tool.score_tokens`): a token the n-gram never saw (KenLM's OOV) costs
log p(<unk> | context) plus ``unk_cost`` nats, by default ln(V) for the tokenizer's V pieces (a
uniform choice among them); a model without ``<unk>`` mass (log10 p < -90) is an error. So the
default tokenization scored through this module equals the study's default score.

Every log-probability is in nats (float64).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from scipy.special import logsumexp

from .lattice import Lattice, count_paths
from .vocab import TokenVocab

_LN10 = math.log(10.0)
_NO_UNK_LOG10 = -90.0  # as fairppl.ngram.kenlm_tool.NO_UNK_LOG10: KenLM's -100 stand-in for "no <unk>"


@dataclass(frozen=True)
class ExactResult:
    """``logp``: log P(text) summed over all tokenizations (nats); ``n_tokenizations``: how many;
    ``logp_default``: log P of the given default tokenization (None if none was given);
    ``n_prefixes``: distinct token prefixes (trie nodes, the empty one and every complete
    tokenization included: each is scored once);
    ``paths``/``path_logp``: every tokenization and its log P (nats), in trie order."""

    logp: float
    n_tokenizations: int
    logp_default: float | None = None
    n_prefixes: int = 0
    paths: tuple = field(default=(), repr=False)
    path_logp: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)


def arcs_by_start(lat: Lattice) -> list[list[tuple[int, int]]]:
    """``(token, end)`` of the arcs leaving each node, in (end, token) order."""
    out: list[list[tuple[int, int]]] = [[] for _ in range(lat.n + 1)]
    for s, e, t in sorted(zip(lat.start.tolist(), lat.end.tolist(), lat.token.tolist())):
        out[s].append((t, e))
    return out


@dataclass
class _Trie:
    """The trie of all tokenizations in breadth-first order: node 0 is the empty prefix;
    node i > 0 appends ``token[i]`` to node ``parent[i]``; ``pos`` is the byte position it has
    spelled, ``depth`` its number of tokens. Leaves (``pos == n``) are the tokenizations."""

    token: np.ndarray
    parent: np.ndarray
    depth: np.ndarray
    pos: np.ndarray

    @classmethod
    def of(cls, lat: Lattice) -> "_Trie":
        arcs = arcs_by_start(lat)
        token, parent, depth, pos = [-1], [-1], [0], [0]
        i = 0
        while i < len(token):
            if pos[i] < lat.n:
                for t, e in arcs[pos[i]]:
                    token.append(t), parent.append(i), depth.append(depth[i] + 1), pos.append(e)
            i += 1
        return cls(*(np.asarray(x, dtype=np.int64) for x in (token, parent, depth, pos)))

    def prefix(self, i: int) -> tuple[int, ...]:
        out = []
        while i > 0:
            out.append(int(self.token[i]))
            i = int(self.parent[i])
        return tuple(reversed(out))


def _score_by_depth(lm, trie: _Trie, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(log p(token[i] | prefix of parent[i]) per node, log p(end | prefix) per leaf) through
    ``lm.logp_next_many``: one request per trie depth, each node the prefix of exactly one
    request (its children's tokens, or the end token for a leaf)."""
    lp_child = np.zeros(len(trie.token))
    lp_end = np.zeros(len(trie.token))
    children: list[list[int]] = [[] for _ in range(len(trie.token))]
    for i in range(1, len(trie.token)):
        children[int(trie.parent[i])].append(i)
    for depth in range(int(trie.depth.max()) + 1):
        nodes = np.flatnonzero(trie.depth == depth)
        prefixes = {int(i): trie.prefix(int(i)) for i in nodes}
        requests = []
        for i in nodes:
            if trie.pos[i] < n:
                requests.append([(int(trie.token[c]),) for c in children[i]])
            else:
                requests.append([(lm.end_id,)] if lm.end_id is not None else [])
        scored = lm.logp_next_many([prefixes[int(i)] for i in nodes], requests)
        for i, values in zip(nodes, scored):
            if trie.pos[i] == n:
                lp_end[i] = float(values[0]) if lm.end_id is not None else 0.0
            else:
                lp_child[children[i]] = values
    return lp_child, lp_end


def _score_tree(lm, trie: _Trie, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The same numbers as :func:`_score_by_depth` for a transformers LM (``lm.model``), with
    every trie node run through the model exactly once: the nodes go in breadth-first chunks
    as one sequence, each attending only to its ancestors (a 4-D attention mask, position =
    depth) and to the key/value cache of the chunks before. Counts ``lm.calls`` (one per
    chunk) and ``lm.positions`` (one per node, the start token for the empty prefix)."""
    import torch
    from transformers import DynamicCache

    model, size = lm.model, len(trie.token)
    if lm.max_length is not None and int(trie.depth.max()) + 1 > lm.max_length:
        raise ValueError(f"tokenizations of {int(trie.depth.max())} tokens exceed the model's "
                         f"limit of {lm.max_length} positions")
    window = getattr(model.config, "sliding_window", None)
    if window and int(trie.depth.max()) + 1 > window:  # the custom mask would see past it
        raise ValueError(f"tokenizations of {int(trie.depth.max())} tokens exceed the model's "
                         f"sliding attention window of {window}: use method='depth'")
    tokens = trie.token.copy()
    tokens[0] = lm.start_id
    rows = int(model.get_output_embeddings().weight.shape[0])
    chunk = max(16, (1 << 25) // rows)  # about 128 MiB of float32 log-probabilities per chunk
    dtype = next(model.parameters()).dtype
    lp_child, lp_end = np.zeros(size), np.zeros(size)
    cache = DynamicCache()
    with torch.inference_mode():
        for a in range(0, size, chunk):
            b = min(size, a + chunk)
            allowed = np.zeros((b - a, b), dtype=bool)
            for q in range(a, b):  # ancestors and self
                i = q
                while i >= 0:
                    allowed[q - a, i] = True
                    i = int(trie.parent[i])
            mask = torch.full((1, 1, b - a, b), torch.finfo(dtype).min, dtype=dtype)
            mask[0, 0][torch.from_numpy(allowed)] = 0.0
            out = model(input_ids=torch.from_numpy(tokens[a:b])[None].to(lm.device),
                        position_ids=torch.from_numpy(trie.depth[a:b])[None].to(lm.device),
                        attention_mask=mask.to(lm.device), past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            lm.calls += 1
            lm.positions += b - a
            logsm = torch.log_softmax(out.logits[0].float(), dim=-1)
            kids = np.flatnonzero((trie.parent >= a) & (trie.parent < b))
            if len(kids):
                got = logsm[torch.from_numpy(trie.parent[kids] - a), torch.from_numpy(tokens[kids])]
                lp_child[kids] = got.double().cpu().numpy()
            leaves = np.flatnonzero(trie.pos[a:b] == n) + a
            if len(leaves) and lm.end_id is not None:
                got = logsm[torch.from_numpy(leaves - a), lm.end_id]
                lp_end[leaves] = got.double().cpu().numpy()
    return lp_child, lp_end


def _tree_ready(lm) -> bool:
    """Whether :func:`_score_tree` can run ``lm``: an :class:`~fairppl.tokenlm.lm_hf.HFTokenLM`
    whose model's attention honours a custom 4-D mask (eager or SDPA; flash attention ignores
    it)."""
    from ..tokenlm.lm_hf import HFTokenLM

    if not isinstance(lm, HFTokenLM):
        return False
    return getattr(lm.model.config, "_attn_implementation", "eager") in ("eager", "sdpa")


def enumerate_marginal(lm, vocab: TokenVocab, text: str, max_paths: int = 20_000,
                       default: Sequence[int] | None = None,
                       method: str = "auto") -> ExactResult:
    """Exact log P(text) = log sum over every tokenization of ``text`` (``vocab.lattice`` of
    ``vocab.text_bytes(text)``) of ``lm``'s log P(T [+ end]), nats.

    The tokenizations form a trie; each trie node (a distinct token prefix) is scored once.
    ``method``: ``"tree"`` runs every node through a transformers LM once (tree attention, see
    :func:`_score_tree`; needs ``lm.model`` with eager or SDPA attention), ``"depth"`` makes
    one ``lm.logp_next_many`` request per trie depth (any TokenLM; how much of each prefix is
    re-run is then the LM's business), ``"auto"`` picks ``"tree"`` when it can run. ``default``: a
    tokenization whose log P to report (ValueError if it does not spell the text). Raises
    ValueError when the text has more than ``max_paths`` tokenizations."""
    data = vocab.text_bytes(text)
    lat = vocab.lattice(data)
    total = count_paths(lat)
    if total > max_paths:
        raise ValueError(f"{text[:40]!r}: {total} tokenizations of {len(data)} bytes exceed "
                         f"max_paths={max_paths}: enumerate shorter texts (or raise max_paths)")
    default_key = None
    if default is not None:
        default_key = tuple(int(t) for t in default)
        if vocab.decode(default_key, skip_special=False) != data:
            raise ValueError(f"default tokenization {default_key[:20]} does not spell "
                             f"{data[:40]!r}")
    if method == "auto":
        method = "tree" if _tree_ready(lm) else "depth"
    if method not in ("tree", "depth"):
        raise ValueError(f"method={method!r}: expected 'auto', 'tree' or 'depth'")
    if method == "tree" and not _tree_ready(lm):
        raise ValueError("method='tree' needs a transformers LM (lm.model) with eager or SDPA "
                         "attention: use method='depth'")
    trie = _Trie.of(lat)
    score = _score_tree if method == "tree" else _score_by_depth
    lp_child, lp_end = score(lm, trie, lat.n)
    logp_node = np.zeros(len(trie.token))
    for i in range(1, len(trie.token)):  # breadth-first: parents come first
        logp_node[i] = logp_node[trie.parent[i]] + lp_child[i]
    leaves = np.flatnonzero(trie.pos == lat.n)
    path_logp = logp_node[leaves] + lp_end[leaves]
    if not np.all(np.isfinite(path_logp)):
        raise ValueError(f"{text[:40]!r}: the LM gave a non-finite log-probability")
    paths = tuple(trie.prefix(int(i)) for i in leaves)
    if len(paths) != total:  # guards the walk: every lattice path is a trie leaf
        raise RuntimeError(f"trie walk found {len(paths)} tokenizations, the lattice has {total}")
    logp_default = None
    if default_key is not None:
        logp_default = float(path_logp[paths.index(default_key)])
    return ExactResult(float(logsumexp(path_logp)), total, logp_default, len(trie.token),
                       paths, path_logp)


# ---------------------------------------------------------------------------------------------
# KenLM n-gram forward algorithm


@dataclass(frozen=True)
class NgramResult:
    """``logp``: log P(text) over all tokenizations (nats); ``logp_default``: the given default
    tokenization's log P (None if none given); ``n_states``: (position, KenLM state) pairs
    after merging, summed over positions; ``max_states``: the most at one position;
    ``n_arcs``: lattice arcs; ``seconds``: wall time of the forward pass."""

    logp: float
    logp_default: float | None
    n_states: int
    max_states: int
    n_arcs: int
    seconds: float


class _NgramScorer:
    """log p(word | state) in nats with the study's unseen-token charge, cached per
    (state, token)."""

    def __init__(self, model, id_to_word: Sequence[str | None], unk_cost: float | None):
        import kenlm

        self.kenlm, self.model, self.words = kenlm, model, list(id_to_word)
        self.known = [w is not None and w in model for w in self.words]
        self.unk_cost = math.log(len(self.words)) if unk_cost is None else float(unk_cost)
        self.cache: dict = {}

    def step(self, state, token: int | None):
        """(next state, log p in nats); ``token`` None is the end symbol ``</s>``."""
        key = (state, token)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        if token is None:
            word, known = "</s>", True
        else:
            word = self.words[token] if 0 <= token < len(self.words) else None
            if word is None:
                raise ValueError(f"token id {token} has no KenLM word (control token or out of "
                                 f"range 0..{len(self.words) - 1})")
            known = self.known[token]
        out = self.kenlm.State()
        log10p = self.model.BaseScore(state, word, out)
        if not math.isfinite(log10p):
            raise ValueError(f"KenLM gave a non-finite log-probability ({log10p}) to {word!r}")
        lp = log10p * _LN10
        if not known:
            if log10p < _NO_UNK_LOG10:
                raise ValueError(f"the model gives no probability to unseen tokens (log10 "
                                 f"p(<unk>) = {log10p}): cannot score {word!r}")
            lp -= self.unk_cost
        self.cache[key] = (out, lp)
        return out, lp


def _begin_state(scorer: _NgramScorer, bos: bool):
    state = scorer.kenlm.State()
    if bos:
        scorer.model.BeginSentenceWrite(state)
    else:
        scorer.model.NullContextWrite(state)
    return state


def ngram_path_logp(model, id_to_word: Sequence[str | None], path: Sequence[int],
                    bos: bool = True, eos: bool = True, unk_cost: float | None = None) -> float:
    """log P of one token sequence under the n-gram (nats), same conventions as
    :func:`ngram_marginal`."""
    scorer = _NgramScorer(model, id_to_word, unk_cost)
    state, total = _begin_state(scorer, bos), 0.0
    for tok in path:
        state, lp = scorer.step(state, int(tok))
        total += lp
    if eos:
        total += scorer.step(state, None)[1]
    return total


def ngram_marginal(model, vocab: TokenVocab, text: str, id_to_word: Sequence[str | None],
                   bos: bool = True, eos: bool = True, unk_cost: float | None = None,
                   default: Sequence[int] | None = None,
                   lattice: Lattice | None = None) -> NgramResult:
    """Exact log P(text) (nats) summed over every tokenization, under a token-level KenLM
    ``model`` whose word for token id i is ``id_to_word[i]`` (None: never scorable).

    Forward algorithm over byte positions 0..n of ``vocab.text_bytes(text)`` (or over the
    given ``lattice``): ``alpha[pos][state]`` = log of the total probability of token prefixes
    that spell ``data[:pos]`` and leave the n-gram in ``state``; each arc ``pos -> end`` with
    token t adds ``alpha + log p(t | state)`` to ``alpha[end][state']``. ``bos``: start in
    KenLM's ``<s>`` context (else the null context); ``eos``: charge ``</s>`` at the end.
    ``unk_cost``: nats added to an unseen token's ``<unk>`` cost (default ln(len(id_to_word)),
    the study's convention)."""
    start = time.perf_counter()
    scorer = _NgramScorer(model, id_to_word, unk_cost)
    lat = vocab.lattice(vocab.text_bytes(text)) if lattice is None else lattice
    arcs = arcs_by_start(lat)
    alpha: list[dict] = [{} for _ in range(lat.n + 1)]
    alpha[0][_begin_state(scorer, bos)] = 0.0
    n_states = max_states = 0
    for pos in range(lat.n):
        here = alpha[pos]
        if not here:
            continue
        n_states += len(here)
        max_states = max(max_states, len(here))
        for state, a in here.items():
            for tok, end in arcs[pos]:
                out, lp = scorer.step(state, tok)
                there = alpha[end]
                old = there.get(out)
                there[out] = a + lp if old is None else float(np.logaddexp(old, a + lp))
        alpha[pos] = {}  # done: free the states
    final = alpha[lat.n]
    if not final:
        raise ValueError(f"{text[:40]!r}: no tokenization reaches the end of the text")
    n_states += len(final)
    max_states = max(max_states, len(final))
    ends = [a + (scorer.step(s, None)[1] if eos else 0.0) for s, a in final.items()]
    logp_default = None
    if default is not None:
        logp_default = ngram_path_logp(model, id_to_word, default, bos, eos, unk_cost)
    return NgramResult(float(logsumexp(ends)), logp_default, n_states, max_states,
                       len(lat.token), time.perf_counter() - start)
