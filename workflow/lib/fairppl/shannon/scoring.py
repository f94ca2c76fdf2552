"""Scoring a checked submission with the campaign's key (Bimbot et al., eqs. 3, 6 and 9-12): the
gambling perplexity with a bootstrap interval over units, or Shannon's rank values with what
they bound.

The perplexity is per word whatever the scheme: exp(-mean ln bet) for an exhaustive or a
systematic campaign (every truncation equally likely), exp(-sum w ln bet / sum w) for a
length-weighted one (w: the unit's number of truncations, from the key;
:func:`fairppl.shannon.gambling.randomized_positions` shows that its log is unbiased for the
per-word value). A /1 randomized campaign drew every unit equally likely: its plain mean
estimates the mean over units, and the result says so."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .campaign_folder import Campaign
from .gambling import FEW_INTERVAL_UNITS, FEW_UNITS_CAVEAT, MIN_INTERVAL_UNITS, floor_bet
from .submission import BETS, Record, as_float

TAILS = ("uniform", "zipf")


def _bootstrap_interval(log_bets: np.ndarray, units: Sequence[str],
                        weights: np.ndarray) -> tuple[dict | None, str]:
    """Interval of the perplexity from a bootstrap over units (per unit the weighted sum of
    -ln bet and the sum of the weights, a ratio of sums), or (None, why not)."""
    from ..stats.bootstrap import BootstrapSettings, ratio_interval

    distinct = sorted(set(units))
    if len(distinct) < MIN_INTERVAL_UNITS:
        return None, (f"no interval: the scored truncations cover {len(distinct)} distinct "
                      f"unit(s), fewer than {MIN_INTERVAL_UNITS}")
    if np.isneginf(log_bets).any():
        return None, "no interval: a bet of 0 on a correct outcome makes the perplexity infinite"
    where = {u: i for i, u in enumerate(distinct)}
    idx = np.array([where[u] for u in units])
    nats = np.bincount(idx, weights=-log_bets * weights, minlength=len(distinct))
    counts = np.bincount(idx, weights=weights, minlength=len(distinct))
    settings = BootstrapSettings()
    low, high = ratio_interval(nats, counts, settings)
    return ({"low": math.exp(low), "high": math.exp(high), "level": settings.level,
             "replicates": settings.replicates, "seed": settings.seed,
             "n_units": len(distinct)},
            f"{settings.level:.0%} interval of a bootstrap over {len(distinct)} units "
            f"(B = {settings.replicates}, seed {settings.seed})"
            + (f"; {FEW_UNITS_CAVEAT}" if len(distinct) < FEW_INTERVAL_UNITS else ""))


def _score_bets(campaign: Campaign, records: Sequence[Record]) -> dict:
    pos, m, labels = campaign.position(), campaign.m, campaign.outcomes.labels
    log_bets = np.empty(len(records))
    n_floor = n_uniform = 0
    lengths = []
    for k, rec in enumerate(records):
        bets = {w: as_float(v) for w, v in rec.entries.items()}
        correct = labels[campaign.answers[pos[rec.id]]]
        length = len(bets)
        lengths.append(length)
        if correct in bets:
            bet = bets[correct]
        else:
            bet = floor_bet(math.fsum(bets.values()), m, length)
            n_floor += 1
            n_uniform += length == 0
        log_bets[k] = math.log(bet) if bet > 0 else -math.inf
    units = [campaign.unit_ids[pos[r.id]] for r in records]
    weights = _weights(campaign, records)
    perplexity = (math.inf if np.isneginf(log_bets).any() else
                  math.exp(-math.fsum((weights * log_bets).tolist())
                           / math.fsum(weights.tolist())))
    out = {"perplexity": perplexity, "n_floor": n_floor,
           "n_uniform": n_uniform, "list_length_min": min(lengths),
           "list_length_max": max(lengths),
           "n_units_scored": len(set(units))}
    interval, note = _bootstrap_interval(log_bets, units, weights)
    out["interval"] = interval
    out["interval_note"] = note
    if math.isinf(out["perplexity"]):
        zero = [r.line for r, lb in zip(records, log_bets) if np.isneginf(lb)]
        out["perplexity_note"] = (f"a bet of 0 on the correct outcome on {len(zero)} line(s) "
                                  f"(first: line {zero[0]}): the perplexity is infinite")
    return out


def _weights(campaign: Campaign, records: Sequence[Record]) -> np.ndarray:
    """Each scored record's weight: 1, or its unit's number of truncations in a length-weighted
    campaign."""
    if campaign.weights is None:
        return np.ones(len(records))
    pos = campaign.position()
    return np.array([campaign.weights[pos[r.id]] for r in records], dtype=np.float64)


def _score_rankings(campaign: Campaign, records: Sequence[Record]) -> dict:
    pos, m, labels = campaign.position(), campaign.m, campaign.outcomes.labels
    # A list that holds its correct outcome gives that outcome's rank whatever its length (a
    # person guessing until right); one that does not says only "beyond its length". The ranks
    # up to the shortest list of the second kind are then known for every record (m when every
    # list holds its answer): model files of one list length l get l, as before.
    length = min((len(r.entries) for r in records
                  if labels[campaign.answers[pos[r.id]]] not in r.entries), default=m)
    ranks = np.empty(len(records), dtype=np.int64)
    beyond = 0
    for k, rec in enumerate(records):
        correct = labels[campaign.answers[pos[rec.id]]]
        try:
            rank = rec.entries.index(correct) + 1
        except ValueError:
            rank = None
        if rank is None or rank > length:
            beyond += 1
            rank = length + 1  # beyond the shortest list: only q_1..q_l are used
        ranks[k] = rank
    weights = _weights(campaign, records)
    q = np.bincount(ranks - 1, weights=weights, minlength=m + 1)[:m] / math.fsum(
        weights.tolist())
    return _rank_values(campaign, records, q, length) | {"n_beyond_list": beyond}


def bet_ties(campaign: Campaign, records: Sequence[Record]) -> tuple[np.ndarray, np.ndarray]:
    """Per bets record, the places its correct outcome's bet shares: ``first`` (1 + the
    outcomes bet more) and ``n_tied`` (the outcomes bet exactly as much, itself included), the
    unlisted outcomes all at the floor of eq. 6. No order among equal bets is read from the
    file, so reordering a record's entries changes nothing."""
    pos, m, labels = campaign.position(), campaign.m, campaign.outcomes.labels
    first = np.empty(len(records), dtype=np.int64)
    tied = np.empty(len(records), dtype=np.int64)
    for k, rec in enumerate(records):
        bets = np.array([as_float(v) for v in rec.entries.values()], dtype=np.float64)
        length = bets.size
        floor = floor_bet(math.fsum(bets.tolist()), m, length) if length < m else None
        correct = labels[campaign.answers[pos[rec.id]]]
        bet = as_float(rec.entries[correct]) if correct in rec.entries else floor
        unlisted = m - length
        first[k] = 1 + int(np.count_nonzero(bets > bet)) + (
            unlisted if floor is not None and floor > bet else 0)
        tied[k] = int(np.count_nonzero(bets == bet)) + (
            unlisted if floor is not None and floor == bet else 0)
    return first, tied


