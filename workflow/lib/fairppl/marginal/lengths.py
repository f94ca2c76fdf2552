"""Which proposal should a user pick, at what text length? Every estimator against the exact
marginal on prefixes of real units of growing length, with its cost.

The ground truth is the subword n-gram's exact marginal (:mod:`.exact`, the forward algorithm
over KenLM states), computable at any length, so the comparison runs from one word to a whole
verse. For each unit and each prefix length n (the unit's first n whitespace words; the whole
unit when it has fewer), :func:`length_sweep` runs each configured estimator and records its
error against the exact value, its wall time and its LM work (calls and token positions: the
cost that carries over to a neural LM, where a position costs far more than an n-gram lookup).
:func:`length_summary` aggregates per estimator and prefix length.

Lower bounds (``default``, ``beam``, ``decoding-free``: records with ``lower_bound`` true) can
only sit below the exact marginal: their error is never positive, so their RMSE is how much
mass they miss. The rows say so (``lower_bound``), and so does :func:`recommendation`.

All log-probabilities are natural logs (**nats**).
"""

from __future__ import annotations

from typing import Callable, Sequence

import polars as pl

from ..core.runner import document_rng
from .api import estimate

#: What runs by default: (name in the tables, estimator, options of :func:`api.estimate`).
DEFAULT_ESTIMATORS = (
    ("lm-guided", "lm-guided", {}),
    ("decoding-free", "decoding-free", {}),
    ("wor-1best", "wor-1best", {}),
    ("beam", "beam", {}),
)


def prefix(text: str, n_words: int) -> str:
    """The first ``n_words`` whitespace-separated words of ``text`` joined by one space (the whole
    text, re-joined, when it has fewer)."""
    if n_words < 1:
        raise ValueError(f"n_words={n_words}: expected at least 1")
    return " ".join(text.split()[:n_words])


def length_sweep(lm, vocab, encode: Callable[[str], Sequence[int]], units: pl.DataFrame, *,
                 word_counts: Sequence[int], K: int, M: int, seed: int, unigram_model=None,
                 estimators=DEFAULT_ESTIMATORS) -> pl.DataFrame:
    """One row per (unit, prefix length, estimator): ``unit_id``, ``n_words`` (asked),
    ``n_chars``, ``estimator``, ``logp``/``exact``/``logp_default`` (nats), ``error_nats``
    (estimate - exact), ``lower_bound`` (the estimator's value can only sit below the marginal),
    ``seconds``, ``lm_calls``, ``positions``. Each estimator starts with the LM's cache cleared
    (``clear_cache``: the n-gram's prefix states), so ``positions`` is that estimator's own
    work, not less because an earlier estimator scored the same prefixes. Prefixes that repeat a
    shorter one (a unit with fewer words) are skipped. Seeds: (seed, unit, n_words,
    estimator)."""
    rows = []
    for uid, text in zip(units["unit_id"].cast(pl.String), units["text"]):
        seen = set()
        for n in sorted(set(int(w) for w in word_counts)):
            piece = prefix(text, n)
            if piece in seen:
                continue
            seen.add(piece)
            ids = encode(piece)
            exact = estimate(lm, vocab, piece, "exact", rng=document_rng(seed, "exact"),
                             default_ids=ids, unigram_model=unigram_model)
            for name, est, options in estimators:
                lm.clear_cache()
                rec = estimate(lm, vocab, piece, est, default_ids=ids, K=K, L=None, M=M,
                               unigram_model=unigram_model,
                               rng=document_rng(seed, f"{uid}|{n}|{name}"), **options)
                rows.append({"unit_id": uid, "n_words": n, "n_chars": len(piece),
                             "estimator": name, "logp": rec["logp"], "exact": exact["logp"],
                             "logp_default": exact["logp_default"],
                             "error_nats": rec["logp"] - exact["logp"],
                             "lower_bound": bool(rec["lower_bound"]),
                             "seconds": rec["seconds"], "lm_calls": rec["lm_calls"],
                             "positions": rec["positions"]})
    return pl.DataFrame(rows, schema={
        "unit_id": pl.String, "n_words": pl.Int64, "n_chars": pl.Int64, "estimator": pl.String,
        "logp": pl.Float64, "exact": pl.Float64, "logp_default": pl.Float64,
        "error_nats": pl.Float64, "lower_bound": pl.Boolean, "seconds": pl.Float64,
        "lm_calls": pl.Int64, "positions": pl.Int64})


