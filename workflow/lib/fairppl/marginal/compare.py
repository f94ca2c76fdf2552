"""What the marginal likelihood changes, as the report shows it: the study's bits from the default
tokenization beside the bits from the marginal over tokenizations, whether the ranking of
languages moves, how close each estimator comes to the exact marginal, and how the tokenizer's
uncertainty (lattice entropy) relates to the gap.

Inputs are the tables of :mod:`fairppl.marginal.table`: ``table`` (one row per corpus, language,
model, tokenizer, estimator and setting) and ``per_unit`` (the per-unit records of
:mod:`fairppl.marginal.units`, one row per unit and run). Log-probabilities are in nats; bits are
nats / ln 2.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from ..stats.correlates import spearman

LN2 = math.log(2.0)

#: The estimate a model's marginal is read from, best first: the exact value where there is one,
#: then the LM-guided proposal, then the unigram-lattice estimators (WOR with the best path
#: forced in has the smallest variance of those, Cao & Rimell 2021 Table 1), then the bounds.
PREFERENCE = ("exact", "lm-guided", "wor-1best", "wor", "wr", "decoding-free", "nbest", "beam")

_MODEL_KEYS = ["corpus", "language", "model", "tokenizer"]

#: Columns of :func:`fair_bits`, with their units.
FAIR_COLUMNS = {
    "corpus": "corpus id",
    "language": "language id",
    "model": "model id",
    "tokenizer": "tokenizer id",
    "estimator": "estimate the marginal is read from",
    "n_units": "units (count; an evenly spaced subset of the evaluation split)",
    "bits_per_utterance_default": "default tokenization (bits/utterance)",
    "bits_per_utterance_marginal": "marginal over tokenizations (bits/utterance)",
    "bpec_default": "default tokenization (bits/char of English)",
    "bpec_marginal": "marginal (bits/char of English)",
    "bpec_ci_low": "marginal, lower end of the interval (bits/char of English)",
    "bpec_ci_high": "marginal, upper end of the interval (bits/char of English)",
    "relative_gap_percent": "bits saved by marginalizing (% of the default bits)",
    "gap_ci_low_nats": "gap, lower end of the interval (nats, summed over units)",
    "gap_ci_high_nats": "gap, upper end of the interval (nats, summed over units)",
    "gap_mc_ci_low_nats": "gap, lower end of the Monte Carlo interval of these units (nats)",
    "gap_mc_ci_high_nats": "gap, upper end of the Monte Carlo interval (nats)",
    "ci_note": "why there are no intervals (empty: there are)",
}


def marginal_rows(table: pl.DataFrame) -> pl.DataFrame:
    """Per (corpus, language, model, tokenizer), the row of the first estimator of
    :data:`PREFERENCE` that has an estimate (at its lowest tau, then its largest K)."""
    rank = {name: i for i, name in enumerate(PREFERENCE)}
    ok = table.filter(pl.col("logp_nats").is_not_null()
                      & pl.col("estimator").is_in(list(PREFERENCE)))
    if not ok.height:
        return ok
    ok = ok.with_columns(pl.col("estimator").replace_strict(rank, return_dtype=pl.Int64)
                         .alias("_rank"))
    return (ok.sort(["_rank", "tau", "K"], descending=[False, False, True], nulls_last=True)
            .unique(_MODEL_KEYS, keep="first", maintain_order=True)
            .drop("_rank").sort(_MODEL_KEYS))


def fair_bits(table: pl.DataFrame) -> pl.DataFrame:
    """Bits per utterance and BPEC from the default tokenization and from the marginal, side by
    side, per (corpus, language, model, tokenizer) (:data:`FAIR_COLUMNS`)."""
    rows = marginal_rows(table)
    if not rows.height:
        return pl.DataFrame(schema={c: (pl.String if i < 5 or c == "ci_note" else pl.Float64)
                                    for i, c in enumerate(FAIR_COLUMNS)})
    for col in ("gap_mc_ci_low_nats", "gap_mc_ci_high_nats", "ci_note"):
        if col not in rows.columns:  # a table written before these columns
            rows = rows.with_columns(pl.lit(None, dtype=pl.String if col == "ci_note"
                                            else pl.Float64).alias(col))
    return rows.with_columns(
        (-pl.col("logp_default_nats") / LN2 / pl.col("n_units"))
        .alias("bits_per_utterance_default"),
        (-pl.col("logp_nats") / LN2 / pl.col("n_units")).alias("bits_per_utterance_marginal"),
        pl.col("bpec").alias("bpec_marginal"),
    ).select(list(FAIR_COLUMNS))


#: Columns of :func:`ranking_change`, with their units.
RANKING_COLUMNS = {
    "corpus": "corpus id",
    "model": "model id",
    "tokenizer": "tokenizer id",
    "estimator": "estimate the marginal is read from",
    "n_languages": "languages ranked (count)",
    "spearman_rho": "Spearman's rho, default vs marginal BPEC ranking",
    "spearman_p": "two-sided p of rho (exact up to 8 languages)",
    "languages_moved": "languages whose rank changes (count)",
    "max_rank_shift": "largest change of one language's rank (places)",
    "largest_gap_language": "language with the largest relative gap",
    "largest_gap_percent": "its relative gap (% of the default bits)",
    "min_units_per_language": "fewest units of one language (count)",
    "min_units": "units per language a ranking claim needs (count, marginal.min_units)",
    "note": "why there is no ranking claim (empty: there is one)",
}


def _ranks(values: np.ndarray) -> np.ndarray:
    """0-based ranks, hardest (largest) first; ties broken by position (stable)."""
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values), dtype=int)
    ranks[order] = np.arange(len(values))
    return ranks


def ranking_change(fair: pl.DataFrame, min_units: int = 20) -> pl.DataFrame:
    """Does marginalizing change the ranking of languages? Per (corpus, model, tokenizer): the
    Spearman correlation between the languages' BPEC from the default tokenization and from the
    marginal, and how many languages change place (:data:`RANKING_COLUMNS`). Where a language
    has fewer than ``min_units`` units, rho, p and the places changed are empty and ``note``
    says why: a ranking of a few units' bits is not one of the languages."""
    rows = []
    for (corpus, model, tok), part in fair.group_by(["corpus", "model", "tokenizer"],
                                                    maintain_order=True):
        part = part.filter(pl.col("bpec_marginal").is_not_null()).sort("language")
        default = part["bpec_default"].to_numpy()
        marginal = part["bpec_marginal"].to_numpy()
        rho, p, n = spearman(default.tolist(), marginal.tolist())
        shift = np.abs(_ranks(default) - _ranks(marginal)) if n else np.zeros(0, dtype=int)
        top = part.sort("relative_gap_percent", descending=True, nulls_last=True)
        fewest = int(part["n_units"].min()) if part.height else 0
        if fewest < min_units:
            rows.append({
                "corpus": corpus, "model": model, "tokenizer": tok,
                "estimator": ", ".join(sorted(set(part["estimator"]))), "n_languages": n,
                "spearman_rho": None, "spearman_p": None, "languages_moved": None,
                "max_rank_shift": None, "largest_gap_language": None,
                "largest_gap_percent": None, "min_units_per_language": fewest,
                "min_units": min_units,
                "note": f"{fewest} units per language, fewer than min_units = {min_units}: no "
                        f"ranking claims"})
            continue
        rows.append({
            "corpus": corpus, "model": model, "tokenizer": tok,
            "estimator": ", ".join(sorted(set(part["estimator"]))), "n_languages": n,
            "spearman_rho": rho, "spearman_p": p,
            "languages_moved": int((shift > 0).sum()),
            "max_rank_shift": int(shift.max()) if len(shift) else 0,
            "largest_gap_language": top["language"][0] if top.height else None,
            "largest_gap_percent": top["relative_gap_percent"][0] if top.height else None,
            "min_units_per_language": fewest, "min_units": min_units, "note": None,
        })
    schema = {c: pl.String for c in RANKING_COLUMNS} | {
        "n_languages": pl.Int64, "spearman_rho": pl.Float64, "spearman_p": pl.Float64,
        "languages_moved": pl.Int64, "max_rank_shift": pl.Int64,
        "largest_gap_percent": pl.Float64, "min_units_per_language": pl.Int64,
        "min_units": pl.Int64}
    return pl.DataFrame(rows, schema=schema).sort("corpus", "model", "tokenizer")


