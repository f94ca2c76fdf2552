"""The key/value store of :class:`~.kv_tree.KVTree`: the key and value vectors of every node the
scorer has run, per layer, node ``i`` at index ``i`` (:class:`KVStore`).

Which transformers internals this relies on (the pin: ``transformers==5.23.0`` in
``pyproject.toml`` and ``envs/marginal.yaml``, ``envs/shannon.yaml``; the scorer's equality tests
against plain forwards guard a new version):

* ``DynamicCache(ddp_cache_data=[(keys, values), ...])`` builds a cache from one
  ``(batch, heads, positions, head_dim)`` pair per layer (:meth:`KVStore.cache_for`);
* the cache a forward pass returns (``past_key_values``) lists its layers as ``.layers``, each
  with ``.keys`` and ``.values`` of that shape, the pass's new positions after the stored ones
  (:func:`new_vectors`);
* the decoder (``model.base_model``) takes that cache with ``position_ids`` and a 4-D float
  ``attention_mask`` of shape (batch, 1, new positions, stored + new positions) added to the
  attention scores as given (0: seen, the dtype's minimum: hidden), as the eager and sdpa
  attention do (flash attention takes no such mask: :meth:`~.lm_hf.HFTokenLM.use_tree`).
"""

from __future__ import annotations

import numpy as np


class KVStore:
    """Per layer ``(keys, values)``, each (1, heads, capacity, head_dim), of the nodes
    ``0..size-1`` (``layers`` None until the first write); the capacity doubles as needed."""

    def __init__(self):
        self.layers: list[tuple] | None = None
        self.size = 0

    def write(self, first: int, end: int, new: list[tuple]) -> None:
        """Store ``new`` (per layer ``(keys, values)``, (1, heads, end - first, head_dim)) as
        the key/values of nodes ``first..end-1``; ``size`` becomes ``end``."""
        import torch

        if self.layers is None:
            self.layers = [(k.new_empty(k.shape[:2] + (max(end, 64),) + k.shape[3:]),
                            v.new_empty(v.shape[:2] + (max(end, 64),) + v.shape[3:]))
                           for k, v in new]
        capacity = self.layers[0][0].shape[2]
        if end > capacity:
            grow = max(end, 2 * capacity) - capacity
            self.layers = [(torch.cat([k, k.new_empty(k.shape[:2] + (grow,) + k.shape[3:])], 2),
                            torch.cat([v, v.new_empty(v.shape[:2] + (grow,) + v.shape[3:])], 2))
                           for k, v in self.layers]
        for (k, v), (new_k, new_v) in zip(self.layers, new):
            k[:, :, first:end] = new_k
            v[:, :, first:end] = new_v
        self.size = end

    def keep_only(self, kept: np.ndarray) -> None:
        """Keep the nodes ``kept`` (sorted stored node ids), renumbered ``0..len(kept)-1``."""
        import torch

        index = torch.from_numpy(kept).to(self.layers[0][0].device)
        self.layers = [(k.index_select(2, index), v.index_select(2, index))
                       for k, v in self.layers]
        self.size = len(kept)

    def cache_for(self, stored: np.ndarray, device):
        """A ``DynamicCache`` whose row ``r`` holds the key/values of the nodes ``stored[r]``
        ((rows, columns) node ids), in that order: the past of a pass laid out in rows (an
        empty cache when there are no columns)."""
        import torch
        from transformers import DynamicCache

        if not stored.shape[1]:
            return DynamicCache()
        flat = torch.from_numpy(stored.reshape(-1)).to(device)
        shape = stored.shape
        return DynamicCache(ddp_cache_data=[
            tuple(x[0].index_select(1, flat).unflatten(1, shape).transpose(0, 1) for x in layer)
            for layer in self.layers])


def new_vectors(cache, rows, cols) -> list[tuple]:
    """The key/values a pass computed for some of its positions, read from the cache it returned
    (``rows``, ``cols``: index tensors of the positions, columns counted after the stored ones),
    per layer as ``(keys, values)`` of shape (1, heads, positions, head_dim), for
    :meth:`KVStore.write`."""
    return [(layer.keys[rows, :, cols].transpose(0, 1)[None],
             layer.values[rows, :, cols].transpose(0, 1)[None]) for layer in cache.layers]
