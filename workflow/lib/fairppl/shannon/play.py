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
guesses of the truncation being played, so that a reload or a killed server resumes mid-way.
A lock file serialises writers: two servers or two tabs of one player never write the same
truncation twice.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InputError
from ..core.io import write_text
from .campaign_folder import TRUNCATIONS, Campaign, _jsonl_records
from .gambling import consistency_problem, floor_bet
from .outcomes import END_OUTCOME, UNK_OUTCOME
from .submission import BETS, RANKING, _bets_problems, _ranking_problems

PLAY_PROTOCOLS = ("list", "money", "rank")
#: A player's name is a folder name: letters, digits, ``_ . -``, not starting with a dot.
PLAYER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
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


def check_player(name) -> str:
    if not isinstance(name, str) or not PLAYER_NAME.fullmatch(name):
        raise PlayError(f"player {name!r}: expected 1 to 40 letters, digits, '_', '.' or '-', "
                        f"not starting with '.' or '-'")
    return name


class PlayerFiles:
    """The files of one player and protocol under ``<campaign>/players/<player>/``."""

    def __init__(self, campaign: Campaign, player: str, protocol: str):
        check_player(player)
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
    """Append one JSON line and make it durable before returning."""
    line = json.dumps(record, ensure_ascii=False) + "\n"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())


def _played_ids(path: Path, known: dict) -> list[str]:
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
                 kind: str = "person", references: dict | None = None):
        if kind not in PLAYER_KINDS:
            raise InputError(f"player kind {kind!r}: expected one of {', '.join(PLAYER_KINDS)}")
        settings.check(campaign.m)
        self.campaign, self.player, self.settings, self.kind = campaign, player, settings, kind
        self.files = PlayerFiles(campaign, player, settings.protocol)
        self.position = campaign.position()
        self.labels = campaign.outcomes.labels
        self.contexts = {t["id"]: t["context"] for t in _jsonl_records(
            campaign.folder / TRUNCATIONS, ("id", "unit_id", "context"), "truncations")}
        self.references = references or {}
        self.served_at: dict[str, float] = {}
        self._check_recorded_settings()
        # the player's folder and lock exist from the start: a refused request creates nothing
        self.files.folder.mkdir(parents=True, exist_ok=True)
        self.files.lock.touch()

    # ------------------------------------------------------------ state

    def _check_recorded_settings(self) -> None:
        path = self.files.settings
        if not path.exists():
            return
        try:
            recorded = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as err:
            raise InputError(f"not JSON ({err}): expected the settings this game wrote",
                             path=str(path)) from None
        wanted = self.settings.recorded() | {"player_kind": self.kind}
        differ = {k: (recorded.get(k), v) for k, v in wanted.items() if recorded.get(k) != v}
        if differ:
            what = ", ".join(f"{k} {a!r} there, {b!r} now" for k, (a, b) in differ.items())
            raise InputError(f"this player already played with other settings ({what}): their "
                             f"bets would mix two games; expected the same settings or another "
                             f"--player", path=str(path))

    def played(self) -> list[str]:
        return _played_ids(self.files.bets, self.position)

    def pending_guesses(self, tid: str | None) -> list[str]:
        path = self.files.pending
        if tid is None or not path.exists():
            return []
        state = json.loads(path.read_text(encoding="utf-8"))
        return list(state["guesses"]) if state.get("id") == tid else []

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
            self.served_at.setdefault(tid, time.time())
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
            problems = _bets_problems(record[BETS], self.campaign.outcomes)
            if problems:
                raise PlayError("; ".join(problems))
            self._write(record, typed)
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
            before = self.pending_guesses(tid)
            label = self.outcome(request.get("guess"))
            labels = [self.outcome(w) for w in before]
            if label in labels:
                raise PlayError(f"{request['guess']!r} is {label!r}, already guessed: expected "
                                f"another word")
            guesses = before + [request["guess"].strip()]
            ranking = labels + [label]
            correct = label == self.labels[self.campaign.answers[self.position[tid]]]
            if not correct and len(ranking) < self.settings.max_guesses:
                write_text(self.files.pending, json.dumps({"id": tid, "guesses": guesses},
                                                          ensure_ascii=False) + "\n")
                return {"correct": False, "outcome": label, "ended": False,
                        "guesses_left": self.settings.max_guesses - len(ranking)}
            problems = _ranking_problems(ranking, self.campaign.outcomes)
            if problems:
                raise PlayError("; ".join(problems))
            self._write({"id": tid, RANKING: ranking}, guesses)
            self.files.pending.unlink(missing_ok=True)
        out = self._feedback(tid, None)
        out |= {"correct": correct, "outcome": label, "ended": True,
                "rank": len(ranking) if correct else None}
        return out

    def _write(self, record: dict, typed: list) -> None:
        if not self.files.settings.exists():
            write_text(self.files.settings, json.dumps(
                self.settings.recorded() | {"player": self.player, "player_kind": self.kind,
                                            "campaign": self.campaign.settings}, indent=1,
                ensure_ascii=False) + "\n")
        _append_line(self.files.bets, record)
        tid = record["id"]
        shown = self.served_at.pop(tid, None)  # None: bet without the page showing it
        _append_line(self.files.journal, {"id": tid, "typed": typed, "seconds": None if shown
                                          is None else round(max(time.time() - shown, 0), 3)})

    def _feedback(self, tid: str, bets: dict | None) -> dict:
        answer = self.answer(tid)
        out = {"id": tid, "answer": answer, "state": self.state()}
        if bets is not None:
            listed = answer["outcome"] in bets
            bet = bets[answer["outcome"]] if listed else floor_bet(
                math.fsum(bets.values()), self.campaign.m, len(bets))
            out |= {"bet": bet, "listed": listed, "bits": -math.log2(bet)}
        return out
