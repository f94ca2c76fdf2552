"""The campaign folder (Bimbot et al., section 4): its four files, written once and read back
cross-checked. See :mod:`fairppl.shannon.campaign` for the format."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..core.errors import InputError
from ..core.io import atomic_dir
from ..ngram.word import RESERVED_WORDS
from .outcomes import END_OUTCOME, UNK_OUTCOME, UNITS, Outcomes

TRUNCATIONS = "truncations.jsonl"
VOCABULARY = "vocabulary.txt"
KEY = "key.jsonl"
SETTINGS = "campaign.json"
#: The files of a campaign folder, in the order they are written.
CAMPAIGN_FILES = (TRUNCATIONS, VOCABULARY, KEY, SETTINGS)
#: ``format`` of campaign.json: /2 adds ``scheme`` (and the key's ``weight`` of a length-weighted
#: draw); a /1 folder is still read, its randomized draws taken as they were made (``units``:
#: every unit equally likely, a mean over units, which the scorer says). /3 adds ``unit``
#: (``word`` or ``char``, :mod:`.outcomes`); a /1 or /2 folder is read as unit ``word``.
FORMAT = "fairppl-campaign/3"
FORMATS = ("fairppl-campaign/1", "fairppl-campaign/2", FORMAT)
PROTOCOLS = ("exhaustive", "randomized")
#: The settings that define a campaign (an earlier folder with the same ones may be rewritten).
SETTING_KEYS = ("corpus", "language", "unit", "split", "protocol", "n", "seed", "vocab_size",
                "vocabulary_corpus")


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
    #: per truncation, the weight of its log bet (``None``: all equal; the length-weighted
    #: scheme's unit lengths otherwise)
    weights: tuple[int, ...] | None = None

    @property
    def m(self) -> int:
        return self.outcomes.m

    @property
    def protocol(self) -> str:
        return self.settings["protocol"]

    @property
    def unit(self) -> str:
        """The unit of the game: ``word`` (a position per word) or ``char`` (per character)."""
        return self.settings["unit"]

    @property
    def scheme(self) -> str:
        """How the truncations were drawn: exhaustive, systematic, weighted (or units: a /1
        randomized campaign)."""
        return self.settings["scheme"]

    def position(self) -> dict[str, int]:
        """id -> its index in the file order."""
        return {tid: i for i, tid in enumerate(self.ids)}

    def subset(self, ids) -> "Campaign":
        """The campaign restricted to the truncations ``ids`` (in file order): scoring it scores
        those only, as for the truncations a person has played. KeyError for an unknown id."""
        wanted = set(ids)
        unknown = wanted - set(self.ids)
        if unknown:
            raise KeyError(f"not truncations of this campaign: {sorted(unknown)[:5]}")
        keep = [i for i, tid in enumerate(self.ids) if tid in wanted]
        return Campaign(folder=self.folder, settings=self.settings, outcomes=self.outcomes,
                        ids=tuple(self.ids[i] for i in keep),
                        unit_ids=tuple(self.unit_ids[i] for i in keep),
                        answers=tuple(self.answers[i] for i in keep),
                        weights=None if self.weights is None else
                        tuple(self.weights[i] for i in keep))



def _jsonl(records: Iterable[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _campaign_texts(truncations: Sequence[dict], outcomes: Outcomes, settings: dict) -> dict:
    scheme = truncations[0].get("scheme", "exhaustive") if truncations else "exhaustive"
    meta = {"format": FORMAT, **settings, "scheme": scheme, "m": outcomes.m,
            "n_truncations": len(truncations),
            "n_units": len({t["unit_id"] for t in truncations})}
    return {
        TRUNCATIONS: _jsonl({"id": t["id"], "unit_id": t["unit_id"], "context": t["context"]}
                            for t in truncations),
        VOCABULARY: "".join(label + "\n" for label in outcomes.labels),
        KEY: _jsonl({"id": t["id"], "word": t["word"]}
                    | ({"weight": t["weight"]} if scheme == "weighted" else {})
                    for t in truncations),
        SETTINGS: json.dumps(meta, ensure_ascii=False, indent=1) + "\n",
    }


def write_campaign(folder: str | os.PathLike, truncations: Sequence[dict], outcomes: Outcomes,
                   settings: dict) -> str:
    """Write the four campaign files into ``folder``; returns ``"written"`` or ``"unchanged"``.

    ``truncations`` as :func:`make_truncations` returns them, ``settings`` holds every key of
    ``SETTING_KEYS`` (``unit`` may be left out: ``word``). A missing or empty ``folder`` is
    written atomically (the files appear together or not at all). An existing non-empty folder is accepted only when it is an earlier
    campaign with the same settings and the same four files (nothing is written): a campaign
    whose truncations went out to sites is never overwritten. Anything else is refused."""
    settings = {"unit": "word"} | dict(settings)
    missing = [k for k in SETTING_KEYS if k not in settings]
    if missing:
        raise InputError(f"campaign settings lack {missing}: expected {list(SETTING_KEYS)}")
    if settings["unit"] not in UNITS:
        raise InputError(f"campaign setting unit {settings['unit']!r}: expected one of "
                         f"{', '.join(UNITS)}")
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
    if not isinstance(earlier, dict) or earlier.get("format") not in FORMATS:
        raise InputError(f"a non-empty folder that holds no campaign (no readable {SETTINGS}): "
                         f"expected a new or empty folder (--out)", path=str(folder))
    if earlier["format"] != FORMAT:
        raise InputError(f"an earlier campaign of format {earlier['format']} (this version "
                         f"writes {FORMAT}): its truncations may be out already, so it is not "
                         f"rewritten; expected a new or empty folder", path=str(folder))
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
    if not isinstance(meta, dict) or meta.get("format") not in FORMATS:
        raise InputError(f"expected a JSON object with \"format\": {FORMAT!r} (or an earlier "
                         f"{' or '.join(map(repr, FORMATS[:-1]))})", path=str(path))
    for key, kind in (("m", int), ("n_truncations", int), ("protocol", str)):
        if not isinstance(meta.get(key), kind) or isinstance(meta.get(key), bool):
            raise InputError(f"field {key!r} is {meta.get(key)!r}: expected a {kind.__name__}",
                             path=str(path))
    if meta["protocol"] not in PROTOCOLS:
        raise InputError(f"field 'protocol' is {meta['protocol']!r}: expected one of "
                         f"{', '.join(PROTOCOLS)}", path=str(path))
    if meta["format"] == FORMATS[0]:
        meta["scheme"] = "exhaustive" if meta["protocol"] == "exhaustive" else "units"
    if meta["format"] != FORMAT:
        meta["unit"] = "word"
    if meta.get("unit") not in UNITS:
        raise InputError(f"field 'unit' is {meta.get('unit')!r}: expected one of "
                         f"{', '.join(UNITS)}", path=str(path))
    schemes = ("exhaustive",) if meta["protocol"] == "exhaustive" else \
        ("systematic", "weighted", "units")
    if meta.get("scheme") not in schemes:
        raise InputError(f"field 'scheme' is {meta.get('scheme')!r}: expected one of "
                         f"{', '.join(schemes)} for the {meta['protocol']} protocol",
                         path=str(path))
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


def jsonl_records(path: Path, fields: tuple[str, ...], what: str) -> list[dict]:
    """The JSON objects of a JSON-lines file, each with the string ``fields``; InputError naming
    file and line otherwise (``what``: what the file should hold)."""
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


def _step(before: str, after: str, unit: str) -> str | None:
    """The unit that ``after`` adds to ``before`` (one word after a space, or one character,
    a space before it allowed), or None when ``after`` is not ``before`` plus one unit."""
    if unit == "word":
        head = before + " " if before else ""
        added = after[len(head):]
        return added if after.startswith(head) and added and " " not in added else None
    added = after[len(before):]
    if before and added.startswith(" "):
        added = added[1:]
    return added if after.startswith(before) and len(added) == 1 and added != " " else None


def _short(text: str, keep: int = 40) -> str:
    return repr(text if len(text) <= keep else "…" + text[-keep:])


def _check_contexts(truncs: list[dict], key: list[dict], outcomes: Outcomes, unit: str,
                    trunc_path: Path, key_path: Path) -> None:
    """An exhaustive campaign's truncations as :func:`fairppl.shannon.truncations.
    make_truncations` writes them: each unit's together, its first context empty, each next
    one the previous context followed by the previous answer (any word outside the vocabulary
    for ``<unk>``), its last answer ``</s>`` and no other. The play page shows the answer's
    word from the next context, and a hand-edited context would be served as is."""
    seen: set[str] = set()
    for k, t in enumerate(truncs, start=1):
        uid, ctx = t["unit_id"], t["context"]
        same = k > 1 and truncs[k - 2]["unit_id"] == uid
        if not same:
            if uid in seen:
                raise InputError(f"unit {uid!r} again after other units: expected each unit's "
                                 f"truncations together", path=str(trunc_path), line=k)
            seen.add(uid)
            if k > 1 and key[k - 2]["word"] != END_OUTCOME:
                raise InputError(f"the last truncation of unit {truncs[k - 2]['unit_id']!r} has "
                                 f"the answer {key[k - 2]['word']!r}: expected {END_OUTCOME!r} "
                                 f"(the end of the unit)", path=str(key_path), line=k - 1)
            if ctx != "":
                raise InputError(f"the first truncation of unit {uid!r} has the context "
                                 f"{_short(ctx)}: expected an empty context",
                                 path=str(trunc_path), line=k)
            continue
        before, answer = truncs[k - 2]["context"], key[k - 2]["word"]
        added = _step(before, ctx, unit)
        fits = added is not None and answer != END_OUTCOME and (
            outcomes.outcome(added) == UNK_OUTCOME if answer == UNK_OUTCOME else added == answer)
        if not fits:
            raise InputError(f"context {_short(ctx)} does not extend line {k - 1}'s "
                             f"{_short(before)} by its answer {answer!r} ({KEY}): expected the "
                             f"previous context followed by its answer, as fairppl campaign "
                             f"truncations writes them", path=str(trunc_path), line=k)
    if truncs and key[-1]["word"] != END_OUTCOME:
        raise InputError(f"the last truncation of unit {truncs[-1]['unit_id']!r} has the answer "
                         f"{key[-1]['word']!r}: expected {END_OUTCOME!r} (the end of the unit)",
                         path=str(key_path), line=len(truncs))


def read_campaign(folder: str | os.PathLike) -> Campaign:
    """Read and cross-check a campaign folder (settings, outcomes, truncations, key): the ids
    of truncations.jsonl and key.jsonl in the same order, each once, every key word an outcome,
    m and n_truncations as campaign.json says, every vocabulary word one character in a
    campaign of unit ``char``. InputError naming the file (and line) else."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("no such folder: expected a campaign folder (fairppl campaign "
                         "truncations --out)", path=str(folder))
    meta = read_settings(folder)
    outcomes = read_vocabulary(folder / VOCABULARY)
    if outcomes.m != meta["m"]:
        raise InputError(f"{outcomes.m} outcomes, {SETTINGS} says m = {meta['m']}: expected the "
                         f"files of one campaign", path=str(folder / VOCABULARY))
    if meta["unit"] == "char":
        for k, label in enumerate(outcomes.words, start=1):
            if len(label) != 1:
                raise InputError(f"{label!r} is not one character: expected a character per "
                                 f"line before {UNK_OUTCOME!r} and {END_OUTCOME!r} (the "
                                 f"campaign's unit is char)", path=str(folder / VOCABULARY),
                                 line=k)
    trunc_path, key_path = folder / TRUNCATIONS, folder / KEY
    truncs = jsonl_records(trunc_path, ("id", "unit_id", "context"), '{"id", "unit_id", '
                                                                        '"context"} per line')
    key = jsonl_records(key_path, ("id", "word"), '{"id", "word"} per line')
    if len(truncs) != meta["n_truncations"] or len(key) != len(truncs):
        raise InputError(f"{len(truncs)} truncations and {len(key)} key lines, {SETTINGS} says "
                         f"{meta['n_truncations']}: expected the files of one campaign",
                         path=str(folder))
    seen: dict[str, int] = {}
    answers, weights = [], []
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
        if meta["scheme"] == "weighted":
            weight = a.get("weight")
            if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
                raise InputError(f"weight {weight!r}: expected the unit's number of truncations "
                                 f"(an integer >= 1) in every line of a length-weighted "
                                 f"campaign", path=str(key_path), line=k)
            weights.append(weight)
    if meta["protocol"] == "exhaustive":
        _check_contexts(truncs, key, outcomes, meta["unit"], trunc_path, key_path)
    return Campaign(folder=folder, settings=meta, outcomes=outcomes,
                    ids=tuple(t["id"] for t in truncs),
                    unit_ids=tuple(t["unit_id"] for t in truncs), answers=tuple(answers),
                    weights=tuple(weights) if meta["scheme"] == "weighted" else None)

