"""The marginal-likelihood table (``results/tables/marginal.csv``): per-unit records of
:mod:`fairppl.marginal.units` summed into one row per corpus, language, model, tokenizer,
estimator, K, tau, L and M.

Every total is a sum over the row's units; every rate is a ratio of sums (as in
:mod:`fairppl.stats.metrics`), never a mean of per-unit ratios, except ``percent_nd`` (the mean over
units of each unit's %ND: every unit has the same number of samples). Units are in the column
names (``_nats``, ``_bits_per_char``, ...) and in :data:`MARGINAL_COLUMNS`.

The interval of a sum is **not** the sum of per-unit intervals. Two intervals, two questions:

* ``logp_ci_*``, ``gap_ci_*``, ``bpec_ci_*`` (**over units**): percentile intervals of a paired
  bootstrap over units (:mod:`fairppl.stats.bootstrap`: the same draws for the estimate, the default
  score and their gap; the draws depend only on the number of units and the settings, so rows
  on the same units are paired). They state how much the total depends on which units were
  drawn from the language's text. A sampled estimator's Monte Carlo error is inside them: each
  unit's estimate carries its own error into the spread of the unit estimates that the
  bootstrap resamples, so for the language's total the units bootstrap alone has the right
  variance (two-stage sampling, as in Davison & Hinkley 1997 on hierarchical data: resampling
  the K samples inside each drawn unit as well would count that error twice).
* ``logp_mc_ci_*``, ``gap_mc_ci_*`` (**Monte Carlo**, these units): where the true total of
  *these* units may lie given that each sampled unit estimate rests on K samples
  (:func:`fairppl.marginal.estimate.mc_interval` over the per-unit K importance log-weights,
  ``log_weights``: a bootstrap-t over the K weights inside each unit, centred on the estimate
  plus its Jensen correction, since ``log mean(w)`` is biased low and that bias adds up over
  units). What the units bootstrap cannot show is this bias and the error of the units at hand;
  this interval shows both. Per estimator: ``exact`` (and units whose lattice was enumerated)
  have no Monte Carlo error (their value enters both ends); ``wr`` and ``lm-guided``
  resample their K weights; a unit whose K weights are all
  equal (every sample the same path, e.g. the default) has no spread to resample and enters by
  the bound from its default log P (certain: a term of the marginal) to its estimate (which
  assumes the paths never drawn have no larger weight: resampling cannot see them either);
  ``mc_bounded_units`` counts them. ``default``, ``nbest`` and ``beam`` (any row of lower
  bounds without samples) have no Monte Carlo error: the marginal lies above them; ``wor`` /
  ``wor-1best`` are Horvitz-Thompson sums without a variance estimate here (their spread over
  units is in the interval over units). No Monte Carlo interval for either, and ``mc_note`` says
  why, as it does for K = 1 (one sample has no spread).

No inference from a handful of units: a row with fewer than ``min_units`` units (config
``marginal.min_units``) keeps its numbers but every interval column is empty, and ``ci_note``
says why (a bootstrap over 2 units has 3 distinct replicates).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from ..stats.bootstrap import (BootstrapSettings, percentile_interval, replicate_ratios,
                               resample_counts)
from ..stats.metrics import english_char_counts
from .estimate import mc_interval

LN2 = math.log(2.0)

#: The rows' keys: one row per distinct combination.
GROUP_KEYS = ["corpus", "language", "model", "tokenizer", "split", "estimator", "K", "tau", "L",
              "M"]

#: Columns of the table, with their units.
MARGINAL_COLUMNS = {
    "corpus": "corpus id",
    "language": "language id",
    "model": "model id (kenlm-subword-o<order>, transformer, or a models.tsv id)",
    "tokenizer": "tokenizer id (native: the pretrained model's own)",
    "split": "scored split",
    "estimator": "estimator (fairppl.marginal.api.ESTIMATORS)",
    "K": "samples or paths per unit (count); empty where the estimator takes none",
    "tau": "unigram proposal temperature; empty without a unigram lattice",
    "L": "lm-guided block length (characters); empty: the longest default token",
    "M": "lm-guided candidates per block (count)",
    "mode": "unigram proposal mode (independent or consistent)",
    "start_token": "start context every log-probability is conditioned on",
    "end_scored": "whether the end token is charged",
    "n_units": "units summed (count)",
    "logp_default_nats": "log P of the default tokenizations, summed (nats)",
    "logp_nats": "log P estimate (marginal over tokenizations), summed (nats)",
    "logp_ci_low_nats": "logp_nats, lower end of the paired bootstrap interval over units (nats)",
    "logp_ci_high_nats": "logp_nats, upper end of the interval (nats)",
    "gap_nats": "logp_nats - logp_default_nats (nats)",
    "gap_ci_low_nats": "gap_nats, lower end of the paired bootstrap interval over units (nats)",
    "gap_ci_high_nats": "gap_nats, upper end of the interval (nats)",
    "gap_bits_per_char": "gap in bits per character of the language's own text (bits/char)",
    "relative_gap_percent": "gap as a share of the default code length (% of bits)",
    "percent_nd": "samples not the default tokenization, mean over units (%)",
    "t0_share": "lm-guided blocks within L characters (fraction of blocks)",
    "t1_share": "lm-guided blocks cut at default-token boundaries (fraction of blocks)",
    "t2_share": "lm-guided blocks cut raw, default outside the proposal (fraction of blocks)",
    "entropy_nats_per_token": "unigram lattice entropy at tau per default token (nats/token)",
    "n_tokens": "default tokens, end token excluded (count)",
    "n_chars": "characters of the language's text (count)",
    "n_bytes": "UTF-8 bytes of the language's text (count)",
    "n_words": "whitespace-separated words (count)",
    "n_english_chars": "characters of the English text of the same units (count)",
    "n_exact_units": "units whose value is exact (enumerated or the n-gram forward) (count)",
    "lower_bound": "every unit's value can only sit below the marginal",
    "seconds": "wall time of the estimator, summed (s)",
    "lm_calls": "LM forward calls, summed (count)",
    "token_positions": "token positions run through the LM, summed (count)",
    "bpec_default": "default code length per English character (bits/char of English)",
    "bpec": "code length from the estimate per English character (bits/char of English)",
    "bpec_ci_low": "bpec, lower end of the paired bootstrap interval (bits/char of English)",
    "bpec_ci_high": "bpec, upper end of the interval (bits/char of English)",
    "ppl_word_default": "perplexity per whitespace word, default score (Cao & Rimell)",
    "ppl_word": "perplexity per whitespace word from the estimate (Cao & Rimell)",
    "logp_mc_ci_low_nats": "logp_nats, lower end of the Monte Carlo interval of these units "
                           "(nats)",
    "logp_mc_ci_high_nats": "logp_nats, upper end of the Monte Carlo interval (nats)",
    "gap_mc_ci_low_nats": "gap_nats, lower end of the Monte Carlo interval (nats)",
    "gap_mc_ci_high_nats": "gap_nats, upper end of the Monte Carlo interval (nats)",
    "mc_bounded_units": "units whose K samples were one path, entering by a bound (count)",
    "mc_correction_nats": "summed Jensen correction: the Monte Carlo interval is centred on "
                          "logp_nats plus this (nats; log mean(w) is biased low)",
    "mc_note": "why there is no Monte Carlo interval (empty: there is one)",
    "ci_note": "why the interval columns are empty (empty: they are filled)",
    "min_units": "fewest units a row needs for intervals (count)",
    "ci_level": "central coverage of the intervals (fraction)",
    "ci_replicates": "bootstrap replicates B (count)",
    "ci_seed": "seed of the bootstrap draws",
}


def _shares(part: pl.DataFrame, name: str):
    """Block-weighted share of ``name`` (t0/t1/t2); None without blocks."""
    ok = part.filter(pl.col(name).is_not_null() & pl.col("n_blocks").is_not_null())
    blocks = ok["n_blocks"].sum()
    if not ok.height or not blocks:
        return None
    return float((ok[name] * ok["n_blocks"]).sum() / blocks)


def _intervals(part: pl.DataFrame, settings: BootstrapSettings) -> dict:
    """Paired bootstrap intervals of the summed estimate, the summed gap and BPEC."""
    n = part.height
    logp = part["logp"].to_numpy().astype(float)
    default = part["logp_default"].to_numpy().astype(float)
    english = part["n_english_chars"].to_numpy().astype(float)
    counts = resample_counts(n, settings.replicates, settings.seed)
    sums = counts @ np.column_stack([logp, logp - default])
    low, high = percentile_interval(sums, settings.level)
    bpec = replicate_ratios(counts, -logp / LN2, english)
    b_low, b_high = percentile_interval(bpec, settings.level)
    return {"logp_ci_low_nats": float(low[0]), "logp_ci_high_nats": float(high[0]),
            "gap_ci_low_nats": float(low[1]), "gap_ci_high_nats": float(high[1]),
            "bpec_ci_low": float(b_low), "bpec_ci_high": float(b_high)}


#: Why a row has no Monte Carlo interval.
_WOR = ("wor", "wor-1best")
_HT_NOTE = "Horvitz-Thompson without replacement: no variance estimate, no interval"
_BOUND_NOTE = "a lower bound without samples to resample: the marginal lies above"


def _mc_intervals(part: pl.DataFrame, settings: BootstrapSettings) -> dict:
    """The Monte Carlo interval of the row's summed estimate and gap (module docstring)."""
    estimator = part["estimator"][0]
    exact = part["enumerated"].fill_null(False).to_numpy()
    logp = part["logp"].to_numpy().astype(float)
    weights = (part["log_weights"].to_list() if "log_weights" in part.columns
               else [None] * part.height)
    sampled = np.array([w is not None for w in weights])
    if estimator == "exact" or exact.all():
        low = high = float(logp.sum())
        note, bounded, correction = None, 0, 0.0
    elif estimator in _WOR:
        return {"mc_note": _HT_NOTE}
    elif not sampled.any() and part["lower_bound"].fill_null(False).all():
        return {"mc_note": _BOUND_NOTE}  # default, nbest, beam: no Monte Carlo error
    elif not (sampled | exact).all():
        return {"mc_note": "no per-unit log-weights recorded: rerun the per-unit tables"}
    else:
        got = mc_interval([w for w, s in zip(weights, sampled) if s],
                          part["logp_default"].filter(pl.Series(sampled)).to_numpy(),
                          settings.level, seed=settings.seed)
        if got.low is None:
            return {"mc_note": got.note}
        fixed = float(logp[exact & ~sampled].sum())
        low, high, note, bounded = got.low + fixed, got.high + fixed, None, got.n_bounded
        correction = float(got.correction_nats)
    default = float(part["logp_default"].sum())
    return {"logp_mc_ci_low_nats": low, "logp_mc_ci_high_nats": high,
            "gap_mc_ci_low_nats": low - default, "gap_mc_ci_high_nats": high - default,
            "mc_bounded_units": bounded, "mc_correction_nats": correction, "mc_note": note}


