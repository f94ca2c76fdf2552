"""The game's results table from the per-truncation bet summaries of every bettor.

Input: one frame per (corpus, language, model, tokenizer), one row per truncation (a position of
an evaluation unit: one per word and one for ``</s>``), as :mod:`.bettors`' ``truncation_rows``
writes them, with ``m`` (the number of outcomes) and the list lengths in the columns
``listed_sum_<l>``/``listed_last_<l>``. Output rows, one per protocol, n_t and l:

* ``exhaustive``: every truncation (``n_t`` = their number, ``l`` = m), and the paper's Table 1
  top for each configured n_t: ``n_draws`` draws of n_t consecutive truncations, the geometric
  mean of their perplexities and ``exp(mean Q -/+ 1.96 sd)``;
* ``randomized``: the paper's Table 1 bottom: draws of n_t truncations in distinct units, by the
  paper's systematic scheme (one truncation every N // n_t in corpus order, so every truncation
  has the same chance) where n_t allows distinct units, else units drawn uniformly with one
  random position each (the row says so: that estimates the mean over units); an n_t above the
  bettor's units gives an empty row saying so;
* ``limited``: every truncation with lists of the l best bets and the floor for the rest (Table
  2 top), with the number of lists failing the consistency check;
* ``common``: the exhaustive gambling and likelihood perplexities on the units that every
  bettor of the language bet on (:mod:`.units` nests them), so the bettors compare on the same
  words;
* ``rank-bounds``: Shannon's lower and upper bounds from the ranks alone, cut at l, with a
  uniform and a Zipf tail (``tail``; Table 2 centre and bottom).

Perplexities are per word (an outcome: a word, ``<unk>`` or ``</s>``); the likelihood perplexity
of the same bettor on the same truncations is in every row for reference (the model's own
probability of each actual word: an OOV word's own probability, not the pooled ``<unk>`` bet).
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np
import polars as pl

from ..core.errors import InputError
from .gambling import (
    consistency_problem,
    consecutive_draws,
    draw_summary,
    gambling_perplexity,
    limited_log_bets,
    randomized_draws,
)
from .ranks import bounds_as_perplexity, rank_frequencies, shannon_bounds_limited

KEYS = ["corpus", "language", "model", "tokenizer"]

#: Columns of results/tables/shannon.csv with their meaning (units in the names).
COLUMNS = {
    "corpus": "corpus id",
    "language": "language id",
    "model": "bettor (model id)",
    "tokenizer": "its tokenizer (word-v<V>: over words)",
    "protocol": "exhaustive, randomized, limited, rank-bounds or common",
    "n_t": "truncations per estimate (count)",
    "l": "list length (outcomes; m = the full list)",
    "tail": "rank-bounds: the tail beyond l (uniform or zipf)",
    "sampling": "draws: consecutive (exhaustive), systematic (the paper's) or units",
    "perplexity_per_word": "gambling perplexity (per outcome: word, <unk> or </s>)",
    "low_per_word": "lower end: exp(mean Q - 1.96 sd) over the draws, or Shannon's lower bound",
    "high_per_word": "upper end: exp(mean Q + 1.96 sd), or Shannon's upper bound",
    "likelihood_perplexity_per_word": "the bettor's likelihood perplexity on all its truncations",
    "m_outcomes": "outcomes (vocabulary words + <unk> + </s>)",
    "n_truncations": "truncations the bettor bet on (count)",
    "n_units": "units they come from (count)",
    "n_draws": "draws behind the interval (count)",
    "n_inconsistent": "limited: lists failing 0 < 1 - A <= (m - l) * smallest bet (count)",
    "oov_percent": "truncations whose correct outcome is <unk> (percent)",
    "seconds_per_truncation": "bettor's wall-clock seconds per truncation (s)",
    "positions_per_truncation": "token positions run through the model per truncation (count)",
    "note": "what the row cannot show, and why",
}


def list_lengths(settings: Sequence, m: int) -> list[int]:
    """The configured list lengths as integers: ``all`` (and any length of m or more) is m;
    sorted, distinct."""
    out = {m if x == "all" else min(int(x), m) for x in settings}
    return sorted(out)


def _row(keys: dict, protocol: str, **values) -> dict:
    row = {column: None for column in COLUMNS}
    row.update(keys)
    row["protocol"] = protocol
    row.update(values)
    return row


def bettor_rows(frame: pl.DataFrame, settings: dict) -> list[dict]:
    """Every protocol's rows for one bettor's per-truncation frame (module docstring)."""
    if frame.height == 0:
        raise InputError("no truncation in the bettor's table")
    keys = {k: frame[k][0] for k in KEYS}
    m = int(frame["m"][0])
    frame = frame.sort(["unit_order", "position"]) if "unit_order" in frame.columns else frame
    log_bets = frame["log_bet"].to_numpy()
    n = frame.height
    units = frame["unit_id"].unique(maintain_order=True).to_list()
    likelihood = gambling_perplexity(frame["log_prob"].to_numpy())
    common = {
        "likelihood_perplexity_per_word": likelihood,
        "m_outcomes": m,
        "n_truncations": n,
        "n_units": len(units),
        "oov_percent": 100.0 * frame["outcome"].eq("<unk>").sum() / n,
        "seconds_per_truncation": (float(frame["cost_seconds"].sum()) / n
                                   if "cost_seconds" in frame.columns else None),
        "positions_per_truncation": (float(frame["cost_positions"].sum()) / n
                                     if "cost_positions" in frame.columns else None),
    }
    rows = [_row(keys, "exhaustive", n_t=n, l=m, perplexity_per_word=gambling_perplexity(log_bets),
                 **common)]
    draws, seed = int(settings.get("n_draws", 20)), int(settings.get("seed", 0))
    per_unit = [g["log_bet"].to_numpy() for _, g in
                frame.group_by("unit_id", maintain_order=True)]
    for n_t in sorted(settings.get("n_t", [])):
        # one seed per n_t: the rows of one table are independent draws
        seed_t = seed + n_t
        if n_t < n:
            summary = draw_summary(consecutive_draws(log_bets, n_t, draws, seed_t))
            rows.append(_row(keys, "exhaustive", n_t=n_t, l=m, n_draws=draws,
                             sampling="consecutive",
                             perplexity_per_word=summary["perplexity"],
                             low_per_word=summary["low"], high_per_word=summary["high"],
                             **common))
        if n_t > len(units):
            rows.append(_row(keys, "randomized", n_t=n_t, l=m, **common,
                             note=f"{n_t} distinct units asked for, the bettor ran on "
                                  f"{len(units)}: no draw"))
            continue
        sampling, note = "systematic", None
        try:
            qs = randomized_draws(per_unit, n_t, draws, seed_t, sampling="systematic")
        except InputError as err:
            # the paper's systematic scheme cannot give n_t distinct units here: draw the units
            # uniformly instead, which weighs every unit equally (said in the row)
            sampling = "units"
            note = (f"{err}; units drawn uniformly instead: the estimate is the mean over units, "
                    f"not over words")
            qs = randomized_draws(per_unit, n_t, draws, seed_t, sampling="units")
        summary = draw_summary(qs)
        rows.append(_row(keys, "randomized", n_t=n_t, l=m, n_draws=draws, sampling=sampling,
                         perplexity_per_word=summary["perplexity"],
                         low_per_word=summary["low"], high_per_word=summary["high"],
                         note=note, **common))
    ranks = frame["rank"].to_numpy()
    q = rank_frequencies(ranks, m)
    for length in list_lengths(settings.get("list_lengths", ["all"]), m):
        if length < m:
            sums = frame[f"listed_sum_{length}"].to_numpy()
            lasts = frame[f"listed_last_{length}"].to_numpy()
            bad = sum(consistency_problem(float(a), float(b), m, length) is not None
                      for a, b in zip(sums, lasts))
            limited = limited_log_bets(log_bets, ranks, sums, m, length)
        else:
            bad, limited = 0, log_bets
        rows.append(_row(keys, "limited", n_t=n, l=length, n_inconsistent=bad,
                         perplexity_per_word=gambling_perplexity(limited), **common))
        head = q[:length]
        rising = int(np.sum(np.diff(head) > 0))
        for tail in ("uniform", "zipf"):
            lower, upper = bounds_as_perplexity(shannon_bounds_limited(head, m, length,
                                                                        tail=tail))
            note = None
            if lower > upper:
                note = (f"the lower end exceeds the upper one: Shannon's lower bound holds for "
                        f"an ideal predictor's rank frequencies (non-increasing); these rise "
                        f"{rising} times within the first {length} ranks, so it is no bound here")
            rows.append(_row(keys, "rank-bounds", n_t=n, l=length, tail=tail,
                             low_per_word=lower, high_per_word=upper, note=note, **common))
    return rows


def common_rows(frames: Sequence[pl.DataFrame]) -> list[dict]:
    """Per (corpus, language), the exhaustive gambling and likelihood perplexity of every bettor
    on the units that every bettor of the language bet on (protocol ``common``: the same words
    for every bettor, so their perplexities compare)."""
    groups: dict[tuple, list[pl.DataFrame]] = {}
    for frame in frames:
        groups.setdefault((frame["corpus"][0], frame["language"][0]), []).append(frame)
    rows = []
    for (corpus, language), group in sorted(groups.items()):
        shared = set.intersection(*(set(f["unit_id"]) for f in group))
        for frame in group:
            part = frame.filter(pl.col("unit_id").is_in(sorted(shared)))
            keys = {k: frame[k][0] for k in KEYS}
            if not part.height:
                rows.append(_row(keys, "common", m_outcomes=int(frame["m"][0]), n_truncations=0,
                                 n_units=0, note="no unit shared by every bettor of the "
                                                 "language"))
                continue
            n = part.height
            rows.append(_row(
                keys, "common", n_t=n, l=int(frame["m"][0]),
                perplexity_per_word=gambling_perplexity(part["log_bet"].to_numpy()),
                likelihood_perplexity_per_word=gambling_perplexity(part["log_prob"].to_numpy()),
                m_outcomes=int(frame["m"][0]), n_truncations=n, n_units=len(shared),
                oov_percent=100.0 * part["outcome"].eq("<unk>").sum() / n,
                note=f"the {len(shared)} units every bettor of the language bet on"))
    return rows


def shannon_table(frames: Iterable[pl.DataFrame], settings: dict) -> pl.DataFrame:
    """The results table of every bettor (module docstring), in the order of ``COLUMNS``."""
    frames = list(frames)
    rows = [row for frame in frames for row in bettor_rows(frame, settings)]
    rows += common_rows(frames)
    schema = {c: pl.Float64 for c in COLUMNS}
    schema.update({c: pl.Utf8 for c in ("corpus", "language", "model", "tokenizer", "protocol",
                                          "tail", "sampling", "note")})
    schema.update({c: pl.Int64 for c in ("n_t", "l", "m_outcomes", "n_truncations", "n_units",
                                          "n_draws", "n_inconsistent")})
    return pl.DataFrame(rows, schema=schema, orient="row")


def rank_histogram_table(frames: Iterable[pl.DataFrame]) -> pl.DataFrame:
    """(corpus, language, model, tokenizer, rank, count): how often each rank held the correct
    outcome, for the log-log rank plot (the paper's Figure 2)."""
    parts = [frame.group_by(KEYS + ["rank"]).agg(pl.len().alias("count")) for frame in frames]
    if not parts:
        return pl.DataFrame(schema={**{k: pl.Utf8 for k in KEYS}, "rank": pl.Int64,
                                    "count": pl.Int64})
    return pl.concat(parts).with_columns(pl.col("count").cast(pl.Int64)).sort(KEYS + ["rank"])

