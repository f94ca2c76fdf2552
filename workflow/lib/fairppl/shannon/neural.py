"""A token-level causal LM (the study's Transformers over characters or SentencePiece pieces, the
pretrained SmolLM2 and Gemma-3) as a bettor over whole words (:class:`TokenBettor`).

Definition. A unit is a sequence of words separated by single ASCII spaces (:mod:`.outcomes`);
the model generates tokens after its start token until its end token. The bet on a word ``w``
after the context ``c`` (the words before the position) is the probability that the next
whitespace-delimited word is exactly ``w``: the word's tokens, **then** a word boundary (a token
whose text begins with an ASCII space) or the end token, given the context and given that the
context ends at a word boundary:

    bet(w | c) = P(t(w) | c) * B(c + w) / B(c),        bet(</s> | c) = P(end | c) / B(c),

where ``B(s)`` = P(next token's text begins with a space, or it is the end token | s), the sum of
the model's next-token probabilities over those ids (``boundary_ids``). At the first position
the unit's start is the boundary, so ``B(c) = 1`` there (no conditioning).

Tokens. ``t(w)`` is the tokenizer's canonical tokenization of the word as it continues the text:
the first word of a unit is encoded alone (``encode(w)``: SentencePiece's dummy prefix adds its
``▁``, the character and byte-level BPE tokenizers add nothing); every later word is encoded with
the space before it (``encode(" " + w)``: ``" "`` + its characters for the character tokenizer,
``Ġ...`` pieces for GPT-2 byte-level BPE, ``▁...`` for Gemma-3; a tokenizer with a dummy prefix
is given ``w`` alone, the prefix being that space). Each word's tokens are checked to spell
exactly its bytes (:class:`fairppl.marginal.vocab.TokenVocab`). The context's tokens are its
words' tokens concatenated (``context_tokens``), so the model always conditions on the same
tokens its bets were computed with.

Properties (tested in tests/unit/test_shannon_bettors.py):

* The events "t(w) then a boundary token or the end" are disjoint for distinct words (a word's
  tokens after the first never begin with a space) and lie inside the event of ``B(c)``, so the
  bets on the vocabulary words and ``</s>`` sum to at most 1; ``<unk>`` takes the rest,
  ``1 - sum``, clipped at 0 against rounding: the model's mass on every other word, plus the
  mass on continuations this definition does not count as a word (a boundary inside a token, a
  word spelled by other tokens than its canonical ones).
* Over the exhaustive truncations of a unit the bets on the correct outcomes telescope (the B
  factors cancel, ``B`` at the start is 1): the sum of :meth:`TokenBettor.log_prob` over the
  unit's positions is log P(start + t(w_1) t(w_2) ... t(w_n) + end), which is the study's
  canonical score of the unit (:func:`fairppl.lm.scoring.score_texts`) whenever the unit's
  canonical tokenization is the concatenation of its words' tokens (:func:`concatenation_holds`:
  true by construction for the character tokenizer and for pre-tokenizers that split before
  spaces, as GPT-2's; in practice for the study's SentencePiece models, whose pieces never span
  a space, and for Gemma-3: bench/bench_shannon_bets.py counts it, 500 of 500 English Bible test
  units for each of the four). So the exhaustive gambling perplexity equals the likelihood
  perplexity of that word-by-word tokenization; where the concatenation fails, it is the
  likelihood of a non-canonical tokenization of the same text.

Cost. After a context, the m words' tokens form one prefix tree
(:class:`~fairppl.shannon.kv_masses.MassKVTree`, a :class:`fairppl.tokenlm.kv_tree.KVTree`): every
distinct token prefix of the words is run once with the context's keys/values, its last token
included (the boundary mass after the word needs that row). The context itself stays in the
key/value store from one truncation to the next (a unit's contexts are prefixes of one another),
so a truncation costs the tree's positions plus one (the context's last token is run again, its
row is needed). :meth:`TokenBettor.take_cost` gives forward passes, positions and seconds since
the last call. All log-probabilities are nats.
"""

