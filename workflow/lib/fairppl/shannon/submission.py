"""A site's submission (Bimbot et al., sections 4.1-4.3): one JSON object per line with bets
(a list of l outcomes, eq. 6's floor for the rest) or a ranking; every line checked, every problem
flagged with its line, id and reason, never by looking at the key. And writing a bets file."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Collection, Iterable, Sequence

from ..core.errors import InputError
from ..core.io import atomic_path
from .campaign_folder import Campaign
from .gambling import SUM_TOLERANCE, consistency_problem
from .outcomes import END_OUTCOME, UNK_OUTCOME, Outcomes

BETS = "bets"
RANKING = "ranking"


@dataclass(frozen=True)
class Record:
    """One valid submission line: ``kind`` is ``bets`` (``entries`` maps outcomes to bets) or
    ``ranking`` (``entries`` lists outcomes, best first)."""

    line: int
    id: str
    kind: str
    entries: object



class _Object(dict):
    """A JSON object that remembers the keys given more than once."""

    repeated: list


def _object_hook(pairs):
    obj = _Object()
    obj.repeated = []
    for key, value in pairs:
        if key in obj and key not in obj.repeated:
            obj.repeated.append(key)
        obj[key] = value
    return obj


def _kind_name(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _shown(words: Sequence[str], k: int = 5) -> str:
    shown = ", ".join(repr(w) for w in words[:k])
    return shown + (f" and {len(words) - k} more" if len(words) > k else "")


def as_float(value) -> float:
    """A JSON number as a float (an integer too large for a float is infinite)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _unknown_problem(what: str, unknown: Sequence[str]) -> str:
    """The message for outcomes a record names that vocabulary.txt does not hold."""
    return (f"{what} {_shown(unknown)}, not in vocabulary.txt: expected outcomes of "
            f"vocabulary.txt (words, {UNK_OUTCOME}, {END_OUTCOME})")


def bets_problems(bets, outcomes: Outcomes) -> list[str]:
    """What is wrong with one truncation's ``bets`` (an object of outcome -> probability), one
    sentence each; empty when nothing is."""
    if not isinstance(bets, dict):
        return [f'"bets" is {_kind_name(bets)}: expected an object mapping outcomes to '
                f'probabilities']
    problems = []
    if getattr(bets, "repeated", None):
        problems.append(f"bets name {_shown(bets.repeated)} more than once: expected each "
                        f"outcome once")
    unknown = [w for w in bets if w not in outcomes.index]
    if unknown:
        problems.append(_unknown_problem("bets on", unknown))
    values_ok = True
    for word, value in bets.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            problems.append(f"the bet on {word!r} is {_kind_name(value)} ({json.dumps(value)}): "
                            f"expected a number")
            values_ok = False
        elif not math.isfinite(as_float(value)):
            problems.append(f"the bet on {word!r} is {as_float(value)}: expected a finite "
                            f"number")
            values_ok = False
        elif value < 0:
            problems.append(f"the bet on {word!r} is {value!r}: expected a probability >= 0")
            values_ok = False
    if not values_ok or unknown:
        return problems
    length, m = len(bets), outcomes.m
    if length == 0:
        return problems
    values = [as_float(v) for v in bets.values()]
    total = math.fsum(values)
    if total > 1 + SUM_TOLERANCE:
        problems.append(f"the bets sum to {total:.9g}: expected at most 1")
        return problems
    problem = consistency_problem(total, min(values), m, length)
    if problem:
        problems.append(f"inconsistent list: {problem}")
    return problems


def ranking_problems(ranking, outcomes: Outcomes) -> list[str]:
    """What is wrong with one truncation's ``ranking`` (a list of outcomes, best first), one
    sentence each; empty when nothing is."""
    if not isinstance(ranking, list):
        return [f'"ranking" is {_kind_name(ranking)}: expected a list of outcomes, best first']
    if not ranking:
        return ["empty ranking: expected at least one outcome, best first"]
    problems = []
    bad = [k for k, w in enumerate(ranking, start=1) if not isinstance(w, str)]
    if bad:
        problems.append(f"ranking entry {bad[0]} is {_kind_name(ranking[bad[0] - 1])}: "
                        f"expected outcome strings")
        return problems
    first: dict[str, int] = {}
    repeats = []
    for k, w in enumerate(ranking, start=1):
        if w in first:
            repeats.append(f"{w!r} at {first[w]} and {k}")
        else:
            first[w] = k
    if repeats:
        problems.append(f"the ranking repeats {', '.join(repeats[:5])}"
                        f"{' and more' if len(repeats) > 5 else ''}: expected distinct outcomes")
    unknown = [w for w in first if w not in outcomes.index]
    if unknown:
        problems.append(_unknown_problem("the ranking names", unknown))
    return problems


def _flag(line: int | None, tid, reason: str) -> dict:
    return {"line": line, "id": tid if isinstance(tid, str) else None, "reason": reason}


def _utf16(raw: bytes) -> str | None:
    """``"UTF-16 (little-endian)"``/``"(big-endian)"`` when ``raw`` starts with a UTF-16
    byte-order mark or, without one, with a JSON object's ``{`` and a NUL byte (ASCII text in
    UTF-16); else ``None``. UTF-16 is refused once for the whole file, not line by line."""
    if raw[:2] == b"\xff\xfe" or raw[:2] == b"{\x00":
        return "UTF-16 (little-endian)"
    if raw[:2] == b"\xfe\xff" or raw[:2] == b"\x00{":
        return "UTF-16 (big-endian)"
    return None