_SETTING = ["corpus", "model", "tokenizer", "estimator", "K", "tau"]

#: Columns of :func:`estimator_accuracy`, with their units.
ACCURACY_COLUMNS = {
    "corpus": "corpus id",
    "model": "model id",
    "tokenizer": "tokenizer id",
    "estimator": "estimator",
    "K": "samples or paths per unit (count)",
    "tau": "unigram proposal temperature",
    "n_languages": "languages (count)",
    "n_units": "units compared with the exact value (count)",
    "bias_nats": "mean of estimate - exact over units (nats/unit)",
    "sd_nats": "standard deviation of estimate - exact over units (nats/unit)",
    "rmse_nats": "root mean square of estimate - exact (nats/unit)",
    "max_abs_error_nats": "largest |estimate - exact| (nats)",
    "gap_recovered_percent": "summed (estimate - default) / summed (exact - default) (%)",
    "above_exact_percent": "units where the estimate exceeds the exact value (%)",
    "n_interval_units": "sampled units with a Monte Carlo interval (count)",
    "coverage_percent": "of those, units whose 90% interval contains the exact value (%); "
                        "empty: the estimator has no interval",
    "log_weight_sd_nats": "median over units of the spread (sd) of the K importance log-weights "
                          "(nats; large: heavy-tailed weights)",
    "n_mc_totals": "languages whose summed estimate has a Monte Carlo interval (count)",
    "mc_total_covered": "of those, languages whose interval holds the exact total (count)",
}


