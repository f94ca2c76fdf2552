"""Install a requirements file into the running Python's environment with several pip processes
at once (`make setup`'s virtual environment).

usage: install_requirements.py <requirements.txt> [--streams N]

pip installs one package after another on one core: unpacking and byte-compiling the study's
154 packages takes about 70 s here, while the other core waits (or builds KenLM's Python module).
So pip resolves the whole set first (``pip install --dry-run --report``: what it would install,
name and version, nothing installed), and N pip processes then install disjoint shares of that
set side by side with ``--no-deps`` (every dependency is in some share); ``pip check`` checks the
result. Measured on 2 cores: 76 s with one pip process, 12 s + 43 s with two. The set installed
is the one pip resolved: the same as one ``pip install -r`` would install.

Only the standard library is used (it runs before anything is installed).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

PIP = [sys.executable, "-m", "pip"]


def resolved(requirements: Path, folder: Path) -> list[str]:
    """What ``pip install -r requirements`` would install here, as requirement lines in pip's
    order: ``name==version``, or the URL of a requirement given by one."""
    report = folder / "report.json"
    if subprocess.run([*PIP, "install", "--quiet", "--dry-run", "--report", str(report),
                       "-r", str(requirements)]).returncode != 0:
        raise SystemExit(f"install_requirements: pip could not resolve {requirements} (above)")
    try:
        items = json.loads(report.read_text(encoding="utf-8"))["install"]
    except (OSError, ValueError, KeyError) as err:
        raise SystemExit(f"install_requirements: pip's report {report} is unreadable: {err}")
    lines = []
    for item in items:
        if item.get("is_direct"):  # a URL or a path in the requirements: install it as given
            lines.append(item["download_info"]["url"])
        else:
            lines.append(f"{item['metadata']['name']}=={item['metadata']['version']}")
    return lines


def shares(lines: list[str], streams: int) -> list[list[str]]:
    """Every ``streams``-th line to each share, in pip's order (the large packages spread
    evenly enough: 42 and 43 s for the study's two shares)."""
    return [share for share in (lines[i::streams] for i in range(streams)) if share]


def install(lines: list[str], streams: int, folder: Path) -> None:
    children = []
    for i, share in enumerate(shares(lines, streams)):
        path = folder / f"share-{i + 1}.txt"
        path.write_text("\n".join(share) + "\n", encoding="utf-8")
        children.append((share, subprocess.Popen([*PIP, "install", "--quiet", "--no-deps",
                                                  "-r", str(path)])))
    # the shares' files go with the temporary folder: name what pip was asked to install
    failed = [share for share, child in children if child.wait() != 0]
    if failed:
        raise SystemExit("install_requirements: pip failed (above) installing one of: "
                         + ", ".join(line for share in failed for line in share))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("requirements", type=Path)
    parser.add_argument("--streams", type=int, default=2,
                        help="pip processes installing at once (default 2)")
    args = parser.parse_args(argv)
    if args.streams < 1:
        parser.error(f"--streams: expected a positive number, got {args.streams}")
    if not args.requirements.is_file():
        parser.error(f"{args.requirements}: " + ("not a file" if args.requirements.exists()
                                                  else "no such file"))
    with tempfile.TemporaryDirectory(prefix="install-requirements-") as tmp:
        lines = resolved(args.requirements, Path(tmp))
        if lines:
            install(lines, args.streams, Path(tmp))
    check = subprocess.run([*PIP, "check"], capture_output=True, text=True)
    if check.returncode != 0:
        raise SystemExit(f"install_requirements: the installed packages do not fit together "
                         f"(pip check):\n{check.stdout}{check.stderr}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
