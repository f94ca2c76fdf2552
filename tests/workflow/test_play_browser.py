"""People in the Shannon game (issue 28): `fairppl campaign play` driven in headless Chromium by
keyboard, as a person would play it, with a scripted player (recorded and shown as such).

The campaigns are real: Bible verses of John (KJV, Smith & Van Dyke, the Chinese Union Version)
read from the installed corpus package, the outcomes from the other verses of the book. The
scripted player knows the key and bets what the test can score by hand: in the money protocol 50
coins of 100 on the correct outcome every time, so `fairppl campaign score` must give exactly 2;
in the list protocol one guess (bet 0.9) or a wrong one then the answer (0.6 and 0.3); in the
rank protocol a wrong guess then the answer (rank 2). Mid-way the page is reloaded and the
server is killed (SIGKILL) and restarted: the game resumes at the next truncation, the pending
wrong guess of the rank protocol included, and no line is lost or written twice.

Screenshots of each protocol in Arabic (right to left) and Chinese (characters, no spaces) go to
$FAIRPPL_SCREENSHOTS when set (else the test's temporary folder), to be looked at.

Issue 37: a page of another origin open beside the game (a local http.server on another port)
posts bets the ways a forgery can (fetch no-cors with text/plain, a form, a JSON fetch that needs
a CORS preflight) and nothing reaches the player's file; `<unk>` and `</s>` keep their shape in
an Arabic list; the seconds of a bet count only while the tab is visible and survive a restart;
"2.5" coins, a refused name and a stopped server get a message on the page; a Cyrillic name
plays.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

#: End to end: a real browser against the real server (no Snakemake, but no unit test either).
pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
#: John 10:30 and 11:35 (in corpus order): short verses, the same units in every language.
UNITS = ("43.010.030", "43.011.035")
SOURCES = {"eng": "k", "ara": "y", "zho": "c"}
VOCAB = 200


def _chromium() -> str | None:
    for name in (os.environ.get("FAIRPPL_CHROMIUM"), "chromium", "chromium-browser",
                 "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    exe = _chromium()
    if exe is None:
        pytest.skip("no Chromium (Debian: apt-get install chromium; or FAIRPPL_CHROMIUM=path)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory, resources_ready):
    """Campaign folders of eng, ara (words) and zho (characters) over UNITS, with the eq. 7
    bigram's bets in models/, and the English text of each unit (the reference)."""
    from fairppl.core.text import normalize
    from fairppl.corpus.readers import read_bible_db
    from fairppl.shannon.bettors import campaign_bets
    from fairppl.shannon.bigram import train_bettor
    from fairppl.shannon.campaign import make_truncations, read_campaign, write_bets, \
        write_campaign
    from fairppl.shannon.campaign_folder import TRUNCATIONS, jsonl_records
    from fairppl.shannon.outcomes import build_outcomes, spaced

    texts = read_bible_db(str(resources_ready["FAIRPPL_BIBLE_DB"]), SOURCES, books=[43])
    base = tmp_path_factory.mktemp("play")
    out = {}
    for lang, verses in texts.items():
        verses = [(u, normalize(t)) for u, t in verses]
        unit = "char" if lang == "zho" else "word"
        train = [t for u, t in verses if u not in UNITS]
        outcomes = build_outcomes(train, VOCAB, unit=unit)
        test = [(u, t) for u, t in verses if u in UNITS]
        folder = base / lang
        write_campaign(folder, make_truncations(test, outcomes, "exhaustive", unit=unit),
                       outcomes, {"corpus": "bible", "language": lang, "split": "test",
                                  "protocol": "exhaustive", "n": None, "seed": 0,
                                  "vocab_size": VOCAB, "vocabulary_corpus": "bible",
                                  "unit": unit})
        campaign = read_campaign(folder)
        # the bigram over words, or over characters (each a "word" of the spaced text)
        bettor, _ = train_bettor([spaced(t, unit) for t in train], [], outcomes, (0.5,), 0.5)
        contexts = [(t["id"], spaced(t["context"], unit)) for t in jsonl_records(
            folder / TRUNCATIONS, ("id", "unit_id", "context"), "truncations")]
        (folder / "models").mkdir()
        write_bets(folder / "models" / "bigram.jsonl",
                   campaign_bets(bettor, contexts, outcomes, None))
        (folder / "models" / "bigram.json").write_text(
            json.dumps({"label": "bigram, eq. 7 (alpha 0.5)"}), encoding="utf-8")
        out[lang] = folder
    english = dict(texts["eng"])
    return out, {u: normalize(english[u]) for u in UNITS}