def _mc_totals(table: pl.DataFrame | None, tol: float) -> pl.DataFrame:
    """Per :data:`_SETTING`: how many languages' Monte Carlo intervals of the summed estimate
    (:mod:`fairppl.marginal.table`) there are, and how many hold the exact total of the same
    units."""
    schema = {k: table.schema[k] for k in _SETTING} if table is not None else {}
    if table is None or "logp_mc_ci_low_nats" not in table.columns:
        return pl.DataFrame(schema=schema | {"n_mc_totals": pl.UInt32,
                                             "mc_total_covered": pl.UInt32})
    exact = (table.filter(pl.col("estimator") == "exact")
             .select(*_MODEL_KEYS, "n_units", pl.col("logp_nats").alias("_exact")))
    rows = (table.filter((pl.col("estimator") != "exact")
                         & pl.col("logp_mc_ci_low_nats").is_not_null())
            .join(exact, on=[*_MODEL_KEYS, "n_units"], how="inner"))
    held = ((pl.col("logp_mc_ci_low_nats") <= pl.col("_exact") + tol)
            & (pl.col("_exact") <= pl.col("logp_mc_ci_high_nats") + tol))
    return rows.group_by(_SETTING).agg(pl.len().cast(pl.UInt32).alias("n_mc_totals"),
                                       held.sum().cast(pl.UInt32).alias("mc_total_covered"))


