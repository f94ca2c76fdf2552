"""The game behind `fairppl campaign play` (fairppl.shannon.play) and the players' table of the
report (fairppl.shannon.players), without a browser: each protocol's line by hand, refusals that
change no file, resuming, and the players' scores beside a model's on the same truncations.

The campaign is docs/campaign.md's worked example grown to two units: outcomes the, cat, sat,
<unk>, </s> (m = 5); units "the dog" (answers the, <unk>, </s>) and "cat sat" (cat, sat, </s>).

Issue 37: players' names of any script; a cut last line repaired at start-up and any other
damage refused there (by the server, the report's check and the start-up check of shannon.players), naming file and
line; the server answers only its own page (token, Host, Origin, JSON), as a real server over
HTTP; the command's refusals in one line with no lock left; and `fairppl campaign play` killed
with SIGKILL while bets are written, then started again. The dry run's refusal of a cut player
file: tests/workflow/test_play_workflow.py.
"""

from __future__ import annotations

import json
import math
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

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


# ------------------------------------------------------------------ names, damage and repair


@pytest.mark.parametrize("name", ["Алёша", "أحمد", "李雷", "अनिल", "j.doe", "ann_2", "bob-smith"])
def test_names_of_any_script_are_players(campaign, name):
    game = Game(campaign, name, PlaySettings("list", list_max=2))
    game.bet({"id": "t000001", "guesses": ["the"]})
    assert (campaign.folder / "players" / name / "list.jsonl").is_file()


@pytest.mark.parametrize("name,why", [
    ("../evil", "holds a path separator"), ("bob smith", "holds a space"), ("", "empty"),
    (".hidden", "starts with '.'"), ("-x", "starts with '-'"), ("a\tb", "holds a space"),
    ("a\x00b", "holds a control character"), ("x" * 41, "41 characters"), ("a:b", "holds ':'"),
    (None, "not a string")])
def test_names_that_are_no_folder_name_are_refused(campaign, name, why):
    with pytest.raises(PlayError) as err:
        Game(campaign, name, PlaySettings("list", list_max=2))
    assert why in str(err.value) and "expected 1 to 40 letters" in str(err.value)
    assert not (campaign.folder / "players").exists()


def _played(campaign, player="gil", protocol="money", n=3) -> Game:
    game = Game(campaign, player, PlaySettings(protocol, max_guesses=4))
    for tid, answer in zip(campaign.ids[:n], ANSWERS):
        if protocol == "rank":
            game.guess({"id": tid, "guess": "dog" if answer == "<unk>" else answer})
        else:
            game.bet({"id": tid, "stakes": [["dog" if answer == "<unk>" else answer, 50]],
                      "seconds": 2.5})
    return game


def test_a_cut_last_line_is_moved_aside_and_the_whole_lines_kept(campaign):
    from fairppl.shannon.play import check_player_files, repair

    game = _played(campaign)
    whole = game.files.bets.read_bytes()
    torn = b'{"id": "t000004", "bets": {"ca'
    with game.files.bets.open("ab") as handle:
        handle.write(torn)
    with game.files.journal.open("ab") as handle:
        handle.write(b'{"id": "t0000')
    cuts = check_player_files(campaign, "gil", "money")
    assert [c.path.name for c in cuts] == ["money.jsonl", "money.journal.jsonl"]
    assert cuts[0].n_lines == 3 and cuts[0].tail == torn
    assert not list(game.files.folder.glob("*.torn-*"))  # checking writes nothing
    moved = [repair(c) for c in cuts]
    assert game.files.bets.read_bytes() == whole
    assert moved[0].read_bytes() == torn and moved[0].name.startswith("money.jsonl.torn-")
    assert check_player_files(campaign, "gil", "money") == []
    # a second cut line of the same second goes to a file of its own: none is overwritten
    with game.files.bets.open("ab") as handle:
        handle.write(b'{"id"')
    again = repair(check_player_files(campaign, "gil", "money")[0])
    assert again != moved[0] and moved[0].read_bytes() == torn and again.read_bytes() == b'{"id"'
    game = Game(campaign, "gil", PlaySettings("money"))
    assert game.state()["n_played"] == 3 and game.state()["seconds"] == pytest.approx(7.5)


