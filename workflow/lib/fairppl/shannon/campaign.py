"""The Shannon game as a campaign (Bimbot et al., section 4): the organiser writes truncations,
a site returns bets (or rankings) for each, and the organiser scores them without the site's model.

A campaign folder holds four files, all UTF-8:

* ``truncations.jsonl``: one ``{"id": ..., "unit_id": ..., "context": ...}`` per truncation, the
  context being the words of the unit before the position, space-joined (``""`` at the first
  word). Ids are ``t000001``, ``t000002``, ... in file order: they say nothing of the answer.
* ``vocabulary.txt``: the m outcomes, one per line: the vocabulary words (most frequent first),
  then ``<unk>`` (every other word) and ``</s>`` (the end of the unit).
* ``key.jsonl``: the organiser's answer key, ``{"id": ..., "word": ...}`` per truncation in the
  same order, ``word`` the correct outcome (``<unk>`` for a word outside the vocabulary, ``</s>``
  after a unit's last word).
* ``campaign.json``: the settings (corpus, language, split, protocol, n, seed, vocabulary size,
  the corpus whose train split gave the vocabulary) and the sizes (m, n_truncations, n_units).

A submission has one JSON object per line: ``{"id": ..., "bets": {"word": probability, ...}}``
(a list of l outcomes; ``{}`` bets uniformly) or ``{"id": ..., "ranking": ["word", ...]}`` (the
outcomes in decreasing order of belief, possibly cut short). :func:`read_submission` checks every
line and returns the valid records with a flag (line, id, reason) for every problem; it never
looks at the key. :func:`score_submission` scores the valid records: a bets record's correct
outcome gets its listed bet, else the floor ``(1 - A) / (m - l)`` of eq. 6 (``1/m`` for ``{}``);
the gambling perplexity (eq. 3) with a bootstrap interval over units; a ranking file gets
Shannon's entropy bounds (eqs. 9-12) from the ranks of the correct outcomes. Log bets in nats;
``bits`` in a name means base 2.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..core.errors import InputError
from ..core.io import atomic_dir, atomic_path, read_parquet
from ..ngram.word import RESERVED_WORDS
from .gambling import SUM_TOLERANCE, consistency_problem, floor_bet, gambling_perplexity
from .outcomes import (END_OUTCOME, UNK_OUTCOME, Outcomes, build_outcomes, contexts,
                       unit_outcomes)

TRUNCATIONS = "truncations.jsonl"
VOCABULARY = "vocabulary.txt"
KEY = "key.jsonl"
SETTINGS = "campaign.json"
#: The files of a campaign folder, in the order they are written.
CAMPAIGN_FILES = (TRUNCATIONS, VOCABULARY, KEY, SETTINGS)
#: ``format`` of campaign.json.
FORMAT = "fairppl-campaign/1"
PROTOCOLS = ("exhaustive", "randomized")
#: The settings that define a campaign (an earlier folder with the same ones may be rewritten).
SETTING_KEYS = ("corpus", "language", "split", "protocol", "n", "seed", "vocab_size",
                "vocabulary_corpus")

#: The fewest distinct units the scored truncations must cover for a bootstrap interval.
MIN_INTERVAL_UNITS = 20

BETS = "bets"
RANKING = "ranking"
TAILS = ("uniform", "zipf")


@dataclass(frozen=True)
class Campaign:
    """A campaign folder read back: its settings, outcomes, and per truncation (in file order)
    the id, the unit id and the index of the correct outcome in ``outcomes.labels``."""

    folder: Path
    settings: dict
    outcomes: Outcomes
    ids: tuple[str, ...]
    unit_ids: tuple[str, ...]
    answers: tuple[int, ...]

    @property
    def m(self) -> int:
        return self.outcomes.m

    @property
    def protocol(self) -> str:
        return self.settings["protocol"]

    def position(self) -> dict[str, int]:
        """id -> its index in the file order."""
        return {tid: i for i, tid in enumerate(self.ids)}


@dataclass(frozen=True)
class Record:
    """One valid submission line: ``kind`` is ``bets`` (``entries`` maps outcomes to bets) or
    ``ranking`` (``entries`` lists outcomes, best first)."""

    line: int
    id: str
    kind: str
    entries: object


# ---------------------------------------------------------------- truncations


def truncation_id(k: int) -> str:
    """The id of the k-th truncation (1-based) of a campaign file."""
    return f"t{k:06d}"


def make_truncations(units: Sequence[tuple[str, str]], outcomes: Outcomes, protocol: str,
                     n: int | None = None, seed: int = 0) -> list[dict]:
    """The truncations of ``units`` (``(unit_id, normalised text)`` in corpus order) as dicts
    ``id, unit_id, context, word`` (``word``: the correct outcome).

    ``exhaustive``: every position of every unit (the first ``n`` units when ``n`` is given),
    the end of the unit included. ``randomized``: ``n`` distinct units (all when ``None``) drawn
    without replacement with ``numpy.random.default_rng(seed)``, one uniformly random position
    each, written in corpus order."""
    if protocol not in PROTOCOLS:
        raise InputError(f"protocol {protocol!r}: expected one of {', '.join(PROTOCOLS)}")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise InputError(f"n = {n!r}: expected a number of units >= 1")
    if not units:
        raise InputError("no units to truncate")
    if n is not None and n > len(units):
        raise InputError(f"n = {n}: only {len(units)} units to draw from; expected n <= "
                         f"{len(units)}")
    chosen: list[tuple[str, str, list[int] | None]]
    if protocol == "exhaustive":
        chosen = [(uid, text, None) for uid, text in units[:n]]
    else:
        rng = np.random.default_rng(seed)
        picks = np.sort(rng.choice(len(units), size=n or len(units), replace=False))
        chosen = []
        for i in picks.tolist():
            uid, text = units[i]
            n_positions = len(contexts(text))
            chosen.append((uid, text, [int(rng.integers(0, n_positions))]))
    out = []
    for uid, text, positions in chosen:
        ctx, answers = contexts(text), unit_outcomes(text, outcomes)
        for p in range(len(ctx)) if positions is None else positions:
            out.append({"id": truncation_id(len(out) + 1), "unit_id": uid, "context": ctx[p],
                        "word": answers[p]})
    return out


def _jsonl(records: Iterable[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _campaign_texts(truncations: Sequence[dict], outcomes: Outcomes, settings: dict) -> dict:
    meta = {"format": FORMAT, **settings, "m": outcomes.m, "n_truncations": len(truncations),
            "n_units": len({t["unit_id"] for t in truncations})}
    return {
        TRUNCATIONS: _jsonl({"id": t["id"], "unit_id": t["unit_id"], "context": t["context"]}
                            for t in truncations),
        VOCABULARY: "".join(label + "\n" for label in outcomes.labels),
        KEY: _jsonl({"id": t["id"], "word": t["word"]} for t in truncations),
        SETTINGS: json.dumps(meta, ensure_ascii=False, indent=1) + "\n",
    }


def write_campaign(folder: str | os.PathLike, truncations: Sequence[dict], outcomes: Outcomes,
                   settings: dict) -> str:
    """Write the four campaign files into ``folder``; returns ``"written"`` or ``"unchanged"``.

    ``truncations`` as :func:`make_truncations` returns them, ``settings`` holds every key of
    ``SETTING_KEYS``. A missing or empty ``folder`` is written atomically (the files appear
    together or not at all). An existing non-empty folder is accepted only when it is an earlier
    campaign with the same settings and the same four files (nothing is written): a campaign
    whose truncations went out to sites is never overwritten. Anything else is refused."""
    missing = [k for k in SETTING_KEYS if k not in settings]
    if missing:
        raise InputError(f"campaign settings lack {missing}: expected {list(SETTING_KEYS)}")
    folder = Path(folder)
    texts = _campaign_texts(truncations, outcomes, {k: settings[k] for k in SETTING_KEYS})
    if folder.exists() and not folder.is_dir():
        raise InputError("not a folder: expected a new or empty folder for the campaign",
                         path=str(folder))
    if folder.is_dir() and any(folder.iterdir()):
        _check_same_campaign(folder, texts, settings)
        return "unchanged"
    with atomic_dir(folder) as tmp:
        for name in CAMPAIGN_FILES:
            (tmp / name).write_text(texts[name], encoding="utf-8")
    return "written"


def _check_same_campaign(folder: Path, texts: dict, settings: dict) -> None:
    meta_path = folder / SETTINGS
    try:
        earlier = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        earlier = None
    if not isinstance(earlier, dict) or earlier.get("format") != FORMAT:
        raise InputError(f"a non-empty folder that holds no campaign (no readable {SETTINGS}): "
                         f"expected a new or empty folder (--out)", path=str(folder))
    differ = [k for k in SETTING_KEYS if earlier.get(k) != settings[k]]
    if differ:
        what = ", ".join(f"{k} {earlier.get(k)!r} there, {settings[k]!r} now" for k in differ)
        raise InputError(f"an earlier campaign with other settings ({what}): expected a new or "
                         f"empty folder, or the same settings", path=str(folder))
    for name in CAMPAIGN_FILES:
        path = folder / name
        if not path.is_file() or path.read_bytes() != texts[name].encode("utf-8"):
            raise InputError(f"an earlier campaign with the same settings but another {name} "
                             f"(was the corpus prepared again?): its truncations may be out "
                             f"already, so it is not overwritten; expected a new or empty "
                             f"folder", path=str(folder))


# ---------------------------------------------------------------- building from a study


def _load_config(path: str | os.PathLike) -> dict | None:
    import yaml

    path = Path(path)
    if not path.is_file():
        return None
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise InputError(f"not valid YAML ({str(err).splitlines()[0]})", path=str(path)) from None
    if not isinstance(config, dict):
        raise InputError("expected a YAML mapping (the study's config)", path=str(path))
    return config


def _config_vocab_size(config: dict | None, config_path) -> int | None:
    where = f"the key shannon.vocab_size in {config_path}"
    if config is None:
        raise InputError(f"no --vocab-size and no config file {config_path}: expected "
                         f"--vocab-size V or {where}")
    block = config.get("shannon")
    if not isinstance(block, dict) or "vocab_size" not in block:
        raise InputError(f"no --vocab-size and no key shannon.vocab_size: expected --vocab-size "
                         f"V or {where}", path=str(config_path))
    size = block["vocab_size"]
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise InputError(f"shannon.vocab_size = {size!r}: expected an integer >= 1 or null "
                         f"(every train word type)", path=str(config_path))
    return size


def vocabulary_corpus(config: dict | None, corpus: str) -> str:
    """The corpus whose train split gives the outcomes: the one that trains the models scored
    on ``corpus`` (``models_from`` of an evaluation-only corpus such as the UDHR), or the corpus
    itself when the config does not name it."""
    if config is None or corpus not in (config.get("corpora") or {}):
        return corpus
    from ..config.design import train_corpus

    return train_corpus(config, corpus)


def _units(frame, path: str, language: str, split: str | None) -> list[tuple[str, str]]:
    langs = frame.filter(frame["language"] == language)
    if langs.height == 0:
        have = sorted(set(frame["language"].to_list()))
        raise InputError(f"no units of language {language!r}: expected one of "
                         f"{', '.join(have)}", path=path)
    part = langs if split is None else langs.filter(langs["split"] == split)
    if part.height == 0:
        have = sorted(set(langs["split"].to_list()))
        raise InputError(f"no units of {language!r} in split {split!r}: expected one of "
                         f"{', '.join(have)} (or all)", path=path)
    part = part.sort("position")
    return list(zip(part["unit_id"].to_list(), part["text"].to_list()))


def build_campaign(root: str | os.PathLike, corpus: str, language: str, out: str | os.PathLike,
                   *, split: str = "test", protocol: str = "exhaustive", n: int | None = None,
                   seed: int = 0, vocab_size: int | None = None,
                   config_path: str | os.PathLike = "config/config.yaml") -> dict:
    """Write a campaign for one corpus and language of a finished study under ``root``: the
    units of ``split`` (``all``: every unit) of ``results/corpus/<corpus>/units.parquet``, the
    outcomes from the language's train split of the vocabulary corpus (:func:`vocabulary_corpus`)
    with ``vocab_size`` words (else the config's ``shannon.vocab_size``). Returns campaign.json's
    content with ``status`` (``written`` or ``unchanged``)."""
    root = Path(root)
    cfg_path = Path(config_path) if Path(config_path).is_absolute() else root / config_path
    config = _load_config(cfg_path)
    setting = "--vocab-size"
    if vocab_size is None:
        vocab_size = _config_vocab_size(config, cfg_path)
        setting = "shannon.vocab_size"
    elif isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 1:
        raise InputError(f"--vocab-size {vocab_size!r}: expected an integer >= 1")
    source = vocabulary_corpus(config, corpus)
    cols = ["unit_id", "position", "language", "split", "text"]
    units_path = root / "results" / "corpus" / corpus / "units.parquet"
    frame = read_parquet(units_path, columns=cols)
    train_path = root / "results" / "corpus" / source / "units.parquet"
    train_frame = frame if source == corpus else read_parquet(train_path, columns=cols)
    train = _units(train_frame, str(train_path), language, "train")
    try:
        outcomes = build_outcomes((text for _, text in train), vocab_size,
                                  setting=setting, where=f"{source}/{language}")
    except InputError as err:
        raise InputError(str(err), path=str(train_path)) from None
    units = _units(frame, str(units_path), language, None if split == "all" else split)
    try:
        truncations = make_truncations(units, outcomes, protocol, n, seed)
    except InputError as err:
        raise InputError(str(err), path=str(units_path)) from None
    settings = {"corpus": corpus, "language": language, "split": split, "protocol": protocol,
                "n": n, "seed": seed, "vocab_size": vocab_size, "vocabulary_corpus": source}
    status = write_campaign(out, truncations, outcomes, settings)
    return read_settings(Path(out)) | {"status": status}


# ---------------------------------------------------------------- reading a campaign


def read_settings(folder: Path) -> dict:
    path = folder / SETTINGS
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("no such file: expected the campaign's settings (a folder written by "
                         "fairppl campaign truncations)", path=str(path)) from None
    except (UnicodeDecodeError, ValueError) as err:
        raise InputError(f"not JSON ({err}): expected the campaign's settings",
                         path=str(path)) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise InputError(f"expected a JSON object with \"format\": {FORMAT!r}", path=str(path))
    for key, kind in (("m", int), ("n_truncations", int), ("protocol", str)):
        if not isinstance(meta.get(key), kind) or isinstance(meta.get(key), bool):
            raise InputError(f"field {key!r} is {meta.get(key)!r}: expected a {kind.__name__}",
                             path=str(path))
    if meta["protocol"] not in PROTOCOLS:
        raise InputError(f"field 'protocol' is {meta['protocol']!r}: expected one of "
                         f"{', '.join(PROTOCOLS)}", path=str(path))
    return meta


def _lines(path: Path, what: str) -> list[str]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"no such file: expected {what}", path=str(path)) from None
    from ..core.text import decode_utf8

    text = decode_utf8(raw, str(path))
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def read_vocabulary(path: str | os.PathLike) -> Outcomes:
    """The outcomes of a vocabulary.txt; InputError naming the file and line for an empty line,
    a duplicate, a reserved word among the vocabulary words, or a file not ending with ``<unk>``
    and ``</s>``."""
    path = Path(path)
    labels = _lines(path, "the campaign's outcomes, one per line")
    seen: dict[str, int] = {}
    for k, label in enumerate(labels, start=1):
        if label == "" or label != label.strip() or " " in label:
            raise InputError(f"{label!r} is not an outcome: expected one word per line (no "
                             f"spaces, no empty line)", path=str(path), line=k)
        if label in seen:
            raise InputError(f"duplicate outcome {label!r} (first on line {seen[label]}): "
                             f"expected each outcome once", path=str(path), line=k)
        seen[label] = k
    n = len(labels)
    if n < 2 or labels[-2:] != [UNK_OUTCOME, END_OUTCOME]:
        raise InputError(f"the last two lines are {labels[-2:]!r}: expected {UNK_OUTCOME!r} then "
                         f"{END_OUTCOME!r} last", path=str(path), line=max(n, 1))
    for k, label in enumerate(labels[:-2], start=1):
        if label in RESERVED_WORDS:
            raise InputError(f"reserved word {label!r} among the vocabulary words: expected "
                             f"{UNK_OUTCOME!r} and {END_OUTCOME!r} only as the last two lines",
                             path=str(path), line=k)
    return Outcomes(tuple(labels[:-2]))


def _jsonl_records(path: Path, fields: tuple[str, ...], what: str) -> list[dict]:
    out = []
    for k, line in enumerate(_lines(path, what), start=1):
        try:
            rec = json.loads(line)
        except ValueError as err:
            raise InputError(f"not JSON ({err}): expected {what}", path=str(path),
                             line=k) from None
        if not isinstance(rec, dict) or any(not isinstance(rec.get(f), str) for f in fields):
            raise InputError(f"expected a JSON object with string fields {list(fields)}",
                             path=str(path), line=k)
        out.append(rec)
    return out


def read_campaign(folder: str | os.PathLike) -> Campaign:
    """Read and cross-check a campaign folder (settings, outcomes, truncations, key): the ids
    of truncations.jsonl and key.jsonl in the same order, each once, every key word an outcome,
    m and n_truncations as campaign.json says. InputError naming the file (and line) else."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("no such folder: expected a campaign folder (fairppl campaign "
                         "truncations --out)", path=str(folder))
    meta = read_settings(folder)
    outcomes = read_vocabulary(folder / VOCABULARY)
    if outcomes.m != meta["m"]:
        raise InputError(f"{outcomes.m} outcomes, {SETTINGS} says m = {meta['m']}: expected the "
                         f"files of one campaign", path=str(folder / VOCABULARY))
    trunc_path, key_path = folder / TRUNCATIONS, folder / KEY
    truncs = _jsonl_records(trunc_path, ("id", "unit_id", "context"), '{"id", "unit_id", '
                                                                        '"context"} per line')
    key = _jsonl_records(key_path, ("id", "word"), '{"id", "word"} per line')
    if len(truncs) != meta["n_truncations"] or len(key) != len(truncs):
        raise InputError(f"{len(truncs)} truncations and {len(key)} key lines, {SETTINGS} says "
                         f"{meta['n_truncations']}: expected the files of one campaign",
                         path=str(folder))
    seen: dict[str, int] = {}
    answers = []
    for k, (t, a) in enumerate(zip(truncs, key), start=1):
        if t["id"] in seen:
            raise InputError(f"duplicate id {t['id']!r} (first on line {seen[t['id']]})",
                             path=str(trunc_path), line=k)
        seen[t["id"]] = k
        if a["id"] != t["id"]:
            raise InputError(f"id {a['id']!r}, {TRUNCATIONS} has {t['id']!r} on this line: "
                             f"expected the same ids in the same order", path=str(key_path),
                             line=k)
        if a["word"] not in outcomes.index:
            raise InputError(f"word {a['word']!r} is not an outcome of {VOCABULARY}: expected "
                             f"a vocabulary word, {UNK_OUTCOME} or {END_OUTCOME}",
                             path=str(key_path), line=k)
        answers.append(outcomes.index[a["word"]])
    return Campaign(folder=folder, settings=meta, outcomes=outcomes,
                    ids=tuple(t["id"] for t in truncs),
                    unit_ids=tuple(t["unit_id"] for t in truncs), answers=tuple(answers))


# ---------------------------------------------------------------- submissions


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


def _as_float(value) -> float:
    """A JSON number as a float (an integer too large for a float is infinite)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _unknown_problem(what: str, unknown: Sequence[str]) -> str:
    """The message for outcomes a record names that vocabulary.txt does not hold."""
    return (f"{what} {_shown(unknown)}, not in vocabulary.txt: expected outcomes of "
            f"vocabulary.txt (words, {UNK_OUTCOME}, {END_OUTCOME})")


def _bets_problems(bets, outcomes: Outcomes) -> list[str]:
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
        elif not math.isfinite(_as_float(value)):
            problems.append(f"the bet on {word!r} is {_as_float(value)}: expected a finite "
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
    values = [_as_float(v) for v in bets.values()]
    total = math.fsum(values)
    if total > 1 + SUM_TOLERANCE:
        problems.append(f"the bets sum to {total:.9g}: expected at most 1")
        return problems
    problem = consistency_problem(total, min(values), m, length)
    if problem:
        problems.append(f"inconsistent list: {problem}")
    return problems


def _ranking_problems(ranking, outcomes: Outcomes) -> list[str]:
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


def read_submission(path: str | os.PathLike, campaign: Campaign) -> tuple[list[Record], list]:
    """Check a submission line by line against ``campaign`` (never its key): the valid records
    and the flags, one per flagged line (``{"line", "id", "reason"}``, all its problems in the
    reason, ``; ``-separated) plus one per truncation no line gives (``line`` ``None``). The
    file's kind (bets or rankings) is the kind of its first record with exactly one of them; a
    record of the other kind is flagged. InputError only for a file that cannot be read."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        raise InputError("no such file: expected a submission, one JSON object per line",
                         path=str(path)) from None
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
            check = _bets_problems if kind == BETS else _ranking_problems
            problems += check(rec[kind], campaign.outcomes)
        if problems:
            flags.append(_flag(lineno, tid, "; ".join(problems)))
        else:
            records.append(Record(line=lineno, id=tid, kind=has[0], entries=rec[has[0]]))
    for tid in campaign.ids:
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


