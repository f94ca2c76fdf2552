"""Corpora fetched from a URL: a checked download, and the reader of line-aligned archives.

A corpus of type ``url`` is one archive (a .tar.gz/.tgz/.tar or .zip, Flores-200 style) with one
file per language and one unit per line. :func:`download_url` fetches it once (from its URL, or
from a local mirror, :mod:`fairppl.corpus.mirror`), checked against its SHA-256;
:func:`read_tar_lines` reads it in the shape every reader of :mod:`fairppl.corpus.readers`
returns, ``{language: [(unit_id, raw_text), ...]}``.

Every bad input raises :class:`fairppl.core.errors.InputError` naming the file (and member), and what
was expected.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import re
import tarfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path, PurePosixPath

from tqdm import tqdm

from .align import Texts
from ..core.errors import InputError
from ..core.io import atomic_path
from ..core.text import decode_utf8
from .mirror import ENV, mirror_file, mirror_root


# --------------------------------------------------------------------------------------------
# Downloads
# --------------------------------------------------------------------------------------------

def download_url(url: str, sha256: str, dest: str, *, mirror: str | None = None,
                 name: str | None = None) -> str:
    """Fetch the archive of ``url`` to ``dest`` and check its SHA-256 (hex digest); return where
    it came from (the URL, or the mirror's file). The bytes stream into a temporary file beside
    ``dest`` that is renamed onto ``dest`` only when the checksum matches, so a failure leaves no
    ``dest`` and no partial file. A progress bar shows when the size is known and over 1 MB.

    With a mirror (``mirror``, a folder path or ``file://`` address; None: the environment
    variable ``FAIRPPL_MIRROR``, see :mod:`fairppl.corpus.mirror`) the archive is read from the
    mirror's file of the URL's file name instead, with the same check and the same ``dest``; a
    missing file or a mismatch is refused, naming the mirror's file and what was expected.
    ``name`` is the archive's file name in the mirror where the URL's is not it (a url corpus's
    ``archive_name``)."""
    expected = (sha256 if isinstance(sha256, str) else "").strip().lower()
    if not re.fullmatch(r"[0-9a-f]{64}", expected):
        raise InputError(f"checksum {sha256!r} for {url}: expected a SHA-256 hex digest of 64 "
                         f"hex digits")
    root = mirror_root(mirror)
    source = str(mirror_file(url, root, name)) if root is not None else url
    digest = hashlib.sha256()
    with atomic_path(dest) as tmp:
        try:
            if root is not None:
                with open(source, "rb") as response, open(tmp, "wb") as handle:
                    while chunk := response.read(1 << 20):
                        digest.update(chunk)
                        handle.write(chunk)
            else:
                _stream(url, tmp, digest, Path(dest).name)
        except (urllib.error.URLError, OSError, ValueError) as err:
            if root is not None:
                raise InputError(f"cannot read the mirror's copy of {url} ({err}): expected a "
                                 f"readable file", path=source) from None
            raise InputError(f"download of {url} failed ({err}): expected a reachable URL",
                             path=dest) from None
        got = digest.hexdigest()
        if got != expected:
            if root is not None:
                raise InputError(f"checksum mismatch in the mirror ({ENV}) for {url}: expected "
                                 f"sha256 {expected}, got {got}; nothing was copied",
                                 path=source)
            raise InputError(f"checksum mismatch for {url}: expected sha256 {expected}, got "
                             f"{got}; the download was discarded", path=dest)
    return source


def _stream(url: str, tmp, digest, label: str) -> None:
    """Stream ``url`` into the file ``tmp``, updating ``digest``."""
    with urllib.request.urlopen(url) as response, open(tmp, "wb") as handle:
        size = response.headers.get("Content-Length")
        size = int(size) if size and size.isdigit() else None
        with tqdm(total=size, unit="B", unit_scale=True, desc=label,
                  disable=not (size and size > 1_000_000)) as bar:
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                handle.write(chunk)
                bar.update(len(chunk))


# --------------------------------------------------------------------------------------------
# Line-aligned archives (Flores-200 style)
# --------------------------------------------------------------------------------------------

def open_tar(path: str, name: str, expected: str) -> tarfile.TarFile:
    """The tar archive at ``path`` (any compression), opened for reading; InputError naming
    ``path`` when it is missing ("<name> not found: expected <expected>") or unreadable ("cannot
    read the archive (...): expected <expected>")."""
    if not os.path.isfile(path):
        raise InputError(f"{name} not found: expected {expected}", path=path)
    try:
        return tarfile.open(path, "r:*")
    except (tarfile.TarError, OSError) as err:
        raise InputError(f"cannot read the archive ({err}): expected {expected}",
                         path=path) from None


def _open_archive(archive: str):
    """(names, read(name) -> bytes, close) for a .tar(.gz|.bz2|.xz)/.tgz or .zip."""
    if not os.path.isfile(archive):
        raise InputError("archive not found: expected a .tar.gz, .tgz, .tar or .zip file",
                         path=archive)
    try:
        if zipfile.is_zipfile(archive):
            zf = zipfile.ZipFile(archive)
            names = {n for n in zf.namelist() if not n.endswith("/")}
            return names, zf.read, zf.close
        tf = tarfile.open(archive, "r:*")
    except (tarfile.TarError, zipfile.BadZipFile, OSError) as err:
        raise InputError(f"cannot read the archive ({err}): expected a .tar.gz, .tgz, .tar or "
                         f".zip file", path=archive) from None
    members = {m.name: m for m in tf.getmembers() if m.isfile()}
    # Member names may be stored as "./x/y": accept "x/y" for them.
    for name in list(members):
        if name.startswith("./"):
            members.setdefault(name[2:], members[name])
    return set(members), (lambda name: tf.extractfile(members[name]).read()), tf.close


@contextlib.contextmanager
def open_archive(archive: str):
    """``with open_archive(path) as (names, read):`` the archive's member names and a function
    reading one member's bytes (:func:`_open_archive`), closed on leaving the block."""
    names, read, close = _open_archive(archive)
    try:
        yield names, read
    finally:
        close()


def split_lines(text: str) -> list[str]:
    """Split on '\\n' only ('\\r\\n' accepted); U+2028 and friends stay inside a line, so the
    line count is the file's. A final newline does not start an extra line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _labels(members: list[str]) -> list[str]:
    suffixes = [PurePosixPath(t).suffix.lstrip(".") for t in members]
    if all(suffixes) and len(set(suffixes)) == len(suffixes):
        return suffixes
    return [str(i) for i in range(len(members))]


def _member(template: str, source_id: str, archive: str) -> str:
    try:
        return template.format(source_id=source_id)
    except (KeyError, IndexError, ValueError) as err:
        raise InputError(f"bad member template {template!r} ({err}): expected a path with only "
                         f"the field {{source_id}}", path=archive) from None


def require_member(template: str, source_id: str, names: set[str], lang: str,
                   archive: str) -> str:
    """The archive member that ``template`` names for ``source_id``; InputError (with the close
    members) where the archive has none of that name."""
    member = _member(template, source_id, archive)
    if member not in names:
        close_names = difflib.get_close_matches(member, sorted(names), n=3, cutoff=0.6)
        hint = f"; close members: {', '.join(close_names)}" if close_names else ""
        raise InputError(f"member {member} (language {lang}) not found in the archive: "
                         f"expected a file at that path{hint}", path=archive)
    return member


def _read_source(archive: str, names: set[str], read, lang: str, source_id: str,
                 members: list[str]) -> list[tuple[str, str]]:
    units: list[tuple[str, str]] = []
    for template, label in zip(members, _labels(members)):
        member = require_member(template, source_id, names, lang, archive)
        text = decode_utf8(read(member), f"{archive}:{member}")
        units.extend((f"{label}:{i:06d}", line)
                     for i, line in enumerate(split_lines(text), start=1))
    return units


def read_tar_lines(archive: str, sources: dict[str, str], members: list[str]) -> Texts:
    """Read line-aligned texts (one unit per line, UTF-8) from a .tar.gz/.tgz/.tar or .zip.

    ``members`` are path templates inside the archive with ``{source_id}`` (e.g.
    ``"flores200_dataset/dev/{source_id}.dev"``); ``sources`` maps a language id to its
    ``source_id`` (e.g. ``"eng_Latn"``). Units are the lines of each member in template order;
    ``unit_id = f"{label}:{line_no:06d}"`` (1-based line number), where ``label`` is the
    template's file suffix without the dot ("dev", "devtest" for Flores-200), or the 0-based
    template index when the suffixes are missing or not distinct.
    """
    if not members:
        raise InputError("no member templates given: expected at least one path template with "
                         "{source_id}", path=archive)
    with open_archive(archive) as (names, read):
        return {lang: _read_source(archive, names, read, lang, source_id, members)
                for lang, source_id in sources.items()}


def archive_sources(names: set[str], members: list[str], archive: str = "") -> list[str]:
    """The source ids (sorted) that have a file at every one of the ``members`` templates among
    the archive member ``names``."""
    found = None
    for template in members:
        _member(template, "x", archive)  # a bad template fails here, naming itself
        head, _, tail = template.partition("{source_id}")
        rx = re.compile(re.escape(head) + r"(?P<sid>[^/]+)" + re.escape(tail))
        ids = {m["sid"] for name in names if (m := rx.fullmatch(name))}
        found = ids if found is None else found & ids
    return sorted(found or ())


def read_tar_lines_all(archive: str, members: list[str]) -> tuple[Texts, dict[str, str]]:
    """Every source the archive ships: ``{source_id: units}`` (as :func:`read_tar_lines`) for
    each source id with a file at every template of ``members`` (:func:`archive_sources`), and
    ``{source_id: why it is left out}`` for those whose files cannot be read (invalid UTF-8)."""
    if not members:
        raise InputError("no member templates given: expected at least one path template with "
                         "{source_id}", path=archive)
    with open_archive(archive) as (names, read):
        out: Texts = {}
        left_out: dict[str, str] = {}
        for sid in archive_sources(names, members, archive):
            try:
                out[sid] = _read_source(archive, names, read, sid, sid, members)
            except InputError as err:
                left_out[sid] = str(err)
        return out, left_out
