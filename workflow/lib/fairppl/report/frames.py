"""The rows of the report's sections before they become sentences and HTML: per section of
fairppl.report.pages, the tables it shows and the plain values (counts, lists, flags) its sentences
use. Tables in, tables and values out; no prose, no HTML. Cells already written as text are
those of :func:`fairppl.report.rankings.wide_table` ('value [low, high]') and
:func:`correlation_cells`."""

from __future__ import annotations

from typing import NamedTuple

import polars as pl

from .html import drop_constant_columns, fmt, unk_table
from .rankings import answer_order, model_agreement, open_rows, ranking_transfer, wide_table


def unit_sizes(models: pl.DataFrame, corpus: str) -> tuple[list[int], list[str]]:
    """The distinct unit counts of ``corpus``'s rows of ``models`` (ascending) and its distinct
    splits (by name)."""
    part = models.filter(corpus=corpus)
    return sorted(set(part["n_units"])), sorted(set(part["split"]))


def own_unit_groups(bpu: pl.DataFrame, corpus: str) -> pl.DataFrame:
    """(n_units, split, labels): the open-vocabulary models of ``corpus`` in ``bpu`` (each model
    on all its units) grouped by the units they scored, most units first; ``labels`` ('model /
    tokenizer', a list) by name within a group."""
    return (open_rows(bpu, corpus).select("label", "n_units", "split").unique()
            .sort("n_units", "label", descending=[True, False])
            .group_by("n_units", "split", maintain_order=True).agg(pl.col("label").alias("labels")))


def answer_table(models: pl.DataFrame, bpu: pl.DataFrame, sheet: pl.DataFrame,
                 corpus: str) -> pl.DataFrame:
    """The table beside the answer: :func:`wide_table` of ``bpu`` (each model on all the units it
    scored; BPEC in bits/char of English with its interval, as text), languages in the order of
    the answer's ranking (:func:`answer_order` on the common-units table ``models``)."""
    return wide_table(bpu, sheet, corpus, order=answer_order(models, bpu, corpus))


def rate_tables(models: pl.DataFrame, bpu: pl.DataFrame, sheet: pl.DataFrame, corpus: str,
                rates) -> dict[str, pl.DataFrame]:
    """rate -> :func:`wide_table` of the common-units table ``models`` with that rate (a column
    of ``models``, e.g. bits_per_utterance) per model, languages in the answer's order, for each
    of ``rates`` in its order; empty where ``corpus`` has no open-vocabulary row."""
    if not open_rows(models, corpus).height:
        return {}
    order = answer_order(models, bpu, corpus)
    return {rate: wide_table(models, sheet, corpus, value=rate, order=order) for rate in rates}


def ranked_agreement(bpu: pl.DataFrame, corpus: str) -> pl.DataFrame:
    """:func:`model_agreement` of each model on all the units it scored, without the pairs that
    have no rho (fewer than 3 shared languages)."""
    return model_agreement(bpu, corpus).filter(pl.col("spearman_rho").is_not_null())


class SecondDomain(NamedTuple):
    """What the report shows of one second-domain corpus."""

    #: Corpora its models were trained on ([] where ``models`` has no train_corpus).
    train_corpora: list[str]
    #: The most units of any of its rows (count).
    most_units: int
    #: Its common-set notes that say languages were left out, sorted.
    left_out: list[str]
    #: :func:`wide_table` of its BPEC, languages ranked by the first model's.
    table: pl.DataFrame
    #: :func:`ranking_transfer` from the main corpus to it.
    transfer: pl.DataFrame


def second_domain(models: pl.DataFrame, sheet: pl.DataFrame, main: str,
                  corpus: str) -> SecondDomain | None:
    """The second-domain corpus ``corpus`` of the common-units table ``models`` (None where it has
    no open-vocabulary row), against the main corpus ``main``."""
    if not open_rows(models, corpus).height:
        return None
    rows = models.filter(corpus=corpus)
    trained = (rows["train_corpus"].drop_nulls().unique().to_list()
               if "train_corpus" in rows.columns else [])
    notes = (sorted(set(rows["common_set_languages"].drop_nulls()) - {""})
             if "common_set_languages" in rows.columns else [])
    return SecondDomain(trained, rows["n_units"].max(), [x for x in notes if "left out" in x],
                        wide_table(models, sheet, corpus), ranking_transfer(models, main, corpus))


