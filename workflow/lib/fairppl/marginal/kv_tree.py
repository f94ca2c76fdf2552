"""Incremental scoring of continuations after a growing set of prefixes, for an estimator that
extends its prefixes step by step (the LM-guided proposal, :mod:`.lm_guided`).

:class:`KVTree` keeps every token position it has run through a transformers causal LM as a node
of one prefix tree (node 0: the start token; a node's key/value vectors, one per layer, stay in a
store). A call of :meth:`KVTree.logp_next_many` adds the nodes its requests need and lacks (the
prefixes' own last tokens and the inner nodes of the continuations' trie; a continuation's last
token is predicted, never run) and runs them in forward passes of at most ``chunk`` positions:
each new position attends to the stored nodes and new nodes that are its ancestors (a tree
attention mask, position id = depth), so a position is computed once however many prefixes and
continuations share it, and a prefix is never run again. :meth:`KVTree.keep` then drops every
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
runs the continuations' last tokens too, and refuses a model without tree attention.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .prefix_tree import PrefixTree, Seq, _merge_requests, _upcast


class KVTree(PrefixTree):
    """The incremental scorer of an :class:`~fairppl.marginal.lm_hf.HFTokenLM` (module
    docstring). ``chunk``: new positions per forward pass (default: the LM's ``tree_nodes``)."""

    def __init__(self, lm, chunk: int | None = None):
        self.lm = lm
        self.chunk = max(1, int(chunk or lm.tree_nodes))
        self._reset()

    def _reset(self) -> None:
        PrefixTree.__init__(self, self.lm.start_id)
        self.anc: list[np.ndarray] = [np.zeros(1, dtype=np.int64)]  # ancestors, self last
        self.n_done = 0  # nodes 0..n_done-1 have their key/values in the store
        self.kv: list[tuple] | None = None  # per layer (keys, values), (1, heads, capacity, dim)

    def __len__(self) -> int:
        return self.n_done

    def _added(self, node: int) -> None:
        self.anc.append(np.append(self.anc[self.parent[node]], node))

    def _find(self, seq: tuple[int, ...]) -> int:
        """The deepest existing node on the path of ``seq`` (0: the start token)."""
        node = 0
        for tok in seq:
            nxt = self.children[node].get(tok)
            if nxt is None:
                break
            node = nxt
        return node

    # -- scoring ------------------------------------------------------------------------------

    def logp_next_many(self, prefixes: Sequence[Seq],
                       conts_per_prefix: Sequence[Sequence[Seq]]) -> list[np.ndarray]:
        """log P(cont | start + prefix) per continuation of each prefix, nats, no end token (as
        :meth:`HFTokenLM.logp_next_many`); the positions run stay in the store."""
        import torch

        lm = self.lm
        wanted, keys = _merge_requests(prefixes, conts_per_prefix)
        depth = 0
        for p, conts in wanted.items():
            longest = max((len(c) for c in conts), default=1)
            lm._check_length(len(p) + max(longest, 1), f"prefix of {len(p)} tokens")
            depth = max(depth, len(p) + longest)
        if not lm._use_tree(depth + 1):
            return lm.logp_next_many(prefixes, conts_per_prefix)
        pairs: dict[tuple[int, int], int] = {}  # (node, target token) -> index
        flat: list[int] = []  # pair indices of every (prefix, cont), in order
        owner: list[int] = []  # which (prefix, cont) each entry of flat belongs to
        order: list[tuple] = []
        for p, conts in wanted.items():
            base = 0
            for tok in p:
                base = self.child(base, tok)
            for c in conts:
                node, r = base, len(order)
                order.append((p, c))
                for i, tok in enumerate(c):
                    flat.append(pairs.setdefault((node, tok), len(pairs)))
                    owner.append(r)
                    if i + 1 < len(c):
                        node = self.child(node, tok)
        values = np.zeros(len(pairs))
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
        where = {key: r for r, key in enumerate(order)}
        return [np.array([sums[where[key]] for key in row], dtype=np.float64) for row in keys]

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
        import torch

        lm = self.lm
        prefix = tuple(int(t) for t in prefix)
        conts = [tuple(int(t) for t in c) for c in conts]
        longest = max((len(c) for c in conts), default=0)
        lm._check_length(len(prefix) + longest + 1, f"prefix of {len(prefix)} tokens")
        if not lm._use_tree(len(prefix) + longest + 1):
            raise ValueError("logp_next_masses needs tree attention: this model runs flash "
                             "attention or a sliding window shorter than the depth")
        sets = [np.unique(np.asarray(list(s), dtype=np.int64)) for s in token_sets]
        if not sets or any(len(s) == 0 for s in sets):
            raise ValueError("expected at least one non-empty token set")
        if any(s.min() < 0 or s.max() >= lm.vocab_rows for s in sets):
            raise ValueError(f"token sets must hold ids below the model's {lm.vocab_rows} rows")
        if prefix:
            self.keep([prefix[:-1]])
        else:
            self._reset()
        base = 0
        for tok in prefix:
            base = self.child(base, tok)
        pairs: dict[tuple[int, int], int] = {}
        flat: list[int] = []
        owner: list[int] = []
        ends: list[int] = []
        for r, c in enumerate(conts):
            node = base
            for tok in c:
                flat.append(pairs.setdefault((node, tok), len(pairs)))
                owner.append(r)
                node = self.child(node, tok)
            ends.append(node)
        mass_nodes = {node: i for i, node in enumerate(dict.fromkeys(ends))}
        values = np.zeros(len(pairs))
        node_masses = np.zeros((len(mass_nodes), len(sets)))
        with torch.inference_mode():
            self._run(pairs, values, (mass_nodes, sets, node_masses))
        sums = np.bincount(np.asarray(owner, dtype=np.int64),
                           weights=values[np.asarray(flat, dtype=np.int64)], minlength=len(conts))
        masses = node_masses[[mass_nodes[n] for n in ends]].reshape(len(conts), len(sets))
        bad = ~(np.isfinite(sums) & np.isfinite(masses).all(axis=1))
        if bad.any():
            from ..core.errors import ScoringError
            j = int(np.flatnonzero(bad)[0])
            raise ScoringError(f"continuation {conts[j]!r} after prefix {prefix[:20]!r}: a "
                               f"log-probability is NaN/inf: the model produced NaN/inf")
        return sums, masses

    def _run(self, pairs: dict[tuple[int, int], int], values: np.ndarray,
             masses: tuple | None = None) -> None:
        """Run the nodes not yet stored, ``chunk`` at a time, and fill ``values[k]`` with the
        log-probability of each pair's target token after its node; with ``masses =
        (rows_of_node, token_sets, out)``, also ``out[rows_of_node[node], s]`` = log of the
        total probability of ``token_sets[s]`` after each listed node (which must be new).

        A pair whose node is already stored (a prefix that another request ran as an inner
        position, e.g. units sharing a session, :mod:`.batch`) has no output row left: its node
        is run again as an extra row of the first pass, seeing its stored ancestors and its own
        stored key/values (the same vectors it would compute), its new key/values discarded. A
        single estimator never asks after a stored node, so its passes are unchanged."""
        import torch

        lm, dev = self.lm, self.lm.device
        by_node: dict[int, list[tuple[int, int]]] = {}
        for (node, tok), k in pairs.items():
            by_node.setdefault(node, []).append((tok, k))
        mass_rows, mass_sets, mass_out = masses if masses is not None else ({}, [], None)
        if any(node < self.n_done for node in mass_rows):
            raise ValueError("a mass is asked after a stored position: its row is gone")
        set_index = [torch.from_numpy(s).to(dev) for s in mass_sets]
        dtype = next(lm.model.parameters()).dtype
        total = len(self.token)
        again = sorted(node for node in by_node if node < self.n_done)
        starts = list(range(self.n_done, total, self.chunk)) or ([self.n_done] if again else [])
        for a in starts:
            b = min(total, a + self.chunk)
            rows_of = list(range(a, b)) + again  # new nodes, then stored ones run again
            anc = [self.anc[q] for q in rows_of]
            lens = np.array([len(x) for x in anc])
            flat = np.concatenate(anc)
            stored = np.unique(flat[flat < a])
            col = np.full(b, -1, dtype=np.int64)
            col[stored] = np.arange(len(stored))
            col[a:b] = len(stored) + np.arange(b - a)
            n_rows = len(rows_of)
            # the mask is built where the model runs: only its (row, column) indices travel
            # (a pass of 16,384 new positions after as many stored ones is a 1 GiB float32 mask)
            allowed = torch.zeros((n_rows, len(stored) + n_rows), dtype=torch.bool, device=dev)
            allowed[torch.from_numpy(np.repeat(np.arange(n_rows), lens)).to(dev),
                    torch.from_numpy(col[flat]).to(dev)] = True
            mask = torch.zeros(allowed.shape, dtype=dtype, device=dev)
            mask.masked_fill_(~allowed, torch.finfo(dtype).min)
            keep, rows, toks, ks = [], [], [], []
            mrows, mks = [], []
            for r, q in enumerate(rows_of):
                for tok, k in by_node.get(q, ()):
                    rows.append(len(keep))
                    toks.append(tok)
                    ks.append(k)
                if q in mass_rows:
                    mrows.append(len(keep))
                    mks.append(mass_rows[q])
                if q in by_node or q in mass_rows:
                    keep.append(r)
            again = []  # run again in the first pass only
            from transformers import DynamicCache

            sel = torch.from_numpy(stored).to(dev)
            cache = DynamicCache(ddp_cache_data=[(k.index_select(2, sel), v.index_select(2, sel))
                                                for k, v in self.kv]
                                 ) if self.kv is not None else DynamicCache()
            lm.calls += 1
            lm.positions += n_rows
            out = lm.model(input_ids=torch.tensor([[self.token[q] for q in rows_of]], device=dev),
                           position_ids=torch.tensor([[self.depth[q] for q in rows_of]],
                                                     device=dev),
                           attention_mask=mask[None, None], past_key_values=cache,
                           use_cache=True, logits_to_keep=torch.tensor(keep, dtype=torch.long, device=dev))
            end = len(stored) + b - a
            self._store(a, b, [(layer.keys[:, :, len(stored):end],
                                layer.values[:, :, len(stored):end])
                               for layer in out.past_key_values.layers])
            if rows:
                lp = torch.log_softmax(_upcast(out.logits[0]), dim=-1)[
                    torch.tensor(rows, device=dev), torch.tensor(toks, device=dev)]
                values[np.asarray(ks)] = lp.double().cpu().numpy()
            if mrows:
                logits = _upcast(out.logits[0][torch.tensor(mrows, device=dev)])
                norm = torch.logsumexp(logits, dim=-1)
                for s, idx in enumerate(set_index):
                    part = torch.logsumexp(logits.index_select(1, idx), dim=-1) - norm
                    mass_out[np.asarray(mks), s] = part.double().cpu().numpy()

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
        import torch

        paths = [self.anc[self._find(tuple(int(t) for t in p))] for p in prefixes]
        kept = np.unique(np.concatenate(paths)) if paths else np.zeros(0, dtype=np.int64)
        kept = kept[kept < self.n_done]
        if len(kept) == 0:
            self._reset()
            return
        new_id = np.full(len(self.token), -1, dtype=np.int64)
        new_id[kept] = np.arange(len(kept))
        self.token = [self.token[i] for i in kept]
        self.depth = [self.depth[i] for i in kept]
        self.parent = [int(new_id[self.parent[i]]) if i else -1 for i in kept]
        self.anc = [new_id[self.anc[i]] for i in kept]
        self.children = [{} for _ in kept]
        for i in range(1, len(kept)):
            self.children[self.parent[i]][self.token[i]] = i
        idx = torch.from_numpy(kept).to(self.kv[0][0].device)
        self.kv = [(k.index_select(2, idx), v.index_select(2, idx)) for k, v in self.kv]
        self.n_done = len(kept)
