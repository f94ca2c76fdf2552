"""The report's section on the Shannon game (Bimbot, El-Bèze & Jardino): per language and bettor
the gambling perplexity with exhaustive truncations beside the likelihood perplexity, the
randomized estimate with its bounds, lists limited to the l best bets, Shannon's rank bounds, the
cost per truncation, the figure, and the paper's Le Monde values beside ours in a note. Every
count, name and comparison in the text is computed from the tables: the main sentence compares
the bettors of a language on the units they all bet on (the ``common`` rows, with their
intervals over units), and the Le Monde comparison is worded as one of shape only (another text,
another m), with the ratios at each list length.

Built from ``results/tables/shannon.csv`` (``tables["table"]``), ``shannon_ranks.csv``
(``tables["ranks"]``), the published values (``tables["published"]``, from
``resources/published/shannon_bimbot.tsv``) and the figure of ``plot_shannon``.
"""

from __future__ import annotations

import polars as pl

from .html import fmt, html_table, subsection
from .html import paragraph as _p
from .plots import model_label

#: The published values' file, shipped with the workflow.
PUBLISHED = "shannon_bimbot.tsv"


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
        c = common.row(0, named=True) if common.height else None
        row = {
            "language": names.get(language, language),
            "bettor": model_label(model, tok),
            "units": full["n_units"],
            "truncations": full["n_truncations"],
            "oov": full["oov_percent"],
            "gambling": _cell(full["perplexity_per_word"], full["ci_low_per_word"],
                              full["ci_high_per_word"]),
            "likelihood": full["likelihood_perplexity_per_word"],
            "common units": c["n_units"] if c else None,
            "gambling, common": (_cell(c["perplexity_per_word"], c["ci_low_per_word"],
                                       c["ci_high_per_word"]) if c else ""),
        }
        if drawn.height:
            last = drawn.row(-1, named=True)
            row["randomized"] = (f"n_t={last['n_t']}, {last['n_draws']} draws, "
                                 f"{last['scheme']}: " + _cell(
                                     last["perplexity_per_word"], last["low_per_word"],
                                     last["high_per_word"]))
        else:
            row["randomized"] = ""
        for length in (1, 10, 100):
            row[f"l={length}"] = limited.get(length)
        if bounds.height:
            b = bounds.row(0, named=True)
            row["rank bounds"] = _cell(None, b["low_per_word"], b["high_per_word"]) + (
                f" (estimates; Miller-Madow {fmt(b['high_mm_per_word'])}, 95% bound "
                f"{fmt(b['high_bound_per_word'])})" if b["rank_values_kind"] == "estimates"
                else f" ({b['rank_values_kind']})")
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
    "gambling": "exhaustive gambling perplexity [interval over units] (per word)",
    "likelihood": "likelihood perplexity, same words (per word)",
    "common units": "units every bettor of the language bet on (count)",
    "gambling, common": "exhaustive gambling perplexity on them [interval] (per word)",
    "randomized": "largest n_t: draws, scheme, geometric mean [eq. 8 bounds] (per word)",
    "l=1": "list of the best bet + floor (per word)",
    "l=10": "10 best bets + floor (per word)",
    "l=100": "100 best bets + floor (per word)",
    "rank bounds": "Shannon's values from ranks only, l = m: estimates of his bounds, the upper "
                   "one biased low (per word)",
    "s/truncation": "bettor's wall-clock time (s)",
}


def common_sentences(table: pl.DataFrame, names: dict[str, str]) -> list[str]:
    """Per language with two bettors or more, the bettors in order of their gambling perplexity
    on the units every one of them bet on (the ``common`` rows), with their intervals, and
    whether the paired ratio of the next one's perplexity to the best one's (the same draws of
    units for both: ``ratio_to_reference``) tells them apart."""
    common = table.filter((pl.col("protocol") == "common")
                          & pl.col("perplexity_per_word").is_not_null())
    out = []
    for (corpus, language), part in sorted(common.group_by(["corpus", "language"]),
                                           key=lambda g: g[0]):
        if part.height < 2:
            continue
        part = part.sort("perplexity_per_word")
        first = part.row(0, named=True)
        listed = ", ".join(
            f"{model_label(r['model'], r['tokenizer'])} "
            f"{_cell(r['perplexity_per_word'], r['ci_low_per_word'], r['ci_high_per_word'])}"
            for r in part.iter_rows(named=True))
        second = part.row(1, named=True)
        names2 = (model_label(second["model"], second["tokenizer"]),
                  model_label(first["model"], first["tokenizer"]))
        if second["ratio_ci_low"] is None:
            apart = "without a paired interval to tell the two best apart (too few units)"
        else:
            ratio = (f"{names2[0]}'s perplexity is {fmt(second['ratio_to_reference'])} "
                     f"[{fmt(second['ratio_ci_low'])}, {fmt(second['ratio_ci_high'])}] times "
                     f"{names2[1]}'s (paired bootstrap over the same units)")
            apart = ratio + (": these units tell them apart" if second["ratio_ci_low"] > 1
                             else ": these units do not tell them apart")
        out.append(f"{names.get(language, language)} ({corpus}), on the {first['n_units']} "
                   f"units all its {part.height} bettors bet on ({first['n_truncations']} "
                   f"truncations): {listed}; {apart}.")
    return out


