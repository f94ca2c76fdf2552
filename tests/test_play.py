"""The game behind `fairppl campaign play` (fairppl.shannon.play) and the players' table of the
report (fairppl.shannon.players), without a browser: each protocol's line by hand, refusals that
change no file, resuming, and the players' scores beside a model's on the same truncations.

The campaign is docs/campaign.md's worked example grown to two units: outcomes the, cat, sat,
<unk>, </s> (m = 5); units "the dog" (answers the, <unk>, </s>) and "cat sat" (cat, sat, </s>).
"""

from __future__ import annotations

import json
import math

import pytest

from fairppl.core.errors import InputError
from fairppl.shannon.campaign import make_truncations, read_campaign, write_campaign
from fairppl.shannon.outcomes import Outcomes
from fairppl.shannon.play import Game, PlayError, PlaySettings, list_bets
from fairppl.shannon.players import check_players, players_sentences, players_table

SETTINGS = {"corpus": "toy", "language": "eng", "split": "test", "protocol": "exhaustive",
            "n": None, "seed": 0, "vocab_size": 3, "vocabulary_corpus": "toy"}
ANSWERS = ["the", "<unk>", "</s>", "cat", "sat", "</s>"]


@pytest.fixture
def campaign(tmp_path):
    outcomes = Outcomes(("the", "cat", "sat"))
    units = [("u1", "the dog"), ("u2", "cat sat")]
    folder = tmp_path / "campaign"
    write_campaign(folder, make_truncations(units, outcomes, "exhaustive"), outcomes, SETTINGS)
    return read_campaign(folder)


