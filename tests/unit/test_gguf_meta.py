"""fairppl.lm.gguf_meta: the GGUF key-value reader, against gguf-py's own writer and reader on a
file holding every value type, against gguf-py's reader on the real SmolLM2 file (marked
``pretrained``), and on damaged files; and fairppl.lm.cache.shared_gguf_reader."""

from __future__ import annotations

import struct
from pathlib import Path

import gguf
import numpy as np
import pytest

from fairppl.core.errors import InputError
from fairppl.lm.cache import shared_gguf_reader
from fairppl.lm.gguf_meta import read_gguf_metadata

from test_canonical import smollm2_gguf  # noqa: F401  (a fixture)

#: Every value type the format has, with the value each must read back as.
VALUES = {
    "t.u8": (gguf.GGUFWriter.add_uint8, 255), "t.i8": (gguf.GGUFWriter.add_int8, -128),
    "t.u16": (gguf.GGUFWriter.add_uint16, 65535), "t.i16": (gguf.GGUFWriter.add_int16, -32768),
    "t.u32": (gguf.GGUFWriter.add_uint32, 2**32 - 1), "t.i32": (gguf.GGUFWriter.add_int32, -2**31),
    "t.u64": (gguf.GGUFWriter.add_uint64, 2**64 - 1), "t.i64": (gguf.GGUFWriter.add_int64, -2**63),
    "t.f32": (gguf.GGUFWriter.add_float32, 0.1), "t.f64": (gguf.GGUFWriter.add_float64, 0.1),
    "t.bool": (gguf.GGUFWriter.add_bool, True), "t.str": (gguf.GGUFWriter.add_string, "Straße 🙂"),
    "t.ints": (gguf.GGUFWriter.add_array, [3, -1, 7]),
    "t.floats": (gguf.GGUFWriter.add_array, [0.5, -2.25]),
    "t.strs": (gguf.GGUFWriter.add_array, ["a", "", "ü b"]),
    "t.bools": (gguf.GGUFWriter.add_array, [True, False]),
}


def write_gguf(path: Path) -> Path:
    writer = gguf.GGUFWriter(str(path), arch="test")
    for key, (add, value) in VALUES.items():
        add(writer, key, value)
    writer.add_tensor("w", np.arange(6, dtype=np.float32).reshape(2, 3))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def expected(key, value):
    """What a value reads back as: 32-bit floats rounded to 32 bits, as the file holds them."""
    if key == "t.f32":
        return struct.unpack("<f", struct.pack("<f", value))[0]
    return value


