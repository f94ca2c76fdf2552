"""The per-language table of the morphology stage (``morphology_languages.csv``): each language's
morphology measures by source, beside the BPEC of every model on words, on lemmas and (where the
marginal stage has it) marginalised over tokenizations, the numbers the regressions use and
nothing else.

BPEC on lemmas is divided by the characters of the **original** English text of the same units,
as BPEC on words is: both are bits per the same constant, so their difference is the cost of
modelling inflection in bits per English character (the paper's Figure 1c).

Every model's words and lemmas BPEC are on one unit set: the units that every language scored on
words and every lemmatized language scored on lemmas, so that a language's two numbers and
different languages' numbers are on identical text.
"""

from __future__ import annotations

import polars as pl

from ..core.errors import InputError

#: The morphology measures and what they count.
MEASURES = {
    "mcc": "morphological counting complexity: distinct inflectional feature bundles (count)",
    "forms_per_lemma": "distinct word forms per lemma of the dictionary (ratio)",
}

#: The sources of each measure, in table order.
SOURCES = {
    "mcc": ("published", "apertium", "unimorph"),
    "forms_per_lemma": ("simplemma", "apertium"),
}

#: Which marginal estimate stands for a (model, tokenizer): the exact sum where the marginal stage
#: has it, else the first unbiased estimator of this list it ran.
MARGINAL_PREFERENCE = ("exact", "lm-guided", "wor-1best", "wor", "wr")

#: The texts a BPEC column can be on.
TEXTS = ("words", "lemmas", "marginal")


def bpec_column(text: str, model: str, tokenizer: str) -> str:
    """Name of the BPEC column of ``model``/``tokenizer`` on ``text`` (words, lemmas, marginal)."""
    return f"bpec.{text}.{model}.{tokenizer}"


def parse_bpec_column(name: str) -> tuple[str, str, str] | None:
    """(text, model, tokenizer) of a column named by :func:`bpec_column`, else None."""
    parts = name.split(".", 3)
    if len(parts) != 4 or parts[0] != "bpec" or parts[1] not in TEXTS:
        return None
    return parts[1], parts[2], parts[3]


