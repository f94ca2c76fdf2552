"""Benchmark: the start-up check of sealed intermediates (fairppl.core.integrity.scan).

    python bench/bench_integrity.py                  # 8 files, 2.3 GB in all, in a temporary folder
    python bench/bench_integrity.py --root results   # an existing study's results/, read only

Without ``--root`` it writes ``--files`` random files of ``--mib`` MiB each (the default is about
the full study's KenLM models), seals them, then times ``scan`` with 1 and 2 hashing threads,
``--repeats`` times each, and removes the folder. The files are then in the page cache: a cold
disk is slower (read speed bound). With ``--root`` it only scans (nothing is written or removed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "lib"))

from fairppl.core.integrity import scan, seal  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, help="scan this folder instead of synthetic files")
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--mib", type=int, default=275)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    work = None
    root = args.root
    if root is None:
        work = Path(tempfile.mkdtemp(prefix="bench-integrity-"))
        root = work / "results"
        root.mkdir()
        block = os.urandom(1 << 20)
        for i in range(args.files):
            path = root / f"model{i}.kenlm"
            with open(path, "wb") as handle:
                for _ in range(args.mib):
                    handle.write(block)
            seal(path)
    try:
        for _ in range(args.repeats):
            for threads in (1, 2):
                result = scan(root, threads=threads)
                print(f"threads={threads}: {result.checked} sealed files, "
                      f"{result.bytes / 1e9:.2f} GB in {result.seconds:.2f} s "
                      f"({result.bytes / 1e9 / max(result.seconds, 1e-9):.2f} GB/s); "
                      f"{len(result.corrupt)} corrupt, {len(result.missing)} missing")
    finally:
        if work is not None:
            shutil.rmtree(work)


if __name__ == "__main__":
    main()