def published_comparison(table: pl.DataFrame, published: pl.DataFrame,
                         language: str = "fra") -> pl.DataFrame | None:
    """The paper's limited-list perplexities relative to its full-list value (its largest l),
    beside ours for the same kind of bettor (the eq. 7 bigram) in French relative to our
    full-list value, at every l of the paper's Table 2 (ours empty where we have no such l)."""
    ours = table.filter((pl.col("language") == language) & (pl.col("model") == "bigram-eq7"))
    paper = published.filter(pl.col("protocol") == "limited").sort("l")
    if not ours.height or not paper.height:
        return None
    full = ours.filter(pl.col("protocol") == "limited").sort("l")["perplexity_per_word"][-1]
    paper_full = paper["perplexity"][-1]
    rows = []
    for r in paper.iter_rows(named=True):
        mine = ours.filter((pl.col("protocol") == "limited") & (pl.col("l") == r["l"]))
        rows.append({"l": r["l"], "paper": r["perplexity"],
                     "paper_ratio": r["perplexity"] / paper_full,
                     "ours": mine["perplexity_per_word"][0] if mine.height else None,
                     "ours_ratio": (mine["perplexity_per_word"][0] / full
                                    if mine.height else None)})
    return pl.DataFrame(rows, infer_schema_length=None)


def published_sentence(table: pl.DataFrame, published: pl.DataFrame,
                       comparison: pl.DataFrame | None, names: dict[str, str],
                       language: str = "fra") -> str:
    """The comparison with the paper's Le Monde values in words that match it: another m and
    another text, so only the shape (ratios to the full-list value at each l) compares."""
    paper = published.filter(pl.col("protocol") == "limited").sort("l")
    paper_m = int(published.filter(pl.col("protocol") == "exhaustive")["l"].max())
    paper_n = int(paper["n_t"].max())
    drawn = published.filter(pl.col("protocol") == "randomized").sort("n_t")
    text = (f"Published: Bimbot et al.'s eq. 7 bigram on Le Monde, m = {paper_m} outcomes, "
            f"{paper_n} test words, full-list perplexity {fmt(paper['perplexity'][-1])}")
    if drawn.height:
        d = drawn.row(0, named=True)
        text += (f" (randomized truncations, n_t = {d['n_t']}: "
                 f"{_cell(d['perplexity'], d['low'], d['high'])})")
    ours = table.filter((pl.col("language") == language) & (pl.col("model") == "bigram-eq7")
                        & (pl.col("protocol") == "exhaustive")
                        & (pl.col("n_t") == pl.col("n_truncations")))
    if comparison is None or not ours.height:
        return text + (f". No {names.get(language, language)} eq. 7 bigram played here, so "
                       f"there is nothing of ours to set beside it.")
    o = ours.row(0, named=True)
    both = comparison.filter(pl.col("ours").is_not_null())
    ratios = "; ".join(f"at l = {r['l']} the paper's list gives {fmt(r['paper_ratio'])} times "
                       f"its full-list value, ours {fmt(r['ours_ratio'])} times"
                       for r in both.iter_rows(named=True))
    text += (f". Ours is the same kind of bettor on another text ({o['corpus']}, "
             f"{names.get(language, language)}, {o['n_units']} units, {o['n_truncations']} "
             f"truncations) with another m ({o['m_outcomes']}): the perplexities themselves "
             f"do not compare, only the shape of the limited-list curve, as ratios to each "
             f"one's full-list value")
    return text + (f": {ratios}." if both.height else
                   ": no list length of ours matches one of the paper's.")


