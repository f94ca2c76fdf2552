"""Statistics shared by every stage: per-unit scores to per-language rates as ratios of sums
(:mod:`.metrics`), paired bootstrap intervals over aligned units (:mod:`.bootstrap`), and the
correlates of difficulty with rank correlations and exact p-values (:mod:`.correlates`).

May import: :mod:`fairppl.core`, :mod:`fairppl.ngram` (word tokens and vocabularies of the
correlates).
"""
