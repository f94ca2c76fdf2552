"""The Shannon game (Bimbot, El-Bèze & Jardino): language models bet on the next word after a
truncated unit, over a closed set of m outcomes (the language's vocabulary words, ``<unk>`` for
every other word and ``</s>`` for the end of the unit); the gambling perplexity is the inverse
geometric mean of the bets on the correct outcomes. Exhaustive and randomized truncations, lists
limited to the l best bets with the floor for the rest, Shannon's rank-based entropy bounds, the
paper's discounted bigram, bettors built from the study's models, and the campaign files that let
another site bet without our models.

May import: :mod:`fairppl.core`, :mod:`fairppl.config`, :mod:`fairppl.corpus`,
:mod:`fairppl.tokenizers`, :mod:`fairppl.ngram`, :mod:`fairppl.neural`, :mod:`fairppl.stats`,
:mod:`fairppl.lm`, :mod:`fairppl.tokenlm` (the key/value scorer), :mod:`fairppl.marginal` (its
token vocabularies and the framed transformers LM).
"""
