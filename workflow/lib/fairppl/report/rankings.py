"""Language rankings from the common-units table: the wide language x model table, how far two
models agree, how well a ranking transfers to a second corpus, and the sentences that state the
answer. Inputs are tables of fairppl.stats.metrics.bits_per_utterance on common units (one unit set
per corpus), with the interval columns of fairppl.stats.bootstrap."""

from __future__ import annotations

from itertools import combinations

import polars as pl

from ..stats.correlates import spearman
from ..stats.metrics import describe_units, model_order


def open_rows(models: pl.DataFrame, corpus: str) -> pl.DataFrame:
    """The open-vocabulary rows of ``corpus`` with a BPEC, labelled 'model / tokenizer'."""
    return (models.filter((pl.col("corpus") == corpus) & pl.col("open_vocabulary")
                          & pl.col("bpec").is_not_null())
            .with_columns(label=pl.col("model") + " / " + pl.col("tokenizer")))


def model_labels(rows: pl.DataFrame) -> list[str]:
    """Model labels in report order: character n-grams first (the reference of the rankings),
    then the others by name."""
    return model_order(rows["label"].to_list())


#: Interval columns of each rate of the tables.
_INTERVALS = {"bpec": ("bpec_ci_low", "bpec_ci_high"),
              "bits_per_utterance": ("bpu_ci_low", "bpu_ci_high")}


def wide_table(models: pl.DataFrame, sheet: pl.DataFrame, corpus: str,
               value: str = "bpec") -> pl.DataFrame:
    """One row per language of ``corpus`` (hardest first by the reference model's BPEC): name,
    script, ISO 639-3 code, then per model its ``value`` and, where the table has one, its
    interval as 'value [low, high]'. ``sheet`` is the language sheet (corpus, language, name,
    script, iso639_3)."""
    from .html import fmt

    rows = open_rows(models, corpus)
    if rows.height == 0:
        return pl.DataFrame()
    labels = model_labels(rows)
    low, high = _INTERVALS.get(value, ("", ""))
    has_ci = low in rows.columns

    def cell(r):
        if not has_ci or r[low] is None:
            return fmt(r[value])
        return f"{fmt(r[value])} [{fmt(r[low])}, {fmt(r[high])}]"

    values = {(r["language"], r["label"]): cell(r) for r in rows.iter_rows(named=True)}
    order = rows.filter(label=labels[0]).sort("bpec", descending=True)["language"].to_list()
    order += sorted(set(rows["language"]) - set(order))
    info = {r["language"]: r for r in sheet.filter(corpus=corpus).iter_rows(named=True)}
    out = []
    for rank, lang in enumerate(order, start=1):
        meta = info.get(lang, {})
        out.append({"rank": rank, "language": meta.get("name", lang),
                    "script": meta.get("script"), "iso639_3": meta.get("iso639_3", lang)}
                   | {label: values.get((lang, label)) for label in labels})
    return pl.DataFrame(out, schema={"rank": pl.Int64, "language": pl.String,
                                     "script": pl.String, "iso639_3": pl.String}
                        | {label: pl.String for label in labels})


def model_agreement(models: pl.DataFrame, corpus: str) -> pl.DataFrame:
    """Spearman's rho (and p) between the BPEC rankings of every two models of ``corpus``, over
    the languages both scored."""
    rows = open_rows(models, corpus)
    out = []
    for a, b in combinations(model_labels(rows), 2):
        joined = (rows.filter(label=a).select("language", pl.col("bpec").alias("a"))
                  .join(rows.filter(label=b).select("language", pl.col("bpec").alias("b")),
                        on="language"))
        rho, p, n = spearman(joined["a"].to_list(), joined["b"].to_list())
        out.append({"model_a": a, "model_b": b, "n_languages": n, "spearman_rho": rho,
                    "p_value": p})
    return pl.DataFrame(out, schema={"model_a": pl.String, "model_b": pl.String,
                                     "n_languages": pl.Int64, "spearman_rho": pl.Float64,
                                     "p_value": pl.Float64})


