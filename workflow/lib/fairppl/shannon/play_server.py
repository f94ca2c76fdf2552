"""The page of ``fairppl campaign play``: a small HTTP server (standard library only) over one
campaign folder, bound to 127.0.0.1 unless told otherwise.

Only the page itself may use the API (a page of another site open in the same browser must not
bet in a person's name): each start draws a token (``secrets.token_urlsafe``) that the address
printed in the terminal carries (``http://127.0.0.1:PORT/?token=...``, as notebook servers do) and
that the page sends back in the ``X-Fairppl-Token`` header of every API call; an API request
without it, with a ``Host`` other than the server's own (``127.0.0.1:PORT``, ``localhost:PORT`` or
the bound address; a DNS name rebound to 127.0.0.1 is refused), with an ``Origin`` other than the
server's own, or marked cross-site by the browser (``Sec-Fetch-Site``) is refused with 403, and a
POST whose body is not ``application/json`` with 415, before anything is read or written. A
cross-origin ``fetch`` with JSON needs a CORS preflight (``OPTIONS``), which is refused. Bound to
every address (``--host 0.0.0.0``) any ``Host`` is taken and the token alone guards the API.

Routes (every answer JSON except the page; an error is ``{"error": message}`` with its status):

* ``GET /``: the page (``play_page.html``).
* ``GET /api/campaign``: what the page needs before the first bet: language, direction, the unit of
  the game, m, the vocabulary words (for completion), the protocols offered and their settings,
  the fixed player if any.
* ``GET /api/state?player=P&protocol=X``: progress and the next truncation (never its answer).
* ``POST /api/bet`` (list, money) and ``POST /api/guess`` (rank), body
  ``{"player", "protocol", "id", ...}``: the bet is checked, appended to the player's file, and
  the answer comes back (:class:`fairppl.shannon.play.Game`).
* ``GET /api/results?player=P&protocol=X``: the player's score on the truncations played and,
  on exactly those, the models' (bets files in ``<campaign>/models/``, made with
  ``fairppl campaign bets``).

Nothing else is served: a path that leaves the page's routes (``..``, an encoded slash, a file
name) is refused (403 for a path outside, 404 for an unknown route), so the key and the players'
files never leave the folder through the server.
"""

from __future__ import annotations

import hmac
import json
import math
import secrets
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

from ..core.errors import InputError
from .campaign_folder import Campaign
from .play import (Game, PlayError, PlaySettings, check_player, check_player_files,
                   player_name_problem, repair, rtl)
from .scoring import score_bets_as_ranks, score_submission
from .submission import BETS, read_submission

PAGE = Path(__file__).with_name("play_page.html")
MODELS = "models"
#: The longest request body accepted (a bet is a few hundred bytes).
MAX_BODY = 64 * 1024
#: The header in which the page sends the server's token back.
TOKEN_HEADER = "X-Fairppl-Token"
#: Addresses that listen on every interface: any Host is taken there (the token guards).
WILDCARD_HOSTS = ("0.0.0.0", "::", "")
#: What the page says the unit of the game is, per campaign unit.
UNIT_TEXT = {
    "word": "a word: what lies between two spaces of the verse, punctuation attached "
            "(\u201csaid,\u201d and \u201csaid\u201d are different words)",
    "char": "a character: this language is written without spaces between words, so each "
            "character (punctuation included) is one step of the game",
}


def model_files(campaign: Campaign) -> list[tuple[str, Path]]:
    """The models' bets files of a campaign: ``<campaign>/models/<name>.jsonl``, with the label
    of ``<name>.json`` (``{"label": ...}``) where it exists, else the name."""
    folder = Path(campaign.folder) / MODELS
    out = []
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        label = path.stem
        side = path.with_suffix(".json")
        if side.is_file():
            try:
                label = json.loads(side.read_text(encoding="utf-8")).get("label") or label
            except (ValueError, AttributeError):
                pass
        out.append((label, path))
    return out


