"""The LM-guided block proposal of Chirkova et al. (2023) for the marginal likelihood over
tokenizations, with the K samples advanced together.

For a text S (bytes ``vocab.text_bytes(text)``) cut into blocks B_1..B_n (:mod:`.blocks`), each
block with its top-M candidate tokenizations c_1..c_M, one sample is drawn left to right: given
the tokens T sampled so far, score every candidate with the LM, ``p_m = P(c_m | start + T)``,
draw c_m with probability ``p_m / Z`` (``Z = sum_m p_m``), append it, and add ``log Z`` to the
sample's log-weight. The sampled tokenization's proposal probability is the product of the
``p_m / Z``, so its importance weight ``P(T) / Q(T)`` is the product of the block ``Z``s times
``P(end | T)`` when the LM scores an end token (``lm.end_id``). The mean of K weights estimates,
without bias, the sum of P over the **covered** set: every concatenation of one candidate per
block. That set omits tokenizations with a token crossing a block edge and those outside a
block's top M, so the estimate is a lower bound on the full marginal in expectation. The default
tokenization is covered only when every block is aligned with it (no T2 block, no default token
across a block edge) and each block's default tokens are among its M candidates; the result
counts the blocks where it is not.

Shared work (the point of :func:`lm_guided_marginal`): the K samples advance block by block
together; samples whose prefixes are equal (most pick the default) are scored once, all distinct
prefixes of a block in one ``logp_next_many`` call. An LM whose ``session()`` is an incremental
scorer (HFTokenLM: :class:`fairppl.tokenlm.kv_tree.KVTree`) keeps each distinct prefix's key/values
from one block to the next, so a block step runs only the drawn candidates' last tokens and the
inner positions of the block's candidate trie after each distinct prefix (candidates sharing
leading tokens share them). A prefix not scored yet is scored for its block and, in the same call,
for the next ``lookahead`` blocks along the default path (the end token included): most samples
keep the default, so a text costs a few LM calls instead of one per block. The scores are the same;
only the order of the work changes. :func:`lm_guided_steps` is the same procedure as a generator of
LM requests, so that several texts can share each LM call (:mod:`fairppl.tokenlm.batch`, the
study's ``marginal.lm.pass_tokens``): each text keeps its own generator state and draws, so the
samples and log-weights are those of the text alone. :func:`lm_guided_reference` is the paper's
procedure, one sample at a time. Both draw their randomness the same way (one uniform per sample
and block, ``rng.random((K, n_blocks))``, then the bootstrap), so for the same generator
state they sample the same tokenizations and give the same log-weights.

Pruning (``prune=eps``, off by default): most of a block's LM positions are the inner tokens of
candidates that split the block's word into pieces the LM almost never continues with. With
pruning a prefix's candidates are scored in two passes: first only their first tokens (plus, in
full, the one-token candidates and those starting like the default, whose positions the
lookahead runs anyway), then the rest of the candidates whose first token has at least eps times
the largest first-pass probability. A dropped candidate's probability is at most its first
token's, so the dropped mass D of a block given a prefix is bounded by the sum of the dropped
first tokens' probabilities. The proposal then draws among the kept candidates only: the
estimate is unbiased for the covered set without the dropped candidates (a lower bound on the
unpruned one's target), and for every sample ``dropped_nats`` = sum over its blocks of
log(1 + D / Z) bounds how much its log-weight would rise if the dropped mass were counted in the
block sums Z along its path; ``max_dropped_nats`` bounds the same for the estimate. Without
pruning the code path is the one above, unchanged. Measured with SmolLM2-135M on two test
verses each of English and Russian (K=32, M=16, 1 CPU thread, shared machine): eps = 1e-3 ran
40% fewer positions in English (699 against 1,167) and 5% fewer in Russian, the estimates moving
by at most 0.09 nats (within their 90% intervals; bound 2.5 nats), but the second pass doubled
the LM calls, and on a CPU a call costs about a reading of the weights, so the time did not
fall; the study runs without pruning.

All log-probabilities are natural logs (**nats**), float64.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..tokenlm.batch import Keep, Logp, Next
from .blocks import BlockCandidates, block_default, char_count, default_offsets, split_blocks
from .defaults import DEFAULT_K, DEFAULT_L, DEFAULT_M
from .estimate import bca_interval, log_mean_exp, log_sum_exp

#: Blocks scored ahead along the default path of a new prefix, in the same LM call: most samples
#: keep the default, and on a CPU an LM call costs about as much as reading the weights once.
LOOKAHEAD = 8


@dataclass
class Result:
    """One text's estimate. ``logp_default``: log P(default tokenization [+ end]); ``logp``: log of
    the mean importance weight (the marginal estimate); ``ci_low``/``ci_high``: its 90% BCa
    interval; ``log_weights``: the K log-weights; all in nats. ``percent_nd``: percentage (0-100)
    of sampled blocks that are not the block's default tokens; ``t0``/``t1``/``t2``: fractions of
    blocks of each kind; ``n_unaligned``: blocks with a default token across an edge;
    ``n_default_outside``: blocks whose default tokens are not among the candidates (unaligned
    ones included); ``lm_calls``/``positions``: the LM's forward calls and token positions run
    for this text; ``prefixes``: LM scorings of a (prefix, candidate set) pair, the end's
    and the lookahead's included (the naive procedure runs K per block); ``seconds``: wall time;
    ``samples``: the K sampled token sequences when asked for; ``dropped_nats`` (nats, per
    sample) and ``n_dropped``: what pruning dropped (module docstring; zeros without it)."""

    logp_default: float
    logp: float
    ci_low: float
    ci_high: float
    log_weights: np.ndarray
    percent_nd: float
    t0: float
    t1: float
    t2: float
    n_blocks: int
    n_unaligned: int
    n_default_outside: int
    lm_calls: int
    positions: int
    prefixes: int
    seconds: float
    samples: list[tuple[int, ...]] | None = field(default=None, repr=False)
    #: per sample, an upper bound (nats) on how much its log-weight would rise if the candidates
    #: dropped by ``prune`` were kept (same sampled path); zeros without pruning
    dropped_nats: np.ndarray | None = field(default=None, repr=False)
    #: candidates dropped by ``prune`` (over every scored prefix and block)
    n_dropped: int = 0

    @property
    def max_dropped_nats(self) -> float:
        """The largest per-sample bound of ``dropped_nats`` (0 without pruning): no log-weight,
        and so not the estimate, would rise by more if the dropped candidates' mass were added to
        the block sums along the sampled paths (module docstring, pruning)."""
        d = self.dropped_nats
        return float(d.max()) if d is not None and len(d) else 0.0

    @property
    def default_covered(self) -> bool:
        """True when the proposal can sample the default tokenization."""
        return self.n_default_outside == 0


@dataclass
class BlockPlan:
    """What the proposal needs before any LM call: blocks, candidates and each block's default."""

    candidates: list[list[tuple[int, ...]]]
    defaults: list[tuple[int, ...] | None]
    kinds: list[str]
    aligned: list[bool]