from __future__ import annotations

import math
import time
from typing import Callable, Sequence

import numpy as np

from ..core.errors import InputError
from ..ngram.word import words as split_words
from .outcomes import END_OUTCOME, UNK_OUTCOME, Outcomes
from .protocol import Bettor


def boundary_ids(vocab, end_id: int | None) -> np.ndarray:
    """The token ids whose text begins with an ASCII space (``vocab``: a
    :class:`~fairppl.marginal.vocab.TokenVocab`), plus the end token: the tokens that start the
    next word or end the text."""
    ids = [i for i, b in enumerate(vocab.token_bytes) if b is not None and b.startswith(b" ")]
    if end_id is not None:
        ids.append(int(end_id))
    if not ids:
        raise InputError("no token of this vocabulary begins with a space, and no end token: "
                         "a word boundary cannot be predicted")
    return np.unique(np.asarray(ids, dtype=np.int64))


class WordTokens:
    """The canonical tokens of words as the first word of a unit (``first``) or after a space
    (``later``), checked against the bytes they must spell; cached per word."""

    def __init__(self, encode: Callable[[str], Sequence[int]], vocab):
        self.encode = encode
        self.vocab = vocab
        self._cache: dict[tuple[str, bool], tuple[int, ...]] = {}

    def __call__(self, word: str, first: bool) -> tuple[int, ...]:
        key = (word, first)
        got = self._cache.get(key)
        if got is None:
            if first:
                toks, want = self.encode(word), self.vocab.text_bytes(word)
            else:
                text = word if self.vocab.prefix_space == "always" else " " + word
                toks, want = self.encode(text), b" " + word.encode("utf-8")
            got = tuple(int(t) for t in toks)
            spelled = self.vocab.decode(got, skip_special=False) if got else b""
            if spelled != want or not got:
                where = "first" if first else "after a space"
                raise InputError(f"the tokens of word {word!r} ({where}) spell {spelled!r}, "
                                 f"expected {want!r}: this tokenizer does not spell the word "
                                 f"losslessly")
            self._cache[key] = got
        return got

    def context(self, ws: Sequence[str]) -> tuple[int, ...]:
        """The tokens of a unit's first words, word by word."""
        out: list[int] = []
        for k, w in enumerate(ws):
            out.extend(self(w, k == 0))
        return tuple(out)


def concatenation_holds(encode: Callable[[str], Sequence[int]], word_tokens: WordTokens,
                        text: str) -> bool:
    """Whether the unit's canonical tokenization is its words' tokens concatenated (then the
    bettor's exhaustive log_probs sum to the study's canonical score of the unit)."""
    return tuple(int(t) for t in encode(text)) == word_tokens.context(split_words(text))


