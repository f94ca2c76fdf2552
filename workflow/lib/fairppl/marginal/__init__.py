"""Marginal likelihood over tokenizations (STUDY.md section 2): the probability of a text summed
over every token sequence that spells it, estimated by importance sampling or computed exactly.

Modules: :mod:`.lattice` (segmentation lattices: forward/backward, Viterbi, n-best, sampling with
and without replacement, entropy, enumeration), :mod:`.unigram` (SentencePiece unigram lattices,
Cao & Rimell 2021), :mod:`.vocab` (any tokenizer's tokens as byte strings; every tokenization of a
byte string), :mod:`.lm` (scoring many token sequences with one LM, work shared across them),
:mod:`.estimate` (importance-sampling arithmetic and intervals), :mod:`.blocks` and
:mod:`.lm_guided` (Chirkova et al. 2023), :mod:`.decoding_free` (model-free lattice proposals),
:mod:`.exact` (enumeration and the n-gram forward algorithm) and :mod:`.beam` (a deterministic
lower bound). Every log-probability is in **nats**.
"""
