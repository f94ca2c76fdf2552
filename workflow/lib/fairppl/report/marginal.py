"""The report's section on the marginal likelihood over tokenizations: does scoring every
tokenization of a text, not only the default one, change how hard the languages look?

Built from the tables of the ``marginal_table`` rule (:mod:`fairppl.marginal.compare`), held in
``ReportInputs.marginal`` under the names of :data:`TABLES`, and the figures of ``plot_marginal``.
"""

from __future__ import annotations

import html

import polars as pl

from ..marginal.compare import (
    ACCURACY_COLUMNS,
    ENTROPY_COLUMNS,
    FAIR_COLUMNS,
    PUBLISHED_COLUMNS,
    RANKING_COLUMNS,
)
from ..marginal.lengths import SUMMARY_COLUMNS, pooled_summary, recommendation
from .plots import model_label
from .html import constants_text, drop_constant_columns, fmt, html_table
from .html import paragraph as _p

#: The stage's tables in ReportInputs.marginal: name -> (CSV under results/tables, headers).
TABLES = {
    "fair": ("marginal_fair_bits.csv", FAIR_COLUMNS),
    "rankings": ("marginal_rankings.csv", RANKING_COLUMNS),
    "accuracy": ("marginal_accuracy.csv", ACCURACY_COLUMNS),
    "entropy": ("marginal_entropy_gap.csv", ENTROPY_COLUMNS),
    "published": ("marginal_published.csv", PUBLISHED_COLUMNS),
    "lengths": ("marginal_lengths.csv", SUMMARY_COLUMNS),
    "caching": ("marginal_caching.csv", {}),
    "samples_needed": ("marginal_samples_needed.csv", {}),
    "qdefault": ("marginal_qdefault_bins.csv", {}),
    "interval_panels": ("marginal_interval_panels.csv", {}),
}

NEEDED_HEADERS = {
    "paths_99_Q": "median over units (paths, count)",
    "paths_99_P": "median over units (paths, count)",
    "paths_99_9_Q": "median over units; empty: not reached by half (paths, count)",
    "paths_99_9_P": "median over units; empty: not reached by half (paths, count)",
    "reach_99_9": "within the paths drawn (fraction of units)",
    "n_units": "units (count)",
}


def samples_needed_table(summary: pl.DataFrame) -> pl.DataFrame:
    """Per language (and model): how many of the sampled and n-best paths, taken in the order of
    the proposal Q or of the LM's P, hold 99% and 99.9% of the exact marginal."""
    keys = ["language", "model", "tokenizer"]
    wide = summary.pivot(on="order", index=keys, aggregate_function="first",
                         values=["median_paths_to_99pct", "median_paths_to_99_9pct"])
    rename = {f"median_paths_to_99pct_{o}": f"paths_99_{o}" for o in ("Q", "P")} | {
        f"median_paths_to_99_9pct_{o}": f"paths_99_9_{o}" for o in ("Q", "P")}
    wide = wide.rename({k: v for k, v in rename.items() if k in wide.columns})
    reach = (summary.filter(pl.col("order") == "Q")
             .select(*keys, pl.col("share_units_reaching_99_9pct").alias("reach_99_9"),
                     "n_units"))
    cols = [c for c in NEEDED_HEADERS if c in wide.columns or c in reach.columns]
    return wide.join(reach, on=keys, how="left").select(*keys, *cols).sort(keys)


def qdefault_table(bins: pl.DataFrame) -> pl.DataFrame:
    """Per (model, language): the share of LM-guided blocks (%) in each Q(default) bin, and the
    number of blocks."""
    keys = ["model", "language"]
    wide = bins.pivot(on="bin", index=keys, values="share_blocks_pct", aggregate_function="first")
    total = bins.group_by(keys).agg(pl.col("n_blocks").sum())
    return wide.join(total, on=keys).sort(keys)

#: Headers of the two caching tables of the report.
CACHING_HEADERS = {
    "subset": "all words, or words of 2+ tokens",
    "first": "first occurrence (nats/word)",
    "same": "repeat, tokenized as before (nats/word)",
    "different": "repeat, every earlier one tokenized otherwise (nats/word)",
    "n_different": "occurrences in the last class, all samples (count)",
    "default": "one-best tokenization (perplexity per word)",
    "independent": "each occurrence sampled (perplexity per word)",
    "consistent": "one sample per word type (perplexity per word)",
    "sd_independent": "log-weight spread, independent (nats)",
    "sd_consistent": "log-weight spread, consistent (nats)",
}


