"""fairppl.core.runner: a run killed after 3 documents and rerun ends byte-identical to a
clean run; a truncated last line is redone; duplicate or foreign ids are refused."""

from __future__ import annotations

import json

import pytest

from fairppl.core.errors import InputError
from fairppl.core.runner import document_rng, finish, read_done, run_documents

TEXTS = [f"text number {i}" for i in range(7)]
IDS = [f"doc{i}" for i in range(7)]


class Killed(RuntimeError):
    pass


def _record(seed: int, kill_after: int | None = None, calls: list | None = None):
    def make(text: str, doc: str) -> dict:
        if calls is not None:
            calls.append(doc)
        if kill_after is not None and len(calls) > kill_after:
            raise Killed(doc)
        rng = document_rng(seed, doc)
        return {"text": text, "logp": float(rng.normal()), "n_samples": 3}
    return make


def test_kill_and_rerun_gives_the_clean_output(tmp_path):
    run_documents(TEXTS, IDS, _record(5), tmp_path / "clean.part", progress=False)
    finish(tmp_path / "clean.part", tmp_path / "clean.jsonl", IDS)

    calls: list = []
    with pytest.raises(Killed):
        run_documents(TEXTS, IDS, _record(5, 3, calls), tmp_path / "b.part", progress=False)
    assert len(read_done(tmp_path / "b.part")) == 3
    with pytest.raises(InputError, match=r"4 of 7 documents have no record"):
        finish(tmp_path / "b.part", tmp_path / "b.jsonl", IDS)
    calls.clear()
    assert run_documents(TEXTS, IDS, _record(5, None, calls), tmp_path / "b.part",
                         progress=False) == 4
    assert calls == IDS[3:]  # finished documents are not recomputed
    finish(tmp_path / "b.part", tmp_path / "b.jsonl", IDS)
    assert (tmp_path / "b.jsonl").read_bytes() == (tmp_path / "clean.jsonl").read_bytes()
    lines = (tmp_path / "b.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == IDS


def test_seeds_depend_on_seed_and_id_only():
    a = document_rng(0, "doc1").random(3)
    assert (a == document_rng(0, "doc1").random(3)).all()
    assert not (a == document_rng(1, "doc1").random(3)).any()
    assert not (a == document_rng(0, "doc2").random(3)).any()


def test_truncated_last_line_is_redone(tmp_path):
    part = tmp_path / "x.part"
    run_documents(TEXTS[:3], IDS[:3], _record(1), part, progress=False)
    good = part.read_bytes()
    part.write_bytes(good + b'{"id": "doc3", "text": "text num')  # killed mid-write
    calls: list = []
    assert run_documents(TEXTS, IDS, _record(1, None, calls), part, progress=False) == 4
    assert calls == IDS[3:]
    records = finish(part, tmp_path / "x.jsonl", IDS)
    assert [r["id"] for r in records] == IDS
    run_documents(TEXTS, IDS, _record(1), tmp_path / "y.part", progress=False)
    assert records == finish(tmp_path / "y.part", tmp_path / "y.jsonl", IDS)


def test_duplicate_and_foreign_ids_are_refused(tmp_path):
    with pytest.raises(InputError, match=r"'doc1' occurs at positions 1 and 2"):
        run_documents(["a", "b", "c"], ["doc0", "doc1", "doc1"], _record(0), tmp_path / "d",
                      progress=False)
    part = tmp_path / "e.part"
    part.write_text('{"id": "doc0"}\n{"id": "doc0"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"e.part, line 2: id 'doc0' occurs twice"):
        finish(part, tmp_path / "e.jsonl", IDS)
    part.write_text('{"id": "other"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"line 1: id 'other' is not one of this run"):
        run_documents(TEXTS, IDS, _record(0), part, progress=False)
    part.write_text('garbage\n{"id": "doc0"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"line 1: not a JSON record"):
        read_done(part)


def test_finish_writes_tables(tmp_path):
    import polars as pl

    run_documents(TEXTS, IDS, _record(2), tmp_path / "t.part", progress=False)
    finish(tmp_path / "t.part", tmp_path / "t.parquet", IDS)
    frame = pl.read_parquet(tmp_path / "t.parquet")
    assert frame["id"].to_list() == IDS and frame.columns == ["id", "text", "logp", "n_samples"]
