"""Atomic file output, and table input that names a broken file.

Every writer writes to a temporary file in the destination's folder and renames it into place, so
a killed job leaves either the old file, or none, never a truncated one. A Parquet file can still
arrive broken from elsewhere (a copy cut short, a full disk on another machine): ``read_parquet``
names it instead of failing with a decoder's message.

Sealing (``fairppl.core.integrity``): ``atomic_path(..., seal=True)``, ``atomic_dir(...,
seal=True)`` and ``write_table``'s Parquet output record the finished file's digest beside it;
``read_parquet`` checks it, so a table damaged after it was written is refused, not read.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import polars as pl

from .errors import InputError
from .integrity import seal as _seal
from .integrity import verify


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, seal: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` only if the block succeeds.
    ``seal``: then record its digest (``fairppl.core.integrity.seal``), for an intermediate that
    other jobs read."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp_path, 0o666 & ~umask)  # mkstemp makes 0600; give the file the usual mode
    try:
        yield tmp_path
        os.replace(tmp_path, path)
        if seal:
            _seal(path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write UTF-8 text atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_lines(path: str | os.PathLike, lines) -> None:
    """Write one line per item (UTF-8, '\\n'-terminated) atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line)
            handle.write("\n")


def write_table(df: pl.DataFrame, parquet: str | os.PathLike | None = None,
                csv: str | os.PathLike | None = None, tsv: str | os.PathLike | None = None) -> None:
    """Write a polars table as Parquet (sealed: its digest recorded), CSV and/or TSV, each
    atomically."""
    if parquet is not None:
        with atomic_path(parquet, seal=True) as tmp:
            df.write_parquet(tmp)
    if csv is not None:
        with atomic_path(csv) as tmp:
            df.write_csv(tmp)
    if tsv is not None:
        with atomic_path(tsv) as tmp:
            df.write_csv(tmp, separator="\t")


def read_parquet(path: str | os.PathLike, columns: list[str] | None = None) -> pl.DataFrame:
    """Read a Parquet table (optionally only ``columns``). A missing, truncated or otherwise
    unreadable file raises InputError naming the file and what was expected; a sealed file whose
    bytes changed since it was written raises ``CorruptFileError``; a missing column names the
    columns the file has."""
    path = Path(path)
    if not path.exists():
        raise InputError("no such file: expected a Parquet table", path=str(path))
    verify(path)
    try:
        frame = pl.read_parquet(path)
    except Exception as err:  # polars raises several error types for a damaged file
        detail = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise InputError(f"not a readable Parquet table ({path.stat().st_size} bytes; {detail}); "
                         f"expected a complete Parquet file: truncated or damaged? Delete it and "
                         f"rerun the job that writes it", path=str(path)) from None
    if columns is not None:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise InputError(f"missing columns {missing}; the table has {frame.columns}",
                             path=str(path))
        frame = frame.select(columns)
    return frame


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike, *, seal: bool = False) -> Iterator[Path]:
    """Yield a new, empty temporary folder beside ``path``; if the block succeeds, swap it into
    place as ``path``, else remove it.

    The temporary folder is ``.<name>.<random>.part`` in ``path``'s parent (so the rename stays
    on one file system); on success it gets the usual mode (0777 less the umask; ``mkdtemp``
    makes 0700). An existing ``path`` (folder or file) is first renamed into a
    ``.<name>.<random>.old`` folder, the new folder renamed onto ``path``, then the old one
    deleted: a reader finds the old folder or the new one (or, between the two renames, none),
    never a mix of the two. A kill between the renames leaves no ``path`` but the ``.old`` and
    ``.part`` siblings, which a caller may sweep on its next run. An exception in the block
    leaves ``path`` untouched and no sibling behind. ``seal``: record the finished folder's
    digest (``fairppl.core.integrity.seal``).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent))
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)
        if path.exists() or path.is_symlink():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
            os.replace(path, old / path.name)
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
        if seal:
            _seal(path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def read_csv(path: str | os.PathLike) -> pl.DataFrame:
    """A CSV table of a stage; an empty file (a stage that had nothing to compute, such as the
    marginal stage of a corpus it does not cover; a file holding only a line break, as polars
    writes a table without columns) reads as an empty table."""
    if os.path.getsize(path) <= 2 and not Path(path).read_text(encoding="utf-8").strip():
        return pl.DataFrame()
    return pl.read_csv(path, infer_schema_length=None)
