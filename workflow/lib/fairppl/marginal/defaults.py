"""The marginal estimators' sampling defaults, in one place: what :func:`.api.estimate` and the
lm-guided proposal (:mod:`.lm_guided`) use when a caller passes none, equal to the study
config's defaults of ``marginal.K``, ``marginal.L`` and ``marginal.M``
(workflow/schemas/config.schema.yaml; tests/unit/test_settings.py checks they agree).
"""

from __future__ import annotations

#: Samples per unit (paths for nbest).
DEFAULT_K = 32
#: lm-guided block length in characters; None: the longest default token of the text.
DEFAULT_L = None
#: lm-guided candidates per block (Chirkova et al. use 128; ranks past about 10 are almost never
#: sampled, their appendix D, and every candidate costs LM work per distinct prefix).
DEFAULT_M = 16