def read_submission(path: str | os.PathLike, campaign: Campaign,
                    only: Collection[str] | None = None) -> tuple[list[Record], list]:
    """Check a submission line by line against ``campaign`` (never its key): the valid records
    and the flags, one per flagged line (``{"line", "id", "reason"}``, all its problems in the
    reason, ``; ``-separated) plus one per truncation no line gives (``line`` ``None``); a UTF-16
    file is one flag for the whole file (``line`` ``None``), not two per truncation. The
    file's kind (bets or rankings) is the kind of its first record with exactly one of them; a
    record of the other kind is flagged. ``only``: the ids to read (say, the truncations a person
    has played, to score a model's file on the same ones; :meth:`Campaign.subset`); a valid line
    of another truncation of the campaign is passed over, and only these can be missing.
    InputError only for a file that cannot be read."""
    path = Path(path)
    only = None if only is None else frozenset(only)
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        raise InputError("no such file: expected a submission, one JSON object per line",
                         path=str(path)) from None
    encoding = _utf16(raw)
    if encoding:
        return [], [_flag(None, None, f"the file is {encoding}, not UTF-8: expected UTF-8 "
                                      f"text, one JSON object per line (save it as UTF-8)")]
    chunks = raw.split(b"\n")
    if chunks and chunks[-1] == b"":
        chunks.pop()
    if not any(c.strip() for c in chunks):
        return [], [_flag(None, None, "empty file: expected one JSON object per truncation "
                                      "(id with bets or ranking)")]
    known = campaign.position()
    records: list[Record] = []
    flags: list[dict] = []
    first_line: dict[str, int] = {}
    file_kind: tuple[str, int] | None = None
    for lineno, chunk in enumerate(chunks, start=1):
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError as err:
            flags.append(_flag(lineno, None, f"invalid UTF-8 at byte {err.start} of the line "
                                             f"({chunk[err.start:err.start + 4]!r}): expected "
                                             f"UTF-8 text"))
            continue
        if not text.strip():
            flags.append(_flag(lineno, None, "blank line: expected one JSON object per line"))
            continue
        try:
            rec = json.loads(text, object_pairs_hook=_object_hook)
        except ValueError as err:
            msg = getattr(err, "msg", str(err))
            col = getattr(err, "colno", None)
            flags.append(_flag(lineno, None, f"not JSON ({msg}{f' at column {col}' if col else ''}"
                                             f"): expected one JSON object per line"))
            continue
        if not isinstance(rec, dict):
            flags.append(_flag(lineno, None, f"{_kind_name(rec)}, not an object: expected "
                                             f'{{"id": ..., "bets": {{...}}}} or {{"id": ..., '
                                             f'"ranking": [...]}}'))
            continue
        tid = rec.get("id")
        problems = []
        if rec.repeated:
            problems.append(f"the key(s) {_shown(rec.repeated)} given more than once: expected "
                            f"each once")
        extra = sorted(k for k in rec if k not in ("id", BETS, RANKING))
        if extra:
            problems.append(f"unexpected key(s) {_shown(extra)}: expected only \"id\" and "
                            f"\"bets\" or \"ranking\"")
        if "id" not in rec:
            problems.append('no "id": expected the id of a truncation of truncations.jsonl')
        elif not isinstance(tid, str):
            problems.append(f'"id" is {_kind_name(tid)} ({json.dumps(tid)}): expected the '
                            f'string id of a truncation of truncations.jsonl')
        elif tid not in known:
            problems.append(f"unknown id {tid!r}: no such truncation in truncations.jsonl")
        elif tid in first_line:
            problems.append(f"duplicate id {tid!r}: already given on line {first_line[tid]}")
        if isinstance(tid, str) and tid in known and tid not in first_line:
            first_line[tid] = lineno
        has = [k for k in (BETS, RANKING) if k in rec]
        if len(has) == 2:
            problems.append('both "bets" and "ranking": expected exactly one of them')
        elif not has:
            problems.append('neither "bets" nor "ranking": expected exactly one of them')
        else:
            kind = has[0]
            if file_kind is None:
                file_kind = (kind, lineno)
            elif file_kind[0] != kind:
                other = "bets" if file_kind[0] == BETS else "rankings"
                problems.append(f"a {'ranking' if kind == RANKING else 'bets record'} in a "
                                f"file of {other} (line {file_kind[1]} has {file_kind[0]}): "
                                f"expected one kind per file")
            check = bets_problems if kind == BETS else ranking_problems
            problems += check(rec[kind], campaign.outcomes)
        if problems:
            flags.append(_flag(lineno, tid, "; ".join(problems)))
        elif only is None or tid in only:
            records.append(Record(line=lineno, id=tid, kind=has[0], entries=rec[has[0]]))
    for tid in campaign.ids if only is None else (t for t in campaign.ids if t in only):
        if tid not in first_line:
            flags.append(_flag(None, tid, "missing: no line gives this truncation"))
    return records, flags


def write_bets(path: str | os.PathLike, records: Iterable) -> int:
    """Write a bets file atomically: one line ``{"id": ..., "bets": {...}}`` per record (a dict
    with ``id`` and ``bets``, or a pair ``(id, bets)``), probabilities as Python floats written
    at ``repr`` precision (they read back exactly). Returns the number of lines."""
    n = 0
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for rec in records:
            tid, bets = (rec["id"], rec["bets"]) if isinstance(rec, dict) else rec
            clean = {}
            for word, value in bets.items():
                value = float(value)
                if not math.isfinite(value) or value < 0:
                    raise InputError(f"bet {value!r} on {word!r} for {tid!r}: expected a finite "
                                     f"probability >= 0", path=str(path))
                clean[str(word)] = value
            handle.write(json.dumps({"id": str(tid), BETS: clean}, ensure_ascii=False))
            handle.write("\n")
            n += 1
    return n

