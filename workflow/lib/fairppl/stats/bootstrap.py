"""Paired bootstrap intervals over aligned units for ratios of sums (BPEC, bits per utterance).

A replicate draws n units with replacement from the n aligned units of a comparison. Every
column compared on those units (every language, every model) is resampled with **the same**
draws: one B x n matrix of counts (how often replicate b drew unit i) is shared by all columns,
so differences between columns keep the pairing of the units (a hard verse is hard in every
language). A rate is a ratio of sums in every replicate, sum_i c_bi x_i / sum_i c_bi y_i, never a
mean of per-unit ratios. Intervals are percentile intervals of the replicates.

The draws depend only on (n, B, seed): two tables of the same units with the same settings get
identical intervals, and units are put in one order (sorted unit ids) before resampling.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import polars as pl

from .metrics import OPTIONAL_KEYS, model_order


@dataclass(frozen=True)
class BootstrapSettings:
    """Replicates B, seed of the draws, and the central coverage of the intervals (0.95 =
    2.5th and 97.5th percentiles)."""

    replicates: int = 1000
    seed: int = 0
    level: float = 0.95

    def describe(self) -> str:
        """The settings in words, for table captions."""
        return (f"{self.level:.0%} percentile intervals of a paired bootstrap over units "
                f"(B = {self.replicates} replicates, seed {self.seed})")


def resample_counts(n: int, replicates: int, seed: int) -> np.ndarray:
    """A (replicates x n) float matrix: entry (b, i) = how many times replicate b drew unit i
    (each row sums to n). Deterministic in (n, replicates, seed)."""
    if n < 1:
        raise ValueError("resample_counts: no units to resample")
    draws = np.random.default_rng(seed).integers(0, n, size=(replicates, n))
    flat = draws + (np.arange(replicates) * n)[:, None]
    return np.bincount(flat.ravel(), minlength=replicates * n).reshape(replicates, n).astype(float)


def replicate_ratios(counts: np.ndarray, numerator: np.ndarray,
                     denominator: np.ndarray) -> np.ndarray:
    """Ratio of sums per replicate: (B x k) from per-unit ``numerator`` and ``denominator``
    (n, or n x k for k columns resampled with the same draws)."""
    return (counts @ numerator) / (counts @ denominator)


def percentile_interval(replicates: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) percentiles of ``replicates`` along axis 0 with central coverage ``level``."""
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(replicates, [tail, 1.0 - tail], axis=0)
    return low, high


def ratio_interval(numerator, denominator, settings: BootstrapSettings) -> tuple[float, float]:
    """Interval of sum(numerator) / sum(denominator) over units (units in the given order)."""
    num = np.asarray(numerator, dtype=float)
    counts = resample_counts(len(num), settings.replicates, settings.seed)
    low, high = percentile_interval(
        replicate_ratios(counts, num, np.asarray(denominator, dtype=float)), settings.level)
    return float(low), float(high)


def difference_interval(num_a, den_a, num_b, den_b,
                        settings: BootstrapSettings) -> tuple[float, float, float]:
    """Paired interval of ratio_a - ratio_b over the same units (the same draws for both):
    (estimate, low, high). Both ratios are ratios of sums."""
    num = np.column_stack([np.asarray(num_a, float), np.asarray(num_b, float)])
    den = np.column_stack([np.asarray(den_a, float), np.asarray(den_b, float)])
    counts = resample_counts(num.shape[0], settings.replicates, settings.seed)
    reps = replicate_ratios(counts, num, den)
    low, high = percentile_interval(reps[:, 0] - reps[:, 1], settings.level)
    estimate = num[:, 0].sum() / den[:, 0].sum() - num[:, 1].sum() / den[:, 1].sum()
    return float(estimate), float(low), float(high)


#: Interval columns added to the bits-per-utterance tables, with their units.
INTERVAL_COLUMNS = {
    "bpec_ci_low": "BPEC, lower end of the interval (bits/char of English)",
    "bpec_ci_high": "BPEC, upper end of the interval (bits/char of English)",
    "bpu_ci_low": "bits per utterance, lower end of the interval (bits/utterance)",
    "bpu_ci_high": "bits per utterance, upper end of the interval (bits/utterance)",
    "ci_level": "central coverage of the intervals (fraction)",
    "ci_replicates": "bootstrap replicates B (count)",
    "ci_seed": "seed of the bootstrap draws",
}

_KEYS = ["corpus", "language", "model", "tokenizer", "split"]


def _keys(frame: pl.DataFrame) -> list[str]:
    return _KEYS + [c for c in OPTIONAL_KEYS if c in frame.columns]