def _files(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.is_dir() else {}


def test_list_bets_share_the_stake_by_one_over_rank():
    assert list_bets(1, 0.9) == pytest.approx([0.9])
    assert list_bets(2, 0.9) == pytest.approx([0.6, 0.3])
    assert list_bets(3, 0.55) == pytest.approx([0.3, 0.15, 0.1])  # H_3 = 11/6
    assert list_bets(0, 0.9) == []


def test_each_protocol_writes_the_campaign_line_and_shows_the_answer(campaign):
    game = Game(campaign, "ann", PlaySettings("list", list_max=2, stake=0.9))
    state = game.state()
    assert state["truncation"]["id"] == "t000001" and "word" not in state["truncation"]
    out = game.bet({"id": "t000001", "guesses": ["cat", "the"]})
    # the answer "the" second: 0.3; shown with the next truncation
    assert out["answer"] == {"outcome": "the", "word": "the"}
    assert out["bet"] == pytest.approx(0.3) and out["listed"]
    assert out["state"]["truncation"]["id"] == "t000002"
    # "dog" is outside the vocabulary: <unk>, and the page shows the word itself
    out = game.bet({"id": "t000002", "guesses": ["zebra"]})
    assert out["answer"] == {"outcome": "<unk>", "word": "dog"} and out["bet"] == 0.9
    out = game.bet({"id": "t000003", "guesses": ["the"]})  # </s> unlisted: floor 0.1 / 4
    assert out["bet"] == pytest.approx(0.025) and not out["listed"]
    lines = [json.loads(x) for x in game.files.bets.read_text(encoding="utf-8").splitlines()]
    assert lines == [{"id": "t000001", "bets": {"cat": 0.6, "the": 0.3}},
                     {"id": "t000002", "bets": {"<unk>": 0.9}},
                     {"id": "t000003", "bets": {"the": 0.9}}]

    money = Game(campaign, "ann", PlaySettings("money", coins=100))
    out = money.bet({"id": "t000001", "stakes": [["the", 50], ["cat", 20]]})
    assert out["bet"] == 0.5
    assert json.loads(money.files.bets.read_text(encoding="utf-8")) == {
        "id": "t000001", "bets": {"the": 0.5, "cat": 0.2}}

    rank = Game(campaign, "ann", PlaySettings("rank", max_guesses=3))
    assert rank.guess({"id": "t000001", "guess": "cat"}) == {
        "correct": False, "outcome": "cat", "ended": False, "guesses_left": 2}
    assert rank.pending_guesses("t000001") == ["cat"]
    out = rank.guess({"id": "t000001", "guess": "the"})
    assert out["ended"] and out["correct"] and out["rank"] == 2
    for word in ("cat", "sat", "the"):  # three wrong guesses on <unk>: the answer is shown
        out = rank.guess({"id": "t000002", "guess": word})
    assert out["ended"] and not out["correct"] and out["rank"] is None
    assert [json.loads(x) for x in rank.files.bets.read_text(encoding="utf-8").splitlines()] \
        == [{"id": "t000001", "ranking": ["cat", "the"]},
            {"id": "t000002", "ranking": ["cat", "sat", "the"]}]
    assert not rank.files.pending.exists()


BAD = [
    ("list", {"id": "t000001", "guesses": ["the", "cat", "sat"]}, 400,
     "3 guesses: expected at most 2"),
    ("list", {"id": "t000001", "guesses": ["zebra", "yak"]}, 400,
     "'zebra' and 'yak' are both outside the vocabulary (<unk>): expected each outcome once"),
    ("list", {"id": "t000001", "guesses": "the"}, 400, 'expected "guesses": a list of words'),
    ("list", {"id": "t000002", "guesses": ["the"]}, 409,
     "truncation t000002: not the next one; the next one is t000001"),
    ("list", {"id": "t999999", "guesses": ["the"]}, 400, "not a truncation of this campaign"),
    ("list", {"id": "t000001", "guesses": ["the cat"]}, 400, "expected one word (no spaces)"),
    ("money", {"id": "t000001", "stakes": [["the", 100]]}, 400,
     "100 coins placed: expected at most 99 of 100"),
    ("money", {"id": "t000001", "stakes": [["the", 2.5]]}, 400,
     "2.5 coins on 'the': expected a whole number >= 1"),
    ("money", {"id": "t000001", "stakes": [["the"]]}, 400, "list of [word, coins] pairs"),
]


@pytest.mark.parametrize("protocol,request_,status,message", BAD)
def test_malformed_bets_are_refused_and_change_no_file(campaign, protocol, request_, status,
                                                       message):
    game = Game(campaign, "bob", PlaySettings(protocol, list_max=2))
    before = _files(game.files.folder)
    with pytest.raises(PlayError) as err:
        game.bet(request_)
    assert err.value.status == status and message in str(err.value)
    assert _files(game.files.folder) == before


def test_settings_players_and_torn_files_are_checked(campaign):
    game = Game(campaign, "cy", PlaySettings("list", list_max=2, stake=0.9))
    game.bet({"id": "t000001", "guesses": ["the"]})
    with pytest.raises(InputError, match=r"already played with other settings \(stake 0.9 "
                                         r"there, 0.8 now\)"):
        Game(campaign, "cy", PlaySettings("list", list_max=2, stake=0.8))
    with pytest.raises(InputError, match="already played with other settings "
                                         r"\(player_kind 'person' there, 'scripted' now\)"):
        Game(campaign, "cy", PlaySettings("list", list_max=2), kind="scripted")
    with pytest.raises(PlayError, match="expected 1 to 40 letters"):
        Game(campaign, "../cy", PlaySettings("list", list_max=2))
    # eq. 6's check on m = 5 with a stake of 0.5: two guesses pass (the floor 0.5 / 3 equals
    # the second bet 0.5 / (2 * 1.5)); with three the floor 0.5 / 2 = 0.25 exceeds the third
    # bet 0.5 / (3 * 11/6) = 0.091
    with pytest.raises(InputError, match="--stake 0.5 with lists of 3"):
        Game(campaign, "dee", PlaySettings("list", list_max=4, stake=0.5))
    with pytest.raises(InputError, match="--list-max 5: expected fewer than the m = 5"):
        Game(campaign, "dee", PlaySettings("list", list_max=5))
    with pytest.raises(InputError, match="--max-guesses 6: expected at most the m = 5"):
        Game(campaign, "dee", PlaySettings("rank", max_guesses=6))
    # a line cut short (a server killed mid-write) is named, not repaired silently
    with game.files.bets.open("a", encoding="utf-8") as handle:
        handle.write('{"id": "t000002", "bets": {"the"')
    with pytest.raises(InputError, match=r"list.jsonl, line 2: the last line is incomplete"):
        game.played()


def test_a_new_game_resumes_at_the_next_truncation(campaign):
    first = Game(campaign, "eve", PlaySettings("rank", max_guesses=5))
    first.guess({"id": "t000001", "guess": "the"})
    first.guess({"id": "t000002", "guess": "cat"})  # wrong, pending
    again = Game(campaign, "eve", PlaySettings("rank", max_guesses=5))  # a restarted server
    state = again.state()
    assert state["n_played"] == 1 and state["truncation"]["id"] == "t000002"
    assert state["pending"] == ["cat"]
    with pytest.raises(PlayError, match="'cat' is 'cat', already guessed"):
        again.guess({"id": "t000002", "guess": "cat"})


def test_players_table_scores_people_and_models_on_the_same_truncations(campaign, tmp_path):
    folder = campaign.folder
    game = Game(campaign, "fay", PlaySettings("money"), kind="scripted")
    for tid, answer in zip(campaign.ids[:4], ANSWERS):  # 50 coins on each answer
        game.bet({"id": tid, "stakes": [[answer if answer != "<unk>" else "dog", 50]]})
    (folder / "models").mkdir()
    # a model betting 0.25 on each answer everywhere, 0 elsewhere except the floor's mass
    with (folder / "models" / "flat.jsonl").open("w", encoding="utf-8") as handle:
        for tid, answer in zip(campaign.ids, ANSWERS):
            handle.write(json.dumps({"id": tid, "bets": {answer: 0.25}}) + "\n")
    (folder / "models" / "flat.json").write_text('{"label": "a flat model"}', encoding="utf-8")
    entries = check_players([{"campaign": str(folder), "player": "fay", "protocol": "money"}],
                            "config.yaml")
    table = players_table(entries)
    rows = {r["predictor"]: r for r in table.iter_rows(named=True)}
    assert rows["fay"]["perplexity_per_unit"] == pytest.approx(2.0, rel=1e-12)
    assert rows["fay"]["player_kind"] == "scripted"
    assert rows["a flat model"]["perplexity_per_unit"] == pytest.approx(4.0, rel=1e-12)
    assert rows["a flat model"]["n_truncations_played"] == 4  # the player's 4, not the 6
    assert rows["fay"]["ci_low"] is None and "fewer than 20" in rows["fay"]["note"]
    (sentence,) = players_sentences(table, {"eng": "English"})
    assert sentence == ("fay (a scripted player, not a person) played 4 of 6 truncations of "
                        "English (money protocol; the unit is words): gambling perplexity 2.0 "
                        "(no interval: the scored truncations cover 2 distinct unit(s), fewer "
                        "than 20); on the same truncations a flat model scored 4.0.")
    with pytest.raises(InputError, match=r"shannon.players entry 1: no bets file .*rank.jsonl"):
        check_players([{"campaign": str(folder), "player": "fay", "protocol": "rank"}],
                      "config.yaml")
    assert math.isfinite(rows["fay"]["perplexity_per_unit"])
