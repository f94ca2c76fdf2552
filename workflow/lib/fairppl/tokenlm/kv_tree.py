"""Incremental scoring of continuations after a growing set of prefixes, for an estimator that
extends its prefixes step by step (the LM-guided proposal,
:mod:`fairppl.marginal.lm_guided`; the Shannon game's bettor, :mod:`fairppl.shannon.neural`).

:class:`KVTree` keeps every token position it has run through a transformers causal LM as a node
of one prefix tree (node 0: the start token; a node's key/value vectors, one per layer, stay in a
store). A call of :meth:`KVTree.logp_next_many` adds the nodes its requests need and lacks (the
prefixes' own last tokens and the inner nodes of the continuations' trie; a continuation's last
token is predicted, never run) and runs them in forward passes of at most ``chunk`` positions:
each new position attends to the stored nodes and new nodes that are its ancestors (a tree
attention mask, position id = depth), so a position is computed once however many prefixes and
continuations share it, and a prefix is never run again. A pass is a batch of rows: the new
nodes under one stored node (a new subtree) share a row, subtrees fill rows of about
``row_nodes`` positions, and each row carries only the stored key/values its nodes descend
from, so the attention of a pass that carries many units (:mod:`.batch`) grows with the
units' own sizes, not with the pass's square; a pass stays one row where the rows' padding
would cost more (``layout``, :data:`LAYOUT`). :meth:`KVTree.keep` then drops every
node that is not on the path of a prefix still wanted, which bounds the store (the continuations
not drawn).

Results equal :meth:`HFTokenLM.logp_next_many` up to float32 rounding (to float64 rounding for a
model cast to float64); log-probabilities are float32 ``log_softmax`` (float64 for a float64
model) summed per continuation in float64, **nats**. The LM's ``calls`` and
``positions`` count the passes and the new positions run. A model whose sliding window is shorter
than the depth, or that runs flash attention (no custom masks), is scored by the LM's own
``logp_next_many`` instead.

:meth:`KVTree.logp_next_masses` serves a word-level bettor (:mod:`fairppl.shannon.neural`): after
one prefix, the log-probabilities of many continuations and, at each continuation's end, the total
probability of given token sets (e.g. every token that starts a new word, and the end token); it
runs the continuations' last tokens too, and refuses a model without tree attention;
:meth:`KVTree.logp_next_masses_many` does so after many prefixes in one call (every truncation
of a Shannon-game unit).
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from .interface import Seq, TreeLM
from .prefix_tree import PrefixTree, as_tuple, upcast


#: New positions per row of a forward pass, about (:meth:`KVTree._layout`): rows are the batch
#: dimension of a pass, each with only the stored key/values its own nodes need.
ROW_NODES = 256
#: How a pass is laid out: ``"rows"`` (:meth:`KVTree._layout`), ``"one"`` (every position of
#: the pass in one row: no padding, attention over the whole pass) or ``"auto"``: per pass the
#: one that costs fewer FLOPs by the model's own sizes (:func:`_attention_weight`); rows win
#: when a pass carries many units' positions (a GPU's thousands), one row on a CPU's hundreds.
LAYOUT = "auto"
LAYOUTS = ("auto", "rows", "one")
#: Where a session's time goes, for a benchmark (``bench/bench_lm_batch.py --stages``): when a
#: dict, every session adds to it the seconds of its stages (``requests``: numbering the
#: requests and walking their continuations; ``layout``: the pass's rows, mask and stored
#: key/values; ``decoder``; ``store``; ``output``: the output layer, log-softmax and the values
#: copied back; ``keep``: pruning) and ``passes``, waiting for the device at the end of each
#: stage so that its work is charged to the stage that queued it. None (the default): nothing
#: is timed and nothing waits.
PROFILE: dict | None = None


def _tick(lm, stage: str, t0: float) -> float:
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


class KVTree(PrefixTree):
    """The incremental scorer of a :class:`~.interface.TreeLM` (:class:`~.lm_hf.HFTokenLM`;
    module docstring). ``chunk``: new positions per forward pass (default: the LM's
    ``tree_nodes``)."""

    def __init__(self, lm: TreeLM, chunk: int | None = None, row_nodes: int | None = None,
                 layout: str | None = None):
        self.lm = lm
        self.chunk = max(1, int(chunk or lm.tree_nodes))
        self.row_nodes = max(1, int(row_nodes or ROW_NODES))
        self.layout = layout or LAYOUT
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout={self.layout!r}: expected one of {', '.join(LAYOUTS)}")
        self._rho: float | None = None  # the model's attention weight, when first needed
        self._reset()

    def _reset(self) -> None:
        PrefixTree.__init__(self, self.lm.start_id)
        self.n_done = 0  # nodes 0..n_done-1 have their key/values in the store
        self.kv: list[tuple] | None = None  # per layer (keys, values), (1, heads, capacity, dim)
        # the node of each prefix asked or kept lately (a prefix extends one of them, so its
        # node is found from there instead of walking its whole path from the start token)
        self._at: dict[tuple[int, ...], int] = {(): 0}

    def __len__(self) -> int:
        return self.n_done

    def _node(self, p: tuple[int, ...]) -> int:
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
        pairs: dict[tuple[int, int], int] = {}  # (node, target token) -> index
        flat: list[int] = []  # pair indices of every (prefix, cont), in order
        owner: list[int] = []  # which (prefix, cont) each entry of flat belongs to
        order: list[tuple] = []
        for p, conts in slots.items():
            base = self._node(p)
            for c in conts:
                node, r = base, len(order)
                order.append((p, c))
                for i, tok in enumerate(c):
                    flat.append(pairs.setdefault((node, tok), len(pairs)))
                    owner.append(r)
                    if i + 1 < len(c):
                        node = self.child(node, tok)
        values = np.zeros(len(pairs))
        _tick(lm, "requests", t0)
        if pairs:
            with torch.inference_mode():
                self._run(pairs, values)
        sums = np.bincount(np.asarray(owner, dtype=np.int64),
                           weights=values[np.asarray(flat, dtype=np.int64)], minlength=len(order))
        bad = ~np.isfinite(sums)
        if bad.any():
            from ..core.errors import ScoringError
            p, c = order[int(np.flatnonzero(bad)[0])]
            raise ScoringError(f"continuation {c!r} after prefix {p[:20]!r}: log-probability "
                               f"{sums[bad][0]}: the model produced NaN/inf")
        return [sums[row] for row in rows]

    def logp_next_masses(self, prefix: Seq, conts: Sequence[Seq],
                         token_sets: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
        """For one prefix: log P(cont | start + prefix) per continuation (as
        :meth:`logp_next_many`), and ``masses[j, s]`` = log of the total probability of the
        token ids ``token_sets[s]`` after start + prefix + ``conts[j]`` (an empty continuation:
        right after the prefix), nats. Every token of every continuation is run, its last one
        included (the mass after it needs its row).

        The store is first cut to the path of the prefix without its last token, which is run
        again, since a stored position keeps no output row: a call costs the prefix positions not
        yet stored (at least one) plus the distinct positions of the continuations' trie."""
        [prefix], [conts], sets = self._masses_request([prefix], [conts], token_sets)
        if prefix:
            self.keep([prefix[:-1]])
        else:
            self._reset()
        return self._masses([prefix], [self._node(prefix)], [conts], sets)[0]

    def logp_next_masses_many(self, prefixes: Sequence[Seq], conts_per_prefix: Sequence[
            Sequence[Seq]], token_sets: Sequence[Sequence[int]]
            ) -> list[tuple[np.ndarray, np.ndarray]]:
        """:meth:`logp_next_masses` for several prefixes at once (e.g. every truncation of a
        Shannon-game unit, whose contexts are prefixes of one another): one ``(sums, masses)``
        per prefix, the same values. The store is cut to the prefixes' paths; their positions
        not yet stored are run first (no output rows), then every prefix's last position again
        (its row: the masses after an empty continuation and the continuations' first tokens)
        and all the continuations' tries, in passes of ``chunk`` positions whose rows hold one
        prefix's tries each (:meth:`_run`): a call costs about two passes for the lot where
        :meth:`logp_next_masses` costs one per prefix."""
        import torch

        prefixes, conts_per_prefix, sets = self._masses_request(prefixes, conts_per_prefix,
                                                                token_sets)
        self.keep(prefixes)
        bases = [self._node(p) for p in prefixes]
        if len(self.token) > self.n_done:
            with torch.inference_mode():
                self._run({}, np.zeros(0))  # the contexts' new positions, stored
        return self._masses(prefixes, bases, conts_per_prefix, sets)

    def _masses_request(self, prefixes, conts_per_prefix, token_sets):
        """The prefixes and continuations as tuples and the token sets as sorted id arrays,
        checked (lengths, tree attention, ids)."""
        lm = self.lm
        if len(prefixes) != len(conts_per_prefix):
            raise ValueError(f"{len(prefixes)} prefixes but {len(conts_per_prefix)} lists of "
                             f"continuations: expected one list per prefix")
        prefixes = [tuple(int(t) for t in p) for p in prefixes]
        conts_per_prefix = [[tuple(int(t) for t in c) for c in cs] for cs in conts_per_prefix]
        depth = 0
        for p, conts in zip(prefixes, conts_per_prefix):
            longest = max((len(c) for c in conts), default=0)
            lm.check_length(len(p) + longest + 1, f"prefix of {len(p)} tokens")
            depth = max(depth, len(p) + longest + 1)
        if not lm.use_tree(depth):
            raise ValueError("logp_next_masses needs tree attention: this model runs flash "
                             "attention or a sliding window shorter than the depth")
        sets = [np.unique(np.asarray(list(s), dtype=np.int64)) for s in token_sets]
        if not sets or any(len(s) == 0 for s in sets):
            raise ValueError("expected at least one non-empty token set")
        if any(s.min() < 0 or s.max() >= lm.vocab_rows for s in sets):
            raise ValueError(f"token sets must hold ids below the model's {lm.vocab_rows} rows")
        return prefixes, conts_per_prefix, sets

    def _masses(self, prefixes, bases, conts_per_prefix, sets):
        """Run every continuation's tokens after its prefix's node (``bases``) and the masses of
        ``sets`` at its end: ``(sums, masses)`` per prefix (:meth:`logp_next_masses`)."""
        import torch

        t0 = time.perf_counter()
        pairs: dict[tuple[int, int], int] = {}
        flat: list[int] = []
        owner: list[int] = []
        ends: list[int] = []
        for base, conts in zip(bases, conts_per_prefix):
            for c in conts:
                node = base
                for tok in c:
                    flat.append(pairs.setdefault((node, tok), len(pairs)))
                    owner.append(len(ends))
                    node = self.child(node, tok)
                ends.append(node)
        mass_nodes = {node: i for i, node in enumerate(dict.fromkeys(ends))}
        values = np.zeros(len(pairs))
        node_masses = np.zeros((len(mass_nodes), len(sets)))
        _tick(self.lm, "requests", t0)
        with torch.inference_mode():
            self._run(pairs, values, (mass_nodes, sets, node_masses))
        sums = np.bincount(np.asarray(owner, dtype=np.int64),
                           weights=values[np.asarray(flat, dtype=np.int64)], minlength=len(ends))
        masses = node_masses[[mass_nodes[n] for n in ends]].reshape(len(ends), len(sets))
        bad = ~(np.isfinite(sums) & np.isfinite(masses).all(axis=1))
        if bad.any():
            from ..core.errors import ScoringError
            j = int(np.flatnonzero(bad)[0])
            i = int(np.searchsorted(np.cumsum([len(c) for c in conts_per_prefix]), j,
                                    side="right"))
            at = j - sum(len(c) for c in conts_per_prefix[:i])
            raise ScoringError(f"continuation {conts_per_prefix[i][at]!r} after prefix "
                               f"{prefixes[i][:20]!r}: a log-probability is NaN/inf: the model "
                               f"produced NaN/inf")
        out, at = [], 0
        for conts in conts_per_prefix:
            out.append((sums[at:at + len(conts)], masses[at:at + len(conts)]))
            at += len(conts)
        return out

    def _run(self, pairs: dict[tuple[int, int], int], values: np.ndarray,
             masses: tuple | None = None) -> None:
        """Run the nodes not yet stored, ``chunk`` at a time, and fill ``values[k]`` with the
        log-probability of each pair's target token after its node; with ``masses =
        (rows_of_node, token_sets, out)``, also ``out[rows_of_node[node], s]`` = log of the
        total probability of ``token_sets[s]`` after each listed node.

        A pass is a batch of rows (:meth:`_layout`): the new nodes of one new subtree (a node
        whose parent is stored, with its new descendants) share a row, and subtrees fill rows of
        about ``row_nodes`` positions in the order they were added. A row holds only the stored
        key/values its own nodes descend from, so a node attends over its row (its ancestors
        and, masked out, the row's other positions) rather than over every position of the pass:
        a pass of units that share nothing costs about ``units`` times less attention than one
        row would, at the price of padding (``layout`` "auto" takes the cheaper of the two per
        pass). Logits are computed for the positions with a target or a mass only, at most the
        LM's ``max_batch_tokens`` of them at once.

        A pair or mass whose node is already stored (a prefix that another request ran as an
        inner position, e.g. units sharing a session, :mod:`.batch`; a context of
        :meth:`logp_next_masses_many`) has no output row left: its node is run again in a row
        of the first pass, seeing its stored ancestors and its own
        stored key/values (the same vectors it would compute), its new key/values discarded. A
        single estimator never asks after a stored node, so its passes are unchanged."""
        import torch
        from transformers import DynamicCache

        lm, dev = self.lm, self.lm.device
        by_node: dict[int, list[tuple[int, int]]] = {}
        for (node, tok), k in pairs.items():
            by_node.setdefault(node, []).append((tok, k))
        mass_rows, mass_sets, mass_out = masses if masses is not None else ({}, [], None)
        set_index = [torch.from_numpy(s).to(dev) for s in mass_sets]
        dtype = next(lm.model.parameters()).dtype
        total = len(self.token)
        again = sorted(node for node in {**by_node, **mass_rows} if node < self.n_done)
        starts = list(range(self.n_done, total, self.chunk)) or ([self.n_done] if again else [])
        for a in starts:
            t0 = time.perf_counter()
            b = min(total, a + self.chunk)
            rows_of = list(range(a, b)) + again  # new nodes, then stored ones run again
            again = []  # run again in the first pass only
            lay = self._layout(rows_of, a, b)
            width = lay.stored.shape[1] + lay.width
            allowed = torch.zeros((lay.batch, lay.width, width), dtype=torch.bool, device=dev)
            allowed[tuple(torch.from_numpy(x).to(dev) for x in lay.allowed)] = True
            mask = torch.zeros(allowed.shape, dtype=dtype, device=dev)
            mask.masked_fill_(~allowed, torch.finfo(dtype).min)
            cache = DynamicCache()
            if lay.stored.shape[1]:
                sel = torch.from_numpy(lay.stored.reshape(-1)).to(dev)
                shape = (lay.batch,) + lay.stored.shape[1:]
                cache = DynamicCache(ddp_cache_data=[
                    tuple(x[0].index_select(1, sel).unflatten(1, shape).transpose(0, 1)
                          for x in layer) for layer in self.kv])
            keep = [q for q in rows_of if q in by_node or q in mass_rows]
            lm.calls += 1
            lm.positions += len(rows_of)
            if PROFILE is not None:
                PROFILE["passes"] = PROFILE.get("passes", 0) + 1
            t0 = _tick(lm, "layout", t0)
            # the decoder, then the output layer on the kept positions only (no padding)
            out = lm.model.base_model(input_ids=torch.from_numpy(lay.tokens).to(dev),
                                      position_ids=torch.from_numpy(lay.depths).to(dev),
                                      attention_mask=mask[:, None], past_key_values=cache,
                                      use_cache=True)
            t0 = _tick(lm, "decoder", t0)
            new = np.arange(a, b)
            new_row = torch.from_numpy(lay.row_of(new)).to(dev)
            new_col = torch.from_numpy(lay.stored.shape[1] + lay.col_of(new)).to(dev)
            self._store(a, b, [(layer.keys[new_row, :, new_col].transpose(0, 1)[None],
                                layer.values[new_row, :, new_col].transpose(0, 1)[None])
                               for layer in out.past_key_values.layers])
            t0 = _tick(lm, "store", t0)
            # each kept node's log-softmax once (as the LM's own scorer computes it), then
            # every target of it picked; at most the LM's max_batch_tokens rows of logits at once
            if not keep:
                continue
            nodes = np.asarray(keep, dtype=np.int64)
            hidden = out.last_hidden_state[torch.from_numpy(lay.row_of(nodes)).to(dev),
                                           torch.from_numpy(lay.col_of(nodes)).to(dev)]
            where = {int(q): i for i, q in enumerate(nodes)}
            rows, toks, ks = [], [], []
            for q in keep:
                for tok, k in by_node.get(q, ()):
                    rows.append(where[q])
                    toks.append(tok)
                    ks.append(k)
            rows_a, toks_a, ks_a = (np.asarray(x, dtype=np.int64) for x in (rows, toks, ks))
            mnodes = np.asarray([i for i, q in enumerate(keep) if q in mass_rows],
                                dtype=np.int64)
            step = max(1, int(lm.max_batch_tokens))
            for lo in range(0, len(nodes), step):
                hi = min(len(nodes), lo + step)
                lsm = torch.log_softmax(upcast(_output_layer(lm.model, hidden[lo:hi])), dim=-1)
                p0, p1 = np.searchsorted(rows_a, [lo, hi])  # rows_a is sorted
                if p1 > p0:
                    lp = lsm[torch.from_numpy(rows_a[p0:p1] - lo).to(dev),
                             torch.from_numpy(toks_a[p0:p1]).to(dev)]
                    values[ks_a[p0:p1]] = lp.double().cpu().numpy()
                m0, m1 = np.searchsorted(mnodes, [lo, hi])
                if m1 > m0:
                    picked = lsm[torch.from_numpy(mnodes[m0:m1] - lo).to(dev)]
                    mks = np.asarray([mass_rows[keep[i]] for i in mnodes[m0:m1]])
                    for s, idx in enumerate(set_index):
                        part = torch.logsumexp(picked.index_select(1, idx), dim=-1)
                        mass_out[mks, s] = part.double().cpu().numpy()
            _tick(lm, "output", t0)

    def _layout(self, rows_of: list[int], a: int, b: int) -> "_Layout":
        """The rows of a pass that runs the nodes ``rows_of`` (the new nodes ``a..b-1``, then
        stored nodes run again): each new subtree of the pass (a new node whose parent is stored,
        with its descendants up to ``b``) and each node run again is a group; groups fill rows
        in order, each row up to ``row_nodes`` positions or the largest group's size, whichever
        is larger (the rows are padded to the widest). With ``layout`` "auto", the pass is one
        row instead when that costs fewer FLOPs: a position's weights count 1, a (query, key)
        pair of the attention :func:`_attention_weight`, padding included (rows) or the whole
        pass's keys (one row)."""
        group: dict[int, int] = {}  # node -> its group's first node
        sizes: dict[int, int] = {}
        for q in rows_of:
            top = q if q < a or self.parent[q] < a else group[self.parent[q]]
            group[q] = top
            sizes[top] = sizes.get(top, 0) + 1
        if self.layout == "one":
            return _Layout(self, rows_of, [0] * len(rows_of), a)
        row_of_group: dict[int, int] = {}
        row, used = 0, 0
        width = max(self.row_nodes, max(sizes.values()))  # rows padded to the widest anyway
        for top, size in sizes.items():
            if used and used + size > width:
                row, used = row + 1, 0
            row_of_group[top] = row
            used += size
        lay = _Layout(self, rows_of, [row_of_group[group[q]] for q in rows_of], a)
        if self.layout == "rows" or lay.batch == 1:
            return lay
        if self._rho is None:
            self._rho = _attention_weight(self.lm.model)
        n, padded = len(rows_of), lay.batch * lay.width
        rows_cost = padded * (1 + self._rho * (lay.stored.shape[1] + lay.width))
        one_cost = n * (1 + self._rho * (lay.union + n))
        return lay if rows_cost < one_cost else _Layout(self, rows_of, [0] * n, a)

    def _store(self, a: int, b: int, new: list[tuple]) -> None:
        """Write the key/values of nodes a..b-1 into the store (capacity doubled as needed)."""
        import torch

        if self.kv is None:
            self.kv = [(k.new_empty(k.shape[:2] + (max(b, 64),) + k.shape[3:]),
                        v.new_empty(v.shape[:2] + (max(b, 64),) + v.shape[3:])) for k, v in new]
        cap = self.kv[0][0].shape[2]
        if b > cap:
            grow = max(b, 2 * cap) - cap
            self.kv = [(torch.cat([k, k.new_empty(k.shape[:2] + (grow,) + k.shape[3:])], 2),
                        torch.cat([v, v.new_empty(v.shape[:2] + (grow,) + v.shape[3:])], 2))
                       for k, v in self.kv]
        for (k, v), (nk, nv) in zip(self.kv, new):
            k[:, :, a:b] = nk
            v[:, :, a:b] = nv
        self.n_done = b

    # -- pruning ------------------------------------------------------------------------------

    def keep(self, prefixes: Sequence[Seq]) -> None:
        """Drop every node that is not on the path of one of ``prefixes`` (their stored part)."""
        t0 = time.perf_counter()
        self._keep(prefixes)
        _tick(self.lm, "keep", t0)

    def _keep(self, prefixes: Sequence[Seq]) -> None:
        import torch

        prefixes = [p if type(p) is tuple else tuple(int(t) for t in p) for p in prefixes]
        ends = [self._find(p) for p in prefixes]
        kept = np.unique(self.ancestors(ends)[0])
        kept = kept[kept < self.n_done]
        if len(kept) == 0:
            self._reset()
            return
        new_id = np.full(len(self.token), -1, dtype=np.int64)
        new_id[kept] = np.arange(len(kept))
        self._at = {(): 0}
        for p, node in zip(prefixes, ends):
            if new_id[node] >= 0 and self.depth[node] == len(p):
                self._at[p] = int(new_id[node])
        if len(kept) == len(self.token):  # nothing dropped
            return
        self.token = np.asarray(self.token)[kept].tolist()
        self.depth = np.asarray(self.depth)[kept].tolist()
        parent = new_id[np.asarray(self.parent)[kept]]
        parent[0] = -1
        self.parent = parent.tolist()
        self.children = [{} for _ in kept]
        for i, (up, tok) in enumerate(zip(self.parent, self.token)):
            if i:
                self.children[up][tok] = i
        idx = torch.from_numpy(kept).to(self.kv[0][0].device)
        self.kv = [(k.index_select(2, idx), v.index_select(2, idx)) for k, v in self.kv]
        self.n_done = len(kept)