def caching_tables(caching: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """From the caching analyses (fairppl.marginal.caching rows): per (language, subset) the
    loss of first occurrences, of repeats tokenized the same and of repeats tokenized
    differently; per language the perplexity per word from the one-best tokenization and from
    the independent and consistent importance-sampling estimates, with their spreads."""
    loss = caching.filter(pl.col("analysis") == "caching")
    losses = (loss.pivot(on="group", index=["language", "subset"], values="loss_nats_per_word",
                         aggregate_function="first")
              .join(loss.filter(pl.col("group") == "different").select(
                  "language", "subset", pl.col("n_occurrences").alias("n_different")),
                  on=["language", "subset"], how="left")
              .sort("language", "subset"))
    est = caching.filter(pl.col("analysis") == "estimate")
    ppl = est.pivot(on="group", index="language", values="ppl_per_word",
                    aggregate_function="first")
    sd = (est.filter(pl.col("group") != "default")
          .pivot(on="group", index="language", values="log_weight_sd_nats",
                 aggregate_function="first")
          .rename(lambda c: c if c == "language" else f"sd_{c}"))
    return losses, ppl.join(sd, on="language", how="left").sort("language")


def _percent(value) -> str:
    return "n/a" if value is None else f"{fmt(float(value))}%"


def ranking_sentences(rankings: pl.DataFrame, fair: pl.DataFrame) -> list[str]:
    """One sentence per (model, tokenizer): how much marginalizing saves and whether the
    ranking of languages moves. Where a language has fewer units than the minimum
    (``rankings.note``), only the numbers: no largest gap, rho, p or places changed, and the
    sentence says why."""
    out = []
    for row in rankings.iter_rows(named=True):
        part = fair.filter(corpus=row["corpus"], model=row["model"], tokenizer=row["tokenizer"])
        gaps = part["relative_gap_percent"].drop_nulls()
        units = sorted(set(part["n_units"]))
        unit_text = (f"{units[0]} units" if len(units) == 1
                     else f"{min(units)}-{max(units)} units")
        label = (f"{model_label(row['model'], row['tokenizer'])} ({row['estimator']}, "
                 f"{row['corpus']}, {unit_text} per language)")
        if row.get("note"):
            saved = (f"{_percent(gaps.min())} to {_percent(gaps.max())} of the bits"
                     if gaps.len() else "n/a")
            out.append(f"{label}: on these units the marginal is {saved} below the default "
                       f"tokenization's. With {row['min_units_per_language']} units per "
                       f"language, fewer than the {row['min_units']} the study asks for "
                       f"(marginal.min_units), these are the numbers of a handful of verses, "
                       f"not of the languages: no intervals, p-values or ranking claims are "
                       f"made from them.")
            continue
        saved = (f"saves {_percent(gaps.min())} to {_percent(gaps.max())} of the bits "
                 f"(largest: {row['largest_gap_language']})" if gaps.len() else "saves n/a")
        if row["spearman_rho"] is None:
            move = (f"too few languages ({row['n_languages']}) to compare rankings"
                    if row["n_languages"] < 3 else "rankings identical up to ties")
        else:
            move = (f"Spearman rho between the two rankings {fmt(row['spearman_rho'])} "
                    f"(p = {fmt(row['spearman_p'])}); {row['languages_moved']} of "
                    f"{row['n_languages']} languages change place"
                    + (f" (by at most {row['max_rank_shift']})" if row["languages_moved"] else ""))
        out.append(f"{label}: marginalizing {saved}; {move}.")
    return out


def coverage_sentences(accuracy: pl.DataFrame, level: float = 0.9) -> list[str]:
    """What the accuracy table's coverage says, per estimator with intervals: the share of
    units whose ``level`` interval holds the exact value against the nominal rate, whether the
    shortfall is beyond binomial error (2 standard errors), and why; and which estimators have
    no interval at all."""
    out = []
    if "coverage_percent" not in accuracy.columns:
        return out
    for row in accuracy.filter(pl.col("coverage_percent").is_not_null()).iter_rows(named=True):
        n = row.get("n_interval_units") or row["n_units"]
        nominal = 100.0 * level
        slack = 200.0 * (level * (1.0 - level) / max(n, 1)) ** 0.5
        what = (f"{model_label(row['model'], row['tokenizer'])}, {row['estimator']}"
                + (f" (K = {row['K']})" if row.get("K") else ""))
        spread = row.get("log_weight_sd_nats")
        tail = (f" (median spread of its K log-weights {fmt(float(spread))} nats)"
                if spread is not None else "")
        totals = ""
        if row.get("n_mc_totals"):
            totals = (f" The Monte Carlo interval of a language's total holds the exact total "
                      f"in {row['mc_total_covered']} of {row['n_mc_totals']} languages.")
        if row["coverage_percent"] < nominal - slack:
            out.append(
                f"{what}: its {nominal:.0f}% interval holds the exact value on "
                f"{_percent(row['coverage_percent'])} of {n} units, below the nominal rate "
                f"beyond binomial error (+-{fmt(slack)} points). This is a finding about the "
                f"estimator, not noise: its importance weights are heavy-tailed{tail}, so K "
                f"samples usually miss the rare large weights that carry much of the "
                f"marginal, and such a sample is both too low and too tight: any interval "
                f"resampled from it, BCa included, is too narrow. Read its per-unit "
                f"intervals as lower limits of the error; trust those of the estimators whose "
                f"coverage here is at the nominal rate." + totals)
        else:
            out.append(f"{what}: its {nominal:.0f}% interval holds the exact value on "
                       f"{_percent(row['coverage_percent'])} of {n} units, within binomial "
                       f"error (+-{fmt(slack)} points) of the nominal rate{tail}." + totals)
    if out:
        out.append("Which intervals to trust: a Monte Carlo interval (per unit, or of a "
                   "language's total) holds its nominal rate where the K log-weights spread "
                   "about 1 nat or less (bench/bench_mc_interval.py: 87-94% at a nominal 90%), "
                   "not where they spread more, as above; the intervals over units of the "
                   "totals, at marginal.min_units units or more, carry the Monte Carlo spread "
                   "but not the estimator's Jensen bias (log mean(w) is biased low; the table's "
                   "mc_correction_nats says by how much).")
    none = sorted(set(accuracy.filter(pl.col("coverage_percent").is_null())["estimator"]))
    if none:
        out.append(f"No interval, so no coverage: {', '.join(none)} (deterministic lower bounds, "
                   f"or Horvitz-Thompson sums without a variance estimate). The exact values "
                   f"need none; the totals' intervals over units (at enough units) and their "
                   f"Monte Carlo intervals are in results/tables/marginal.csv.")
    return out


def interval_caption(panels: pl.DataFrame) -> str:
    """The caption of the per-sequence intervals figure, from what it drew
    (:func:`fairppl.report.plots_marginal.interval_panels`)."""
    bits = []
    for r in panels.iter_rows(named=True):
        missing = r["n_units"] - r["n_intervals"]
        bits.append(f"{model_label(r['model'], r['tokenizer'])}, {r['estimator']}: "
                    f"{r['n_intervals']} of its {r['n_units']} units"
                    + (f" ({missing} without an interval: their samples leave the "
                       f"per-sequence bootstrap undefined)" if missing else "")
                    + (f"; {r['n_cut']} interval(s) reach beyond the axis and are cut there "
                       f"(red triangles)" if r["n_cut"] else ""))
    return ("Per-sequence intervals (Chirkova et al. 2023): each unit's estimated gap, "
            "estimate - default log P (nats), with its 90% interval over the K samples, units "
            "sorted by the estimate; crosses: the exact gap where the n-gram has one. The "
            "y-axis holds every estimate and reaches three upper-quartile interval half-widths past "
            "them. Drawn: "
            + "; ".join(bits) + ".")


def _named(df: pl.DataFrame, names: dict[str, str]) -> pl.DataFrame:
    if "language" not in df.columns:
        return df
    return df.with_columns(pl.col("language").replace(names).alias("language"))


def _table(df: pl.DataFrame, headers: dict, caption: str, names: dict[str, str],
           keep=("language", "model")) -> str:
    df, constant = drop_constant_columns(_named(df, names), keep=keep)
    stated = constants_text(constant)
    return html_table(df, headers, caption=caption + (f" ({stated})" if stated else ""))


def marginal_body(tables: dict[str, pl.DataFrame], names: dict[str, str],
                  figures: dict[str, str], figure) -> str | None:
    """The section's HTML (None without a fair-bits table). ``figure(path, alt)`` embeds a PNG."""
    fair = tables.get("fair")
    if fair is None or not fair.height:
        return None
    rankings, parts = tables.get("rankings"), []
    parts.append(_p("P(text) is the sum of P over every token sequence that spells the text; "
                    "the study's other numbers score only the tokenizer's default sequence, a "
                    "lower bound. Here each model's bits come from both, on the same units: "
                    "the exact marginal where it can be computed (the subword n-gram's forward "
                    "algorithm over its own context states), otherwise the LM-guided block "
                    "proposal (Chirkova et al. 2023) or the unigram-lattice importance "
                    "sampler (Cao & Rimell 2021). A neural LM's units are those whose default "
                    "tokenization fills at most 85% of its context (every sampled tokenization "
                    "must fit in one window): n_units says how many."))
    if rankings is not None and rankings.height:
        parts.extend(_p(s, "answer") for s in ranking_sentences(rankings, fair))
    few = (fair.filter(pl.col("ci_note").is_not_null()) if "ci_note" in fair.columns
           else fair.head(0))
    if few.height:
        models = sorted({model_label(m, t) for m, t in zip(few["model"], few["tokenizer"])})
        lo, hi = few["n_units"].min(), few["n_units"].max()
        parts.append(_p(f"Rows on too few units ({', '.join(models)}: "
                        f"{lo if lo == hi else f'{lo}-{hi}'} units per language) "
                        f"are shown without intervals: a bootstrap over so few units has almost "
                        f"no distinct replicates (2 units give 3) and says nothing about the "
                        f"language; their ci_note says so.", "note"))
    parts.append(_p("Two intervals per row where there are enough units: over units (which "
                    "units were drawn from the language's text; a sampled estimator's Monte "
                    "Carlo error is inside it, through the spread of the unit estimates) and "
                    "Monte Carlo (where the exact total of these units may lie given K samples "
                    "per unit; a unit whose samples were all one path enters by the bound from "
                    "its default log P to its estimate, never with zero width).", "note"))
    parts.append(_table(fair.sort("model", "tokenizer", "bpec_default", descending=[
        False, False, True]), FAIR_COLUMNS, "Bits from the default tokenization and from the "
        "marginal, side by side (BPEC interval: paired bootstrap over units; Monte Carlo "
        "interval of the gap: these units' K samples)", names))
    if rankings is not None and rankings.height:
        parts.append(_table(rankings, RANKING_COLUMNS, "Does the ranking of languages change?",
                            names, keep=("model",)))
    accuracy = tables.get("accuracy")
    if accuracy is not None and accuracy.height:
        parts.append(_p("How close each estimator comes to the exact marginal of the same unit "
                        "(the n-gram's forward algorithm at full verse length): bias and spread "
                        "in nats per unit, the share of the true gap it recovers, and how often "
                        "its interval covers the exact value. 'default' is the gap itself.",
                        "note"))
        parts.append(_table(accuracy, ACCURACY_COLUMNS, "Estimators against the exact marginal",
                            names, keep=("estimator",)))
        items = "".join(f"<li>{html.escape(s)}</li>" for s in coverage_sentences(accuracy))
        if items:
            parts.append(f"<ul>{items}</ul>")
    entropy = tables.get("entropy")
    if entropy is not None and entropy.height:
        parts.append(figure(figures.get("marginal_entropy"), "lattice entropy vs marginal gap"))
        pooled = entropy.filter(pl.col("language") == "all")
        per_language = entropy.filter(pl.col("language") != "all")["spearman_rho"].drop_nulls()
        for row in pooled.iter_rows(named=True):
            spread = (f"; per language {fmt(per_language.min())} to {fmt(per_language.max())}"
                      if per_language.len() else "")
            label = model_label(row["model"], row["tokenizer"])
            if row["spearman_rho"] is None:
                parts.append(_p(f"Tokenizer uncertainty and the gap ({label}): {row['n_units']} "
                                f"units pooled are too few (marginal.min_units) for a "
                                f"correlation; none is reported.", "note"))
                continue
            parts.append(_p(f"Tokenizer uncertainty and the gap ({label}): "
                            f"Spearman rho {fmt(row['spearman_rho'])} over {row['n_units']} units "
                            f"pooled{spread}. Cao & Rimell (2021) report 0.57 for English and 0.49 "
                            f"for German (Transformer-XL, WMT/Wikipedia/arXiv).", "note"))
        parts.append(_table(entropy, ENTROPY_COLUMNS, "Lattice entropy vs marginal gap, per "
                            "language", names, keep=("language",)))
    panels = tables.get("interval_panels")
    if panels is not None and panels.height:
        parts.append(figure(figures.get("marginal_intervals"), "per-sequence intervals"))
        parts.append(_p(interval_caption(panels), "note"))
    lengths = tables.get("lengths")
    if lengths is not None and lengths.height:
        parts.append(_p("Which proposal should a user pick, at what text length? Each estimator "
                        "on the first n words of units against the n-gram's exact marginal "
                        "(RMSE in nats), with its cost (LM token positions: the cost that "
                        "carries over to a neural LM). The lower bounds (beam search and the "
                        "decoding-free sum over distinct tokenizations of Pohl, Cognetta et al. "
                        "2025) can only sit below the exact marginal, so their RMSE is the "
                        "probability mass they miss. Cheapest estimator within 0.01 nats of "
                        "the exact marginal, pooled over languages:", "note"))
        items = "".join(f"<li>{html.escape(s)}</li>" for s in recommendation(lengths))
        parts.append(f"<ul>{items}</ul>")
        pooled = pooled_summary(lengths)
        parts.append(_table(pooled, SUMMARY_COLUMNS, "Estimators by text length, languages "
                            "pooled (results/tables/marginal_lengths.csv has each language)",
                            names, keep=("estimator",)))
    needed = tables.get("samples_needed")
    if needed is not None and needed.height and "order" in needed.columns:
        parts.append(_p("Samples needed (Cao & Rimell 2021): per unit, the distinct paths drawn "
                        "from the unigram lattice (WOR samples and the n-best list), summed in "
                        "the order of their proposal probability Q or of their LM probability P, "
                        "until they hold 99% or 99.9% of the exact n-gram marginal. Ordered by "
                        "P fewer paths are needed: the proposal spends samples on paths the LM "
                        "rates low.", "note"))
        parts.append(figure(figures.get("marginal_samples_needed"), "samples-needed curves"))
        parts.append(_table(samples_needed_table(needed), NEEDED_HEADERS,
                            "Paths holding 99% / 99.9% of the exact marginal", names))
    qdefault = tables.get("qdefault")
    if qdefault is not None and qdefault.height and "bin" in qdefault.columns:
        parts.append(_p("Chirkova et al. 2023, Table 2: LM-guided blocks (about one word each) "
                        "binned by the probability the proposal gives their default "
                        "tokenization, Q(df.), given the default prefix: the share of blocks "
                        "(%) per bin. Blocks below 0.9 are where marginalizing matters.", "note"))
        parts.append(_table(qdefault_table(qdefault), {"n_blocks": "blocks (count)"} | {
            b: "blocks in this Q(df.) bin (%)" for b in qdefault["bin"].unique()},
            "Blocks by Q(default)", names, keep=("model", "language")))
        rare = qdefault.filter((pl.col("bin") != "[0.99,1]") & (pl.col("n_blocks") > 0)
                               & (pl.col("language") == "eng"))
        if rare.height:
            items = "".join(f"<li>{html.escape(r['model'])}, Q(df.) in {html.escape(r['bin'])}: "
                            f"{html.escape(r['examples'])}</li>" for r in rare.iter_rows(
                                named=True))
            parts.append(_p("English blocks whose default tokenization the proposal doubts "
                            "(examples):", "note") + f"<ul>{items}</ul>")
    caching = tables.get("caching")
    if caching is not None and caching.height and "analysis" in caching.columns:
        losses, ppl = caching_tables(caching)
        parts.append(_p("Caching (Cao & Rimell 2021, Table 2), with each Transformer over unigram "
                        "pieces on documents of consecutive verses: the loss of a repeated "
                        "word is much lower when it is tokenized as an earlier occurrence was "
                        "than when every earlier occurrence was tokenized otherwise, so "
                        "sampling tokenizations independently per occurrence pays for breaking "
                        "the model's copying; the 'different' class is rare at tau = 1 (see its "
                        "count).", "note"))
        parts.append(_table(losses, CACHING_HEADERS, "Loss of word occurrences by tokenization "
                            "history", names, keep=("language",)))
        parts.append(_table(ppl, CACHING_HEADERS, "Consistent vs independent tokenization: "
                            "perplexity per whitespace word of the same documents (for "
                            "languages written without spaces a 'word' is a whole clause, so "
                            "compare the columns within a row, not across rows)", names,
                            keep=("language",)))
    published = tables.get("published")
    if published is not None and published.height:
        # One table per published setting: its source, data and model are the caption, so the
        # rows keep only what varies (a single wide table wrapped every cell into tall rows).
        for _, part in published.group_by(["source", "data", "their_model"], maintain_order=True):
            parts.append(_table(part, PUBLISHED_COLUMNS, "Published numbers beside ours "
                                "(change of the measure when marginalizing)", names,
                                keep=("language", "estimator")))
    return "\n".join(p for p in parts if p)
