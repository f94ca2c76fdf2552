"""The report's paragraph on translations of one language (fairppl.morphology.translations):
how much difficulty moves between two translations of one language beside how much it moves
between languages, its sentences computed from ``difficulty_translations.csv``."""

from __future__ import annotations

import math

import polars as pl

from .html import constants_text, drop_constant_columns, fmt, html_table
from .html import paragraph as _p
from .plots import model_label

#: Units of the columns shown.
HEADERS = {
    "corpus": "corpus, or corpora joined by +",
    "model": "model / tokenizer",
    "scale": "what x is",
    "n_translations": "translations, N (count)",
    "n_languages": "languages, G (count)",
    "n_multi": "languages with more than one translation (count)",
    "multi_languages": "names",
    "df_within": "N - G (count)",
    "within_sd": "pooled SD of x between translations of a language (nats)",
    "within_pct": "as a factor (percent)",
    "between_sd": "SD of the languages' mean x (nats)",
    "between_pct": "as a factor (percent)",
    "noise_sd": "within SD that fit noise alone gives (nats)",
    "within_share": "share of the variance within a language (fraction)",
    "within_share_low": "F-based interval, lower end",
    "within_share_high": "upper end",
    "ci_level": "interval coverage (fraction)",
    "iso639_3": "language",
    "translation_corpus": "corpus of the translation",
    "language": "translation",
    "difficulty": "d_j, or d_j / d_English of its corpus (ratio)",
    "log_difficulty": "x (nats)",
    "log_difficulty_se": "standard error of ln d_j (nats)",
    "deviation": "x minus its language's mean (nats)",
    "language_range": "largest minus smallest x of its language (nats)",
}

#: Readable names of the columns whose own names read badly.
LABELS = {
    "n_multi": "languages with several translations",
    "multi_languages": "which",
    "df_within": "degrees of freedom within",
    "iso639_3": "language",
    "language": "translation",
}


def _span(values: list[float], unit: str) -> str:
    """One value, or the smallest to the largest."""
    low, high = min(values), max(values)
    return f"{low:.1f}{unit}" if f"{low:.1f}" == f"{high:.1f}" else (
        f"{low:.1f}{unit} to {high:.1f}{unit}")


def language_names(rows: pl.DataFrame | None, names: dict[str, str]) -> dict[str, str]:
    """ISO 639-3 code -> a name: the sheet's name of the id equal to the code, else of its
    first translation's id, else the code."""
    found: dict[str, str] = {}
    if rows is not None and {"iso639_3", "language"} <= set(rows.columns):
        for code, language in rows.select("iso639_3", "language").iter_rows():
            found.setdefault(code, names.get(code) or names.get(language) or code)
    return found


def translation_sentences(summary: pl.DataFrame, iso_names: dict[str, str]) -> list[str]:
    """One sentence per scope (a corpus, or corpora compared through their English) that has a
    language with more than one translation: the within-language spread beside the
    between-language spread, as factors (100 (e^sd - 1) %), over its models."""
    sentences = []
    multi = summary.filter(pl.col("n_multi") > 0)
    for (corpus,), part in multi.group_by(["corpus"], maintain_order=True):
        codes = sorted({c for cell in part["multi_languages"] for c in cell.split(";") if c})
        languages = ", ".join(iso_names.get(c, c) for c in codes)
        models = part.height
        across = "+" in corpus
        where = (f"Across {corpus.replace('+', ' and ')} (each translation relative to its own "
                 f"corpus's English, the King James Version)" if across else f"In {corpus}")
        within = part["within_pct"].drop_nulls().to_list()
        between = part["between_pct"].drop_nulls().to_list()
        share = part["within_share"].drop_nulls().to_list()
        noise = [100 * math.expm1(n) for n in part["noise_sd"].drop_nulls()]
        df = int(part["df_within"].max())
        over = f" over the {models} models" if models > 1 else ""
        text = (f"{where}, between translations of one language, difficulty varies by "
                f"{_span(within, '%')} (pooled standard deviation of ln d as a factor; "
                f"{len(codes)} language{'s' if len(codes) != 1 else ''} with more than one "
                f"translation: {languages}; {fmt(df)} degree{'s' if df != 1 else ''} of "
                f"freedom" + (f"; the fit's noise alone would give {_span(noise, '%')}"
                              if noise else "")
                + f"), between languages by {_span(between, '%')} (standard deviation of the "
                f"{fmt(int(part['n_languages'].max()))} languages' means){over}")
        if share:
            text += (f"; the translation holds {_span([100 * s for s in share], '%')} of the "
                     f"variance (one-way analysis of variance")
            one = part.row(0, named=True)
            lows = part["within_share_low"].drop_nulls().to_list()
            highs = part["within_share_high"].drop_nulls().to_list()
            if models == 1 and one["within_share_low"] is not None:
                text += (f"; {one['ci_level']:.0%} interval {100 * one['within_share_low']:.1f}%"
                         f" to {100 * one['within_share_high']:.1f}%")
            elif lows and highs:
                # several models: the interval that holds every model's, so that a point
                # estimate per model is never read without its (often wide) uncertainty
                text += (f"; the models' {one['ci_level']:.0%} intervals together span "
                         f"{100 * min(lows):.1f}% to {100 * max(highs):.1f}%")
            text += ")"
        sentences.append(text + ".")
    return sentences


