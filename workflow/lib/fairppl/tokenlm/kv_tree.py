"""Incremental scoring of continuations after a growing set of prefixes, for an estimator that
extends its prefixes step by step (the LM-guided proposal,
:mod:`fairppl.marginal.lm_guided`; the Shannon game's bettor, :mod:`fairppl.shannon.neural`).

:class:`KVTree` keeps every token position it has run through a transformers causal LM as a node
of one prefix tree (node 0: the start token; a node's key/value vectors, one per layer, stay in a
store, :mod:`.kv_store`). A call of :meth:`KVTree.logp_next_many` adds the nodes its requests
need and lacks (the prefixes' own last tokens and the inner nodes of the continuations' trie; a
continuation's last token is predicted, never run) and runs them in forward passes of at most
``pass_tokens`` new positions: each new position attends to the stored nodes and new nodes that
are its ancestors (a tree attention mask, position id = depth), so a position is computed once
however many prefixes and continuations share it, and a prefix is never run again. A pass is a
batch of rows (:mod:`.kv_layout`): the new nodes under one stored node (a new subtree) share a
row, subtrees fill rows of about ``row_nodes`` positions, and each row carries only the stored
key/values its nodes descend from, so the attention of a pass that carries many units
(:mod:`.batch`) grows with the units' own sizes, not with the pass's square; a pass stays one
row where the rows' padding would cost more (``layout``, :data:`.kv_layout.LAYOUT`).
:meth:`KVTree.keep` then drops every node that is not on the path of a prefix still wanted,
which bounds the store (the continuations not drawn).

Results equal :meth:`HFTokenLM.logp_next_many` up to float32 rounding (to float64 rounding for a
model cast to float64); log-probabilities are float32 ``log_softmax`` (float64 for a float64
model) summed per continuation in float64, **nats**. The LM's ``calls`` and
``positions`` count the passes and the new positions run. A model whose sliding window is shorter
than the depth, or that runs flash attention (no custom masks), is scored by the LM's own
``logp_next_many`` instead.

The forward pass (:meth:`KVTree.run_nodes`) can also give, after listed nodes, the log of the total
probability of given token sets (:class:`MassRequest`): the Shannon game's word-level bettor
asks for them through :class:`fairppl.shannon.kv_masses.MassKVTree`.
"""

from __future__ import annotations

import time
from typing import NamedTuple, Sequence

import numpy as np

from . import kv_layout
from .interface import Seq, TreeLM
from .kv_store import KVStore, new_vectors
from .prefix_tree import PrefixTree, as_tuple, upcast

#: Where a session's time goes, for a benchmark (``bench/bench_lm_batch.py --stages``): when a
#: dict, every session adds to it the seconds of its stages (``requests``: numbering the
#: requests and walking their continuations; ``layout``: the pass's rows, mask and stored
#: key/values; ``decoder``; ``store``; ``output``: the output layer, log-softmax and the values
#: copied back; ``keep``: pruning) and ``passes``, waiting for the device at the end of each
#: stage so that its work is charged to the stage that queued it. None (the default): nothing
#: is timed and nothing waits.
PROFILE: dict | None = None


def tick(lm, stage: str, t0: float) -> float:
    """With :data:`PROFILE` on: wait for ``lm``'s device, add the seconds since ``t0`` to
    ``stage`` and return the time now (else ``t0`` unchanged, nothing done)."""
    if PROFILE is None:
        return t0
    import torch

    if lm.device.type == "cuda":
        torch.cuda.synchronize(lm.device)
    now = time.perf_counter()
    PROFILE[stage] = PROFILE.get(stage, 0.0) + now - t0
    return now


class MassRequest(NamedTuple):
    """Masses asked of a run (:meth:`KVTree.run_nodes`): ``out[index_of_node[node], s]`` gets the log
    of the total probability of the token ids ``token_sets[s]`` (sorted int64 arrays) after
    each node of ``index_of_node``."""

    index_of_node: dict[int, int]
    token_sets: list[np.ndarray]
    out: np.ndarray