def score_bets_as_ranks(campaign: Campaign, records: Sequence[Record]) -> dict:
    """Shannon's rank values of a bets file (the keys of a ranking's score): the correct
    outcome's place among the m bets, a tie of k spread 1/k over its places
    (:func:`bet_ties`, :func:`fairppl.shannon.ranks.shared_rank_frequencies`), so every rank is
    known (l = m) and neither the file's order nor the vocabulary's breaks a tie; a uniform
    bettor gets q_r = 1/m and log2 m bits at both ends."""
    from .ranks import shared_rank_frequencies

    first, tied = bet_ties(campaign, records)
    q = shared_rank_frequencies(first, tied, campaign.m, weights=_weights(campaign, records))
    out = _rank_values(campaign, records, q, campaign.m)
    return out | {"n_beyond_list": 0,
                  "rank_places": int(min(campaign.m, int(tied.sum()))),
                  "n_tied_records": int(np.count_nonzero(tied > 1))}


def _rank_values(campaign: Campaign, records: Sequence[Record], q: np.ndarray,
                 length: int) -> dict:
    """The score of rank frequencies ``q`` (all m, known up to ``length``): Shannon's values
    per tail, the wider pair, what they are, and at ``length`` = m on an unweighted campaign
    the finite-sample values of the upper end (:mod:`fairppl.shannon.ranks`)."""
    from . import ranks as rank_bounds

    pos, m = campaign.position(), campaign.m
    n = len(records)
    tails = {}
    for tail in TAILS:
        if tail == "zipf" and length < m and not q[:length].any():
            tails[tail] = {"entropy_lower_bits": None, "entropy_upper_bits": None,
                           "perplexity_lower": None, "perplexity_upper": None, "valid": False,
                           "note": f"no correct outcome within the first {length} ranks: no "
                                   f"Zipf law to fit"}
            continue
        if length >= m:
            lower, upper = rank_bounds.shannon_bounds(q)
        else:
            lower, upper = rank_bounds.shannon_bounds_limited(q[:length], m, length, tail=tail)
        valid, why = rank_bounds.bounds_status(lower, upper, m, min(length, m), tail)
        tails[tail] = {"entropy_lower_bits": lower / math.log(2),
                       "entropy_upper_bits": upper / math.log(2),
                       "perplexity_lower": math.exp(lower), "perplexity_upper": math.exp(upper),
                       "valid": valid, "note": why}
    fitted = [t for t in tails.values() if t["entropy_lower_bits"] is not None]
    lower = min(t["entropy_lower_bits"] for t in fitted)
    upper = max(t["entropy_upper_bits"] for t in fitted)
    valid = all(t["valid"] for t in tails.values())
    if valid:
        note = tails["uniform"]["note"]
    elif lower > upper:
        note = ("no interval: the lower end exceeds the upper one (see tails); "
                + tails["uniform"]["note"])
    else:
        note = "; ".join(f"{tail}: {t['note']}" for tail, t in tails.items())
    if lower > upper or lower > math.log2(m) + 1e-12:
        kind = "no interval"
    else:
        kind = "estimates" if length >= m else "not bounds (cut at l)"
    corrected = bound = None
    if length >= m and campaign.weights is None:
        corrected = rank_bounds.miller_madow_upper(q, n) / math.log(2)
        bound = rank_bounds.upper_confidence_bound(q, n) / math.log(2)
    units = {campaign.unit_ids[pos[r.id]] for r in records}
    return {"perplexity": None, "list_length": length,
            "n_units_scored": len(units), "n_truncations_ranked": n,
            "entropy_lower_bits": lower, "entropy_upper_bits": upper,
            "perplexity_lower": 2.0 ** lower, "perplexity_upper": 2.0 ** upper,
            "rank_bounds_valid": valid, "rank_bounds_note": note, "rank_values_kind": kind,
            "entropy_upper_mm_bits": corrected, "entropy_upper_bound_bits": bound,
            "once_seen_share": (rank_bounds.once_seen_share(q, n)
                                if campaign.weights is None else None),
            "tails": tails}


