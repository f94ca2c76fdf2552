"""A local mirror of the downloaded corpora: the same archives, read from a folder instead of
their URLs (a cluster pre-stages them on a shared file system; a machine without internet keeps
them beside the project).

The mirror is set once, by the environment variable ``FAIRPPL_MIRROR``: a folder path (absolute,
or relative to the working directory Snakemake runs in) or a ``file://`` address of one
(``file:///data/mirror``). Unset or empty: every archive is downloaded from its URL.

The rule of the folder is flat: the archive of a URL is the file of the mirror named like the
URL's last path segment, percent-decoded, with the query and fragment left out::

    https://www.statmt.org/europarl/v7/de-en.tgz          -> $FAIRPPL_MIRROR/de-en.tgz
    https://host/bibles/K%27iche%27-NT.xml?raw=true        -> $FAIRPPL_MIRROR/K'iche'-NT.xml

or the corpus's ``archive_name`` where it gives one (GitHub's
``.../archive/refs/heads/master.tar.gz`` of christos-c/bible-corpus is
``bible-corpus-master.tar.gz``), so a folder of the archives as their public downloads name
them (as a cluster's shared data folder may hold them) is a mirror as it stands. The mirror's copy is
checked against the same configured SHA-256 as a download and lands at the same path
(``resources/downloads/<corpus>/<file>``); nothing else changes. A missing file or a digest
that differs is refused: there is no fall-back to the network, so a run on an offline node
fails with the mirror's path in the message rather than a timeout.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

from ..core.errors import InputError

#: The environment variable that names the mirror.
ENV = "FAIRPPL_MIRROR"


def mirror_root(value: str | None = None) -> Path | None:
    """The mirror folder given by ``value`` (None: the environment variable :data:`ENV`), or
    None when it is unset or empty. InputError when it is not a folder path or a ``file://``
    address of a local folder, or the folder does not exist."""
    if value is None:
        value = os.environ.get(ENV, "")
    value = value.strip()
    if not value:
        return None
    path = value
    if "://" in value:
        parsed = urlparse(value)
        if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
            raise InputError(f"{ENV}={value!r}: expected a folder path or a file:// address of "
                             f"a local folder (file:///path)")
        path = unquote(parsed.path)
    root = Path(path).expanduser()
    if not root.is_dir():
        raise InputError(f"{ENV}={value!r} is not a folder ({root.absolute()}): expected the "
                         f"folder that holds the mirrored archives")
    return root


def mirror_name(url: str) -> str:
    """The file name an archive of ``url`` has in a mirror: the URL's last path segment,
    percent-decoded (InputError when the URL's path ends without a file name)."""
    name = unquote(PurePosixPath(urlparse(url).path).name)
    if not name or "/" in name or name in (".", ".."):
        raise InputError(f"URL {url!r} has no file name at the end of its path: expected one, "
                         f"since a mirror ({ENV}) holds each archive under the file name of its "
                         f"URL")
    return name


def mirror_file(url: str, root: Path, name: str | None = None) -> Path:
    """The mirror's copy of ``url`` under ``root`` (the file ``name`` there when given: a url
    corpus's ``archive_name``, for a URL whose last segment is not the archive's name);
    InputError naming that path when it is not there, with what was expected."""
    path = root / (name or mirror_name(url))
    if not path.is_file():
        raise InputError(f"not in the mirror ({ENV}={root}): expected the archive of {url} "
                         f"there, under the file name of its URL", path=str(path))
    return path
