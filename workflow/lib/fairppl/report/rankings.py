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
    script, the study's language id (the one figures and files use), then per model its ``value`` and, where the table has one, its
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
                    "script": meta.get("script"), "id": lang}
                   | {label: values.get((lang, label)) for label in labels})
    return pl.DataFrame(out, schema={"rank": pl.Int64, "language": pl.String,
                                     "script": pl.String, "id": pl.String}
                        | {label: pl.String for label in labels})


def iso_differences(sheet: pl.DataFrame, corpus: str) -> str:
    """'ara = arb, fas = pes': the languages of ``corpus`` whose id (a macrolanguage code, as
    figures and files use it) is not the ISO 639-3 code of the individual language the text is
    in; empty when every id is its own code."""
    part = sheet.filter(corpus=corpus).filter(pl.col("language") != pl.col("iso639_3"))
    return ", ".join(f"{a} = {b}" for a, b in part.select("language", "iso639_3").sort(
        "language").rows())


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


def _count(k: int, n: int, what: str) -> str:
    if k == 0 and n > 1:
        return f"none of the {n} {what}"
    return f"all {n} {what}" if k == n and n > 2 else (
        f"both {what}" if k == n == 2 else f"{k} of {n} {what}")


def headline_models(rows: pl.DataFrame) -> tuple[list[str], list[str]]:
    """The models the answer rests on, and the rest: the open-vocabulary models that scored the
    most languages of the corpus (compared on those languages), in report order; a model that
    scored fewer (a tiny Transformer run on a handful of languages) is left out of the headline
    so that hardest and easiest are never picked among different language sets."""
    counts = dict(rows.group_by("label").agg(pl.col("language").n_unique()).rows())
    most = max(counts.values())
    sets = {label: frozenset(rows.filter(label=label)["language"]) for label in counts}
    full = [m for m in model_labels(rows) if counts[m] == most]
    # Among models with the most languages, keep those on the reference model's language set.
    full = [m for m in full if sets[m] == sets[full[0]]]
    return full, [m for m in model_labels(rows) if m not in full]


def inseparable_groups(differences: pl.DataFrame) -> list[list[str]]:
    """Runs of adjacent languages (in one model's ranking, hardest first) whose paired
    differences all have intervals covering 0: the groups the data cannot order. Rows are
    :func:`fairppl.stats.bootstrap.paired_language_differences` of one model."""
    groups, current = [], []
    for r in differences.iter_rows(named=True):
        if not current:
            current = [r["language"]]
        if r["excludes_zero"]:
            if len(current) > 1:
                groups.append(current)
            current = []
        else:
            current.append(r["next_language"])
    if len(current) > 1:
        groups.append(current)
    return groups


def _interval(r: dict) -> str:
    from .html import fmt

    if r.get("bpec_ci_low") is None:
        return fmt(r["bpec"])
    return f"{fmt(r['bpec'])} [{fmt(r['bpec_ci_low'])}, {fmt(r['bpec_ci_high'])}]"


def _own_units(bpu: pl.DataFrame | None, corpus: str, labels: list[str]) -> pl.DataFrame | None:
    """The rows of ``labels`` on ``corpus`` from the table of each model on all the units it
    scored, where every such model has one unit count in all its languages (its languages on
    the same units, as a multi-text's split gives them); else None."""
    if bpu is None or not bpu.height:
        return None
    rows = open_rows(bpu, corpus).filter(pl.col("label").is_in(labels))
    if set(rows["label"]) != set(labels):
        return None
    if rows.group_by("label").agg(pl.col("n_units").n_unique())["n_units"].max() != 1:
        return None
    return rows