class TokenBettor(Bettor):
    """A transformers causal LM (:class:`fairppl.tokenlm.lm_hf.HFTokenLM`, framed like the
    study's scorer: start token, end token charged) betting over the m outcomes (module
    docstring). ``vocab``: its :class:`~fairppl.marginal.vocab.TokenVocab`; ``encode``: text ->
    canonical token ids; ``pass_tokens``: new positions per forward pass (default: the LM's
    ``pass_tokens``)."""

    kind = "token"

    def __init__(self, lm, vocab, encode: Callable[[str], Sequence[int]], outcomes: Outcomes,
                 pass_tokens: int | None = None):
        from .kv_masses import MassKVTree

        if lm.end_id is None:
            raise InputError("the LM scores no end token: the bet on </s> needs one")
        self.lm = lm
        self.outcomes = outcomes
        self.tokens = WordTokens(encode, vocab)
        self.encode = encode
        self.boundary = boundary_ids(vocab, lm.end_id)
        self.session = MassKVTree(lm, pass_tokens)
        # every word's tokens, first and later, are checked once here
        self._first = [self.tokens(w, True) for w in outcomes.words]
        self._later = [self.tokens(w, False) for w in outcomes.words]
        self._ctx_key: tuple | None = None
        self._ctx: dict = {}
        self._ready: dict[tuple, dict] = {}  # contexts computed by prefetch
        self._seconds = 0.0
        self._mark = (lm.calls, lm.positions)

    @classmethod
    def from_folder(cls, load_from, outcomes: Outcomes, special: dict | None = None,
                    device=None, dtype=None, pass_tokens: int | None = None,
                    load_dtype: str = "float32") -> "TokenBettor":
        """Load a study Transformer folder or a pretrained LM's ``hf`` folder
        (:func:`fairppl.marginal.units.hf_lm`, framed with the model sheet's ``bos``/``eos``
        when ``special`` gives them) in ``load_dtype`` (config ``pretrained.dtype``); ``dtype``
        then casts the model (e.g. ``torch.float64``)."""
        from ..marginal.units import hf_lm

        lm, vocab, encode, _ = hf_lm(load_from, special, device=device, dtype=load_dtype)
        if dtype is not None:
            lm.model.to(dtype)
        return cls(lm, vocab, encode, outcomes, pass_tokens=pass_tokens)

    # -- the bets -----------------------------------------------------------------------------

    def depth(self, context_words: Sequence[str]) -> int:
        """Input positions the bets after ``context_words`` need: the start token, the
        context's tokens and the longest vocabulary word's."""
        words = self._later if context_words else self._first
        return 1 + len(self.tokens.context(context_words)) + max(map(len, words), default=0)

    def fits(self, text: str) -> bool:
        """Whether every truncation of the unit fits in the model's window (the bettor does not
        slide a window: a unit that does not fit is refused, never scored in parts). The last
        truncation is the deepest: an out-of-vocabulary word's own tokens, run by
        :meth:`log_prob`, end within the unit's tokens."""
        limit = self.lm.max_length
        return limit is None or self.depth(split_words(text)) <= limit

    def prefetch(self, contexts: Sequence[Sequence[str]],
                 words: Sequence[str] | None = None) -> None:
        """Compute the bets after every context of ``contexts`` in one call of the session
        (:meth:`~fairppl.shannon.kv_masses.MassKVTree.logp_next_masses_many`: the contexts' tries
        in shared forward passes of ``pass_tokens`` positions, instead of a pass or more per
        context), kept until the next ``prefetch`` or a context outside them is asked; with
        ``words`` (the word after each context), also the :meth:`log_prob` of each one outside
        the vocabulary. A context may come more than once (the truncations of several units): it
        is run once. The values are those of the context-by-context path (up to the float
        rounding of other passes)."""
        keys = [tuple(c) for c in contexts]
        if words is not None and len(words) != len(keys):
            raise ValueError(f"{len(keys)} contexts but {len(words)} words")
        # a context asked more than once (the empty one of every unit of a call, or units that
        # begin alike) is run once, with every out-of-vocabulary word asked after it
        oovs: dict[tuple, list[str]] = {}
        for i, key in enumerate(keys):
            wanted = oovs.setdefault(key, [])
            word = words[i] if words is not None else None
            if (word is not None and word not in (END_OUTCOME, UNK_OUTCOME)
                    and self._word_index(word) is None and word not in wanted):
                wanted.append(word)
        for key in oovs:
            self._check_depth(key)
        start = time.perf_counter()
        ctxs, conts = [], []
        for key, wanted in oovs.items():
            ctxs.append(self.tokens.context(key))
            cs = (self._later if key else self._first) + [()]
            conts.append(cs + [self.tokens(word, not key) for word in wanted])
        out = self.session.logp_next_masses_many(ctxs, conts, [self.boundary, [self.lm.end_id]])
        self._ready = {}
        for (key, wanted), ctx, (sums, masses) in zip(oovs.items(), ctxs, out):
            m = len(self._later if key else self._first)
            state = self._make_state(key, ctx, sums[:m + 1], masses[:m + 1])
            state["oov"] = {word: float(sums[m + 1 + j] + masses[m + 1 + j, 0] - state["log_b"])
                            for j, word in enumerate(wanted)}
            self._ready[key] = state
        self._seconds += time.perf_counter() - start

    def _word_index(self, word: str) -> int | None:
        """The outcome index of a vocabulary word, None for any other word."""
        i = self.outcomes.index.get(word)
        return i if i is not None and i < self.outcomes.unk else None

    def _check_depth(self, key: tuple) -> None:
        limit = self.lm.max_length
        if limit is not None and self.depth(key) > limit:
            raise InputError(
                f"a context of {len(key)} words with the longest vocabulary word needs "
                f"{self.depth(key)} input positions, beyond the model's window of {limit}: "
                f"the bettor takes units that fit in one window (TokenBettor.fits)")

    @staticmethod
    def _make_state(key: tuple, ctx: tuple, sums: np.ndarray, masses: np.ndarray) -> dict:
        """The bets after a context from its words' sums and masses (the empty continuation
        last)."""
        log_b_ctx = float(masses[-1, 0]) if key else 0.0
        return {"tokens": ctx, "log_b": log_b_ctx,
                "log_words": sums[:-1] + masses[:-1, 0] - log_b_ctx,
                "log_end": float(masses[-1, 1]) - log_b_ctx}

    def _state(self, context_words: Sequence[str]) -> dict:
        key = tuple(context_words)
        if key != self._ctx_key and key in self._ready:
            self._ctx_key, self._ctx = key, self._ready[key]
        if key != self._ctx_key:
            self._ready = {}  # a context outside the prefetched ones: they are done with
            self._check_depth(key)
            start = time.perf_counter()
            ctx = self.tokens.context(key)
            conts = (self._later if key else self._first) + [()]
            sums, masses = self.session.logp_next_masses(ctx, conts, [self.boundary,
                                                                      [self.lm.end_id]])
            self._ctx_key = key
            self._ctx = self._make_state(key, ctx, sums, masses)
            self._seconds += time.perf_counter() - start
        return self._ctx

    def log_bets(self, context_words: Sequence[str]) -> np.ndarray:
        """ln of every outcome's bet (outcome order; ``<unk>``'s is ln of the rest, ``-inf``
        when nothing is left)."""
        state = self._state(context_words)
        out = np.empty(self.outcomes.m)
        out[:self.outcomes.unk] = state["log_words"]
        out[self.outcomes.end] = state["log_end"]
        listed = np.exp(np.delete(out, self.outcomes.unk))
        rest = 1.0 - math.fsum(listed.tolist())
        out[self.outcomes.unk] = math.log(rest) if rest > 0 else -math.inf
        return out

    def bets(self, context_words: Sequence[str]) -> np.ndarray:
        """The bets over the m outcomes after ``context_words`` (float64, summing to 1)."""
        return np.exp(self.log_bets(context_words))

    def log_prob(self, context_words: Sequence[str], word: str) -> float:
        """ln P(the next word is ``word`` | context), nats: the bet's own value for a vocabulary
        word and for ``</s>``; an out-of-vocabulary word's own probability (same definition,
        its tokens run after the context), not ``<unk>``'s pooled bet."""
        state = self._state(context_words)
        if word == END_OUTCOME:
            return state["log_end"]
        i = self._word_index(word)
        if i is not None:
            return float(state["log_words"][i])
        if word == UNK_OUTCOME:
            raise InputError(f"{UNK_OUTCOME!r} is an outcome, not a word: give the word itself")
        if word in state.get("oov", {}):
            return state["oov"][word]
        start = time.perf_counter()
        toks = self.tokens(word, not context_words)
        sums, masses = self.session.logp_next_masses(state["tokens"], [toks], [self.boundary])
        self._seconds += time.perf_counter() - start
        return float(sums[0] + masses[0, 0] - state["log_b"])

    def take_cost(self) -> dict:
        """Forward passes, positions run and seconds spent since the last call."""
        calls, positions = self.lm.calls - self._mark[0], self.lm.positions - self._mark[1]
        out = {"cost_passes": calls, "cost_positions": positions, "cost_seconds": self._seconds}
        self._mark = (self.lm.calls, self.lm.positions)
        self._seconds = 0.0
        return out