def interval_table(scores: pl.DataFrame, english: pl.DataFrame,
                   settings: BootstrapSettings) -> pl.DataFrame:
    """BPEC and bits-per-utterance intervals per (corpus, language, model, tokenizer, split) of
    per-unit ``scores`` (columns of fairppl.stats.metrics.SCORE_COLUMNS), each row on the units it
    scored, sorted by unit id: rows on the same unit set share the draws (paired).

    ``english`` has (corpus, unit_id, n_english_chars). BPEC intervals are null for
    closed-vocabulary rows (their bits do not spell out unseen words)."""
    keys = _keys(scores)
    joined = scores.join(english, on=["corpus", "unit_id"], how="left").sort(keys + ["unit_id"])
    counts_by_n: dict[int, np.ndarray] = {}
    rows = []
    for key, part in joined.group_by(keys, maintain_order=True):
        n = part.height
        if n not in counts_by_n:
            counts_by_n[n] = resample_counts(n, settings.replicates, settings.seed)
        bits = part["bits"].to_numpy().astype(float)
        den = np.column_stack([part["n_english_chars"].to_numpy().astype(float), np.ones(n)])
        reps = replicate_ratios(counts_by_n[n], np.column_stack([bits, bits]), den)
        low, high = percentile_interval(reps, settings.level)
        is_open = bool(part["open_vocabulary"].all())
        rows.append(dict(zip(keys, key)) | {
            "bpec_ci_low": float(low[0]) if is_open else None,
            "bpec_ci_high": float(high[0]) if is_open else None,
            "bpu_ci_low": float(low[1]), "bpu_ci_high": float(high[1])})
    schema = {k: pl.String for k in keys} | {k: pl.Float64 for k in list(INTERVAL_COLUMNS)[:4]}
    return pl.DataFrame(rows, schema=schema, orient="row").with_columns(
        ci_level=pl.lit(settings.level), ci_replicates=pl.lit(settings.replicates),
        ci_seed=pl.lit(settings.seed))


def with_intervals(table: pl.DataFrame, intervals: pl.DataFrame) -> pl.DataFrame:
    """``table`` (one row per key of :func:`interval_table`) with the interval columns beside
    each rate; keys match also where null (a pretrained LM's train_corpus)."""
    keys = [k for k in _keys(intervals) if k in table.columns]
    return table.join(intervals, on=keys, how="left", nulls_equal=True)


def paired_language_differences(scores: pl.DataFrame, english: pl.DataFrame,
                                settings: BootstrapSettings) -> pl.DataFrame:
    """For every (corpus, split, model, tokenizer) of open-vocabulary per-unit ``scores`` that
    are already on one common unit set, the BPEC difference between each language and the next
    easier one in that model's ranking, with its paired interval (bits/char of English).
    ``excludes_zero`` says whether the two ranks are distinguishable at this level."""
    joined = (scores.filter(pl.col("open_vocabulary"))
              .join(english, on=["corpus", "unit_id"], how="left"))
    rows = []
    for (corpus, split, model, tok), part in joined.group_by(
            ["corpus", "split", "model", "tokenizer"], maintain_order=True):
        wide_bits = part.pivot(on="language", index="unit_id", values="bits").sort("unit_id")
        eng = (part.select("unit_id", "n_english_chars").unique("unit_id")
               .join(wide_bits.select("unit_id"), on="unit_id", how="right"))
        languages = [c for c in wide_bits.columns if c != "unit_id"]
        if len(languages) < 2 or wide_bits.null_count().sum_horizontal().item():
            continue  # not on one common unit set: no paired comparison
        den = eng["n_english_chars"].to_numpy().astype(float)
        num = wide_bits.select(languages).to_numpy().astype(float)
        counts = resample_counts(num.shape[0], settings.replicates, settings.seed)
        reps = replicate_ratios(counts, num, den[:, None].repeat(len(languages), axis=1))
        point = num.sum(axis=0) / den.sum()
        order = np.argsort(-point)
        for a, b in zip(order[:-1], order[1:]):
            low, high = percentile_interval(reps[:, a] - reps[:, b], settings.level)
            rows.append({"corpus": corpus, "split": split, "model": model, "tokenizer": tok,
                         "language": languages[a], "next_language": languages[b],
                         "n_units": num.shape[0], "bpec_difference": float(point[a] - point[b]),
                         "ci_low": float(low), "ci_high": float(high),
                         "excludes_zero": bool(low > 0 or high < 0)})
    schema = {"corpus": pl.String, "split": pl.String, "model": pl.String, "tokenizer": pl.String,
              "language": pl.String, "next_language": pl.String, "n_units": pl.Int64,
              "bpec_difference": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64,
              "excludes_zero": pl.Boolean}
    return pl.DataFrame(rows, schema=schema, orient="row")


