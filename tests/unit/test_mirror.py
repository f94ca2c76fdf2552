"""Corpora read from a local mirror (FAIRPPL_MIRROR) instead of their URLs: real archives made
here with their SHA-256, the match through the library (through the workflow's download rule:
tests/workflow/test_mirror_workflow.py), and the refusals (a missing file, a wrong digest, a
mirror that is not a folder)."""

from __future__ import annotations

import hashlib
import io
import tarfile

import pytest

from fairppl.core.errors import InputError
from fairppl.corpus.europarl import pair_url, read_pair
from fairppl.corpus.mirror import ENV, mirror_name, mirror_root
from fairppl.corpus.url import download_url, read_tar_lines
from test_europarl import DE, _tgz

#: Nothing listens on port 9 of this machine: a fetch from the network fails at once.
NOWHERE = "http://127.0.0.1:9"


def _flores_like(path):
    """A small .tar.gz laid out like FLORES-200 (two languages, dev and devtest); its sha256."""
    files = {"eng_Latn": "One.\nTwo.\n", "deu_Latn": "Eins.\nZwei.\n"}
    with tarfile.open(path, "w:gz") as tar:
        for code, text in files.items():
            for split in ("dev", "devtest"):
                data = text.encode()
                info = tarfile.TarInfo(f"flores200_dataset/{split}/{code}.{split}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def mirror(tmp_path):
    folder = tmp_path / "mirror"
    folder.mkdir()
    return folder


def test_a_mirror_copy_lands_where_the_download_would(tmp_path, mirror, monkeypatch):
    sha = _flores_like(mirror / "flores200_dataset.tar.gz")
    url = f"{NOWHERE}/data/flores200_dataset.tar.gz"
    dest = tmp_path / "resources" / "downloads" / "flores" / "flores200_dataset.tar.gz"
    # the argument, as a path and as a file:// address; then the environment variable
    assert download_url(url, sha, str(dest), mirror=str(mirror)) == str(
        mirror / "flores200_dataset.tar.gz")
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == sha
    dest.unlink()
    download_url(url, sha.upper(), str(dest), mirror=mirror.as_uri())
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == sha
    dest.unlink()
    monkeypatch.setenv(ENV, mirror.as_uri())
    download_url(url, sha, str(dest))
    texts = read_tar_lines(str(dest), {"deu": "deu_Latn"},
                           ["flores200_dataset/dev/{source_id}.dev"])
    assert texts == {"deu": [("dev:000001", "Eins."), ("dev:000002", "Zwei.")]}
    # without a mirror, the same call goes to the network (and nothing answers there)
    monkeypatch.setenv(ENV, "")
    dest.unlink()
    with pytest.raises(InputError, match="download of .* failed .*expected a reachable URL"):
        download_url(url, sha, str(dest))


def test_a_europarl_pair_is_read_from_the_mirror_by_its_file_name(tmp_path, mirror):
    sha = _tgz(mirror / "de-en.tgz", "de-en", DE)
    url = pair_url(None, "de", "en")  # https://www.statmt.org/europarl/v7/de-en.tgz
    dest = tmp_path / "dl" / "de-en.tgz"
    download_url(url, sha, str(dest), mirror=str(mirror))
    assert read_pair(dest, "de")[1][:2] == ["Hallo.", "Danke."]


def test_the_mirror_file_name_is_the_urls_last_segment_decoded():
    assert mirror_name("https://www.statmt.org/europarl/v7/de-en.tgz") == "de-en.tgz"
    assert mirror_name("https://h/bibles/K%27iche%27-NT.xml?raw=true#x") == "K'iche'-NT.xml"
    with pytest.raises(InputError, match="has no file name at the end of its path: expected"):
        mirror_name("https://mirror.example.org/")


def test_a_wrong_digest_in_the_mirror_is_refused_and_nothing_lands(tmp_path, mirror):
    sha = _flores_like(mirror / "flores200_dataset.tar.gz")
    wrong = ("0" if sha[0] != "0" else "1") + sha[1:]
    dest = tmp_path / "dl" / "flores200_dataset.tar.gz"
    with pytest.raises(InputError) as err:
        download_url(f"{NOWHERE}/flores200_dataset.tar.gz", wrong, str(dest), mirror=str(mirror))
    message = str(err.value)
    assert message.startswith(f"{mirror / 'flores200_dataset.tar.gz'}: checksum mismatch in "
                               f"the mirror ({ENV})")
    assert f"expected sha256 {wrong}, got {sha}" in message and "\n" not in message
    assert not dest.exists() and list(dest.parent.iterdir()) == []


def test_a_file_missing_from_the_mirror_is_refused_naming_its_path(tmp_path, mirror):
    (mirror / "de-en.tgz").write_bytes(b"x")
    url = pair_url(None, "fr", "en")
    dest = tmp_path / "dl" / "fr-en.tgz"
    with pytest.raises(InputError) as err:
        download_url(url, "a" * 64, str(dest), mirror=str(mirror))
    assert str(err.value) == (f"{mirror / 'fr-en.tgz'}: not in the mirror ({ENV}={mirror}): "
                              f"expected the archive of {url} there, under the file name of "
                              f"its URL")
    assert not dest.exists()


def test_a_mirror_that_is_not_a_folder_is_refused(tmp_path, monkeypatch):
    assert mirror_root("") is None and mirror_root("  ") is None
    monkeypatch.delenv(ENV, raising=False)
    assert mirror_root() is None
    with pytest.raises(InputError, match=f"^{ENV}='/no/such/dir' is not a folder .*expected"):
        mirror_root("/no/such/dir")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is not a folder"):
        mirror_root((tmp_path / "file").as_uri())
    for value in ("https://mirror.example.org/corpora", "file://otherhost/corpora"):
        with pytest.raises(InputError, match="expected a folder path or a file:// address"):
            mirror_root(value)
    # the checksum is still checked first: a bad digest is refused before the mirror is read
    monkeypatch.setenv(ENV, "/no/such/dir")
    with pytest.raises(InputError, match="expected a SHA-256 hex digest"):
        download_url(f"{NOWHERE}/x.tgz", "abc", str(tmp_path / "x.tgz"))


def test_the_shared_corpora_folder_is_a_mirror_as_it_stands(tmp_path, shared_corpora):
    """../shared/corpora keeps the archives under their public file names: FLORES-200's public
    URL finds its copy there, checked against the copy's digest."""
    from fairppl.corpus.flores import FLORES200_SHA256

    dest = tmp_path / "resources" / "downloads" / "flores200" / "flores200_dataset.tar.gz"
    url = "https://dl.fbaipublicfiles.com/nllb/flores200_dataset.tar.gz"
    assert download_url(url, FLORES200_SHA256, str(dest), mirror=shared_corpora.as_uri()) == \
        str(shared_corpora / "flores200_dataset.tar.gz")
    assert dest.stat().st_size == (shared_corpora / "flores200_dataset.tar.gz").stat().st_size
