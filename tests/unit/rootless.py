"""An unprivileged user on a machine without apt-get or sudo, for the set-up tests of
tests/unit/test_build_env.py (issue 26: `make setup` on a cluster login node).

:class:`RootlessUser` creates a system user with a home in a fresh folder under /tmp, a ``bin``
folder of symlinks to this machine's programs less the ones a login node lacks or that the test
takes away (:data:`WITHHELD`: apt-get, sudo, dpkg, CMake and Ninja, lt-paradigm, Node), and a
fresh clone of the repository at HEAD. :meth:`RootlessUser.run` runs a command as that user in a
private mount namespace where the system's Boost is hidden (its headers and CMake files covered
by an empty folder), so that Boost is found only where the environment points:
:func:`boost_prefix` unpacks Debian's Boost packages (``apt-get download`` + ``dpkg -x``, run as
root beforehand) into a folder that stands in for ``module load boost``.

:func:`unavailable` says why a machine cannot run this (not root, no useradd/unshare/apt-get);
the tests skip with that sentence. :meth:`RootlessUser.remove` deletes the user and its folder.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
USER = "fairppl-rootless"

#: What a cluster login node lacks (apt-get, sudo, dpkg), what `module load` or PyPI provides
#: instead (CMake and Ninja: the set-up must take them from PyPI), and the optional tools the
#: study must do without (Apertium's lt-paradigm, Node's npm).
WITHHELD = ("apt", "apt-get", "apt-cache", "apt-config", "apt-key", "apt-mark", "aptitude",
            "sudo", "su", "dpkg", "dpkg-deb", "dpkg-query", "cmake", "ctest", "cpack", "ccmake",
            "ninja", "lt-paradigm", "lt-proc", "lt-comp", "npm", "npx", "node", "nodejs")

#: Debian 12's Boost 1.74 packages that KenLM's build needs, with what their CMake files need.
BOOST_PACKAGES = tuple(
    f"libboost-{lib}1.74{kind}" for lib in ("program-options", "system", "thread", "test",
                                             "atomic", "chrono", "date-time")
    for kind in ("-dev", ".0")) + ("libboost1.74-dev",)

#: Where Debian keeps the Boost that the namespace hides.
SYSTEM_BOOST = ("/usr/include/boost", "/usr/lib/x86_64-linux-gnu/cmake/Boost-*",
                "/usr/lib/x86_64-linux-gnu/cmake/boost_*")


def unavailable() -> str | None:
    """Why this machine cannot run the rootless set-up tests, or None."""
    if os.geteuid() != 0:
        return "needs root (to create the unprivileged user and hide the system's Boost)"
    for tool in ("useradd", "userdel", "unshare", "setpriv", "git", "make"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if not Path("/usr/bin/python3").is_file():
        return "no /usr/bin/python3 for the unprivileged user"
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare -m is not permitted here: {probe.stderr.strip()}"
    return None


def boost_prefix(dest: Path) -> Path:
    """Debian's Boost packages downloaded (``apt-get download``) and unpacked (``dpkg -x``) into
    ``dest``: returns the prefix to give as BOOST_ROOT (``dest/usr``)."""
    debs = dest / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    subprocess.run(["apt-get", "download", "-q", *BOOST_PACKAGES], cwd=debs, check=True,
                   capture_output=True, text=True)
    for deb in sorted(debs.glob("*.deb")):
        subprocess.run(["dpkg", "-x", str(deb), str(dest)], check=True)
    shutil.rmtree(debs)
    return dest / "usr"


class RootlessUser:
    """A fresh unprivileged user with a stripped PATH and a clone of the repository at HEAD."""

    def __init__(self, name: str = USER):
        self.name = name
        self.base = Path(tempfile.mkdtemp(prefix="fairppl-rootless-"))
        self.base.chmod(0o755)
        self.home = self.base / "home"
        subprocess.run(["userdel", "-r", name], capture_output=True)  # one a killed run left
        subprocess.run(["useradd", "--no-create-home", "--home-dir", str(self.home), "--shell",
                        "/bin/bash", "--user-group", name], check=True)
        entry = pwd.getpwnam(name)
        self.uid, self.gid = entry.pw_uid, entry.pw_gid
        self.bin = self.base / "bin"
        self.bin.mkdir()
        for folder in ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"):
            if not Path(folder).is_dir():
                continue
            for program in sorted(Path(folder).iterdir()):
                link = self.bin / program.name
                if program.name in WITHHELD or link.exists() or link.is_symlink():
                    continue
                if program.is_file() and os.access(program, os.X_OK):
                    link.symlink_to(program)
        self.home.mkdir()
        self.clone = self.home / "fairppl"
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
        subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(self.clone)],
                       check=True)
        subprocess.run(["git", "-C", str(self.clone), "checkout", "--quiet", head], check=True)
        subprocess.run(["chown", "-R", f"{self.uid}:{self.gid}", str(self.home)], check=True)

    def env(self, **extra: str) -> dict[str, str]:
        """The user's environment: HOME, the stripped PATH, pip's settings (the machine's local
        package indexes and wheel folder, as root configured them) and ``extra``."""
        env = {"HOME": str(self.home), "USER": self.name, "LOGNAME": self.name,
               "PATH": str(self.bin), "LANG": "C.UTF-8", "SHELL": "/bin/bash"}
        env.update({k: v for k, v in os.environ.items() if k.startswith("PIP_")})
        env.update(extra)
        return env

    def run(self, command: str, env: dict[str, str] | None = None, timeout: float = 3600,
            ) -> subprocess.CompletedProcess:
        """Run ``command`` (bash) as the user in its clone, in a private mount namespace where the
        system's Boost is hidden; stdout and stderr together in ``stdout``."""
        empty = self.base / "empty"
        empty.mkdir(exist_ok=True)
        hide = " ".join(
            f'for d in {pattern}; do [ -d "$d" ] && /usr/bin/mount --bind {empty} "$d"; done;'
            for pattern in SYSTEM_BOOST)
        inner = (f"{hide} cd {self.clone} && exec /usr/bin/setpriv --reuid={self.uid} "
                 f"--regid={self.gid} --clear-groups /bin/bash -c \"$0\"")
        return subprocess.run(
            ["unshare", "-m", "--propagation", "private", "/bin/bash", "-c", inner, command],
            env=env or self.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            timeout=timeout)

    def remove(self) -> None:
        subprocess.run(["userdel", self.name], capture_output=True)
        shutil.rmtree(self.base, ignore_errors=True)