#: Columns of :func:`length_summary`, with their units.
SUMMARY_COLUMNS = {
    "language": "language id",
    "estimator": "estimator (proposal)",
    "n_words": "prefix length asked (whitespace words)",
    "n_units": "prefixes (count)",
    "mean_chars": "prefix length, mean (characters)",
    "rmse_nats": "root mean square of estimate - exact (nats)",
    "lower_bound": "a lower bound: estimate - exact is never positive",
    "median_abs_error_nats": "median |estimate - exact| (nats)",
    "gap_nats": "exact - default, mean (nats): the error of not marginalizing",
    "seconds": "wall time per prefix, mean (s)",
    "positions": "LM token positions per prefix, mean (count)",
}


def length_summary(sweep: pl.DataFrame) -> pl.DataFrame:
    """Per (language, estimator, prefix length): the error against the exact marginal and the
    cost (:data:`SUMMARY_COLUMNS`); ``sweep`` has :func:`length_sweep`'s columns and a
    ``language`` column."""
    out = sweep.group_by("language", "estimator", "n_words").agg(
        pl.len().alias("n_units"), pl.col("n_chars").mean().alias("mean_chars"),
        (pl.col("error_nats") ** 2).mean().sqrt().alias("rmse_nats"),
        pl.col("lower_bound").all(),
        pl.col("error_nats").abs().median().alias("median_abs_error_nats"),
        (pl.col("exact") - pl.col("logp_default")).mean().alias("gap_nats"),
        pl.col("seconds").mean(), pl.col("positions").cast(pl.Float64).mean())
    return out.select(list(SUMMARY_COLUMNS)).sort("language", "estimator", "n_words")


def pooled_summary(summary: pl.DataFrame) -> pl.DataFrame:
    """:func:`length_summary` pooled over languages, per (estimator, prefix length): prefixes
    summed, RMSE over all of them (from each language's RMSE and count), the other columns
    averaged over languages."""
    return summary.group_by("estimator", "n_words").agg(
        pl.col("n_units").sum(), pl.col("mean_chars").mean(),
        ((pl.col("rmse_nats") ** 2 * pl.col("n_units")).sum() / pl.col("n_units").sum())
        .sqrt().alias("rmse_nats"), pl.col("lower_bound").all(), pl.col("gap_nats").mean(),
        pl.col("seconds").mean(), pl.col("positions").mean()).sort("estimator", "n_words")


def recommendation(summary: pl.DataFrame, tolerance_nats: float = 0.01) -> list[str]:
    """Per prefix length, the cheapest estimator (fewest LM positions) whose RMSE stays within
    ``tolerance_nats`` of the exact marginal, pooled over languages (:func:`pooled_summary`);
    a sentence per length. A lower bound's RMSE is the mass it misses (its error is never
    positive): the sentence says so."""
    pooled = pooled_summary(summary)
    out = []

    def what(row) -> str:
        bound = "; a lower bound, never above the exact value" if row["lower_bound"] else ""
        return f"{row['estimator']} (RMSE {row['rmse_nats']:.3g} nats{bound}"

    for (n,), part in pooled.sort("n_words").group_by(["n_words"], maintain_order=True):
        ok = part.filter(pl.col("rmse_nats") <= tolerance_nats).sort("positions")
        chars = part["mean_chars"].mean()
        if ok.height:
            best = ok.row(0, named=True)
            out.append(f"{n} words (~{chars:.0f} characters): {what(best)}, "
                       f"{best['positions']:.0f} positions)")
        else:
            best = part.sort("rmse_nats").row(0, named=True)
            out.append(f"{n} words (~{chars:.0f} characters): none within {tolerance_nats} nats; "
                       f"closest {what(best)})")
    return out
