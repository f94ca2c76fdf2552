"""LaTeX tables (fairppl.core.latex): the exact booktabs text of a small table."""

from __future__ import annotations

import polars as pl
import pytest

from fairppl.core.latex import latex_escape, latex_table, write_latex


def _table():
    return pl.DataFrame({"model": ["kenlm-char_o5", "50% & #1"], "n_units": [200, 31],
                         "slope": [0.01234, -1.5], "p": [0.5, None]})


def test_exact_text(tmp_path):
    path = tmp_path / "tables" / "morphology.tex"
    write_latex(_table(), path, caption="BPEC on MCC (n_languages per row)",
                label="tab:morphology",
                columns={"model": "model", "n_units": "n_units", "slope": "slope (bits)",
                         "p": "p"},
                formats={"slope": ".2f", "p": lambda v: f"\\textit{{{v:.1f}}}"})
    assert path.read_text(encoding="utf-8") == (
        "\\begin{table}[htbp]\n"
        "\\centering\n"
        "\\caption{BPEC on MCC (n\\_languages per row)}\n"
        "\\label{tab:morphology}\n"
        "\\begin{tabular}{lrrr}\n"
        "\\toprule\n"
        "model & n\\_units & slope (bits) & p \\\\\n"
        "\\midrule\n"
        "kenlm-char\\_o5 & 200 & 0.01 & \\textit{0.5} \\\\\n"
        "50\\% \\& \\#1 & 31 & $-$1.50 & -- \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n"
        "\\end{table}\n")


def test_defaults_and_errors():
    text = latex_table(_table().select("model", "slope").head(1))
    assert "\\caption" not in text and "\\label" not in text
    assert "kenlm-char\\_o5 & 0.012 \\\\" in text  # floats: 3 decimals by default
    assert latex_escape("a\\b{c}~^$") == (
        "a\\textbackslash{}b\\{c\\}\\textasciitilde{}\\textasciicircum{}\\$")
    with pytest.raises(ValueError, match="no column 'bpec'"):
        latex_table(_table(), columns=["bpec"])


def test_units_line_and_small_values():
    table = pl.DataFrame({"slope": [0.5, -2.0], "pearson_p": [1.6e-6, 0.0]})
    text = latex_table(table, headers={"slope": "bits/char", "note": "not shown"})
    assert text.splitlines()[4:9] == [
        "slope & pearson\\_p \\\\",
        "{\\footnotesize bits/char} &  \\\\",
        "\\midrule",
        "0.500 & $1.6 \\times 10^{-6}$ \\\\",
        "$-$2.000 & 0.000 \\\\"]
