"""Reduced precision for the pretrained LMs (config ``pretrained.dtype``): what it was measured to
cost, and the start-up check that refuses a precision whose error the report cannot absorb
(docs/study.md, "Precision"; the figures: docs/benchmarks.md, "Reduced precision").

The errors of a reduced precision are systematic per verse (the same verse, the same shift every
run), so they do not shrink with more units or samples, while the intervals the report's
conclusions rest on do:

* the **language comparisons** (paired bootstrap intervals of the difference of two languages'
  bits per verse) shrink as 1/sqrt(units scored); what a precision moves there is the shift of
  a paired difference (language a's mean shift minus language b's);
* the **marginal gap** (LM-guided estimate minus the default tokenization's log-probability,
  shown per verse with its Monte Carlo interval) has intervals that shrink as 1/sqrt(K); what a
  precision moves there is the gap of each verse.

:func:`check_dtype` scales the float32 intervals measured by ``bench/bench_dtype.py`` to the
configured units and K, and refuses a precision whose measured shift exceeds them: such a shift
can move an estimate out of the interval the report draws around it.
"""

from __future__ import annotations

import math

from ..core.errors import InputError

#: What ``bench/bench_dtype.py`` measured on the shared 2-core CPU (2026-11-26; 20 Bible test
#: verses in each of eng deu rus ara hin zho, the marginal gap on 3 of them at K=8, M=16), per
#: model of the sheet and precision: the largest shift of a paired difference of two languages'
#: mean bits per verse (``pair_shift_bits``) and the mean |delta| of a verse's marginal gap
#: (``gap_shift_bits``), in bits; or ``overflow``: what failed (NaN/inf log-probabilities).
MEASURED = {
    "smollm2-135m": {
        "bfloat16": {"pair_shift_bits": 3.090, "gap_shift_bits": 0.865},
        "float16": {"pair_shift_bits": 0.094, "gap_shift_bits": 0.072},
    },
    "gemma3-270m": {
        "bfloat16": {"pair_shift_bits": 0.914, "gap_shift_bits": 0.760},
        "float16": {"overflow": "NaN log-probabilities on Bible verses (activations beyond "
                                "float16's range)"},
    },
}
#: The float32 intervals of the same run, per model: the smallest half-width of a paired
#: difference's 95% bootstrap interval over ``REFERENCE_UNITS`` verses, and the median half-width
#: of a verse's gap interval (90% BCa) at ``REFERENCE_K`` samples (bits).
REFERENCE = {
    "smollm2-135m": {"pair_half_bits": 16.97, "gap_half_bits": 0.568},
    "gemma3-270m": {"pair_half_bits": 9.89, "gap_half_bits": 0.405},
}
REFERENCE_UNITS = 20
REFERENCE_K = 8
#: Units a language is scored on when ``scoring.max_units`` is null (all of the evaluation
#: split): the Bible's 4,751 test verses, rounded up (more units, narrower intervals).
ALL_UNITS = 5000
MEASURE = ("measure it with bench/bench_dtype.py and add its figures to "
           "fairppl.lm.precision.MEASURED")


def absorbed(model: str, dtype: str, units: int, K: int) -> dict[str, tuple[float, float, bool]]:
    """Per claim (``ranking``, ``gap``): ``(measured shift, interval half-width at units / K,
    whether the shift fits inside the half-width)``, in bits per verse, for a model measured
    in ``dtype`` without overflow (:data:`MEASURED`)."""
    m, ref = MEASURED[model][dtype], REFERENCE[model]
    pair = ref["pair_half_bits"] * math.sqrt(REFERENCE_UNITS / units)
    gap = ref["gap_half_bits"] * math.sqrt(REFERENCE_K / K)
    return {"ranking": (m["pair_shift_bits"], pair, m["pair_shift_bits"] <= pair),
            "gap": (m["gap_shift_bits"], gap, m["gap_shift_bits"] <= gap)}


def marginal_runs_pretrained(config: dict, models: list) -> bool:
    """Whether the marginal stage runs a pretrained LM: LM estimators configured and a model of
    the sheet (rows with ``corpora``) on one of ``marginal.corpora``."""
    marginal = config.get("marginal") or {}
    if not (marginal.get("lm") or {}).get("estimators", ["default", "lm-guided"]):
        return False
    return any(c in row.corpora for row in models for c in marginal.get("corpora", []))


def check_dtype(config: dict, source: str, models: list[str],
                marginal_runs_pretrained: bool) -> None:
    """Refuse ``pretrained.dtype`` for the sheet's ``models`` (ids) where it was not measured,
    overflowed, or shifts more than the interval it would sit in: the language comparisons at
    ``scoring.max_units`` units, and (where the marginal stage runs a pretrained LM:
    ``marginal_runs_pretrained``) the per-verse gap intervals at ``marginal.K``."""
    dtype = (config.get("pretrained") or {}).get("dtype", "float32")
    if dtype == "float32":
        return
    units = (config.get("scoring") or {}).get("max_units") or ALL_UNITS
    K = (config.get("marginal") or {}).get("K", 32)
    where = "docs/benchmarks.md, \"Reduced precision\""
    for model in models:
        measured = MEASURED.get(model, {}).get(dtype)
        if measured is None:
            raise InputError(
                f"field 'pretrained.dtype': {dtype} was never measured against float32 for "
                f"model {model!r}, so the report could not say what it moves; expected float32, "
                f"or {MEASURE}", path=source)
        if "overflow" in measured:
            raise InputError(
                f"field 'pretrained.dtype': model {model!r} overflows in {dtype}: "
                f"{measured['overflow']} ({where}); expected float32 or a precision measured "
                f"to work for every model of the sheet", path=source)
        verdict = absorbed(model, dtype, units, K)
        shift, half, ok = verdict["ranking"]
        if not ok:
            raise InputError(
                f"field 'pretrained.dtype': {dtype} shifts the difference of two languages' bits "
                f"per verse by up to {shift:.3f} bits for model {model!r} ({where}), more than "
                f"the half-width of its paired interval at scoring.max_units {units} "
                f"({half:.3f} bits): the report's language comparisons would not hold; expected "
                f"float32, or a precision whose shift is below that", path=source)
        shift, half, ok = verdict["gap"]
        if marginal_runs_pretrained and not ok:
            raise InputError(
                f"field 'pretrained.dtype': {dtype} moves a verse's marginal gap by {shift:.3f} "
                f"bits on average for model {model!r} ({where}), more than the half-width of "
                f"the gap's Monte Carlo interval at marginal.K {K} ({half:.3f} bits): the "
                f"report's marginal section could not tell the gap from the precision's error; "
                f"expected float32 while the marginal stage runs the pretrained LMs (or "
                f"marginal.lm.estimators: [] to leave them out of it)", path=source)