def rank_bound_sentence(table: pl.DataFrame) -> str | None:
    """Where each bettor's gambling perplexity lies against its own full-list rank values (the
    paper reads them as an interval the model's perplexity falls in), and how many are no
    interval at all."""
    bounds = table.filter((pl.col("protocol") == "rank-bounds") & (pl.col("tail") == "uniform")
                          & (pl.col("l") == pl.col("m_outcomes")))
    full = table.filter((pl.col("protocol") == "exhaustive")
                        & (pl.col("n_t") == pl.col("n_truncations")))
    keys = ["corpus", "language", "model", "tokenizer"]
    joined = bounds.select(keys + ["rank_values_kind", "once_seen_percent",
                                   "lower_above_perplexity", "perplexity_above_upper",
                                   "above_cause"])
    if not joined.height:
        return None
    estimates = joined.filter(pl.col("rank_values_kind") == "estimates")
    causes = {c: joined.filter(pl.col("above_cause") == c).height
              for c in ("undersampled", "undersampled or calibration", "calibration")}
    above = int(joined["perplexity_above_upper"].sum())
    lower = int(joined["lower_above_perplexity"].sum())
    once = joined["once_seen_percent"]
    text = (f"Shannon's rank values (eq. 9 on every rank, l = m, ties spread over their places) "
            f"are estimates of his bounds for {estimates.height} of {joined.height} bettors "
            f"(the rest no interval: inverted or above m; rank_bounds_note in shannon.csv), "
            f"not bounds: the lower one is unbiased, the upper one is the plug-in entropy of "
            f"ranks of which {fmt(once.min())}-{fmt(once.max())}% were seen once, and lies "
            f"below the true rank entropy. The paper reads them as an interval the model's "
            f"perplexity falls in; here the bettor's own gambling perplexity lies above the "
            f"upper one for {above}: for {causes['undersampled']} below the Miller-Madow "
            f"estimate (the plug-in's bias explains it), for "
            f"{causes['undersampled or calibration']} between it and the 95% upper bound "
            f"(sampling may explain it), for {causes['calibration']} above the bound (the "
            f"bettor's probabilities lose more than betting q_r on its r-th guess would). The "
            f"lower value lies above the bettor's perplexity for {lower} (lower_above_perplexity: "
            f"it does not rank by the true distribution, or sampling). Cut at l < m the values "
            f"are not bounds (the tail beyond l is assumed).")
    return text


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
        "truncated verse (a truncation: the words before a position); the gambling perplexity "
        "is the inverse geometric mean of the bets on the words that came. It needs neither "
        "the model's code nor its vocabulary: a site sends bets, the organiser scores them "
        "(`fairppl campaign`, docs/campaign.md). The outcomes are "
        f"the language's most frequent training words, <unk> for every other word and </s> "
        f"for the end of the verse (m = {', '.join(map(str, m))}). A subword or character "
        "model's bet on a word is the probability that the next whitespace-delimited word is "
        "exactly that word: its canonical tokens and then a word boundary or the end of the "
        "text, given that the context ends at a boundary; <unk> takes the rest of the mass. "
        "A list of the l best bets gives every other outcome the floor (1 - A_l) / (m - l), "
        "A_l the listed bets' sum (the paper's eq. 6). Shannon's (1951) rank values use only "
        "the rank r of the correct word among a bettor's bets: with q_r the share of "
        "truncations where it came r-th, the entropy lies between sum_r r (q_r - q_(r+1)) "
        "log r and -sum_r q_r log q_r, shown as perplexities (2 to those bits); computed from "
        "a sample they are estimates of those bounds, the upper one biased low (shannon.csv "
        "adds a Miller-Madow estimate and a 95% upper bound), and cut at l < m not even that "
        "(the rank_bounds_note column). n_t is the number of truncations behind an estimate."))
    sentences = common_sentences(table, names)
    full = table.filter((pl.col("protocol") == "exhaustive")
                        & (pl.col("n_t") == pl.col("n_truncations")))
    counts = sorted(set(full["n_units"].to_list()))
    if sentences:
        ci = full.row(0, named=True)
        parts.append(_p(
            "Compared on the same verses (the common rows; 95% intervals from a bootstrap "
            f"over those verses, B = {ci['ci_replicates']}): " + " ".join(sentences)
            + (f" The full-set numbers of the table below come from {', '.join(map(str, counts))}"
               f" units depending on the bettor, so they do not compare across bettors of one "
               f"language; the common rows do." if len(counts) > 1 else "")))
    parts.append(_p(
        "Perplexities are per word and comparable between models of one language only (same "
        "outcomes, same verses); across languages the vocabularies and word lengths differ, so "
        "bits per English character remains the cross-language measure. With exhaustive "
        "truncations and bets equal to the model's conditional probabilities the gambling "
        "perplexity equals the likelihood perplexity; for a token model the two differ only "
        "through <unk>, which the game pools over every out-of-vocabulary word. Randomized "
        "rows estimate the exhaustive value by the paper's systematic scheme where n_t allows "
        "one truncation per distinct verse, else by a length-weighted draw (the scheme column "
        "of shannon.csv); their brackets are eq. 8's spread of one draw.", "note"))
    summary = summary_table(table, names)
    parts.append(html_table(summary, HEADERS, caption="The Shannon game per language and bettor "
                            "(results/tables/shannon.csv has every protocol, n_t and l)"))
    parts.append(figure(figures.get("shannon"), "Gambling perplexity against the list length, "
                        "randomized estimates against n_t, rank histogram"))
    sentence = rank_bound_sentence(table)
    if sentence:
        parts.append(_p(sentence, "note"))
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
    if published is not None and published.height:
        comparison = published_comparison(table, published)
        parts.append(_p(published_sentence(table, published, comparison, names), "note"))
        if comparison is not None:
            parts.append(html_table(comparison, {
                "l": "list length", "paper": "Le Monde bigram (per word)",
                "paper_ratio": "÷ its full-list value", "ours": "French Bible bigram (per word)",
                "ours_ratio": "÷ our full-list value"},
                caption="Limited lists, the paper's Table 2 beside ours (another text and "
                        "another m: compare the ratios, the shape, not the values)"))
    players = tables.get("players")
    if players is not None and players.height:
        parts.append(players_body(players, names))
    return "".join(parts)