class KVTree(PrefixTree):
    """The incremental scorer of a :class:`~.interface.TreeLM` (:class:`~.lm_hf.HFTokenLM`;
    module docstring). ``pass_tokens``: new positions per forward pass (default: the LM's
    ``pass_tokens``); ``row_nodes``, ``layout``: :mod:`.kv_layout` (defaults
    :data:`~.kv_layout.ROW_NODES`, :data:`~.kv_layout.LAYOUT`)."""

    def __init__(self, lm: TreeLM, pass_tokens: int | None = None, row_nodes: int | None = None,
                 layout: str | None = None):
        self.lm = lm
        self.pass_tokens = max(1, int(pass_tokens or lm.pass_tokens))
        self.row_nodes = max(1, int(row_nodes or kv_layout.ROW_NODES))
        self.layout = layout or kv_layout.LAYOUT
        if self.layout not in kv_layout.LAYOUTS:
            raise ValueError(f"layout={self.layout!r}: expected one of "
                             f"{', '.join(kv_layout.LAYOUTS)}")
        self._rho: float | None = None  # the model's attention weight, when first needed
        self.reset()

    def reset(self) -> None:
        PrefixTree.__init__(self, self.lm.start_id)
        self.store = KVStore()  # the key/values of nodes 0..n_stored-1
        # the node of each prefix asked or kept lately (a prefix extends one of them, so its
        # node is found from there instead of walking its whole path from the start token)
        self._at: dict[tuple[int, ...], int] = {(): 0}

    @property
    def n_stored(self) -> int:
        """Nodes whose key/values are stored: ``0..n_stored-1``."""
        return self.store.size

    def __len__(self) -> int:
        return self.n_stored

    def node_of(self, p: tuple[int, ...]) -> int:
        """The node of prefix ``p`` (nodes added as needed), from the longest of its last 32
        prefixes that has a known node."""
        node = self._at.get(p)
        if node is not None:
            return node
        start, node = 0, 0
        for cut in range(1, min(len(p), 32) + 1):
            known = self._at.get(p[:-cut])
            if known is not None:
                start, node = len(p) - cut, known
                break
        for tok in p[start:]:
            node = self.child(node, tok)
        if len(self._at) > 1 << 16:  # a session that never prunes: start the memo again
            self._at = {(): 0}
        self._at[p] = node
        return node

    def _find(self, seq: tuple[int, ...]) -> int:
        """The deepest existing node on the path of ``seq`` (0: the start token)."""
        node = self._at.get(seq)
        if node is not None:
            return node
        node = 0
        for tok in seq:
            nxt = self.children[node].get(tok)
            if nxt is None:
                break
            node = nxt
        return node

    def ancestors(self, nodes) -> tuple[np.ndarray, np.ndarray]:
        """Every ancestor of each of ``nodes``, itself and the start token included, as
        ``(ancestor, index of its node in nodes)`` arrays (by depth, deepest first)."""
        parent = np.asarray(self.parent, dtype=np.int64)
        cur = np.asarray(nodes, dtype=np.int64)
        idx = np.arange(len(cur))
        found, owner = [], []
        while len(cur):
            found.append(cur)
            owner.append(idx)
            up = parent[cur]
            alive = up >= 0
            cur, idx = up[alive], idx[alive]
        if not found:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(found), np.concatenate(owner)

    # -- scoring ------------------------------------------------------------------------------

    def logp_next_many(self, prefixes: Sequence[Seq],
                       conts_per_prefix: Sequence[Sequence[Seq]]) -> list[np.ndarray]:
        """log P(cont | start + prefix) per continuation of each prefix, nats, no end token (as
        :meth:`HFTokenLM.logp_next_many`); the positions run stay in the store."""
        import torch

        lm = self.lm
        t0 = time.perf_counter()
        slots, rows = _slots(prefixes, conts_per_prefix)
        depth = 0
        for p, conts in slots.items():
            longest = max((len(c) for c in conts), default=1)
            lm.check_length(len(p) + max(longest, 1), f"prefix of {len(p)} tokens")
            depth = max(depth, len(p) + longest)
        if not lm.use_tree(depth + 1):
            return lm.logp_next_many(prefixes, conts_per_prefix)
        targets: dict[tuple[int, int], int] = {}  # (node, target token) -> its value's index
        target_of_token: list[int] = []  # the target index of every token of every cont
        cont_of_token: list[int] = []  # which (prefix, cont) each of those tokens belongs to
        order: list[tuple] = []  # the (prefix, cont) pairs, numbered
        for p, conts in slots.items():
            base = self.node_of(p)
            for c in conts:
                node, r = base, len(order)
                order.append((p, c))
                for i, tok in enumerate(c):
                    target_of_token.append(targets.setdefault((node, tok), len(targets)))
                    cont_of_token.append(r)
                    if i + 1 < len(c):
                        node = self.child(node, tok)
        values = np.zeros(len(targets))
        tick(lm, "requests", t0)
        if targets:
            with torch.inference_mode():
                self.run_nodes(targets, values)
        sums = np.bincount(np.asarray(cont_of_token, dtype=np.int64),
                           weights=values[np.asarray(target_of_token, dtype=np.int64)],
                           minlength=len(order))
        bad = ~np.isfinite(sums)
        if bad.any():
            from ..core.errors import ScoringError
            p, c = order[int(np.flatnonzero(bad)[0])]
            raise ScoringError(f"continuation {c!r} after prefix {p[:20]!r}: log-probability "
                               f"{sums[bad][0]}: the model produced NaN/inf")
        return [sums[row] for row in rows]

    # -- the forward passes -------------------------------------------------------------------

    def run_nodes(self, targets: dict[tuple[int, int], int], values: np.ndarray,
                  masses: MassRequest | None = None) -> None:
        """Run the nodes not yet stored, ``pass_tokens`` at a time, and fill ``values[k]`` with
        the log-probability of the target token after the node of each ``(node, token): k`` of
        ``targets``; with ``masses``, also the masses it asks (:class:`MassRequest`).

        A pass is a batch of rows (:func:`.kv_layout.lay_out`): a node attends over its row
        (its ancestors and, masked out, the row's other positions) rather than over every
        position of the pass: a pass of units that share nothing costs about ``units`` times
        less attention than one row would, at the price of padding (``layout`` "auto" takes the
        cheaper of the two per pass). Logits are computed for the positions with a target or a
        mass only, at most the LM's ``max_batch_tokens`` of them at once.

        A target or mass whose node is already stored (a prefix that another request ran as an
        inner position, e.g. units sharing a session, :mod:`.batch`; a context of
        :meth:`~fairppl.shannon.kv_masses.MassKVTree.logp_next_masses_many`) has no output row
        left: its node is run again in a row of the first pass, seeing its stored ancestors and
        its own stored key/values (the same vectors it would compute), its new key/values
        discarded. A single estimator never asks after a stored node, so its passes are
        unchanged."""
        import torch

        lm = self.lm
        targets_at: dict[int, list[tuple[int, int]]] = {}  # node -> its (token, index) pairs
        for (node, tok), k in targets.items():
            targets_at.setdefault(node, []).append((tok, k))
        if masses is None:
            masses = MassRequest({}, [], np.zeros((0, 0)))
        set_ids = [torch.from_numpy(s).to(lm.device) for s in masses.token_sets]
        for first_new, end_new, pass_nodes in self._passes(targets_at, masses.index_of_node):
            t0 = time.perf_counter()
            lay = kv_layout.lay_out(self, pass_nodes, first_new, self.row_nodes, self.layout,
                                    self._attention_weight)
            mask = _attention_mask(lay, lm)
            cache = self.store.cache_for(lay.stored, lm.device)
            lm.calls += 1
            lm.positions += len(pass_nodes)
            if PROFILE is not None:
                PROFILE["passes"] = PROFILE.get("passes", 0) + 1
            t0 = tick(lm, "layout", t0)
            # the decoder; the output layer runs on the scored positions only (no padding)
            out = lm.model.base_model(input_ids=torch.from_numpy(lay.tokens).to(lm.device),
                                      position_ids=torch.from_numpy(lay.depths).to(lm.device),
                                      attention_mask=mask[:, None], past_key_values=cache,
                                      use_cache=True)
            t0 = tick(lm, "decoder", t0)
            self._store_new(out.past_key_values, lay, first_new, end_new)
            t0 = tick(lm, "store", t0)
            scored = [q for q in pass_nodes if q in targets_at or q in masses.index_of_node]
            if scored:
                self._score(out.last_hidden_state, lay, scored, targets_at, values, masses,
                            set_ids)
                tick(lm, "output", t0)

    def _passes(self, targets_at: dict, mass_nodes: dict):
        """``(first_new, end_new, pass_nodes)`` per forward pass: the new nodes
        ``first_new..end_new-1`` (``pass_tokens`` at most), then, in the first pass only, the
        stored nodes with a target or a mass, run again for their output rows (a pass of those
        alone when nothing is new)."""
        total = len(self.token)
        rerun = sorted(node for node in {**targets_at, **mass_nodes} if node < self.n_stored)
        starts = list(range(self.n_stored, total, self.pass_tokens))
        for first_new in starts or ([self.n_stored] if rerun else []):
            end_new = min(total, first_new + self.pass_tokens)
            yield first_new, end_new, list(range(first_new, end_new)) + rerun
            rerun = []

    def _attention_weight(self) -> float:
        """:func:`.kv_layout.attention_weight` of the LM's model, computed once."""
        if self._rho is None:
            self._rho = kv_layout.attention_weight(self.lm.model)
        return self._rho

    def _store_new(self, cache, lay: kv_layout.PassLayout, first_new: int, end_new: int) -> None:
        """Write the key/values the pass computed for its new nodes into the store (those of
        nodes run again are left out: they are stored already)."""
        import torch

        dev = self.lm.device
        new = np.arange(first_new, end_new)
        rows = torch.from_numpy(lay.row_of(new)).to(dev)
        cols = torch.from_numpy(lay.stored.shape[1] + lay.col_of(new)).to(dev)
        self.store.write(first_new, end_new, new_vectors(cache, rows, cols))

    def _score(self, hidden_states, lay: kv_layout.PassLayout, scored: list[int],
               targets_at: dict, values: np.ndarray, masses: MassRequest, set_ids: list) -> None:
        """The output layer and log-softmax of each scored node once (as the LM's own scorer
        computes them), in slices of at most the LM's ``max_batch_tokens`` nodes; each target
        token's log-probability into ``values``, each asked mass into ``masses.out``."""
        import torch

        lm, dev = self.lm, self.lm.device
        nodes = np.asarray(scored, dtype=np.int64)
        hidden = hidden_states[torch.from_numpy(lay.row_of(nodes)).to(dev),
                               torch.from_numpy(lay.col_of(nodes)).to(dev)]
        # every target as (its node's place in scored, token, value index), by place
        place_of = {int(q): i for i, q in enumerate(nodes)}
        places, toks, indices = [], [], []
        for q in scored:
            for tok, k in targets_at.get(q, ()):
                places.append(place_of[q])
                toks.append(tok)
                indices.append(k)
        places_a, toks_a, indices_a = (np.asarray(x, dtype=np.int64)
                                       for x in (places, toks, indices))
        mass_places = np.asarray([i for i, q in enumerate(scored) if q in masses.index_of_node],
                                 dtype=np.int64)
        step = max(1, int(lm.max_batch_tokens))
        for lo in range(0, len(nodes), step):
            hi = min(len(nodes), lo + step)
            log_probs = torch.log_softmax(upcast(_output_layer(lm.model, hidden[lo:hi])), dim=-1)
            t0, t1 = np.searchsorted(places_a, [lo, hi])  # places_a is sorted
            if t1 > t0:
                picked = log_probs[torch.from_numpy(places_a[t0:t1] - lo).to(dev),
                                   torch.from_numpy(toks_a[t0:t1]).to(dev)]
                values[indices_a[t0:t1]] = picked.double().cpu().numpy()
            m0, m1 = np.searchsorted(mass_places, [lo, hi])
            if m1 > m0:
                rows = log_probs[torch.from_numpy(mass_places[m0:m1] - lo).to(dev)]
                out_rows = np.asarray([masses.index_of_node[scored[i]]
                                       for i in mass_places[m0:m1]])
                for s, ids in enumerate(set_ids):
                    part = torch.logsumexp(rows.index_select(1, ids), dim=-1)
                    masses.out[out_rows, s] = part.double().cpu().numpy()

    # -- pruning ------------------------------------------------------------------------------

    def keep(self, prefixes: Sequence[Seq]) -> None:
        """Drop every node that is not on the path of one of ``prefixes`` (their stored part)."""
        t0 = time.perf_counter()
        self._keep(prefixes)
        tick(self.lm, "keep", t0)

    def _keep(self, prefixes: Sequence[Seq]) -> None:
        prefixes = [p if type(p) is tuple else tuple(int(t) for t in p) for p in prefixes]
        ends = [self._find(p) for p in prefixes]
        kept = np.unique(self.ancestors(ends)[0])
        kept = kept[kept < self.n_stored]
        if len(kept) == 0:
            self.reset()
            return
        new_id = np.full(len(self.token), -1, dtype=np.int64)
        new_id[kept] = np.arange(len(kept))
        self._at = {(): 0}
        for p, node in zip(prefixes, ends):
            if new_id[node] >= 0 and self.depth[node] == len(p):
                self._at[p] = int(new_id[node])
        if len(kept) == len(self.token):  # nothing dropped
            return
        self._renumber(kept, new_id)
        self.store.keep_only(kept)

    def _renumber(self, kept: np.ndarray, new_id: np.ndarray) -> None:
        """Keep the tree's nodes ``kept`` (sorted, node 0 first), node ``kept[i]`` becoming
        ``i`` (``new_id``: the new id of every old node, -1 when dropped)."""
        self.token = np.asarray(self.token)[kept].tolist()
        self.depth = np.asarray(self.depth)[kept].tolist()
        parent = new_id[np.asarray(self.parent)[kept]]
        parent[0] = -1
        self.parent = parent.tolist()
        self.children = [{} for _ in kept]
        for i, (up, tok) in enumerate(zip(self.parent, self.token)):
            if i:
                self.children[up][tok] = i