#: Columns of the model-vs-model differences, with their units.
MODEL_DIFFERENCE_COLUMNS = {
    "corpus": "corpus id", "split": "scored split", "language": "language id",
    "model_a": "model id", "tokenizer_a": "tokenizer id", "model_b": "model id",
    "tokenizer_b": "tokenizer id", "n_units": "common units compared (count)",
    "bpec_a": "BPEC of model a (bits/char of English)",
    "bpec_b": "BPEC of model b (bits/char of English)",
    "bpec_difference": "bpec_a - bpec_b (bits/char of English)",
    "ci_low": "paired interval of the difference, lower end (bits/char of English)",
    "ci_high": "paired interval of the difference, upper end (bits/char of English)",
    "excludes_zero": "the interval excludes 0: the two models are told apart (true/false)",
}


def language_differences(scores: pl.DataFrame, common_scores: pl.DataFrame,
                         english: pl.DataFrame, settings: BootstrapSettings) -> pl.DataFrame:
    """:func:`paired_language_differences` on every unit each model scored; for a (corpus,
    split, model, tokenizer) whose languages scored different units (skipped there: a corpus
    with units: own), on ``common_scores``, the common unit set, instead (its n_units says how
    many)."""
    keys = ["corpus", "split", "model", "tokenizer"]
    first = paired_language_differences(scores, english, settings)
    rest = common_scores.join(first.select(keys).unique(), on=keys, how="anti")
    if not rest.height:
        return first
    return pl.concat([first, paired_language_differences(rest, english, settings)])


def paired_model_differences(scores: pl.DataFrame, english: pl.DataFrame,
                             settings: BootstrapSettings) -> pl.DataFrame:
    """For every (corpus, split, language) of open-vocabulary per-unit ``scores`` that are
    already on one common unit set, the BPEC difference of every two models that scored it,
    model_a - model_b (bits/char of English; pairs in fairppl.stats.metrics.model_order, so a
    character n-gram is model_a), with its paired interval: both models are resampled with the
    same draws of units (sorted unit ids), the draws every other interval of these units uses.
    A model is a (model, tokenizer); two rows of one model in one language (e.g. two training
    corpora) raise ValueError."""
    label = pl.col("model") + " / " + pl.col("tokenizer")
    joined = (scores.filter(pl.col("open_vocabulary"))
              .join(english, on=["corpus", "unit_id"], how="left").with_columns(label=label))
    rows = []
    for (corpus, split, language), part in joined.group_by(
            ["corpus", "split", "language"], maintain_order=True):
        repeated = part.group_by("label", "unit_id").len().filter(pl.col("len") > 1)
        if repeated.height:
            raise ValueError(
                f"{corpus}/{language}: model {repeated['label'][0]!r} scored unit "
                f"{repeated['unit_id'][0]!r} more than once (several training corpora?): "
                f"cannot pair it with the other models")
        wide = part.pivot(on="label", index="unit_id", values="bits").sort("unit_id")
        labels = model_order(c for c in wide.columns if c != "unit_id")
        if len(labels) < 2 or wide.null_count().sum_horizontal().item():
            continue  # fewer than two models, or not on one common unit set
        pairs = dict(zip(part["label"], zip(part["model"], part["tokenizer"])))
        den = (wide.select("unit_id")
               .join(part.select("unit_id", "n_english_chars").unique("unit_id"), on="unit_id",
                     how="left")["n_english_chars"].to_numpy().astype(float))
        num = wide.select(labels).to_numpy().astype(float)
        counts = resample_counts(num.shape[0], settings.replicates, settings.seed)
        reps = replicate_ratios(counts, num, den[:, None].repeat(len(labels), axis=1))
        point = num.sum(axis=0) / den.sum()
        for a, b in combinations(range(len(labels)), 2):
            low, high = percentile_interval(reps[:, a] - reps[:, b], settings.level)
            (model_a, tok_a), (model_b, tok_b) = pairs[labels[a]], pairs[labels[b]]
            rows.append({"corpus": corpus, "split": split, "language": language,
                         "model_a": model_a, "tokenizer_a": tok_a, "model_b": model_b,
                         "tokenizer_b": tok_b, "n_units": num.shape[0],
                         "bpec_a": float(point[a]), "bpec_b": float(point[b]),
                         "bpec_difference": float(point[a] - point[b]),
                         "ci_low": float(low), "ci_high": float(high),
                         "excludes_zero": bool(low > 0 or high < 0)})
    schema = ({c: pl.String for c in list(MODEL_DIFFERENCE_COLUMNS)[:7]}
              | {"n_units": pl.Int64}
              | {c: pl.Float64 for c in ["bpec_a", "bpec_b", "bpec_difference", "ci_low",
                                         "ci_high"]}
              | {"excludes_zero": pl.Boolean})
    return pl.DataFrame(rows, schema=schema, orient="row")