# ---------------------------------------------------------------- scoring


def _bootstrap_interval(log_bets: np.ndarray, units: Sequence[str]) -> tuple[dict | None, str]:
    """Interval of the perplexity from a bootstrap over units, or (None, why not)."""
    from ..stats.bootstrap import BootstrapSettings, ratio_interval

    distinct = sorted(set(units))
    if len(distinct) < MIN_INTERVAL_UNITS:
        return None, (f"no interval: the scored truncations cover {len(distinct)} distinct "
                      f"unit(s), fewer than {MIN_INTERVAL_UNITS}")
    if np.isneginf(log_bets).any():
        return None, "no interval: a bet of 0 on a correct outcome makes the perplexity infinite"
    where = {u: i for i, u in enumerate(distinct)}
    idx = np.array([where[u] for u in units])
    nats = np.bincount(idx, weights=-log_bets, minlength=len(distinct))
    counts = np.bincount(idx, minlength=len(distinct)).astype(float)
    settings = BootstrapSettings()
    low, high = ratio_interval(nats, counts, settings)
    return ({"low": math.exp(low), "high": math.exp(high), "level": settings.level,
             "replicates": settings.replicates, "seed": settings.seed,
             "n_units": len(distinct)},
            f"{settings.level:.0%} interval of a bootstrap over {len(distinct)} units "
            f"(B = {settings.replicates}, seed {settings.seed})")


