"""Resumable per-document runs: one JSON line per finished document, appended and flushed as it
finishes, so a killed job restarted with the same inputs computes only the documents it lacks.

* :func:`run_documents` appends ``{"id": ..., **record}`` per document to ``out_jsonl`` (the
  partial file). On start it reads what is there and skips the ids already done; a last line cut
  short by a kill (no newline, or not JSON) is dropped and redone. A damaged line elsewhere, an
  id the run does not know, or an id twice is an error naming the file and line: that file is
  not this run's partial output.
* :func:`document_rng` derives each document's generator from (base seed, document id) alone,
  so a resumed run draws the same samples as an uninterrupted one, whatever was done before.
* :func:`finish` checks that every id is there exactly once and writes the final file in the
  given id order, atomically (JSONL, or a table for ``.parquet``/``.csv``).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from .errors import InputError
from .io import atomic_path, write_lines


def document_rng(seed: int, doc_id: str) -> np.random.Generator:
    """A generator seeded from ``seed`` and a hash of ``doc_id`` (stable across runs and
    Python processes: no ``hash()``)."""
    digest = hashlib.sha256(str(doc_id).encode("utf-8")).digest()
    return np.random.default_rng(np.random.SeedSequence([int(seed), *np.frombuffer(
        digest[:16], dtype=np.uint32).tolist()]))


def _check_ids(ids: Sequence[str]) -> list[str]:
    ids = [str(i) for i in ids]
    seen: dict[str, int] = {}
    for k, i in enumerate(ids):
        if i in seen:
            raise InputError(f"document id {i!r} occurs at positions {seen[i]} and {k}: expected "
                             f"unique ids")
        seen[i] = k
    return ids


def read_done(out_jsonl, ids: Sequence[str] | None = None) -> dict[str, dict]:
    """The records already in ``out_jsonl`` by id (empty when it does not exist). A truncated
    last line is cut off the file (it is redone). Raises InputError naming the file and line for
    a damaged earlier line, a line without an id, an id not in ``ids`` (when given) or an id
    twice."""
    path = Path(out_jsonl)
    if not path.exists():
        return {}
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    tail = lines.pop()  # after the last newline: b"" for a complete file
    keep = len(raw) - len(tail)
    known = None if ids is None else set(map(str, ids))
    done: dict[str, dict] = {}
    for lineno, line in enumerate(lines, start=1):
        try:
            rec = json.loads(line)
        except ValueError:
            if lineno == len(lines) and not tail:
                # a kill between writing the bytes and the newline of a later line cannot happen
                # (one write per line), so only a last line can be cut; keep the rest
                keep -= len(line) + 1
                break
            raise InputError("not a JSON record: expected one JSON object per line (the partial "
                             "output of this run)", path=str(path), line=lineno) from None
        doc = rec.get("id") if isinstance(rec, dict) else None
        if doc is None:
            raise InputError("record without an 'id'", path=str(path), line=lineno)
        if known is not None and doc not in known:
            raise InputError(f"id {doc!r} is not one of this run's documents: expected the "
                             f"partial output of the same input", path=str(path), line=lineno)
        if doc in done:
            raise InputError(f"id {doc!r} occurs twice", path=str(path), line=lineno)
        done[doc] = rec
    if keep != len(raw):
        with open(path, "r+b") as handle:
            handle.truncate(keep)
    return done


def run_documents(texts: Sequence[str], ids: Sequence[str],
                  make_record: Callable[[str, str], dict] | None, out_jsonl, *,
                  desc: str = "documents", progress: bool = True,
                  make_records: Callable[[list[tuple[str, str]]], Iterable[dict]] | None = None
                  ) -> int:
    """Call ``make_record(text, id)`` for every document whose id is not yet in ``out_jsonl``
    and append its record (with ``"id"``) as one JSON line, flushed and fsynced. Returns the
    number of documents computed in this call. A tqdm bar shows documents done, samples per
    second (from each record's ``n_samples``) and the ETA. ``make_records`` (instead of
    ``make_record``): called once with the ``(text, id)`` pairs not yet done, in input order; it
    yields their records in that order (e.g. computed several at a time,
    :func:`fairppl.marginal.api.estimate_many`), each appended as soon as it comes."""
    from tqdm import tqdm

    if len(texts) != len(ids):
        raise InputError(f"{len(texts)} texts but {len(ids)} ids: expected one id per text")
    if (make_record is None) == (make_records is None):
        raise ValueError("give exactly one of make_record and make_records")
    ids = _check_ids(ids)
    done = read_done(out_jsonl, ids)
    Path(out_jsonl).parent.mkdir(parents=True, exist_ok=True)
    todo = [(text, doc) for text, doc in zip(texts, ids) if doc not in done]
    records = (make_records(todo) if make_records is not None
               else (make_record(text, doc) for text, doc in todo))
    samples, computed = 0, 0
    bar = tqdm(total=len(ids), initial=len(done), desc=desc, unit="doc", disable=not progress)
    try:
        with open(out_jsonl, "a", encoding="utf-8") as handle:
            for (text, doc), rec in zip(todo, records):
                if rec.get("id", doc) != doc:
                    raise ValueError(f"make_record gave id {rec['id']!r} for document {doc!r}")
                line = json.dumps({"id": doc, **{k: v for k, v in rec.items() if k != "id"}},
                                  ensure_ascii=False)
                handle.write(line + "\n")
                handle.flush()
                os.fsync(handle.fileno())
                computed += 1
                samples += int(rec.get("n_samples") or 0)
                bar.update(1)
                rate = samples / max(bar.format_dict["elapsed"], 1e-9)
                bar.set_postfix_str(f"{rate:.1f} samples/s", refresh=False)
    finally:
        bar.close()
    if computed != len(todo):
        raise ValueError(f"make_records gave {computed} records for {len(todo)} documents: "
                         f"expected one per document, in order")
    return computed


def finish(out_jsonl, final_path, ids: Sequence[str]) -> list[dict]:
    """Check that ``out_jsonl`` holds every id of ``ids`` exactly once and write the records in
    that order to ``final_path`` atomically: a polars table for ``.parquet``/``.csv``, JSON lines
    otherwise. Returns the records. InputError names the missing ids."""
    ids = _check_ids(ids)
    done = read_done(out_jsonl, ids)
    missing = [i for i in ids if i not in done]
    if missing:
        raise InputError(f"{len(missing)} of {len(ids)} documents have no record (first: "
                         f"{missing[:5]}): run them before finishing", path=str(out_jsonl))
    records = [done[i] for i in ids]
    final = Path(final_path)
    if final.suffix in (".parquet", ".csv"):
        import polars as pl

        frame = pl.DataFrame(records, infer_schema_length=None)
        with atomic_path(final) as tmp:
            frame.write_parquet(tmp) if final.suffix == ".parquet" else frame.write_csv(tmp)
    else:
        write_lines(final, (json.dumps(r, ensure_ascii=False) for r in records))
    return records