def _attention_weight(model) -> float:
    """FLOPs of one (query, key) pair of attention over all layers (4 x the attention width per
    layer: the scores and the weighted values) per FLOPs of one position through the layers'
    weights (2 x their parameters, embeddings and output layer left out): about 3e-4 for
    SmolLM2-135M, so a position attending over 3,000 keys costs its weights' FLOPs again."""
    from ..lm.batches import text_config

    config = text_config(model)
    heads = int(config.num_attention_heads)
    width = heads * int(getattr(config, "head_dim", None) or config.hidden_size // heads)
    layers = int(config.num_hidden_layers)
    inp = model.get_input_embeddings().weight
    out = model.get_output_embeddings()
    body = sum(p.numel() for p in model.parameters()) - inp.numel()
    if out is not None and out.weight is not inp:
        body -= out.weight.numel()
    return 4.0 * width * layers / (2.0 * max(body, 1))


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


class _Layout:
    """Where each node of a pass sits (:meth:`KVTree._layout`): ``batch`` rows of ``width`` new
    positions after ``stored`` (batch, S) columns of stored key/values (node ids, padded with
    node 0, which no real position may see); ``tokens``/``depths`` the (batch, width) inputs and
    position ids (padding: the pad token at depth 0); ``allowed`` the (row, position, column)
    indices a position may attend to: its ancestors' columns, stored or new, and its own (a
    padding position sees itself only)."""

    def __init__(self, tree: KVTree, rows_of: list[int], row: list[int], a: int):
        q = np.asarray(rows_of, dtype=np.int64)
        r = np.asarray(row, dtype=np.int64)
        self.batch = int(r.max()) + 1
        order = np.lexsort((q, r))  # by row, then node id: ancestors before descendants
        counts = np.bincount(r, minlength=self.batch)
        first = np.concatenate([[0], np.cumsum(counts)[:-1]])
        col = np.empty(len(q), dtype=np.int64)
        col[order] = np.arange(len(q)) - first[r[order]]
        self.width = int(counts.max())
        self._sorted = np.sort(q)  # rows_of has no repeats
        at = np.searchsorted(self._sorted, q)
        self._row = np.empty(len(q), dtype=np.int64)
        self._col = np.empty(len(q), dtype=np.int64)
        self._row[at], self._col[at] = r, col
        self.tokens = np.full((self.batch, self.width), tree.lm.pad_id, dtype=np.int64)
        self.depths = np.zeros((self.batch, self.width), dtype=np.int64)
        self.tokens[r, col] = [tree.token[x] for x in rows_of]
        self.depths[r, col] = [tree.depth[x] for x in rows_of]
        flat, owner = tree.ancestors(q)
        frow, fcol = r[owner], col[owner]
        # a node run again has only stored ancestors, itself included
        stored_part = (flat < a) | (q[owner] < a)
        key = frow[stored_part] * len(tree.token) + flat[stored_part]
        uniq, where = np.unique(key, return_inverse=True)
        self.union = len(np.unique(flat[stored_part]))  # stored columns of the pass as one row
        urow = uniq // len(tree.token)
        ucount = np.bincount(urow, minlength=self.batch)
        ufirst = np.concatenate([[0], np.cumsum(ucount)[:-1]])
        upos = np.arange(len(uniq)) - ufirst[urow]
        self.stored = np.zeros((self.batch, int(ucount.max()) if len(uniq) else 0), dtype=np.int64)
        self.stored[urow, upos] = uniq % len(tree.token)
        S = self.stored.shape[1]
        acol = np.empty(len(flat), dtype=np.int64)
        acol[stored_part] = upos[where]
        new_part = ~stored_part
        acol[new_part] = S + self.col_of(flat[new_part])
        pad_r, pad_c = np.nonzero(np.arange(self.width)[None, :] >= counts[:, None])
        self.allowed = (np.concatenate([frow, pad_r]), np.concatenate([fcol, pad_c]),
                        np.concatenate([acol, S + pad_c]))

    def row_of(self, nodes) -> np.ndarray:
        """The row of each of ``nodes`` (nodes of the pass)."""
        return self._row[np.searchsorted(self._sorted, np.asarray(nodes, dtype=np.int64))]

    def col_of(self, nodes) -> np.ndarray:
        """The position of each of ``nodes`` in its row (nodes of the pass)."""
        return self._col[np.searchsorted(self._sorted, np.asarray(nodes, dtype=np.int64))]