def score_submission(campaign: Campaign, records: Sequence[Record], flags: Sequence[dict],
                     allow_invalid: bool = False) -> dict:
    """Score the valid ``records`` of a submission (:func:`read_submission`).

    With flags and not ``allow_invalid`` nothing is scored (``perplexity`` ``None``, ``note``
    says why). Bets: ``perplexity`` (eq. 3 over the scored truncations), ``interval`` (a
    bootstrap over units of the per-unit sums of -log bets and truncation counts, when they
    cover at least ``MIN_INTERVAL_UNITS`` units, else ``None`` with ``interval_note``).
    Rankings: ``entropy_lower_bits``/``entropy_upper_bits`` (bits per word, the wider of the
    uniform and Zipf tails' values, per tail in ``tails``) from the ranks of the correct
    outcomes within ``list_length``, the shortest list that does not hold its correct outcome
    (``m`` when every list holds it; a rank past it counts as beyond), over
    ``n_truncations_ranked`` truncations; ``rank_bounds_valid`` is true only when eq. 9
    applies (every ranking complete, the two ends ordered and the lower at most log m) and
    ``rank_bounds_note`` says why (:func:`fairppl.shannon.ranks.bounds_status`); even then
    they are estimates from the sample (``rank_values_kind``), the upper one biased low, so with
    every rank known on an unweighted campaign ``entropy_upper_mm_bits`` (Miller-Madow) and
    ``entropy_upper_bound_bits`` (a 95% upper bound) come with them. Both kinds:
    ``scheme`` (how the truncations were drawn) and, for a /1 randomized campaign,
    ``scheme_note``."""
    kinds = {r.kind for r in records}
    if len(kinds) > 1:
        raise ValueError("records of both kinds: read_submission flags one of them")
    out = {"campaign": str(campaign.folder), "protocol": campaign.protocol,
           "scheme": campaign.scheme, "m": campaign.m,
           "n_truncations": len(campaign.ids), "kind": kinds.pop() if kinds else None,
           "perplexity": None, "n_scored": 0, "n_valid": len(records),
           "n_flagged": len(flags), "flagged": list(flags), "allow_invalid": bool(allow_invalid),
           "note": None}
    if flags and not allow_invalid:
        out["note"] = (f"not scored: {len(flags)} flagged; fix them, or pass --allow-invalid to "
                       f"score the {len(records)} valid record(s)")
        return out
    if not records:
        out["note"] = "nothing to score: no valid record"
        return out
    scored = _score_bets(campaign, records) if out["kind"] == BETS else \
        _score_rankings(campaign, records)
    out.update(scored)
    out["n_scored"] = len(records)
    if campaign.scheme == "units":
        out["scheme_note"] = ("an earlier campaign (fairppl-campaign/1) whose randomized draws "
                              "took every unit equally likely: its score estimates the mean "
                              "over units, not the per-word value")
    if flags:
        out["note"] = (f"scored the valid rest (--allow-invalid): {len(records)} of "
                       f"{len(campaign.ids)} truncations; {len(flags)} flagged left out")
    return out