def estimator_accuracy(per_unit: pl.DataFrame, tol: float = 1e-9,
                       table: pl.DataFrame | None = None) -> pl.DataFrame:
    """Every estimator against the exact marginal of the same unit, model and tokenizer, where
    an exact value was computed (the n-gram forward algorithm, or enumeration): bias, spread,
    the share of the gap recovered and the coverage of the intervals
    (:data:`ACCURACY_COLUMNS`). ``tol`` (nats): a lower bound may exceed the exact value by
    rounding only.

    Coverage counts only the units where the estimator drew samples and has an interval: an
    enumerated lattice's value is exact (its "interval" is the value) and would cover by
    construction, and WOR, WOR-1best, n-best, beam and default have no interval at all (their
    coverage is empty, never a percentage). With the summed ``table``
    (:func:`fairppl.marginal.table.marginal_table`), also how many languages' Monte Carlo
    intervals of the total hold the exact total (same units)."""
    exact = (per_unit.filter(pl.col("estimator") == "exact")
             .select(*_MODEL_KEYS, "unit_id", pl.col("logp").alias("_exact")))
    rest = per_unit.filter(pl.col("estimator") != "exact")
    joined = rest.join(exact, on=[*_MODEL_KEYS, "unit_id"], how="inner").with_columns(
        (pl.col("logp") - pl.col("_exact")).alias("_err"))
    has_ci = (pl.col("ci_low").is_not_null() & pl.col("ci_high").is_not_null()
              & ~pl.col("enumerated").fill_null(False))
    for col, kind in (("log_weights", pl.List(pl.Float64)), ("enumerated", pl.Boolean)):
        if col not in joined.columns:  # records written before the column
            joined = joined.with_columns(pl.lit(None, dtype=kind).alias(col))
    covered = (pl.col("ci_low") <= pl.col("_exact") + tol) & (
        pl.col("_exact") <= pl.col("ci_high") + tol)
    out = joined.group_by(_SETTING, maintain_order=True).agg(
        pl.col("language").n_unique().alias("n_languages"),
        pl.len().alias("n_units"),
        pl.col("_err").mean().alias("bias_nats"),
        pl.col("_err").std().alias("sd_nats"),
        (pl.col("_err") ** 2).mean().sqrt().alias("rmse_nats"),
        pl.col("_err").abs().max().alias("max_abs_error_nats"),
        (100.0 * (pl.col("logp") - pl.col("logp_default")).sum()
         / (pl.col("_exact") - pl.col("logp_default")).sum()).alias("gap_recovered_percent"),
        (100.0 * (pl.col("_err") > tol).mean()).alias("above_exact_percent"),
        has_ci.sum().alias("n_interval_units"),
        pl.when(has_ci.sum() > 0).then(100.0 * covered.filter(has_ci).mean())
        .otherwise(None).alias("coverage_percent"),
        pl.col("log_weights").list.std().median().alias("log_weight_sd_nats"),
    )
    totals = _mc_totals(table, tol)
    if totals.height:
        out = out.join(totals, on=_SETTING, how="left", nulls_equal=True)
    else:
        out = out.with_columns(pl.lit(None, dtype=pl.UInt32).alias("n_mc_totals"),
                               pl.lit(None, dtype=pl.UInt32).alias("mc_total_covered"))
    return out.select(list(ACCURACY_COLUMNS)).sort("corpus", "model", "tokenizer", "estimator")


#: Columns of :func:`entropy_gap`, with their units.
ENTROPY_COLUMNS = {
    "corpus": "corpus id",
    "model": "model id",
    "tokenizer": "tokenizer id",
    "language": "language id (all = every language pooled)",
    "n_units": "units (count)",
    "mean_entropy_nats_per_token": "lattice entropy per default token, mean (nats/token)",
    "mean_gap_nats_per_token": "exact - default per default token, mean (nats/token)",
    "spearman_rho": "Spearman's rho between the two over units",
    "spearman_p": "two-sided p of rho",
}


def entropy_gap_units(per_unit: pl.DataFrame) -> pl.DataFrame:
    """Per unit with an exact marginal and a lattice entropy: the entropy per default token and
    the gap per default token (nats/token), the two axes of Cao & Rimell's Figure 2."""
    return (per_unit.filter((pl.col("estimator") == "exact") & pl.col("entropy").is_not_null()
                            & (pl.col("n_tokens") > 0))
            .select(*_MODEL_KEYS, "unit_id",
                    (pl.col("entropy") / pl.col("n_tokens")).alias("entropy_nats_per_token"),
                    ((pl.col("logp") - pl.col("logp_default")) / pl.col("n_tokens"))
                    .alias("gap_nats_per_token"))
            .sort(*_MODEL_KEYS, "unit_id"))


def entropy_gap(per_unit: pl.DataFrame, min_units: int = 20) -> pl.DataFrame:
    """Spearman's rho between lattice entropy and marginal gap (both per default token) over
    units, per language and pooled (``language = "all"``), per (corpus, model, tokenizer)
    (:data:`ENTROPY_COLUMNS`). Cao & Rimell report 0.57 (English) and 0.49 (German). A group of
    fewer than ``min_units`` units keeps its means but gets no rho or p (empty)."""
    points = entropy_gap_units(per_unit)
    rows = []
    for (corpus, model, tok), part in points.group_by(["corpus", "model", "tokenizer"],
                                                      maintain_order=True):
        groups = [("all", part)] + [(lang, p) for (lang,), p in
                                    part.group_by(["language"], maintain_order=True)]
        for lang, p in groups:
            rho, pval, n = spearman(p["entropy_nats_per_token"].to_list(),
                                    p["gap_nats_per_token"].to_list())
            if n < min_units:
                rho = pval = None
            rows.append({"corpus": corpus, "model": model, "tokenizer": tok, "language": lang,
                         "n_units": n,
                         "mean_entropy_nats_per_token": float(p["entropy_nats_per_token"].mean()),
                         "mean_gap_nats_per_token": float(p["gap_nats_per_token"].mean()),
                         "spearman_rho": rho, "spearman_p": pval})
    schema = {c: pl.String for c in ENTROPY_COLUMNS} | {
        "n_units": pl.Int64, "mean_entropy_nats_per_token": pl.Float64,
        "mean_gap_nats_per_token": pl.Float64, "spearman_rho": pl.Float64,
        "spearman_p": pl.Float64}
    out = pl.DataFrame(rows, schema=schema)
    return out.sort("corpus", "model", "tokenizer",
                    pl.col("language") != "all", "language")


