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
  (``tail``; Table 2 centre and bottom); ``rank_bounds_valid`` says whether eq. 9 applies and
  ``rank_bounds_note`` why (:func:`.ranks.bounds_status`: only at l = m, and never when inverted
  or above m). Even then they are estimates from n truncations, not bounds
  (``rank_values_kind``): the lower end is unbiased, the upper one, a plug-in entropy over up to m
  ranks, is biased low, so at l = m the row adds the Miller-Madow estimate
  (``high_mm_per_word``), a 95% upper bound (``high_bound_per_word``) and the share of seen ranks
  seen once (:mod:`.ranks`, "Finite samples"). Every rank row says where the bettor's own
  exhaustive gambling perplexity lies: ``lower_above_perplexity`` (the lower end above it: the
  bettor does not rank by the true distribution, or sampling), ``perplexity_above_upper`` and
  ``above_cause`` (:data:`.ranks.ABOVE_CAUSES`: the plug-in's bias, possibly calibration, or
  calibration beyond sampling error).

Every gambling perplexity computed on a fixed set of truncations (``exhaustive`` at n_t = all,
``limited``, ``common``) has a bootstrap interval over units (``ci_low_per_word``,
``ci_high_per_word``: the project's paired bootstrap of a ratio of sums, per unit the sum of
-ln bet and the number of truncations, :mod:`fairppl.stats.bootstrap`) when they come from at
least :data:`.gambling.MIN_INTERVAL_UNITS` units, the campaign scorer's minimum (``ci_note``
says why not, or that a percentile interval from few units covers below its level). A
``common`` row also compares its bettor with the language's best one on the same units, paired
(``reference``, ``ratio_to_reference`` and its interval, the same draws of units for both); a
draw row's
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
from ..stats.bootstrap import BootstrapSettings, difference_interval, ratio_interval
from .gambling import (
    FEW_INTERVAL_UNITS,
    FEW_UNITS_CAVEAT,
    MIN_INTERVAL_UNITS,
    consistency_problem,
    consecutive_draws,
    draw_summary,
    gambling_perplexity,
    limited_log_bets,
    randomized_draws,
    randomized_scheme,
)
from .ranks import (above_cause, bounds_as_perplexity, bounds_status, miller_madow_upper,
                    once_seen_share, shannon_bounds_limited, shared_rank_frequencies,
                    upper_confidence_bound)

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
    "ci_note": "why there is no interval over units, or its coverage caveat",
    "low_per_word": "lower end: exp(mean Q - 1.96 sd) over the draws, or Shannon's lower value",
    "high_per_word": "upper end: exp(mean Q + 1.96 sd), or Shannon's upper value",
    "rank_bounds_valid": "rank-bounds: eq. 9 applies (only at l = m, ordered, lower at most m); "
                         "the values are still sample estimates (rank_values_kind)",
    "rank_bounds_note": "rank-bounds: what the values are and are not",
    "rank_values_kind": "rank-bounds: estimates (l = m), not bounds (cut at l) or no interval "
                        "(inverted or above m)",
    "high_mm_per_word": "rank-bounds, l = m: Miller-Madow estimate of the upper value, at most "
                        "m (per word)",
    "high_bound_per_word": "rank-bounds, l = m: 95% upper bound on the rank entropy, at most m "
                           "(per word)",
    "once_seen_percent": "rank-bounds: seen ranks seen at most once (percent)",
    "lower_above_perplexity": "rank-bounds: the lower value exceeds the bettor's exhaustive "
                              "gambling perplexity",
    "perplexity_above_upper": "rank-bounds: the bettor's exhaustive gambling perplexity exceeds "
                              "the upper value",
    "above_cause": "rank-bounds: why the perplexity is above (undersampled, undersampled or "
                   "calibration, calibration, cut list)",
    "reference": "common: the language's bettor of lowest perplexity on these units",
    "ratio_to_reference": "common: this perplexity / the reference's (ratio)",
    "ratio_ci_low": "common: paired bootstrap interval of that ratio over units, lower end (ratio)",
    "ratio_ci_high": "common: the same interval's upper end (ratio)",
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


def _per_unit(log_bets, unit_ids) -> tuple[np.ndarray, np.ndarray]:
    """Per unit, in sorted id order: the sum of -ln bet and the number of truncations."""
    distinct = sorted(set(unit_ids))
    where = {u: i for i, u in enumerate(distinct)}
    idx = np.array([where[u] for u in unit_ids])
    nats = np.bincount(idx, weights=-np.asarray(log_bets, dtype=np.float64),
                       minlength=len(distinct))
    return nats, np.bincount(idx, minlength=len(distinct)).astype(float)