def _row(part: pl.DataFrame, settings: BootstrapSettings, min_units: int) -> dict:
    default = float(part["logp_default"].sum())
    logp = float(part["logp"].sum()) if part["logp"].null_count() == 0 else None
    n_chars, n_words = int(part["n_chars"].sum()), int(part["n_words"].sum())
    english = int(part["n_english_chars"].sum())
    tokens = int(part["n_tokens"].sum())
    entropy = part["entropy"]
    row = {
        "mode": part["mode"][0], "start_token": part["start_token"][0],
        "end_scored": bool(part["end_scored"].all()), "n_units": part.height,
        "logp_default_nats": default, "logp_nats": logp,
        "percent_nd": part["percent_nd"].mean() if part["percent_nd"].null_count() == 0
        else None,
        "t0_share": _shares(part, "t0"), "t1_share": _shares(part, "t1"),
        "t2_share": _shares(part, "t2"),
        "entropy_nats_per_token": float(entropy.sum()) / tokens
        if entropy.null_count() == 0 and tokens else None,
        "n_tokens": tokens, "n_chars": n_chars, "n_bytes": int(part["n_bytes"].sum()),
        "n_words": n_words, "n_english_chars": english,
        "n_exact_units": int(part["enumerated"].fill_null(False).sum()),
        "lower_bound": bool(part["lower_bound"].fill_null(False).all()),
        "seconds": float(part["seconds"].sum()), "lm_calls": int(part["lm_calls"].sum()),
        "token_positions": int(part["positions"].sum()),
        "bpec_default": -default / LN2 / english,
        "ppl_word_default": math.exp(-default / n_words) if n_words else None,
    }
    if logp is None:
        return row
    gap = logp - default
    row |= {
        "gap_nats": gap, "gap_bits_per_char": gap / LN2 / n_chars,
        "relative_gap_percent": 100.0 * gap / -default if default else None,
        "bpec": -logp / LN2 / english,
        "ppl_word": math.exp(-logp / n_words) if n_words else None,
    }
    if part.height < min_units:
        row["ci_note"] = (f"{part.height} units, fewer than min_units = {min_units}: no "
                          f"intervals")
        return row
    return row | _intervals(part, settings) | _mc_intervals(part, settings)


