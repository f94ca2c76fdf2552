"""Resumable chunked work (fairppl.core.resume): a job that dies mid-way computes only the missing
chunks when restarted, reuses nothing computed from anything else, and ends with the same table
as an uninterrupted run."""

from __future__ import annotations

import polars as pl
import pytest

from fairppl.core.resume import clear_parts, fingerprint, run_chunked

ITEMS = [(f"u{i}", f"text {i} " * (i % 4)) for i in range(23)]


class Scorer:
    """A deterministic stand-in for a model: records which chunks it computed, and can die."""

    def __init__(self, die_at: int | None = None):
        self.calls: list[str] = []
        self.die_at = die_at

    def __call__(self, chunk):
        if self.die_at is not None and len(self.calls) == self.die_at:
            raise RuntimeError("killed")
        self.calls.append(chunk[0][0])
        return pl.DataFrame({"unit_id": [uid for uid, _ in chunk],
                             "bits": [float(len(text)) * 1.5 for _, text in chunk]})


def test_restart_computes_only_missing_chunks(tmp_path):
    parts = tmp_path / "parts"
    with pytest.raises(RuntimeError, match="killed"):
        run_chunked(ITEMS, 5, parts, "model-a", Scorer(die_at=3))
    assert len(list(parts.glob("part-*.parquet"))) == 3  # chunks 0-2 were kept
    again = Scorer()
    resumed = run_chunked(ITEMS, 5, parts, "model-a", again)
    assert again.calls == ["u15", "u20"]  # chunks 3 and 4 only
    fresh = run_chunked(ITEMS, 5, tmp_path / "fresh", "model-a", Scorer())
    assert resumed.equals(fresh)
    assert resumed["unit_id"].to_list() == [uid for uid, _ in ITEMS]


def test_nothing_is_reused_across_models_or_changed_units(tmp_path):
    parts = tmp_path / "parts"
    run_chunked(ITEMS, 5, parts, "model-a", Scorer())
    other_model = Scorer()
    run_chunked(ITEMS, 5, parts, "model-b", other_model)
    assert len(other_model.calls) == 5
    changed = list(ITEMS)
    changed[7] = ("u7", "a different text")
    rescored = Scorer()
    out = run_chunked(changed, 5, parts, "model-a", rescored)
    assert rescored.calls == ["u5"]  # only the chunk holding the changed unit
    assert out.filter(unit_id="u7")["bits"].item() == len("a different text") * 1.5
    other_chunking = Scorer()
    run_chunked(ITEMS, 4, parts, "model-a", other_chunking)
    assert len(other_chunking.calls) == 6  # chunk boundaries are part of the identity


def test_stale_temporary_files_are_ignored_and_parts_cleared(tmp_path):
    parts = tmp_path / "parts"
    parts.mkdir()
    key = "model-a"
    name = f"part-00000-{fingerprint(key, list(ITEMS[:5]))}.parquet"
    (parts / f".{name}.x1.part").write_bytes(b"half a parquet file")  # a write cut by a kill
    scorer = Scorer()
    out = run_chunked(ITEMS, 5, parts, key, scorer)
    assert scorer.calls[0] == "u0" and out.height == len(ITEMS)
    clear_parts(parts)
    assert not parts.exists()


def test_fingerprint_is_stable_and_sensitive():
    assert fingerprint("m", {"a": 1, "b": 2}) == fingerprint("m", {"b": 2, "a": 1})
    assert fingerprint("m", [1, 2]) != fingerprint("m", [2, 1])
    assert len(fingerprint("x")) == 16