def _damage(campaign, what):
    """A player's files damaged by hand as ``what`` says; returns (file, line) named."""
    game = _played(campaign, protocol="rank" if what == "pending" else "money")
    bets = game.files.bets
    lines = bets.read_text(encoding="utf-8").splitlines(keepends=True)
    if what == "repeated":
        bets.write_text("".join(lines + [lines[-1]]), encoding="utf-8")
        return bets, 4
    if what == "middle":
        bets.write_text(lines[0] + '{"id": "t000002", "bets": {"the"\n' + lines[2],
                        encoding="utf-8")
        return bets, 2
    if what == "invalid-bet":
        bets.write_text("".join(lines) + '{"id": "t000004", "bets": {"cat": 1.5}}\n',
                        encoding="utf-8")
        return bets, 4
    if what == "unknown-id":
        bets.write_text("".join(lines) + '{"id": "t999999", "bets": {"cat": 0.5}}\n',
                        encoding="utf-8")
        return bets, 4
    if what == "order":
        bets.write_text(lines[1] + lines[0] + lines[2], encoding="utf-8")
        return bets, 2
    if what == "settings":
        game.files.settings.write_text('{"protocol": "money", "coins": 100,', encoding="utf-8")
        return game.files.settings, None
    if what == "journal":
        game.files.journal.write_text("garbage\n" + game.files.journal.read_text(), "utf-8")
        return game.files.journal, 1
    game.guess({"id": "t000004", "guess": "the"})  # pending
    game.files.pending.write_text('{"id": "t000004", "guesses": "the"}\n', encoding="utf-8")
    return game.files.pending, 1


DAMAGE = {"repeated": "truncation 't000003' again (first on line 3)",
          "middle": "not JSON", "invalid-bet": "the bets sum to 1.5",
          "unknown-id": "id 't999999' is not a truncation of this campaign",
          "order": "truncation t000001 after a later one", "settings": "not JSON",
          "journal": "not JSON", "pending": 'expected {"id": a truncation id'}


@pytest.mark.parametrize("what", sorted(DAMAGE))
def test_other_damage_is_refused_naming_the_file_and_line(campaign, what):
    from fairppl.shannon.play import check_player_files
    from fairppl.shannon.play_server import PlayServer

    path, line = _damage(campaign, what)
    protocol = "rank" if what == "pending" else "money"
    before = _files(path.parent)
    for check in (lambda: check_player_files(campaign, "gil", protocol),
                  lambda: PlayServer(campaign, {protocol: PlaySettings(protocol,
                                                                       max_guesses=4)})):
        with pytest.raises(InputError) as err:
            check()
        message = str(err.value)
        where = f"{path}, line {line}: " if line else f"{path}: "
        assert message.startswith(where) and DAMAGE[what] in message, message
        assert "expected" in message and "\n" not in message
    assert _files(path.parent) == before  # refused: nothing written, nothing moved


def test_the_report_refuses_a_damaged_or_cut_player_file(campaign):
    game = _played(campaign)
    entry = [{"campaign": str(campaign.folder), "player": "gil", "protocol": "money"}]
    assert check_players(entry, "config.yaml") == entry
    with game.files.bets.open("ab") as handle:
        handle.write(b'{"id": "t000004"')
    with pytest.raises(InputError) as err:
        check_players(entry, "config.yaml")
    assert str(err.value).startswith(f"{game.files.bets}, line 4: the last line is cut short")
    assert f"fairppl campaign play {campaign.folder} --player gil --protocol money" in \
        str(err.value)
    assert game.files.bets.read_bytes().endswith(b'"t000004"')  # the report changes nothing
    game.files.bets.write_text(game.files.bets.read_text().rsplit("\n", 1)[0] + "\n" * 2)
    with pytest.raises(InputError, match=r"money.jsonl, line 4: not JSON"):
        check_players(entry, "config.yaml")


def test_the_seconds_are_the_pages_and_survive_a_new_game(campaign):
    game = Game(campaign, "hal", PlaySettings("rank", max_guesses=4))
    game.guess({"id": "t000001", "guess": "cat", "seconds": 1.25})
    restarted = Game(campaign, "hal", PlaySettings("rank", max_guesses=4))
    assert restarted.state()["seconds"] == pytest.approx(1.25)  # pending, kept
    restarted.guess({"id": "t000001", "guess": "the", "seconds": 2})
    journal = [json.loads(x) for x in restarted.files.journal.read_text().splitlines()]
    assert journal == [{"id": "t000001", "typed": ["cat", "the"], "seconds": 3.25}]
    for bad in (-1, "3", float("nan"), True):
        with pytest.raises(PlayError, match="expected a number of seconds >= 0"):
            restarted.guess({"id": "t000002", "guess": "cat", "seconds": bad})


