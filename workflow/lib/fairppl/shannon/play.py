"""A person plays a campaign (``fairppl campaign play``): the game's protocols and the player's
files. :mod:`.play_server` serves it as a page; this module knows nothing of HTTP.

A person cannot give m probabilities per truncation, so each protocol turns what a person can
give into a line of the campaign format (:mod:`.submission`), scored like any site's:

* ``list``: up to ``list_max`` guesses, best first. The k listed guesses share the stake
  ``stake`` in proportion to 1/rank (b_r = stake / (r H_k), H_k the k-th harmonic number); every
  other outcome gets the floor (1 - stake) / (m - k) of the paper's eq. 6. A ``bets`` line.
* ``money``: ``coins`` coins over a few guesses; the bet on a guess is its coins / ``coins``, and
  the coins left (at least one: a word nobody bet on must not get 0) are spread over every other
  outcome by the floor. A ``bets`` line.
* ``rank``: guess until right, at most ``max_guesses`` guesses (Shannon's own experiment); the
  guesses in order are a ``ranking`` line, whose correct outcome's place is its rank (beyond the
  list after ``max_guesses`` wrong guesses). The scorer's rank values are bounds only when every
  rank is known (:func:`fairppl.shannon.scoring.score_submission`).

A typed word is its outcome: itself when it is a vocabulary word, ``<unk>`` otherwise (the page
shows which before the bet), ``</s>`` for the end of the unit. One outcome cannot be named twice
in one bet (two words outside the vocabulary are the same ``<unk>``).

Files, under ``<campaign>/players/<player>/`` (:class:`PlayerFiles`): ``<protocol>.jsonl``, the
bets or rankings in the campaign format, one line appended, flushed and synced to disk per bet
(what :func:`fairppl.shannon.campaign.read_submission` reads); ``<protocol>.settings.json``, the
protocol's settings and who plays (a person, or a scripted player: never shown as a person),
written at the first bet and checked at every start (other settings on the same file are refused:
its bets would mix two games); ``<protocol>.journal.jsonl``, per bet the words as typed and the
seconds taken (not read by the scorer); ``<protocol>.pending.json``, the rank protocol's wrong
guesses of the truncation being played (and the seconds spent on it so far), so that a reload
or a killed server resumes mid-way. A lock file serialises writers: two servers or two tabs of
one player never write the same truncation twice.

The seconds of a bet are the page's: the time the truncation was on screen with the tab visible
(``document.visibilityState``), sent with the bet and stored in the journal, so they survive a
restart of the server; a bet made without the page (a script) records ``null``.

A killed server can leave one thing behind: the last line of a ``.jsonl`` file cut short (the
kill came while it was being written). :func:`check_player_files` finds it at start-up, and
:func:`repair` keeps every whole line and moves the cut bytes to ``<file>.torn-<UTC time>`` beside
it (never overwritten); that truncation is played again (its answer was never shown). Anything
else that the game did not write (a repeated or unknown truncation, a line in the middle that is
not JSON, a bet the campaign format refuses, settings or a pending file that are not the game's)
is refused at start-up, naming the file and line: it is not repaired silently.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import time
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InputError
from ..core.io import write_text
from .campaign_folder import TRUNCATIONS, Campaign, jsonl_records
from .gambling import consistency_problem, floor_bet
from .outcomes import END_OUTCOME, UNK_OUTCOME
from .submission import BETS, RANKING, bets_problems, ranking_problems

PLAY_PROTOCOLS = ("list", "money", "rank")
#: A player's name is a folder name: 1 to 40 letters of any script (with their marks), digits,
#: and ``_ . -``, starting with a letter or digit (:func:`check_player`).
PLAYER_NAME_CHARS = "_.-"
PLAYER_NAME_MAX = 40
PLAYER_KINDS = ("person", "scripted")
#: Languages written right to left (ISO 639-3 ids of the study and common others).
RTL_LANGUAGES = frozenset({"ara", "arb", "arz", "apc", "ary", "fas", "pes", "prs", "heb", "urd",
                           "yid", "pus", "pbt", "snd", "uig", "div", "syr", "ckb", "skr"})
#: The typed spelling of the end of the unit (besides ``</s>`` itself).
END_SPELLINGS = (END_OUTCOME,)


class PlayError(ValueError):
    """A request the game refuses; ``status`` is the HTTP status the server answers with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class PlaySettings:
    """One protocol's settings (only those of ``protocol`` are recorded)."""

    protocol: str = "list"
    list_max: int = 5
    stake: float = 0.9
    coins: int = 100
    max_guesses: int = 10

    def __post_init__(self):
        if self.protocol not in PLAY_PROTOCOLS:
            raise InputError(f"protocol {self.protocol!r}: expected one of "
                             f"{', '.join(PLAY_PROTOCOLS)}")
        for name in ("list_max", "coins", "max_guesses"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"--{name.replace('_', '-')} {value!r}: expected an integer >= 1")
        if self.coins < 2:
            raise InputError(f"--coins {self.coins}: expected at least 2 (one is always left "
                             f"for the words nobody bets on)")
        if not (isinstance(self.stake, (int, float)) and 0 < self.stake < 1):
            raise InputError(f"--stake {self.stake!r}: expected a number strictly between 0 "
                             f"and 1 (the rest is spread over the words not listed)")

    def recorded(self) -> dict:
        keys = {"list": ("list_max", "stake"), "money": ("coins",),
                "rank": ("max_guesses",)}[self.protocol]
        return {"protocol": self.protocol} | {k: getattr(self, k) for k in keys}

    def check(self, m: int) -> None:
        """Refuse settings that cannot make valid bets on m outcomes (eq. 6's check for the
        list protocol's longest list; a list longer than the outcomes)."""
        if self.protocol == "list":
            if self.list_max >= m:
                raise InputError(f"--list-max {self.list_max}: expected fewer than the m = {m} "
                                 f"outcomes")
            for k in range(1, self.list_max + 1):
                bets = list_bets(k, self.stake)
                problem = consistency_problem(math.fsum(bets), min(bets), m, k)
                if problem:
                    raise InputError(f"--stake {self.stake} with lists of {k}: {problem}; "
                                     f"expected a larger stake or a shorter --list-max")
        if self.protocol == "rank" and self.max_guesses > m:
            raise InputError(f"--max-guesses {self.max_guesses}: expected at most the m = {m} "
                             f"outcomes")


