"""fairppl: fair cross-language language-modelling difficulty.

The science of the study lives here as pure, unit-tested functions; the Snakemake workflow under
``workflow/`` only wires them together. Logs are natural (nats) unless a name says ``bits``.
"""

__version__ = "0.1.0"