def _attention_mask(lay: kv_layout.PassLayout, lm):
    """The pass's additive attention mask, (batch, new positions, stored + new columns) in the
    model's dtype: 0 where ``lay.allowed`` lets a position see a column, the dtype's minimum
    elsewhere."""
    import torch

    dtype, dev = next(lm.model.parameters()).dtype, lm.device
    allowed = torch.zeros((lay.batch, lay.width, lay.stored.shape[1] + lay.width),
                          dtype=torch.bool, device=dev)
    allowed[tuple(torch.from_numpy(x).to(dev) for x in lay.allowed)] = True
    mask = torch.zeros(allowed.shape, dtype=dtype, device=dev)
    mask.masked_fill_(~allowed, torch.finfo(dtype).min)
    return mask


def _output_layer(model, hidden):
    """The causal LM's logits from its decoder's last hidden states: its output layer, then the
    final soft-capping of the models that have one (Gemma 2 and 3: ``final_logit_softcapping``),
    as the model's own forward computes them."""
    import torch

    from ..lm.batches import text_config

    logits = model.get_output_embeddings()(hidden)
    config = text_config(model)
    cap = getattr(config, "final_logit_softcapping", None)
    if cap:
        logits = torch.tanh(logits / cap) * cap
    return logits


def _slots(prefixes: Sequence[Seq], conts_per_prefix: Sequence[Sequence[Seq]]
           ) -> tuple[dict[tuple, dict[tuple, int]], list[np.ndarray]]:
    """The distinct prefixes, each with its distinct continuations numbered in the order the
    scorer walks them (prefix by prefix), and per request the numbers of its continuations: a
    prefix's tokens are hashed once per request (tuples do not keep their hash)."""
    if len(prefixes) != len(conts_per_prefix):
        raise ValueError(f"{len(prefixes)} prefixes but {len(conts_per_prefix)} lists of "
                         f"continuations: expected one list per prefix")
    slots: dict[tuple, dict[tuple, int]] = {}
    local: list[list[int]] = []
    which: list[dict] = []
    for i, (prefix, conts) in enumerate(zip(prefixes, conts_per_prefix)):
        p = prefix if type(prefix) is tuple else as_tuple(prefix, f"prefix {i}")
        bucket = slots.setdefault(p, {})
        row = []
        for j, cont in enumerate(conts):
            c = cont if type(cont) is tuple else as_tuple(cont, f"continuation {j} of "
                                                                 f"prefix {i}")
            row.append(bucket.setdefault(c, len(bucket)))
        local.append(row)
        which.append(bucket)
    offset, at = {}, 0  # a prefix's first number
    for b in slots.values():
        offset[id(b)] = at
        at += len(b)
    return slots, [np.asarray(row, dtype=np.int64) + offset[id(b)]
                   for row, b in zip(local, which)]
