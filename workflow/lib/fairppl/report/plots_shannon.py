"""The Shannon game's figure: (a) the paper's Table 2 as curves, gambling perplexity with lists of
the l best bets relative to the full list, against l, for every bettor and language; (b) its
Table 1 as curves, the randomized estimate and its 95% bounds against n_t, relative to the
exhaustive perplexity, for one language; (c) its Figure 2, the log-log histogram of the rank of
the correct word, for the same language. Colours and markers from
:func:`fairppl.report.plots.model_styles`."""

from __future__ import annotations

import polars as pl

from .plots import empty, model_label, model_styles, plt, save


#: Rank counts are sums of tie-shared fractions, so a rank nobody's answer reached can be left
#: with floating-point residue (about 1e-16) instead of 0; a count at most this share of the
#: bettor's total is such residue, counted as 0 and not plotted.
RESIDUE = 1e-12


def rank_shares(part: pl.DataFrame) -> pl.DataFrame:
    """Panel (c)'s points from one bettor's rows of shannon_ranks.csv (``rank``, ``count``):
    each rank's share q_r of the total count, sorted by rank, leaving out ranks whose count is
    0 or floating-point residue (|count| <= :data:`RESIDUE` x total; a log axis shows no 0)."""
    total = float(part["count"].sum()) if part.height else 0.0
    if total <= 0:
        return pl.DataFrame(schema={"rank": part.schema.get("rank", pl.Int64),
                                    "share": pl.Float64})
    return (part.filter(pl.col("count") > RESIDUE * total)
            .select("rank", (pl.col("count") / total).alias("share")).sort("rank"))


def shannon_figure(table: pl.DataFrame, ranks: pl.DataFrame, path: str,
                   language: str | None = None, names: dict[str, str] | None = None) -> None:
    """The three panels (module docstring) from results/tables/shannon.csv and
    shannon_ranks.csv; ``language``: the one of panels (b) and (c) (default: the first with the
    most bettors)."""
    names = names or {}
    if not table.height:
        empty(path, "no bettor played the Shannon game")
        return
    full = (table.filter((pl.col("protocol") == "limited") & (pl.col("l") == pl.col("m_outcomes")))
            .select("corpus", "language", "model", "tokenizer",
                    pl.col("perplexity_per_word").alias("full")))
    if language is None:
        counts = full.group_by("language").len().sort(["len", "language"],
                                                       descending=[True, False])
        language = counts["language"][0]
    labels = sorted({model_label(m, t) for m, t in table.select("model", "tokenizer").rows()})
    styles = model_styles(labels)
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
    keys = ["corpus", "language", "model", "tokenizer"]

    limited = table.filter(pl.col("protocol") == "limited").join(full, on=keys)
    seen = set()
    for (corpus, lang, model, tok), part in sorted(limited.group_by(keys), key=lambda g: g[0]):
        label = model_label(model, tok)
        part = part.sort("l")
        axes[0].plot(part["l"], part["perplexity_per_word"] / part["full"],
                     color=styles[label]["color"], marker=styles[label]["marker"], ms=3,
                     alpha=0.75, lw=1, label=None if label in seen else label)
        seen.add(label)
    axes[0].set_xscale("log")
    axes[0].set_yscale("log")
    axes[0].set_xlabel("list length l (outcomes)")
    axes[0].set_ylabel("perplexity with l-lists / full-list perplexity")
    axes[0].set_title("(a) limited lists, every language", fontsize=10)
    axes[0].legend(fontsize=7)

    drawn = (table.filter((pl.col("protocol") == "randomized") & (pl.col("language") == language)
                          & pl.col("perplexity_per_word").is_not_null())
             .join(full, on=keys))
    for (corpus, lang, model, tok), part in sorted(drawn.group_by(keys), key=lambda g: g[0]):
        label = model_label(model, tok)
        part = part.sort("n_t")
        ratio = part["perplexity_per_word"] / part["full"]
        low = ratio - part["low_per_word"] / part["full"]
        high = part["high_per_word"] / part["full"] - ratio
        axes[1].errorbar(part["n_t"], ratio, yerr=[low, high], color=styles[label]["color"],
                         marker=styles[label]["marker"], ms=4, capsize=3, label=label)
    axes[1].axhline(1.0, color="grey", lw=0.8, ls="--")
    axes[1].set_xscale("log")
    axes[1].set_yscale("log")
    if drawn.height:
        ticks = sorted(set(drawn["n_t"].to_list()))
        axes[1].set_xticks(ticks, [str(t) for t in ticks])
        axes[1].minorticks_off()
    axes[1].set_xlabel("randomized truncations per draw n_t (distinct units)")
    axes[1].set_ylabel("estimate / exhaustive perplexity (95% bounds, log)")
    axes[1].set_title(f"(b) randomized truncations, {names.get(language, language)}",
                      fontsize=10)
    if drawn.height:
        axes[1].legend(fontsize=7)

    hist = ranks.filter(pl.col("language") == language)
    for (corpus, lang, model, tok), part in sorted(hist.group_by(keys), key=lambda g: g[0]):
        label = model_label(model, tok)
        points = rank_shares(part)
        axes[2].scatter(points["rank"], points["share"], color=styles[label]["color"],
                        marker=styles[label]["marker"], s=10, alpha=0.7, label=label)
    axes[2].set_xscale("log")
    axes[2].set_yscale("log")
    axes[2].set_xlabel("rank of the correct outcome r")
    axes[2].set_ylabel("frequency q_r")
    axes[2].set_title(f"(c) rank histogram, {names.get(language, language)}", fontsize=10)
    if hist.height:
        axes[2].legend(fontsize=7)
    for ax in axes:
        ax.grid(alpha=0.3, which="both")
    save(fig, path)
