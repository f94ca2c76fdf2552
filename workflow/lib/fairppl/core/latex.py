"""Tables as LaTeX, ready for a paper: a booktabs ``tabular`` (``\\toprule``, ``\\midrule``,
``\\bottomrule``, no vertical rules) inside a ``table`` float with caption and label.

Text cells, headers and the caption are escaped (``\\ & % $ # _ { } ~ ^``), so ids such as
``kenlm-char-o5`` or ``n_units`` print as they read in the CSV. Numbers are formatted per column
(a format spec such as ``".3f"`` or a function), right-aligned, with a typographic minus sign;
by default floats get 3 decimals, and values below 0.0005 in magnitude (p-values) a mantissa and
a power of ten, so that they never print as 0.000. Empty cells print as ``--``. An optional
second header line gives each column's unit, as the HTML report's tables do. The document needs
``\\usepackage{booktabs}``.
"""

from __future__ import annotations

import math
import os
from typing import Callable

import polars as pl

from .io import write_text

_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
            "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
            "^": r"\textasciicircum{}"}

#: Default formats: floats with 3 decimals, integers as they are.
DEFAULT_FLOAT = ".3f"

#: What an empty (null or NaN) cell prints.
EMPTY = "--"


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join(_ESCAPES.get(ch, ch) for ch in str(text))


def _number(value, spec: str | None, is_float: bool) -> str:
    if spec is None and is_float and value != 0 and abs(value) < 0.0005:
        mantissa, exponent = format(value, ".1e").split("e")
        return f"${mantissa} \\times 10^{{{int(exponent)}}}$"
    text = format(value, spec if spec is not None else (DEFAULT_FLOAT if is_float else ""))
    return "$-$" + text[1:] if text.startswith("-") else text


def latex_table(table: pl.DataFrame, caption: str | None = None, label: str | None = None,
                columns: list[str] | dict[str, str] | None = None,
                formats: dict[str, str | Callable] | None = None,
                headers: dict[str, str] | None = None) -> str:
    """The LaTeX text of ``table``: ``columns`` picks the columns in order (a dict maps each to
    its header; default every column under its own name), ``formats`` maps a column to a format
    spec or a function of the value (a function's result is not escaped, so it may hold LaTeX),
    ``headers`` maps a column to its unit, printed small on a second header line (columns
    without one leave it empty; keys that are not shown are ignored, so a table's whole column
    dictionary may be passed). Raises ValueError for an unknown column."""
    if columns is None:
        columns = {c: c for c in table.columns}
    elif not isinstance(columns, dict):
        columns = {c: c for c in columns}
    formats = formats or {}
    unknown = [c for c in list(columns) + list(formats) if c not in table.columns]
    if unknown:
        raise ValueError(f"latex_table: no column {unknown[0]!r}; the table has {table.columns}")
    numeric = {c: table.schema[c].is_numeric() for c in columns}
    is_float = {c: table.schema[c].is_float() for c in columns}
    lines = [r"\begin{table}[htbp]", r"\centering"]
    if caption is not None:
        lines.append(r"\caption{" + latex_escape(caption) + "}")
    if label is not None:
        lines.append(r"\label{" + label + "}")
    lines.append(r"\begin{tabular}{" + "".join("r" if numeric[c] else "l" for c in columns)
                 + "}")
    lines.append(r"\toprule")
    lines.append(" & ".join(latex_escape(h) for h in columns.values()) + r" \\")
    if headers:
        lines.append(" & ".join(r"{\footnotesize " + latex_escape(headers[c]) + "}"
                                if headers.get(c) else "" for c in columns) + r" \\")
    lines.append(r"\midrule")
    for row in table.select(list(columns)).iter_rows(named=True):
        cells = []
        for c in columns:
            value = row[c]
            if value is None or (isinstance(value, float) and math.isnan(value)):
                cells.append(EMPTY)
            elif callable(formats.get(c)):
                cells.append(str(formats[c](value)))
            elif numeric[c]:
                cells.append(_number(value, formats.get(c), is_float[c]))
            else:
                cells.append(latex_escape(value))
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def write_latex(table: pl.DataFrame, path: str | os.PathLike, caption: str | None = None,
                label: str | None = None, columns: list[str] | dict[str, str] | None = None,
                formats: dict[str, str | Callable] | None = None,
                headers: dict[str, str] | None = None) -> None:
    """Write :func:`latex_table` of ``table`` to ``path`` atomically (UTF-8)."""
    write_text(path, latex_table(table, caption=caption, label=label, columns=columns,
                                 formats=formats, headers=headers))
