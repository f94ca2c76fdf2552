"""The token-LM interface: what every language model that scores many token sequences of one
text offers, with the work shared across them (the marginal likelihood over tokenizations needs
log P_LM of hundreds of tokenizations of one unit, and of many candidate continuations after many
sampled prefixes; the Shannon game, of every vocabulary word after every truncation).

:class:`TokenLM` is the contract of the estimators and of the batch drivers (:mod:`.batch`);
:class:`Session` that of the incremental scorer an LM may open (:meth:`TokenLM.session`);
:class:`TreeLM` what that scorer, :class:`~.kv_tree.KVTree`, needs of its LM besides.
:class:`~.lm_hf.HFTokenLM` (:mod:`.lm_hf`) implements :class:`TreeLM` for a transformers causal
LM, :class:`~.lm_kenlm.KenLMTokenLM` (:mod:`.lm_kenlm`) :class:`TokenLM` for a KenLM n-gram over
a tokenizer's pieces. Every log-probability is a natural log (**nats**), float64.

Conventions (the same as the study's default-path scores, so that the default tokenization's
``logp`` is exactly the number in the study's tables):

* A sequence is scored after a start context that is never scored: the configured start token
  for a transformers LM (:func:`fairppl.lm.special_tokens.start_token_id`: models.tsv ``bos``, else
  the tokenizer's BOS, else its EOS), KenLM's ``<s>`` for an n-gram.
* :meth:`TokenLM.logp` charges the end token after the sequence iff ``end_id`` is not None (the
  study's default: the EOS, or models.tsv ``eos``; KenLM's ``</s>``).
* :meth:`TokenLM.logp_next` never charges the end: it is log P(cont | start + prefix), the sum of
  the continuation's token log-probabilities.
* ``calls`` and ``positions`` count cumulatively the model forward passes and the token positions
  run through the model (padding excluded); for KenLM both count scored tokens. They measure the
  work an estimator costs.
"""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

#: A token sequence: token ids.
Seq = Sequence[int]


@runtime_checkable
class Session(Protocol):
    """An incremental scorer over one LM (:meth:`TokenLM.session`) that keeps the work of the
    prefixes it has run: ``pass_tokens`` new positions per forward pass at most; :meth:`keep`
    drops what no prefix still wanted needs."""

    pass_tokens: int

    def keep(self, prefixes: Sequence[Seq]) -> None:
        """Drop every stored position that is not on the path of one of ``prefixes``."""

    def logp_next_many(self, prefixes: Sequence[Seq],
                       conts_per_prefix: Sequence[Sequence[Seq]]) -> list[np.ndarray]:
        """As :meth:`TokenLM.logp_next_many`, the positions run kept for later calls."""


@runtime_checkable
class TokenLM(Protocol):
    """Scores token sequences in nats; see the module docstring for the conventions.

    ``max_length``: input positions (start token included) the model takes at most, None for no
    limit; ``device``: the torch device the model runs on (None: no torch model); ``pad_id``: the
    token id that fills padded positions (None: nothing is padded)."""

    start_id: int
    end_id: int | None
    calls: int
    positions: int
    max_length: int | None
    device: object | None
    pad_id: int | None

    def session(self, pass_tokens: int | None = None) -> Session | None:
        """A fresh incremental scorer over this LM (``pass_tokens``: new positions per forward
        pass, None for the LM's default), or None when the LM has none (its own calls are then
        used)."""

    def clear_cache(self) -> None:
        """Forget what earlier calls left cached, so that ``calls`` and ``positions`` count the
        next calls' own work (a no-op for an LM that caches nothing between calls)."""

    def logp(self, seqs: Sequence[Seq]) -> np.ndarray:
        """log P(seq [+ end] | start) per sequence, nats, float64; equal sequences scored once."""

    def logp_next(self, prefix: Seq, conts: Sequence[Seq]) -> np.ndarray:
        """log P(cont | start + prefix) per continuation (no end), nats, float64."""

    def logp_next_many(self, prefixes: Sequence[Seq],
                       conts_per_prefix: Sequence[Sequence[Seq]]) -> list[np.ndarray]:
        """:meth:`logp_next` for many prefixes at once (equal prefixes run once)."""


@runtime_checkable
class TreeLM(TokenLM, Protocol):
    """A transformers causal LM as the incremental scorer :class:`~.kv_tree.KVTree` needs it:
    the ``model`` itself (its decoder ``base_model`` and output layer are run apart),
    ``vocab_rows`` (rows of its output layer), ``pass_tokens`` (default new positions per
    forward pass), ``max_batch_tokens`` (rows of logits computed at once), a ``pad_id`` that is
    not None, and the checks below."""

    model: object
    vocab_rows: int
    pass_tokens: int
    max_batch_tokens: int
    pad_id: int

    def check_length(self, n_inputs: int, what: str) -> None:
        """Raise ValueError naming ``what`` when ``n_inputs`` input positions (start token
        included) exceed ``max_length``."""

    def use_tree(self, depth: int) -> bool:
        """Whether inputs ``depth`` positions deep may run with a tree attention mask (not with
        flash attention, nor past a sliding window)."""
