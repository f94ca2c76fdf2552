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
  has the same chance) where n_t allows distinct units, else by the length-weighted scheme
  (the first truncation uniform over all, the other units uniformly, a mean weighted by the
  units' lengths; :func:`.gambling.randomized_positions`): both estimate the per-word value of
  the exhaustive row without bias, and ``scheme`` says which ran; an n_t above the bettor's
  units gives an empty row saying so;
* ``limited``: every truncation with lists of the l best bets and the floor for the rest (Table
  2 top), with the number of lists failing the consistency check;
* ``common``: the exhaustive gambling and likelihood perplexities on the units that every
  bettor of the language bet on (:mod:`.units` nests them), so the bettors compare on the same
  words;
* ``rank-bounds``: Shannon's lower and upper values from the ranks alone (ties spread over their
  places, :func:`.ranks.shared_rank_frequencies`), cut at l, with a uniform and a Zipf tail
  (``tail``; Table 2 centre and bottom); ``rank_bounds_valid`` says whether they are bounds and
  ``rank_bounds_note`` why (:func:`.ranks.bounds_status`: only at l = m, and never when inverted
  or above m).

Every gambling perplexity computed on a fixed set of truncations (``exhaustive`` at n_t = all,
``limited``, ``common``) has a bootstrap interval over units (``ci_low_per_word``,
``ci_high_per_word``: the project's paired bootstrap of a ratio of sums, per unit the sum of
-ln bet and the number of truncations, :mod:`fairppl.stats.bootstrap`); a draw row's
``low_per_word``/``high_per_word`` are the paper's eq. 8 spread of one draw, and its target is
the exhaustive row, whose interval is the one over units.

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
from ..stats.bootstrap import BootstrapSettings, ratio_interval
from .gambling import (
    consistency_problem,
    consecutive_draws,
    draw_summary,
    gambling_perplexity,
    limited_log_bets,
    randomized_draws,
    randomized_scheme,
)
from .ranks import (bounds_as_perplexity, bounds_status, shannon_bounds_limited,
                    shared_rank_frequencies)

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
    "scheme": "draws: consecutive (exhaustive), systematic (the paper's) or weighted (by length)",
    "perplexity_per_word": "gambling perplexity (per outcome: word, <unk> or </s>)",
    "ci_low_per_word": "bootstrap interval over units of the gambling perplexity, lower end "
                       "(per word)",
    "ci_high_per_word": "the same interval's upper end (per word)",
    "low_per_word": "lower end: exp(mean Q - 1.96 sd) over the draws, or Shannon's lower value",
    "high_per_word": "upper end: exp(mean Q + 1.96 sd), or Shannon's upper value",
    "rank_bounds_valid": "rank-bounds: both values are bounds (true only at l = m, ordered, "
                         "lower at most m)",
    "rank_bounds_note": "rank-bounds: why they are or are not bounds",
    "likelihood_perplexity_per_word": "the bettor's likelihood perplexity on all its truncations",
    "m_outcomes": "outcomes (vocabulary words + <unk> + </s>)",
    "n_truncations": "truncations the bettor bet on (count)",
    "n_units": "units they come from (count)",
    "n_draws": "draws behind the interval (count)",
    "ci_level": "central coverage of the bootstrap interval (fraction)",
    "ci_replicates": "bootstrap replicates (count)",
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


#: Per-truncation columns the table needs beyond the keys (``truncation_rows`` writes them).
NEEDED = ("m", "unit_id", "log_bet", "log_prob", "rank", "rank_tied_first", "n_tied", "outcome")


def _check_frame(frame: pl.DataFrame) -> None:
    missing = [c for c in KEYS + list(NEEDED) if c not in frame.columns]
    if missing:
        raise InputError(f"the bettor's per-truncation table lacks {missing}: expected the "
                         f"columns of fairppl.shannon.bettors.truncation_rows (a table from an "
                         f"earlier version: run its shannon_bets job again)")


