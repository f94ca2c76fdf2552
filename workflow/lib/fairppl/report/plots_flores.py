"""The FLORES-200 figure: every code on one page. (a) each tokenizer's token premium by language
family (the families with at least :data:`MIN_FAMILY` codes, the rest as "other families"), one
dot per code on a log axis, the median marked; (b) per pretrained LM, its token premium (own
tokenizer) against its bits premium on the same sentences, marker by writing type: points on
the horizontal line at 1 pay for their extra tokens in compute only, points on the diagonal
pay for every extra token in bits."""

from __future__ import annotations

import math

import polars as pl

from ..corpus.flores import ENGLISH
from ..lm.flores_table import WRITING_TYPES, token_premium
from .plots import empty, plt, save

#: Families with fewer codes than this share one column of panel (a).
MIN_FAMILY = 5
#: Family labels that go with the small families: none in Arnett et al.'s table, or theirs for
#: languages of no family they name ("other").
LUMPED = ("unknown", "other")
#: Marker per writing type in panel (b).
MARKERS = dict(zip(WRITING_TYPES + ("unknown",), "osD^vx"))


def family_order(table: pl.DataFrame) -> list[str]:
    """Families with at least :data:`MIN_FAMILY` codes, largest first, then 'other families'
    (the small ones and :data:`LUMPED`)."""
    counts = table.group_by("family").len().sort(["len", "family"], descending=[True, False])
    big = [f for f, n in counts.iter_rows() if n >= MIN_FAMILY and f not in LUMPED]
    return big + ["other families"]


def flores_figure(table: pl.DataFrame, tokenizers: list[str], models: list[str],
                  path: str) -> None:
    """Draw the two panels (module docstring) from results/tables/flores.csv."""
    if not table.height:
        empty(path, "no FLORES-200 code analysed")
        return
    families = family_order(table)
    grouped = table.with_columns(pl.when(pl.col("family").is_in(families)).then(
        pl.col("family")).otherwise(pl.lit("other families")).alias("_family"))
    width = max(8.0, 0.55 * len(families) * max(1, len(tokenizers)) / 2)
    fig, axes = plt.subplots(1, 2, figsize=(width + 6, 5.2),
                             gridspec_kw={"width_ratios": [width, 6]})
    colors = plt.get_cmap("tab10")
    step = 0.8 / max(1, len(tokenizers))
    for t, tok in enumerate(tokenizers):
        column = token_premium(tok)
        if column not in table.columns:
            continue
        for f, family in enumerate(families):
            values = grouped.filter(pl.col("_family") == family)[column].drop_nulls().to_list()
            if not values:
                continue
            x = f - 0.4 + step * (t + 0.5)
            axes[0].scatter([x] * len(values), values, s=9, color=colors(t % 10), alpha=0.55,
                            label=tok if f == 0 else None, linewidths=0)
            values.sort()
            axes[0].hlines(values[len(values) // 2], x - step / 2, x + step / 2,
                           color=colors(t % 10), lw=2)
    axes[0].set_yscale("log")
    axes[0].axhline(1.0, color="#888", lw=0.8)
    counts = dict(grouped.group_by("_family").len().iter_rows())
    axes[0].set_xticks(range(len(families)))
    axes[0].set_xticklabels([f"{f}\n({counts.get(f, 0)})" for f in families], rotation=45,
                            ha="right", fontsize=8)
    axes[0].set_ylabel(f"tokens relative to {ENGLISH} (ratio, log scale)")
    axes[0].set_title("(a) token premium by family (codes), each sentence encoded alone; "
                      "bar: median", fontsize=10)
    axes[0].legend(fontsize=7, ncol=2)

    high = 1.0
    for m, model in enumerate(models):
        x_col, y_col = token_premium(model), f"{model} bits relative to {ENGLISH} (ratio)"
        if x_col not in table.columns or y_col not in table.columns:
            continue
        for wtype, marker in MARKERS.items():
            part = table.filter((pl.col("writing type") == wtype) & pl.col(y_col).is_not_null())
            if not part.height:
                continue
            axes[1].scatter(part[x_col], part[y_col], s=14, marker=marker, alpha=0.6,
                            color=colors(m % 10), linewidths=0,
                            label=f"{model}, {wtype}")
            high = max(high, float(part[x_col].max()), float(part[y_col].max()))
    axes[1].set_xscale("log")
    axes[1].set_yscale("log")
    axes[1].plot([1, high], [1, high], color="#888", lw=0.8, ls="--")
    axes[1].axhline(1.0, color="#888", lw=0.8)
    axes[1].set_xlabel(f"the LM's tokens relative to {ENGLISH} (ratio, log)")
    axes[1].set_ylabel(f"its bits relative to {ENGLISH}, same sentences (ratio, log)")
    sample = next((int(table[c].max()) for c in table.columns
                   if c.endswith("sentences scored (count)")), 0)
    axes[1].set_title(f"(b) token premium against bits premium, {sample} sentences a code",
                      fontsize=10)
    axes[1].legend(fontsize=6, ncol=2 if len(models) > 1 else 1)
    if not math.isfinite(high):
        axes[1].set_xlim(0.5, 20)
    save(fig, path)