def plan_blocks(vocab, text: str, default_ids: Sequence[int], L: int | None, M: int,
                cache: BlockCandidates | None) -> BlockPlan:
    """The proposal's blocks of ``text`` (``L`` characters; None: the longest default token),
    each with its top-``M`` candidates (from ``cache`` when given, else a fresh one) and its
    default tokenization's part: no LM call."""
    data = vocab.text_bytes(text)
    offs = default_offsets(vocab.token_bytes, default_ids, data)
    if L is None:
        # the longest default token in characters: no T2 block (Chirkova et al., appendix C)
        L = max([char_count(data, a, b) for a, b in zip(offs, offs[1:])] + [1])
    blocks = split_blocks(data, offs, L)
    if cache is None:
        cache = BlockCandidates(vocab, M)
    elif cache.M != M:
        raise ValueError(f"the candidate cache holds top-{cache.M} lists but M={M} was asked for")
    return BlockPlan(candidates=[cache(data[b.start:b.end]) for b in blocks],
                 defaults=block_default(blocks, default_ids, offs),
                 kinds=[b.kind for b in blocks], aligned=[b.aligned for b in blocks])


def _pick(lp: np.ndarray, u: float) -> tuple[int, float]:
    """Index drawn with probability ``exp(lp) / Z`` by inverting the CDF at ``u`` in [0, 1), and
    ``log Z`` (nats). A candidate of zero probability is never drawn."""
    top = float(lp.max())
    if top == -np.inf:
        raise ValueError("every candidate of a block has probability 0 under the LM given the "
                         "sampled prefix; the proposal cannot continue")
    w = np.exp(lp - top)
    cdf = np.cumsum(w)
    j = int(np.searchsorted(cdf, u * cdf[-1], side="right"))
    j = min(j, len(lp) - 1)
    while w[j] == 0.0:  # u * Z landed exactly on a zero-width step's right edge
        j -= 1
    return j, top + float(np.log(cdf[-1]))


