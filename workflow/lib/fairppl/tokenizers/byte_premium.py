"""The byte premium on FLORES-200 beside Arnett, Chang & Bergen's (2024, "A Bit of a Problem:
Measurement Disparities in Dataset Sizes Across Languages"; repository
catherinearnett/byte-premium-tool, whose per-language table ``byte_premium_arnett2024.tsv``
holds them).

A language's byte premium is the UTF-8 bytes it needs for the content English says in one byte.

* **Ours** (:func:`byte_premium`): the bytes of the language's 2,009 FLORES sentences (``dev``
  then ``devtest``, as stored: :func:`sentences`) over English's: a ratio of totals, the ``UTF-8 bytes relative to eng_Latn`` of the study's parity
  table.
* **Theirs**, ``byte_coef_flores_2000lines``: the tool's repository has no code that computes it
  (``byte_premium_tool.py`` only looks the table up, or divides two files' bytes for a parallel
  text of one's own). Reproduced here on all 204 codes, to their printed digits
  (:func:`arnett_flores_premium`): the **geometric mean of the per-line byte ratios** over the
  **first 2,000 lines of dev followed by devtest**, each line **stripped** of leading and
  trailing white space. The same method finds their ``char_coef_flores_2000lines`` (code points
  instead of bytes) and their ``bytes_per_char_flores_2000lines`` is those lines' total bytes
  over their total code points. Their ``_20lines`` and ``_200lines`` columns hold the same
  numbers as ``_2000lines`` for every code, so "2000lines" is what all three measure.
* ``byte_coef_bible_whole`` is another text (their Bible of the language against their English
  Bible): no FLORES computation reproduces it; the table shows the difference.

:func:`comparison_table` puts them side by side, with the difference between our ratio and their
FLORES figure split into its two causes: the lines (all 2,009 as stored against the first 2,000
stripped) and the mean (a ratio of totals, which weights each line by its English bytes,
against the unweighted geometric mean of per-line ratios).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys

import numpy as np
import polars as pl

from ..core.errors import InputError
from ..core.io import atomic_path
from ..corpus.flores import ENGLISH, FLORES200_SHA256, read_flores

#: Lines of dev + devtest that Arnett et al.'s FLORES columns are computed on.
ARNETT_LINES = 2000
#: Their columns compared here.
FLORES_COLUMN, BIBLE_COLUMN = "byte_coef_flores_2000lines", "byte_coef_bible_whole"
#: Where a printed value has this many decimals or more it is the full double (Python's repr):
#: agreement is then to a relative 1e-15 (a few units in the last place: the order of a sum of
#: 2,000 logarithms changes the last bit), else to half a unit of the last printed decimal.
FULL_DECIMALS, FULL_RELATIVE = 15, 1e-15

#: The comparison table's columns, in order.
COLUMNS = ("code", "language", "their column", "ours (ratio)", "theirs (ratio)",
           "difference (ratio)", "same method", "lines part (ratio)", "mean part (ratio)",
           "printed decimals", "agrees to printed precision")


def sentences(dev: str, devtest: str) -> list[str]:
    """The lines of ``dev`` then ``devtest`` as stored, without their newlines: the study's
    FLORES units, as :func:`fairppl.tokenizers.parity.flores_sentences` gives them (kept apart so
    that this module does not import the one whose command runs it; tests/unit/test_byte_premium.py
    checks that both agree)."""
    return dev.split("\n")[:-1] + devtest.split("\n")[:-1]


def byte_premium(files: dict[str, tuple[str, str]], reference: str = ENGLISH) -> dict[str, float]:
    """``{code: bytes of its sentences / the reference's}`` (ours: a ratio of totals)."""
    def total(code):
        return sum(len(s.encode("utf-8")) for s in sentences(*files[code]))
    base = total(reference)
    return {code: total(code) / base for code in sorted(files)}


def arnett_lines(dev: str, devtest: str, n: int = ARNETT_LINES) -> list[str]:
    """The first ``n`` lines of ``dev`` then ``devtest``, each stripped of white space."""
    return [line.strip() for line in sentences(dev, devtest)[:n]]


def arnett_flores_premium(lines: list[str], english: list[str], measure=None) -> float:
    """The geometric mean of the per-line ratios ``measure(line) / measure(English line)``
    (default: UTF-8 bytes), as Arnett et al.'s FLORES columns hold it (:func:`arnett_lines`
    gives the lines). InputError on unaligned or empty lines (a ratio needs both sides)."""
    measure = measure or (lambda s: len(s.encode("utf-8")))
    if len(lines) != len(english):
        raise InputError(f"{len(lines)} lines against English's {len(english)}: expected "
                         f"line-aligned parallel text")
    ours = np.array([measure(s) for s in lines], dtype=float)
    theirs = np.array([measure(s) for s in english], dtype=float)
    if (ours == 0).any() or (theirs == 0).any():
        line = int(np.flatnonzero((ours == 0) | (theirs == 0))[0]) + 1
        raise InputError(f"line {line} is empty: expected text on every aligned line (a "
                         f"per-line ratio needs both sides)")
    return float(np.exp(np.mean(np.log(ours / theirs))))


def read_arnett(path: str | os.PathLike) -> dict[str, dict[str, str]]:
    """Their table as ``{lang: {column: printed value}}`` (``lang`` is ISO 639-3 + script in
    lower case, e.g. ``deu_latn``; values kept as printed). InputError naming the file when a
    compared column is missing."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle, delimiter="\t")
            missing = [c for c in ("lang", FLORES_COLUMN, BIBLE_COLUMN)
                       if c not in (reader.fieldnames or [])]
            if missing:
                raise InputError(f"header lacks {', '.join(missing)}: expected Arnett et al.'s "
                                 f"table (byte_premium_arnett2024.tsv)", path=str(path), line=1)
            return {row["lang"]: row for row in reader}
    except FileNotFoundError:
        raise InputError("byte premium table not found: expected Arnett et al.'s per-language "
                         "table (byte_premium_arnett2024.tsv)",
                         path=str(path)) from None


def printed_decimals(value: str) -> int:
    """How many decimals ``value`` is printed with (``"1.0"``: 1)."""
    return len(value.split(".", 1)[1]) if "." in value else 0


def agrees(ours: float, printed: str) -> bool:
    """Whether ``ours`` equals the printed value to its printed precision
    (:data:`FULL_DECIMALS`)."""
    decimals = printed_decimals(printed)
    theirs = float(printed)
    if decimals >= FULL_DECIMALS:
        return abs(ours - theirs) <= FULL_RELATIVE * abs(theirs)
    return abs(ours - theirs) <= 0.5 * 10.0 ** -decimals


def comparison_table(files: dict[str, tuple[str, str]], arnett: dict[str, dict[str, str]],
                     reference: str = ENGLISH) -> pl.DataFrame:
    """Ours beside theirs (:data:`COLUMNS`), per FLORES code whose ``language`` (the code in
    lower case) is in their table, three rows:

    * our ratio of totals against ``byte_coef_flores_2000lines`` (same method: no), the
      difference split into ``lines part`` (ours minus the ratio of totals of the first 2,000
      stripped lines) and ``mean part`` (that minus the geometric mean of per-line ratios);
    * their method on our copy (:func:`arnett_flores_premium`) against the same column (same
      method: yes), which must agree to printed precision;
    * our ratio of totals against ``byte_coef_bible_whole`` (same method: no, another text),
      where they have it.
    """
    ratio = byte_premium(files, reference)
    english = arnett_lines(*files[reference])
    eng_bytes = sum(len(s.encode("utf-8")) for s in english)
    rows = []
    for code in sorted(files):
        theirs = arnett.get(code.lower())
        if theirs is None:
            continue
        lines = arnett_lines(*files[code])
        geometric = arnett_flores_premium(lines, english)
        totals_2000 = sum(len(s.encode("utf-8")) for s in lines) / eng_bytes
        base = {"code": code, "language": code.lower()}
        printed = theirs[FLORES_COLUMN]
        if printed:
            for ours, same, parts in (
                    (ratio[code], "no", (ratio[code] - totals_2000, totals_2000 - geometric)),
                    (geometric, "yes", (None, None))):
                rows.append({**base, "their column": FLORES_COLUMN, "ours (ratio)": ours,
                             "theirs (ratio)": float(printed),
                             "difference (ratio)": ours - float(printed), "same method": same,
                             "lines part (ratio)": parts[0], "mean part (ratio)": parts[1],
                             "printed decimals": printed_decimals(printed),
                             "agrees to printed precision": agrees(ours, printed)})
        printed = theirs[BIBLE_COLUMN]
        if printed:
            rows.append({**base, "their column": BIBLE_COLUMN, "ours (ratio)": ratio[code],
                         "theirs (ratio)": float(printed),
                         "difference (ratio)": ratio[code] - float(printed), "same method": "no",
                         "lines part (ratio)": None, "mean part (ratio)": None,
                         "printed decimals": printed_decimals(printed),
                         "agrees to printed precision": agrees(ratio[code], printed)})
    schema = {c: pl.Float64 for c in COLUMNS if "(ratio)" in c}
    schema.update({"code": pl.String, "language": pl.String, "their column": pl.String,
                   "same method": pl.String, "printed decimals": pl.Int64,
                   "agrees to printed precision": pl.Boolean})
    return pl.DataFrame(rows, schema={c: schema[c] for c in COLUMNS})


def write_comparison(archive: str | os.PathLike, anchors: str | os.PathLike,
                     out: str | os.PathLike, sha256: str | None = None) -> pl.DataFrame:
    """Read FLORES-200 and their table, write :func:`comparison_table` to ``out`` as CSV."""
    table = comparison_table(read_flores(archive, sha256 or FLORES200_SHA256),
                             read_arnett(anchors))
    with atomic_path(out) as tmp:
        table.write_csv(tmp)
    return table


def summary(table: pl.DataFrame) -> list[str]:
    """One line per (their column, same method): rows, how many agree, the largest difference."""
    lines = []
    for (column, same), group in table.group_by(["their column", "same method"],
                                                maintain_order=True):
        largest = group["difference (ratio)"].abs().max()
        lines.append(f"{column}, same method {same}: {group['agrees to printed precision'].sum()}"
                     f" of {group.height} agree to printed precision; largest |difference| "
                     f"{largest:.3g}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fairppl.tokenizers.byte_premium",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--flores", required=True, help="flores200_dataset.tar.gz")
    parser.add_argument("--anchors", required=True, help="byte_premium_arnett2024.tsv")
    parser.add_argument("--out", required=True, help="the CSV to write")
    parser.add_argument("--sha256", help="the archive's SHA-256 (default: the shared copy's)")
    args = parser.parse_args(argv)
    try:
        table = write_comparison(args.flores, args.anchors, args.out, args.sha256)
    except InputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print("\n".join(summary(table)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
