"""The report's section on the Shannon game (Bimbot, El-Bèze & Jardino): per language and bettor
the gambling perplexity with exhaustive truncations beside the likelihood perplexity, the
randomized estimate with its bounds, lists limited to the l best bets, Shannon's rank bounds, the
cost per truncation, the figure, and the paper's Le Monde values beside ours in a note.

Built from ``results/tables/shannon.csv`` (``tables["table"]``), ``shannon_ranks.csv``
(``tables["ranks"]``), the published values (``tables["published"]``, from
``resources/published/shannon_bimbot.tsv``) and the figure of ``plot_shannon``.
"""

from __future__ import annotations

import polars as pl

from .html import fmt, html_table
from .html import paragraph as _p
from .plots import model_label

#: The published values' file, shipped with the workflow.
PUBLISHED = "shannon_bimbot.tsv"

#: The paper's likelihood perplexity and outcome count (Le Monde, bigram of eq. 7).
PAPER_LIKELIHOOD, PAPER_M = 159.77, 20003


def read_published(path) -> pl.DataFrame:
    """The paper's Tables 1 and 2 (``#`` lines are the citation)."""
    return pl.read_csv(path, separator="\t", comment_prefix="#", infer_schema_length=None)


def _cell(value, low=None, high=None) -> str:
    if value is None and low is None:
        return ""
    if value is None:
        return f"[{fmt(low)}, {fmt(high)}]"
    if low is None:
        return fmt(value)
    return f"{fmt(value)} [{fmt(low)}, {fmt(high)}]"


def summary_table(table: pl.DataFrame, names: dict[str, str]) -> pl.DataFrame:
    """One row per language and bettor: the headline numbers of every protocol."""
    rows = []
    keys = ["corpus", "language", "model", "tokenizer"]
    for key, part in sorted(table.group_by(keys), key=lambda g: g[0]):
        corpus, language, model, tok = key
        full = part.filter((pl.col("protocol") == "exhaustive")
                           & (pl.col("n_t") == pl.col("n_truncations"))).row(0, named=True)
        drawn = part.filter((pl.col("protocol") == "randomized")
                            & pl.col("perplexity_per_word").is_not_null()).sort("n_t")
        limited = {r["l"]: r["perplexity_per_word"]
                   for r in part.filter(pl.col("protocol") == "limited").iter_rows(named=True)}
        common = part.filter(pl.col("protocol") == "common")
        bounds = part.filter((pl.col("protocol") == "rank-bounds")
                             & (pl.col("l") == pl.col("m_outcomes")) & (pl.col("tail") == "uniform"))
        row = {
            "language": names.get(language, language),
            "bettor": model_label(model, tok),
            "units": full["n_units"],
            "truncations": full["n_truncations"],
            "oov": full["oov_percent"],
            "gambling": full["perplexity_per_word"],
            "likelihood": full["likelihood_perplexity_per_word"],
            "common units": common["n_units"][0] if common.height else None,
            "gambling, common": (common["perplexity_per_word"][0] if common.height else None),
        }
        if drawn.height:
            last = drawn.row(-1, named=True)
            row["randomized"] = (f"n_t={last['n_t']}: " + _cell(
                last["perplexity_per_word"], last["low_per_word"], last["high_per_word"]))
        else:
            row["randomized"] = ""
        for length in (1, 10, 100):
            row[f"l={length}"] = limited.get(length)
        if bounds.height:
            b = bounds.row(0, named=True)
            row["rank bounds"] = _cell(None, b["low_per_word"], b["high_per_word"])
        else:
            row["rank bounds"] = ""
        row["s/truncation"] = full["seconds_per_truncation"]
        rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None)


HEADERS = {
    "language": "name",
    "bettor": "model / tokenizer",
    "units": "evaluation units (count)",
    "truncations": "bets placed (count)",
    "oov": "correct outcome <unk> (percent)",
    "gambling": "exhaustive gambling perplexity (per word)",
    "likelihood": "likelihood perplexity, same words (per word)",
    "common units": "units every bettor of the language bet on (count)",
    "gambling, common": "exhaustive gambling perplexity on them (per word)",
    "randomized": "geometric mean [95% bounds] of 20 draws (per word)",
    "l=1": "list of the best bet + floor (per word)",
    "l=10": "10 best bets + floor (per word)",
    "l=100": "100 best bets + floor (per word)",
    "rank bounds": "Shannon's bounds from ranks only (per word)",
    "s/truncation": "bettor's wall-clock time (s)",
}


