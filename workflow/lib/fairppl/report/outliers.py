"""Outliers of a second domain, with their cause computed from the tables.

A language is an outlier on a corpus when its BPEC under the reference model (the first open-
vocabulary model of the report's order, a character n-gram where there is one) is far from the
other languages': its robust z, |x - median| / (1.4826 x MAD) over the corpus's languages, is
above :data:`ROBUST_Z` (Iglewicz and Hoaglin's cut-off for the modified z-score; 1.4826 x MAD
estimates the standard deviation of normal data, and neither the median nor the MAD moves with
the outlier itself). For each outlier the report states, beside its BPEC and the next
language's, the characters of its scored text the model never saw in training (``n_unseen`` of
the models table) and which characters they are (``unseen_chars`` of the correlates table): a
text written in another spelling than the train split (Romanian before and after the 1993
reform, "î" against "â") shows up there.
"""

from __future__ import annotations

import polars as pl

from .html import fmt
from .rankings import model_labels, open_rows

#: The robust z above which a language is called an outlier.
ROBUST_Z = 3.5

#: The fewest languages a corpus needs before any is called an outlier.
MIN_LANGUAGES = 5

#: 1 / Phi^-1(3/4): 1.4826 x MAD estimates the standard deviation of normal data.
MAD_SCALE = 1.4826


def robust_z(values: pl.Series) -> pl.Series | None:
    """(x - median) / (1.4826 x MAD) of each value; None when the MAD is 0 (half the values
    equal: no scale to measure distance in)."""
    median = values.median()
    mad = (values - median).abs().median()
    if not mad:
        return None
    return (values - median) / (MAD_SCALE * mad)


def domain_outliers(models: pl.DataFrame, corpus: str) -> pl.DataFrame:
    """The outliers of ``corpus`` under its reference model: language, its BPEC, the next
    language (the nearest of the others on the outlier's side, i.e. the hardest of the rest for
    a hard outlier) and its BPEC, the robust z, ``n_unseen`` (tokens the model never saw in
    training, characters for a character model) and the median ``n_unseen`` over the corpus's
    languages. Empty with fewer than :data:`MIN_LANGUAGES` languages."""
    schema = {"model": pl.String, "tokenizer": pl.String, "language": pl.String,
              "bpec": pl.Float64, "next_language": pl.String, "next_bpec": pl.Float64,
              "robust_z": pl.Float64, "n_unseen": pl.Int64, "median_n_unseen": pl.Float64,
              "n_languages": pl.Int64}
    rows = open_rows(models, corpus)
    if not rows.height:
        return pl.DataFrame(schema=schema)
    label = model_labels(rows)[0]
    ref = rows.filter(label=label).unique("language").sort("bpec")
    if ref.height < MIN_LANGUAGES:
        return pl.DataFrame(schema=schema)
    z = robust_z(ref["bpec"])
    if z is None:
        return pl.DataFrame(schema=schema)
    ref = ref.with_columns(z.alias("robust_z"))
    has_unseen = "n_unseen" in ref.columns
    median_unseen = float(ref["n_unseen"].median()) if has_unseen else None
    out = []
    for row in ref.filter(pl.col("robust_z").abs() > ROBUST_Z).iter_rows(named=True):
        rest = ref.filter(pl.col("language") != row["language"])
        nearest = rest.row(rest.height - 1 if row["robust_z"] > 0 else 0, named=True)
        out.append({"model": row["model"], "tokenizer": row["tokenizer"],
                    "language": row["language"], "bpec": row["bpec"],
                    "next_language": nearest["language"], "next_bpec": nearest["bpec"],
                    "robust_z": row["robust_z"],
                    "n_unseen": row["n_unseen"] if has_unseen else None,
                    "median_n_unseen": median_unseen, "n_languages": ref.height})
    return pl.DataFrame(out, schema=schema)


def outlier_sentences(models: pl.DataFrame, correlates: pl.DataFrame | None, corpus: str,
                      names: dict[str, str], train_corpus: str | None = None) -> list[str]:
    """One sentence per outlier of ``corpus`` (:func:`domain_outliers`): how far it stands, how
    many of its characters the model never saw in training and which (from the correlates
    table's ``unseen_chars``), or that it has none, so the cause is elsewhere."""
    out = []
    for row in domain_outliers(models, corpus).iter_rows(named=True):
        lang, other = row["language"], row["next_language"]
        name = f"{names.get(lang, lang)} ({lang})"
        side = "harder" if row["robust_z"] > 0 else "easier"
        label = f"{row['model']} / {row['tokenizer']}"
        text = (f"{name} stands apart on {corpus}: BPEC {fmt(row['bpec'])} under {label} "
                f"against {fmt(row['next_bpec'])} for the next {side} language, "
                f"{names.get(other, other)}; robust z {row['robust_z']:.1f} (|BPEC - median| / "
                f"(1.4826 x MAD) over the {row['n_languages']} languages; above {ROBUST_Z} is "
                f"called an outlier).")
        unit = "characters" if row["tokenizer"] == "char" else "tokens"
        trained = f" (the train split of {train_corpus})" if train_corpus else ""
        n = row["n_unseen"]
        if n is None:
            out.append(text)
            continue
        chars = _unseen_chars(correlates, corpus, lang)
        if n:
            text += (f" Its scored text has {n:,} {unit} the model never saw in training"
                     f"{trained}, each charged as <unk> plus its spelled-out bytes (median "
                     f"over the languages: {fmt(row['median_n_unseen'])})")
            text += (f"; the unseen characters, most frequent first (character, code point, "
                     f"count): {chars}." if chars else ".")
            text += (" Characters the train split never uses point to another spelling or "
                     "typography than the one the models learnt.")
        else:
            text += (f" It has no {unit} the model never saw in training{trained}: its cost is "
                     f"not the character inventory.")
        out.append(text)
    return out


def _unseen_chars(correlates: pl.DataFrame | None, corpus: str, language: str) -> str:
    if correlates is None or "unseen_chars" not in correlates.columns:
        return ""
    part = correlates.filter((pl.col("corpus") == corpus) & (pl.col("language") == language))
    value = part["unseen_chars"][0] if part.height else None
    return value or ""
