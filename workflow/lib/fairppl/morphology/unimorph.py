"""MCC from UniMorph lexicons downloaded from their repositories (for cluster users: the default
study is offline and leaves this source disabled).

The URL of a language's lexicon is a pattern with ``{language}`` (ISO 639-3), by default
``https://raw.githubusercontent.com/unimorph/{language}/master/{language}``: one TSV file of
``lemma<TAB>form<TAB>features`` rows. The file is downloaded once; its SHA-256 is recorded beside
the counts (UniMorph's repositories change, so there is no fixed checksum to check against), and
:mod:`.mcc` counts it by this study's rule (and by the published rule, in the record's
details).
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request

from ..core.errors import InputError
from ..core.io import atomic_path
from .mcc import bundles_by_pos, count, read_feature_string_count, read_unimorph
from .table import count_record

DEFAULT_URL = "https://raw.githubusercontent.com/unimorph/{language}/master/{language}"


def unimorph_url(pattern: str, language: str) -> str:
    """The URL of ``language``'s lexicon; an InputError when the pattern has no ``{language}``."""
    if "{language}" not in pattern:
        raise InputError(f"the UniMorph URL pattern {pattern!r} has no {{language}} placeholder")
    return pattern.replace("{language}", language)


def download(url: str, dest: str | os.PathLike, timeout: float = 120.0) -> str:
    """Download ``url`` to ``dest`` (atomically: a failure leaves no file) and return its
    SHA-256; an InputError naming the URL when the download fails."""
    digest = hashlib.sha256()
    with atomic_path(dest) as tmp:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response, \
                    open(tmp, "wb") as handle:
                while chunk := response.read(1 << 20):
                    digest.update(chunk)
                    handle.write(chunk)
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise InputError(f"download of the UniMorph lexicon {url} failed ({err})",
                             path=str(dest)) from None
    return digest.hexdigest()


def unimorph_record(language: str, path: str | os.PathLike, url: str = "",
                    sha256: str = "") -> dict:
    """The MCC record (:mod:`.table`) of a UniMorph file: this study's rule in ``counts``, and
    in ``details`` the published rule's count too (``feature_strings``, :mod:`.mcc`: distinct
    feature strings, a blank line's empty one included)."""
    rows, other = read_unimorph(path)
    if not rows:
        raise InputError("no verb, noun or adjective rows: no MCC can be counted", path=str(path))
    note = f"UniMorph lexicon {url}".strip()
    return count_record(language, "unimorph", count(rows), note=note,
                        details={"url": url, "sha256": sha256, "rows": len(rows),
                                 "other_pos_rows": other,
                                 "feature_strings": read_feature_string_count(path),
                                 "bundles": bundles_by_pos(rows)})