def ranking_transfer(models: pl.DataFrame, source: str, target: str) -> pl.DataFrame:
    """Per model scored on both corpora: Spearman's rho (and p) between its BPEC ranking of the
    languages on ``source`` and on ``target`` (e.g. the Bible and the UDHR)."""
    a, b = open_rows(models, source), open_rows(models, target)
    out = []
    for label in model_labels(a):
        joined = (a.filter(label=label).select("language", pl.col("bpec").alias("x"))
                  .join(b.filter(label=label).select("language", pl.col("bpec").alias("y")),
                        on="language"))
        if joined.height == 0:
            continue
        rho, p, n = spearman(joined["x"].to_list(), joined["y"].to_list())
        out.append({"model": label, "n_languages": n, "spearman_rho": rho, "p_value": p})
    return pl.DataFrame(out, schema={"model": pl.String, "n_languages": pl.Int64,
                                     "spearman_rho": pl.Float64, "p_value": pl.Float64})


def _p(p: float | None) -> str:
    if p is None:
        return "p not defined"
    return "p < 0.001" if p < 0.001 else f"p = {p:.2g}"


def answer_sentences(models: pl.DataFrame, names: dict[str, str], corpus: str,
                     differences: pl.DataFrame | None = None) -> list[str]:
    """Two or three sentences that state the answer on ``corpus``: the hardest and easiest
    languages under each model, whether the top two are told apart by the paired interval, and
    how far the models' rankings agree (Spearman, p)."""
    from .html import fmt

    rows = open_rows(models, corpus)
    if rows.height == 0:
        return [f"No open-vocabulary model scored the {corpus} corpus."]
    name = lambda lang: names.get(lang, lang)  # noqa: E731
    n_units = sorted(set(rows["n_units"]))
    per_model = []
    for label in model_labels(rows):
        part = rows.filter(label=label).sort("bpec", descending=True)
        if part.height < 2:
            continue
        hard, easy = part.row(0, named=True), part.row(-1, named=True)
        per_model.append(f"{label}: hardest {name(hard['language'])} ({fmt(hard['bpec'])} "
                         f"bits/English char), easiest {name(easy['language'])} "
                         f"({fmt(easy['bpec'])}) of {part.height}")
    split = ", ".join(sorted(set(rows["split"])))
    units = (f"the same {describe_units(n_units[0], split)}" if len(n_units) == 1
             else f"{min(n_units)}-{max(n_units)} {split} units")
    sentences = [f"On {corpus} ({units} in every language), per model — "
                 + "; ".join(per_model) + "."]
    if differences is not None and differences.height:
        ref = model_labels(rows)[0]
        top = differences.filter((pl.col("corpus") == corpus)
                                 & (pl.col("model") + " / " + pl.col("tokenizer") == ref))
        if top.height:
            t = top.row(0, named=True)
            verdict = ("the interval excludes 0" if t["excludes_zero"]
                       else "not distinguishable at this level: the interval covers 0")
            sentences.append(
                f"Under {ref}, {name(t['language'])} is harder than the next language, "
                f"{name(t['next_language'])}, by {fmt(t['bpec_difference'])} bits/English char "
                f"(95% paired interval [{fmt(t['ci_low'])}, {fmt(t['ci_high'])}]; {verdict}).")
    agree = model_agreement(models, corpus).filter(pl.col("spearman_rho").is_not_null())
    if agree.height:
        lo, hi = agree["spearman_rho"].min(), agree["spearman_rho"].max()
        ref = model_labels(rows)[0]
        with_ref = agree.filter(model_a=ref)
        detail = "; ".join(f"{r['model_b']} {r['spearman_rho']:.2f} ({_p(r['p_value'])}, "
                           f"{r['n_languages']} languages)"
                           for r in with_ref.iter_rows(named=True))
        spread = (f"Spearman's rho {lo:.2f}" if agree.height == 1 else
                  f"Spearman's rho between {lo:.2f} and {hi:.2f} over {agree.height} pairs of "
                  f"models")
        sentences.append(f"The models agree on the ranking with {spread}"
                         + (f"; against {ref}: {detail}." if detail else "."))
    return sentences
