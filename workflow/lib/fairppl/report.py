"""HTML pieces of the report: tables whose headers carry units, and the settings used."""

from __future__ import annotations

import html
import json

import polars as pl

from .metrics import BPU_COLUMNS

_STYLE = """
<style>
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; margin-bottom: 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: right; }
th { background: #f0f3f7; }
td.text { text-align: left; }
caption { text-align: left; font-weight: bold; padding: 4px 0; }
pre { background: #f7f7f7; padding: 1em; font-size: 0.85em; }
</style>
"""


def html_table(df: pl.DataFrame, headers: dict[str, str] | None = None, caption: str = "",
               digits: int = 4) -> str:
    """Render ``df`` as an HTML table; ``headers`` maps a column to its label with unit."""
    headers = headers or {}
    head = "".join(
        f"<th title='{html.escape(c)}'>{html.escape(c)}<br><small>{html.escape(headers.get(c, ''))}"
        f"</small></th>" for c in df.columns)
    rows = []
    for row in df.iter_rows():
        cells = []
        for value in row:
            if isinstance(value, float):
                cells.append(f"<td>{value:.{digits}f}</td>")
            elif isinstance(value, int) and not isinstance(value, bool):
                cells.append(f"<td>{value}</td>")
            else:
                cells.append(f"<td class='text'>{html.escape(str(value))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


_DROPPED_HEADERS = {
    "n_placeholder": "placeholder units in this language (count)",
    "n_dropped": "units dropped in every language (count)",
    "n_kept": "aligned units kept (count)",
}


def summary_html(bpu: pl.DataFrame, dropped: pl.DataFrame, settings: dict) -> str:
    """The summary page: per (corpus, model) a table of bits per utterance, BPEC, bits per
    character and per byte; the units dropped as placeholders; the settings used."""
    parts = ["<html><head><meta charset='utf-8'><title>fairppl summary</title>", _STYLE,
             "</head><body><h1>fairppl: bits per utterance on multi-text</h1>",
             "<p>All numbers are code lengths in bits of the evaluation split, every character "
             "charged (open vocabulary, end of unit included). <b>bits_per_utterance</b> = total "
             "bits / number of aligned units; <b>bpec</b> = total bits / characters of the "
             "English text of the same units; <b>bits_per_char</b> and <b>bits_per_byte</b> divide "
             "by the language's own characters and UTF-8 bytes.</p>"]
    for (corpus, model), part in bpu.sort("bpec").group_by(["corpus", "model"], maintain_order=True):
        parts.append(html_table(part, BPU_COLUMNS, caption=f"{corpus} — {model} (hardest last)"))
    parts.append("<h2>Placeholder units dropped</h2>")
    parts.append(html_table(dropped, _DROPPED_HEADERS))
    parts.append("<h2>Settings</h2><pre>")
    parts.append(html.escape(json.dumps(settings, indent=2, ensure_ascii=False, default=str)))
    parts.append("</pre></body></html>")
    return "\n".join(parts)
