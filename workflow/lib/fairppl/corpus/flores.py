"""FLORES-200 read straight from its archive: ``flores200_dataset/dev/<code>.dev`` and
``flores200_dataset/devtest/<code>.devtest`` (one sentence a line, aligned by line number across
the 204 language-script codes), without extracting it.

:func:`read_flores` checks the archive's SHA-256 and returns each code's two files as text;
:func:`petrov_text` joins them as Petrov et al. (NeurIPS 2023) built the text they tokenized.

Every bad input raises :class:`fairppl.core.errors.InputError` naming the archive (and member)
and what was expected.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import tarfile

from ..core.errors import InputError
from ..core.text import decode_utf8

#: SHA-256 of the ``flores200_dataset.tar.gz`` the study was checked on (the snapshot of
#: AleksandarPetrov/tokenization-fairness, commit 365c3f8). The authors' public
#: tarball holds the same files but is packed differently: give its own digest.
FLORES200_SHA256 = "b0a089985018a1b767922ec1fd44a184791ea10c31a101cca1d0ec5275884ca4"
#: The archive's file name, as the public download and the mirror name it.
FLORES200_ARCHIVE = "flores200_dataset.tar.gz"
#: The English code, the reference of the parity tables.
ENGLISH = "eng_Latn"

_MEMBER = re.compile(r"(?:\./)?flores200_dataset/(dev|devtest)/([^/]+)\.(dev|devtest)")


def sha256_of(path: str | os.PathLike) -> str:
    """The SHA-256 hex digest of the file at ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def with_english(codes: list[str] | None) -> list[str] | None:
    """``codes`` with English (:data:`ENGLISH`) added, the reference of every premium, sorted;
    None (every code) stays None."""
    return None if codes is None else sorted(set(codes) | {ENGLISH})


def read_flores(archive: str | os.PathLike, sha256: str = FLORES200_SHA256,
                codes: list[str] | None = None) -> dict[str, tuple[str, str]]:
    """``{code: (dev, devtest)}``: the whole text of each code's two files (UTF-8, as stored,
    final newline included), for ``codes`` (None: every code with both files), in sorted code
    order. The archive is read in one pass, without extracting it. InputError naming the
    archive when it is missing, unreadable or has another SHA-256 than ``sha256``; when a code
    asked for lacks a file (with the close codes); when a file is not UTF-8 (member and line)."""
    archive = str(archive)
    if not os.path.isfile(archive):
        raise InputError(f"FLORES-200 archive not found: expected {FLORES200_ARCHIVE} (the "
                         f"dataset's public download)", path=archive)
    expected = (sha256 if isinstance(sha256, str) else "").strip().lower()
    if not re.fullmatch(r"[0-9a-f]{64}", expected):
        raise InputError(f"checksum {sha256!r}: expected a SHA-256 hex digest of 64 hex digits",
                         path=archive)
    got = sha256_of(archive)
    if got != expected:
        raise InputError(f"checksum mismatch: expected sha256 {expected}, got {got}",
                         path=archive)
    wanted = None if codes is None else set(codes)
    found: dict[str, dict[str, str]] = {}
    held: dict[str, set[str]] = {}  # every code's files in the archive, read or not
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                match = _MEMBER.fullmatch(member.name)
                if not (member.isfile() and match) or match[1] != match[3]:
                    continue
                split, code = match[1], match[2]
                held.setdefault(code, set()).add(split)
                if wanted is not None and code not in wanted:
                    continue
                data = tar.extractfile(member).read()
                found.setdefault(code, {})[split] = decode_utf8(data, f"{archive}:{member.name}")
    except (tarfile.TarError, OSError, EOFError) as err:
        raise InputError(f"cannot read the archive ({err}): expected a FLORES-200 .tar.gz",
                         path=archive) from None
    complete = sorted(code for code, files in found.items() if len(files) == 2)
    missing = sorted((wanted or set()) - set(complete))
    if missing:
        codes_held = sorted(code for code, files in held.items() if len(files) == 2)
        hint = difflib.get_close_matches(missing[0], codes_held, n=3, cutoff=0.6)
        raise InputError(f"code(s) {', '.join(missing)} without both flores200_dataset/dev/"
                         f"<code>.dev and devtest/<code>.devtest: expected FLORES-200 codes "
                         f"such as {', '.join(hint or codes_held[:3]) or 'eng_Latn'}",
                         path=archive)
    if not complete:
        raise InputError("no flores200_dataset/dev/<code>.dev with its devtest/<code>.devtest: "
                         "expected the FLORES-200 layout", path=archive)
    return {code: (found[code]["dev"], found[code]["devtest"]) for code in complete}


def petrov_text(dev: str, devtest: str) -> str:
    """One code's text as Petrov et al. tokenized it: each file whole with every newline
    replaced by a space, then ``dev + " " + devtest`` (so it ends with a space)."""
    return dev.replace("\n", " ") + " " + devtest.replace("\n", " ")
