"""Rank values of the models beside a player (fairppl.shannon.play_server.compare, rank
protocol) from their bets: a tie is spread over the places it shares, so neither the order of a
record's entries nor the order of the file's lines changes them, and a uniform model of m = 32
outcomes gets exactly 5 bits (perplexity 32) at both ends of eq. 9.

Campaign: 30 words w00..w29, <unk> and </s> (m = 32); 6 units of 1 to 3 words (19 truncations).
"""

from __future__ import annotations

import json
import math

import pytest

from fairppl.shannon.campaign import make_truncations, read_campaign, write_campaign
from fairppl.shannon.outcomes import Outcomes
from fairppl.shannon.play_server import compare
from fairppl.shannon.scoring import bet_ties

WORDS = tuple(f"w{k:02d}" for k in range(30))
SETTINGS = {"corpus": "toy", "language": "eng", "split": "test", "protocol": "exhaustive",
            "n": None, "seed": 0, "vocab_size": 30, "vocabulary_corpus": "toy"}
UNITS = [("u1", "w00 w01 w02"), ("u2", "w03 w04"), ("u3", "w05"), ("u4", "w06 w07 w08"),
         ("u5", "w09 w10"), ("u6", "w11 zebra")]


@pytest.fixture
def campaign(tmp_path):
    outcomes = Outcomes(WORDS)
    folder = tmp_path / "campaign"
    write_campaign(folder, make_truncations(UNITS, outcomes, "exhaustive"), outcomes, SETTINGS)
    return read_campaign(folder)


def _answer(campaign, tid):
    return campaign.outcomes.labels[campaign.answers[campaign.position()[tid]]]


