"""ISO 639-3 language codes: the language sheet's ``iso639_3`` column is checked against the real
code table, offline.

The table is the one PyPI ``pycountry`` ships (its ``iso639-3.json``, from Debian's iso-codes,
which follows SIL's ISO 639-3 code tables): about 7,900 codes in force, individual languages and
macrolanguages (``ara``, ``fas``, ``zho`` ...) alike; retired codes are not in it. A code that
is not in the table is refused with close real codes where there are some: codes whose reference
name contains the sheet's ``name`` (``Swahili`` -> ``swh``, ``swa``), the ISO 639-3 code of an
ISO 639-2/B code (``ger`` -> ``deu``), else codes spelt alike.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import re
from functools import lru_cache
from pathlib import Path

from ..core.errors import InputError


@lru_cache(maxsize=1)
def _records() -> tuple[dict, ...]:
    """The records of the ``iso639-3.json`` that ``pycountry`` ships, read as JSON without
    importing pycountry (whose objects for 7,900 languages cost a fifth of a second at every
    Snakemake start)."""
    spec = importlib.util.find_spec("pycountry")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("the ISO 639-3 code table comes from the pinned dependency "
                                  "pycountry (pyproject.toml): install it (make setup, or pip "
                                  "install -e .)")
    table = Path(spec.origin).parent / "databases" / "iso639-3.json"
    return tuple(json.loads(table.read_text(encoding="utf-8"))["639-3"])


@lru_cache(maxsize=1)
def iso639_3_table() -> dict[str, str]:
    """Every ISO 639-3 code in force and its reference name (``{"eng": "English", ...}``)."""
    return {record["alpha_3"]: record["name"] for record in _records()}


@lru_cache(maxsize=1)
def _bibliographic() -> dict[str, str]:
    """ISO 639-2/B code -> ISO 639-3 code (``ger`` -> ``deu``): the 20 codes that differ."""
    return {record["bibliographic"]: record["alpha_3"] for record in _records()
            if record.get("bibliographic")}


def close_codes(code: str, name: str = "", limit: int = 5) -> list[str]:
    """Real ISO 639-3 codes close to an unknown ``code`` of a language called ``name``: the
    639-3 code of a 639-2/B code, codes whose reference name contains ``name`` as a word,
    else codes spelt alike (at most ``limit``, each as ``code (name)``)."""
    table = iso639_3_table()
    picked: list[str] = []
    if code in _bibliographic():
        picked.append(_bibliographic()[code])
    if name.strip():
        word = re.compile(rf"\b{re.escape(name.strip())}\b", re.IGNORECASE)
        picked += sorted((c for c, n in table.items() if word.search(n)),
                         key=lambda c: (table[c].lower() != name.strip().lower(), c))
    if not picked:
        picked = difflib.get_close_matches(code, table, n=3, cutoff=0.6)
    unique = list(dict.fromkeys(picked))[:limit]
    return [f"{c} ({table[c]})" for c in unique]


def check_iso639_3(rows, path: str, column: str = "iso639_3") -> None:
    """Refuse a row (``line``, ``iso639_3``, ``name``) whose code is not an ISO 639-3 code in
    force, naming the sheet, its line, the column and the code, with close real codes."""
    table = iso639_3_table()
    for row in rows:
        code = row.iso639_3
        if code in table:
            continue
        near = close_codes(code, row.name)
        hint = f"; close real codes: {', '.join(near)}" if near else ""
        raise InputError(f"field '{column}': {code!r} is not an ISO 639-3 code: expected a code "
                         f"of the ISO 639-3 code table (SIL){hint}", path=path, line=row.line)