def answer_sentences(models: pl.DataFrame, names: dict[str, str], corpus: str,
                     differences: pl.DataFrame | None = None,
                     correlations: pl.DataFrame | None = None,
                     other_corpora: tuple[str, ...] = (), alpha: float = 0.05,
                     bpu: pl.DataFrame | None = None) -> list[str]:
    """The answer on ``corpus`` in a few sentences, every one computed from the tables: which
    models it rests on (:func:`headline_models`, chosen on the common-units table ``models``),
    the hardest and easiest languages by mean rank over those models with each model's BPEC and
    interval, whether the paired intervals (``differences``) tell them from their neighbours and
    the groups they cannot separate under the reference model, how many pairs of models agree
    beyond chance (Spearman, Benjamini-Hochberg over the pairs), and the caveats the tables
    support: the reference ranking's correlation with characters per English character
    (``correlations``) and how the ranking carries over to ``other_corpora``.

    With ``bpu`` (each model on all the units it scored) the headline models are read there
    when each has its languages on the same units (:func:`_own_units`): a model scored on
    every test unit is not cut down to the few units a costly model scored."""
    from ..stats.correlates import benjamini_hochberg
    from .html import fmt

    common = open_rows(models, corpus)
    if common.height == 0:
        return [f"No open-vocabulary model scored the {corpus} corpus."]
    name = lambda lang: names.get(lang, lang)  # noqa: E731
    full, partial = headline_models(common)
    own = _own_units(bpu, corpus, full)
    rows = own if own is not None else common
    n_units = sorted(set(rows.filter(pl.col("label").is_in(full))["n_units"]))
    split = ", ".join(sorted(set(rows["split"])))
    units = (f"the same {describe_units(n_units[0], split)} in every language"
             if len(n_units) == 1 else f"{min(n_units)}-{max(n_units)} {split} units")
    if own is not None:
        units = "each on all the units it scored: " + units
    languages = sorted(set(rows.filter(label=full[0])["language"]))
    ref = full[0]
    basis = (f"On {corpus} ({units}), the answer rests on "
             + (f"the {len(full)} models" if len(full) > 1 else "the one model")
             + f" that scored all {len(languages)} languages: {', '.join(full)}")
    if partial:
        counts = dict(common.group_by("label").agg(pl.col("language").n_unique()).rows())
        basis += ("; left out of this answer, as scored on fewer languages: "
                  + ", ".join(f"{m} ({counts[m]})" for m in partial))
    sentences = [basis + "."]
    if len(languages) < 2:
        return sentences
    head = rows.filter(pl.col("label").is_in(full)).with_columns(
        rank=pl.col("bpec").rank("ordinal", descending=True).over("label"))
    mean_rank = (head.group_by("language").agg(pl.col("rank").mean())
                 .sort(["rank", "language"]))
    hardest, easiest = mean_rank["language"][0], mean_rank["language"][-1]
    n = len(languages)

    def extreme(lang: str, rank: int, word: str) -> str:
        part = head.filter(language=lang)
        k = part.filter(pl.col("rank") == rank).height
        ordered = [part.filter(label=m).row(0, named=True) for m in full]
        values = ("; ".join(f"{r['label']} {_interval(r)}" for r in ordered) if len(full) > 1
                  else _interval(ordered[0]))
        if len(full) == 1:
            where = word
        elif k == 0:
            others = [(m, head.filter((pl.col("label") == m) & (pl.col("rank") == rank))
                       ["language"][0]) for m in full]
            where = (f"{word} under none of them; theirs: "
                     + ", ".join(f"{name(x)} ({m})" for m, x in others))
        else:
            where = f"{word} under {_count(k, len(full), 'models')}"
        return f"{name(lang)} ({where}; BPEC {values} bits/English char)"

    sentences.append(f"Hardest by mean rank over these models: {extreme(hardest, 1, 'first')}. "
                     f"Easiest: {extreme(easiest, n, 'last')}.")
    if differences is not None and differences.height:
        diffs = differences.filter(pl.col("corpus") == corpus).with_columns(
            label=pl.col("model") + " / " + pl.col("tokenizer"))
        told = []
        for label in full:
            part = diffs.filter(label=label)
            if not part.height:
                continue
            told.append((label, part.row(0, named=True), part.row(-1, named=True)))
        if told:
            apart_top = [t for t in told if t[1]["excludes_zero"]]
            apart_bottom = [t for t in told if t[2]["excludes_zero"]]
            sentences.append(
                f"Paired {1 - alpha:.0%} intervals over units tell each model's hardest "
                f"language from its next under {_count(len(apart_top), len(told), 'models')}, "
                f"and its easiest from the one above under "
                f"{_count(len(apart_bottom), len(told), 'models')}.")
            groups = inseparable_groups(diffs.filter(label=ref))
            if groups:
                sentences.append(
                    f"Under {ref}, the intervals cannot order these groups of adjacent "
                    f"languages: " + "; ".join("{" + ", ".join(name(x) for x in g) + "}"
                                               for g in groups) + ".")
            elif diffs.filter(label=ref).height:
                sentences.append(f"Under {ref}, every adjacent pair of languages is told apart "
                                 f"by its interval.")
    agree = model_agreement(bpu if own is not None else models, corpus).filter(
        pl.col("p_value").is_not_null())
    if agree.height:
        adjusted = benjamini_hochberg(agree["p_value"].to_list())
        k = sum(p is not None and p < alpha for p in adjusted)
        lo, hi = agree["spearman_rho"].min(), agree["spearman_rho"].max()
        spread = (f"Spearman's rho {lo:.2f}" if agree.height == 1 else
                  f"Spearman's rho from {lo:.2f} to {hi:.2f}")
        sizes = sorted(set(agree["n_languages"]))
        size = (f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}")
        verdict = ("every pair's agreement is beyond chance" if k == agree.height else
                   f"no pair's agreement can be told from chance with {size} languages"
                   if k == 0 else
                   f"the other pairs' agreement cannot be told from chance with {size} "
                   f"languages")
        basis_text = "each model on all its units, " if own is not None else ""
        sentences.append(
            f"Do the models rank the languages alike? {_count(k, agree.height, 'pairs')} of "
            f"models have a rank correlation different from 0 ({basis_text}Benjamini-Hochberg "
            f"adjusted p < {alpha:g} over the {agree.height} pairs; {spread}): {verdict}.")
    sentences.extend(_caveats(full, corpus, correlations,
                              bpu if own is not None else models, other_corpora, alpha))
    sentences.extend(breadth_sentences(bpu if own is not None else models, corpus, ref,
                                       other_corpora, name))
    return sentences