def measures_long(mcc: pl.DataFrame, forms: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per (language, measure, source): value and note, from the MCC table (its `total`
    rows give ``mcc``; its ``forms_per_lemma`` column gives the Apertium forms per lemma) and the
    forms-per-lemma table (simplemma)."""
    need = {"language", "source", "pos", "mcc", "forms_per_lemma", "note"}
    missing = need - set(mcc.columns)
    if missing:
        raise InputError(f"MCC table lacks columns {sorted(missing)}")
    total = mcc.filter(pl.col("pos") == "total")
    parts = [
        total.select("language", pl.lit("mcc").alias("measure"), "source",
                     pl.col("mcc").cast(pl.Float64).alias("value"), "note"),
        total.filter(pl.col("source") == "apertium").select(
            "language", pl.lit("forms_per_lemma").alias("measure"), "source",
            pl.col("forms_per_lemma").cast(pl.Float64).alias("value"), "note"),
    ]
    if forms is not None and forms.height:
        parts.append(forms.select("language", pl.lit("forms_per_lemma").alias("measure"),
                                  "source", pl.col("forms_per_lemma").cast(pl.Float64)
                                  .alias("value"), "note"))
    out = pl.concat([p.with_columns(pl.col("note").cast(pl.String)) for p in parts])
    dup = out.group_by("language", "measure", "source").len().filter(pl.col("len") > 1)
    if dup.height:
        row = dup.row(0, named=True)
        raise InputError(f"two {row['source']} {row['measure']} values for {row['language']}")
    return out


def text_bpec(words: pl.DataFrame, lemmas: pl.DataFrame | None,
              english: pl.DataFrame) -> pl.DataFrame:
    """BPEC per (corpus, language, model, tokenizer, text) on words and lemmas, each model on one
    unit set (see the module docstring).

    ``words`` and ``lemmas`` are per-unit score tables (columns corpus, language, model, tokenizer,
    unit_id, bits); ``lemmas``' corpus names are those of the words they were made from.
    ``english`` is :func:`fairppl.stats.metrics.english_char_counts` of the original text."""
    keys = ["corpus", "model", "tokenizer"]
    cols = keys + ["language", "unit_id", "bits"]
    frames = [words.select(cols).with_columns(text=pl.lit("words"))]
    if lemmas is not None and lemmas.height:
        frames.append(lemmas.select(cols).with_columns(text=pl.lit("lemmas")))
    scores = pl.concat(frames)
    runs = pl.struct("language", "text")
    n_runs = scores.group_by(keys).agg(runs.n_unique().alias("n_runs"))
    common = (scores.group_by(keys + ["unit_id"]).agg(runs.n_unique().alias("n"))
              .join(n_runs, on=keys).filter(pl.col("n") == pl.col("n_runs"))
              .select(keys + ["unit_id"]))
    scores = scores.join(common, on=keys + ["unit_id"], how="semi")
    joined = scores.join(english, on=["corpus", "unit_id"], how="left")
    if joined["n_english_chars"].null_count():
        raise InputError("per-unit scores name units that the English text does not have")
    return (joined.group_by(keys + ["language", "text"], maintain_order=True)
            .agg(bpec=pl.col("bits").sum() / pl.col("n_english_chars").sum(),
                 n_units=pl.len())
            .sort(keys + ["language", "text"]))


def marginal_bpec(marginal: pl.DataFrame) -> pl.DataFrame:
    """One marginal BPEC per (corpus, language, model, tokenizer) from the marginal stage's table:
    the estimator first in :data:`MARGINAL_PREFERENCE` that ran for that (model, tokenizer) in
    every language, with its name and unit count."""
    rows = []
    for (corpus, model, tok), part in marginal.group_by(["corpus", "model", "tokenizer"],
                                                        maintain_order=True):
        languages = set(part["language"])
        part = part.filter(pl.col("bpec").is_not_null())
        for estimator in MARGINAL_PREFERENCE:
            chosen = part.filter(pl.col("estimator") == estimator)
            if set(chosen["language"]) == languages:
                rows.append(chosen.select(
                    "corpus", "language", "model", "tokenizer", pl.lit("marginal").alias("text"),
                    pl.col("bpec").cast(pl.Float64), pl.col("n_units").cast(pl.Int64),
                    pl.col("estimator")))
                break
    schema = {"corpus": pl.String, "language": pl.String, "model": pl.String,
              "tokenizer": pl.String, "text": pl.String, "bpec": pl.Float64,
              "n_units": pl.Int64, "estimator": pl.String}
    return pl.concat(rows) if rows else pl.DataFrame(schema=schema)


def languages_table(corpus: str, languages: list[str], measures: pl.DataFrame,
                    bpec: pl.DataFrame, lemma_reasons: dict[str, str]) -> pl.DataFrame:
    """``morphology_languages``: one row per (language, measure, source) for every language of
    ``corpus``: the measure's value (null with the reason in ``note`` where the source has none),
    and one column per (text, model, tokenizer) of ``bpec`` (:func:`bpec_column`).

    ``lemma_reasons`` maps each language without a lemmatized copy to the reason; it goes to
    ``lemmas_note``."""
    data = bpec.filter(pl.col("corpus") == corpus)
    wide = (data.with_columns(column=pl.format("bpec.{}.{}.{}", "text", "model", "tokenizer"))
            .pivot(on="column", index="language", values="bpec")
            if data.height else pl.DataFrame({"language": languages}))
    columns = sorted((c for c in wide.columns if c != "language"),
                     key=lambda c: (TEXTS.index(parse_bpec_column(c)[0]), c))
    rows = []
    for measure, sources in SOURCES.items():
        for source in sources:
            have = measures.filter((pl.col("measure") == measure) & (pl.col("source") == source))
            if not have.height:
                continue
            by_language = {r["language"]: r for r in have.iter_rows(named=True)}
            for language in languages:
                row = by_language.get(language)
                value = None if row is None else row["value"]
                note = (row or {}).get("note") or None
                if value is None and not note:
                    note = f"no {source} {measure} value for {language}"
                rows.append({"corpus": corpus, "language": language, "measure": measure,
                             "source": source, "value": value, "note": note,
                             "lemmas_note": lemma_reasons.get(language)})
    table = pl.DataFrame(rows, schema={
        "corpus": pl.String, "language": pl.String, "measure": pl.String, "source": pl.String,
        "value": pl.Float64, "note": pl.String, "lemmas_note": pl.String})
    return table.join(wide.select("language", *columns), on="language", how="left")


def regression_inputs(table: pl.DataFrame) -> pl.DataFrame:
    """The per-language table in long form for the regressions: one row per (corpus, language,
    measure, source, model, tokenizer, text) with x (the measure), y (the BPEC) and
    ``excluded`` (why the language is left out of that regression, else null).

    ``text`` is ``words``, ``lemmas``, ``difference`` (words minus lemmas, for the models with
    both) or ``marginal``."""
    keys = ["corpus", "language", "measure", "source", "value", "note", "lemmas_note"]
    columns = {c: parse_bpec_column(c) for c in table.columns if parse_bpec_column(c)}
    frames = []
    for column, (text, model, tok) in columns.items():
        frames.append(table.select(*keys, pl.lit(model).alias("model"),
                                   pl.lit(tok).alias("tokenizer"), pl.lit(text).alias("text"),
                                   pl.col(column).alias("y")))
        lemmas = bpec_column("lemmas", model, tok)
        if text == "words" and lemmas in table.columns:
            frames.append(table.select(*keys, pl.lit(model).alias("model"),
                                       pl.lit(tok).alias("tokenizer"),
                                       pl.lit("difference").alias("text"),
                                       (pl.col(column) - pl.col(lemmas)).alias("y")))
    schema = {"corpus": pl.String, "language": pl.String, "measure": pl.String,
              "source": pl.String, "model": pl.String, "tokenizer": pl.String,
              "text": pl.String, "x": pl.Float64, "y": pl.Float64, "excluded": pl.String}
    if not frames:
        return pl.DataFrame(schema=schema)
    long = pl.concat(frames)
    lemma_text = pl.col("text").is_in(["lemmas", "difference"])
    excluded = (pl.when(pl.col("value").is_null())
                .then(pl.coalesce("note", pl.lit("no measure")))
                .when(pl.col("y").is_null() & lemma_text & pl.col("lemmas_note").is_not_null())
                .then(pl.col("lemmas_note"))
                .when(pl.col("y").is_null())
                .then(pl.format("no {} BPEC for this model", "text"))
                .otherwise(None))
    return long.select("corpus", "language", "measure", "source", "model", "tokenizer", "text",
                       pl.col("value").alias("x"), "y", excluded.alias("excluded")).cast(schema)
