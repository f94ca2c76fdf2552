"""Sealed intermediates (fairppl.core.integrity): a file damaged after it was written, with its
size and modification time kept, is refused by the loader that reads it, and found by the scan."""

from __future__ import annotations

import hashlib
import json
import os
import random
from pathlib import Path

import polars as pl
import pytest

from fairppl.core.errors import InputError
from fairppl.core.integrity import (
    CorruptFileError,
    digest,
    recorded,
    scan,
    seal,
    sidecar,
    target_of,
    verify,
)
from fairppl.core.io import atomic_path, read_parquet, write_table


def zero_block(path: Path, offset: int | None = None, size: int = 4096) -> None:
    """Overwrite ``size`` bytes of ``path`` with zeros (in the middle by default), keeping its
    size and modification time: the damage a user could not see with ``ls -l``."""
    stat = path.stat()
    assert stat.st_size > size, f"{path} is too small to zero {size} bytes inside"
    offset = (stat.st_size - size) // 2 if offset is None else offset
    with open(path, "r+b") as handle:
        handle.seek(offset)
        before = handle.read(size)
        assert before != bytes(size), "the block is already zero: the damage would be invisible"
        handle.seek(offset)
        handle.write(bytes(size))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)


def _random_file(path: Path, n: int, seed: int = 0) -> bytes:
    data = random.Random(seed).randbytes(n)
    path.write_bytes(data)
    return data


def test_digest_of_a_file_is_its_sha256(tmp_path):
    data = _random_file(tmp_path / "a.bin", 3 * (1 << 20) + 17)  # spans several read chunks
    assert digest(tmp_path / "a.bin") == {"sha256": hashlib.sha256(data).hexdigest(),
                                          "bytes": len(data)}


def test_folder_digest_covers_names_and_bytes_not_hidden_files(tmp_path):
    folder = tmp_path / "model"
    (folder / "sub").mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "sub" / "w.bin").write_bytes(b"\x01\x02")
    first = digest(folder)
    assert first["files"] == 2 and first["bytes"] == 4
    (folder / ".cache").write_text("ignored")
    assert digest(folder) == first
    (folder / "sub" / "w.bin").write_bytes(b"\x01\x03")
    assert digest(folder)["sha256"] != first["sha256"]
    (folder / "sub" / "w.bin").write_bytes(b"\x01\x02")
    (folder / "sub" / "w.bin").rename(folder / "sub" / "v.bin")  # same bytes, other name
    assert digest(folder)["sha256"] != first["sha256"]


def test_zeroed_block_with_size_and_mtime_kept_is_refused(tmp_path):
    path = tmp_path / "m.bin"
    data = _random_file(path, 64 * 1024)
    record = seal(path)
    assert sidecar(path) == tmp_path / ".m.bin.sha256"
    assert target_of(sidecar(path)) == path
    assert json.loads(sidecar(path).read_text()) == record
    verify(path)  # intact: passes
    zero_block(path)
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    assert actual != hashlib.sha256(data).hexdigest()
    with pytest.raises(CorruptFileError) as err:
        verify(path)
    message = str(err.value)
    assert str(path) in message
    assert record["sha256"] in message and actual in message
    assert "Run the workflow again" in message


def test_unsealed_file_passes_and_a_broken_record_is_named(tmp_path):
    path = tmp_path / "plain.bin"
    _random_file(path, 100)
    assert recorded(path) is None
    verify(path)  # nothing recorded, nothing to check
    sidecar(path).write_text("not json")
    with pytest.raises(CorruptFileError, match=r"\.plain\.bin\.sha256: unreadable digest record"):
        verify(path)


def test_sealed_then_deleted_file_is_named(tmp_path):
    path = tmp_path / "gone.bin"
    _random_file(path, 100)
    seal(path)
    path.unlink()
    with pytest.raises(InputError, match="gone.bin: no such file .its digest record exists"):
        verify(path)


def test_atomic_path_seals_only_when_asked(tmp_path):
    with atomic_path(tmp_path / "plain.txt") as tmp:
        tmp.write_text("a")
    with atomic_path(tmp_path / "sealed.txt", seal=True) as tmp:
        tmp.write_text("b")
    assert recorded(tmp_path / "plain.txt") is None
    assert recorded(tmp_path / "sealed.txt")["sha256"] == hashlib.sha256(b"b").hexdigest()


def test_read_parquet_refuses_a_damaged_sealed_table(tmp_path):
    table = pl.DataFrame({"unit": [f"u{i}" for i in range(5000)],
                          "bits": [random.Random(i).random() for i in range(5000)]})
    path = tmp_path / "scores.parquet"
    write_table(table, parquet=path)
    assert read_parquet(path).equals(table)
    zero_block(path, offset=4)  # the column data, past the magic bytes
    with pytest.raises(CorruptFileError, match="scores.parquet: the file changed"):
        read_parquet(path)


def test_scan_reports_corrupt_and_missing_and_passes_the_rest(tmp_path):
    root = tmp_path / "results"
    (root / "a").mkdir(parents=True)
    for name in ("ok.bin", "bad.bin", "gone.bin"):
        _random_file(root / "a" / name, 10_000, seed=len(name))
        seal(root / "a" / name)
    folder = root / "model"
    folder.mkdir()
    _random_file(folder / "w.bin", 9000)
    seal(folder)
    (root / "unsealed.bin").write_bytes(b"x")
    zero_block(root / "a" / "bad.bin")
    (root / "a" / "gone.bin").unlink()
    result = scan(root)
    assert [p for p, _, _ in result.corrupt] == [root / "a" / "bad.bin"]
    (path, expected, actual), = result.corrupt
    assert expected == json.loads(sidecar(path).read_text())["sha256"]
    assert actual == hashlib.sha256(path.read_bytes()).hexdigest()
    assert result.missing == [root / "a" / "gone.bin"]
    assert result.checked == 3 and result.bytes == 3 * 10_000 - 10_000 + 9000
    assert scan(tmp_path / "absent").checked == 0


def test_kenlm_loader_refuses_a_zeroed_block_in_a_char_model(tmp_path, resources_ready):
    pytest.importorskip("kenlm")
    from fairppl.ngram.kenlm_tool import load_model, train_model

    rng = random.Random(3)
    text = tmp_path / "train.txt"
    text.write_text("".join(" ".join(rng.choice("abcdefgh ") for _ in range(60)) + "\n"
                            for _ in range(400)), encoding="utf-8")
    model = tmp_path / "out" / "char.o5.kenlm"
    bins = resources_ready["FAIRPPL_KENLM_BIN"]
    train_model(text, model, order=5, lmplz=bins / "lmplz", build_binary=bins / "build_binary",
                tmpdir=tmp_path / "tmp", memory="64M")
    assert recorded(model)["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    intact = load_model(model).score("a b c", bos=True, eos=True)
    zero_block(model)
    with pytest.raises(CorruptFileError, match=r"char\.o5\.kenlm: the file changed"):
        load_model(model)
    assert isinstance(intact, float)


def test_model_folder_loader_refuses_a_changed_weight_file(tmp_path):
    pytest.importorskip("torch")
    from conftest import tiny_random_lm
    from fairppl.lm.pretrained import load_lm

    folder = tiny_random_lm(tmp_path / "lm")
    assert recorded(folder)["files"] >= 2
    load_lm(folder, device="cpu")
    zero_block(folder / "model.safetensors")
    with pytest.raises(CorruptFileError, match=r"lm: the file changed"):
        load_lm(folder, device="cpu")
