"""A KenLM n-gram over a tokenizer's pieces (the study's subword n-gram) as a
:class:`~.interface.TokenLM` (conventions in :mod:`.interface`): every prefix's state cached, so
a prefix shared by many sequences is scored once; no incremental session, no torch device.
"""

from __future__ import annotations

import math
import os
from typing import Sequence

import numpy as np

from .interface import Seq
from .prefix_tree import as_tuple, merge_requests


class KenLMTokenLM:
    """A KenLM n-gram over a tokenizer's pieces (the study's subword n-gram) as a
    :class:`~.interface.TokenLM`.

    ``model``: a path (ARPA or binary) or a loaded ``kenlm.Model``; ``id_to_word``: the KenLM word
    of each token id (a SentencePiece piece), None for ids that can never be scored (control
    tokens). ``start``: begin-of-unit context ``<s>`` (else no context); ``end``: charge ``</s>``
    in :meth:`logp`. A token the n-gram never saw costs ``log p(<unk> | context)`` plus
    ``unk_logp`` nats (default ``-ln(len(id_to_word))``, a uniform choice among the tokenizer's
    pieces), the convention of :mod:`fairppl.ngram.subword`. KenLM's log10 probabilities are turned
    into nats one token at a time.

    ``start_id``/``end_id`` are the sentinels ``START``/``END`` (KenLM's ``<s>``/``</s>`` have no
    token id); ``end_id`` is None without ``end``. States after each scored prefix are cached, so
    a prefix shared by many sequences is scored once.
    """

    START = -1
    END = -2
    #: No positional limit (the n-gram's context is its order).
    max_length = None
    #: No torch model, nothing padded.
    device = None
    pad_id = None
    #: Cached prefix states before the cache is cleared (memory bound).
    MAX_STATES = 1_000_000

    def __init__(self, model, id_to_word: Sequence[str | None], *, start: bool = True,
                 end: bool = True, unk_logp: float | None = None):
        import kenlm

        from ..ngram.kenlm_tool import KENLM_RESERVED, load_model

        self.model = load_model(model) if isinstance(model, (str, os.PathLike)) else model
        self._kenlm = kenlm
        self.words = list(id_to_word)
        for i, w in enumerate(self.words):
            if w is not None and (not w or any(ch.isspace() for ch in w) or w in KENLM_RESERVED):
                raise ValueError(f"id_to_word[{i}] = {w!r}: expected a KenLM word (non-empty, no "
                                 f"whitespace, not one of {KENLM_RESERVED}) or None")
        self.known = [w is not None and w in self.model for w in self.words]
        self.unk_logp = -math.log(len(self.words)) if unk_logp is None else float(unk_logp)
        self.start_id = self.START if start else None
        self.end_id = self.END if end else None
        self._begin = kenlm.State()
        if start:
            self.model.BeginSentenceWrite(self._begin)
        else:
            self.model.NullContextWrite(self._begin)
        self._states: dict[tuple[int, ...], tuple[object, float]] = {(): (self._begin, 0.0)}
        self.calls = 0
        self.positions = 0

    def session(self, pass_tokens: int | None = None) -> None:
        """None: the LM caches its prefix states itself (no incremental session)."""
        return None

    def clear_cache(self) -> None:
        """Forget the cached prefix states, so that ``positions`` counts every step the next
        calls take (an estimator's own work, not what an earlier one left in the cache)."""
        self._states = {(): (self._begin, 0.0)}

    def _step(self, state, token: int):
        """(next state, log p(token | state) in nats)."""
        from ..ngram.kenlm_tool import NO_UNK_LOG10

        if token == self.END:
            word, known = "</s>", True
        else:
            if not 0 <= token < len(self.words) or self.words[token] is None:
                raise ValueError(f"token id {token} has no KenLM word (control token or out of "
                                 f"range 0..{len(self.words) - 1})")
            word, known = self.words[token], self.known[token]
        out = self._kenlm.State()
        log10p = self.model.BaseScore(state, word, out)
        self.calls += 1
        self.positions += 1
        if not math.isfinite(log10p):
            raise ValueError(f"KenLM gave a non-finite log-probability ({log10p}) to {word!r}")
        lp = log10p * math.log(10.0)
        if not known:
            if log10p < NO_UNK_LOG10:
                raise ValueError(f"the model gives no probability to unseen tokens (log10 "
                                 f"p(<unk>) = {log10p}): cannot score {word!r}")
            lp += self.unk_logp
        return out, lp

    def _state(self, prefix: tuple[int, ...]):
        """(state after prefix, log P(prefix | start)), cached per prefix."""
        hit = self._states.get(prefix)
        if hit is not None:
            return hit
        k = len(prefix)
        while k > 0 and prefix[:k] not in self._states:
            k -= 1
        state, total = self._states[prefix[:k]]
        if len(self._states) > self.MAX_STATES:
            self._states = {(): (self._begin, 0.0)}
        for i in range(k, len(prefix)):
            state, lp = self._step(state, prefix[i])
            total += lp
            self._states[prefix[:i + 1]] = (state, total)
        return state, total

    def logp(self, seqs: Sequence[Seq]) -> np.ndarray:
        """log P(seq [+ </s>] | <s>) per sequence, nats."""
        out = np.empty(len(seqs))
        for i, s in enumerate(seqs):
            s = as_tuple(s, f"sequence {i}")
            state, total = self._state(s)
            if self.end_id is not None:
                total += self._step(state, self.END)[1]
            out[i] = total
        return out

    def logp_next(self, prefix: Seq, conts: Sequence[Seq]) -> np.ndarray:
        """log P(cont | <s> + prefix) per continuation, nats, no end."""
        return self.logp_next_many([prefix], [conts])[0]

    def logp_next_many(self, prefixes: Sequence[Seq],
                       conts_per_prefix: Sequence[Sequence[Seq]]) -> list[np.ndarray]:
        """:meth:`logp_next` for each ``(prefix, conts)`` pair; one array per prefix."""
        _, keys = merge_requests(prefixes, conts_per_prefix)
        out = []
        for row in keys:
            values = np.empty(len(row))
            for j, (p, c) in enumerate(row):
                base = self._state(p)[1]
                values[j] = self._state(p + c)[1] - base if c else 0.0
            out.append(values)
        return out
