"""Figures of the marginal-likelihood stage: lattice entropy against the marginal gap (Cao &
Rimell 2021, Figure 2), the samples-needed curves (their Figure 3) and the per-sequence
intervals of the sampling estimators (Chirkova et al. 2023). Colours and markers from
:func:`fairppl.report.plots.model_styles`."""

from __future__ import annotations

import math

import polars as pl

from ..marginal.analyses import samples_needed_quantiles
from ..marginal.compare import entropy_gap, entropy_gap_units
from .plots import _empty, _save, model_label, model_styles, plt


def entropy_gap_figure(per_unit: pl.DataFrame, path: str, min_units: int = 20) -> None:
    """One panel per (model, tokenizer) with exact marginals: every unit's lattice entropy per
    default token against its gap (exact - default) per default token, languages pooled, with
    the pooled Spearman rho in the title (n/a below ``min_units`` units)."""
    points = entropy_gap_units(per_unit)
    if not points.height:
        _empty(path, "no unit has both an exact marginal and a lattice entropy")
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
    _save(fig, path)


def interval_figure(per_unit: pl.DataFrame, path: str, estimators=("lm-guided", "wr")) -> None:
    """Per-sequence intervals: for each (model, tokenizer, estimator) with intervals, every unit's
    estimated gap (estimate - default log P, nats) with its 90% interval, units sorted by the
    estimate; the exact gap as a cross where the unit has one."""
    exact = (per_unit.filter(pl.col("estimator") == "exact")
             .select("corpus", "language", "model", "tokenizer", "unit_id",
                     pl.col("logp").alias("exact")))
    data = (per_unit.filter(pl.col("estimator").is_in(list(estimators))
                            & pl.col("ci_low").is_not_null())
            .join(exact, on=["corpus", "language", "model", "tokenizer", "unit_id"], how="left"))
    if not data.height:
        _empty(path, "no estimator with per-sequence intervals was run")
        return
    panels = sorted(data.group_by(["model", "tokenizer", "estimator"], maintain_order=True),
                    key=lambda g: g[0])
    styles = model_styles(model_label(m, t) for (m, t, _), _ in panels)
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.6 * rows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, ((model, tok, est), part) in zip(axes.flat, panels):
        part = part.with_columns((pl.col("logp") - pl.col("logp_default")).alias("gap")).sort(
            "gap")
        x = list(range(part.height))
        gap = part["gap"].to_numpy()
        low = gap - (part["ci_low"] - part["logp_default"]).to_numpy()
        high = (part["ci_high"] - part["logp_default"]).to_numpy() - gap
        style = styles[model_label(model, tok)]
        ax.errorbar(x, gap, yerr=[low.clip(0), high.clip(0)], fmt=style["marker"], ms=3,
                    color=style["color"], elinewidth=0.8, capsize=1.5, label="estimate, 90% CI")
        if part["exact"].null_count() < part.height:
            ax.scatter(x, (part["exact"] - part["logp_default"]).to_numpy(), marker="x", s=14,
                       color="black", label="exact", zorder=3)
        ax.axhline(0, color="grey", lw=0.6)
        languages = part["language"].n_unique()
        ax.set_title(f"{model_label(model, tok)}, {est}\n{part.height} units, "
                     f"{languages} language{'' if languages == 1 else 's'}", fontsize=9)
        ax.set_xlabel("units, sorted by the estimated gap")
        ax.set_ylabel("log P estimate - default (nats)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    _save(fig, path)


def samples_needed_figure(curves: pl.DataFrame, path: str) -> None:
    """Share of the exact marginal held by the first n distinct paths drawn from the unigram
    lattice, taken in the order of the proposal Q and of the LM's P: median over units (every
    language pooled) with the interquartile band, and the 99% / 99.9% levels."""
    quantiles = samples_needed_quantiles(curves)
    if not quantiles.height:
        _empty(path, "no samples-needed curves were computed")
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
    _save(fig, path)