def list_bets(k: int, stake: float) -> list[float]:
    """The list protocol's bets on k guesses, best first: stake / (r H_k), r = 1..k."""
    harmonic = math.fsum(1 / r for r in range(1, k + 1))
    return [stake / (r * harmonic) for r in range(1, k + 1)]


def rtl(language: str) -> bool:
    return language in RTL_LANGUAGES


def player_name_problem(name) -> str | None:
    """Why ``name`` is not a player's name, or None. A name is a folder name on every system:
    letters of any script (Unicode categories L and M: ``Алёша``, ``أحمد``), digits, ``_ . -``;
    no path separator, whitespace or control character; not starting with ``.``, ``-`` or
    ``_``; 1 to 40 characters (NFC)."""
    if not isinstance(name, str):
        return "not a string"
    if not name:
        return "empty"
    name = unicodedata.normalize("NFC", name)
    if len(name) > PLAYER_NAME_MAX:
        return f"{len(name)} characters"
    for c in name:
        kind = unicodedata.category(c)
        if kind[0] not in "LMN" and c not in PLAYER_NAME_CHARS:
            what = ("a space" if c.isspace() else "a path separator" if c in "/\\"
                    else "a control character" if kind[0] == "C" else f"{c!r}")
            return f"holds {what}"
    if unicodedata.category(name[0])[0] not in "LN":
        return f"starts with {name[0]!r}"
    return None


def check_player(name) -> str:
    """The player's name (NFC), or PlayError saying what a name is."""
    problem = player_name_problem(name)
    if problem:
        raise PlayError(f"player {name!r} ({problem}): expected 1 to {PLAYER_NAME_MAX} letters "
                        f"(any script), digits, '_', '.' or '-', starting with a letter or "
                        f"digit")
    return unicodedata.normalize("NFC", name)