#: Columns of :func:`published_comparison`, with their units.
PUBLISHED_COLUMNS = {
    "source": "publication",
    "data": "their evaluation text",
    "their_model": "their LM (tokenizer)",
    "language": "language id",
    "estimator": "estimator",
    "measure": "word_ppl: perplexity per whitespace word; bpc: bits per character",
    "their_default": "theirs, default tokenization",
    "their_estimate": "theirs, marginal estimate",
    "their_change_percent": "theirs, estimate / default - 1 (%)",
    "our_model": "our LM (tokenizer)",
    "our_default": "ours, default tokenization (Bible test units)",
    "our_estimate": "ours, marginal estimate",
    "our_change_percent": "ours, estimate / default - 1 (%)",
    "what_differs": "what differs between the two settings",
}


def _measure(row: dict, measure: str) -> tuple[float | None, float | None]:
    if measure == "word_ppl":
        return row["ppl_word_default"], row["ppl_word"]
    if measure == "bpc":
        n = row["n_chars"]
        return (-row["logp_default_nats"] / LN2 / n,
                None if row["logp_nats"] is None else -row["logp_nats"] / LN2 / n)
    raise ValueError(f"unknown measure {measure!r}: expected word_ppl or bpc")


def _change(default, estimate):
    if default is None or estimate is None or not default:
        return None
    return 100.0 * (estimate / default - 1.0)


def published_comparison(table: pl.DataFrame, published: pl.DataFrame,
                         corpus: str = "bible") -> pl.DataFrame:
    """The published marginal-vs-default numbers (``resources/published/marginal.tsv``) beside
    ours for the same estimator and language on ``corpus`` (one row per match; a published row
    without a match keeps empty 'our' cells and says why) (:data:`PUBLISHED_COLUMNS`)."""
    ours = table.filter(pl.col("corpus") == corpus)
    rows = []
    for pub in published.iter_rows(named=True):
        base = {"source": pub["source"], "data": pub["data"],
                "their_model": f"{pub['model']} ({pub['tokenizer']})",
                "language": pub["language"], "estimator": pub["estimator"],
                "measure": pub["measure"], "their_default": float(pub["default"]),
                "their_estimate": float(pub["estimate"]),
                "their_change_percent": _change(float(pub["default"]), float(pub["estimate"]))}
        match = ours.filter((pl.col("language") == pub["language"])
                            & (pl.col("estimator") == pub["estimator"])
                            & pl.col("logp_nats").is_not_null())
        if not match.height:
            rows.append(base | {"what_differs": f"no {pub['estimator']} run on "
                                                f"{pub['language']} in this study"})
            continue
        for row in match.sort("model", "tokenizer").iter_rows(named=True):
            default, estimate = _measure(row, pub["measure"])
            differs = [f"{row['n_units']} Bible verses, not {pub['data']}",
                       f"our model is {row['model']}"]
            if pub["estimator"] in ("wr", "wor", "wor-1best", "nbest"):
                differs.append(f"{row['mode']} tokenization (theirs consistent)")
                differs.append(f"K = {row['K']}")
            else:
                differs.append(f"K = {row['K']}, M = {row['M']}")
            rows.append(base | {
                "our_model": f"{row['model']} ({row['tokenizer']})", "our_default": default,
                "our_estimate": estimate, "our_change_percent": _change(default, estimate),
                "what_differs": "; ".join(differs)})
    schema = {c: pl.String for c in PUBLISHED_COLUMNS} | {
        c: pl.Float64 for c in ("their_default", "their_estimate", "their_change_percent",
                                "our_default", "our_estimate", "our_change_percent")}
    return pl.DataFrame(rows, schema=schema).select(list(PUBLISHED_COLUMNS))