def reference_texts(campaign: Campaign, root: str | Path, language: str) -> dict:
    """unit id -> the text of the same unit in ``language`` (the multi-text's reference verse)
    for the campaign's units, from the study's units under ``root``; a language without units
    there raises InputError naming the languages it has."""
    from ..core.io import read_parquet

    path = Path(root) / "results" / "corpus" / campaign.settings["corpus"] / "units.parquet"
    frame = read_parquet(path, columns=["unit_id", "language", "text"])
    part = frame.filter(frame["language"] == language)
    if part.height == 0:
        have = ", ".join(sorted(set(frame["language"].to_list())))
        raise InputError(f"--reference {language}: no units of that language; expected one of "
                         f"{have}", path=str(path))
    texts = dict(zip(part["unit_id"].to_list(), part["text"].to_list()))
    return {u: texts[u] for u in set(campaign.unit_ids) if u in texts}


def _summary(result: dict) -> dict:
    keys = ("kind", "perplexity", "interval", "interval_note", "n_scored", "n_flagged", "note",
            "entropy_lower_bits", "entropy_upper_bits", "perplexity_lower", "perplexity_upper",
            "rank_bounds_valid", "rank_bounds_note", "list_length", "n_units_scored",
            "rank_values_kind", "entropy_upper_mm_bits", "entropy_upper_bound_bits",
            "once_seen_share", "rank_places", "n_tied_records")
    out = {k: result.get(k) for k in keys if k in result}
    for key, value in list(out.items()):
        if isinstance(value, float) and not math.isfinite(value):
            out[key] = None
    return out


def _rank_cap(summary: dict, n: int, m: int, perplexity: float | None = None) -> dict:
    """The rank values of ``summary`` as ordered ranges (Shannon's "lower" value exceeds his
    "upper" one when the values are not bounds), whether the upper value sits at the most the
    sample allows, log2 of the places its ranks can fill (the n truncations ranked, or with
    ties spread the places they share, at most m), below log2 m: with few truncations that value
    says more about n than about the predictor; and, given the predictor's own gambling
    ``perplexity`` on the same truncations, whether the lower value lies above it
    (``lower_above_perplexity``) or it above the upper value (``perplexity_above_upper``)."""
    low, high = summary.get("entropy_lower_bits"), summary.get("entropy_upper_bits")
    if low is None or high is None:
        return summary
    places = min(summary.get("rank_places") or n, m)
    cap = math.log2(places) if places > 0 else 0.0
    capped = bool(high >= cap - 1e-9 and cap < math.log2(m) - 1e-9)
    out = summary | {
        "entropy_range_bits": sorted([low, high]),
        "perplexity_range": sorted([2.0 ** low, 2.0 ** high]),
        "cap_bits": cap, "n_ranked": n,
        "upper_at_cap": capped,
        "cap_note": (f"the upper value is log2 {places} = {cap:.2f} bits, the most that {n} "
                     f"rank frequencies can give: play more truncations for it to say more "
                     f"than how many were played") if capped else None}
    if perplexity is not None and math.isfinite(perplexity):
        out["lower_above_perplexity"] = bool(2.0 ** low > perplexity * (1 + 1e-12))
        out["perplexity_above_upper"] = bool(perplexity > 2.0 ** high * (1 + 1e-12))
    return out