def marginal_table(per_unit: pl.DataFrame, units: pl.DataFrame,
                   settings: BootstrapSettings, min_units: int = 20) -> pl.DataFrame:
    """One row per :data:`GROUP_KEYS` of the per-unit records ``per_unit``
    (:func:`fairppl.marginal.units.unit_table` rows) with the columns of
    :data:`MARGINAL_COLUMNS`. ``units``: the prepared corpus tables (English reference
    characters for BPEC); ``min_units``: rows on fewer units get no intervals (module
    docstring). Raises ValueError if a unit has no English counterpart or ``min_units`` < 2."""
    if min_units < 2:
        raise ValueError(f"min_units={min_units}: a bootstrap over fewer than 2 units has no "
                         f"spread, expected at least 2")
    english = english_char_counts(units)
    joined = per_unit.join(english, on=["corpus", "unit_id"], how="left")
    lost = joined.filter(pl.col("n_english_chars").is_null())
    if lost.height:
        first = lost.row(0, named=True)
        raise ValueError(f"{lost.height} units have no English reference text, e.g. corpus "
                         f"'{first['corpus']}' unit '{first['unit_id']}': the corpus is not "
                         f"aligned")
    twice = joined.group_by(GROUP_KEYS + ["unit_id"]).len().filter(pl.col("len") > 1)
    if twice.height:
        first = twice.row(0, named=True)
        raise ValueError(f"unit '{first['unit_id']}' appears {first['len']} times for "
                         f"{first['language']} {first['model']} {first['estimator']}: expected "
                         f"one record per unit and setting")
    rows = []
    for key, part in joined.sort(GROUP_KEYS + ["unit_id"], nulls_last=True).group_by(
            GROUP_KEYS, maintain_order=True):
        rows.append(dict(zip(GROUP_KEYS, key)) | _row(part, settings, min_units))
    schema = {k: joined.schema[k] for k in GROUP_KEYS}
    table = pl.DataFrame(rows, infer_schema_length=None).cast(schema)
    for col in MARGINAL_COLUMNS:
        if col not in table.columns:
            kind = pl.String if col.endswith("_note") else pl.Float64
            table = table.with_columns(pl.lit(None, dtype=kind).alias(col))
    table = table.with_columns(min_units=pl.lit(min_units), ci_level=pl.lit(settings.level),
                               ci_replicates=pl.lit(settings.replicates),
                               ci_seed=pl.lit(settings.seed))
    return table.select(list(MARGINAL_COLUMNS))