#: The suffixes of the per-tokenizer columns of :func:`unk_wide`, after '<tokenizer>: '.
UNK_SUFFIXES = ("OOV rate", "naive", "corrected")


def unk_wide(bpu: pl.DataFrame) -> tuple[pl.DataFrame, dict] | None:
    """None where ``bpu`` has no closed-vocabulary row. Else one row per (corpus, language, word
    model) of :func:`unk_table`: per character n-gram '<model> (open vocabulary)', its bits per
    utterance on the same corpus and language; per tokenizer '<tokenizer>: OOV rate' (<unk>
    tokens / words), '<tokenizer>: naive' (p(<unk>) as is) and '<tokenizer>: corrected' (every
    p(<unk>) / #OOV types), both in bits/utterance. The columns holding one value in every row
    (language kept) are dropped and returned as column -> value."""
    if not bpu.filter(~pl.col("open_vocabulary")).height:
        return None
    table = unk_table(bpu)
    keys = ["corpus", "language", "model"]
    wide = table.select(keys).unique(maintain_order=True)
    for char in table["char_model"].drop_nulls().unique(maintain_order=True):
        wide = wide.join(table.filter(char_model=char).select(
            *keys, pl.col("char_bits_per_utterance").alias(f"{char} (open vocabulary)"))
            .unique(keys), on=keys, how="left")
    naive, corrected = "bits_per_utterance", "unk_corrected_bits_per_utterance"
    for tok in table["tokenizer"].unique(maintain_order=True):
        part = table.filter(tokenizer=tok).unique(keys).select(
            *keys, *(pl.col(c).alias(f"{tok}: {s}")
                     for c, s in zip(("oov_rate", naive, corrected), UNK_SUFFIXES)))
        wide = wide.join(part, on=keys, how="left")
    return drop_constant_columns(wide, keep=("language",))


def reference_label(rows: pl.DataFrame) -> str:
    """The reference of the correlates among open-vocabulary ``rows`` (:func:`open_rows`): the
    first character n-gram by label, else the first label."""
    return sorted(rows["label"].unique(), key=lambda s: (not s.startswith("kenlm-char"), s))[0]


class Correlates(NamedTuple):
    """The per-language table of the correlates section."""

    #: Per language of the main corpus, hardest first by the reference's BPEC (bits/char of
    #: English; nulls last): its text's properties, bpec, script; without constant columns.
    table: pl.DataFrame
    #: The dropped constant columns, column -> value.
    constant: dict
    #: The reference model's label (None where the corpus has no open-vocabulary row).
    reference: str | None


def correlates_table(correlates: pl.DataFrame, models: pl.DataFrame, sheet: pl.DataFrame,
                     corpus: str) -> Correlates:
    """The text properties of ``corpus`` (the correlates table) beside the BPEC of the reference
    model (:func:`reference_label`) and the script from the language sheet."""
    feats = correlates.filter(corpus=corpus)
    ref = open_rows(models, corpus)
    first = reference_label(ref) if ref.height else None
    if first is not None:
        feats = feats.join(ref.filter(label=first).select("language", "bpec"), on="language",
                           how="left").sort("bpec", descending=True, nulls_last=True)
    feats = feats.join(sheet.filter(corpus=corpus).select("language", "script"),
                       on="language", how="left").drop("corpus")
    feats, constant = drop_constant_columns(feats, keep=("language", "bpec", "script"))
    return Correlates(feats, constant, first)


def correlation_cells(correlations: pl.DataFrame, corpus: str) -> pl.DataFrame:
    """(feature, one column per 'model / tokenizer'): each property's Spearman rho with that
    model's BPEC across the languages of ``corpus``, as text 'rho (p P, n N)' (rho to two
    decimals, P three significant digits, N languages); empty text where rho is null."""
    corr = correlations.filter(corpus=corpus).with_columns(
        label=pl.col("model") + " / " + pl.col("tokenizer"),
        cell=pl.struct("spearman_rho", "p_value", "n_languages").map_elements(
            lambda r: "" if r["spearman_rho"] is None else
            f"{r['spearman_rho']:.2f} (p {fmt(r['p_value'])}, n {r['n_languages']})",
            return_dtype=pl.String))
    return corr.pivot(on="label", index="feature", values="cell")