def compare(campaign: Campaign, bets: Path, protocol: str) -> dict:
    """A player's score on the truncations their file gives and, on exactly those, every
    model's of ``<campaign>/models/`` (for the rank protocol also the models' rank values from
    their bets, ties spread over their places, :func:`.scoring.score_bets_as_ranks`)."""
    from .play import played_ids

    played = played_ids(Path(bets), campaign.position())
    out = {"n_played": len(played), "n_truncations": len(campaign.ids), "models": []}
    if not played:
        out["note"] = "nothing played yet"
        return out
    sub = campaign.subset(played)
    records, flags = read_submission(bets, campaign, only=played)
    out["player_score"] = _summary(score_submission(sub, records, flags))
    if protocol == "rank":
        out["player_score"] = _rank_cap(out["player_score"], len(played), campaign.m)
    for label, path in model_files(campaign):
        try:
            m_records, m_flags = read_submission(path, campaign, only=played)
        except InputError as err:
            out["models"].append({"label": label, "file": path.name, "error": str(err)})
            continue
        row = {"label": label, "file": path.name}
        scored = score_submission(sub, m_records, m_flags)
        row |= _summary(scored)
        if protocol == "rank" and scored.get("kind") == BETS and m_records:
            # ties spread over their places: the file's order of equal bets is no ranking
            row["ranks"] = _rank_cap(_summary(score_bets_as_ranks(sub, m_records)),
                                     len(played), campaign.m, scored.get("perplexity"))
        out["models"].append(row)
    return out


def results(game: Game) -> dict:
    """The results view: who played what, and :func:`compare`."""
    return {"player": game.player, "player_kind": game.kind,
            "protocol": game.settings.protocol, "settings": game.settings.recorded()} | \
        compare(game.campaign, game.files.bets, game.settings.protocol)


class PlayServer:
    """The state behind the page: one campaign, the games of its players (created on demand,
    one per player and protocol), the optional fixed player and protocol, and the token the
    page must send back.

    Made in two steps, so that a refused start leaves nothing behind: the constructor checks
    everything and writes nothing (the settings, and every existing player's files of the
    protocols served, :func:`fairppl.shannon.play.check_player_files`: InputError for damage);
    :meth:`open`, once the port is bound, repairs the cut last lines found and creates the fixed
    player's folder and lock file. ``notices`` says what was repaired (the terminal and the page
    show it)."""

    def __init__(self, campaign: Campaign, settings: dict[str, PlaySettings], *,
                 player: str | None = None, kind: str = "person",
                 references: dict | None = None, reference_language: str | None = None):
        self.campaign, self.settings = campaign, settings
        self.player = None if player is None else check_player(player)
        self.kind, self.references = kind, references or {}
        self.reference_language = reference_language
        self.token = secrets.token_urlsafe(24)
        self.notices: list[dict] = []
        for s in settings.values():
            s.check(campaign.m)
        self._games: dict[tuple[str, str], Game] = {}
        self._lock = threading.Lock()
        folder = Path(campaign.folder) / "players"
        players = [self.player] if self.player is not None else sorted(
            p.name for p in folder.iterdir() if p.is_dir() and not player_name_problem(p.name)
        ) if folder.is_dir() else []
        self._repairs = [(name, protocol, cut) for name in players for protocol in settings
                         for cut in check_player_files(campaign, name, protocol)]
        if self.player is not None:  # refuse a player's earlier other settings at start-up
            for protocol in settings:
                self._games[(self.player, protocol)] = Game(
                    campaign, self.player, settings[protocol], kind, self.references,
                    opened=False)

    def open(self) -> list[dict]:
        """Repair the cut last lines found at start-up and create the fixed player's files;
        returns the notices (one per repaired file)."""
        for name, protocol, cut in self._repairs:
            try:
                moved = repair(cut)
            except OSError as err:
                raise InputError(f"cannot repair the cut last line ({err.strerror or err}): "
                                 f"expected a folder this user can write",
                                 path=str(cut.path)) from None
            self.notices.append({"player": name, "protocol": protocol, "file": str(cut.path),
                                 "torn_file": str(moved), "message": cut.message(moved)})
        self._repairs = []
        for game in self._games.values():
            game.open()
        return self.notices

    def game(self, player, protocol) -> Game:
        player = check_player(player)
        if self.player is not None and player != self.player:
            raise PlayError(f"player {player!r}: this server plays {self.player!r} only "
                            f"(--player)", 403)
        if protocol not in self.settings:
            raise PlayError(f"protocol {protocol!r}: expected one of "
                            f"{', '.join(self.settings)}")
        with self._lock:
            key = (player, protocol)
            if key not in self._games:
                try:
                    self._games[key] = Game(self.campaign, player, self.settings[protocol],
                                            self.kind, self.references)
                except InputError as err:
                    raise PlayError(str(err), 409) from None
            return self._games[key]

    def campaign_info(self) -> dict:
        meta = self.campaign.settings
        unit = meta.get("unit", "word")
        return {"corpus": meta.get("corpus"), "language": meta.get("language"),
                "split": meta.get("split"), "unit": unit,
                "unit_text": UNIT_TEXT.get(unit, unit),
                "direction": "rtl" if rtl(meta.get("language", "")) else "ltr",
                "m": self.campaign.m, "n_truncations": len(self.campaign.ids),
                "words": list(self.campaign.outcomes.words),
                "protocols": {p: s.recorded() for p, s in self.settings.items()},
                "player": self.player, "player_kind": self.kind,
                "reference_language": self.reference_language,
                "models": [label for label, _ in model_files(self.campaign)],
                "notices": self.notices}


