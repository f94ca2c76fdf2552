"""The key-value metadata of a GGUF file, read in one pass.

gguf-py's ``GGUFReader`` maps every value of every field, tensor headers included, into small
numpy views when it opens a file, which is slow for a large vocabulary (Gemma-3 has 262,144
strings), and converting a model opened its file five times (transformers three times, the
tokenizer check twice). :func:`read_gguf_metadata` reads only the key-value section, with
``struct`` for scalars and strings and ``numpy.frombuffer`` for numeric arrays (docs/benchmarks.md,
"Converting the pretrained models", has both timings). Its values equal
``GGUFReader(path).fields[key].contents()`` for every key (tests/unit/test_gguf_meta.py compares
the two on a file of every value type and on SmolLM2's file).

The layout (GGUF versions 2 and 3, little-endian): the magic ``GGUF``, a uint32 version, a uint64
tensor count, a uint64 key count, then each key as a string (uint64 byte length, UTF-8 bytes), a
uint32 value type and the value; an array is a uint32 element type, a uint64 length and the
elements.
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path

from ..core.errors import InputError

#: Scalar value types: the GGUF type number -> (struct format, numpy dtype, width in bytes).
_SCALARS = {0: ("<B", "<u1", 1), 1: ("<b", "<i1", 1), 2: ("<H", "<u2", 2), 3: ("<h", "<i2", 2),
            4: ("<I", "<u4", 4), 5: ("<i", "<i4", 4), 6: ("<f", "<f4", 4), 7: ("<?", "?", 1),
            10: ("<Q", "<u8", 8), 11: ("<q", "<i8", 8), 12: ("<d", "<f8", 8)}
_STRING, _ARRAY = 8, 9
_VERSIONS = (2, 3)


class _Cursor:
    """Reads values from ``data`` (a buffer) at a moving offset; errors name the file and the
    byte offset of the value that could not be read."""

    def __init__(self, data, path: Path):
        self.data, self.path, self.pos = data, path, 0

    def fail(self, what: str):
        raise InputError(f"not a readable GGUF file: {what} at byte {self.pos}",
                         path=str(self.path))

    def unpack(self, fmt: str, width: int):
        if self.pos + width > len(self.data):
            self.fail(f"the file ends inside a value of {width} bytes")
        value = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += width
        return value

    def string(self) -> str:
        length = self.unpack("<Q", 8)
        if self.pos + length > len(self.data):
            self.fail(f"the file ends inside a string of {length} bytes")
        raw = bytes(self.data[self.pos:self.pos + length])
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            self.fail(f"a string that is not UTF-8 ({err.reason})")
        self.pos += length
        return text

    def value(self, kind: int, *, in_array: bool = False):
        if kind in _SCALARS:
            fmt, _, width = _SCALARS[kind]
            return self.unpack(fmt, width)
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY and not in_array:
            return self.array()
        self.fail(f"value type {kind} (expected one of {sorted({*_SCALARS, _STRING, _ARRAY})}"
                  f"{', no arrays of arrays' if kind == _ARRAY else ''})")

    def array(self) -> list:
        kind = self.unpack("<I", 4)
        length = self.unpack("<Q", 8)
        if kind in _SCALARS:
            import numpy as np

            _, dtype, width = _SCALARS[kind]
            if self.pos + length * width > len(self.data):
                self.fail(f"the file ends inside an array of {length} values of {width} bytes")
            values = np.frombuffer(self.data, dtype=dtype, count=length, offset=self.pos)
            self.pos += length * width
            return values.tolist()
        return [self.value(kind, in_array=True) for _ in range(length)]


def read_gguf_metadata(path: str | Path, *, prefix: str = "") -> dict:
    """The key-value metadata of the GGUF file ``path`` whose keys start with ``prefix``: a dict
    from key to a Python value (int, float, bool, str, or a list of them). Raises InputError
    naming the file and the byte offset when the file is not GGUF version 2 or 3, little-endian,
    or ends early."""
    path = Path(path)
    try:
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0,
                                                   access=mmap.ACCESS_READ) as data:
            return _read(_Cursor(data, path), prefix)
    except (OSError, ValueError) as err:
        if isinstance(err, InputError):
            raise
        raise InputError(f"cannot read it as a GGUF file: {err}", path=str(path)) from None


def _read(cur: _Cursor, prefix: str) -> dict:
    if bytes(cur.data[:4]) != b"GGUF":
        cur.fail(f"magic {bytes(cur.data[:4])!r} (expected b'GGUF')")
    cur.pos = 4
    version = cur.unpack("<I", 4)
    if version not in _VERSIONS:
        swapped = struct.unpack("<I", struct.pack(">I", version))[0]
        cur.pos -= 4
        cur.fail(f"version {version}" + (" (a big-endian file: only little-endian is read)"
                                         if swapped in _VERSIONS else
                                         f" (expected one of {_VERSIONS})"))
    cur.unpack("<Q", 8)  # the tensor count: the tensors are not read here
    keys = cur.unpack("<Q", 8)
    out = {}
    for _ in range(keys):
        key = cur.string()
        value = cur.value(cur.unpack("<I", 4))
        if key.startswith(prefix):
            out[key] = value
    return out
