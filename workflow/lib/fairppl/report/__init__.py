"""The study's report (``results/report.html``): HTML tables with units in every header
(:mod:`.html`), language rankings and their agreement (:mod:`.rankings`), model comparisons
(:mod:`.compare`), the marginal-likelihood section (:mod:`.marginal`), the settings in words
(:mod:`.settings`), figures (:mod:`.plots`, :mod:`.plots_marginal`), each section's rows apart
from its prose and HTML (:mod:`.frames`) and the page itself (:mod:`.pages`). A run's cost per
rule family, read from its benchmark files, is benchmark tooling: ``bench/scale_model.py``.

May import: every stage package below it (:mod:`fairppl.core` up to :mod:`fairppl.marginal`);
nothing imports it except the workflow's scripts.
"""
