"""The published MCC values of Cotterell, Mielke, Eisner & Roark (2018, NAACL, Table 1): the 21
Europarl languages, shipped as ``resources/published/mcc_cotterell2018.tsv`` (lines starting with
``#`` are comments and carry the citation; then a header ``iso639_1 language mcc`` and one row per
language: the two-letter code, the ISO 639-3 code the study uses, and the MCC, a positive
integer).

``resources/published/mcc_rule_check.tsv`` records how far :mod:`.mcc`'s counting rule is from
those values on the UniMorph lexicons of that time that could be read (:func:`read_rule_check`);
its rows become the note of the published rows of the MCC table (:func:`rule_check_note`).
"""

from __future__ import annotations

import os
import re

from ..core.errors import InputError

COLUMNS = ("iso639_1", "language", "mcc")
CHECK_COLUMNS = ("language", "lexicon", "commit", "chars_read", "chars_total", "rule_mcc",
                 "published", "note")
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
    :data:`CHECK_COLUMNS`, tab-separated; the counts are non-negative integers). A missing
    header, a row with other fields or a count that is not an integer raises an InputError
    naming the file and line."""
    path = str(path)
    rows: dict[str, dict] = {}
    for number, fields in table_rows(path, "MCC rule check", CHECK_COLUMNS):
        row = dict(zip(CHECK_COLUMNS, fields))
        for key in ("chars_read", "chars_total", "rule_mcc", "published"):
            if not re.fullmatch(r"[0-9]+", row[key]):
                raise InputError(f"{key} {row[key]!r}: expected a non-negative integer",
                                 path=path, line=number)
            row[key] = int(row[key])
        rows[row["language"]] = row
    return rows


def rule_check_note(row: dict | None) -> str:
    """The sentence the MCC table shows beside a published value: what this study's counting
    rule gives on the lexicon of that time, or that no lexicon of that time could be read."""
    if row is None:
        return ("the UniMorph lexicon of that time could not be read here: how far this study's "
                "counting rule is from this value is not known")
    share = row["chars_read"] / row["chars_total"] if row["chars_total"] else 0.0
    part = "all" if share >= 1 else f"{100 * share:.1f}%"
    return (f"this study's counting rule gives {row['rule_mcc']} on {row['lexicon']}@"
            f"{row['commit'][:8]} ({part} of its {row['chars_total']:,} characters read; "
            f"{row['note']}), published {row['published']}")
