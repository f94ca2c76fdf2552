"""The published MCC values of Cotterell, Mielke, Eisner & Roark (2018, NAACL, Table 1): the 21
Europarl languages, shipped as ``resources/published/mcc_cotterell2018.tsv`` (lines starting with
``#`` are comments and carry the citation; then a header ``iso639_1 language mcc`` and one row per
language: the two-letter code, the ISO 639-3 code the study uses, and the MCC, a positive
integer).

``resources/published/mcc_rule_check.tsv`` holds both counting rules of :mod:`.mcc` on the
UniMorph lexicons of that time (the 2017-08-03 versions, complete for 9 of the 21 languages):
the published rule (:func:`.mcc.feature_string_count`, which reproduces 8 of the 9 values) and
this study's rule (:func:`.mcc.count`), with the parts of speech each lexicon holds
(:func:`read_rule_check`, :func:`rule_check_counts`). Its rows become the note of the published
rows of the MCC table (:func:`rule_check_note`), and their parts of speech say what Apertium's
count is compared with (:func:`fairppl.morphology.table.validation_table`).
"""

from __future__ import annotations

import os
import re

from ..core.errors import InputError
from .mcc import COUNTED_POS, count, feature_string_count, parse_unimorph, pos_words

COLUMNS = ("iso639_1", "language", "mcc")
CHECK_COLUMNS = ("language", "lexicon", "commit", "date", "pos", "feature_strings", "rule_mcc",
                 "published", "note")
#: The counted columns of the rule check (non-negative integers).
CHECK_COUNTS = ("feature_strings", "rule_mcc", "published")
CITATION = ("Cotterell, Mielke, Eisner & Roark (2018), Are All Languages Equally Hard to "
            "Language-Model?, NAACL, Table 1")


def table_rows(path: str, what: str, columns: tuple[str, ...]):
    """(line number, fields) of each data row of a tracked TSV (``#`` lines are comments, then a
    header that must be ``columns``), every row checked to have as many fields. InputErrors name
    ``path`` and the line; ``what`` names the file when it is missing or has no header."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        raise InputError(f"{what} file not found", path=path) from None
    header_seen = False
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if not header_seen:
            if tuple(fields) != columns:
                missing = [c for c in columns if c not in fields]
                extra = f" (missing: {', '.join(missing)})" if missing else ""
                raise InputError(f"expected the header {' '.join(columns)} (tab-separated), got "
                                 f"{line!r}{extra}", path=path, line=number)
            header_seen = True
            continue
        if len(fields) != len(columns):
            raise InputError(f"expected {len(columns)} tab-separated fields, got {len(fields)}: "
                             f"{line!r}", path=path, line=number)
        yield number, fields
    if not header_seen:
        raise InputError(f"no header line {' '.join(columns)}", path=path)


def read_published_mcc(path: str | os.PathLike) -> dict[str, int]:
    """ISO 639-3 code -> published MCC. A missing header, a row with other than three fields, a
    code of the wrong shape, a repeated language or an MCC that is not a positive integer raises an
    InputError naming the file and line."""
    path = str(path)
    values: dict[str, int] = {}
    for number, fields in table_rows(path, "published MCC", COLUMNS):
        two, three, mcc = fields
        if not re.fullmatch(r"[a-z]{2}", two) or not re.fullmatch(r"[a-z]{3}", three):
            raise InputError(f"expected a two-letter and a three-letter language code, got "
                             f"{two!r} and {three!r}", path=path, line=number)
        if three in values:
            raise InputError(f"language {three!r} appears twice: expected each language once",
                             path=path, line=number)
        if not re.fullmatch(r"[0-9]+", mcc) or int(mcc) < 1:
            raise InputError(f"MCC {mcc!r}: expected a positive integer", path=path,
                             line=number)
        values[three] = int(mcc)
    if not values:
        raise InputError("no languages", path=path)
    return values


def read_rule_check(path: str | os.PathLike) -> dict[str, dict]:
    """ISO 639-3 code -> its row of the rule check (``#`` lines are comments, then the header
    :data:`CHECK_COLUMNS`, tab-separated): the counts (:data:`CHECK_COUNTS`) as integers and
    ``pos`` as a tuple of counted parts of speech. A missing header, a row with other fields, a
    count that is not a non-negative integer, a part of speech that is not counted or a
    repeated language raises an InputError naming the file and line."""
    path = str(path)
    rows: dict[str, dict] = {}
    for number, fields in table_rows(path, "MCC rule check", CHECK_COLUMNS):
        row = dict(zip(CHECK_COLUMNS, fields))
        for key in CHECK_COUNTS:
            if not re.fullmatch(r"[0-9]+", row[key]):
                raise InputError(f"{key} {row[key]!r}: expected a non-negative integer",
                                 path=path, line=number)
            row[key] = int(row[key])
        pos = tuple(row["pos"].split(","))
        if not row["pos"] or any(p not in COUNTED_POS for p in pos):
            raise InputError(f"pos {row['pos']!r}: expected parts of speech from "
                             f"{','.join(COUNTED_POS)}, comma-separated", path=path, line=number)
        row["pos"] = pos
        if row["language"] in rows:
            raise InputError(f"language {row['language']!r} appears twice: expected each "
                             "language once", path=path, line=number)
        rows[row["language"]] = row
    return rows


def rule_check_counts(lines, source: str) -> dict:
    """What a rule-check row counts on one lexicon's lines: ``feature_strings`` (the published
    rule), ``rule_mcc`` (this study's rule) and ``pos`` (the counted parts of speech it has rows
    of, in :data:`.mcc.COUNTED_POS` order)."""
    lines = list(lines)
    counts = count(parse_unimorph(lines, source)[0])
    return {"feature_strings": feature_string_count(lines, source),
            "rule_mcc": counts["total"].mcc,
            "pos": tuple(p for p in COUNTED_POS if counts[p].mcc)}


def rule_check_note(row: dict | None) -> str:
    """The sentence the MCC table shows beside a published value: what the published rule and
    this study's rule give on the lexicon of that time, or that no lexicon of that time was
    found complete."""
    if row is None:
        return ("no complete UniMorph lexicon of that time was found: neither counting rule "
                "could be checked against this value")
    held = pos_words(row["pos"]) + (" only" if len(row["pos"]) < len(COUNTED_POS) else "")
    same = row["feature_strings"] == row["published"]
    text = (f"on the lexicon of that time, {row['lexicon']}@{row['commit'][:8]} of "
            f"{row['date']} ({held}), the published rule (distinct feature strings, a blank "
            f"line's empty one included) gives {row['feature_strings']}"
            + (" as published" if same else f" against the published {row['published']}")
            + f", this study's rule {row['rule_mcc']}")
    return f"{text} ({row['note']})" if row["note"] else text
