"""Token-level language models behind one interface, for scoring many token sequences of one text
with the work shared across them: the contract (:mod:`.interface`: :class:`~.interface.TokenLM`,
the incremental :class:`~.interface.Session`, the :class:`~.interface.TreeLM` that a key/value
session needs), a transformers causal LM (:mod:`.lm_hf`), a KenLM n-gram over a tokenizer's
pieces (:mod:`.lm_kenlm`), the incremental key/value scorer (:mod:`.kv_tree`: its forward passes,
with :mod:`.kv_layout`, a pass's rows and mask, and :mod:`.kv_store`, the stored key/values), what
they share (:mod:`.prefix_tree`), and the drivers that answer the LM requests of estimators written as
generators, one unit alone or many units per LM call (:mod:`.batch`). Used by the marginal
likelihood over tokenizations (:mod:`fairppl.marginal`) and the Shannon game
(:mod:`fairppl.shannon`). Every log-probability is in **nats**.

May import: :mod:`fairppl.core`, :mod:`fairppl.ngram`, :mod:`fairppl.lm`.
"""
