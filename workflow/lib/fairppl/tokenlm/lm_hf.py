"""The transformers side of :mod:`.interface`: :class:`HFTokenLM` (a causal LM as a
:class:`~.interface.TreeLM`) and the prefix tree (:class:`_Trie`) its ``share="tree"`` scoring
packs into rows with a tree attention mask. Conventions (start context, end token, nats, work
counters) in :mod:`.interface`'s docstring; :meth:`HFTokenLM.session` gives the incremental
scorer of :mod:`.kv_tree`.
"""

from __future__ import annotations

import copy
import math
from typing import Sequence

import numpy as np

from .interface import Seq
from .prefix_tree import PrefixTree, as_tuple, merge_requests, upcast


class _Trie(PrefixTree):
    """The model inputs of many token sequences as one prefix tree: each distinct input prefix is
    one node (to be run through the model once), each scored ``(node, next token)`` pair one log-
    probability. Node 0 is the start token."""

    def __init__(self, start_id: int):
        super().__init__(start_id)
        self.pairs: dict[tuple[int, int], int] = {}  # (node, target token) -> pair index

    def add(self, full: Sequence[int], first: int) -> list[int]:
        """Add ``full`` (start token first); return the pair indices of the targets
        ``full[first + 1:]``, each predicted from the node of the tokens before it."""
        out, node = [], 0
        for i in range(len(full) - 1):
            if i >= first:
                out.append(self.pairs.setdefault((node, full[i + 1]), len(self.pairs)))
            if i + 1 < len(full) - 1:
                node = self.child(node, full[i + 1])
        return out

    def rows(self, cap: int) -> list[tuple[list[int], list[int]]]:
        """Pack the nodes that predict a pair (and their ancestors) depth-first into rows of at
        most ``cap`` nodes: ``(nodes, owned)`` per row, a row starting with the ancestors of its
        first node again when a subtree did not fit in the previous one; ``owned`` are the nodes
        whose pairs this row computes (each node's in exactly one row)."""
        needed = [False] * len(self.token)
        for node, _ in self.pairs:
            while node >= 0 and not needed[node]:
                needed[node] = True
                node = self.parent[node]
        out, cur, owned, where = [], [], [], {}
        stack = [0] if needed[0] else []
        while stack:
            node = stack.pop()
            if len(cur) >= cap or (node and self.parent[node] not in where):
                if owned:
                    out.append((cur, owned))
                chain, a = [], self.parent[node]
                while a >= 0:
                    chain.append(a)
                    a = self.parent[a]
                cur, owned = chain[::-1], []
                if len(cur) >= cap:
                    raise ValueError(f"a sequence of depth {len(cur) + 1} does not fit in rows "
                                     f"of {cap} positions")
                where = {n: k for k, n in enumerate(cur)}
            where[node] = len(cur)
            cur.append(node)
            owned.append(node)
            stack.extend(c for c in reversed(self.children[node].values()) if needed[c])
        if owned:
            out.append((cur, owned))
        return out