def _default_block(vocab, plan: BlockPlan, b: int, lp: np.ndarray) -> dict:
    """Block ``b``'s record for ``blocks_out``, from the candidates' log-probabilities ``lp``
    given the default prefix: Q(default) = p_default / Z as ``logq_default_nats`` (-inf when the
    default is not a candidate)."""
    cands, default = plan.candidates[b], plan.defaults[b]
    j = cands.index(default) if default in cands else None
    spelled = b"".join(vocab.token_bytes[t] for t in cands[0])
    return {"block_index": b, "block": spelled.decode("utf-8", errors="replace"),
            "kind": plan.kinds[b], "n_candidates": len(cands),
            "logq_default_nats": -np.inf if j is None else float(lp[j]) - log_sum_exp(lp)}


def _finish(meter, plan: BlockPlan, logw: np.ndarray, chosen: np.ndarray,
            seqs: list[tuple[int, ...]], default_ids, rng, mark, prefixes: int,
            keep: bool, dropped: np.ndarray | None = None, n_dropped: int = 0,
            logp_default: float | None = None):
    """The Result (a generator step: the default's log P is asked with a
    :class:`~fairppl.tokenlm.batch.Logp` request unless ``logp_default`` is given)."""
    if logp_default is None:
        logp_default = float((yield Logp([tuple(default_ids)]))[0])
    n = len(plan.candidates)
    is_default = np.array([[plan.defaults[b] is not None
                            and plan.candidates[b][chosen[k, b]] == plan.defaults[b]
                            for b in range(n)] for k in range(len(logw))], dtype=bool)
    outside = sum(d is None or d not in c for d, c in zip(plan.defaults, plan.candidates))
    low, high = bca_interval(logw, 0.9, rng)
    share = (lambda k: plan.kinds.count(k) / n) if n else (lambda k: 0.0)  # noqa: E731
    calls, positions, seconds = meter.since(mark)
    return Result(logp_default=logp_default, logp=log_mean_exp(logw), ci_low=low, ci_high=high,
                  log_weights=logw, percent_nd=100.0 * float((~is_default).mean()) if n else 0.0,
                  t0=share("T0"), t1=share("T1"), t2=share("T2"), n_blocks=n,
                  n_unaligned=plan.aligned.count(False), n_default_outside=outside,
                  lm_calls=calls, positions=positions, prefixes=prefixes,
                  seconds=seconds, samples=seqs if keep else None,
                  dropped_nats=np.zeros(len(logw)) if dropped is None else dropped,
                  n_dropped=n_dropped)


def _start(meter, vocab, text, default_ids, K, L, M, cache, rng):
    """What both procedures do first: check K, note the clock and the LM's counters (``meter``,
    :class:`fairppl.tokenlm.batch.Meter`), plan the blocks and draw the (K, blocks) uniforms that
    pick every sample's candidates."""
    if K < 1:
        raise ValueError(f"the number of samples K must be at least 1, got {K}")
    mark = meter.start()
    plan = plan_blocks(vocab, text, default_ids, L, M, cache)
    return mark, plan, rng.random((K, len(plan.candidates)))


def lm_guided_marginal(lm, vocab, text: str, *, default_ids: Sequence[int],
                       K: int = DEFAULT_K, L: int | None = DEFAULT_L, M: int = DEFAULT_M,
                       rng: np.random.Generator,
                       cache: BlockCandidates | None = None, return_samples: bool = False,
                       lookahead: int = LOOKAHEAD, blocks_out: list | None = None,
                       prune: float | None = None) -> Result:
    """Estimate log P(text) (nats) with K samples of the LM-guided block proposal, the samples
    advanced block by block together and equal prefixes scored once (module docstring).

    ``lm``: a TokenLM; ``vocab``: the LM's TokenVocab; ``default_ids``: the tokenizer's token ids
    for ``text`` (they must spell ``vocab.text_bytes(text)``); ``L``: maximum block length in
    characters (None: the longest default token, so no T2 block); ``M``: candidates per block;
    ``cache``: a BlockCandidates to share across texts (its M must equal ``M``); ``lookahead``:
    blocks scored ahead along the default path in the same LM call (module docstring; 0: none).

    ``blocks_out``: a list to which one dict per block is appended when some sample's prefix is
    the default tokenization of the blocks before (blocks after the first that no sample reached
    that way get none): ``block_index``, ``block`` (its text), ``kind`` (T0/T1/T2),
    ``n_candidates`` and ``logq_default_nats``, the proposal's log-probability of the block's
    default tokens given that prefix (Chirkova et al.'s Q(df.), Table 2; -inf when they are not a
    candidate). It changes no sample and no weight.

    ``prune``: None (default) scores every candidate (the estimator above). A number eps in
    (0, 1) drops, per scored prefix and block, the candidates whose first token has probability
    below eps times the largest probability of the first pass (first tokens, whole one-token
    candidates) among the block's candidates, before their inner positions are run (module
    docstring, pruning); the result's ``dropped_nats`` and ``n_dropped`` report what was
    dropped.
    """
    from ..tokenlm.batch import Meter, run_alone

    return run_alone(lm_guided_steps(lm, vocab, text, default_ids=default_ids, K=K, L=L, M=M,
                                     rng=rng, cache=cache, return_samples=return_samples,
                                     lookahead=lookahead, blocks_out=blocks_out, prune=prune,
                                     meter=Meter(lm)), lm)