def mean_rank_replicates(counts: np.ndarray, bits: np.ndarray,
                         english: np.ndarray) -> np.ndarray:
    """(B x L) mean over models of each language's BPEC rank (1 = highest BPEC, the hardest) in
    each replicate. ``bits`` is (M x n x L): per model, per unit, per language; ``english`` (n)
    the English characters of each unit; every model and language uses the same draws
    ``counts`` (B x n). Ties within a model are ranked in column order."""
    bits = np.asarray(bits, dtype=float)
    if bits.ndim != 3:
        raise ValueError(f"mean_rank_replicates: bits must be models x units x languages, got "
                         f"shape {bits.shape}")
    den = counts @ np.asarray(english, dtype=float)
    total = np.zeros((counts.shape[0], bits.shape[2]))
    for model_bits in bits:
        rates = (counts @ model_bits) / den[:, None]
        order = np.argsort(-rates, axis=1, kind="stable")
        ranks = np.empty_like(order)
        np.put_along_axis(ranks, order, np.arange(1, bits.shape[2] + 1)[None, :]
                          .repeat(len(rates), axis=0), axis=1)
        total += ranks
    return total / bits.shape[0]


def positions(mean_ranks: np.ndarray) -> np.ndarray:
    """Position of each language by mean rank along the last axis: 1 + how many languages have
    a strictly smaller mean rank (1 = hardest; tied languages share the better position)."""
    mean_ranks = np.asarray(mean_ranks, dtype=float)
    return 1 + (mean_ranks[..., None, :] < mean_ranks[..., :, None]).sum(axis=-1)


def extreme_shares(mean_ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(hardest, easiest): per language, the share of replicates (rows of ``mean_ranks``) in
    which its mean rank is the smallest (largest); a replicate tied between k languages counts
    1/k for each, so each share sums to 1 over the languages."""
    def share(is_extreme):
        return (is_extreme / is_extreme.sum(axis=1, keepdims=True)).mean(axis=0)
    lowest = mean_ranks == mean_ranks.min(axis=1, keepdims=True)
    highest = mean_ranks == mean_ranks.max(axis=1, keepdims=True)
    return share(lowest.astype(float)), share(highest.astype(float))


#: Columns of the rank-uncertainty table, with their units.
RANK_UNCERTAINTY_COLUMNS = {
    "corpus": "corpus id", "split": "scored split", "language": "language id",
    "units (count)": "units every language scored under every model, resampled",
    "languages (count)": "languages ranked",
    "models": "models whose ranks are averaged ('; '-separated)",
    "merged": "near-duplicate models left out of the average, and why",
    "mean rank (1 = hardest)": "mean over the models of the language's BPEC rank, all units",
    "position (1 = hardest)": "place of that mean rank among the languages, all units",
    "position low (1 = hardest)": "lower end of the position's percentile interval",
    "position high (1 = hardest)": "upper end of the position's percentile interval",
    "hardest (share of replicates)": "replicates where the language comes first (ties split)",
    "easiest (share of replicates)": "replicates where the language comes last (ties split)",
    "level (fraction)": "central coverage of the position interval",
    "replicates (count)": "bootstrap replicates B", "seed": "seed of the draws",
}


def language_rank_bootstrap(bits: np.ndarray, english: np.ndarray,
                            settings: BootstrapSettings) -> dict[str, np.ndarray]:
    """Paired bootstrap of the languages' mean rank over models: the units are drawn once per
    replicate (:func:`resample_counts`) and those draws serve every model and language. From
    ``bits`` (M x n x L) and ``english`` (n): per language its mean rank and position on all
    units, the position's percentile interval (inverted CDF, so each end is a position some
    replicate took) and its shares of replicates as hardest and easiest."""
    bits = np.asarray(bits, dtype=float)
    english = np.asarray(english, dtype=float)
    point = mean_rank_replicates(np.ones((1, bits.shape[1])), bits, english)[0]
    counts = resample_counts(bits.shape[1], settings.replicates, settings.seed)
    reps = mean_rank_replicates(counts, bits, english)
    place = positions(reps)
    tail = (1.0 - settings.level) / 2.0
    low = np.quantile(place, tail, axis=0, method="inverted_cdf")
    high = np.quantile(place, 1.0 - tail, axis=0, method="inverted_cdf")
    hardest, easiest = extreme_shares(reps)
    return {"mean_rank": point, "position": positions(point), "low": low, "high": high,
            "hardest": hardest, "easiest": easiest}
