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
               value: str = "bpec", order: list[str] | None = None) -> pl.DataFrame:
    """One row per language of ``corpus`` (in ``order``, e.g. :func:`answer_order`, where given;
    else hardest first by the reference model's BPEC; languages not in it last, by id): name,
    script, the study's language id (the one figures and files use), then per model its
    ``value`` and, where the table has one, its interval as 'value [low, high]'. ``sheet`` is the language sheet (corpus, language, name,
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
    present = set(rows["language"])
    if order is None:
        order = rows.filter(label=labels[0]).sort("bpec", descending=True)["language"].to_list()
    order = [x for x in order if x in present]
    order += sorted(present - set(order))
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


def _with_adjusted(table: pl.DataFrame) -> pl.DataFrame:
    """``table`` with ``p_adjusted``: its p_value adjusted by Benjamini-Hochberg over the rows
    that have one (the adjustment the answer's sentences count with)."""
    from ..stats.correlates import benjamini_hochberg

    return table.with_columns(p_adjusted=pl.Series(
        benjamini_hochberg(table["p_value"].to_list()), dtype=pl.Float64))


def model_agreement(models: pl.DataFrame, corpus: str) -> pl.DataFrame:
    """Spearman's rho (and p, raw and Benjamini-Hochberg adjusted over the pairs) between the
    BPEC rankings of every two models of ``corpus``, over the languages both scored."""
    rows = open_rows(models, corpus)
    out = []
    for a, b in combinations(model_labels(rows), 2):
        joined = (rows.filter(label=a).select("language", pl.col("bpec").alias("a"))
                  .join(rows.filter(label=b).select("language", pl.col("bpec").alias("b")),
                        on="language"))
        rho, p, n = spearman(joined["a"].to_list(), joined["b"].to_list())
        out.append({"model_a": a, "model_b": b, "n_languages": n, "spearman_rho": rho,
                    "p_value": p})
    return _with_adjusted(pl.DataFrame(out, schema={
        "model_a": pl.String, "model_b": pl.String, "n_languages": pl.Int64,
        "spearman_rho": pl.Float64, "p_value": pl.Float64}))


def ranking_transfer(models: pl.DataFrame, source: str, target: str) -> pl.DataFrame:
    """Per model scored on both corpora: Spearman's rho (and p, raw and Benjamini-Hochberg
    adjusted over the models) between its BPEC ranking of the languages on ``source`` and on
    ``target`` (e.g. the Bible and the UDHR)."""
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
    return _with_adjusted(pl.DataFrame(out, schema={
        "model": pl.String, "n_languages": pl.Int64, "spearman_rho": pl.Float64,
        "p_value": pl.Float64}))


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


#: Two models whose BPEC rankings of a corpus's languages correlate at Spearman's rho at least
#: this are near-duplicates (e.g. two subword tokenizers of one n-gram model): the answer's
#: mean rank counts only the first of them in report order, so one ranking is not counted twice.
NEAR_DUPLICATE_RHO = 0.98


def distinct_models(rows: pl.DataFrame, labels: list[str],
                    threshold: float = NEAR_DUPLICATE_RHO
                    ) -> tuple[list[str], list[tuple[str, str, float]]]:
    """(kept, merged): ``labels`` in their order, each kept unless its BPEC ranking (in
    ``rows``, over the languages both scored) correlates at Spearman's rho >= ``threshold``
    with a model already kept; ``merged`` has (left out, the kept model it duplicates, rho)."""
    values = {m: dict(rows.filter(label=m).select("language", "bpec").rows()) for m in labels}
    kept, merged = [], []
    for m in labels:
        for k in kept:
            shared = sorted(set(values[m]) & set(values[k]))
            rho, _, _ = spearman([values[m][x] for x in shared], [values[k][x] for x in shared])
            if rho is not None and rho >= threshold:
                merged.append((m, k, rho))
                break
        else:
            kept.append(m)
    return kept, merged


def answer_basis(models: pl.DataFrame, bpu: pl.DataFrame | None, corpus: str) -> dict:
    """What the answer on ``corpus`` rests on: ``full`` and ``partial`` (:func:`headline_models`
    on the common-units table ``models``), ``own`` (whether the rows are each model on all its
    units, :func:`_own_units`), ``rows`` (open-vocabulary rows of the full models), ``kept``
    and ``merged`` (:func:`distinct_models` of the full models on those rows) and
    ``languages`` (the reference model's, sorted). None when ``corpus`` has no open rows."""
    common = open_rows(models, corpus)
    if common.height == 0:
        return None
    full, partial = headline_models(common)
    own = _own_units(bpu, corpus, full)
    rows = (own if own is not None else common).filter(pl.col("label").is_in(full))
    kept, merged = distinct_models(rows, full)
    return {"full": full, "partial": partial, "own": own is not None, "rows": rows,
            "kept": kept, "merged": merged,
            "languages": sorted(set(rows.filter(label=full[0])["language"]))}


def mean_ranks(rows: pl.DataFrame, labels: list[str]) -> pl.DataFrame:
    """(language, rank): each language's BPEC rank (1 = hardest) averaged over ``labels``,
    hardest first, ties by language id."""
    head = rows.filter(pl.col("label").is_in(labels)).with_columns(
        rank=pl.col("bpec").rank("ordinal", descending=True).over("label"))
    return head.group_by("language").agg(pl.col("rank").mean()).sort(["rank", "language"])


def answer_order(models: pl.DataFrame, bpu: pl.DataFrame | None, corpus: str) -> list[str]:
    """The languages of ``corpus`` in the order of the answer's ranking: mean rank over the
    answer's distinct models (:func:`answer_basis`), hardest first."""
    basis = answer_basis(models, bpu, corpus)
    if basis is None:
        return []
    return mean_ranks(basis["rows"], basis["kept"])["language"].to_list()


def rank_uncertainty_table(models: pl.DataFrame, bpu: pl.DataFrame, scores: pl.DataFrame,
                           common_scores: pl.DataFrame, english: pl.DataFrame,
                           settings) -> pl.DataFrame:
    """Per corpus of ``models``, the paired bootstrap of the answer's ranking
    (:func:`fairppl.stats.bootstrap.language_rank_bootstrap`): the answer's distinct models
    (:func:`answer_basis`) on the per-unit ``scores`` (all units; ``common_scores`` where the
    answer reads the common-units table), on the units every language has under every one of
    them. ``english`` has (corpus, unit_id, n_english_chars). Columns:
    :data:`fairppl.stats.bootstrap.RANK_UNCERTAINTY_COLUMNS`."""
    import numpy as np

    from ..stats.bootstrap import RANK_UNCERTAINTY_COLUMNS, language_rank_bootstrap

    out = []
    for corpus in sorted(set(models["corpus"])):
        basis = answer_basis(models, bpu, corpus)
        if basis is None or len(basis["languages"]) < 2:
            continue
        splits = sorted(set(basis["rows"]["split"]))
        if len(splits) != 1:
            continue
        kept, languages = basis["kept"], basis["languages"]
        source = (scores if basis["own"] else common_scores).filter(
            (pl.col("corpus") == corpus) & (pl.col("split") == splits[0])
            & pl.col("open_vocabulary") & pl.col("language").is_in(languages)
        ).with_columns(label=pl.col("model") + " / " + pl.col("tokenizer")).filter(
            pl.col("label").is_in(kept))
        repeated = source.group_by("label", "language", "unit_id").len().filter(
            pl.col("len") > 1)
        if repeated.height:
            raise ValueError(
                f"{corpus}/{repeated['language'][0]}: model {repeated['label'][0]!r} scored "
                f"unit {repeated['unit_id'][0]!r} more than once (several training corpora?): "
                f"cannot rank it")
        everywhere = (source.group_by("unit_id").len()
                      .filter(pl.col("len") == len(kept) * len(languages))["unit_id"])
        part = source.filter(pl.col("unit_id").is_in(everywhere.implode()))
        units = part.select("unit_id").unique().sort("unit_id").join(
            english.filter(corpus=corpus).select("unit_id", "n_english_chars"), on="unit_id",
            how="left")
        if units.height == 0 or units["n_english_chars"].null_count():
            continue
        bits = np.stack([
            part.filter(label=m).pivot(on="language", index="unit_id", values="bits")
            .sort("unit_id").select(languages).to_numpy().astype(float) for m in kept])
        result = language_rank_bootstrap(bits, units["n_english_chars"].to_numpy(), settings)
        merged = "; ".join(f"{a} (rho {rho:.3f} with {b})" for a, b, rho in basis["merged"])
        for i, lang in enumerate(languages):
            out.append([corpus, splits[0], lang, units.height, len(languages), "; ".join(kept),
                        merged, float(result["mean_rank"][i]), int(result["position"][i]),
                        int(result["low"][i]), int(result["high"][i]),
                        float(result["hardest"][i]), float(result["easiest"][i]),
                        settings.level, settings.replicates, settings.seed])
    types = [pl.String] * 3 + [pl.Int64] * 2 + [pl.String] * 2 + [pl.Float64] + [pl.Int64] * 3 \
        + [pl.Float64] * 3 + [pl.Int64] * 2
    return pl.DataFrame(out, schema=dict(zip(RANK_UNCERTAINTY_COLUMNS, types)), orient="row")


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
                     bpu: pl.DataFrame | None = None,
                     ranks: pl.DataFrame | None = None) -> list[str]:
    """The answer on ``corpus`` in a few sentences, every one computed from the tables: which
    models it rests on (:func:`headline_models`, chosen on the common-units table ``models``)
    and which near-duplicates it counts once (:func:`distinct_models`), the hardest and easiest
    languages by mean rank over the distinct models with each model's BPEC and interval, how
    sure a paired bootstrap of ranks over units is of them (``ranks``, the table of
    :func:`rank_uncertainty_table`), whether the paired intervals (``differences``) tell them
    from their neighbours and the groups they cannot separate under the reference model, how
    many pairs of models agree beyond chance (Spearman, Benjamini-Hochberg over the pairs), and
    the caveats the tables support: the reference ranking's correlation with characters per
    English character (``correlations``) and how the ranking carries over to
    ``other_corpora``.

    With ``bpu`` (each model on all the units it scored) the headline models are read there
    when each has its languages on the same units (:func:`_own_units`): a model scored on
    every test unit is not cut down to the few units a costly model scored."""
    from ..stats.correlates import benjamini_hochberg

    basis = answer_basis(models, bpu, corpus)
    if basis is None:
        return [f"No open-vocabulary model scored the {corpus} corpus."]
    common = open_rows(models, corpus)
    name = lambda lang: names.get(lang, lang)  # noqa: E731
    full, partial, kept, rows = basis["full"], basis["partial"], basis["kept"], basis["rows"]
    own = rows if basis["own"] else None
    n_units = sorted(set(rows["n_units"]))
    split = ", ".join(sorted(set(rows["split"])))
    units = (f"the same {describe_units(n_units[0], split)} in every language"
             if len(n_units) == 1 else f"{min(n_units)}-{max(n_units)} {split} units")
    if own is not None:
        units = "each on all the units it scored: " + units
    languages = basis["languages"]
    ref = full[0]
    basis_text = (f"On {corpus} ({units}), the answer rests on "
                  + (f"the {len(full)} models" if len(full) > 1 else "the one model")
                  + f" that scored all {len(languages)} languages: {', '.join(full)}")
    if partial:
        counts = dict(common.group_by("label").agg(pl.col("language").n_unique()).rows())
        basis_text += ("; left out of this answer, as scored on fewer languages: "
                       + ", ".join(f"{m} ({counts[m]})" for m in partial))
    sentences = [basis_text + "."]
    if basis["merged"]:
        sentences.append(
            "Near-duplicates are counted once in the mean rank: "
            + "; ".join(f"{a} ranks the languages as {b} does (Spearman's rho {rho:.3f})"
                        for a, b, rho in basis["merged"])
            + f", at or above the {NEAR_DUPLICATE_RHO:g} that marks a near-duplicate, so ranks "
            f"are averaged over {', '.join(kept)}.")
    if len(languages) < 2:
        return sentences
    head = rows.filter(pl.col("label").is_in(kept)).with_columns(
        rank=pl.col("bpec").rank("ordinal", descending=True).over("label"))
    mean_rank = mean_ranks(rows, kept)
    hardest, easiest = mean_rank["language"][0], mean_rank["language"][-1]
    n = len(languages)

    def extreme(lang: str, rank: int, word: str) -> str:
        part = head.filter(language=lang)
        k = part.filter(pl.col("rank") == rank).height
        ordered = [part.filter(label=m).row(0, named=True) for m in kept]
        values = ("; ".join(f"{r['label']} {_interval(r)}" for r in ordered) if len(kept) > 1
                  else _interval(ordered[0]))
        if len(kept) == 1:
            where = word
        elif k == 0:
            others = [(m, head.filter((pl.col("label") == m) & (pl.col("rank") == rank))
                       ["language"][0]) for m in kept]
            where = (f"{word} under none of them; theirs: "
                     + ", ".join(f"{name(x)} ({m})" for m, x in others))
        else:
            where = f"{word} under {_count(k, len(kept), 'models')}"
        return f"{name(lang)} ({where}; BPEC {values} bits/English char)"

    sentences.append(f"Hardest by mean rank over these models: {extreme(hardest, 1, 'first')}. "
                     f"Easiest: {extreme(easiest, n, 'last')}.")
    for lang, which in ((hardest, "top"), (easiest, "bottom")):
        value = mean_rank.filter(language=lang)["rank"][0]
        tied = mean_rank.filter(pl.col("rank") == value)["language"].to_list()
        if len(tied) > 1:
            sentences.append(f"{_or([name(x) for x in tied], 'and')} share the {which} mean "
                             f"rank ({value:.2f}); {name(lang)} is named above as the "
                             f"{'first' if which == 'top' else 'last'} of them by language "
                             f"id, not by the data.")
    sentences.extend(rank_uncertainty_sentences(ranks, corpus, kept, languages, name))
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
        on = "each model on all its units, " if own is not None else ""
        sentences.append(
            f"Do the models rank the languages alike? {_count(k, agree.height, 'pairs')} of "
            f"models have a rank correlation different from 0 ({on}Benjamini-Hochberg "
            f"adjusted p < {alpha:g} over the {agree.height} pairs; {spread}): {verdict}.")
    sentences.extend(_caveats(full, corpus, correlations,
                              bpu if own is not None else models, other_corpora, alpha,
                              common=models if own is not None else None))
    sentences.extend(breadth_sentences(bpu if own is not None else models, corpus, ref,
                                       other_corpora, name))
    return sentences