def _score_bets(campaign: Campaign, records: Sequence[Record]) -> dict:
    pos, m, labels = campaign.position(), campaign.m, campaign.outcomes.labels
    log_bets = np.empty(len(records))
    n_floor = n_uniform = 0
    lengths = []
    for k, rec in enumerate(records):
        bets = {w: _as_float(v) for w, v in rec.entries.items()}
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
    out = {"perplexity": gambling_perplexity(log_bets), "n_floor": n_floor,
           "n_uniform": n_uniform, "list_length_min": min(lengths),
           "list_length_max": max(lengths),
           "n_units_scored": len(set(units))}
    interval, note = _bootstrap_interval(log_bets, units)
    out["interval"] = interval
    out["interval_note"] = note
    if math.isinf(out["perplexity"]):
        zero = [r.line for r, lb in zip(records, log_bets) if np.isneginf(lb)]
        out["perplexity_note"] = (f"a bet of 0 on the correct outcome on {len(zero)} line(s) "
                                  f"(first: line {zero[0]}): the perplexity is infinite")
    return out


def _score_rankings(campaign: Campaign, records: Sequence[Record]) -> dict:
    from . import ranks as rank_bounds

    pos, m, labels = campaign.position(), campaign.m, campaign.outcomes.labels
    length = min(len(r.entries) for r in records)
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
    q = rank_bounds.rank_frequencies(ranks, m)
    tails = {}
    for tail in TAILS:
        if length >= m:
            lower, upper = rank_bounds.shannon_bounds(q)
        else:
            lower, upper = rank_bounds.shannon_bounds_limited(q[:length], m, length, tail=tail)
        tails[tail] = {"entropy_lower_bits": lower / math.log(2),
                       "entropy_upper_bits": upper / math.log(2),
                       "perplexity_lower": math.exp(lower), "perplexity_upper": math.exp(upper)}
    lower = min(t["entropy_lower_bits"] for t in tails.values())
    upper = max(t["entropy_upper_bits"] for t in tails.values())
    units = {campaign.unit_ids[pos[r.id]] for r in records}
    return {"perplexity": None, "list_length": length, "n_beyond_list": beyond,
            "n_units_scored": len(units),
            "entropy_lower_bits": lower, "entropy_upper_bits": upper,
            "perplexity_lower": 2.0 ** lower, "perplexity_upper": 2.0 ** upper, "tails": tails}


