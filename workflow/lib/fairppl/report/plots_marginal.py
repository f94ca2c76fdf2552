"""Figures of the marginal-likelihood stage: lattice entropy against the marginal gap (Cao &
Rimell 2021, Figure 2), the samples-needed curves (their Figure 3) and the per-sequence
intervals of the sampling estimators (Chirkova et al. 2023). Colours and markers from
:func:`fairppl.report.plots.model_styles`."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from ..marginal.analyses import samples_needed_quantiles
from ..marginal.compare import entropy_gap, entropy_gap_units
from .plots import empty, model_label, model_styles, plt, save


def entropy_gap_figure(per_unit: pl.DataFrame, path: str, min_units: int = 20) -> None:
    """One panel per (model, tokenizer) with exact marginals: every unit's lattice entropy per
    default token against its gap (exact - default) per default token, languages pooled, with
    the pooled Spearman rho in the title (n/a below ``min_units`` units)."""
    points = entropy_gap_units(per_unit)
    if not points.height:
        empty(path, "no unit has both an exact marginal and a lattice entropy")
        return
    stats = entropy_gap(per_unit, min_units).filter(pl.col("language") == "all")
    groups = points.group_by(["model", "tokenizer"], maintain_order=True)
    panels = sorted(groups, key=lambda g: g[0])
    styles = model_styles(model_label(m, t) for (m, t), _ in panels)
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.2), squeeze=False)
    for ax, ((model, tok), part) in zip(axes[0], panels):
        label = model_label(model, tok)
        ax.scatter(part["entropy_nats_per_token"], part["gap_nats_per_token"], s=9, alpha=0.45,
                   color=styles[label]["color"], marker=styles[label]["marker"], linewidths=0)
        row = stats.filter(model=model, tokenizer=tok).row(0, named=True)
        rho = "n/a" if row["spearman_rho"] is None else f"{row['spearman_rho']:.2f}"
        ax.set_title(f"{label}\n{row['n_units']} units, Spearman rho = {rho}", fontsize=9)
        ax.set_xlabel("lattice entropy per default token (nats/token)")
        ax.set_ylabel("exact - default log P per default token (nats/token)")
        ax.grid(alpha=0.3)
    save(fig, path)


#: How far past the estimates a panel's y-axis reaches, in upper-quartile interval half-widths: a
#: few degenerate intervals (a bootstrap over K samples dominated by one weight) can reach 1e6
#: nats and would flatten every other unit; they are drawn cut at the axis and counted instead.
_AXIS_HALF_WIDTHS = 3.0


def interval_panels(per_unit: pl.DataFrame, estimators=("lm-guided", "wr")) -> pl.DataFrame:
    """What the per-sequence intervals figure shows, per (model, tokenizer, estimator) that has
    any interval: units estimated, units with an interval (the points drawn), the y-axis limits
    (nats of gap) and how many intervals reach beyond them (drawn cut). The report's caption is
    built from it, so the counts in the words and in the picture are the same numbers."""
    rows = []
    data = per_unit.filter(pl.col("estimator").is_in(list(estimators)))
    for (model, tok, est), part in sorted(
            data.group_by(["model", "tokenizer", "estimator"], maintain_order=True),
            key=lambda g: g[0]):
        with_ci = part.filter(pl.col("ci_low").is_not_null())
        if not with_ci.height:
            continue
        gap = (with_ci["logp"] - with_ci["logp_default"]).to_numpy()
        low = (with_ci["ci_low"] - with_ci["logp_default"]).to_numpy()
        high = (with_ci["ci_high"] - with_ci["logp_default"]).to_numpy()
        up, down = high - gap, gap - low
        top = max(float(gap.max() + min(up.max(), _AXIS_HALF_WIDTHS * np.quantile(up, 0.75))),
                  0.0)
        bottom = min(float(gap.min() - min(down.max(),
                                           _AXIS_HALF_WIDTHS * np.quantile(down, 0.75))), 0.0)
        pad = 0.08 * (top - bottom or 1.0)
        bottom, top = bottom - pad, top + pad
        rows.append({"model": model, "tokenizer": tok, "estimator": est,
                     # a unit of each language counts once: (language, unit) pairs
                     "n_units": part.select("language", "unit_id").unique().height,
                     "n_intervals": with_ci.select("language", "unit_id").unique().height,
                     "n_languages": with_ci["language"].n_unique(),
                     "y_low": bottom, "y_high": top,
                     "n_cut": int(((low < bottom) | (high > top)).sum())})
    return pl.DataFrame(rows, schema={"model": pl.String, "tokenizer": pl.String,
                                      "estimator": pl.String, "n_units": pl.Int64,
                                      "n_intervals": pl.Int64, "n_languages": pl.Int64,
                                      "y_low": pl.Float64, "y_high": pl.Float64,
                                      "n_cut": pl.Int64})


def interval_figure(per_unit: pl.DataFrame, path: str, estimators=("lm-guided", "wr")) -> None:
    """Per-sequence intervals: for each (model, tokenizer, estimator) with intervals, every unit's
    estimated gap (estimate - default log P, nats) with its 90% interval, units sorted by the
    estimate; the exact gap as a cross where the unit has one. The y-axis holds every estimate
    and reaches three upper-quartile half-widths past them (:func:`interval_panels`); an interval beyond it is cut at the
    axis with a triangle, and the panel's title counts them."""
    exact = (per_unit.filter(pl.col("estimator") == "exact")
             .select("corpus", "language", "model", "tokenizer", "unit_id",
                     pl.col("logp").alias("exact")))
    data = (per_unit.filter(pl.col("estimator").is_in(list(estimators))
                            & pl.col("ci_low").is_not_null())
            .join(exact, on=["corpus", "language", "model", "tokenizer", "unit_id"], how="left"))
    if not data.height:
        empty(path, "no estimator with per-sequence intervals was run")
        return
    limits = {(r["model"], r["tokenizer"], r["estimator"]): r
              for r in interval_panels(per_unit, estimators).iter_rows(named=True)}
    panels = sorted(data.group_by(["model", "tokenizer", "estimator"], maintain_order=True),
                    key=lambda g: g[0])
    styles = model_styles(model_label(m, t) for (m, t, _), _ in panels)
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.6 * rows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, ((model, tok, est), part) in zip(axes.flat, panels):
        panel = limits[(model, tok, est)]
        bottom, top = panel["y_low"], panel["y_high"]
        part = part.with_columns((pl.col("logp") - pl.col("logp_default")).alias("gap")).sort(
            "gap")
        x = list(range(part.height))
        gap = part["gap"].to_numpy()
        low_end = (part["ci_low"] - part["logp_default"]).to_numpy()
        high_end = (part["ci_high"] - part["logp_default"]).to_numpy()
        low = gap - low_end.clip(bottom, top)
        high = high_end.clip(bottom, top) - gap
        style = styles[model_label(model, tok)]
        ax.errorbar(x, gap, yerr=[low.clip(0), high.clip(0)], fmt=style["marker"], ms=3,
                    color=style["color"], elinewidth=0.8, capsize=1.5, label="estimate, 90% CI")
        cut_high = [i for i in x if high_end[i] > top]
        cut_low = [i for i in x if low_end[i] < bottom]
        if cut_high or cut_low:
            ax.scatter(cut_high, [top] * len(cut_high), marker="^", s=22, color="#b00020",
                       zorder=4, label="interval cut at the axis")
            ax.scatter(cut_low, [bottom] * len(cut_low), marker="v", s=22, color="#b00020",
                       zorder=4)
        if part["exact"].null_count() < part.height:
            ax.scatter(x, (part["exact"] - part["logp_default"]).to_numpy(), marker="x", s=14,
                       color="black", label="exact", zorder=3)
        ax.set_ylim(bottom, top)
        ax.axhline(0, color="grey", lw=0.6)
        languages = panel["n_languages"]
        cut = f", {panel['n_cut']} cut" if panel["n_cut"] else ""
        ax.set_title(f"{model_label(model, tok)}, {est}\n{part.height} of {panel['n_units']} "
                     f"units with an interval, {languages} language"
                     f"{'' if languages == 1 else 's'}{cut}", fontsize=9)
        ax.set_xlabel("units, sorted by the estimated gap")
        ax.set_ylabel("log P estimate - default (nats)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    save(fig, path)


def samples_needed_figure(curves: pl.DataFrame, path: str) -> None:
    """Share of the exact marginal held by the first n distinct paths drawn from the unigram
    lattice, taken in the order of the proposal Q and of the LM's P: median over units (every
    language pooled) with the interquartile band, and the 99% / 99.9% levels."""
    quantiles = samples_needed_quantiles(curves)
    if not quantiles.height:
        empty(path, "no samples-needed curves were computed")
        return
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    names = {"Q": "ordered by the proposal Q", "P": "ordered by the LM's P"}
    for order, color in (("Q", "#4c72b0"), ("P", "#c44e52")):
        part = quantiles.filter(order=order).sort("n_paths")
        if not part.height:
            continue
        ax.plot(part["n_paths"], part["share_median_percent"], color=color, lw=1.6,
                label=f"{names[order]} (median of {part['n_units'][0]} units)")
        ax.fill_between(part["n_paths"], part["share_q25_percent"], part["share_q75_percent"],
                        color=color, alpha=0.15, lw=0)
    for level in (99.0, 99.9):
        ax.axhline(level, color="grey", lw=0.6, ls=":")
    low = float(quantiles["share_q25_percent"].min())
    ax.set_ylim(max(0.0, min(low, 99.0) - 1.0), 100.2)
    ax.set_xscale("log", base=2)
    ticks = [2 ** k for k in range(int(quantiles["n_paths"].max()).bit_length())]
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.set_xlabel("distinct paths taken (count, log scale)")
    ax.set_ylabel("share of the exact marginal held (%)")
    ax.set_title("Samples needed: paths holding the exact n-gram marginal\n"
                 "(band: 25th-75th percentile over units; dotted: 99% and 99.9%)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    save(fig, path)