def breadth_sentences(table: pl.DataFrame, corpus: str, ref: str, other_corpora, name
                      ) -> list[str]:
    """What the answer's reference model ``ref`` says on each of ``other_corpora`` that has more
    languages than ``corpus`` (the wide study's Bible corpora): its hardest and easiest language
    there, and where ``corpus``'s hardest and easiest under ``ref`` rank among them. ``name``
    maps a language id to its name."""
    main = open_rows(table, corpus).filter(label=ref).sort("bpec", descending=True)
    out = []
    for other in other_corpora:
        rows = open_rows(table, other).filter(label=ref).sort("bpec", descending=True)
        if rows.height <= main.height or main.height < 2:
            continue
        order = rows["language"].to_list()
        shared = set(order) & set(main["language"])
        top, bottom = rows.row(0, named=True), rows.row(-1, named=True)

        def where(lang: str) -> str:
            return (f"ranks {order.index(lang) + 1} of {len(order)} there" if lang in order
                    else f"is not among its languages")
        hardest, easiest = main["language"][0], main["language"][-1]
        units = describe_units_of(rows)
        if hardest in order or easiest in order:
            placed = (f"{corpus}'s hardest under it, {name(hardest)}, {where(hardest)}, and its "
                      f"easiest, {name(easiest)}, {where(easiest)}")
        else:
            placed = (f"neither {corpus}'s hardest under it ({name(hardest)}) nor its easiest "
                      f"({name(easiest)}) is among {other}'s languages")
        out.append(
            f"At {len(order)} languages ({other}, {units}; {len(shared)} of them also in "
            f"{corpus}), {ref} finds {name(top['language'])} hardest (BPEC {top['bpec']:.3f}) "
            f"and {name(bottom['language'])} easiest ({bottom['bpec']:.3f}); {placed}.")
    return out


def describe_units_of(rows: pl.DataFrame) -> str:
    """'3,927 test units' where every row has the same count, else 'from A to B test units'."""
    sizes = sorted(set(rows["n_units"]))
    split = ", ".join(sorted(set(rows["split"])))
    if len(sizes) == 1:
        return describe_units(sizes[0], split)
    return f"{min(sizes):,} to {max(sizes):,} {split} units per language"


def _caveats(full, corpus, correlations, table, other_corpora, alpha) -> list[str]:
    """The reference model's ranking against characters per English character, and whether the
    ranking of the answer's models (``full``, read in ``table``) carries over to each of
    ``other_corpora`` (Spearman per model, Benjamini-Hochberg over the models)."""
    from ..stats.correlates import benjamini_hochberg

    ref = full[0]
    out = []
    if correlations is not None and correlations.height:
        corr = correlations.filter((pl.col("corpus") == corpus)
                                   & (pl.col("feature") == "chars_per_english_char")
                                   & (pl.col("model") + " / " + pl.col("tokenizer") == ref)
                                   & pl.col("spearman_rho").is_not_null())
        if corr.height:
            c = corr.row(0, named=True)
            stat = f"Spearman's rho {c['spearman_rho']:.2f}, {_p(c['p_value'])}, " \
                   f"{c['n_languages']} languages"
            if c["p_value"] is not None and c["p_value"] < alpha and c["spearman_rho"] > 0:
                out.append(f"Caveat: {ref}'s ranking follows characters per English character "
                           f"({stat}), so a writing system that spends fewer characters on the "
                           f"same content comes out easier partly for that reason.")
            else:
                out.append(f"No relation of {ref}'s ranking to characters per English "
                           f"character is detected ({stat}).")
    for other in other_corpora:
        transfer = ranking_transfer(table, corpus, other).filter(
            pl.col("model").is_in(full) & pl.col("p_value").is_not_null())
        if not transfer.height:
            continue
        adjusted = benjamini_hochberg(transfer["p_value"].to_list())
        kept = [m for m, p in zip(transfer["model"], adjusted) if p is not None and p < alpha]
        lo, hi = transfer["spearman_rho"].min(), transfer["spearman_rho"].max()
        rho = f"rho {lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"rho {lo:.2f} to {hi:.2f}"
        sizes = sorted(set(transfer["n_languages"]))
        models = _count(transfer.height, transfer.height, "models") if transfer.height > 1 \
            else "the one model"
        if not kept:
            out.append(f"Caveat: the {corpus} ranking is not detected to carry over to {other} "
                       f"under {models} of the answer ({rho}, every p >= "
                       f"{transfer['p_value'].min():.2g}, {sizes[-1]} languages).")
        else:
            out.append(f"The {corpus} ranking carries over to {other} under "
                       f"{_count(len(kept), transfer.height, 'models')} of the answer "
                       f"({', '.join(kept)}; Benjamini-Hochberg adjusted p < {alpha:g}; {rho}).")
    return out
