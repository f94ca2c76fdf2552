"""Two comparisons the report shows beside the languages x models tables: what the end-of-unit
token costs each token LM (BPEC with and without it), and model against model per language
(paired BPEC differences, fairppl.stats.bootstrap.paired_model_differences), each as a short table and
a generated sentence. Inputs are the common-units table (fairppl.stats.metrics.bits_per_utterance with
the end-of-unit columns) and the model differences table."""

from __future__ import annotations

import polars as pl

from ..stats.bootstrap import BootstrapSettings
from ..stats.correlates import spearman
from ..stats.metrics import model_order
from .rankings import open_rows
from .html import fmt, html_table, paragraph

#: Units of the end-of-unit table's columns.
EOS_UNITS = {
    "model": "model / tokenizer",
    "n_languages": "languages scored (count)",
    "eos_bits_per_utterance": "end-of-unit token, all languages pooled (bits/utterance)",
    "eos_share": "end-of-unit bits / all bits, all languages pooled (fraction)",
    "eos_share_min": "lowest share of one language (fraction)",
    "eos_share_max": "highest share of one language (fraction)",
    "bpec": "with the end-of-unit token, mean over languages (bits/char of English)",
    "bpec_no_eos": "without it, mean over languages (bits/char of English)",
    "spearman_rho": "ranking of the languages with vs without it (-1 to 1)",
}


def eos_table(models: pl.DataFrame, corpus: str) -> pl.DataFrame:
    """One row per open-vocabulary model of ``corpus`` whose scores record the end-of-unit cost
    (``bits_eos_total`` not null; every scorer records it): its end-of-unit bits per
    utterance and share of all bits (ratios of sums over its languages, and the share's range
    over languages), its mean BPEC with and without the end token, and Spearman's rho between
    the two rankings of its languages (null below 3 languages)."""
    schema = {"model": pl.String, "n_languages": pl.Int64,
              "eos_bits_per_utterance": pl.Float64, "eos_share": pl.Float64,
              "eos_share_min": pl.Float64, "eos_share_max": pl.Float64, "bpec": pl.Float64,
              "bpec_no_eos": pl.Float64, "spearman_rho": pl.Float64}
    rows = open_rows(models, corpus)
    if "bits_eos_total" not in rows.columns:
        return pl.DataFrame(schema=schema)
    rows = rows.filter(pl.col("bits_eos_total").is_not_null())
    out = []
    for label in model_order(rows["label"].to_list()):
        part = rows.filter(label=label)
        rho, _, _ = spearman(part["bpec"].to_list(), part["bpec_no_eos"].to_list())
        out.append({
            "model": label, "n_languages": part.height,
            "eos_bits_per_utterance": part["bits_eos_total"].sum() / part["n_units"].sum(),
            "eos_share": part["bits_eos_total"].sum() / part["bits_total"].sum(),
            "eos_share_min": part["eos_share"].min(), "eos_share_max": part["eos_share"].max(),
            "bpec": part["bpec"].mean(), "bpec_no_eos": part["bpec_no_eos"].mean(),
            "spearman_rho": rho})
    return pl.DataFrame(out, schema=schema, orient="row")


def _percent(fraction: float) -> str:
    return f"{100 * fraction:.1f}%" if fraction < 0.1 else f"{100 * fraction:.0f}%"


def _share_range(low: float, high: float) -> str:
    low_text, high_text = _percent(low), _percent(high)
    if low_text == high_text:
        return f"{low_text} in every language"
    return f"{low_text}-{high_text} by language"


def eos_sentences(models: pl.DataFrame, corpus: str) -> list[str]:
    """What the end-of-unit token costs each model of :func:`eos_table`, in words (e.g.
    "smollm2-135m / native: 13% of its bits (19.9 bits per utterance; 12%-16% by language), mean
    BPEC 0.987 without it instead of 1.14 bits/English char"), largest share first, and which
    open-vocabulary models do not record it."""
    table = eos_table(models, corpus)
    rows = open_rows(models, corpus)
    sentences = []
    if table.height:
        clauses = [
            f"{r['model']}: {_percent(r['eos_share'])} of its bits "
            f"({fmt(r['eos_bits_per_utterance'])} bits per utterance; "
            f"{_share_range(r['eos_share_min'], r['eos_share_max'])}), "
            f"mean BPEC {fmt(r['bpec_no_eos'])} without it instead of {fmt(r['bpec'])} "
            f"bits/English char"
            for r in table.sort("eos_share", descending=True).iter_rows(named=True)]
        sentences.append(f"On {corpus}, the end-of-unit token takes, per model — "
                         + "; ".join(clauses) + ".")
    missing = sorted(set(rows["label"]) - set(table["model"]))
    if missing:
        sentences.append(f"Not recorded for {', '.join(model_order(missing))}: their per-unit "
                         f"tables do not store the end-of-unit cost separately (it is inside "
                         f"their bits).")
    return sentences


