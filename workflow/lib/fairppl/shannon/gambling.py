"""Gambling perplexity from bets (Bimbot et al., eqs. 3, 5 and 6).

A truncation's bets are an array over the m outcomes (:mod:`.outcomes`), non-negative, summing to
at most 1. What the estimators need from one truncation is summarised once
(:func:`summarize_bets`): the log bet on the correct outcome, its rank, and for every list length l
the sum A_l of the l largest bets and the l-th largest bet. Ranks order the outcomes by decreasing
bet, ties broken by outcome order (the vocabulary's frequency order), so a rank is deterministic.

Lists limited to the l best bets (eq. 6): a correct outcome outside the list gets the floor
``(1 - A_l) / (m - l)``; a list is consistent when ``0 < 1 - A_l <= (m - l) * (smallest listed
bet)`` (:func:`consistency_problem`), which the model's own l best bets always satisfy when they
sum to 1. Log bets and perplexities are in nats (``exp``); ``bits`` in a name means base 2.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..core.errors import InputError

#: Bets may sum above 1 by this much (float32 rounding of a model's softmax), never more.
SUM_TOLERANCE = 1e-6
#: Relative slack of the consistency check's upper bound (floating-point sums of many bets).
CONSISTENCY_RTOL = 1e-9


def check_bets(bets: np.ndarray, m: int) -> np.ndarray:
    """``bets`` as a float64 array of length ``m``; refuses NaN, negative values and a sum above
    ``1 + SUM_TOLERANCE``."""
    arr = np.asarray(bets, dtype=np.float64)
    if arr.shape != (m,):
        raise InputError(f"bets of shape {arr.shape}: expected one bet per outcome ({m})")
    if not np.isfinite(arr).all() or (arr < 0).any():
        raise InputError("bets must be finite and non-negative")
    total = math.fsum(arr.tolist())
    if total > 1 + SUM_TOLERANCE:
        raise InputError(f"bets sum to {total:.9g}: expected at most 1")
    return arr


def summarize_bets(bets: np.ndarray, correct: int, list_lengths: Sequence[int]) -> dict:
    """One truncation's summary: ``log_bet`` (ln of the correct outcome's bet; ``-inf`` for a zero
    bet), ``rank`` (1-based), and per list length l (capped at m): ``listed_sum`` (A_l, the sum of
    the l largest bets, by ``math.fsum``) and ``listed_last`` (the l-th largest bet)."""
    arr = check_bets(bets, len(bets))
    order = np.argsort(-arr, kind="stable")
    rank = int(np.nonzero(order == correct)[0][0]) + 1
    ranked = arr[order]
    sums, lasts = [], []
    for length in list_lengths:
        n = min(int(length), len(arr))
        sums.append(math.fsum(ranked[:n].tolist()))
        lasts.append(float(ranked[n - 1]))
    bet = float(arr[correct])
    return {"log_bet": math.log(bet) if bet > 0 else -math.inf, "rank": rank,
            "listed_sum": sums, "listed_last": lasts}


def floor_bet(listed_sum: float, m: int, length: int) -> float:
    """Eq. 6: the bet of an unlisted outcome, ``(1 - A_l) / (m - l)`` (``l < m``)."""
    if length >= m:
        raise ValueError(f"a list of {length} of {m} outcomes leaves none unlisted: no floor")
    return (1.0 - listed_sum) / (m - length)


def consistency_problem(listed_sum: float, smallest: float, m: int, length: int) -> str | None:
    """Why a list of ``length`` bets summing to ``listed_sum`` with smallest bet ``smallest`` fails
    the check ``0 < 1 - A_l <= (m - l) * smallest``; ``None`` when it passes (a full list, l = m,
    needs only A_l <= 1)."""
    if length >= m:
        if listed_sum > 1 + SUM_TOLERANCE:
            return f"the bets sum to {listed_sum:.9g}: expected at most 1"
        return None
    rest = 1.0 - listed_sum
    if not rest > 0:
        return (f"the {length} listed bets sum to {listed_sum:.9g}: nothing is left for the "
                f"{m - length} unlisted outcomes (expected a sum below 1)")
    bound = (m - length) * smallest
    if rest > bound * (1 + CONSISTENCY_RTOL):
        return (f"the floor (1 - {listed_sum:.9g}) / {m - length} = {rest / (m - length):.6g} "
                f"exceeds the smallest listed bet {smallest:.6g} (expected 1 - A <= (m - l) * "
                f"smallest bet)")
    return None


def gambling_perplexity(log_bets: Sequence[float]) -> float:
    """Eq. 3: the inverse geometric mean of the bets on the correct outcomes,
    ``exp(-mean(log_bets))`` (``inf`` when a bet is zero)."""
    values = np.asarray(log_bets, dtype=np.float64)
    if values.size == 0:
        raise ValueError("no truncation to score")
    if np.isneginf(values).any():
        return math.inf
    return math.exp(-math.fsum(values.tolist()) / values.size)


def limited_log_bets(log_bets, ranks, listed_sums, m: int, length: int) -> np.ndarray:
    """Per truncation, the log bet a list of the ``length`` best bets gives the correct outcome:
    its own when its rank is within the list, else the floor of eq. 6."""
    log_bets = np.asarray(log_bets, dtype=np.float64)
    if length >= m:
        return log_bets
    ranks = np.asarray(ranks)
    floors = (1.0 - np.asarray(listed_sums, dtype=np.float64)) / (m - length)
    with np.errstate(divide="ignore"):
        floor_logs = np.where(floors > 0, np.log(np.maximum(floors, 1e-300)), -np.inf)
    return np.where(ranks <= length, log_bets, floor_logs)
