"""What the command-line modules share: reading a file of units."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import InputError
from ..core.text import decode_utf8, normalize


def read_units(path: str) -> list[str]:
    """The normalised units of a UTF-8 file, one per line. Raises InputError naming the file for
    a missing or empty file and naming the line for an empty or whitespace-only unit."""
    try:
        raw = Path(path).read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        raise InputError("no such file: expected a UTF-8 text file, one unit per line",
                         path=path) from None
    units = [normalize(line) for line in decode_utf8(raw, path).splitlines()]
    if not units:
        raise InputError("empty file: expected a UTF-8 text file, one unit per line", path=path)
    for lineno, unit in enumerate(units, start=1):
        if not unit:
            raise InputError("empty unit (blank or whitespace only): expected one non-empty unit "
                             "per line (it would be charged only its end-of-unit symbol)",
                             path=path, line=lineno)
    return units