#: Units of the model-vs-model summary's columns.
PAIR_UNITS = {
    "model_a": "model / tokenizer", "model_b": "model / tokenizer",
    "n_languages": "languages both scored (count)",
    "mean_difference": "BPEC a - b, mean over languages (bits/char of English)",
    "min_difference": "smallest difference of one language (bits/char of English)",
    "max_difference": "largest difference of one language (bits/char of English)",
    "a_lower": "languages where a has lower BPEC, interval excludes 0 (count)",
    "b_lower": "languages where b has lower BPEC, interval excludes 0 (count)",
    "not_told_apart": "languages where the interval covers 0 (count)",
}


def model_pair_summary(differences: pl.DataFrame, corpus: str) -> pl.DataFrame:
    """Per pair of models of ``corpus`` (rows of fairppl.stats.bootstrap.paired_model_differences):
    the BPEC difference a - b over the languages both scored (mean, range) and for how many
    languages the paired interval tells them apart, in which direction."""
    schema = {c: (pl.String if c.startswith("model") else
                  pl.Float64 if c.endswith("difference") else pl.Int64) for c in PAIR_UNITS}
    if differences is None or not differences.height:
        return pl.DataFrame(schema=schema)
    part = differences.filter(corpus=corpus).with_columns(
        model_a=pl.col("model_a") + " / " + pl.col("tokenizer_a"),
        model_b=pl.col("model_b") + " / " + pl.col("tokenizer_b"))
    apart = pl.col("excludes_zero")
    diff = pl.col("bpec_difference")
    return (part.group_by("model_a", "model_b", maintain_order=True)
            .agg(pl.len().cast(pl.Int64).alias("n_languages"),
                 diff.mean().alias("mean_difference"), diff.min().alias("min_difference"),
                 diff.max().alias("max_difference"),
                 (apart & (diff < 0)).sum().cast(pl.Int64).alias("a_lower"),
                 (apart & (diff > 0)).sum().cast(pl.Int64).alias("b_lower"),
                 (~apart).sum().cast(pl.Int64).alias("not_told_apart"))
            .select(list(schema)).cast(schema))


def model_pair_sentence(differences: pl.DataFrame, corpus: str, level: float) -> str | None:
    """The model-vs-model comparisons in one sentence: every other model against the first
    model of the report order (a character n-gram), and how many of all the (pair, language)
    comparisons the paired interval tells apart."""
    summary = model_pair_summary(differences, corpus)
    if not summary.height:
        return None
    ref = model_order(summary["model_a"].to_list() + summary["model_b"].to_list())[0]
    clauses = []
    for r in summary.filter(model_a=ref).iter_rows(named=True):
        # difference = ref - other: positive means the other model needs fewer bits
        side = "lower" if r["mean_difference"] > 0 else "higher"
        clauses.append(
            f"{r['model_b']}'s BPEC is {side} by {fmt(abs(r['mean_difference']))} "
            f"bits/English char on average (lower in {r['b_lower']} of {r['n_languages']} "
            f"languages, higher in {r['a_lower']}, not told apart in {r['not_told_apart']})")
    n_all = int(summary["n_languages"].sum())
    n_apart = n_all - int(summary["not_told_apart"].sum())
    head = (f"Model against model on {corpus} ({level:.0%} paired intervals per language, "
            f"the same units for both models): ")
    body = (f"against {ref}, " + "; ".join(clauses) + ". " if clauses else "")
    pairs = "the pair" if summary.height == 1 else f"all {summary.height} pairs"
    return (head + body + f"Over {pairs} of models and their languages, the interval excludes 0 "
            f"in {n_apart} of {n_all} comparisons.")


def model_pairs_html(differences: pl.DataFrame | None, corpus: str,
                     bootstrap: BootstrapSettings) -> str:
    """Model against model for the report: the sentence and the per-pair summary ('' if none)."""
    sentence = model_pair_sentence(differences, corpus, bootstrap.level)
    if sentence is None:
        return ""
    return paragraph(sentence) + html_table(
        model_pair_summary(differences, corpus), PAIR_UNITS, caption=(
            f"Model against model ({corpus}): BPEC of model a - model b per language on the "
            f"common units, each with a paired interval ({bootstrap.describe()}); per language "
            f"in results/tables/model_differences.csv"))


def end_of_unit_html(models: pl.DataFrame, corpus: str) -> str:
    """What the end-of-unit token costs each token LM: sentences and the per-model table of
    :func:`eos_table` ('' if no model records it)."""
    table = eos_table(models, corpus)
    if not table.height:
        return ""
    return "".join(paragraph(s) for s in eos_sentences(models, corpus)) + html_table(
        table, EOS_UNITS, caption=(
            f"BPEC with and without the end-of-unit token ({corpus}): every unit is charged "
            f"its end token, whose cost differs by model; per language in "
            f"results/tables/models.csv"))
