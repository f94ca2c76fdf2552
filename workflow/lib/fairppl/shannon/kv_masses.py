"""The key/value scorer as the word-level bettor (:class:`fairppl.shannon.neural.TokenBettor`)
needs it: :class:`MassKVTree`, a :class:`fairppl.tokenlm.kv_tree.KVTree` that also gives, at the
end of each continuation, the total probability of given token sets (e.g. every token that starts
a new word, and the end token).

:meth:`MassKVTree.logp_next_masses` does so after one prefix; it runs the continuations' last
tokens too (the mass after a token needs that token's output row) and refuses a model without
tree attention. :meth:`MassKVTree.logp_next_masses_many` does so after many prefixes in one call
(every truncation of a Shannon-game unit). Values in **nats**.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from ..tokenlm.interface import Seq
from ..tokenlm.kv_tree import KVTree, MassRequest, tick


class MassKVTree(KVTree):
    """:class:`~fairppl.tokenlm.kv_tree.KVTree` with the token-set masses (module docstring);
    the same arguments."""

    def logp_next_masses(self, prefix: Seq, conts: Sequence[Seq],
                         token_sets: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
        """For one prefix: log P(cont | start + prefix) per continuation (as
        :meth:`~fairppl.tokenlm.kv_tree.KVTree.logp_next_many`), and ``masses[j, s]`` = log of
        the total probability of the token ids ``token_sets[s]`` after start + prefix +
        ``conts[j]`` (an empty continuation: right after the prefix), nats. Every token of every
        continuation is run, its last one included (the mass after it needs its row).

        The store is first cut to the path of the prefix without its last token, which is run
        again, since a stored position keeps no output row: a call costs the prefix positions not
        yet stored (at least one) plus the distinct positions of the continuations' trie."""
        [prefix], [conts], sets = self._masses_request([prefix], [conts], token_sets)
        if prefix:
            self.keep([prefix[:-1]])
        else:
            self.reset()
        return self._masses([prefix], [self.node_of(prefix)], [conts], sets)[0]

    def logp_next_masses_many(self, prefixes: Sequence[Seq], conts_per_prefix: Sequence[
            Sequence[Seq]], token_sets: Sequence[Sequence[int]]
            ) -> list[tuple[np.ndarray, np.ndarray]]:
        """:meth:`logp_next_masses` for several prefixes at once (e.g. every truncation of a
        Shannon-game unit, whose contexts are prefixes of one another): one ``(sums, masses)``
        per prefix, the same values. The store is cut to the prefixes' paths; their positions
        not yet stored are run first (no output rows), then every prefix's last position again
        (its row: the masses after an empty continuation and the continuations' first tokens)
        and all the continuations' tries, in passes of ``pass_tokens`` positions whose rows
        hold one prefix's tries each: a call costs about two passes for the lot where
        :meth:`logp_next_masses` costs one per prefix."""
        import torch

        prefixes, conts_per_prefix, sets = self._masses_request(prefixes, conts_per_prefix,
                                                                token_sets)
        self.keep(prefixes)
        bases = [self.node_of(p) for p in prefixes]
        if len(self.token) > self.n_stored:
            with torch.inference_mode():
                self.run_nodes({}, np.zeros(0))  # the contexts' new positions, stored
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
        targets: dict[tuple[int, int], int] = {}  # (node, target token) -> its value's index
        target_of_token: list[int] = []
        cont_of_token: list[int] = []
        ends: list[int] = []  # the node of each continuation's last token
        for base, conts in zip(bases, conts_per_prefix):
            for c in conts:
                node = base
                for tok in c:
                    target_of_token.append(targets.setdefault((node, tok), len(targets)))
                    cont_of_token.append(len(ends))
                    node = self.child(node, tok)
                ends.append(node)
        index_of_node = {node: i for i, node in enumerate(dict.fromkeys(ends))}
        values = np.zeros(len(targets))
        node_masses = np.zeros((len(index_of_node), len(sets)))
        tick(self.lm, "requests", t0)
        with torch.inference_mode():
            self.run_nodes(targets, values, MassRequest(index_of_node, sets, node_masses))
        sums = np.bincount(np.asarray(cont_of_token, dtype=np.int64),
                           weights=values[np.asarray(target_of_token, dtype=np.int64)],
                           minlength=len(ends))
        masses = node_masses[[index_of_node[n] for n in ends]].reshape(len(ends), len(sets))
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
