"""Resumable work in chunks: results written as they finish, reused when a job is restarted.

A long scoring job (a pretrained LM over thousands of units) is cut into chunks; each finished
chunk is written atomically to ``parts_dir`` under a name that carries a fingerprint of what it
was computed from. A restarted job reads the chunks that exist with the right fingerprint and
computes only the rest; a chunk computed from something else (another model, other units) is
never reused.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Callable, Sequence

import polars as pl

from .io import atomic_path


def fingerprint(*parts) -> str:
    """A short, stable hash of JSON-serialisable ``parts``."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def run_chunked(items: Sequence, chunk_size: int, parts_dir: str | Path, key: str,
                compute: Callable[[list], pl.DataFrame], log=None) -> pl.DataFrame:
    """Apply ``compute`` to ``items`` in chunks of ``chunk_size`` and concatenate the results in
    order. ``key`` fingerprints everything the result depends on besides the chunk's items (the
    model, the conventions); each chunk's file name adds a fingerprint of its items.
    Returns the concatenated table; the caller removes ``parts_dir`` (``clear_parts``) once the
    final output is safely written."""
    parts_dir = Path(parts_dir)
    parts_dir.mkdir(parents=True, exist_ok=True)
    frames = []
    for start in range(0, len(items), chunk_size):
        chunk = list(items[start:start + chunk_size])
        part = parts_dir / f"part-{start // chunk_size:05d}-{fingerprint(key, chunk)}.parquet"
        if part.exists():
            if log:
                log(f"reusing {part.name} ({len(chunk)} items)")
            frames.append(pl.read_parquet(part))
            continue
        frame = compute(chunk)
        with atomic_path(part) as tmp:
            frame.write_parquet(tmp)
        frames.append(frame)
    return pl.concat(frames) if frames else pl.DataFrame()


def clear_parts(parts_dir: str | Path) -> None:
    """Remove the chunk folder of a finished job."""
    shutil.rmtree(parts_dir, ignore_errors=True)