def _key(folder: Path) -> list[dict]:
    """The truncations with their answers: id, context, outcome, and the word as typed."""
    truncs = [json.loads(line) for line in (folder / "truncations.jsonl").open(encoding="utf-8")]
    key = [json.loads(line) for line in (folder / "key.jsonl").open(encoding="utf-8")]
    rows = []
    for i, (t, k) in enumerate(zip(truncs, key)):
        word = k["word"]
        if word == "<unk>":  # the word itself: what the next context adds
            word = truncs[i + 1]["context"][len(t["context"]):].strip()
        rows.append({"id": t["id"], "outcome": k["word"], "typed": word})
    return rows


def _wrong(outcomes_words: list[str], answer: str) -> str:
    """A vocabulary word that is not the answer."""
    return next(w for w in outcomes_words if w != answer)


class Server:
    """`fairppl campaign play` as a subprocess on a free port (so it can be killed)."""

    def __init__(self, folder: Path, *args: str):
        self.folder, self.args = folder, args
        self.start()

    def start(self):
        self.proc = subprocess.Popen(
            [str(VENV_BIN / "fairppl"), "campaign", "play", str(self.folder), "--port", "0",
             *self.args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.before = []
        for line in self.proc.stdout:  # the repairs, if any, then the address with the token
            if line.startswith("serving "):
                break
            self.before.append(line)
        assert " at http://127.0.0.1:" in line, "".join(self.before) + line
        self.url = line.split(" at ")[1].split(" ")[0]  # http://127.0.0.1:PORT/?token=...
        self.port = int(self.url.split(":")[2].split("/")[0])

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


def _type_and_enter(page, text: str):
    page.keyboard.type(text)
    page.keyboard.press("Enter")


def _wait_progress(page, n: int, total: int):
    page.wait_for_function(
        f"document.getElementById('progress').textContent.startsWith('{n} of {total}')")


def _next(page):
    """Wait for the answer after a bet (failing with the page's error message if it refused
    the bet), then Enter for the next truncation."""
    page.wait_for_function("!document.getElementById('feedback').classList.contains('hidden')"
                           " || document.getElementById('error').textContent.length > 0")
    assert page.inner_text("#error") == ""
    page.keyboard.press("Enter")


def test_a_scripted_player_plays_every_protocol_by_keyboard(browser, campaigns, tmp_path):
    folders, _ = campaigns
    folder = folders["eng"]
    rows = _key(folder)
    n = len(rows)
    words = (folder / "vocabulary.txt").read_text(encoding="utf-8").split("\n")[:-3]
    server = Server(folder, "--scripted")
    page = browser.new_page()
    try:
        # ---- the list protocol, from the start screen: name, Enter, 1
        page.goto(server.url)
        page.wait_for_selector("#player-name")
        _type_and_enter(page, "scripted-1")
        page.keyboard.press("1")
        _wait_progress(page, 1, n)
        assert "scripted player, not a person" in page.inner_text("#who")
        expected_list = []
        for i, row in enumerate(rows):
            if i == 3:  # a reload mid-way resumes at the next truncation
                page.reload()
                _wait_progress(page, 4, n)
            _wait_progress(page, i + 1, n)
            if i % 2:
                wrong = _wait_and_type_wrong(page, words, row)
                guesses = [wrong, row["typed"]]
            else:
                guesses = [row["typed"]]
            _type_and_enter(page, row["typed"])
            page.keyboard.press("Enter")  # Enter on the empty box: the bet
            _next(page)
            bets = [0.9] if len(guesses) == 1 else [0.6, 0.3]
            outcomes = [w if w in words or w == "</s>" else "<unk>" for w in guesses]
            expected_list.append({"id": row["id"], "bets": dict(zip(outcomes, bets))})
        page.wait_for_selector("#results:not(.hidden)")
        page.screenshot(path=str(_shots(tmp_path) / "play-eng-results-list.png"), full_page=True)
        lines = _lines(folder / "players" / "scripted-1" / "list.jsonl")
        assert len(lines) == n
        for got, want in zip(lines, expected_list):
            assert got["id"] == want["id"]
            assert got["bets"] == pytest.approx(want["bets"], rel=1e-12)
        _check_results_view(page, folder, "scripted-1", "list", n)

        # ---- the money protocol: 50 of 100 coins on the answer, every time -> perplexity 2
        page.goto(server.url + "&player=scripted-1&protocol=money")
        for i, row in enumerate(rows):
            _wait_progress(page, i + 1, n)
            if i == 1:  # completion: the first letters and Tab give the vocabulary word
                first = next((w for w in words if len(w) > 3 and w != row["typed"]), None)
                page.keyboard.type(first[:3])
                page.wait_for_selector("#completion:not(.hidden)")
                page.keyboard.press("Tab")
                assert page.input_value("#guess").startswith(first[:3])
                page.keyboard.press("Escape")
            _type_and_enter(page, row["typed"])
            _type_and_enter(page, "50")
            page.keyboard.press("Enter")
            _next(page)
        page.wait_for_selector("#results:not(.hidden)")
        money = folder / "players" / "scripted-1" / "money.jsonl"
        assert [json.loads(line) for line in money.open(encoding="utf-8")] == [
            {"id": r["id"], "bets": {r["outcome"]: 0.5}} for r in rows]
        scored = _score_cli(folder, money)
        assert scored["perplexity"] == pytest.approx(2.0, rel=1e-12)
        assert scored["n_scored"] == n and scored["n_flagged"] == 0

        # ---- the rank protocol: a wrong guess, then the answer; the server killed mid-way
        page.goto(server.url + "&player=scripted-1&protocol=rank")
        for i, row in enumerate(rows):
            _wait_progress(page, i + 1, n)
            _wait_and_type_wrong(page, words, row)
            page.wait_for_function("document.querySelectorAll('#guesses li.wrong').length == 1")
            if i == 2:
                server.kill()
                server.start()
                page.goto(server.url + "&player=scripted-1&protocol=rank")
                _wait_progress(page, 3, n)
                # the wrong guess made before the kill is still there
                page.wait_for_function(
                    "document.querySelectorAll('#guesses li.wrong').length == 1")
            _type_and_enter(page, row["typed"])
            _next(page)
        page.wait_for_selector("#results:not(.hidden)")
        page.screenshot(path=str(_shots(tmp_path) / "play-eng-results-rank.png"), full_page=True)
        # every answer at rank 2: Shannon's lower value (2 bits) above his upper one (0 bits);
        # the page shows the range low to high and says they are values, not bounds
        you = page.inner_text("#results tr.you")
        assert "0.00 – 2.00" in you and "lower value is the higher here" in you
        ranks = _lines(folder / "players" / "scripted-1" / "rank.jsonl")
        assert [r["id"] for r in ranks] == [r["id"] for r in rows]
        for got, row in zip(ranks, rows):
            assert got["ranking"][1] == row["outcome"] and got["ranking"][0] != row["outcome"]
        scored = _score(folder, folder / "players" / "scripted-1" / "rank.jsonl")
        # every answer at rank 2, every rank known (l = m): q = (0, 1, 0, ...), so Shannon's
        # upper value is 0 bits and the lower 2 log2 2 = 2 bits (rising frequencies: values)
        assert scored["list_length"] == scored["m"]
        assert scored["entropy_upper_bits"] == pytest.approx(0.0, abs=1e-12)
        assert scored["entropy_lower_bits"] == pytest.approx(2.0, rel=1e-12)
        assert scored["rank_bounds_valid"] is False

        # ---- malformed requests change no file; paths outside are refused
        before = {p.name: p.read_bytes() for p in (folder / "players" / "scripted-1").iterdir()}
        for body in ('{"player": "scripted-1", "protocol": "money", "id": "t000001", '
                     '"stakes": [["the", 100]]}', "not json",
                     '{"player": "../../etc", "protocol": "list", "id": "t000001"}'):
            status, answer = _post(server, "/api/bet", body)
            assert status in (400, 409) and answer["error"]
        status, _ = _get_raw(server.url, "/../key.jsonl")
        assert status == 403
        status, _ = _get_raw(server.url, "/key.jsonl")
        assert status == 403  # no token
        status, _ = _get_raw(server.url, "/key.jsonl", server.url.split("token=")[1])
        assert status == 404
        after = {p.name: p.read_bytes() for p in (folder / "players" / "scripted-1").iterdir()}
        assert after == before
    finally:
        page.close()
        server.stop()


def _shots(default: Path) -> Path:
    shots = Path(os.environ.get("FAIRPPL_SCREENSHOTS") or default / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    return shots


def _wait_and_type_wrong(page, words, row) -> str:
    wrong = _wrong(words, row["outcome"])
    _type_and_enter(page, wrong)
    return wrong


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _score(folder: Path, bets: Path) -> dict:
    """The library's score of a bets file (what `fairppl campaign score --json` prints)."""
    from fairppl.shannon.campaign import read_campaign, read_submission, score_submission

    campaign = read_campaign(folder)
    return score_submission(campaign, *read_submission(bets, campaign))


def _score_cli(folder: Path, bets: Path) -> dict:
    proc = subprocess.run([str(VENV_BIN / "fairppl"), "campaign", "score", str(folder),
                           str(bets), "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def _post(server: Server, path: str, body: str):
    import urllib.error
    import urllib.request

    token = server.url.split("token=")[1]
    req = urllib.request.Request(f"http://127.0.0.1:{server.port}{path}", data=body.encode(),
                                 method="POST", headers={"Content-Type": "application/json",
                                                         "X-Fairppl-Token": token})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _get_raw(url: str, path: str, token: str | None = None):
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.request("GET", path, headers={"X-Fairppl-Token": token} if token else {})
    r = conn.getresponse()
    return r.status, r.read()


def _check_results_view(page, folder: Path, player: str, protocol: str, n: int):
    """The results view shows the player's perplexity and the bigram's on the same truncations,
    as `fairppl campaign score` computes them."""
    text = page.inner_text("#results")
    assert f"On the {n} of {n} truncations played" in text
    assert "scripted player, not a person" in text
    person = _score(folder, folder / "players" / player / f"{protocol}.jsonl")
    model = _score(folder, folder / "models" / "bigram.jsonl")
    rows = {r.split("\t")[0]: r.split("\t") for r in text.splitlines() if "\t" in r}
    assert float(rows[player][1]) == pytest.approx(person["perplexity"], abs=0.05)
    assert float(rows["bigram, eq. 7 (alpha 0.5)"][1]) == pytest.approx(model["perplexity"],
                                                                         abs=0.05)


@pytest.mark.parametrize("language", ["ara", "zho"])
def test_scripts_render_and_screenshots_of_each_protocol(browser, campaigns, language):
    """Arabic is laid out right to left, Chinese plays characters (the page says so); a
    screenshot of every protocol mid-bet."""
    from fairppl.shannon.campaign import read_campaign
    from fairppl.shannon.play import PLAY_PROTOCOLS, PlaySettings
    from fairppl.shannon.play_server import PlayServer, page_url, serve

    folders, english = campaigns
    folder = folders[language]
    campaign = read_campaign(folder)
    state = PlayServer(campaign, {p: PlaySettings(p) for p in PLAY_PROTOCOLS},
                       kind="scripted", references=english, reference_language="eng")
    httpd = serve(state, port=0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    url = page_url(httpd, state)
    shots = _shots(folder)
    rows = _key(folder)
    page = browser.new_page(viewport={"width": 1100, "height": 760})
    try:
        for protocol in PLAY_PROTOCOLS:
            page.goto(url + f"&player=script-{language}&protocol={protocol}")
            _wait_progress(page, 1, len(rows))
            assert page.get_attribute("#context", "dir") == ("rtl" if language == "ara"
                                                             else "ltr")
            unit_text = page.inner_text("#unit-text")
            assert ("a character" in unit_text) == (language == "zho")
            # one bet on the answer, then a partly typed guess with its completions
            for row in rows[:2]:
                _type_and_enter(page, row["typed"])
                if protocol == "money":
                    _type_and_enter(page, "40")
                if protocol != "rank":
                    page.keyboard.press("Enter")
                _next(page)
            _wait_progress(page, 3, len(rows))
            context = page.inner_text("#context").strip()
            joined = "" if language == "zho" else " "
            assert context == joined.join(r["typed"] for r in rows[:2]).strip()
            page.keyboard.type(rows[2]["typed"][:1])
            page.wait_for_selector("#completion:not(.hidden)")
            page.screenshot(path=str(shots / f"play-{language}-{protocol}.png"), full_page=True)
            assert page.inner_text("#reference").startswith("eng: ")
    finally:
        page.close()
        httpd.shutdown()
        httpd.server_close()


# ------------------------------------------------------------------ issue 37


EVIL_PAGE = """<!DOCTYPE html><html><body><iframe name="sink"></iframe>
<form id="form" method="POST" enctype="text/plain" target="sink" action="TARGET/api/bet">
<input name='{"player": "victim", "protocol": "money", "id": "ID", "x": "' value='"}'></form>
<script>
const target = "TARGET", ids = IDS, results = {nocors: 0, json: [], read: []};
async function forge() {
  for (let k = 0; k < 58; k++) {  // the issue's 58 no-cors posts
    const body = JSON.stringify({player: "victim", protocol: "money", id: ids[k % ids.length],
                                 stakes: [["the", 50]]});
    try { await fetch(target + "/api/bet", {method: "POST", mode: "no-cors",
                                             headers: {"Content-Type": "text/plain"}, body});
          results.nocors++; } catch (e) {}
  }
  const body = JSON.stringify({player: "victim", protocol: "money", id: ids[0],
                               stakes: [["the", 50]]});
  try { const r = await fetch(target + "/api/bet", {method: "POST", body,
                                                   headers: {"Content-Type": "application/json"}});
        results.json.push("answered " + r.status); }
  catch (e) { results.json.push("blocked: " + e.message); }
  try { const r = await fetch(target + "/api/results?player=victim&protocol=money");
        results.read.push("answered " + r.status + " " + (await r.text()).slice(0, 80)); }
  catch (e) { results.read.push("blocked: " + e.message); }
  document.getElementById("form").submit();
  await new Promise(r => setTimeout(r, 1500));
  window.done = true;
}
forge();
</script></body></html>"""


def test_a_page_of_another_origin_cannot_bet_for_the_player(browser, campaigns, tmp_path):
    """The forgery of issue 37, from a page on another loopback port open beside the game:
    nothing reaches the player's money.jsonl, and the game goes on."""
    import http.server

    folders, _ = campaigns
    folder = folders["eng"]
    rows = _key(folder)
    server = Server(folder, "--player", "victim", "--protocol", "money")
    evil = tmp_path / "evil"
    evil.mkdir()
    target = f"http://127.0.0.1:{server.port}"
    ids = json.dumps([r["id"] for r in rows[:10]])
    (evil / "index.html").write_text(EVIL_PAGE.replace("TARGET", target).replace("IDS", ids)
                                     .replace("ID", rows[1]["id"]), encoding="utf-8")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(evil), **kwargs)

        def log_message(self, *args):
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    context = browser.new_context()
    game, forger = context.new_page(), context.new_page()
    money = folder / "players" / "victim" / "money.jsonl"
    try:
        game.goto(server.url.split("?")[0])  # the address without its token: said so
        game.wait_for_selector("#boot-error")
        assert "This address has no token" in game.inner_text("#boot-error")
        game.goto(server.url)
        _wait_progress(game, 1, len(rows))
        _type_and_enter(game, rows[0]["typed"])
        _type_and_enter(game, "50")
        game.keyboard.press("Enter")
        _next(game)
        before = money.read_bytes()
        forger.goto(f"http://127.0.0.1:{other.server_address[1]}/index.html")
        forger.wait_for_function("window.done === true", timeout=60000)
        results = forger.evaluate("results")
        assert results["nocors"] == 58  # sent (opaque answers), and every one refused
        assert results["json"][0].startswith("blocked")  # the preflight stops it
        assert results["read"][0].startswith("blocked")  # no CORS: the bets cannot be read
        assert money.read_bytes() == before
        # the game itself goes on
        _wait_progress(game, 2, len(rows))
        _type_and_enter(game, rows[1]["typed"])
        _type_and_enter(game, "50")
        game.keyboard.press("Enter")
        _next(game)
        assert [json.loads(x)["id"] for x in money.read_text().splitlines()] == \
            [rows[0]["id"], rows[1]["id"]]
    finally:
        context.close()
        other.shutdown()
        other.server_close()
        server.stop()


def _glyph_lefts(page, selector: str, text: str) -> list[float]:
    """The screen x of each character of ``text`` inside the element ``selector`` (its first
    text node holding it): increasing when it reads left to right as written."""
    return page.evaluate("""([selector, text]) => {
      const walker = document.createTreeWalker(document.querySelector(selector),
                                               NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = node.data.indexOf(text);
        if (at < 0) continue;
        return [...text].map((_, i) => { const r = document.createRange();
          r.setStart(node, at + i); r.setEnd(node, at + i + 1);
          return r.getBoundingClientRect().left; });
      }
      return null; }""", [selector, text])


def _set_visibility(page, state: str):
    page.evaluate("""(state) => { Object.defineProperty(document, "visibilityState",
                                   {configurable: true, get: () => state});
                   document.dispatchEvent(new Event("visibilitychange")); }""", state)


def test_what_a_person_meets_in_arabic(browser, campaigns, tmp_path):
    """A refused name and a Cyrillic one; <unk> and </s> whole in a right-to-left list; the
    page says how to bet on the end of the verse; seconds only while the tab is visible, kept
    over a restart; 2.5 coins, a stale tab and a stopped server answered on the page."""
    import time

    folders, _ = campaigns
    folder = folders["ara"]
    rows = _key(folder)
    server = Server(folder, "--scripted")
    page = browser.new_page(viewport={"width": 1100, "height": 760})
    try:
        page.goto(server.url)
        page.wait_for_selector("#player-name")
        _type_and_enter(page, "bob smith")
        page.keyboard.press("1")
        page.wait_for_function("document.getElementById('start-error').textContent.length > 0")
        assert "holds a space" in page.inner_text("#start-error")
        assert page.is_hidden("#game") and page.is_visible("#start")
        page.fill("#player-name", "")
        page.focus("#player-name")
        _type_and_enter(page, "Алёша")
        page.keyboard.press("1")
        _wait_progress(page, 1, len(rows))
        assert "</s>" in page.inner_text("#rules") and "end of the verse" in \
            page.inner_text("#rules")
        # a word outside the vocabulary on the list, in the right-to-left verse
        _type_and_enter(page, "zzzq")
        text = page.inner_text("#guesses li")
        assert "<unk> outside the vocabulary" in text
        xs = _glyph_lefts(page, "#guesses li .tag", "<unk>")
        assert xs == sorted(xs) and len(set(xs)) == 5, xs  # "<unk>", left to right
        page.keyboard.type("<")
        page.wait_for_selector("#completion:not(.hidden)")
        xs = _glyph_lefts(page, "#completion li", "</s>")
        assert xs == sorted(xs) and len(set(xs)) == 4, xs
        page.keyboard.press("Escape")
        page.screenshot(path=str(_shots(tmp_path) / "play-ara-unk.png"), full_page=True)
        # hidden for 3 s: not counted
        _set_visibility(page, "hidden")
        time.sleep(3)
        _set_visibility(page, "visible")
        page.keyboard.press("Enter")  # the bet: zzzq
        _next(page)
        journal = folder / "players" / "Алёша" / "list.journal.jsonl"
        (first,) = [json.loads(x) for x in journal.read_text().splitlines()]
        assert first["seconds"] is not None and first["seconds"] < 2.5, first
        # a second tab bets first: the first tab gets the server's reason
        other = browser.new_page()
        other.goto(page.url)
        _wait_progress(other, 2, len(rows))
        _type_and_enter(other, rows[1]["typed"])
        other.keyboard.press("Enter")
        _next(other)
        other.close()
        _wait_progress(page, 2, len(rows))
        _type_and_enter(page, rows[1]["typed"])
        page.keyboard.press("Enter")
        page.wait_for_function("document.getElementById('error').textContent.length > 0")
        assert "already played; the next one is" in page.inner_text("#error")
        # killed while writing the third bet: the cut line is moved aside at the restart, the
        # terminal and the page say so, and the seconds of the next bet are counted and kept
        server.kill()
        bets = folder / "players" / "Алёша" / "list.jsonl"
        with bets.open("ab") as handle:
            handle.write(b'{"id": "t000003", "bets": {"<un')
        server.start()
        assert len(server.before) == 1 and "the last line was cut short" in server.before[0]
        page.goto(server.url + "&player=%D0%90%D0%BB%D1%91%D1%88%D0%B0&protocol=list")
        _wait_progress(page, 3, len(rows))
        notice = page.inner_text("#notices")
        assert "Repaired at start-up" in notice and "list.jsonl.torn-" in notice
        _type_and_enter(page, rows[2]["typed"])
        page.keyboard.press("Enter")
        _next(page)
        lines = [json.loads(x) for x in journal.read_text().splitlines()]
        assert len(lines) == 3 and all(isinstance(x["seconds"], float) for x in lines), lines
        # money: 2.5 coins refused on the page, nothing written
        page.goto(server.url + "&player=%D0%90%D0%BB%D1%91%D1%88%D0%B0&protocol=money")
        _wait_progress(page, 1, len(rows))
        _type_and_enter(page, rows[0]["typed"])
        _type_and_enter(page, "2.5")
        assert page.inner_text("#error") == "Coins: a whole number >= 1 (not 2.5)."
        assert not (folder / "players" / "Алёша" / "money.jsonl").exists()
        # a stopped server: the page says so instead of "Failed to fetch"
        page.fill("#coins", "40")
        page.focus("#coins")
        page.keyboard.press("Enter")
        server.kill()
        page.keyboard.press("Enter")
        page.wait_for_function("document.getElementById('error').textContent.length > 0")
        assert page.inner_text("#error").startswith("The server does not answer")
    finally:
        page.close()
        server.stop()
