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


_COMPARE = ["corpus", "language", "model", "tokenizer", "vocab_size", "n_units", "n_tokens",
            "bits_per_utterance", "bpec", "bits_per_char", "bits_per_byte"]
_UNK = ["corpus", "language", "model", "tokenizer", "vocab_size", "n_tokens", "oov_rate",
        "ppl_naive", "ppl_unk_corrected", "bits_per_utterance"]


_UNK_EXTRA = {
    "bits_per_utterance": "p(<unk>) as is (bits/utterance)",
    "unk_corrected_bits_per_utterance": "every p(<unk>) / #OOV types (bits/utterance)",
    "char_model": "open-vocabulary character n-gram",
    "char_bits_per_utterance": "character n-gram, same language (bits/utterance)",
}


def unk_table(bpu: pl.DataFrame) -> pl.DataFrame:
    """The closed-vocabulary rows with their UNK-corrected bits per utterance and, beside them,
    the bits per utterance of each character n-gram of the same (corpus, language)."""
    closed = bpu.filter(~pl.col("open_vocabulary")).with_columns(
        (pl.col("bits_unk_corrected") / pl.col("n_units")).alias("unk_corrected_bits_per_utterance"))
    char = (bpu.filter(pl.col("open_vocabulary") & (pl.col("tokenizer") == "char")
                       & pl.col("model").str.starts_with("kenlm-char"))
            .select("corpus", "language", pl.col("model").alias("char_model"),
                    pl.col("bits_per_utterance").alias("char_bits_per_utterance")))
    return (closed.join(char, on=["corpus", "language"], how="left")
            .sort("corpus", "language", "char_model", "vocab_size")
            .select(*_UNK, "unk_corrected_bits_per_utterance", "char_model",
                    "char_bits_per_utterance"))


#: The scoring conventions shown per token LM (fairppl.scoring.conventions + where the weights
#: came from), in this order.
_CONVENTIONS = ["model", "tokenizer", "languages", "start_token", "start_token_role", "end_token",
                "end_charged", "windowing", "padding", "weights"]


def conventions_table(records: list[dict]) -> pl.DataFrame:
    """One row per (model, tokenizer, conventions): the scoring conventions of the token LMs,
    with the languages they were scored on (conventions that differ between languages of one
    model, which should not happen, show up as separate rows)."""
    if not records:
        return pl.DataFrame({name: [] for name in _CONVENTIONS}, schema={n: pl.String for n in _CONVENTIONS})
    frame = pl.DataFrame([{k: (None if r.get(k) is None else str(r.get(k)))
                           for k in [*_CONVENTIONS, "language"] if k != "languages"}
                          for r in records])
    keys = [c for c in _CONVENTIONS if c != "languages"]
    return (frame.group_by(keys, maintain_order=True)
            .agg(pl.col("language").unique(maintain_order=True).str.join(" ").alias("languages"))
            .select(_CONVENTIONS).sort("model", "tokenizer"))


def summary_html(bpu: pl.DataFrame, dropped: pl.DataFrame, settings: dict,
                 models: pl.DataFrame | None = None, tokenizers: pl.DataFrame | None = None,
                 conventions: pl.DataFrame | None = None) -> str:
    """The summary page: the model comparison per language (every model on the same units), per
    (corpus, model) a table of bits per utterance, BPEC, bits per character and per byte, the
    UNK sweep, the tokenizers, the token LMs' scoring conventions, the units dropped as
    placeholders, and the settings used."""
    parts = ["<html><head><meta charset='utf-8'><title>fairppl summary</title>", _STYLE,
             "</head><body><h1>fairppl: bits per utterance on multi-text</h1>",
             "<p>All numbers are code lengths in bits of the evaluation split, every character "
             "charged (open vocabulary, end of unit included). <b>bits_per_utterance</b> = total "
             "bits / number of aligned units; <b>bpec</b> = total bits / characters of the "
             "English text of the same units; <b>bits_per_char</b> and <b>bits_per_byte</b> divide "
             "by the language's own characters and UTF-8 bytes.</p>"]
    if models is not None and models.height:
        parts.append("<h2>Models compared on the same units</h2><p>Per language, every model on "
                     "the units all of its models scored (open-vocabulary rows only).</p>")
        compare = models.filter(pl.col("open_vocabulary")).sort("corpus", "language", "bpec")
        for (corpus, language), part in compare.group_by(["corpus", "language"], maintain_order=True):
            parts.append(html_table(part.select(_COMPARE), BPU_COLUMNS,
                                    caption=f"{corpus} — {language}"))
    parts.append("<h2>Bits per utterance, per model (each on all the units it scored)</h2>")
    open_rows = bpu.filter(pl.col("open_vocabulary")).sort("bpec")
    for (corpus, model, tok), part in open_rows.group_by(["corpus", "model", "tokenizer"],
                                                         maintain_order=True):
        parts.append(html_table(part, BPU_COLUMNS,
                                caption=f"{corpus} — {model} / {tok} (hardest last)"))
    closed = bpu.filter(~pl.col("open_vocabulary"))
    if closed.height:
        parts.append("<h2>Closed vocabulary: naive vs UNK-corrected perplexity</h2>")
        parts.append("<p>Beside each closed-vocabulary word model: its bits per utterance with "
                     "p(&lt;unk&gt;) as is and UNK-corrected, and the open-vocabulary character "
                     "n-gram's bits per utterance on the same language (which charges every "
                     "character).</p>")
        parts.append(html_table(unk_table(bpu), {**BPU_COLUMNS, **_UNK_EXTRA}))
    if tokenizers is not None and tokenizers.height:
        parts.append("<h2>Tokenizers</h2>")
        parts.append(html_table(tokenizers, {"vocab_size": "trained (pieces)",
                                             "vocab_size_requested": "asked for (pieces)"}))
    if conventions is not None and conventions.height:
        parts.append("<h2>Scoring conventions of the token LMs</h2><p>Every token LM is scored by "
                     "one path (fairppl.scoring): the start token is context only, every text "
                     "token and the end token are charged, in nats converted to bits.</p>")
        parts.append(html_table(conventions, {}))
    parts.append("<h2>Placeholder units dropped</h2>")
    parts.append(html_table(dropped, _DROPPED_HEADERS))
    parts.append("<h2>Settings</h2><pre>")
    parts.append(html.escape(json.dumps(settings, indent=2, ensure_ascii=False, default=str)))
    parts.append("</pre></body></html>")
    return "\n".join(parts)