def test_rank_results_are_ordered_ranges_and_say_when_capped(campaign):
    from fairppl.shannon.play_server import compare

    game = Game(campaign, "ivy", PlaySettings("rank", max_guesses=4))
    words = {"the": "the", "cat": "cat", "sat": "sat", "</s>": "</s>", "<unk>": "zebra"}
    for rank, (tid, answer) in enumerate(zip(campaign.ids[:4], ANSWERS), start=1):
        wrong = [w for o, w in words.items() if o != answer][:rank - 1]
        for word in wrong + [words[answer]]:
            out = game.guess({"id": tid, "guess": word})
        assert out["rank"] == rank
    out = compare(campaign, game.files.bets, "rank")["player_score"]
    # ranks 1, 2, 3, 4 once each, every rank known: q = (1/4, 1/4, 1/4, 1/4, 0), so the upper
    # value -sum q log2 q is 2 bits = log2 4, the most 4 truncations can give
    assert out["entropy_upper_bits"] == pytest.approx(2.0)
    assert out["entropy_range_bits"] == sorted(out["entropy_range_bits"])
    assert out["perplexity_range"] == sorted(out["perplexity_range"])
    assert out["upper_at_cap"] and out["cap_bits"] == pytest.approx(2.0)
    assert "log2 4 = 2.00 bits, the most that 4 rank frequencies can give" in out["cap_note"]
    few = compare(campaign, _played(campaign, "jo", "rank", n=4).files.bets, "rank")
    assert few["player_score"]["entropy_upper_bits"] == 0.0  # all at rank 1: not capped
    assert not few["player_score"]["upper_at_cap"] and few["player_score"]["cap_note"] is None


# ------------------------------------------------------------------ the server: only its own page


