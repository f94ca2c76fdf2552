"""Why some languages are harder: morphological counting complexity (MCC) from the published
values, Apertium's paradigms and UniMorph lexicons, forms per lemma, lemmatized copies of the
multi-text, regressions of BPEC on each morphology measure, and the per-language difficulty model
of Mielke et al. (2019).

May import: :mod:`fairppl.core`, :mod:`fairppl.config`, :mod:`fairppl.corpus`,
:mod:`fairppl.stats` (metrics, bootstrap, correlates) and :mod:`fairppl.marginal` (its tables).
"""