#: The players' table as the report shows it (results/tables/shannon_players.csv has more).
PLAYER_HEADERS = {
    "language": "language", "player": "player", "protocol": "protocol",
    "predictor": "predictor", "n_truncations_played": "truncations played",
    "perplexity_per_unit": "gambling perplexity (per unit)", "ci": "95% interval",
    "entropy": "rank values (bits per unit)",
}


def players_body(players: pl.DataFrame, names: dict[str, str]) -> str:
    """People (and scripted players) beside the models on the truncations they played."""
    from ..shannon.players import players_sentences

    def ci(row):
        return "–" if row["ci_low"] is None else f"{row['ci_low']:.1f} – {row['ci_high']:.1f}"

    def entropy(row):
        if row["entropy_low_bits_per_unit"] is None:
            return "–"
        kind = (" (estimates)" if row["rank_values_kind"] == "estimates"
                else f" ({row['rank_values_kind'] or 'not bounds'})")
        return (f"{row['entropy_low_bits_per_unit']:.2f} to "
                f"{row['entropy_high_bits_per_unit']:.2f}{kind}")

    rows = []
    for row in players.iter_rows(named=True):
        who = row["player"] + (" (scripted, not a person)" if row["player_kind"] == "scripted"
                               else "")
        rows.append({"language": names.get(row["language"], row["language"]), "player": who,
                     "protocol": row["protocol"],
                     "predictor": ("the player" if row["predictor_kind"] != "model"
                                   else row["predictor"]),
                     "n_truncations_played": row["n_truncations_played"],
                     # one decimal, as the sentence above and the interval print it
                     "perplexity_per_unit": ("" if row["perplexity_per_unit"] is None
                                             else f"{row['perplexity_per_unit']:.1f}"),
                     "ci": ci(row),
                     "entropy": entropy(row)})
    intro = _p("People in the game (fairppl campaign play; docs/campaign.md): each player's "
               "bets, scored like a site's, and on exactly the truncations they played the "
               "bets of the campaign's models (fairppl campaign models). A unit is what the "
               "campaign plays: a word, or a character in a language written without spaces. "
               + " ".join(players_sentences(players, names)))
    table = html_table(pl.DataFrame(rows), PLAYER_HEADERS,
                       caption="Players beside the models on the same truncations "
                               "(results/tables/shannon_players.csv)")
    return subsection("shannon-players", "People beside the models") + intro + table