def unit_counts_table(unit_counts: pl.DataFrame) -> tuple[pl.DataFrame, bool]:
    """(table, same): ``same`` where every language keeps the same units (no 'fewest (count)'
    column, or it equals 'most (count)'); then the table is without those two columns."""
    same = "fewest (count)" not in unit_counts.columns or \
        unit_counts["fewest (count)"].equals(unit_counts["most (count)"])
    if same:
        return unit_counts.drop("fewest (count)", "most (count)", strict=False), True
    return unit_counts, False


def kept_units(unit_counts: pl.DataFrame) -> dict[str, int]:
    """corpus -> its aligned units over all splits (count)."""
    return dict(unit_counts.group_by("corpus").agg(pl.col("n_units").sum()).rows())


def dropped_units_mode(part: pl.DataFrame) -> str:
    """'own' where a drop of the dropped-units table ``part`` (fairppl.corpus.align.find_dropped)
    applies in some languages only (the corpus keeps each language's own units), else
    'shared'."""
    from ..corpus.align import DROPPED_IN, EVERY_LANGUAGE

    return "own" if DROPPED_IN in part.columns and part.filter(
        pl.col(DROPPED_IN).is_not_null() & (pl.col(DROPPED_IN) != EVERY_LANGUAGE)).height \
        else "shared"


def own_drops(part: pl.DataFrame) -> tuple[int, pl.DataFrame]:
    """For a corpus with ``units: own``: the units dropped in every language (count), and per
    language whose own drops there are (the ``dropped_in`` column, one row each): ``n`` its
    dropped units, ``absent`` those in books its file lacks (counts); most drops first, ties by
    language."""
    from ..corpus.align import DROPPED_IN, EVERY_LANGUAGE, NO_BOOK

    every = part.filter(pl.col(DROPPED_IN) == EVERY_LANGUAGE)["position"].n_unique()
    own = (part.filter(pl.col(DROPPED_IN).is_not_null() & (pl.col(DROPPED_IN) != EVERY_LANGUAGE)
                       & (pl.col(DROPPED_IN) != ""))
           .with_columns(pl.col(DROPPED_IN).str.split(",")).explode(DROPPED_IN)
           .group_by(DROPPED_IN)
           .agg(pl.col("position").n_unique().alias("n"),
                pl.col("position").filter(pl.col("how") == NO_BOOK).n_unique().alias("absent"))
           .sort(["n", DROPPED_IN], descending=[True, False]))
    return every, own


def drops_per_translation(part: pl.DataFrame) -> pl.DataFrame:
    """(translation, placeholders, named, by_length): per translation of the dropped-units table
    ``part``, its placeholders (rows whose reason is not 'host') and the hosts of merged text
    found by the placeholder's marker (``named``) or by length (counts); most placeholders
    first, ties by translation."""
    return (part.group_by("translation")
            .agg((pl.col("reason") != "host").sum().alias("placeholders"),
                 (pl.col("how") == "marker").sum().alias("named"),
                 (pl.col("how") == "length").sum().alias("by_length"))
            .sort("placeholders", "translation", descending=[True, False]))


def source_languages(sheet: pl.DataFrame, corpus: str) -> dict[str, str]:
    """Translation code (the sheet's source_id, as text) -> the first study language of
    ``corpus`` read from it; empty where the sheet has no source_id."""
    language = {}
    if {"corpus", "source_id", "language"} <= set(sheet.columns):
        for sid, lang in sheet.filter(pl.col("corpus") == corpus).select(
                "source_id", "language").iter_rows():
            language.setdefault(str(sid), lang)
    return language


def corpus_types(settings: dict) -> dict[str, str]:
    """corpus -> its config ``type`` ('' where it has none), for the corpora configured as
    mappings."""
    return {c: str((spec or {}).get("type", "")) for c, spec in
            (settings.get("corpora") or {}).items() if isinstance(spec, dict)}