def unit_interval(log_bets, unit_ids, bootstrap: BootstrapSettings) -> dict:
    """``ci_low_per_word``/``ci_high_per_word`` of exp(-sum ln bet / n) by the project's
    bootstrap over units (units in sorted id order; per unit the sum of -ln bet and the number of
    truncations, a ratio of sums); ``None`` for both with fewer than ``MIN_INTERVAL_UNITS``
    units or a zero bet, and ``ci_note`` says why (or, under ``FEW_INTERVAL_UNITS`` units, that the
    percentile interval covers below its level)."""
    log_bets = np.asarray(log_bets, dtype=np.float64)
    n_units = len(set(unit_ids))
    out = {"ci_low_per_word": None, "ci_high_per_word": None, "ci_level": bootstrap.level,
           "ci_replicates": bootstrap.replicates, "ci_note": None}
    if n_units < MIN_INTERVAL_UNITS:
        out["ci_note"] = (f"no interval: {n_units} unit(s), fewer than {MIN_INTERVAL_UNITS} (a "
                          f"percentile bootstrap over 10 units covers about 0.88 at 0.95)")
        return out
    if np.isneginf(log_bets).any():
        out["ci_note"] = "no interval: a bet of 0 on a correct outcome"
        return out
    low, high = ratio_interval(*_per_unit(log_bets, unit_ids), bootstrap)
    out.update(ci_low_per_word=math.exp(low), ci_high_per_word=math.exp(high))
    if n_units < FEW_INTERVAL_UNITS:
        out["ci_note"] = f"{n_units} units: {FEW_UNITS_CAVEAT}"
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
    own = gambling_perplexity(log_bets)
    rows = [_row(keys, "exhaustive", n_t=n, l=m, perplexity_per_word=own,
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
            rows.append(_row(keys, "rank-bounds", n_t=n, l=length, tail=tail,
                             rank_bounds_valid=valid, rank_bounds_note=f"{why} ({n} truncations)",
                             **rank_position(bounds, q, n, m, length, own), **common))
    return rows


def rank_position(bounds: Sequence[float], q: np.ndarray, n: int, m: int, length: int,
                  own: float) -> dict:
    """A rank row's values beyond eq. 9's two ends (module docstring): what they are, at l = m
    the Miller-Madow estimate and the 95% upper bound of the upper end, the share of seen ranks
    seen once, and where the bettor's own gambling perplexity ``own`` lies (``bounds`` in nats,
    ``q`` the frequencies of all m ranks from ``n`` truncations)."""
    lower, upper = bounds_as_perplexity(bounds)
    if lower > upper * (1 + 1e-12) or bounds[0] > math.log(m) + 1e-12:
        kind = "no interval"
    else:
        kind = "estimates" if length >= m else "not bounds (cut at l)"
    corrected = bound = None
    if length >= m:
        corrected = math.exp(miller_madow_upper(q, n))
        bound = math.exp(upper_confidence_bound(q, n))
    return {"low_per_word": lower, "high_per_word": upper, "rank_values_kind": kind,
            "high_mm_per_word": corrected, "high_bound_per_word": bound,
            "once_seen_percent": 100.0 * once_seen_share(q, n),
            "lower_above_perplexity": bool(lower > own * (1 + 1e-12)),
            "perplexity_above_upper": bool(own > upper * (1 + 1e-12)),
            "above_cause": above_cause(own, upper, corrected, bound)}


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
        first, sums = len(rows), {}
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
            sums[len(rows) - 1] = _per_unit(log_bets, part["unit_id"].to_list())
        _paired(rows[first:], sums, first, bootstrap)
    return rows


def _paired(rows: list[dict], sums: dict, first: int, bootstrap: BootstrapSettings) -> None:
    """Fill ``reference``, ``ratio_to_reference`` and its paired interval in the ``common``
    ``rows`` of one language (``sums[first + k]``: row k's per-unit sums, units in one sorted
    order): the reference is the bettor of lowest perplexity; every interval uses the same
    draws of units (:func:`fairppl.stats.bootstrap.difference_interval` of the mean -ln bet,
    exponentiated), and needs ``MIN_INTERVAL_UNITS`` units."""
    scored = [k for k, r in enumerate(rows) if r["perplexity_per_word"] is not None
              and math.isfinite(r["perplexity_per_word"])]
    if len(scored) < 2:
        return
    best = min(scored, key=lambda k: rows[k]["perplexity_per_word"])
    ref = rows[best]
    ref_nats, ref_counts = sums[first + best]
    for k in scored:
        row = rows[k]
        row["reference"] = f"{ref['model']}/{ref['tokenizer']}"
        row["ratio_to_reference"] = row["perplexity_per_word"] / ref["perplexity_per_word"]
        if k == best or ref_nats.size < MIN_INTERVAL_UNITS:
            continue
        nats, counts = sums[first + k]
        _, low, high = difference_interval(nats, counts, ref_nats, ref_counts, bootstrap)
        row["ratio_ci_low"], row["ratio_ci_high"] = math.exp(low), math.exp(high)


def shannon_table(frames: Iterable[pl.DataFrame], settings: dict,
                  bootstrap: BootstrapSettings = BootstrapSettings()) -> pl.DataFrame:
    """The results table of every bettor (module docstring), in the order of ``COLUMNS``;
    ``bootstrap``: the settings of every interval over units (the report's)."""
    frames = list(frames)
    rows = [row for frame in frames for row in bettor_rows(frame, settings, bootstrap)]
    rows += common_rows(frames, bootstrap)
    schema = {c: pl.Float64 for c in COLUMNS}
    schema.update({c: pl.Utf8 for c in ("corpus", "language", "model", "tokenizer", "protocol",
                                          "tail", "scheme", "note", "rank_bounds_note",
                                          "ci_note", "rank_values_kind", "above_cause",
                                          "reference")})
    schema.update({c: pl.Int64 for c in ("n_t", "l", "m_outcomes", "n_truncations", "n_units",
                                          "n_draws", "n_inconsistent", "ci_replicates")})
    schema.update({c: pl.Boolean for c in ("rank_bounds_valid", "lower_above_perplexity",
                                            "perplexity_above_upper")})
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