def _or(items: list[str], word: str = "or") -> str:
    """'a', 'a or b', 'a, b or c'."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {word} {items[-1]}"


def _share(x: float) -> str:
    """A share of replicates as a percentage that never rounds to 0% or 100% unless exact."""
    if 0 < x < 0.01:
        return "<1%"
    if 0.99 < x < 1:
        return ">99%"
    return f"{x:.0%}"


def rank_uncertainty_sentences(ranks: pl.DataFrame | None, corpus: str, kept: list[str],
                               languages: list[str], name) -> list[str]:
    """How sure the paired bootstrap of ranks (``ranks``: :func:`rank_uncertainty_table`) is of
    ``corpus``'s hardest and easiest language; nothing when the table has no rows of
    ``corpus`` or was computed on other models or languages than the answer's (``kept``,
    ``languages``). A language is a candidate for hardest (easiest) when its position's
    interval reaches the first (last) place; with one candidate the sentence names it and its
    share of replicates, with more it says the data cannot single one out."""
    if ranks is None or not ranks.height:
        return []
    part = ranks.filter(corpus=corpus)
    if (not part.height or set(part["models"]) != {"; ".join(kept)}
            or sorted(part["language"]) != sorted(languages)):
        return []
    n = len(languages)
    first = part.row(0, named=True)
    level = first["level (fraction)"]

    def verdict(word: str, share: str, place: int, end: str) -> str:
        bound = "position low (1 = hardest)" if place == 1 else "position high (1 = hardest)"
        cands = part.filter(pl.col(bound) == place).sort([share, "language"],
                                                         descending=[True, False])
        if cands.height == 0:
            top = part.filter(pl.col(share) > 0).sort([share, "language"],
                                                      descending=[True, False]).head(3)
            return (f"the data cannot single out the {word}: no language comes {end} in "
                    f"{(1 - level) / 2:.1%} of the replicates or more, and none is {word} in "
                    f"more than {_share(part[share].max())} ("
                    + ", ".join(f"{name(r['language'])} {_share(r[share])}"
                                for r in top.iter_rows(named=True)) + ")")
        if cands.height == 1:
            r = cands.row(0, named=True)
            return (f"{name(r['language'])} is {word} in {_share(r[share])} of the "
                    f"replicates ({level:.0%} interval of its position by mean rank: {r['position low (1 = hardest)']} "
                    f"to {r['position high (1 = hardest)']} of {n})")
        listed = [name(x) for x in cands["language"]]
        shares = ", ".join(f"{name(r['language'])} {_share(r[share])}"
                           for r in cands.iter_rows(named=True))
        return (f"the data cannot single out the {word}: {_or(listed)} each come {end} in at "
                f"least {(1 - level) / 2:.1%} of the replicates, and no language is {word} in "
                f"more than {_share(part[share].max())} ({shares})")

    return [f"In a paired bootstrap of ranks over the {first['units (count)']:,} units every "
            f"language has under {'each of these models' if len(kept) > 1 else 'this model'} "
            f"({first['replicates (count)']:,} replicates, the same resampled units for every "
            f"language and model), "
            f"{verdict('hardest', 'hardest (share of replicates)', 1, 'first')}; "
            f"{verdict('easiest', 'easiest (share of replicates)', n, 'last')}."]


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


def _transfer(table, corpus, other, full, alpha):
    """(transfer rows of the models ``full``, the models whose rho is positive with a
    Benjamini-Hochberg adjusted p below ``alpha``, 'rho a to b', 'X on N units and Y on M
    units'), or None."""
    from ..stats.correlates import benjamini_hochberg

    transfer = ranking_transfer(table, corpus, other).filter(
        pl.col("model").is_in(full) & pl.col("p_value").is_not_null())
    if not transfer.height:
        return None
    adjusted = benjamini_hochberg(transfer["p_value"].to_list())
    # A reversed ranking (rho < 0) does not carry over, however small its p.
    kept = [m for m, p, r in zip(transfer["model"], adjusted, transfer["spearman_rho"])
            if p is not None and p < alpha and r > 0]
    lo, hi = transfer["spearman_rho"].min(), transfer["spearman_rho"].max()
    rho = f"rho {lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"rho {lo:.2f} to {hi:.2f}"
    labels = transfer["model"].implode()
    units = (f"{corpus} on "
             f"{describe_units_of(open_rows(table, corpus).filter(pl.col('label').is_in(labels)))}"
             f" and {other} on "
             f"{describe_units_of(open_rows(table, other).filter(pl.col('label').is_in(labels)))}")
    return transfer, kept, rho, units


def _caveats(full, corpus, correlations, table, other_corpora, alpha,
             common: pl.DataFrame | None = None) -> list[str]:
    """The reference model's ranking against characters per English character, and whether the
    ranking of the answer's models (``full``, read in ``table``) carries over to each of
    ``other_corpora`` (Spearman per model, Benjamini-Hochberg over the models), naming the
    units of both corpora; where ``common`` (the common-units table, which the report's Second
    domain section shows) ranks on other units, its result is given too, labelled."""
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
        found = _transfer(table, corpus, other, full, alpha)
        if found is None:
            continue
        transfer, kept, rho, units = found
        sizes = sorted(set(transfer["n_languages"]))
        models = _count(transfer.height, transfer.height, "models") if transfer.height > 1 \
            else "the one model"
        if not kept:
            text = (f"Caveat: the {corpus} ranking is not detected to carry over to {other} "
                    f"under {models} of the answer ({rho}, every p >= "
                    f"{transfer['p_value'].min():.2g}, {sizes[-1]} languages), ranking {units}.")
        else:
            text = (f"The {corpus} ranking carries over to {other} under "
                    f"{_count(len(kept), transfer.height, 'models')} of the answer "
                    f"({', '.join(kept)}; Benjamini-Hochberg adjusted p < {alpha:g}; {rho}), "
                    f"ranking {units}.")
        again = _transfer(common, corpus, other, full, alpha) if common is not None else None
        if again is not None and again[3] != units:
            t2, kept2, rho2, units2 = again
            text += (f" On the common units of the Second domain table ({units2}): "
                     f"{rho2}, " + (f"every p >= {t2['p_value'].min():.2g}" if not kept2 else
                                    f"adjusted p < {alpha:g} under {len(kept2)} of "
                                    f"{t2.height}") + ".")
        out.append(text)
    return out