def test_every_value_type_reads_back_as_written_and_as_gguf_py_reads_it(tmp_path):
    path = write_gguf(tmp_path / "all.gguf")
    meta = read_gguf_metadata(path)
    assert meta["general.architecture"] == "test"
    for key, (_, value) in VALUES.items():
        assert meta[key] == expected(key, value), key
        assert type(meta[key]) is type(value), key
    reader = gguf.GGUFReader(str(path))
    assert meta == {k: f.contents() for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    assert read_gguf_metadata(path, prefix="t.s") == {"t.str": "Straße 🙂",
                                                      "t.strs": ["a", "", "ü b"]}


@pytest.mark.pretrained
def test_the_real_smollm2_file_reads_as_gguf_py_reads_it(smollm2_gguf):  # noqa: F811
    meta = read_gguf_metadata(smollm2_gguf)
    reader = gguf.GGUFReader(str(smollm2_gguf))
    want = {k: f.contents() for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    assert set(meta) == set(want)
    for key in want:
        assert meta[key] == want[key] and type(meta[key]) is type(want[key]), key
    assert len(meta["tokenizer.ggml.tokens"]) == 49152 and meta["tokenizer.ggml.model"] == "gpt2"


def test_empty_values_read_from_a_file_written_byte_by_byte(tmp_path):
    """gguf-py's writer leaves out empty strings and arrays, so this file is spelled out here."""
    def string(text):
        return struct.pack("<Q", len(text.encode())) + text.encode()

    body = (b"GGUF" + struct.pack("<IQQ", 2, 0, 3)
            + string("e.str") + struct.pack("<I", 8) + string("")
            + string("e.arr") + struct.pack("<IIQ", 9, 5, 0)
            + string("e.strs") + struct.pack("<IIQ", 9, 8, 2) + string("") + string("x"))
    path = tmp_path / "empty.gguf"
    path.write_bytes(body)
    assert read_gguf_metadata(path) == {"e.str": "", "e.arr": [], "e.strs": ["", "x"]}
    path.write_bytes(body + b"trailing bytes: where the tensors would start")
    assert read_gguf_metadata(path) == {"e.str": "", "e.arr": [], "e.strs": ["", "x"]}
    path.write_bytes(body[:-1])
    with pytest.raises(InputError,
                       match=f"the file ends inside a string of 1 bytes at byte {len(body) - 1}"):
        read_gguf_metadata(path)


def damaged(tmp_path, name, edit):
    data = bytearray(write_gguf(tmp_path / "good.gguf").read_bytes())
    path = tmp_path / name
    path.write_bytes(bytes(edit(data)))
    return path


def string_offset(data: bytes, key: str) -> int:
    """The byte offset of the length in front of ``key``'s value string."""
    return data.index(key.encode()) + len(key) + 4


@pytest.mark.parametrize("name, edit, message", [
    ("empty.gguf", lambda d: b"", "cannot read it as a GGUF file"),
    ("magic.gguf", lambda d: b"GGML" + d[4:], "magic b'GGML' (expected b'GGUF') at byte 0"),
    ("version.gguf", lambda d: d[:4] + struct.pack("<I", 9) + d[8:],
     "version 9 (expected one of (2, 3)) at byte 4"),
    ("big.gguf", lambda d: d[:4] + struct.pack(">I", 3) + d[8:],
     "(a big-endian file: only little-endian is read) at byte 4"),
    ("short.gguf", lambda d: d[:string_offset(d, "t.str") + 10],
     "the file ends inside a string of 12 bytes"),
    ("long.gguf", lambda d: (lambda i: d[:i] + struct.pack("<Q", 10**9) + d[i + 8:])(
        string_offset(d, "t.str")), "the file ends inside a string of 1000000000 bytes"),
    ("utf8.gguf", lambda d: d.replace("ß".encode(), b"\xff\xfe"), "a string that is not UTF-8"),
    ("type.gguf", lambda d: (lambda i: d[:i] + struct.pack("<I", 13) + d[i + 4:])(
        d.index(b"t.u8") + 4), "value type 13 (expected one of"),
])
def test_damaged_files_are_refused_naming_the_file_and_the_byte(tmp_path, name, edit, message):
    path = damaged(tmp_path, name, edit)
    with pytest.raises(InputError) as err:
        read_gguf_metadata(path)
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)


def test_a_missing_file_is_refused_naming_it(tmp_path):
    with pytest.raises(InputError, match="nope.gguf: cannot read it as a GGUF file"):
        read_gguf_metadata(tmp_path / "nope.gguf")


def test_shared_gguf_reader_opens_each_file_once_and_gives_the_original_back(tmp_path):
    first, second = write_gguf(tmp_path / "a.gguf"), write_gguf(tmp_path / "b.gguf")
    original = gguf.GGUFReader
    with pytest.raises(RuntimeError, match="inside"):
        with shared_gguf_reader():
            one = gguf.GGUFReader(str(first))
            assert gguf.GGUFReader(str(tmp_path / "." / "a.gguf")) is one
            other = gguf.GGUFReader(str(second))
            assert other is not one
            assert one.fields["t.str"].contents() == "Straße 🙂"
            raise RuntimeError("inside")
    assert gguf.GGUFReader is original
    assert gguf.GGUFReader(str(first)) is not one