def unit_interval(log_bets, unit_ids, bootstrap: BootstrapSettings) -> dict:
    """``ci_low_per_word``/``ci_high_per_word`` of exp(-sum ln bet / n) by the project's
    bootstrap over units (units in sorted id order; per unit the sum of -ln bet and the number of
    truncations, a ratio of sums); ``None`` for both with fewer than 2 units or a zero bet."""
    log_bets = np.asarray(log_bets, dtype=np.float64)
    distinct = sorted(set(unit_ids))
    out = {"ci_low_per_word": None, "ci_high_per_word": None, "ci_level": bootstrap.level,
           "ci_replicates": bootstrap.replicates}
    if len(distinct) < 2 or np.isneginf(log_bets).any():
        return out
    where = {u: i for i, u in enumerate(distinct)}
    idx = np.array([where[u] for u in unit_ids])
    nats = np.bincount(idx, weights=-log_bets, minlength=len(distinct))
    counts = np.bincount(idx, minlength=len(distinct)).astype(float)
    low, high = ratio_interval(nats, counts, bootstrap)
    out.update(ci_low_per_word=math.exp(low), ci_high_per_word=math.exp(high))
    return out


def _randomized_row(keys, per_unit, n_t, draws, seed, common) -> dict:
    lengths = np.array([u.size for u in per_unit], dtype=np.int64)
    scheme = randomized_scheme(lengths, n_t)
    note = None
    if scheme == "weighted":
        total, longest = int(lengths.sum()), int(lengths.max())
        note = (f"the paper's systematic scheme would take one truncation every {total // n_t} "
                f"of {total}, fewer than the longest unit's {longest}, and could pick a unit "
                f"twice: drawn with chances proportional to the units' lengths and averaged "
                f"with their lengths as weights, which estimates the same per-word value")
    summary = draw_summary(randomized_draws(per_unit, n_t, draws, seed, sampling=scheme))
    return _row(keys, "randomized", n_t=n_t, l=common["m_outcomes"], n_draws=draws,
                scheme=scheme, perplexity_per_word=summary["perplexity"],
                low_per_word=summary["low"], high_per_word=summary["high"], note=note, **common)


def bettor_rows(frame: pl.DataFrame, settings: dict,
                bootstrap: BootstrapSettings = BootstrapSettings()) -> list[dict]:
    """Every protocol's rows for one bettor's per-truncation frame (module docstring)."""
    if frame.height == 0:
        raise InputError("no truncation in the bettor's table")
    _check_frame(frame)
    keys = {k: frame[k][0] for k in KEYS}
    m = int(frame["m"][0])
    frame = frame.sort(["unit_order", "position"]) if "unit_order" in frame.columns else frame
    log_bets = frame["log_bet"].to_numpy()
    unit_ids = frame["unit_id"].to_list()
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
                 **unit_interval(log_bets, unit_ids, bootstrap), **common)]
    draws, seed = int(settings.get("n_draws", 20)), int(settings.get("seed", 0))
    per_unit = [g["log_bet"].to_numpy() for _, g in
                frame.group_by("unit_id", maintain_order=True)]
    for n_t in sorted(settings.get("n_t", [])):
        # one seed per n_t: the rows of one table are independent draws
        seed_t = seed + n_t
        if n_t < n:
            summary = draw_summary(consecutive_draws(log_bets, n_t, draws, seed_t))
            rows.append(_row(keys, "exhaustive", n_t=n_t, l=m, n_draws=draws,
                             scheme="consecutive",
                             perplexity_per_word=summary["perplexity"],
                             low_per_word=summary["low"], high_per_word=summary["high"],
                             **common))
        if n_t > len(units):
            rows.append(_row(keys, "randomized", n_t=n_t, l=m, **common,
                             note=f"{n_t} distinct units asked for, the bettor ran on "
                                  f"{len(units)}: no draw"))
            continue
        rows.append(_randomized_row(keys, per_unit, n_t, draws, seed_t, common))
    ranks = frame["rank"].to_numpy()
    q = shared_rank_frequencies(frame["rank_tied_first"].to_numpy(),
                                frame["n_tied"].to_numpy(), m)
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
                         perplexity_per_word=gambling_perplexity(limited),
                         **unit_interval(limited, unit_ids, bootstrap), **common))
        head = q[:length]
        for tail in ("uniform", "zipf"):
            if tail == "zipf" and length < m and not head.any():
                rows.append(_row(keys, "rank-bounds", n_t=n, l=length, tail=tail,
                                 rank_bounds_valid=False,
                                 rank_bounds_note=f"no correct outcome within the first "
                                                  f"{length} ranks: no Zipf law to fit ({n} "
                                                  f"truncations)", **common))
                continue
            bounds = shannon_bounds_limited(head, m, length, tail=tail)
            valid, why = bounds_status(*bounds, m, length, tail)
            lower, upper = bounds_as_perplexity(bounds)
            rows.append(_row(keys, "rank-bounds", n_t=n, l=length, tail=tail,
                             low_per_word=lower, high_per_word=upper, rank_bounds_valid=valid,
                             rank_bounds_note=f"{why} ({n} truncations)", **common))
    return rows


