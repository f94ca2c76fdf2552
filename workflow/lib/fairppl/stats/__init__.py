"""Statistics shared by every stage: per-unit scores to per-language rates as ratios of sums
(:mod:`.metrics`), paired bootstrap intervals over aligned units (:mod:`.bootstrap`), the
correlates of difficulty with rank correlations, exact p-values and the Benjamini-Hochberg
correction (:mod:`.correlates`), fairness across languages (hardest/easiest ratio, Gini
coefficient) with the tokenizer premium (:mod:`.fairness`), and slope tests that respect
language families (within-family permutations, family means, family-clustered errors:
:mod:`.family`).

May import: :mod:`fairppl.core`, :mod:`fairppl.corpus` (which languages enter a common unit
set), :mod:`fairppl.ngram` (word tokens and vocabularies of the correlates).
"""
