"""How one forward pass of :class:`~.kv_tree.KVTree` is laid out: which row of the batch each
node of the pass sits in (:func:`lay_out`), and, per row, its input tokens, position ids, the
stored key/values it carries and the attention mask (:class:`PassLayout`).

The nodes of a pass are the new nodes ``first_new..end_new-1`` (node ids grow with the tree, so
a parent comes before its children), then stored nodes run again for their output rows. A
*subtree* is a new node whose parent is stored, with its new descendants; a stored node run
again is a group of its own. Groups fill rows in order, each row up to ``row_nodes`` positions
or the largest group, whichever is larger; rows are padded to the widest. A row carries only
the stored key/values its own nodes descend from, so a position attends over its row's
columns, not over every position of the pass.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

#: New positions per row of a forward pass, about (:func:`lay_out`): rows are the batch
#: dimension of a pass, each with only the stored key/values its own nodes need.
ROW_NODES = 256
#: How a pass is laid out: ``"rows"`` (:func:`lay_out`), ``"one"`` (every position of the pass
#: in one row: no padding, attention over the whole pass) or ``"auto"``: per pass the one that
#: costs fewer FLOPs by the model's own sizes (:func:`attention_weight`); rows win when a pass
#: carries many units' positions (a GPU's thousands), one row on a CPU's hundreds.
LAYOUT = "auto"
LAYOUTS = ("auto", "rows", "one")


def lay_out(tree, pass_nodes: list[int], first_new: int, row_nodes: int, layout: str,
            weight: Callable[[], float]) -> "PassLayout":
    """The :class:`PassLayout` of a pass that runs ``pass_nodes`` (the new nodes
    ``first_new..``, then stored nodes run again) over ``tree`` (a :class:`~.kv_tree.KVTree`):
    groups in rows (module docstring), or, with ``layout`` "one", every node in one row. With
    "auto" the pass is one row when that costs fewer FLOPs: a position through the weights
    counts 1, a (query, key) pair of attention ``weight()`` (:func:`attention_weight`), padding
    included (rows) or the whole pass's keys (one row)."""
    if layout == "one":
        return PassLayout(tree, pass_nodes, [0] * len(pass_nodes), first_new)
    group_of, group_sizes = _groups(tree.parent, pass_nodes, first_new)
    row_of_group = _fill_rows(group_sizes, row_nodes)
    rows = PassLayout(tree, pass_nodes, [row_of_group[group_of[q]] for q in pass_nodes],
                      first_new)
    if layout == "rows" or rows.batch == 1:
        return rows
    rho, n = weight(), len(pass_nodes)
    rows_cost = rows.batch * rows.width * (1 + rho * (rows.stored.shape[1] + rows.width))
    one_cost = n * (1 + rho * (rows.union + n))
    return rows if rows_cost < one_cost else PassLayout(tree, pass_nodes, [0] * n, first_new)


def _groups(parent: list[int], pass_nodes: list[int], first_new: int
            ) -> tuple[dict[int, int], dict[int, int]]:
    """Each node's group (named by its first node: the subtree's root, or the stored node run
    again itself) and each group's size, groups in the order of their first node."""
    group_of: dict[int, int] = {}
    group_sizes: dict[int, int] = {}
    for q in pass_nodes:
        root = q if q < first_new or parent[q] < first_new else group_of[parent[q]]
        group_of[q] = root
        group_sizes[root] = group_sizes.get(root, 0) + 1
    return group_of, group_sizes


def _fill_rows(group_sizes: dict[int, int], row_nodes: int) -> dict[int, int]:
    """The row of each group: groups in order, a new row when the next would pass the width
    (``row_nodes``, or the largest group: rows are padded to the widest anyway)."""
    width = max(row_nodes, max(group_sizes.values()))
    row_of_group: dict[int, int] = {}
    row, used = 0, 0
    for root, size in group_sizes.items():
        if used and used + size > width:
            row, used = row + 1, 0
        row_of_group[root] = row
        used += size
    return row_of_group


