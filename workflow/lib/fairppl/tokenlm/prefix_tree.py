"""What the LM scorers share: distinct token prefixes as a tree (:class:`PrefixTree`), token
sequences checked into tuples (:func:`as_tuple`), many (prefix, continuation) requests merged into
distinct ones (:func:`merge_requests`), and the float type of log-probabilities (:func:`upcast`).
Used by :mod:`.lm_kenlm` (KenLM), :mod:`.lm_hf` (transformers) and :mod:`.kv_tree` (the
incremental key/value scorer). Their imports run one way: :mod:`.lm_kenlm` and :mod:`.kv_tree`
import no other scorer, and :mod:`.lm_hf` imports :class:`~.kv_tree.KVTree` inside
``HFTokenLM.session`` only, so no two of them import each other.
"""

from __future__ import annotations


def as_tuple(seq, what: str) -> tuple[int, ...]:
    """``seq`` as a tuple of ints; TypeError naming ``what`` for a string or bytes."""
    if isinstance(seq, (str, bytes)):
        raise TypeError(f"{what}: expected a sequence of token ids, got {type(seq).__name__}")
    return tuple(int(t) for t in seq)


def merge_requests(prefixes, conts_per_prefix) -> tuple[dict, list[list[tuple]]]:
    """Distinct (prefix -> set of distinct conts) and each request's keys, in order."""
    if len(prefixes) != len(conts_per_prefix):
        raise ValueError(f"{len(prefixes)} prefixes but {len(conts_per_prefix)} lists of "
                         f"continuations: expected one list per prefix")
    wanted: dict[tuple[int, ...], dict[tuple[int, ...], None]] = {}
    keys = []
    for i, (prefix, conts) in enumerate(zip(prefixes, conts_per_prefix)):
        p = as_tuple(prefix, f"prefix {i}")
        row = []
        bucket = wanted.setdefault(p, {})
        for j, cont in enumerate(conts):
            c = as_tuple(cont, f"continuation {j} of prefix {i}")
            bucket[c] = None
            row.append((p, c))
        keys.append(row)
    return wanted, keys


def upcast(logits):
    """``logits`` as float32 for a half-precision or float32 model, kept float64 for a float64
    one (so a float64 model's log-probabilities are float64 throughout)."""
    import torch

    return logits if logits.dtype == torch.float64 else logits.float()


class PrefixTree:
    """Distinct token prefixes as a tree, each run through an LM once: node 0 is the start
    token; every node has its ``token``, ``parent``, ``depth`` and ``children`` (token -> node).
    :meth:`_added` is the hook of subclasses that keep more per node."""

    def __init__(self, start_id: int):
        self.token = [start_id]
        self.parent = [-1]
        self.depth = [0]
        self.children: list[dict[int, int]] = [{}]

    def child(self, node: int, tok: int) -> int:
        """The node of ``node``'s prefix followed by ``tok``, added when new."""
        nxt = self.children[node].get(tok)
        if nxt is None:
            nxt = len(self.token)
            self.children[node][tok] = nxt
            self.token.append(tok)
            self.parent.append(node)
            self.depth.append(self.depth[node] + 1)
            self.children.append({})
            self._added(nxt)
        return nxt

    def _added(self, node: int) -> None:
        """Called once per new node."""
