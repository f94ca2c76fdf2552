"""Marginal likelihood over tokenizations (Cao & Rimell 2021, section 2; Chirkova et al. 2023,
section 2): the probability of a text summed over every token sequence that spells it, estimated
by importance sampling, bounded from below, or computed exactly.

Lattices: :mod:`.lattice` (segmentation lattices: forward/backward, Viterbi, n-best, sampling with
and without replacement, capped path counts, entropy, enumeration), :mod:`.unigram` (SentencePiece
unigram lattices, Cao & Rimell 2021), :mod:`.vocab` (any tokenizer's tokens as byte strings; every
tokenization of a byte string). The LMs that score token sequences with the work shared across
them, and the drivers that batch the estimators' LM requests, are :mod:`fairppl.tokenlm`.
Estimators: :mod:`.estimate` (importance-sampling arithmetic and Monte Carlo intervals),
:mod:`.blocks` and :mod:`.lm_guided` (Chirkova et al. 2023), :mod:`.decoding_free` (Pohl,
Cognetta et al. 2025: a lower bound), :mod:`.exact` (enumeration and the n-gram forward
algorithm), :mod:`.beam` (a deterministic lower bound), :mod:`.api` (one record per text and
estimator). The stage: :mod:`.units` (per-unit records, resumable through
:mod:`fairppl.core.runner`), :mod:`.table` (sums over units with intervals), :mod:`.compare`,
:mod:`.analyses`, :mod:`.lengths`, :mod:`.caching` (the comparisons and analyses the report
shows), :mod:`.flores` (parity beside bits on a FLORES-200 slice, canonical and marginal). Every
log-probability is in **nats**.

May import: :mod:`fairppl.core`, :mod:`fairppl.tokenizers`, :mod:`fairppl.ngram`,
:mod:`fairppl.stats`, :mod:`fairppl.lm`, :mod:`fairppl.tokenlm`.
"""