def _labelled(df: pl.DataFrame, iso_names: dict[str, str], names: dict[str, str]
              ) -> pl.DataFrame:
    if {"model", "tokenizer"} <= set(df.columns):
        df = df.with_columns(model=pl.struct("model", "tokenizer").map_elements(
            lambda r: model_label(r["model"], r["tokenizer"]), return_dtype=pl.String)
        ).drop("tokenizer")
    if "multi_languages" in df.columns:
        df = df.with_columns(pl.col("multi_languages").map_elements(
            lambda cell: ", ".join(iso_names.get(c, c) for c in cell.split(";") if c),
            return_dtype=pl.String))
    if "iso639_3" in df.columns:
        df = df.with_columns(pl.col("iso639_3").replace(iso_names))
    if "language" in df.columns:
        df = df.with_columns(pl.col("language").replace(names))
    return df


def _table(df: pl.DataFrame, caption: str, keep: tuple[str, ...]) -> str:
    df, constant = drop_constant_columns(df, keep=keep)
    stated = constants_text(constant)
    return html_table(df, HEADERS, caption=caption + (f" ({stated})" if stated else ""),
                      labels=LABELS)


def translation_parts(tables: dict[str, pl.DataFrame], names: dict[str, str]) -> list[str]:
    """The paragraph and tables on translations of one language (``translations``,
    ``translation_rows`` of the morphology tables); nothing when no corpus has a language with
    more than one translation."""
    summary = tables.get("translations")
    if summary is None or not summary.height or not (summary["n_multi"] > 0).any():
        return []
    rows = tables.get("translation_rows")
    iso_names = language_names(rows, names)
    parts = [_p(
        "The difficulty model takes each translation as a language of its own (Mielke et al.'s "
        "Model 2 fits one d_j per translation). Where a language has more than one "
        "translation, the spread of ln d between them, pooled over such languages, measures "
        "how much of \"a language's difficulty\" is its translator's. Two corpora's "
        "difficulties come from separate fits, so across corpora each translation is taken "
        "relative to its own corpus's English reference (the same King James text in each). "
        "The interval of the share treats the translations as drawn at random; with one or two "
        "languages it is wide.", "note")]
    parts.extend(_p(s, "answer") for s in translation_sentences(summary, iso_names))
    shown = summary.filter(pl.col("n_multi") > 0)
    parts.append(_table(_labelled(shown, iso_names, names), "Difficulty between translations "
                        "of one language and between languages (difficulty_translations.csv)",
                        keep=("corpus", "model")))
    if rows is not None and rows.height:
        parts.append(_table(_labelled(rows, iso_names, names), "The translations of the "
                            "languages with more than one, on the scale of their row",
                            keep=("corpus", "model", "language")))
    return parts