def common_rows(frames: Sequence[pl.DataFrame],
                bootstrap: BootstrapSettings = BootstrapSettings()) -> list[dict]:
    """Per (corpus, language), the exhaustive gambling and likelihood perplexity of every bettor
    on the units that every bettor of the language bet on (protocol ``common``: the same words
    for every bettor, so their perplexities compare), each with its bootstrap interval over
    those units (the same draws of units for every bettor of the language)."""
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
            log_bets = part["log_bet"].to_numpy()
            rows.append(_row(
                keys, "common", n_t=n, l=int(frame["m"][0]),
                perplexity_per_word=gambling_perplexity(log_bets),
                **unit_interval(log_bets, part["unit_id"].to_list(), bootstrap),
                likelihood_perplexity_per_word=gambling_perplexity(part["log_prob"].to_numpy()),
                m_outcomes=int(frame["m"][0]), n_truncations=n, n_units=len(shared),
                oov_percent=100.0 * part["outcome"].eq("<unk>").sum() / n,
                note=f"the {len(shared)} units every bettor of the language bet on"))
    return rows


def shannon_table(frames: Iterable[pl.DataFrame], settings: dict,
                  bootstrap: BootstrapSettings = BootstrapSettings()) -> pl.DataFrame:
    """The results table of every bettor (module docstring), in the order of ``COLUMNS``;
    ``bootstrap``: the settings of every interval over units (the report's)."""
    frames = list(frames)
    rows = [row for frame in frames for row in bettor_rows(frame, settings, bootstrap)]
    rows += common_rows(frames, bootstrap)
    schema = {c: pl.Float64 for c in COLUMNS}
    schema.update({c: pl.Utf8 for c in ("corpus", "language", "model", "tokenizer", "protocol",
                                          "tail", "scheme", "note", "rank_bounds_note")})
    schema.update({c: pl.Int64 for c in ("n_t", "l", "m_outcomes", "n_truncations", "n_units",
                                          "n_draws", "n_inconsistent", "ci_replicates")})
    schema["rank_bounds_valid"] = pl.Boolean
    return pl.DataFrame(rows, schema=schema, orient="row")


def rank_histogram_table(frames: Iterable[pl.DataFrame]) -> pl.DataFrame:
    """(corpus, language, model, tokenizer, rank, count): how often each rank held the correct
    outcome, for the log-log rank plot (the paper's Figure 2); a tie of k outcomes counts 1/k at
    each of its places (:func:`.ranks.shared_rank_frequencies`), so ``count`` is fractional
    where the bettor tied and sums to the bettor's truncations. Ranks with a count of 0 are
    left out."""
    parts = []
    for frame in frames:
        _check_frame(frame)
        m = int(frame["m"][0])
        q = shared_rank_frequencies(frame["rank_tied_first"].to_numpy(),
                                    frame["n_tied"].to_numpy(), m)
        seen = np.nonzero(q > 0)[0]
        parts.append(pl.DataFrame({**{k: [frame[k][0]] * seen.size for k in KEYS},
                                   "rank": (seen + 1).astype(np.int64),
                                   "count": q[seen] * frame.height}))
    schema = {**{k: pl.Utf8 for k in KEYS}, "rank": pl.Int64, "count": pl.Float64}
    if not parts:
        return pl.DataFrame(schema=schema)
    return pl.concat([p.cast(schema) for p in parts]).sort(KEYS + ["rank"])
