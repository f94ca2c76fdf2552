"""ISO 15924 script codes: the language sheet's ``script`` column is checked against the real code
table, offline, as the ``iso639_3`` column is against ISO 639-3 (:mod:`.iso639`).

The table is the one PyPI ``pycountry`` ships (its ``iso15924.json``, from Debian's iso-codes,
which follows the ISO 15924 registration authority's code list at unicode.org/iso15924): about
220 four-letter codes (``Latn``, ``Cyrl``, ``Hans``, ``Jpan``, ``Kore`` ...). The codes
``Qaaa``-``Qabx`` are reserved by the standard for private use; the table names only the two ends
of that range, and every code inside it is accepted too. A code that is not in the table is
refused with close real codes where there are some: codes spelt alike (``Latm`` -> ``Latn``),
codes of scripts whose English name starts like it (``Cyri`` -> ``Cyrl``), and the scripts the
sheet's other rows of the same language (``iso639_3``) use.
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache

from ..core.errors import InputError

#: The private-use range of ISO 15924: Qaaa to Qabx.
PRIVATE_USE = re.compile(r"Qa[a-b][a-z]")


@lru_cache(maxsize=1)
def iso15924_table() -> dict[str, str]:
    """Every ISO 15924 code and its English name (``{"Latn": "Latin", ...}``)."""
    try:
        import pycountry
    except ModuleNotFoundError:
        raise ModuleNotFoundError("the ISO 15924 code table comes from the pinned dependency "
                                  "pycountry (pyproject.toml): install it (make setup, or pip "
                                  "install -e .)") from None
    return {script.alpha_4: script.name for script in pycountry.scripts}


def is_script_code(code: str) -> bool:
    """Whether ``code`` is an ISO 15924 code: in the table, or in the private-use range."""
    return code in iso15924_table() or (PRIVATE_USE.fullmatch(code) is not None
                                        and code <= "Qabx")


def close_scripts(code: str, used: list[str] = (), limit: int = 5) -> list[str]:
    """Real ISO 15924 codes close to an unknown ``code``: ``used`` first (the codes of the
    sheet's other rows of the same language), then codes spelt alike and codes whose script's
    name starts with the code's first three letters (at most ``limit``, each as
    ``code (name)``)."""
    table = iso15924_table()
    picked = [c for c in used if c in table]
    picked += difflib.get_close_matches(code, table, n=3, cutoff=0.6)
    stem = code[:3].lower()
    picked += sorted(c for c, name in table.items() if name.lower().startswith(stem))
    unique = list(dict.fromkeys(picked))[:limit]
    return [f"{c} ({table[c]})" for c in unique]


def check_iso15924(rows, path: str, column: str = "script") -> None:
    """Refuse a row (``line``, ``script``, ``iso639_3``) whose script is not an ISO 15924 code,
    naming the sheet, its line, the column and the code, with close real codes."""
    for row in rows:
        code = row.script
        if is_script_code(code):
            continue
        used = sorted({r.script for r in rows
                       if r.iso639_3 == row.iso639_3 and r is not row and is_script_code(r.script)})
        near = close_scripts(code, used)
        hint = (f"; close real codes: {', '.join(near)}" if near else
                "; e.g. Latn (Latin), Cyrl (Cyrillic), Arab (Arabic), Hans (Han, simplified)")
        raise InputError(f"field '{column}': {code!r} is not an ISO 15924 script code: expected "
                         f"a code of the ISO 15924 table (unicode.org/iso15924){hint}",
                         path=path, line=row.line)