class PassLayout:
    """Where each node of a pass sits: ``batch`` rows of ``width`` new positions after
    ``stored`` (batch, S): per row the node ids of the stored key/values it carries, padded at
    the end with node 0's. ``tokens``/``depths``: the (batch, width) input ids and position ids
    (padding: the pad token at depth 0). ``allowed``: the (row, position, column) indices a
    position may attend to, columns counted over stored then new: its ancestors' columns,
    stored or new, itself included, and nothing else. Node 0 (the start token) is an ancestor
    of every node, so its own column is seen; the padding copies of it and the padding
    positions are seen by no real position (a padding position sees itself only).
    ``union``: the distinct stored columns of the pass, as one row would carry them."""

    def __init__(self, tree, pass_nodes: list[int], row: list[int], first_new: int):
        nodes = np.asarray(pass_nodes, dtype=np.int64)
        row_of = np.asarray(row, dtype=np.int64)
        self.batch = int(row_of.max()) + 1
        col_of, per_row = _positions_in_rows(nodes, row_of, self.batch)
        self.width = int(per_row.max())
        self._sorted = np.sort(nodes)  # pass_nodes has no repeats
        at = np.searchsorted(self._sorted, nodes)
        self._row = np.empty(len(nodes), dtype=np.int64)
        self._col = np.empty(len(nodes), dtype=np.int64)
        self._row[at], self._col[at] = row_of, col_of
        self.tokens = np.full((self.batch, self.width), tree.lm.pad_id, dtype=np.int64)
        self.depths = np.zeros((self.batch, self.width), dtype=np.int64)
        self.tokens[row_of, col_of] = [tree.token[x] for x in pass_nodes]
        self.depths[row_of, col_of] = [tree.depth[x] for x in pass_nodes]
        # every (node, ancestor) pair: the ancestor's key/values are stored, or are new in
        # this pass; a node run again has only stored ancestors, itself included
        ancestor, owner = tree.ancestors(nodes)
        pair_row, pair_pos = row_of[owner], col_of[owner]
        from_store = (ancestor < first_new) | (nodes[owner] < first_new)
        self.stored, self.union, stored_col = _stored_columns(
            ancestor[from_store], pair_row[from_store], self.batch, len(tree.token))
        n_stored = self.stored.shape[1]
        key_col = np.empty(len(ancestor), dtype=np.int64)
        key_col[from_store] = stored_col
        key_col[~from_store] = n_stored + self.col_of(ancestor[~from_store])
        pad_row, pad_pos = np.nonzero(np.arange(self.width)[None, :] >= per_row[:, None])
        self.allowed = (np.concatenate([pair_row, pad_row]), np.concatenate([pair_pos, pad_pos]),
                        np.concatenate([key_col, n_stored + pad_pos]))

    def row_of(self, nodes) -> np.ndarray:
        """The row of each of ``nodes`` (nodes of the pass)."""
        return self._row[np.searchsorted(self._sorted, np.asarray(nodes, dtype=np.int64))]

    def col_of(self, nodes) -> np.ndarray:
        """The position of each of ``nodes`` in its row (nodes of the pass)."""
        return self._col[np.searchsorted(self._sorted, np.asarray(nodes, dtype=np.int64))]


def _positions_in_rows(nodes: np.ndarray, row_of: np.ndarray, batch: int
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Each node's position in its row (by node id within the row: ancestors before
    descendants) and the nodes per row."""
    order = np.lexsort((nodes, row_of))
    per_row = np.bincount(row_of, minlength=batch)
    row_start = np.concatenate([[0], np.cumsum(per_row)[:-1]])
    col_of = np.empty(len(nodes), dtype=np.int64)
    col_of[order] = np.arange(len(nodes)) - row_start[row_of[order]]
    return col_of, per_row


def _stored_columns(ancestor: np.ndarray, pair_row: np.ndarray, batch: int, n_nodes: int
                    ) -> tuple[np.ndarray, int, np.ndarray]:
    """The stored key/values each row carries, from the (stored ancestor, row) pairs: the
    (batch, S) node ids (each row's distinct ancestors by node id, padded with node 0), the
    distinct stored nodes over all rows, and each pair's column."""
    key = pair_row * n_nodes + ancestor
    distinct, pair_index = np.unique(key, return_inverse=True)
    union = len(np.unique(ancestor))
    distinct_row = distinct // n_nodes
    per_row = np.bincount(distinct_row, minlength=batch)
    row_start = np.concatenate([[0], np.cumsum(per_row)[:-1]])
    column = np.arange(len(distinct)) - row_start[distinct_row]
    stored = np.zeros((batch, int(per_row.max()) if len(distinct) else 0), dtype=np.int64)
    stored[distinct_row, column] = distinct % n_nodes
    return stored, union, column[pair_index]


def attention_weight(model) -> float:
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
