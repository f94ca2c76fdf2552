"""The n-gram model families, all through KenLM: the one module that runs the tool
(:mod:`.kenlm_tool`: lmplz, build_binary, loading, the scoring loop), the open-vocabulary
character n-gram (:mod:`.char`), the closed-vocabulary word n-gram with its UNK correction
(:mod:`.word`) and which languages get it (:mod:`.word_sweep`), the subword n-gram over
SentencePiece pieces (:mod:`.subword`), and the training text of all three (:mod:`.training_text`).

May import: :mod:`fairppl.core`.
"""