def lm_guided_steps(lm, vocab, text: str, *, default_ids: Sequence[int],
                    K: int = DEFAULT_K, L: int | None = DEFAULT_L, M: int = DEFAULT_M,
                    rng: np.random.Generator,
                    cache: BlockCandidates | None = None, return_samples: bool = False,
                    lookahead: int = LOOKAHEAD, blocks_out: list | None = None,
                    prune: float | None = None, meter=None, logp_default: float | None = None):
    """:func:`lm_guided_marginal` as a generator of LM requests (:mod:`fairppl.tokenlm.batch`): it
    yields :class:`~fairppl.tokenlm.batch.Keep` ``(prefixes)`` (the prefixes whose key/values the
    session must keep), :class:`~fairppl.tokenlm.batch.Next` ``(prefixes, conts_per_prefix)``
    (answered with ``logp_next_many``'s arrays) and :class:`~fairppl.tokenlm.batch.Logp` ``(seqs)``
    (answered with ``logp``'s array), and returns the :class:`Result`. A driver answers one unit's
    requests alone (:func:`fairppl.tokenlm.batch.run_alone`, the same calls in the same order as
    before) or many units' in one LM call (:func:`fairppl.tokenlm.batch.run_many`). ``meter``
    counts the unit's LM work and time (default :class:`fairppl.tokenlm.batch.Meter` over ``lm``);
    ``logp_default``: the default tokenization's log P when the caller has it (not asked
    again)."""
    from ..tokenlm.batch import Meter

    if prune is not None and not 0.0 < prune < 1.0:
        raise ValueError(f"prune must be None or a threshold in (0, 1), got {prune}")
    meter = Meter(lm) if meter is None else meter
    mark, plan, u = _start(meter, vocab, text, default_ids, K, L, M, cache, rng)
    n = len(plan.candidates)
    seqs: list[tuple[int, ...]] = [()] * K
    logw = np.zeros(K)
    chosen = np.zeros((K, n), dtype=np.int64)
    prefixes = 0
    dflt: tuple[int, ...] | None = ()  # the default tokens of the blocks before (blocks_out)
    # step n scores the end token; the lookahead follows the default where it is a candidate
    steps = list(plan.candidates) + ([[(lm.end_id,)]] if lm.end_id is not None else [])
    follow = [d if d is not None and d in c else c[0]
              for d, c in zip(plan.defaults, plan.candidates)]
    memo: dict[tuple[int, tuple[int, ...]], np.ndarray] = {}  # (step, prefix) -> scores
    bounds: dict[tuple[int, tuple[int, ...]], float] = {}  # (step, prefix) -> log dropped bound
    dropped = np.zeros(K)
    n_dropped = 0
    for b, cands in enumerate(steps):
        groups: dict[tuple[int, ...], list[int]] = {}
        for k, seq in enumerate(seqs):
            groups.setdefault(seq, []).append(k)
        memo = {tag: v for tag, v in memo.items() if tag[0] >= b}
        tags: dict[tuple[int, tuple[int, ...]], None] = {}
        for key in groups:
            p = key
            for j in range(b, min(len(steps), b + 1 + lookahead) if (b, key) not in memo else b):
                if (j, p) in memo:
                    break
                tags[(j, p)] = None
                p = p + follow[j] if j < n else p
        # an LM with a session keeps each prefix's key/values from one block to the next
        yield Keep(list(groups) + [p for _, p in memo])
        if tags:
            prefixes += len(tags)
            if prune is None:
                out = yield Next([p for _, p in tags], [steps[j] for j, _ in tags])
                memo.update(zip(tags, (np.asarray(v, dtype=np.float64) for v in out)))
            else:
                scored = yield from _pruned_scores(list(tags), steps, follow, prune)
                for tag, lp, bound in zip(tags, *scored):
                    memo[tag] = lp
                    bounds[tag] = bound
                    n_dropped += int(np.isneginf(lp).sum())
        for key, group in groups.items():
            lp = memo[(b, key)]
            if b == n:  # the end token
                logw[group] += float(lp[0])
                continue
            if blocks_out is not None and key == dflt:
                blocks_out.append(_default_block(vocab, plan, b, lp))
            for k in group:
                j, logz = _pick(lp, u[k, b])
                chosen[k, b] = j
                logw[k] += logz
                seqs[k] = key + cands[j]
                if prune is not None:  # log(1 + D / Z), D the bound on the dropped mass
                    dropped[k] += float(np.logaddexp(0.0, bounds[(b, key)] - logz))
        if blocks_out is not None and dflt is not None and b < n:
            dflt = None if plan.defaults[b] is None else dflt + plan.defaults[b]
    return (yield from _finish(meter, plan, logw, chosen, seqs, default_ids, rng, mark,
                               prefixes, return_samples, dropped if prune is not None else None,
                               n_dropped, logp_default))


