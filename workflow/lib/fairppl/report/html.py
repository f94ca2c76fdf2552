"""HTML tables of the report (a unit in every header, three significant digits, no nulls shown)
and the tables it shows beside the numbers: the UNK sweep and the scoring conventions."""

from __future__ import annotations

import html
import math

import polars as pl


def fmt(value) -> str:
    """A cell as a reader sees it: floats to three significant digits (mantissa and exponent
    only below 1e-4 and from 1e9 on), integers with thousands separators, booleans as yes/no,
    null as an empty cell."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value == 0 or math.isinf(value):
            return f"{value:g}"
        decimals = 2 - math.floor(math.log10(abs(value)))
        if decimals > 6 or decimals < -6:  # p-values, huge perplexities: mantissa and exponent
            return f"{value:.2e}"
        if decimals <= 0:
            return f"{round(value, decimals):,.0f}"
        return f"{value:.{decimals}f}"
    return str(value)


#: Words of column names as a reader should see them in a header (the rest of a name's words are
#: shown as they are, underscores as spaces): ``bpec_ci_low`` is "BPEC interval low",
#: ``chars_per_english_char`` "characters per English character".
_WORDS = {"bpec": "BPEC", "bpu": "bits/utterance", "ci": "interval", "mcc": "MCC", "oov": "OOV",
          "ppl": "perplexity", "bh": "BH-adjusted", "n": "number of", "iso639": "ISO 639",
          "se": "standard error", "bpc": "BPC", "nd": "%ND", "pct": "%", "lm": "LM",
          "rho": "rho", "udhr": "UDHR", "unk": "<unk>", "eos": "end-of-unit",
          "chars": "characters", "char": "character", "english": "English",
          "pos": "part of speech", "vocab": "vocabulary", "pearson": "Pearson",
          "spearman": "Spearman", "apertium": "Apertium", "unimorph": "UniMorph",
          "gini": "Gini", "flores": "FLORES", "mc": "Monte Carlo", "ess": "effective sample size",
          "rmse": "RMSE", "sd": "SD", "ttr": "type/token ratio", "abs": "absolute", "logp": "log P", "bpe": "BPE",
          "utf8": "UTF-8"}

#: How the source after a colon is written (``forms_per_lemma:apertium``: "forms per lemma,
#: Apertium"); any other source as it is.
_SOURCES = {"apertium": "Apertium", "unimorph": "UniMorph", "published": "published values",
            "simplemma": "simplemma"}

#: Columns whose name a word-by-word reading cannot make readable (numbers, capitals): their
#: labels.
_LABELS = {
    "paths_99_Q": "paths to 99% of the mass, in Q's order",
    "paths_99_P": "paths to 99% of the mass, in P's order",
    "paths_99_9_Q": "paths to 99.9% of the mass, in Q's order",
    "paths_99_9_P": "paths to 99.9% of the mass, in P's order",
    "reach_99_9": "units reaching 99.9% of the mass",
    "iso639_3": "ISO 639-3 code",
    "type_token_ratio": "type/token ratio",
    "type_token_ratio_fixed": "type/token ratio on the first N words",
    "utf8_bytes_per_char": "UTF-8 bytes per character",
}

#: What a column name has to look like to be read as an identifier: lower-case words and digits
#: joined by underscores, optionally with ``.<id>`` (a tokenizer, a model) or ``:<source>``
#: after it.
_IDENTIFIER = r"[A-Za-z0-9_]+(?:[.:][A-Za-z0-9_\-]+)?"


def _words(base: str) -> str:
    words = [_WORDS.get(w, w) for w in base.split("_") if w]
    if words and words[0] == "number of" and len(words) == 1:
        words = ["n"]
    return " ".join(words)


def column_label(name: str) -> str:
    """A readable header for a column named like an identifier: a label of :data:`_LABELS`;
    words joined by underscores read one by one (:data:`_WORDS`); ``<base>.<id>`` as
    "<id> <base>" (``tokens_per_word.spm-bpe-4000``: "spm-bpe-4000 tokens per word");
    ``<base>:<source>`` as "<base>, <source>" (``forms_per_lemma:apertium``: "forms per lemma,
    Apertium"). Any other name (a model label, a prose header, a single word that is not in
    :data:`_WORDS`) as it is."""
    import re

    if name in _LABELS:
        return _LABELS[name]
    if not re.fullmatch(_IDENTIFIER, name):
        return name
    if "." in name:
        base, _, qualifier = name.partition(".")
        return f"{qualifier} {_words(base)}"
    if ":" in name:
        base, _, source = name.partition(":")
        return f"{_words(base)}, {_SOURCES.get(source, source.replace('_', ' '))}"
    return _words(name)


def html_table(df: pl.DataFrame, headers: dict[str, str] | None = None, caption: str = "",
               labels: dict[str, str] | None = None) -> str:
    """Render ``df`` as an HTML table: one header per column, its name (``labels`` renames it;
    otherwise :func:`column_label` makes an identifier readable) over its unit (``headers``:
    column -> unit text); text cells left, numbers right. The caption stands above a
    ``div.wide`` that scrolls sideways, so a table wider than the page is never cut off (nor its
    caption), and the page's script marks such a table with a cue that it scrolls."""
    headers, labels = headers or {}, labels or {}
    head = "".join(
        f"<th>{html.escape(labels.get(c, column_label(c)))}<br>"
        f"<small>{html.escape(headers.get(c, ''))}</small></th>" for c in df.columns)
    rows = []
    for row in df.iter_rows():
        cells = []
        for value in row:
            css = "" if isinstance(value, (int, float)) or value is None else " class='text'"
            cells.append(f"<td{css}>{html.escape(fmt(value))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<p class='caption'>{html.escape(caption)}</p>" if caption else ""
    return (f"<figure class='table'>{cap}<div class='wide'><table><thead><tr>{head}</tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table></div></figure>")


def subsection(anchor: str, title: str) -> str:
    """A subsection heading with an anchor; the report's table of contents lists it under its
    section."""
    return f"<h3 id='{html.escape(anchor)}'>{html.escape(title)}</h3>"


def paragraph(text: str, css: str = "") -> str:
    """``text`` as an HTML paragraph (escaped), with an optional CSS class."""
    cls = f" class='{css}'" if css else ""
    return f"<p{cls}>{html.escape(text)}</p>"


def constants_text(constant: dict) -> str:
    """Columns dropped because they hold one value (:func:`drop_constant_columns`), stated once
    (nulls are not stated)."""
    return "; ".join(f"{column_label(c)} = {fmt(v)}" for c, v in constant.items()
                     if v is not None)


def drop_constant_columns(df: pl.DataFrame, keep: tuple[str, ...] = ()) -> tuple[pl.DataFrame, dict]:
    """``df`` without its columns that hold one value in every row (except ``keep``), and those
    values (column -> value), to be stated once above the table."""
    if df.height <= 1:
        return df, {}
    constant = {c: df[c][0] for c in df.columns
                if c not in keep and df[c].n_unique() == 1}
    return df.drop(list(constant)), constant


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


def unswept_sentence(bpu: pl.DataFrame, correlates: pl.DataFrame | None, settings: dict,
                     names: dict[str, str] | None = None) -> str:
    """Which languages of the word-sweep corpora the UNK sweep leaves out and why: a language
    with open-vocabulary rows but no closed-vocabulary word rows in ``bpu``; its characters per
    whitespace word of the train split (``train_chars`` / ``train_words`` of the correlates
    table, spaces included) beside ``word_ngram.max_chars_per_token``. Empty when none is left
    out."""
    names = names or {}
    word = settings.get("word_ngram") or {}
    corpora = word.get("corpora") or sorted(set(bpu.filter(~pl.col("open_vocabulary"))["corpus"]))
    listed = set(word.get("languages_without_spaces") or ())
    limit = word.get("max_chars_per_token")
    out = []
    for corpus in corpora:
        part = bpu.filter(pl.col("corpus") == corpus)
        swept = set(part.filter(~pl.col("open_vocabulary"))["language"])
        if not swept:
            continue
        left = sorted(set(part.filter(pl.col("open_vocabulary"))["language"]) - swept)
        if not left:
            continue
        ratios = {}
        if correlates is not None and {"train_chars", "train_words"} <= set(correlates.columns):
            for lang, chars, n_words in correlates.filter(pl.col("corpus") == corpus).select(
                    "language", "train_chars", "train_words").iter_rows():
                if n_words:
                    ratios[lang] = chars / n_words
        said = []
        for lang in left:
            name = f"{names[lang]} ({lang})" if lang in names else lang
            detail = [f"{fmt(ratios[lang])} characters per whitespace word"] \
                if lang in ratios else []
            if lang in listed:
                detail.append("listed in word_ngram.languages_without_spaces")
            said.append(name + (f": {', '.join(detail)}" if detail else ""))
        why = (f" (above the {fmt(float(limit))} characters per whitespace token of "
               f"word_ngram.max_chars_per_token)" if limit is not None else "")
        out.append(
            f"{corpus}: the vocabulary sweep leaves out {len(left)} language"
            f"{'s' if len(left) != 1 else ''} written without spaces between words{why}: "
            f"{'; '.join(said)}. Their whitespace \"words\" are whole phrases, so a word "
            f"vocabulary would hold phrases and almost every test word would be <unk>; their "
            f"characters are scored by the open-vocabulary models above. The decision per "
            f"language, with its measured characters per token, is in "
            f"results/tables/word_sweep_decisions.csv.")
    return " ".join(out)


#: The scoring conventions shown per token LM (fairppl.lm.scoring.conventions + where the weights
#: came from, the precision they ran in: config pretrained.dtype), in this order; lm_eval_harness: the lm-evaluation-harness settings that reproduce
#: the model's log-likelihoods and bits per byte, and what its defaults change.
_CONVENTIONS = ["model", "tokenizer", "languages", "start_token", "start_token_role", "end_token",
                "end_charged", "windowing", "padding", "weights", "dtype", "lm_eval_harness"]


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
