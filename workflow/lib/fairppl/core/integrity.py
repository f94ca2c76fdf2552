"""Sealed intermediates: a SHA-256 digest recorded when a file (or folder) is written, checked
where it is read, and scanned when Snakemake starts.

The job that writes an intermediate that other jobs consume (a KenLM model, a Parquet table, a
tokenizer model, a Transformer's model folder) calls ``seal(path)`` once the file is in place: it
writes the digest beside it, in the hidden sidecar ``.<name>.sha256`` (JSON: the digest, the
bytes, for a folder the number of files). ``verify(path)`` recomputes the digest and raises
``CorruptFileError`` naming the file, both digests and what to do when they differ, so a damaged
file is never consumed, even when its size and modification time were kept. A file without a
sidecar (written by an older version, or not an intermediate) is not checked.

``scan(root)`` checks every sidecar under ``root``: a file whose bytes changed is *corrupt*, a
sidecar whose file is gone marks a *missing* intermediate (deleted by hand, or by a failed job).
The workflow runs it in its main process at start-up, removes the corrupt files and asks for both
kinds to be rebuilt (``workflow/rules/common.smk``).

Digest of a folder: SHA-256 over its files in sorted order of relative path, each entry the
path, its size and its bytes; hidden entries (``.`` names, temporary files) are left out.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError

ALGORITHM = "sha256"
SUFFIX = f".{ALGORITHM}"
_CHUNK = 1 << 20


class CorruptFileError(InputError):
    """A sealed file whose bytes no longer match the digest recorded when it was written."""


def sidecar(path: str | os.PathLike) -> Path:
    """Where the digest of ``path`` is recorded: ``.<name>.sha256`` in the same folder."""
    path = Path(path)
    return path.parent / f".{path.name}{SUFFIX}"


def target_of(side: str | os.PathLike) -> Path:
    """The file (or folder) a sidecar describes."""
    side = Path(side)
    return side.parent / side.name[1:-len(SUFFIX)]


def _is_sidecar(name: str) -> bool:
    return name.startswith(".") and name.endswith(SUFFIX) and len(name) > len(SUFFIX) + 1


def _hash_file(path: Path, hasher) -> int:
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            hasher.update(chunk)
            size += len(chunk)
    return size


def _folder_files(folder: Path) -> list[Path]:
    files = []
    for base, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        files += [Path(base) / n for n in names if not n.startswith(".")]
    return sorted(files, key=lambda p: p.relative_to(folder).as_posix())


def digest(path: str | os.PathLike) -> dict:
    """``{"sha256": hex digest, "bytes": size}`` of a file, plus ``"files"`` for a folder."""
    path = Path(path)
    hasher = hashlib.sha256()
    if path.is_dir():
        total, files = 0, _folder_files(path)
        for file in files:
            rel = file.relative_to(path).as_posix().encode("utf-8")
            size = file.stat().st_size
            hasher.update(len(rel).to_bytes(8, "little") + rel + size.to_bytes(8, "little"))
            total += _hash_file(file, hasher)
        return {ALGORITHM: hasher.hexdigest(), "bytes": total, "files": len(files)}
    if not path.exists():
        raise InputError("no such file: cannot compute its digest", path=str(path))
    size = _hash_file(path, hasher)
    return {ALGORITHM: hasher.hexdigest(), "bytes": size}


def seal(path: str | os.PathLike) -> dict:
    """Record the digest of ``path`` (a finished file or folder) in its sidecar, atomically;
    returns the record."""
    record = digest(path)
    side = sidecar(path)
    # written aside and renamed, as fairppl.core.io does (which imports this module)
    fd, tmp = tempfile.mkstemp(prefix=f"{side.name}.", suffix=".part", dir=side.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        os.replace(tmp, side)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return record


def recorded(path: str | os.PathLike) -> dict | None:
    """The record in ``path``'s sidecar, or None when there is none (an unsealed file)."""
    side = sidecar(path)
    try:
        record = json.loads(side.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        raise CorruptFileError(f"unreadable digest record ({err}); delete it and the file it "
                               f"describes, then run the workflow again", path=str(side)) from None
    if not isinstance(record, dict) or not isinstance(record.get(ALGORITHM), str):
        raise CorruptFileError(f"not a digest record (expected a JSON object with a "
                               f"{ALGORITHM!r} field); delete it and the file it describes, then "
                               f"run the workflow again", path=str(side))
    return record


def corruption_message(path: str | os.PathLike, expected: str, actual: str,
                       action: str | None = None) -> str:
    """What ``verify`` and the start-up scan say about a file whose digest changed; ``action``
    replaces the advice (what to do)."""
    if action is None:
        action = (f"It is not used. Run the workflow again: it removes the file and rebuilds it "
                  f"(or delete it and its digest record {sidecar(path).name} yourself)")
    return (f"{path}: the file changed after it was written (damaged on disk, in a copy, or "
            f"edited): its {ALGORITHM} digest is {actual}, the digest recorded when it was "
            f"written is {expected}. {action}")


def verify(path: str | os.PathLike) -> None:
    """Raise ``CorruptFileError`` if ``path`` has a sidecar and its bytes no longer match it;
    a missing sidecar passes (nothing was recorded)."""
    record = recorded(path)
    if record is None:
        return
    if not Path(path).exists():
        raise InputError("no such file (its digest record exists: it was written, then "
                         "deleted); run the workflow again to rebuild it", path=str(path))
    actual = digest(path)[ALGORITHM]
    if actual != record[ALGORITHM]:
        raise CorruptFileError(corruption_message(path, record[ALGORITHM], actual))


@dataclass
class ScanResult:
    """What ``scan`` found: corrupt files as (path, recorded digest, actual digest), missing
    intermediates (a sidecar without its file), how many sealed files it hashed, their bytes
    and the seconds it took."""

    corrupt: list = field(default_factory=list)
    missing: list = field(default_factory=list)
    checked: int = 0
    bytes: int = 0
    seconds: float = 0.0


def _check(side: Path) -> tuple[str, Path, str, str, int]:
    path = target_of(side)
    try:
        record = recorded(path)
    except CorruptFileError:
        return "corrupt", path, "<unreadable record>", "", 0
    if not path.exists():
        return "missing", path, "", "", 0
    now = digest(path)
    state = "ok" if now[ALGORITHM] == record[ALGORITHM] else "corrupt"
    return state, path, record[ALGORITHM], now[ALGORITHM], now["bytes"]


def scan(root: str | os.PathLike, threads: int = 2) -> ScanResult:
    """Check every sealed file under ``root`` (``threads`` hash in parallel: hashlib releases
    the GIL). A missing ``root`` is an empty result."""
    start = time.perf_counter()
    sides = []
    for base, dirs, names in os.walk(root):
        dirs.sort()
        sides += [Path(base) / n for n in sorted(names) if _is_sidecar(n)]
    result = ScanResult()
    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        for state, path, expected, actual, size in pool.map(_check, sides):
            if state == "missing":
                result.missing.append(path)
                continue
            result.checked += 1
            result.bytes += size
            if state == "corrupt":
                result.corrupt.append((path, expected, actual))
    result.seconds = time.perf_counter() - start
    return result


def repair(root: str | os.PathLike, threads: int = 2) -> tuple[ScanResult, list[Path],
                                                                 list[str]]:
    """The workflow's start-up check of ``root`` (``results/``): ``scan`` it, remove every
    corrupt file or folder (never consumed again), and return the scan, the intermediates to
    rebuild (the corrupt ones and the missing ones, in path order) and one line to print for
    each, plus a summary line."""
    result = scan(root, threads=threads)
    lines = []
    for path, expected, actual in result.corrupt:
        lines.append(corruption_message(path, expected, actual,
                                        "Removed; this run rebuilds it."))
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
    for path in result.missing:
        lines.append(f"{path}: missing (it was written, then deleted); this run rebuilds it. "
                     f"To drop it for good, delete its digest record {sidecar(path)} too.")
    lines.append(f"integrity: checked {result.checked} sealed intermediates "
                 f"({result.bytes / 1e9:.2f} GB) under {root} in {result.seconds:.1f} s; "
                 f"{len(result.corrupt)} corrupt, {len(result.missing)} missing")
    rebuild = sorted([p for p, _, _ in result.corrupt] + list(result.missing))
    return result, rebuild, lines


def forget(path: str | os.PathLike) -> None:
    """Remove the digest record of ``path`` (an intermediate the workflow no longer makes)."""
    with contextlib.suppress(FileNotFoundError):
        sidecar(path).unlink()