def _write(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _player(campaign, tmp_path):
    """A player who guessed every answer at the 2nd try (ranks all 2)."""
    records = []
    for tid in campaign.ids:
        answer = _answer(campaign, tid)
        wrong = next(w for w in campaign.outcomes.labels if w != answer)
        records.append({"id": tid, "ranking": [wrong, answer]})
    path = tmp_path / "ann.jsonl"
    _write(path, records)
    return path


def _ranks(campaign, bets_path, model_records):
    _write(campaign.folder / "models" / "m.jsonl", model_records)
    out = compare(campaign, bets_path, "rank")
    (row,) = out["models"]
    return row


def test_a_uniform_model_gets_log2_m_at_both_ends_whatever_the_order(campaign, tmp_path):
    labels = list(campaign.outcomes.labels)
    assert campaign.m == len(labels) == 32
    me = _player(campaign, tmp_path)
    full = [{"id": t, "bets": {w: 1 / 32 for w in labels}} for t in campaign.ids]
    rows = {
        "listed": _ranks(campaign, me, full),
        "entries reversed": _ranks(campaign, me, [
            {"id": r["id"], "bets": dict(reversed(list(r["bets"].items())))} for r in full]),
        "lines reversed": _ranks(campaign, me, full[::-1]),
        "empty lists": _ranks(campaign, me, [{"id": t, "bets": {}} for t in campaign.ids]),
    }
    for how, row in rows.items():
        ranks = row["ranks"]
        # every correct outcome tied with all 32: q_r = 1/32, lower = upper = log2 32 = 5 bits
        assert ranks["entropy_lower_bits"] == pytest.approx(5.0, rel=1e-12), how
        assert ranks["entropy_upper_bits"] == pytest.approx(5.0, rel=1e-12), how
        assert ranks["perplexity_range"] == pytest.approx([32.0, 32.0], rel=1e-12), how
        assert row["perplexity"] == pytest.approx(32.0, rel=1e-12), how
        assert ranks["rank_values_kind"] == "estimates" and ranks["rank_places"] == 32
        # 32 places filled: the upper value is log2 m, the most any bettor has, not a cap of n
        assert not ranks["upper_at_cap"] and ranks["cap_note"] is None
        assert ranks["entropy_upper_mm_bits"] == pytest.approx(5.0)
        assert ranks["entropy_upper_bound_bits"] == pytest.approx(5.0)
        assert ranks["lower_above_perplexity"] is False
        assert ranks["perplexity_above_upper"] is False
    # the player: ranks all 2 (not tied), 19 truncations: q_2 = 1, lower 2 ln 2 = 2 bits, upper 0
    player = compare(campaign, me, "rank")["player_score"]
    assert (player["entropy_lower_bits"], player["entropy_upper_bits"]) == pytest.approx((2, 0))
    assert player["rank_values_kind"] == "no interval"


def test_partial_ties_and_the_floor_by_hand(campaign, tmp_path):
    labels = list(campaign.outcomes.labels)
    ids = campaign.ids
    me = _player(campaign, tmp_path)
    records = []
    for k, tid in enumerate(ids):
        answer = _answer(campaign, tid)
        others = [w for w in labels if w != answer]
        if k % 3 == 0:  # the answer alone on top of a full list: place 1
            bets = {answer: 0.5} | {w: 0.5 / 31 for w in others}
        elif k % 3 == 1:  # the answer tied with 3 others at the top of a list of 4
            bets = {w: 0.2 for w in [others[0], answer, others[1], others[2]]}
        else:  # a list of 2 without the answer: the floor (1 - 0.9) / 30 for 30 outcomes
            bets = {others[0]: 0.6, others[1]: 0.3}
        records.append({"id": tid, "bets": bets})
    first, tied = bet_ties(campaign, [_record(r) for r in records])
    assert first.tolist() == [[1, 1, 3][k % 3] for k in range(len(ids))]
    assert tied.tolist() == [[1, 4, 30][k % 3] for k in range(len(ids))]
    row = _ranks(campaign, me, records)
    again = _ranks(campaign, me, [{"id": r["id"], "bets": dict(reversed(list(r["bets"].items())))}
                                  for r in records[::-1]])
    assert row["ranks"]["entropy_lower_bits"] == again["ranks"]["entropy_lower_bits"]
    assert row["ranks"]["entropy_upper_bits"] == again["ranks"]["entropy_upper_bits"]
    # q by hand: 19 truncations, 7 at place 1, 6 spread over 1..4, 6 spread over 3..32
    n = len(ids)
    q = [0.0] * 32
    q[0] += 7 / n
    for r in range(4):
        q[r] += 6 / 4 / n
    for r in range(2, 32):
        q[r] += 6 / 30 / n
    upper = -sum(x * math.log2(x) for x in q if x > 0)
    lower = sum(r * (q[r - 1] - (q[r] if r < 32 else 0.0)) * math.log2(r) for r in range(1, 33))
    assert row["ranks"]["entropy_upper_bits"] == pytest.approx(upper, rel=1e-12)
    assert row["ranks"]["entropy_lower_bits"] == pytest.approx(lower, rel=1e-12)


def _record(raw):
    from fairppl.shannon.submission import BETS, Record

    return Record(line=1, id=raw["id"], kind=BETS, entries=raw["bets"])


def test_the_players_table_calls_rank_values_estimates(campaign):
    from fairppl.shannon.players import bets_file, players_sentences, players_table

    entry = {"campaign": str(campaign.folder), "player": "bo", "protocol": "rank"}
    labels = list(campaign.outcomes.labels)
    records = []
    for k, tid in enumerate(campaign.ids):  # ranks 1 (10 times), 2 (5 times), 3 (4 times)
        answer = _answer(campaign, tid)
        wrong = [w for w in labels if w != answer][:(0 if k < 10 else 1 if k < 15 else 2)]
        records.append({"id": tid, "ranking": wrong + [answer]})
    _write(bets_file(entry), records)
    _write(campaign.folder / "models" / "uniform.jsonl",
           [{"id": t, "bets": {}} for t in campaign.ids])
    table = players_table([entry])
    rows = {r["predictor"]: r for r in table.iter_rows(named=True)}
    bo, uniform = rows["bo"], rows["uniform"]
    n = 19
    q = [10 / n, 5 / n, 4 / n]
    plug = -sum(x * math.log(x) for x in q)
    lower = (1 * (q[0] - q[1]) * 0 + 2 * (q[1] - q[2]) * math.log(2) + 3 * q[2] * math.log(3))
    assert bo["entropy_high_bits_per_unit"] == pytest.approx(plug / math.log(2), rel=1e-12)
    assert bo["entropy_low_bits_per_unit"] == pytest.approx(lower / math.log(2), rel=1e-12)
    assert bo["rank_values_kind"] == "estimates" and bo["rank_values_are_bounds"] is True
    mm = (plug + (3 - 1) / (2 * n)) / math.log(2)
    assert bo["entropy_high_mm_bits_per_unit"] == pytest.approx(mm, rel=1e-12)
    bound = (plug + math.log(1 + 31 / n) + (1 + math.log(n)) * math.sqrt(math.log(20) / (2 * n))
             ) / math.log(2)
    assert bound < 5.0
    assert bo["entropy_high_bound_bits_per_unit"] == pytest.approx(bound, rel=1e-12)
    assert uniform["entropy_low_bits_per_unit"] == pytest.approx(5.0, rel=1e-12)
    assert uniform["entropy_high_bits_per_unit"] == pytest.approx(5.0, rel=1e-12)
    assert uniform["lower_above_perplexity"] is False
    assert uniform["perplexity_above_upper"] is False
    (sentence,) = players_sentences(table, {"eng": "English"})
    assert sentence == (
        f"bo (a person) played 19 of 19 truncations of English (rank protocol; the unit is "
        f"words): Shannon's rank estimates of the bounds, {lower / math.log(2):.2f} to "
        f"{plug / math.log(2):.2f} bits per word (the upper one, from 19 truncations, is "
        f"biased low: Miller-Madow {mm:.2f}, 95% upper bound {bound:.2f}).")