class HFTokenLM:
    """A transformers causal LM as a :class:`~.interface.TreeLM`.

    ``start_token``/``end_token``: vocabulary entries replacing the tokenizer's BOS/EOS (as in
    :func:`fairppl.lm.scoring.score_texts`); ``score_end``: charge the end token in :meth:`logp`
    (``end_id`` is None otherwise). ``batch_size``: rows per forward pass; ``max_batch_tokens``:
    padded positions per forward pass (default 2**28 / vocabulary rows, about 1 GiB of float32
    logits). ``pass_tokens``: new positions per forward pass of the ``"tree"`` path and of a
    :meth:`session` (default 1024, at least 2, at most ``max_batch_tokens``). ``device``: where
    to run (default: where the model is; moved if another is given).

    The model runs in eval mode under ``torch.inference_mode``; log-probabilities are float32
    ``log_softmax`` (as the study's scorer; float64 for a model cast to float64), summed per
    sequence in float64. Rows are right-padded without an attention mask (causal attention: no
    real token sees a pad; see :mod:`fairppl.lm.scoring`). A sequence whose model input is longer
    than the model's positional limit raises ValueError (the marginal works on units that fit in
    one window).

    Work is shared in one of two ways (``share``):

    * ``"tree"`` (default): the inputs of all sequences of a call form a prefix tree; its nodes are
      packed depth-first into rows of at most ``pass_tokens`` positions, each node once, and run
      with a tree attention mask (a node sees its ancestors only; position id = depth), so a
      prefix shared by many sequences or continuations is computed once per call; logits only
      where a scored token is predicted. Falls back to ``"cache"`` for a model whose sliding
      attention window is shorter than the deepest sequence, or that runs flash attention (no
      custom masks).
    * ``"cache"``: :meth:`logp` batches distinct sequences by length; :meth:`logp_next_many` runs
      each distinct prefix once (equal lengths batched, no padding), keeps its key/value cache and
      runs the continuations after it with the cache repeated over their batch.
    """

    def __init__(self, model, tokenizer, *, start_token: str | None = None,
                 end_token: str | None = None, score_end: bool = True, batch_size: int = 64,
                 max_batch_tokens: int | None = None, device=None, share: str = "tree",
                 pass_tokens: int = 1024):
        from ..core.errors import ScoringError
        from ..lm.batches import model_max_length, text_config
        from ..lm.scoring import check_vocab, model_device
        from ..lm.special_tokens import end_token_id, start_token_id

        rows = check_vocab(model, tokenizer)
        if device is not None:
            model.to(device)
        model.eval()
        self.model = model
        self.device = model_device(model)
        self.start_id = start_token_id(tokenizer, start_token)[0]
        self.end_id = end_token_id(tokenizer, end_token) if score_end else None
        if score_end and self.end_id is None:
            raise ScoringError("score_end=True but the tokenizer has no EOS and no end_token was "
                               "given: there is no end token to charge")
        self.vocab_rows = rows
        self.max_length = model_max_length(model)
        self.batch_size = int(batch_size)
        self.max_batch_tokens = int(max_batch_tokens or max(64, (1 << 28) // rows))
        if share not in ("tree", "cache"):
            raise ValueError(f"share={share!r}: expected 'tree' or 'cache'")
        self.share = share
        self.pass_tokens = max(2, min(int(pass_tokens), self.max_batch_tokens))
        config = text_config(model)
        self._window = getattr(config, "sliding_window", None)
        self._flash = "flash" in str(getattr(model.config, "_attn_implementation", ""))
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else (tokenizer.eos_token_id or 0))
        self.calls = 0
        self.positions = 0

    # -- helpers ------------------------------------------------------------------------------

    def check_length(self, n_inputs: int, what: str) -> None:
        """Raise ValueError naming ``what`` when ``n_inputs`` input positions (start token
        included) exceed the model's ``max_length``."""
        if self.max_length is not None and n_inputs > self.max_length:
            raise ValueError(f"{what}: {n_inputs} input positions (start token included) exceed "
                             f"the model's limit of {self.max_length}: score units that fit in "
                             f"one window")

    def _forward(self, input_ids, n_real: int, **kwargs):
        self.calls += 1
        self.positions += n_real
        return self.model(input_ids=input_ids, attention_mask=None, **kwargs)

    def _batches(self, lengths: list[int]) -> list[list[int]]:
        """Indices grouped longest first into batches within batch_size and max_batch_tokens."""
        from ..lm.batches import length_batches  # torch-importing module: only when used

        return length_batches(lengths, self.batch_size, self.max_batch_tokens)

    def _padded(self, rows: list[list[int]]):
        import torch

        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        for k, r in enumerate(rows):
            ids[k, :len(r)] = torch.tensor(r, dtype=torch.long)
        return ids.to(self.device), width

    @staticmethod
    def _check_finite(values: np.ndarray, what) -> None:
        bad = ~np.isfinite(values)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            from ..core.errors import ScoringError
            raise ScoringError(f"{what(k)}: log-probability {values[k]}: the model produced "
                               f"NaN/inf (broken weights or overflow)")

    def _row_logps(self, inputs: list[list[int]], targets: list[list[int]], **kwargs):
        """Sum over each row of log P(target | inputs so far), float64 numpy; rows right-padded
        to one batch. ``kwargs`` go to the model (e.g. a key/value cache)."""
        return self._position_logps(inputs, targets, **kwargs).sum(dim=1).cpu().numpy()

    def _position_logps(self, inputs: list[list[int]], targets: list[list[int]], **kwargs):
        """log P(target | inputs so far) at every position of each row, float64 tensor [rows,
        width] (0 past a row's targets); rows right-padded to one batch."""
        import torch
        import torch.nn.functional as F

        ids, width = self._padded(inputs)
        n_real = sum(len(r) for r in inputs)
        logits = self._forward(ids, n_real, use_cache="past_key_values" in kwargs,
                               **kwargs).logits
        tgt = torch.full((len(inputs), width), -100, dtype=torch.long)
        for k, t in enumerate(targets):
            tgt[k, :len(t)] = torch.tensor(t, dtype=torch.long)
        tgt = tgt.to(self.device)
        nats = F.cross_entropy(upcast(logits.reshape(-1, logits.shape[-1])), tgt.reshape(-1),
                               reduction="none", ignore_index=-100).reshape(len(inputs), width)
        return -nats.double()

    def use_tree(self, depth: int) -> bool:
        """Whether inputs ``depth`` positions deep run with a tree attention mask: ``share`` is
        "tree", the model does not run flash attention and its sliding window (if any) is
        longer than ``depth``."""
        return (self.share == "tree" and not self._flash
                and (not self._window or depth < self._window))

    def _tree_score(self, requests: list[tuple[list[int], int]]) -> np.ndarray:
        """Sum of log P(full[i + 1] | full[:i + 1]) over ``i >= first`` for each ``(full,
        first)`` request, float64, every distinct input prefix run once (see ``share``)."""
        import torch

        trie = _Trie(self.start_id)
        req_pairs = [trie.add(full, first) for full, first in requests]
        values = torch.zeros(len(trie.pairs), dtype=torch.float64)
        by_node: dict[int, list[tuple[int, int]]] = {}
        for (node, tok), k in trie.pairs.items():
            by_node.setdefault(node, []).append((tok, k))
        dtype = next(self.model.parameters()).dtype
        # a row holds at least one whole input (rows may then exceed pass_tokens)
        cap = max(self.pass_tokens, max(len(full) for full, _ in requests))
        for nodes, owned in trie.rows(cap):
            n = len(nodes)
            pos = {node: k for k, node in enumerate(nodes)}
            allowed = np.zeros((n, n), dtype=bool)
            for k, node in enumerate(nodes):
                if k:
                    allowed[k] = allowed[pos[trie.parent[node]]]
                allowed[k, k] = True
            mask = torch.full((n, n), torch.finfo(dtype).min, dtype=dtype)
            mask[torch.from_numpy(allowed)] = 0.0
            keep, rows, toks, ks = [], [], [], []
            for node in owned:
                if node in by_node:
                    for tok, k in by_node[node]:
                        rows.append(len(keep))
                        toks.append(tok)
                        ks.append(k)
                    keep.append(pos[node])
            dev = self.device
            self.calls += 1
            self.positions += n
            logits = self.model(
                input_ids=torch.tensor([[trie.token[x] for x in nodes]], device=dev),
                position_ids=torch.tensor([[trie.depth[x] for x in nodes]], device=dev),
                attention_mask=mask[None, None].to(dev), use_cache=False,
                logits_to_keep=torch.tensor(keep, device=dev)).logits[0]
            lp = torch.log_softmax(upcast(logits), dim=-1)[torch.tensor(rows, device=dev),
                                                            torch.tensor(toks, device=dev)]
            values[torch.tensor(ks)] = lp.double().cpu()
        values = values.numpy()
        return np.array([math.fsum(values[k] for k in ks) for ks in req_pairs])

    def session(self, pass_tokens: int | None = None):
        """An incremental scorer over this LM that keeps the key/values of the prefixes it has
        run (:class:`.kv_tree.KVTree`, ``pass_tokens`` new positions per forward pass; default
        the LM's ``pass_tokens``), for estimators that extend their prefixes step by step."""
        from .kv_tree import KVTree

        return KVTree(self, pass_tokens)

    def clear_cache(self) -> None:
        """Nothing to forget: every call runs its own inputs (a session keeps its own store)."""

    # -- TokenLM ------------------------------------------------------------------------------

    def logp(self, seqs: Sequence[Seq]) -> np.ndarray:
        """log P(seq [+ end] | start) per sequence, nats (see the class docstring)."""
        import torch

        keys = [as_tuple(s, f"sequence {i}") for i, s in enumerate(seqs)]
        distinct = list(dict.fromkeys(keys))
        fulls = []
        for i, s in enumerate(distinct):
            full = [self.start_id, *s] + ([self.end_id] if self.end_id is not None else [])
            self.check_length(len(full) - 1, f"sequence {keys.index(s)} ({len(s)} tokens)")
            fulls.append(full)
        values = np.zeros(len(distinct))
        todo = [i for i, f in enumerate(fulls) if len(f) > 1]
        with torch.inference_mode():
            if todo and self.use_tree(max(len(fulls[i]) for i in todo)):
                values[todo] = self._tree_score([(fulls[i], 0) for i in todo])
                todo = []
            for batch in self._batches([len(fulls[i]) - 1 for i in todo]):
                idx = [todo[b] for b in batch]
                values[idx] = self._row_logps([fulls[i][:-1] for i in idx],
                                              [fulls[i][1:] for i in idx])
        self._check_finite(values, lambda k: f"sequence {keys.index(distinct[k])}")
        where = {s: i for i, s in enumerate(distinct)}
        return np.array([values[where[s]] for s in keys], dtype=np.float64)

    def token_logps(self, seqs: Sequence[Seq]) -> list[np.ndarray]:
        """log P(token | start + earlier tokens) of every token of each sequence, then of the end
        token when it is scored: one float64 array of ``len(seq) [+ 1]`` values per sequence,
        nats (their sum is :meth:`logp`'s value); batched longest first, no prefix sharing."""
        import torch

        end = [] if self.end_id is None else [self.end_id]
        fulls = []
        for i, s in enumerate(seqs):
            full = [self.start_id, *as_tuple(s, f"sequence {i}"), *end]
            self.check_length(len(full) - 1, f"sequence {i} ({len(full) - 1 - len(end)} tokens)")
            fulls.append(full)
        out: list[np.ndarray] = [np.zeros(0)] * len(fulls)
        todo = [i for i, f in enumerate(fulls) if len(f) > 1]  # else nothing to score
        with torch.inference_mode():
            for batch in self._batches([len(fulls[i]) - 1 for i in todo]):
                idx = [todo[b] for b in batch]
                rows = self._position_logps([fulls[i][:-1] for i in idx],
                                            [fulls[i][1:] for i in idx]).cpu().numpy()
                for k, i in enumerate(idx):
                    out[i] = rows[k, :len(fulls[i]) - 1]
                    self._check_finite(out[i], lambda j, i=i: f"sequence {i}, token {j}")
        return out

    def logp_next(self, prefix: Seq, conts: Sequence[Seq]) -> np.ndarray:
        """log P(cont | start + prefix) per continuation, nats, no end token."""
        return self.logp_next_many([prefix], [conts])[0]

    def logp_next_many(self, prefixes: Sequence[Seq],
                       conts_per_prefix: Sequence[Sequence[Seq]]) -> list[np.ndarray]:
        """:meth:`logp_next` for each ``(prefix, conts)`` pair; one array per prefix."""
        import torch

        wanted, keys = merge_requests(prefixes, conts_per_prefix)
        for p, conts in wanted.items():
            longest = max((len(c) for c in conts), default=1)
            self.check_length(len(p) + max(longest, 1), f"prefix of {len(p)} tokens")
        result: dict[tuple, float] = {}
        depth = max((len(p) + len(c) for p, cs in wanted.items() for c in cs), default=0)
        if depth and self.use_tree(depth + 1):
            todo = [(p, c) for p, cs in wanted.items() for c in cs]
            with torch.inference_mode():
                values = self._tree_score([([self.start_id, *p, *c], len(p)) for p, c in todo])
            result = dict(zip(todo, values.tolist()))
            wanted = {}
        by_length: dict[int, list[tuple]] = {}
        for p, conts in wanted.items():
            for c in conts:
                if not c:
                    result[(p, c)] = 0.0
            if any(conts):
                by_length.setdefault(len(p), []).append(p)
        with torch.inference_mode():
            for length in sorted(by_length):
                group = by_length[length]
                for lo in range(0, len(group), self.batch_size):
                    self._prefix_batch(group[lo:lo + self.batch_size], wanted, result)
        values = np.array(list(result.values()))
        self._check_finite(values, lambda k: f"continuation {list(result)[k][1]!r} after "
                                             f"prefix {list(result)[k][0][:20]!r}")
        return [np.array([result[key] for key in row], dtype=np.float64) for row in keys]

    def _prefix_batch(self, group: list[tuple], wanted: dict, result: dict) -> None:
        """Run the equal-length prefixes of ``group`` once, then their continuations."""
        import torch

        ids = torch.tensor([[self.start_id, *p] for p in group], dtype=torch.long,
                           device=self.device)
        out = self._forward(ids, ids.numel(), use_cache=True, logits_to_keep=1)
        first = torch.log_softmax(upcast(out.logits[:, -1, :]), dim=-1)
        cache = out.past_key_values
        pairs = []  # (row of the prefix in the batch, prefix, cont) for conts of >= 2 tokens
        for row, p in enumerate(group):
            conts = [c for c in wanted[p] if c]
            heads = torch.tensor([c[0] for c in conts], dtype=torch.long, device=self.device)
            lp = first[row, heads].double().cpu().numpy()
            for c, v in zip(conts, lp):
                result[(p, c)] = float(v)
                if len(c) > 1:
                    pairs.append((row, p, c))
        if not pairs:
            return
        for batch in self._batches([len(c) - 1 for _, _, c in pairs]):
            chosen = [pairs[b] for b in batch]
            rows_cache = copy.deepcopy(cache)
            rows_cache.batch_select_indices(
                torch.tensor([r for r, _, _ in chosen], dtype=torch.long, device=self.device))
            rest = self._row_logps([list(c[:-1]) for _, _, c in chosen],
                                   [list(c[1:]) for _, _, c in chosen],
                                   past_key_values=rows_cache)
            for (_, p, c), v in zip(chosen, rest):
                result[(p, c)] += float(v)