class PlayerFiles:
    """The files of one player and protocol under ``<campaign>/players/<player>/``."""

    def __init__(self, campaign: Campaign, player: str, protocol: str):
        player = check_player(player)
        self.protocol = protocol
        self.folder = Path(campaign.folder) / "players" / player
        self.bets = self.folder / f"{protocol}.jsonl"
        self.settings = self.folder / f"{protocol}.settings.json"
        self.journal = self.folder / f"{protocol}.journal.jsonl"
        self.pending = self.folder / f"{protocol}.pending.json"
        self.lock = self.folder / f"{protocol}.lock"

    @contextmanager
    def locked(self):
        """An exclusive lock on the player's protocol files (across processes)."""
        with open(self.lock, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _append_line(path: Path, record: dict) -> None:
    """Append one JSON line with one write and make it durable before returning."""
    line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        written = os.write(fd, line)
        while written < len(line):  # a short write: the rest, still one line
            written += os.write(fd, line[written:])
        os.fsync(fd)
    finally:
        os.close(fd)


# ------------------------------------------------------------ the player's files at start-up


@dataclass(frozen=True)
class Repair:
    """A ``.jsonl`` file whose last line was cut short: ``keep`` bytes of whole lines
    (``n_lines`` of them) stay, the ``tail`` bytes go to :func:`torn_path`."""

    path: Path
    keep: int
    n_lines: int
    tail: bytes

    def message(self, moved_to: Path | None = None) -> str:
        where = f"moved them to {moved_to}" if moved_to else "they go to <file>.torn-<time>"
        return (f"{self.path}: the last line was cut short ({len(self.tail)} bytes, the server "
                f"killed while writing it): kept the {self.n_lines} whole line(s), {where}; "
                f"that truncation is played again")


def _whole_lines(path: Path) -> tuple[list[tuple[int, str]], Repair | None]:
    """The whole lines of a ``.jsonl`` file as ``(line number, text)``, and the cut last line
    (a :class:`Repair`) if any. InputError naming the line for bytes that are not UTF-8."""
    raw = path.read_bytes() if path.exists() else b""
    cut = raw.rfind(b"\n") + 1
    repair = Repair(path, cut, raw.count(b"\n"), raw[cut:]) if cut < len(raw) else None
    lines = []
    for k, line in enumerate(raw[:cut].split(b"\n")[:-1], start=1):
        try:
            lines.append((k, line.decode("utf-8")))
        except UnicodeDecodeError as err:
            raise InputError(f"not UTF-8 ({err.reason} at byte {err.start}): expected the lines "
                             f"the game wrote", path=str(path), line=k) from None
    return lines, repair


def _json_object(path: Path, k: int, line: str, what: str) -> dict:
    try:
        rec = json.loads(line)
    except ValueError as err:
        raise InputError(f"not JSON ({err}): expected {what}", path=str(path),
                         line=k) from None
    if not isinstance(rec, dict):
        raise InputError(f"not a JSON object: expected {what}", path=str(path), line=k)
    return rec


def check_player_files(campaign: Campaign, player: str, protocol: str) -> list[Repair]:
    """Check the files of one player and protocol as the game wrote them (module docstring);
    returns the cut last lines to :func:`repair`. InputError naming the file, the line and what
    was expected for any other damage. Writes nothing."""
    files = PlayerFiles(campaign, player, protocol)
    if files.settings.exists():
        recorded = read_recorded_settings(files.settings)
        if recorded.get("protocol") != protocol or \
                recorded.get("player_kind", "person") not in PLAYER_KINDS:
            raise InputError(f"protocol {recorded.get('protocol')!r}, player_kind "
                             f"{recorded.get('player_kind')!r}: expected the {protocol} "
                             f"protocol's settings and a player_kind among "
                             f"{', '.join(PLAYER_KINDS)}", path=str(files.settings))
    repairs = []
    lines, cut = _whole_lines(files.bets)
    repairs += [cut] if cut else []
    position = campaign.position()
    kind = RANKING if protocol == "rank" else BETS
    seen: dict[str, int] = {}
    last = -1
    what = f'one {{"id": ..., "{kind}": ...}} per line, as the page writes it'
    for k, line in lines:
        rec = _json_object(files.bets, k, line, what)
        tid = rec.get("id")
        if tid in seen:
            raise InputError(f"truncation {tid!r} again (first on line {seen[tid]}): expected "
                             f"each truncation once, as the page writes them",
                             path=str(files.bets), line=k)
        if not isinstance(tid, str) or tid not in position:
            raise InputError(f"id {tid!r} is not a truncation of this campaign: expected "
                             f"{what}", path=str(files.bets), line=k)
        if position[tid] < last:
            raise InputError(f"truncation {tid} after a later one: expected the truncations "
                             f"in the campaign's order, as the page plays them",
                             path=str(files.bets), line=k)
        seen[tid], last = k, position[tid]
        if set(rec) != {"id", kind}:
            raise InputError(f"keys {sorted(rec)}: expected {what} (the {protocol} protocol)",
                             path=str(files.bets), line=k)
        problems = (ranking_problems if kind == RANKING else bets_problems)(
            rec[kind], campaign.outcomes)
        if problems:
            message = "; ".join(problems)
            raise InputError(message if "expected" in message else
                             f"{message}: expected a bet the page makes",
                             path=str(files.bets), line=k)
    lines, cut = _whole_lines(files.journal)
    repairs += [cut] if cut else []
    for k, line in lines:
        _json_object(files.journal, k, line, '{"id", "typed", "seconds"} per line')
    if files.pending.exists():
        pending = _json_object(files.pending, 1, files.pending.read_text(encoding="utf-8"),
                               '{"id", "guesses"}')
        if not isinstance(pending.get("id"), str) or not isinstance(
                pending.get("guesses"), list) or not all(
                isinstance(g, str) for g in pending["guesses"]):
            raise InputError('expected {"id": a truncation id, "guesses": a list of words} '
                             '(the rank protocol\'s wrong guesses so far)',
                             path=str(files.pending), line=1)
    return repairs


def torn_path(path: Path) -> Path:
    """Where the cut bytes of ``path`` go: ``<path>.torn-<UTC time>`` (``-2``, ``-3``, ... when
    taken: an earlier one is never overwritten)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out, k = path.with_name(f"{path.name}.torn-{stamp}"), 1
    while out.exists():
        k += 1
        out = path.with_name(f"{path.name}.torn-{stamp}-{k}")
    return out


def repair(cut: Repair) -> Path:
    """Move the cut bytes of a file aside and keep its whole lines (both durable before the
    file is replaced, atomically: a kill during the repair loses nothing). Returns where the
    bytes went."""
    from ..core.io import atomic_path

    raw = cut.path.read_bytes()
    if raw[:cut.keep] + cut.tail != raw:
        raise InputError("changed since it was checked: expected no other writer (is another "
                         "fairppl campaign play running on this campaign?)", path=str(cut.path))
    aside = torn_path(cut.path)
    with open(aside, "xb") as handle:
        handle.write(cut.tail)
        handle.flush()
        os.fsync(handle.fileno())
    with atomic_path(cut.path) as tmp:
        with open(tmp, "wb") as handle:
            handle.write(raw[:cut.keep])
            handle.flush()
            os.fsync(handle.fileno())
    folder = os.open(cut.path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
    return aside


def read_recorded_settings(path: Path, what: str = "the settings this game wrote") -> dict:
    """A ``<protocol>.settings.json`` (or another JSON object the game wrote, ``what``);
    InputError naming it when it is not a JSON object."""
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise InputError(f"not JSON ({err}): expected {what}", path=str(path)) from None
    if not isinstance(recorded, dict):
        raise InputError(f"not a JSON object: expected {what}", path=str(path))
    return recorded


def played_ids(path: Path, known: dict) -> list[str]:
    """The ids a player's file gives, in file order; InputError naming the file and line for a
    line this game did not write (a torn or edited file: it is not repaired silently)."""
    if not path.exists():
        return []
    raw = path.read_bytes()
    if raw and not raw.endswith(b"\n"):
        n = raw.count(b"\n") + 1
        raise InputError("the last line is incomplete (the server was killed while writing?): "
                         "expected whole lines; remove the incomplete line to go on",
                         path=str(path), line=n)
    ids = []
    for k, line in enumerate(raw.decode("utf-8").splitlines(), start=1):
        try:
            rec = json.loads(line)
        except ValueError:
            rec = None
        tid = rec.get("id") if isinstance(rec, dict) else None
        if tid not in known or tid in ids:
            raise InputError("not a line of this game (an unknown or repeated truncation id, or "
                             "not JSON): expected the lines the page wrote", path=str(path),
                             line=k)
        ids.append(tid)
    return ids


class Game:
    """One player's game of one protocol on a campaign: what is next, and each bet written."""

    def __init__(self, campaign: Campaign, player: str, settings: PlaySettings,
                 kind: str = "person", references: dict | None = None, *, opened: bool = True):
        """``opened``: create the player's folder and lock file now (:meth:`open`); a server
        that has not bound its port yet passes False and opens later."""
        if kind not in PLAYER_KINDS:
            raise InputError(f"player kind {kind!r}: expected one of {', '.join(PLAYER_KINDS)}")
        settings.check(campaign.m)
        self.campaign, self.player, self.settings, self.kind = campaign, player, settings, kind
        self.files = PlayerFiles(campaign, player, settings.protocol)
        self.position = campaign.position()
        self.labels = campaign.outcomes.labels
        self.contexts = {t["id"]: t["context"] for t in jsonl_records(
            campaign.folder / TRUNCATIONS, ("id", "unit_id", "context"), "truncations")}
        self.references = references or {}
        self.player = self.files.folder.name
        self._check_recorded_settings()
        if opened:
            self.open()

    def open(self) -> "Game":
        """Create the player's folder and lock file (after the checks, once the server could
        start: a refused start leaves nothing behind; a refused request creates nothing)."""
        self.files.folder.mkdir(parents=True, exist_ok=True)
        self.files.lock.touch()
        return self

    # ------------------------------------------------------------ state

    def _check_recorded_settings(self) -> None:
        path = self.files.settings
        if not path.exists():
            return
        recorded = read_recorded_settings(path)
        wanted = self.settings.recorded() | {"player_kind": self.kind}
        differ = {k: (recorded.get(k), v) for k, v in wanted.items() if recorded.get(k) != v}
        if differ:
            what = ", ".join(f"{k} {a!r} there, {b!r} now" for k, (a, b) in differ.items())
            raise InputError(f"this player already played with other settings ({what}): their "
                             f"bets would mix two games; expected the same settings or another "
                             f"--player", path=str(path))

    def played(self) -> list[str]:
        return played_ids(self.files.bets, self.position)

    def _pending(self, tid: str | None) -> dict:
        """The rank protocol's pending state of ``tid``: its wrong guesses and seconds so far."""
        path = self.files.pending
        if tid is None or not path.exists():
            return {"guesses": [], "seconds": None}
        state = read_recorded_settings(path, "the rank protocol's wrong guesses so far")
        if state.get("id") != tid:
            return {"guesses": [], "seconds": None}
        return {"guesses": list(state.get("guesses") or []), "seconds": state.get("seconds")}

    def pending_guesses(self, tid: str | None) -> list[str]:
        return self._pending(tid)["guesses"]

    def next_id(self, played: list[str]) -> str | None:
        done = set(played)
        return next((t for t in self.campaign.ids if t not in done), None)

    def state(self) -> dict:
        """What the page shows: progress, the next truncation (never its answer), the pending
        guesses of the rank protocol, the seconds played so far."""
        played = self.played()
        tid = self.next_id(played)
        out = {"player": self.player, "player_kind": self.kind,
               "protocol": self.settings.protocol, "n_played": len(played),
               "n_truncations": len(self.campaign.ids), "done": tid is None,
               "seconds": self.seconds_played()}
        if tid is not None:
            out["seconds"] += self._pending(tid)["seconds"] or 0.0
            unit = self.campaign.unit_ids[self.position[tid]]
            out["truncation"] = {"id": tid, "unit_id": unit, "context": self.contexts[tid],
                                 "reference": self.references.get(unit)}
            out["pending"] = self.pending_guesses(tid)
        return out

    def seconds_played(self) -> float:
        path = self.files.journal
        if not path.exists():
            return 0.0
        total = 0.0
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                total += float(json.loads(line).get("seconds") or 0)
            except (ValueError, AttributeError, TypeError):
                continue
        return total

    @staticmethod
    def _seconds(request: dict) -> float | None:
        """The seconds the page says the truncation was on screen (tab visible) since it was
        shown or since the last guess; None when not given (a bet without the page)."""
        value = request.get("seconds")
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value) or value < 0:
            raise PlayError(f"seconds {value!r}: expected a number of seconds >= 0 (the time "
                            f"the truncation was on screen)")
        return round(float(value), 3)

    # ------------------------------------------------------------ words and outcomes

    def outcome(self, typed) -> str:
        """The outcome of a typed guess (:data:`END_SPELLINGS`: the end of the unit)."""
        if not isinstance(typed, str) or not typed.strip():
            raise PlayError(f"guess {typed!r}: expected a word (a non-empty string)")
        word = typed.strip()
        if " " in word:
            raise PlayError(f"guess {word!r}: expected one word (no spaces)")
        if word in END_SPELLINGS:
            return END_OUTCOME
        return self.campaign.outcomes.outcome(word)

    def _outcomes(self, typed: list) -> list[str]:
        labels = [self.outcome(w) for w in typed]
        seen: dict[str, str] = {}
        for word, label in zip(typed, labels):
            if label in seen:
                same = (f"{seen[label]!r} and {word!r} are both outside the vocabulary "
                        f"({UNK_OUTCOME})" if label == UNK_OUTCOME else f"{word!r} twice")
                raise PlayError(f"{same}: expected each outcome once per bet")
            seen[label] = word
        return labels

    def answer(self, tid: str) -> dict:
        """The correct outcome of a truncation, and the word itself where the campaign shows
        it (the next truncation of the same unit, in an exhaustive campaign)."""
        i = self.position[tid]
        label = self.labels[self.campaign.answers[i]]
        word = label
        if label == UNK_OUTCOME and i + 1 < len(self.campaign.ids) and \
                self.campaign.unit_ids[i + 1] == self.campaign.unit_ids[i]:
            before, after = self.contexts[tid], self.contexts[self.campaign.ids[i + 1]]
            if after.startswith(before):
                word = after[len(before):].strip() or label
        return {"outcome": label, "word": word}

    # ------------------------------------------------------------ bets

    def _expect(self, tid, played: list[str]) -> None:
        if not isinstance(tid, str) or tid not in self.position:
            raise PlayError(f"id {tid!r}: not a truncation of this campaign", 400)
        expected = self.next_id(played)
        if tid != expected:
            why = "already played" if tid in played else "not the next one"
            raise PlayError(f"truncation {tid}: {why}; the next one is {expected} (reload the "
                            f"page)", 409)

    def _record(self, request: dict) -> tuple[dict, list[str]]:
        """The campaign-format line of a bet request, and the words as typed."""
        protocol = self.settings.protocol
        if protocol == "list":
            typed = request.get("guesses")
            if not isinstance(typed, list):
                raise PlayError('expected "guesses": a list of words, best first')
            if len(typed) > self.settings.list_max:
                raise PlayError(f"{len(typed)} guesses: expected at most "
                                f"{self.settings.list_max}")
            labels = self._outcomes(typed)
            return {"id": request["id"], BETS: dict(zip(labels, list_bets(
                len(labels), self.settings.stake)))}, typed
        stakes = request.get("stakes")
        if not isinstance(stakes, list) or not all(
                isinstance(s, list) and len(s) == 2 for s in stakes):
            raise PlayError('expected "stakes": a list of [word, coins] pairs')
        typed = [s[0] for s in stakes]
        labels = self._outcomes(typed)
        coins = [s[1] for s in stakes]
        for word, c in zip(typed, coins):
            if isinstance(c, bool) or not isinstance(c, int) or c < 1:
                raise PlayError(f"{c!r} coins on {word!r}: expected a whole number >= 1")
        if sum(coins) > self.settings.coins - 1:
            raise PlayError(f"{sum(coins)} coins placed: expected at most "
                            f"{self.settings.coins - 1} of {self.settings.coins} (at least one "
                            f"is left for the words nobody bets on)")
        return {"id": request["id"], BETS: {w: c / self.settings.coins
                                            for w, c in zip(labels, coins)}}, typed

    def bet(self, request: dict) -> dict:
        """Write the bet of the list or money protocol on the next truncation; returns the
        answer, the bet on it and the new state. Nothing is written when it is refused."""
        if self.settings.protocol == "rank":
            raise PlayError("the rank protocol takes one guess at a time (/api/guess)")
        if not isinstance(request, dict):
            raise PlayError("expected a JSON object")
        with self.files.locked():
            played = self.played()
            self._expect(request.get("id"), played)
            record, typed = self._record(request)
            seconds = self._seconds(request)
            problems = bets_problems(record[BETS], self.campaign.outcomes)
            if problems:
                raise PlayError("; ".join(problems))
            self._write(record, typed, seconds)
        return self._feedback(record["id"], record[BETS])

    def guess(self, request: dict) -> dict:
        """One guess of the rank protocol on the next truncation: right, or wrong with guesses
        left, or the last one; the ranking line is written when the truncation ends."""
        if self.settings.protocol != "rank":
            raise PlayError(f"the {self.settings.protocol} protocol bets once per truncation "
                            f"(/api/bet)")
        if not isinstance(request, dict):
            raise PlayError("expected a JSON object")
        with self.files.locked():
            played = self.played()
            tid = request.get("id")
            self._expect(tid, played)
            pending = self._pending(tid)
            before = pending["guesses"]
            seconds = self._seconds(request)
            if pending["seconds"] is not None or seconds is not None:
                seconds = round((pending["seconds"] or 0.0) + (seconds or 0.0), 3)
            label = self.outcome(request.get("guess"))
            labels = [self.outcome(w) for w in before]
            if label in labels:
                raise PlayError(f"{request['guess']!r} is {label!r}, already guessed: expected "
                                f"another word")
            guesses = before + [request["guess"].strip()]
            ranking = labels + [label]
            correct = label == self.labels[self.campaign.answers[self.position[tid]]]
            if not correct and len(ranking) < self.settings.max_guesses:
                write_text(self.files.pending, json.dumps(
                    {"id": tid, "guesses": guesses, "seconds": seconds},
                    ensure_ascii=False) + "\n")
                return {"correct": False, "outcome": label, "ended": False,
                        "guesses_left": self.settings.max_guesses - len(ranking)}
            problems = ranking_problems(ranking, self.campaign.outcomes)
            if problems:
                raise PlayError("; ".join(problems))
            self._write({"id": tid, RANKING: ranking}, guesses, seconds)
            self.files.pending.unlink(missing_ok=True)
        out = self._feedback(tid, None)
        out |= {"correct": correct, "outcome": label, "ended": True,
                "rank": len(ranking) if correct else None}
        return out

    def _write(self, record: dict, typed: list, seconds: float | None) -> None:
        if not self.files.settings.exists():
            write_text(self.files.settings, json.dumps(
                self.settings.recorded() | {"player": self.player, "player_kind": self.kind,
                                            "campaign": self.campaign.settings}, indent=1,
                ensure_ascii=False) + "\n")
        _append_line(self.files.bets, record)
        _append_line(self.files.journal, {"id": record["id"], "typed": typed,
                                          "seconds": seconds})

    def _feedback(self, tid: str, bets: dict | None) -> dict:
        answer = self.answer(tid)
        out = {"id": tid, "answer": answer, "state": self.state()}
        if bets is not None:
            listed = answer["outcome"] in bets
            bet = bets[answer["outcome"]] if listed else floor_bet(
                math.fsum(bets.values()), self.campaign.m, len(bets))
            out |= {"bet": bet, "listed": listed, "bits": -math.log2(bet)}
        return out