def score_submission(campaign: Campaign, records: Sequence[Record], flags: Sequence[dict],
                     allow_invalid: bool = False) -> dict:
    """Score the valid ``records`` of a submission (:func:`read_submission`).

    With flags and not ``allow_invalid`` nothing is scored (``perplexity`` ``None``, ``note``
    says why). Bets: ``perplexity`` (eq. 3 over the scored truncations), ``interval`` (a
    bootstrap over units of the per-unit sums of -log bets and truncation counts, when they
    cover at least ``MIN_INTERVAL_UNITS`` units, else ``None`` with ``interval_note``).
    Rankings: ``entropy_lower_bits``/``entropy_upper_bits`` (bits per word, the wider of the
    uniform and Zipf tails' bounds, per tail in ``tails``) from the ranks of the correct
    outcomes within the shortest list ``list_length`` (a rank past it counts as beyond)."""
    kinds = {r.kind for r in records}
    if len(kinds) > 1:
        raise ValueError("records of both kinds: read_submission flags one of them")
    out = {"campaign": str(campaign.folder), "protocol": campaign.protocol, "m": campaign.m,
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
    if flags:
        out["note"] = (f"scored the valid rest (--allow-invalid): {len(records)} of "
                       f"{len(campaign.ids)} truncations; {len(flags)} flagged left out")
    return out