def published_comparison(table: pl.DataFrame, published: pl.DataFrame,
                         language: str = "fra") -> pl.DataFrame | None:
    """The paper's limited-list and rank-bound perplexities relative to its full-list value, beside
    ours for the same kind of bettor (the eq. 7 bigram) in French, at the list lengths both have."""
    ours = table.filter((pl.col("language") == language) & (pl.col("model") == "bigram-eq7"))
    if not ours.height or not published.height:
        return None
    full = ours.filter(pl.col("protocol") == "limited").sort("l")["perplexity_per_word"][-1]
    rows = []
    for r in published.filter(pl.col("protocol") == "limited").iter_rows(named=True):
        mine = ours.filter((pl.col("protocol") == "limited") & (pl.col("l") == r["l"]))
        rows.append({"l": r["l"], "paper": r["perplexity"],
                     "paper_ratio": r["perplexity"] / PAPER_LIKELIHOOD,
                     "ours": mine["perplexity_per_word"][0] if mine.height else None,
                     "ours_ratio": (mine["perplexity_per_word"][0] / full
                                    if mine.height else None)})
    return pl.DataFrame(rows, infer_schema_length=None)


def shannon_body(tables: dict[str, pl.DataFrame], names: dict[str, str],
                 figures: dict[str, str], figure) -> str | None:
    """The section's HTML (None when no bettor played). ``figure(path, alt)`` embeds a PNG."""
    table = tables.get("table")
    if table is None or not table.height:
        return None
    parts = []
    m = sorted(set(table["m_outcomes"]))
    parts.append(_p(
        "In the Shannon game each model distributes a capital of 1 over the next word after a "
        "truncated verse; the gambling perplexity is the inverse geometric mean of the bets on "
        "the words that came. It needs neither the model's code nor its vocabulary: a site "
        "sends bets, the organiser scores them (`fairppl campaign`, README). The outcomes are "
        f"the language's most frequent training words, <unk> for every other word and </s> "
        f"for the end of the verse (m = {', '.join(map(str, m))}). A subword or character "
        "model's bet on a word is the probability that the next whitespace-delimited word is "
        "exactly that word: its canonical tokens and then a word boundary or the end of the "
        "text, given that the context ends at a boundary; <unk> takes the rest of the mass."))
    parts.append(_p(
        "Perplexities are per word and comparable between models of one language only (same "
        "outcomes, same verses); across languages the vocabularies and word lengths differ, so "
        "bits per English character remains the cross-language measure. With exhaustive "
        "truncations and bets equal to the model's conditional probabilities the gambling "
        "perplexity equals the likelihood perplexity; for a token model the two differ only "
        "through <unk>, which the game pools over every out-of-vocabulary word.", "note"))
    summary = summary_table(table, names)
    parts.append(html_table(summary, HEADERS, caption="The Shannon game per language and bettor "
                            "(results/tables/shannon.csv has every protocol, n_t and l)"))
    parts.append(figure(figures.get("shannon"), "Gambling perplexity against the list length, "
                        "randomized estimates against n_t, rank histogram"))
    crossed = table.filter((pl.col("protocol") == "rank-bounds")
                           & (pl.col("low_per_word") > pl.col("high_per_word")))
    if crossed.height:
        who = sorted({f"{names.get(r['language'], r['language'])} "
                      f"{model_label(r['model'], r['tokenizer'])}"
                      for r in crossed.iter_rows(named=True)})
        parts.append(_p(
            "Shannon's lower bound holds for an ideal predictor, whose rank frequencies never "
            "rise; on a few verses they do, and the lower end can exceed the upper one. Where it "
            f"does ({'; '.join(who)}), the bracket is no bound, only the two numbers (the rows' "
            "note in shannon.csv says so).", "note"))
    bad = table.filter((pl.col("protocol") == "limited") & (pl.col("n_inconsistent") > 0))
    if bad.height:
        where = sorted({f"{names.get(r['language'], r['language'])} "
                        f"{model_label(r['model'], r['tokenizer'])} at l = {r['l']}"
                        for r in bad.iter_rows(named=True)})
        parts.append(_p(f"{int(bad['n_inconsistent'].sum())} lists of our own bettors fail the "
                        f"consistency check ({'; '.join(where)}; shannon.csv, n_inconsistent). "
                        "A list fails it by float64 rounding alone when its unlisted outcomes "
                        "hold less than about 1e-16 in all: the listed bets then sum to exactly "
                        "1, leaving 1 - A_l = 0.", "note"))
    published = tables.get("published")
    if published is not None:
        comparison = published_comparison(table, published)
        parts.append(_p(
            f"Published (Le Monde, not our Bible): Bimbot et al.'s bigram, m = {PAPER_M}, has a "
            f"likelihood perplexity of {PAPER_LIKELIHOOD}; lists of 10 bets give 1098.54 and of "
            "5000 give 160.50; Shannon's rank bounds run from 48.87 to 188.05; randomized "
            "truncations with n_t = 1000 give 160.90 [130.52, 198.34]. Only the shape of the "
            "curves can be compared: our vocabulary is 20 times smaller, our corpus a "
            "translation, our test set 100 short verses (the word bettors; fewer for the "
            "others).", "note"))
        if comparison is not None:
            parts.append(html_table(comparison, {
                "l": "list length", "paper": "Le Monde bigram (per word)",
                "paper_ratio": "÷ its full-list value", "ours": "French Bible bigram (per word)",
                "ours_ratio": "÷ our full-list value"},
                caption="Limited lists, the paper's Table 2 beside ours (French; m differs)"))
    return "".join(parts)