def _pruned_scores(tags: list, steps: list, follow: list, eps: float):
    """Candidate scores of every ``(step, prefix)`` tag with pruning (module docstring). First
    pass: the heads (first tokens) of all candidates, and in full the one-token candidates, the
    followed candidate and every candidate starting with its first token (their inner positions
    lie on the lookahead path, run in this pass). Second pass: the rest of each candidate whose
    head has at least ``eps`` times the largest head probability among the block's candidates.
    Returns per tag the log-probabilities (-inf for a dropped candidate) and the log of the bound
    on the dropped mass, the sum of the dropped heads' probabilities (-inf when none is); a
    generator step of :func:`lm_guided_steps` (each pass one :class:`~fairppl.tokenlm.batch.Next`
    request)."""
    n = len(follow)
    first_c, full = [], []
    for j, _ in tags:
        lead = follow[j][0] if j < n else None
        whole = [len(c) == 1 or c[0] == lead for c in steps[j]]
        full.append(whole)
        first_c.append([c if w else c[:1] for c, w in zip(steps[j], whole)])
    out = yield Next([p for _, p in tags], first_c)
    log_eps = float(np.log(eps))
    lps, bounds, second_p, second_c, where = [], [], [], [], []
    for t, ((j, p), whole, head) in enumerate(zip(tags, full, out)):
        lp = np.array(head, dtype=np.float64)
        cut = float(lp.max()) + log_eps
        drop = [i for i, w in enumerate(whole) if not w and lp[i] < cut]
        for i, c in enumerate(steps[j]):
            if not whole[i] and lp[i] >= cut:
                second_p.append(p + c[:1])
                second_c.append([c[1:]])
                where.append((t, i))
        bounds.append(float(np.logaddexp.reduce(lp[drop])) if drop else -np.inf)
        lp[drop] = -np.inf
        lps.append(lp)
    if second_p:
        for (t, i), rest in zip(where, (yield Next(second_p, second_c))):
            lps[t][i] += float(rest[0])
    return lps, bounds


def lm_guided_reference(lm, vocab, text: str, *, default_ids: Sequence[int],
                        K: int = DEFAULT_K, L: int | None = DEFAULT_L, M: int = DEFAULT_M,
                        rng: np.random.Generator,
                        cache: BlockCandidates | None = None,
                        return_samples: bool = False) -> Result:
    """The same estimate by the paper's procedure (Algorithm 1 of Chirkova et al.): each sample
    drawn on its own, one ``lm.logp_next`` call per sample and block. Same arguments, same
    randomness and so the same samples and log-weights as :func:`lm_guided_marginal`; kept as
    its cross-check and as the baseline of the speed benchmark."""
    from ..tokenlm.batch import Meter, run_alone

    meter = Meter(lm)
    mark, plan, u = _start(meter, vocab, text, default_ids, K, L, M, cache, rng)
    n = len(plan.candidates)
    seqs: list[tuple[int, ...]] = []
    logw = np.zeros(K)
    chosen = np.zeros((K, n), dtype=np.int64)
    for k in range(K):
        seq: tuple[int, ...] = ()
        for b, cands in enumerate(plan.candidates):
            lp = np.asarray(lm.logp_next(seq, cands), dtype=np.float64)
            j, logz = _pick(lp, u[k, b])
            chosen[k, b] = j
            logw[k] += logz
            seq = seq + cands[j]
        if lm.end_id is not None:
            logw[k] += float(lm.logp_next(seq, [(lm.end_id,)])[0])
        seqs.append(seq)
    prefixes = K * (n + (lm.end_id is not None))
    return run_alone(_finish(meter, plan, logw, chosen, seqs, default_ids, rng, mark, prefixes,
                             return_samples), lm)