def page_url(httpd: ThreadingHTTPServer, state: PlayServer, **query: str) -> str:
    """The page's address with the token (and ``query``: player, protocol)."""
    host, port = httpd.server_address[:2]
    shown = "127.0.0.1" if host in WILDCARD_HOSTS else host
    params = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in
                      {"token": state.token, **query}.items())
    return f"http://{shown}:{port}/?{params}"


def _handler(server_state: PlayServer):
    page = PAGE.read_bytes()

    class Handler(BaseHTTPRequestHandler):
        server_version = "fairppl-play"

        def log_message(self, fmt, *args):  # quiet: the terminal shows the progress line
            pass

        def _send(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, obj) -> None:
            body = json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf-8")
            self._send(status, body, "application/json; charset=utf-8")

        def _error(self, status: int, message: str) -> None:
            self._json(status, {"error": message})

        def _refused(self, api: bool) -> str | None:
            """Why this request does not come from the server's own page (None: it does)."""
            bound, port = self.server.server_address[:2]
            host = self.headers.get("Host") or ""
            own = {f"127.0.0.1:{port}", f"localhost:{port}", f"{bound}:{port}"}
            if bound not in WILDCARD_HOSTS and host.lower() not in own:
                return (f"Host {host!r}: expected this server's own address "
                        f"(127.0.0.1:{port} or localhost:{port})")
            origin = self.headers.get("Origin")
            if origin is not None and origin.lower() != f"http://{host.lower()}":
                return (f"a request from the page of another site ({origin}): expected "
                        f"requests from this server's own page only")
            if not api:
                return None
            site = self.headers.get("Sec-Fetch-Site")
            if site is not None and site not in ("same-origin", "none"):
                return (f"a {site} request: expected requests from this server's own page "
                        f"only")
            token = self.headers.get(TOKEN_HEADER) or ""
            if not hmac.compare_digest(token.encode("utf-8", "replace"),
                                       server_state.token.encode("utf-8")):
                return (f"{'a wrong' if token else 'no'} {TOKEN_HEADER}: expected the token of "
                        f"the address this server printed at start-up (open that address)")
            return None

        def _route(self) -> tuple[str, dict] | None:
            parts = urlsplit(self.path)
            raw = parts.path
            decoded = unquote(raw)
            if ".." in decoded.split("/") or "\\" in decoded or "%2f" in raw.lower() \
                    or "%5c" in raw.lower():
                self._error(403, f"path {decoded!r}: outside the campaign's page; refused")
                return None
            return decoded, {k: v[-1] for k, v in parse_qs(parts.query).items()}

        def _game(self, params: dict) -> Game:
            return server_state.game(params.get("player") or server_state.player,
                                     params.get("protocol"))

        def do_GET(self):  # noqa: N802 (the standard library's name)
            route = self._route()
            if route is None:
                return
            path, params = route
            why = self._refused(api=path not in ("/", "/index.html"))
            if why:
                self._error(403, why)
                return
            try:
                if path in ("/", "/index.html"):
                    self._send(200, page, "text/html; charset=utf-8")
                elif path == "/api/campaign":
                    self._json(200, server_state.campaign_info())
                elif path == "/api/state":
                    self._json(200, self._game(params).state())
                elif path == "/api/results":
                    self._json(200, results(self._game(params)))
                else:
                    self._error(404, f"no such page {path!r}: the game has / and /api/...")
            except PlayError as err:
                self._error(err.status, str(err))
            except Exception as err:  # noqa: BLE001 (the page gets the reason, not a cut line)
                self._failed(err)

        def _failed(self, err: Exception) -> None:
            """A request that failed in the server: the message to the page and the terminal."""
            message = str(err) if isinstance(err, InputError) else \
                f"the server failed ({type(err).__name__}: {err})"
            print(f"error: {message}", file=sys.stderr, flush=True)
            self._error(409 if isinstance(err, InputError) else 500, message)

        def do_OPTIONS(self):  # noqa: N802 (a CORS preflight: the page itself never sends one)
            self._error(403, "a cross-origin request (CORS preflight): expected requests from "
                             "this server's own page only")

        def do_PUT(self):  # noqa: N802
            self._error(405, "expected GET or POST")

        do_DELETE = do_PATCH = do_PUT

        def do_POST(self):  # noqa: N802
            route = self._route()
            if route is None:
                return
            path, _ = route
            why = self._refused(api=True)
            if why:
                self._error(403, why)
                return
            if path not in ("/api/bet", "/api/guess"):
                self._error(404, f"no such action {path!r}: expected /api/bet or /api/guess")
                return
            kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if kind != "application/json":
                self._error(415, f"Content-Type {kind or 'none'!r}: expected application/json")
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if length < 0 or length > MAX_BODY:
                self._error(413, f"a body of {length} bytes: expected at most {MAX_BODY}")
                return
            raw = self.rfile.read(length)
            try:
                request = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as err:
                self._error(400, f"not JSON ({err}): expected a JSON object")
                return
            if not isinstance(request, dict):
                self._error(400, "expected a JSON object")
                return
            try:
                game = self._game(request)
                action = game.bet if path == "/api/bet" else game.guess
                self._json(200, action(request))
            except PlayError as err:
                self._error(err.status, str(err))
            except Exception as err:  # noqa: BLE001
                self._failed(err)

    return Handler


def serve(state: PlayServer, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """A server bound to ``host:port`` (port 0: any free port), not yet serving, with ``state``
    opened (:meth:`PlayServer.open`). InputError when the port cannot be had (in use, or
    reserved), before anything is written."""
    if not PAGE.is_file():
        raise InputError("the page is missing from the installation: expected "
                         "play_page.html beside play_server.py", path=str(PAGE))
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InputError(f"--port {port!r}: expected a port number from 1 to 65535 (0: any "
                         f"free port)")
    try:
        httpd = ThreadingHTTPServer((host, port), _handler(state))
    except socket.gaierror as err:
        raise InputError(f"--host {host}: not an address ({err.strerror or err}): expected an "
                         f"IPv4 address of this machine (127.0.0.1, or 0.0.0.0 for every "
                         f"one)") from None
    except OSError as err:
        raise InputError(f"--port {port}: cannot listen on {host}:{port} ({err.strerror or err}):"
                         f" expected a free port; pick another with --port (0: any free "
                         f"port)") from None
    httpd.daemon_threads = True
    try:
        state.open()
    except BaseException:
        httpd.server_close()
        raise
    return httpd
