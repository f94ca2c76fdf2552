"""The published MCC values of Cotterell, Mielke, Eisner & Roark (2018, NAACL, Table 1): the 21
Europarl languages, shipped as ``resources/published/mcc_cotterell2018.tsv`` (lines starting with
``#`` are comments and carry the citation; then a header ``iso639_1 language mcc`` and one row per
language: the two-letter code, the ISO 639-3 code the study uses, and the MCC, a positive
integer).
"""

from __future__ import annotations

import os
import re

from ..core.errors import InputError

COLUMNS = ("iso639_1", "language", "mcc")
CITATION = ("Cotterell, Mielke, Eisner & Roark (2018), Are All Languages Equally Hard to "
            "Language-Model?, NAACL, Table 1")


def read_published_mcc(path: str | os.PathLike) -> dict[str, int]:
    """ISO 639-3 code -> published MCC. A missing header, a row with other than three fields, a
    code of the wrong shape, a repeated language or an MCC that is not a positive integer raises an
    InputError naming the file and line."""
    path = str(path)
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        raise InputError("published MCC file not found", path=path) from None
    values: dict[str, int] = {}
    header_seen = False
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if not header_seen:
            if tuple(fields) != COLUMNS:
                raise InputError(f"expected the header {' '.join(COLUMNS)} (tab-separated), got "
                                 f"{line!r}", path=path, line=number)
            header_seen = True
            continue
        if len(fields) != 3:
            raise InputError(f"expected 3 tab-separated fields, got {len(fields)}: {line!r}",
                             path=path, line=number)
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
    if not header_seen:
        raise InputError(f"no header line {' '.join(COLUMNS)}", path=path)
    if not values:
        raise InputError("no languages", path=path)
    return values