@pytest.fixture
def served(campaign):
    """The play server over the toy campaign in this process, on a free port."""
    from fairppl.shannon.play_server import PlayServer, serve

    state = PlayServer(campaign, {p: PlaySettings(p, list_max=2, max_guesses=4)
                                  for p in ("list", "money", "rank")})
    httpd = serve(state, port=0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield state, httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def _http(port, method, path, body=None, headers=None, token=None):
    """One request; (status, answer as JSON or text)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    head = dict(headers or {})
    if token is not None:
        head["X-Fairppl-Token"] = token
    data = body if body is None or isinstance(body, (str, bytes)) else json.dumps(body)
    if data is not None:
        head.setdefault("Content-Type", "application/json")
    conn.request(method, path, body=data, headers=head)
    r = conn.getresponse()
    raw = r.read()
    try:
        return r.status, json.loads(raw)
    except ValueError:
        return r.status, raw.decode("utf-8", "replace")


BET = {"player": "kim", "protocol": "money", "id": "t000001", "stakes": [["the", 50]]}
#: What a page of another origin can send (the forgeries of issue 37), and what must answer.
FORGED = [
    ("no token", "POST", BET, {}, None, 403, "no X-Fairppl-Token"),
    ("wrong token", "POST", BET, {}, "guess", 403, "a wrong X-Fairppl-Token"),
    ("text/plain (no-cors)", "POST", json.dumps(BET), {"Content-Type": "text/plain",
     "Origin": "http://127.0.0.1:1"}, None, 403, "a request from the page of another site"),
    ("form post", "POST", "player=kim&protocol=money", {
     "Content-Type": "application/x-www-form-urlencoded", "Origin": "http://127.0.0.1:1"},
     None, 403, "another site"),
    ("cross-site, token guessed", "POST", BET, {"Sec-Fetch-Site": "same-site"}, "TOKEN", 403,
     "a same-site request"),
    ("rebound DNS name", "POST", BET, {"Host": "evil.example:80"}, "TOKEN", 403,
     "Host 'evil.example:80': expected this server's own address"),
    ("text/plain with the token", "POST", json.dumps(BET), {"Content-Type": "text/plain"},
     "TOKEN", 415, "Content-Type 'text/plain': expected application/json"),
    ("preflight", "OPTIONS", None, {"Origin": "http://127.0.0.1:1",
     "Access-Control-Request-Method": "POST"}, None, 403, "CORS preflight"),
    ("reading the bets", "GET", None, {}, None, 403, "no X-Fairppl-Token"),
]


@pytest.mark.parametrize("what,method,body,headers,token,status,message", FORGED,
                         ids=[f[0] for f in FORGED])
def test_requests_not_from_the_page_are_refused_and_write_nothing(served, campaign, what,
                                                                  method, body, headers, token,
                                                                  status, message):
    state, port = served
    token = state.token if token == "TOKEN" else token
    path = "/api/results?player=kim&protocol=money" if method == "GET" else "/api/bet"
    got, answer = _http(port, method, path, body, headers, token)
    assert got == status and message in answer["error"], answer
    assert "Access-Control-Allow-Origin" not in str(answer)
    assert not (campaign.folder / "players").exists()  # not even the player's folder
    # the page's own request goes through
    got, answer = _http(port, "POST", "/api/bet", BET | {"seconds": 1.5}, {
        "Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin"}, state.token)
    assert got == 200 and answer["bet"] == 0.5
    journal = campaign.folder / "players" / "kim" / "money.journal.jsonl"
    assert json.loads(journal.read_text())["seconds"] == 1.5


def test_the_page_itself_needs_no_token_and_says_where_it_is(served):
    state, port = served
    got, page = _http(port, "GET", "/")
    assert got == 200 and "X-Fairppl-Token" in page and "This address has no token" in page
    got, _ = _http(port, "GET", "/", headers={"Host": "evil.example"})
    assert got == 403
    got, info = _http(port, "GET", "/api/campaign", token=state.token,
                      headers={"Host": f"localhost:{port}"})
    assert got == 200 and info["m"] == 5 and info["notices"] == []


def test_server_errors_reach_the_page_as_the_servers_message(served, campaign):
    state, port = served
    got, answer = _http(port, "POST", "/api/bet", BET | {"stakes": [["the", 2.5]]},
                        token=state.token)
    assert (got, answer["error"]) == (400, "2.5 coins on 'the': expected a whole number >= 1")
    got, answer = _http(port, "GET", f"/api/state?player={quote('Алёша')}&protocol=list",
                        token=state.token)
    assert got == 200 and answer["player"] == "Алёша"
    got, answer = _http(port, "GET", "/api/state?player=bob%20smith&protocol=list",
                        token=state.token)
    assert got == 400 and "holds a space" in answer["error"]
    # a file damaged while the server runs: an answer with the reason, not a dropped connection
    _http(port, "POST", "/api/bet", BET, token=state.token)
    bets = campaign.folder / "players" / "kim" / "money.jsonl"
    bets.write_text(bets.read_text() * 2, encoding="utf-8")
    for path in ("/api/state?player=kim&protocol=money", "/api/results?player=kim&protocol=money"):
        got, answer = _http(port, "GET", path, token=state.token)
        assert got == 409 and f"{bets}, line 2: not a line of this game" in answer["error"]


# ------------------------------------------------------------ the command: start, refuse, kill

FAIRPPL = str(Path(sys.executable).parent / "fairppl")


def _play_cli(folder, *args, timeout=120):
    return subprocess.run([FAIRPPL, "campaign", "play", str(folder), *args],
                          capture_output=True, text=True, timeout=timeout)


def _locks(folder: Path) -> list[str]:
    return sorted(p.name for p in (folder / "players").rglob("*.lock")) \
        if (folder / "players").is_dir() else []


class Play:
    """``fairppl campaign play`` as a real subprocess on a free port: its address and token
    from the line it prints, the lines before it (the repairs)."""

    def __init__(self, folder: Path, *args: str):
        self.proc = subprocess.Popen([FAIRPPL, "campaign", "play", str(folder), "--port", "0",
                                      *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        self.before = []
        for line in self.proc.stdout:
            if line.startswith("serving "):
                break
            self.before.append(line.rstrip("\n"))
        else:
            raise AssertionError("no server: " + "\n".join(self.before))
        self.url = line.split(" at ")[1].split(" ")[0]
        self.port = int(self.url.split(":")[2].split("/")[0])
        self.token = self.url.split("token=")[1]

    def get(self, path):
        return _http(self.port, "GET", path, token=self.token)

    def post(self, path, body):
        return _http(self.port, "POST", path, body, token=self.token)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


@pytest.mark.parametrize("name,why", [("../evil", "holds a path separator"),
                                      ("bob smith", "holds a space"), ("", "empty")])
def test_a_bad_player_name_is_one_line_and_leaves_nothing(campaign, name, why):
    proc = _play_cli(campaign.folder, "--player", name, "--port", "0")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: --player: player {name!r} ({why}): expected 1 to 40 letters")
    assert not (campaign.folder / "players").exists()


def test_a_port_out_of_range_or_in_use_is_one_line_and_leaves_no_lock(campaign):
    proc = _play_cli(campaign.folder, "--player", "ann", "--port", "70000")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1].endswith(
        "argument --port: '70000': expected a port number from 1 to 65535 (0: any free port)")
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        proc = _play_cli(campaign.folder, "--player", "ann", "--protocol", "money",
                        "--port", str(port))
    finally:
        taken.close()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: --port {port}: cannot listen on 127.0.0.1:{port} (")
    assert "pick another with --port" in line
    assert not (campaign.folder / "players").exists() and _locks(campaign.folder) == []


def test_damage_stops_the_start_with_one_line_and_no_lock(campaign):
    path, line = _damage(campaign, "repeated")
    for lock in path.parent.glob("*.lock"):
        lock.unlink()
    for args in (("--player", "gil"), ()):  # the one player, or every player's files
        proc = _play_cli(campaign.folder, *args, "--protocol", "money", "--port", "0")
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.splitlines() == [
            f"error: {path}, line {line}: truncation 't000003' again (first on line 3): "
            f"expected each truncation once, as the page writes them"]
        assert _locks(campaign.folder) == []
    settings = campaign.folder / "campaign.json"
    settings.write_text("{", encoding="utf-8")
    proc = _play_cli(campaign.folder, "--port", "0")
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {settings}: not JSON")


def test_a_unicode_player_plays_through_the_command(campaign):
    server = Play(campaign.folder, "--player", "Алёша", "--protocol", "list", "--list-max", "2")
    try:
        assert server.get("/api/campaign")[1]["player"] == "Алёша"
        got, out = server.post("/api/bet", {"player": "Алёша", "protocol": "list",
                                            "id": "t000001", "guesses": ["the"],
                                            "seconds": 0.5})
        assert got == 200 and out["bet"] == 0.9
    finally:
        server.stop()
    assert (campaign.folder / "players" / "Алёша" / "list.jsonl").is_file()


@pytest.fixture
def long_campaign(tmp_path):
    """2,000 truncations: 500 units of "cat sat the" (answers cat, sat, the, </s>)."""
    outcomes = Outcomes(("the", "cat", "sat"))
    units = [(f"u{k:03d}", "cat sat the") for k in range(500)]
    folder = tmp_path / "long"
    write_campaign(folder, make_truncations(units, outcomes, "exhaustive"), outcomes, SETTINGS)
    return read_campaign(folder)


def _bet_next(server, player="lee"):
    """Bet 50 coins on the next truncation's answer; its id once the server acknowledged it."""
    got, state = server.get(f"/api/state?player={player}&protocol=money")
    assert got == 200, state
    tid = state["truncation"]["id"]
    k = int(tid[1:]) - 1
    answer = ("cat", "sat", "the", "</s>")[k % 4]
    got, out = server.post("/api/bet", {"player": player, "protocol": "money", "id": tid,
                                        "stakes": [[answer, 50]], "seconds": 0.25})
    assert got == 200, out
    return tid


def test_killed_while_a_bet_is_written_resumes_with_every_whole_bet(long_campaign):
    """Issue 37's done-when: SIGKILL while a bet is written, start again, every complete bet
    kept, the cut bytes moved aside, the page's API working."""
    folder = long_campaign.folder
    bets = folder / "players" / "lee" / "money.jsonl"
    journal = bets.with_name("money.journal.jsonl")
    server = Play(folder, "--player", "lee", "--protocol", "money")
    acknowledged = [_bet_next(server) for _ in range(3)]
    server.kill()
    # what a kill in the middle of writing the fourth bet leaves (deterministic)
    torn = b'{"id": "t000004", "bets": {"</s>": 0.'
    with bets.open("ab") as handle:
        handle.write(torn)
    with journal.open("ab") as handle:
        handle.write(b'{"id": "t00')
    server = Play(folder, "--player", "lee", "--protocol", "money")
    try:
        assert len(server.before) == 2 and all(
            line.startswith("repaired ") and "the last line was cut short" in line
            for line in server.before), server.before
        moved = sorted(bets.parent.glob("money.jsonl.torn-*"))
        assert [p.read_bytes() for p in moved] == [torn]
        assert str(moved[0]) in server.before[0]
        notices = server.get("/api/campaign")[1]["notices"]
        assert [n["torn_file"] for n in notices][0] == str(moved[0])
        got, state = server.get("/api/state?player=lee&protocol=money")
        assert got == 200 and state["n_played"] == 3 and state["truncation"]["id"] == "t000004"
        assert state["seconds"] == pytest.approx(0.75)  # the journal's, after the restart
        acknowledged.append(_bet_next(server))
        # real kills, at random moments while bets are being made
        rng = random.Random(37)
        cut_short = 0
        for _ in range(6):
            stop = threading.Event()
            done: list[str] = []

            def bettor(srv=server, out=done, halt=stop):
                while not halt.is_set():
                    try:
                        out.append(_bet_next(srv))
                    except Exception:  # noqa: BLE001 (the server died mid-request)
                        return

            thread = threading.Thread(target=bettor)
            thread.start()
            time.sleep(rng.uniform(0.05, 0.4))
            server.kill()
            stop.set()
            thread.join(timeout=60)
            acknowledged += done
            server = Play(folder, "--player", "lee", "--protocol", "money")
            cut_short += len(server.before)
        print(f"{len(acknowledged)} bets acknowledged over 7 kills; {cut_short} file(s) "
              f"repaired after the real kills")
        got, state = server.get("/api/state?player=lee&protocol=money")
        lines = [json.loads(x) for x in bets.read_text(encoding="utf-8").splitlines()]
        ids = [r["id"] for r in lines]
        # every acknowledged bet kept (a bet written but killed before its answer is kept too:
        # its line was whole), each truncation once, in order, none lost between
        assert ids == list(long_campaign.ids[:len(ids)])
        assert set(acknowledged) <= set(ids) and len(ids) - len(acknowledged) <= 7
        assert got == 200 and state["n_played"] == len(ids)
        acknowledged.append(_bet_next(server))
    finally:
        server.stop()
    from fairppl.shannon.campaign import read_submission, score_submission

    ids = [json.loads(x)["id"] for x in bets.read_text(encoding="utf-8").splitlines()]
    scored = score_submission(long_campaign.subset(ids),
                              *read_submission(bets, long_campaign, only=ids))
    assert scored["n_flagged"] == 0 and scored["perplexity"] == pytest.approx(2.0, rel=1e-12)


def test_the_config_check_refuses_a_cut_or_damaged_player_file(campaign):
    """shannon.players is checked at start-up (common.smk calls check_players after
    check_shannon) as the server checks the files."""
    import yaml

    tests_config = Path(__file__).resolve().parents[1] / "config" / "config.yaml"
    config = yaml.safe_load(tests_config.read_text())
    assert config["shannon"]["corpora"]  # the test study plays the game
    game = _played(campaign)
    config["shannon"]["players"] = [{"campaign": str(campaign.folder), "player": "gil",
                                     "protocol": "money"}]
    check_players(config["shannon"]["players"], "config.yaml")
    with game.files.bets.open("ab") as handle:
        handle.write(b'{"id": "t0000')
    with pytest.raises(InputError, match=r"money.jsonl, line 4: the last line is cut short"):
        check_players(config["shannon"]["players"], "config.yaml")
    lines = game.files.bets.read_text().splitlines(keepends=True)
    game.files.bets.write_text(lines[0] + lines[0] + lines[1] + lines[2])
    with pytest.raises(InputError, match=r"money.jsonl, line 2: truncation 't000001' again"):
        check_players(config["shannon"]["players"], "config.yaml")
