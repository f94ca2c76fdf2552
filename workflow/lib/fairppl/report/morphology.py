"""The report's section on why languages differ: morphological counting complexity by source and
its validation, BPEC against MCC on words, on lemmas and their difference (Cotterell et al. 2018),
the per-language difficulty model (Mielke et al. 2019) and what predicts it, and per model a
fairness summary and each tokenizer's premium.

Built from the tables of the morphology rules, held in ``ReportInputs.morphology`` under the
names of :data:`fairppl.morphology.TABLES`, and the figures of ``plot_morphology``.
"""

from __future__ import annotations

import polars as pl

from .html import (column_label, constants_text, drop_constant_columns, fmt, html_table,
                   subsection)
from .html import paragraph as _p
from .plots import model_label
from .translations import translation_parts

#: Units of the family-controlled columns (fairppl.morphology.regression.FAMILY_COLUMNS).
FAMILY_HEADERS = {
    "n_families": "language families among the languages (count)",
    "within_family_p": "two-sided p, values permuted only within language families (empty: "
                       "too few arrangements to reach 0.05)",
    "family_means_p": "two-sided p over the family means (studentized permutation; empty: "
                      "under 4 families, no p of 0.05 or less possible)",
    "clustered_p": "two-sided p, family-clustered t (approximate; rejects too often with few "
                   "families: not counted)",
    "family_disagrees": "plain and within-family or family-means test differ at 0.05",
}

#: The family-controlled tests that decide ``family_disagrees`` (the clustered t is shown, not
#: counted: :func:`fairppl.morphology.regression.family_control`).
COUNTED_FAMILY_TESTS = ("within_family_p", "family_means_p")

#: Readable names of the family-controlled columns.
FAMILY_LABELS = {"n_families": "families", "within_family_p": "within-family p",
                 "family_means_p": "family-means p", "clustered_p": "clustered p",
                 "family_disagrees": "family control disagrees"}

#: Units of the columns the section shows.
HEADERS = {
    "language": "name",
    "source": "where the value comes from",
    "pos": "part of speech",
    "mcc": "inflectional feature bundles (count)",
    "n_forms": "distinct forms (count)",
    "n_lemmas": "distinct lemmas (count)",
    "forms_per_lemma": "forms / lemmas (ratio)",
    "note": "",
    "model": "model / tokenizer",
    "measure": "morphology measure",
    "text": "words, lemmas, difference or marginal",
    "n_languages": "languages in the fit (count)",
    "slope": "BPEC per unit of the measure (bits/English char per unit)",
    "slope_low": "inverted permutation test, lower end",
    "slope_high": "upper end",
    "pearson_r": "Pearson's r",
    "pearson_p": "two-sided p (t test)",
    "permutation_p": "two-sided permutation p of the slope and r",
    "permutation_p_bh": "Benjamini-Hochberg adjusted over every test of the question",
    "permutations": "permutations behind the p (count)",
    "spearman_rho": "Spearman's rho",
    "spearman_p": "two-sided p (exact up to 12 languages)",
    "spearman_p_bh": "Benjamini-Hochberg adjusted over every test of the question",
    "difficulty": "d_j, the languages average 1",
    "difficulty_model": "model that produced it",
    "normalisation": "how the languages average 1",
    "difficulty_low": "interval, lower end",
    "difficulty_high": "upper end",
    "n_units": "units with a score (count)",
    "bpec": "BPEC on the common units (bits/English char)",
    "rank_difficulty": "1 = hardest",
    "rank_bpec": "1 = hardest",
    "published_difficulty": "Mielke et al. 2019, Europarl character LSTM (difficulty)",
    "log_difficulty": "d_j (natural log)",
    "se": "standard error of d_j",
    "sigma": "noise sd of log bits",
    "same_ranking": "difficulty and BPEC rank alike",
    "largest_shift_language": "language whose rank moves most",
    "largest_shift": "rank by difficulty - rank by BPEC",
    "response": "what is predicted",
    "predictor": "property of the language",
    "p_bh": "Benjamini-Hochberg adjusted p",
    "family": "segmentation family",
    "test_family": "multiple-testing family: the question the test answers",
    "ratio": "hardest / easiest BPEC (ratio)",
    "ratio_low": "paired bootstrap over units, lower end",
    "ratio_high": "upper end",
    "gini": "Gini coefficient of BPEC across languages (0 = equal)",
    "gini_low": "lower end",
    "gini_high": "upper end",
    "bpec_hardest": "BPEC of the hardest (bits/English char)",
    "bpec_easiest": "BPEC of the easiest (bits/English char)",
    "hardest": "language",
    "easiest": "language",
    "tokens_per_english_char": "tokens / characters of English on the same units (ratio)",
    "premium": "relative to English (ratio; English = 1)",
    "covered": "has a lemmatizer",
    "share_changed": "word tokens the lemmatizer changed (fraction)",
    "reason": "",
    **FAMILY_HEADERS,
}


def _named(df: pl.DataFrame, names: dict[str, str],
           columns=("language", "hardest", "easiest", "largest_shift_language")) -> pl.DataFrame:
    return df.with_columns(pl.col(c).replace(names) for c in columns if c in df.columns)


def _labelled(df: pl.DataFrame) -> pl.DataFrame:
    if "model" not in df.columns or "tokenizer" not in df.columns:
        return df
    return df.with_columns(model=pl.struct("model", "tokenizer").map_elements(
        lambda r: model_label(r["model"], r["tokenizer"]), return_dtype=pl.String)
    ).drop("tokenizer")


def _table(df: pl.DataFrame, caption: str, names: dict[str, str], keep=("language", "model"),
           headers: dict | None = None) -> str:
    df, constant = drop_constant_columns(_named(_labelled(df), names), keep=keep)
    stated = constants_text(constant)
    return html_table(df, {**HEADERS, **(headers or {})},
                      caption=caption + (f" ({stated})" if stated else ""))


def _have(tables: dict[str, pl.DataFrame], name: str) -> pl.DataFrame | None:
    table = tables.get(name)
    return table if table is not None and table.height else None


def difficulty_grid(difficulty: pl.DataFrame, names: dict[str, str]) -> str:
    """One grid per corpus of ``difficulty`` (:func:`corpus_difficulty_grid`)."""
    if "corpus" not in difficulty.columns:
        return corpus_difficulty_grid(difficulty, names)
    return "".join(corpus_difficulty_grid(part, names, corpus) for (corpus,), part in
                   difficulty.group_by(["corpus"], maintain_order=True))


def corpus_difficulty_grid(difficulty: pl.DataFrame, names: dict[str, str],
                           corpus: str | None = None) -> str:
    """One row per language, one column per model: difficulty [interval]; languages ordered by
    the first model's difficulty, hardest first; the published Europarl value beside; the units
    each language's fit rests on (one count, or the fewest to the most where languages keep
    their own units)."""
    data = _labelled(difficulty).with_columns(cell=pl.struct(
        "difficulty", "difficulty_low", "difficulty_high").map_elements(
        lambda r: f"{r['difficulty']:.3f} [{r['difficulty_low']:.3f}, "
                  f"{r['difficulty_high']:.3f}]", return_dtype=pl.String))
    models = sorted(set(data["model"]), key=lambda m: (not m.startswith("kenlm-char"), m))
    wide = data.pivot(on="model", index="language", values="cell").select("language", *models)
    order = (data.filter(pl.col("model") == models[0]).sort("difficulty", descending=True)
             ["language"].to_list())
    wide = wide.with_columns(pl.col("language").replace_strict(
        {lang: i for i, lang in enumerate(order)}, default=len(order)).alias("_order")
    ).sort("_order").drop("_order")
    if "published_difficulty" in difficulty.columns:
        published = difficulty.select("language", "published_difficulty").unique("language")
        wide = wide.join(published, on="language", how="left")
    counts = (_labelled(difficulty).group_by("model")
              .agg(pl.col("n_units").min().alias("low"), pl.col("n_units").max().alias("high"))
              .sort("model").rows())
    units = ", ".join(f"{m}: {high}" if low == high else f"{m}: {low} to {high}"
                      for m, low, high in counts)
    fitted = _fit_description(difficulty)
    where = f"{corpus}: " if corpus else ""
    return html_table(_named(wide, names), {
        "language": "name", **{m: "d_j [95% interval]" for m in models},
        "published_difficulty": "Mielke et al. 2019, Europarl (difficulty)"},
        caption=f"{where}Difficulty per language ({fitted}), hardest first by {models[0]}; "
                f"units per language: {units}")


def _fit_description(difficulty: pl.DataFrame) -> str:
    """Which model and normalisation produced the difficulties, in words, from the table."""
    models = sorted(set(difficulty["difficulty_model"])) if (
        "difficulty_model" in difficulty.columns) else ["homoscedastic"]
    norms = sorted(set(difficulty["normalisation"])) if (
        "normalisation" in difficulty.columns) else ["geometric"]
    mean = " and ".join(f"{n} mean" for n in norms)
    return f"{' and '.join(models)} model; {mean} of each model's languages = 1"


def predictor_sentences(predictors: pl.DataFrame, response: str,
                        over: str | None = None) -> list[str]:
    """Per model: the predictor with the smallest adjusted p (then the largest |Spearman rho|)
    for ``response``, and where MCC (each source) stands, so a reader sees whether morphology or
    a simple statistic of the text explains difficulty. ``over`` says what the p-values were
    adjusted over (:func:`adjusted_over` of the whole table; counted in ``predictors`` when
    None)."""
    out = []
    over = adjusted_over(predictors, "spearman_p") if over is None else over
    pooled = f" {over}" if over else ""
    data = _labelled(predictors.filter((pl.col("response") == response)
                                       & pl.col("spearman_rho").is_not_null()))
    for model, part in sorted(data.group_by("model"), key=lambda g: g[0]):
        best = part.sort([pl.col("spearman_p_bh"), pl.col("spearman_rho").abs()],
                         descending=[False, True], nulls_last=True).row(0, named=True)
        mcc = [f"{r['predictor'].split(':')[1]} MCC rho {r['spearman_rho']:.2f} (adjusted p "
               f"{fmt(r['spearman_p_bh'])}, {r['n_languages']} languages)"
               for r in part.filter(pl.col("predictor").str.starts_with("mcc:"))
               .sort("predictor").iter_rows(named=True)]
        verdict = (f"significant after the adjustment{pooled}" if best["spearman_p_bh"]
                   is not None and best["spearman_p_bh"] < ALPHA else
                   f"not significant after the adjustment{pooled}")
        out.append(f"{model[0] if isinstance(model, tuple) else model}: strongest "
                   f"{column_label(best['predictor'])} (rho {best['spearman_rho']:.2f}, "
                   f"adjusted p "
                   f"{fmt(best['spearman_p_bh'])}, {best['n_languages']} languages; "
                   f"{verdict})" + (f"; {'; '.join(mcc)}" if mcc else "") + ".")
    return out


def _survives(row: dict) -> bool | None:
    """Whether a difficulty predictor's row survives family control: every counted
    family-controlled p (:data:`COUNTED_FAMILY_TESTS`) at most :data:`ALPHA`; None where none
    could run (not tested)."""
    ps = [row.get(c) for c in COUNTED_FAMILY_TESTS if row.get(c) is not None]
    return all(p <= ALPHA for p in ps) if ps else None


def _rho_text(row: dict, each: bool) -> str:
    """'rho 0.92 [0.83, 0.96]', with the row's languages when ``each``."""
    low, high = row.get("spearman_rho_low"), row.get("spearman_rho_high")
    span = f" [{low:.2f}, {high:.2f}]" if low is not None and high is not None else ""
    count = f", {row['n_languages']} languages" if each else ""
    return f"rho {row['spearman_rho']:.2f}{span}{count}"


def why_sentences(predictors: pl.DataFrame | None, response: str = "difficulty",
                  limit: int = 4) -> list[str]:
    """Why languages differ, from ``predictors`` (difficulty_predictors.csv) alone: per corpus,
    widest first, the predictors of ``response`` that survive both Benjamini-Hochberg over
    their question's tests (``spearman_p_bh``) and family control (every counted
    family-controlled test at :data:`ALPHA`), each with its models' Spearman rho and interval;
    those significant after pooling that family control loses; and, where two corpora share
    (model, predictor) rows, what the wider corpus changes. Nothing without family-controlled
    columns or rows of ``response``."""
    from ..morphology.regression import MONTE_CARLO_NOTE, RHO_LEVEL

    if predictors is None or not predictors.height or "n_families" not in predictors.columns:
        return []
    data = _labelled(predictors.filter((pl.col("response") == response)
                                       & pl.col("spearman_rho").is_not_null()))
    if not data.height:
        return []
    over = adjusted_over(predictors, "spearman_p")
    pooled = over or "over the table's tests"
    corpora = (data.group_by("corpus").agg(pl.col("n_languages").max())
               .sort(["n_languages", "corpus"], descending=[True, False])["corpus"].to_list())
    verdicts: dict[str, dict[tuple[str, str], bool]] = {}
    sentences = []
    for corpus in corpora:
        rows = data.filter(corpus=corpus).sort("predictor", "model").to_dicts()
        families = max((r["n_families"] or 0) for r in rows)
        pooled_rows = [r for r in rows if r["spearman_p_bh"] is not None
                       and r["spearman_p_bh"] <= ALPHA]
        kept = [r for r in pooled_rows if _survives(r)]
        lost = [r for r in pooled_rows if _survives(r) is False]
        surviving = {(r["model"], r["predictor"]) for r in kept}
        verdicts[corpus] = {(r["model"], r["predictor"]): (r["model"], r["predictor"]) in surviving
                            for r in rows if _survives(r) is not None}
        by_predictor: dict[str, list[dict]] = {}
        for r in sorted(kept, key=lambda r: -abs(r["spearman_rho"])):
            by_predictor.setdefault(r["predictor"], []).append(r)
        ordered = sorted(by_predictor.items(), key=lambda kv: -abs(kv[1][0]["spearman_rho"]))
        # the languages of the rows the sentence is about: said once when they are alike
        sizes = sorted({r["n_languages"] for r in (kept or pooled_rows or rows)})
        span = (f"{sizes[0]} languages" if len(sizes) == 1 else
                f"{sizes[0]} to {sizes[-1]} languages per row")
        where = f"On {corpus} ({span}" + (f", up to {families} families)" if families else ")")
        if not pooled_rows:
            sentences.append(f"{where}, no predictor of {response} is significant after "
                             f"Benjamini-Hochberg {pooled}.")
            continue
        named = [f"{column_label(p)} ("
                 + "; ".join(f"{r['model']} {_rho_text(r, len(sizes) > 1)}"
                             for r in group) + ")"
                 for p, group in ordered[:limit]]
        extra = len(ordered) - limit
        more = (f" and {extra} more {'predictor' if extra == 1 else 'predictors'}"
                if extra > 0 else "")
        head = (f"{where}, {len(kept)} of the {len(pooled_rows)} (model, predictor) rows "
                f"significant after Benjamini-Hochberg {pooled} also "
                f"{_verb(len(kept), 'survives', 'survive')} family control "
                f"(within-family and family-means permutation tests, each p <= {ALPHA})")
        text = head + (": " + "; ".join(named) + more if named else "")
        if lost:
            text += ("; family control loses " + ", ".join(sorted(
                {column_label(r["predictor"]) for r in lost}))
                + f" ({_count_rows(lost)})")
        near = [r for r in kept + lost if MONTE_CARLO_NOTE in (r.get("note") or "")]
        if near:
            text += (f"; in {_count_rows(near)} a family-controlled p is within its Monte "
                     f"Carlo error of {ALPHA}")
        sentences.append(text + (f". Intervals are {RHO_LEVEL:.0%} and treat languages as "
                                 f"independent." if named else "."))
    if len(corpora) > 1:
        wide, narrow = corpora[0], corpora[1]
        shared = set(verdicts[wide]) & set(verdicts[narrow])
        gained = sorted({column_label(p) for m, p in shared
                         if verdicts[wide][(m, p)] and not verdicts[narrow][(m, p)]})
        dropped = sorted({column_label(p) for m, p in shared
                          if verdicts[narrow][(m, p)] and not verdicts[wide][(m, p)]})
        if shared:
            n_wide = data.filter(corpus=wide)["n_languages"].max()
            n_narrow = data.filter(corpus=narrow)["n_languages"].max()
            change = (f"From {narrow} (up to {n_narrow} languages) to {wide} (up to "
                      f"{n_wide}), on the "
                      f"{len(shared)} (model, predictor) rows both have: ")
            parts = []
            if gained:
                parts.append("survive only at the wider corpus: " + ", ".join(gained))
            if dropped:
                parts.append("survive only at the narrower: " + ", ".join(dropped))
            sentences.append(change + ("; ".join(parts) if parts else
                                       "the same rows survive at both") + ".")
    return sentences


def _count_rows(rows: list[dict]) -> str:
    return "1 row" if len(rows) == 1 else f"{len(rows)} rows"


def predictor_grid(predictors: pl.DataFrame, response: str, corpus: str | None = None) -> str:
    """One row per predictor, one column per model: Spearman's rho with ``response`` (adjusted
    p, languages), grouped by segmentation family; ``predictors`` of one corpus (named in the
    caption when given)."""
    data = _labelled(predictors.filter(pl.col("response") == response))
    if not data.height:
        return ""
    data = data.with_columns(
        column=pl.format("{}: {}", "family", "model"),
        cell=pl.struct("spearman_rho", "spearman_p_bh", "n_languages").map_elements(
            lambda r: "" if r["spearman_rho"] is None else
            f"{r['spearman_rho']:.2f} ({fmt(r['spearman_p_bh'])}, {r['n_languages']})",
            return_dtype=pl.String))
    wide = data.sort("family", "model").pivot(on="column", index="predictor", values="cell")
    # the predictors are column names of the correlates and morphology tables: read them out
    wide = wide.with_columns(pl.col("predictor").map_elements(column_label,
                                                              return_dtype=pl.String))
    return html_table(wide, {"predictor": "property of the language", **{
        c: "Spearman's rho (BH-adjusted p, languages)" for c in wide.columns[1:]}},
        caption=f"What predicts {response} across {corpus + ' ' if corpus else ''}languages, "
                f"per model")


#: The significance level the report's words use for adjusted p-values.
ALPHA = 0.05

def _row_name(row: dict) -> str:
    """A correlation's row as a reader names it: model, then predictor and response, or measure,
    source and text."""
    what = ([column_label(row["predictor"]), f"for {row['response']}"] if "predictor" in row
            else [f"{row['source']} {row['measure']}", f"on {row['text']}"])
    return " ".join([row.get("model", "")] + what).strip()


def _verb(count: int, one: str, many: str) -> str:
    return one if count == 1 else many


def family_control_sentence(table: pl.DataFrame, plain: str, plain_name: str,
                            limit: int = 6) -> str:
    """One sentence, computed from ``table`` (a table of correlations across languages with the
    family-controlled columns of :mod:`fairppl.morphology.regression`): how many of the rows
    significant by the plain test (column ``plain``, named ``plain_name``) at :data:`ALPHA` stay
    significant under every family-controlled test, and which rows disagree (``family_disagrees``;
    the first ``limit`` named, then a count). Rows whose languages lack a family are counted.
    "" where the table has no family-controlled tests and no row lacks a family (a sheet without
    families)."""
    if "n_families" not in table.columns or plain not in table.columns:
        return ""
    rows = _labelled(table.filter(pl.col(plain).is_not_null())).to_dicts()
    # a row none of whose family-controlled tests could run (too few languages or families to
    # reach ALPHA) is not tested: it would "stay significant" vacuously
    tested = [r for r in rows if r["n_families"] is not None
              and any(r.get(c) is not None for c in COUNTED_FAMILY_TESTS)]
    lacking = [r for r in rows if r["n_families"] is None
               and "no language family in the sheet" in (r.get("note") or "")]
    if not tested and not lacking:
        return ""
    parts = []
    if tested:
        significant = [r for r in tested if r[plain] <= ALPHA]
        kept = [r for r in significant if not r["family_disagrees"]]
        lost = [r for r in significant if r["family_disagrees"]]
        gained = [r for r in tested if r[plain] > ALPHA and r["family_disagrees"]]
        families = sorted({r["n_families"] for r in tested})
        span = (f"{families[0]}" if len(families) == 1 else f"{families[0]} to {families[-1]}")
        parts.append(f"of the {len(significant)} correlations significant at {ALPHA} by "
                     f"{plain_name} ({len(tested)} tested, over {span} language families), "
                     f"{len(kept)} {_verb(len(kept), 'stays', 'stay')} significant under every "
                     f"family-controlled permutation test that can reach {ALPHA} (within-family, "
                     f"studentized family means; the family-clustered t is shown in the table "
                     f"but not counted: with few, unequal families it rejects too often)")

        def named(group: list[dict]) -> str:
            names = [_row_name(r) for r in group[:limit]]
            more = f" and {len(group) - limit} more" if len(group) > limit else ""
            return ", ".join(names) + more

        if lost:
            parts.append(f"{len(lost)} {_verb(len(lost), 'loses', 'lose')} it under family "
                         f"control ({named(lost)})")
        if gained:
            parts.append(f"{len(gained)} not significant plainly "
                         f"{_verb(len(gained), 'is', 'are')} significant under a "
                         f"family-controlled test ({named(gained)})")
    if lacking:
        parts.append(f"{len(lacking)} {_verb(len(lacking), 'has', 'have')} a language without "
                     f"a family in the sheet and no family-controlled test")
    # fairppl.morphology.regression flags a drawn-permutation p within its Monte Carlo error of
    # the level in the row's note
    from ..morphology.regression import MONTE_CARLO_NOTE

    near = [r for r in tested if MONTE_CARLO_NOTE in (r.get("note") or "")]
    if near:
        parts.append(f"in {len(near)} {_verb(len(near), 'row', 'rows')} ({named(near)}) a "
                     f"family-controlled p from drawn permutations is within their Monte Carlo "
                     f"error of {ALPHA}, so its side of {ALPHA} is not settled (the note says "
                     f"which; morphology.permutations draws more)")
    text = "; ".join(parts)
    return "Languages of one family are not independent draws: " + text + "."


def family_control_table(table: pl.DataFrame, plain: str, caption: str,
                         names: dict[str, str]) -> str:
    """The rows of ``table`` that are significant by the plain test (``plain``) or where family
    control disagrees, with the plain and family-controlled p-values side by side; "" where
    there are none (or no family-controlled tests)."""
    if "family_disagrees" not in table.columns:
        return ""
    disagrees = pl.col("family_disagrees")
    if table.schema["family_disagrees"] != pl.Boolean:  # all empty in the CSV: read as text
        disagrees = disagrees.cast(pl.String) == "true"
    shown = table.filter(pl.col("n_families").is_not_null()
                         & ((pl.col(plain) <= ALPHA) | disagrees))
    if not shown.height:
        return ""
    keys = [c for c in ("model", "tokenizer", "predictor", "response", "measure", "source",
                        "text") if c in shown.columns]
    estimate = [c for c in ("spearman_rho", "slope", "pearson_r") if c in shown.columns][:1]
    shown = shown.select(*keys, *estimate, "n_languages", plain, "within_family_p",
                         "family_means_p", "clustered_p", "n_families", "family_disagrees")
    if "predictor" in shown.columns:
        shown = shown.with_columns(pl.col("predictor").map_elements(column_label,
                                                                    return_dtype=pl.String))
    shown, constant = drop_constant_columns(_named(_labelled(shown), names),
                                            keep=("model", "family_disagrees"))
    stated = constants_text(constant)
    return html_table(shown, HEADERS, caption=caption + (f" ({stated})" if stated else ""),
                      labels=FAMILY_LABELS)


#: What each MCC source is, for the sentence that introduces the sources a study has.
SOURCE_TEXT = {
    "published": "the values Cotterell et al. (2018, Table 1) published for {n} Europarl "
                 "languages ({k} of them in this study; the counting rule the other sources use "
                 "is not shown to be theirs: the published rows' notes in mcc.csv say how far "
                 "it is from their value where their lexicon could be read)",
    "apertium": "Apertium's morphological analysers (Debian packages), their tags mapped to "
                "UniMorph's inflectional features ({k} languages)",
    "unimorph": "UniMorph lexicons downloaded on a cluster ({k} languages)",
}


def _p_column(df: pl.DataFrame) -> tuple[str, str]:
    """The p-value a claim rests on and its adjusted version: the permutation test of the slope
    where the table has it, else Spearman's."""
    if "permutation_p_bh" in df.columns:
        return "permutation_p", "permutation_p_bh"
    return "spearman_p", "spearman_p_bh" if "spearman_p_bh" in df.columns else "spearman_p"


def adjusted_over(table: pl.DataFrame, column: str, words: bool = False) -> str:
    """Over what the ``<column>_bh`` p-values of ``table`` (a whole stage table) were adjusted:
    'over the N tests of question <id>' (with the question in words when ``words``), counted in
    the table; '' where its ``test_family`` is not one declared question
    (:data:`fairppl.morphology.questions.QUESTIONS`)."""
    from ..morphology.questions import BY_ID, describe, pooled

    ids = set(table["test_family"].drop_nulls()) if "test_family" in table.columns else set()
    if len(ids) != 1 or next(iter(ids)) not in BY_ID:
        return ""
    (question,) = ids
    if words:
        return "over " + describe(table, question, column)
    n = pooled(table, question, column)
    return f"over the {'one test' if n == 1 else f'{n} tests'} of question {question}"


def verdict(adjusted: float | None, estimate: float | None, n: int, what: str,
            over: str = "") -> str:
    """Words that match an adjusted test: 'consistent with a rise of ...' only where the adjusted
    p is below :data:`ALPHA`, 'not detected with n languages' otherwise; ``over`` says what the
    p was adjusted over (:func:`adjusted_over`)."""
    if adjusted is None or estimate is None:
        return f"no test ({n} languages)"
    said = f"(adjusted p {fmt(adjusted)}{' ' + over if over else ''})"
    if adjusted < ALPHA:
        direction = "a rise" if estimate > 0 else "a fall"
        return f"consistent with {direction} of {what} {said}"
    return f"a relation is not detected with {n} languages {said}"


def regression_sentences(regressions: pl.DataFrame, source: str,
                         names: dict[str, str] | None = None) -> list[str]:
    """What the MCC regressions of one source say, model by model: the slope on each text with
    its interval, Spearman's rho, and a verdict from the p-value adjusted over every test of the
    row's question (``regressions``: the whole table, which the count of tests pooled is read
    from)."""
    out = []
    rows = regressions.filter((pl.col("measure") == "mcc") & (pl.col("source") == source))
    raw, adjusted = _p_column(rows)
    over = adjusted_over(regressions, raw)
    unfit = []
    for (model, tok), part in sorted(rows.group_by(["model", "tokenizer"]), key=lambda g: g[0]):
        bits = []
        if part["slope"].is_null().all():
            unfit.append(f"{model_label(model, tok)} ({part['n_languages'].max()})")
            continue
        for text in ("words", "lemmas", "difference", "marginal"):
            row = part.filter(pl.col("text") == text)
            if not row.height:
                continue
            r = row.row(0, named=True)
            if r["slope"] is None:
                bits.append(f"on {text}: no fit ({r['n_languages']} languages)")
                continue
            interval = ("" if r.get("slope_low") is None or r.get("slope_high") is None else
                        f" [{fmt(r['slope_low'] * 100)}, {fmt(r['slope_high'] * 100)}]")
            what = ("the cost of inflection with MCC" if text == "difference"
                    else f"BPEC on {text} with MCC")
            bits.append(
                f"on {text} {fmt(r['slope'] * 100)} bits/English char per 100 bundles"
                f"{interval}, {'permutation' if raw == 'permutation_p' else 'Spearman'} p "
                f"{fmt(r.get(raw))}, Spearman rho {fmt(r['spearman_rho'])} (p "
                f"{fmt(r['spearman_p'])}, adjusted {fmt(r.get('spearman_p_bh'))}): "
                + verdict(r.get(adjusted), r["slope"], r["n_languages"], what, over))
        if bits:
            out.append(f"{model_label(model, tok)}: " + "; ".join(bits) + ".")
    if unfit:
        out.append(f"No fit (fewer than 3 languages with both a {source} MCC and a BPEC; "
                   f"languages in parentheses): {', '.join(unfit)}.")
    return out


def sources_sentence(mcc: pl.DataFrame, names: dict[str, str]) -> str:
    """The MCC sources this study has, each with its language counts, from the MCC table."""
    totals = mcc.filter(pl.col("pos") == "total")
    study = set(names)
    parts = []
    for source in [s for s in SOURCE_TEXT if s in set(totals["source"])]:
        langs = set(totals.filter(source=source)["language"])
        parts.append(SOURCE_TEXT[source].format(n=len(langs), k=len(langs & study)))
    others = sorted(set(totals["source"]) - set(SOURCE_TEXT))
    parts += [f"{o} ({totals.filter(source=o).height} languages)" for o in others]
    count = {1: "one source", 2: "two sources", 3: "three sources"}.get(len(parts),
                                                                         f"{len(parts)} sources")
    return (f"Morphological counting complexity (MCC) counts the distinct inflectional feature "
            f"bundles a language's lexicon distinguishes (English verbs: a 3rd-person-singular "
            f"present, a past, ...). This study has it from {count}, never mixed: "
            + "; ".join(parts) + ". Forms per lemma, from simplemma's dictionaries"
            + (" and Apertium's paradigms" if "apertium" in set(totals["source"]) else "")
            + ", is a second, cruder proxy.")


def small_n_sentence(regressions: pl.DataFrame) -> str:
    """How many languages each source's regressions rest on, and how the p-values are made."""
    fitted = regressions.filter((pl.col("measure") == "mcc") & pl.col("slope").is_not_null())
    sizes = fitted["n_languages"].drop_nulls()
    if not sizes.len():
        return ""
    lo, hi = int(sizes.min()), int(sizes.max())
    span = f"{lo} languages" if lo == hi else f"{lo} to {hi} languages"
    raw, adjusted = _p_column(regressions)
    test = ("a permutation test of the slope (exact up to 8 languages; the slope's interval "
            "inverts it)"
            if raw == "permutation_p" else "Spearman's rho (exact p up to 8 languages)")
    over = adjusted_over(regressions, raw, words=True)
    family = (f" {over} (every corpus, model, measure, source and text: the multiple-testing "
              f"family of the test_family column)" if over else
              " over the rows of one test_family" if "test_family" in regressions.columns
              else "")
    return (f"With {span} per regression, a slope or a correlation can be large by chance: the "
            f"p-values come from {test} and are adjusted by Benjamini-Hochberg{family}. A "
            f"relation is claimed only where its adjusted p is below {ALPHA:g}; even then it "
            f"says how these few languages line up, not how morphology works in general.")


def outlier_sentence(long: pl.DataFrame, measure: str, source: str,
                     names: dict[str, str], factor: float = 3.0) -> str:
    """A language whose ``measure`` from ``source`` is more than ``factor`` times the next
    largest: a least-squares slope on that measure follows it, a rank correlation does not.
    ``long`` has (language, measure, source, value) rows; empty when there is no such
    language."""
    values = (long.filter((pl.col("measure") == measure) & (pl.col("source") == source)
                          & pl.col("value").is_not_null())
              .unique("language").sort("value", descending=True))
    if values.height < 3:
        return ""
    top, second = values.row(0, named=True), values.row(1, named=True)
    if top["value"] <= factor * second["value"]:
        return ""
    name = lambda lang: names.get(lang, lang)  # noqa: E731
    return (f"{measure.replace('_', ' ').capitalize()} from {source} puts {name(top['language'])} "
            f"at {fmt(top['value'])}, {fmt(top['value'] / second['value'])} times the next "
            f"language ({name(second['language'])}, {fmt(second['value'])}): a least-squares "
            f"slope on that measure follows {name(top['language'])} alone; Spearman's rho, on "
            f"ranks, does not.")


def validation_sentences(validation: pl.DataFrame, names: dict[str, str]) -> list[str]:
    """What the Apertium validation says, from its table: the languages compared and whether any
    was held out of the tag mapping's design, the ratios, and each subset's rank correlation in
    words that match its exact p."""
    if "subset" not in validation.columns:
        return []
    out = []
    name = lambda lang: names.get(lang, lang)  # noqa: E731
    for apos in validation["apertium_pos"].unique(maintain_order=True):
        part = validation.filter(apertium_pos=apos)
        langs = part.filter(row="language").sort("ratio")
        if not langs.height:
            continue
        held = langs.filter(pl.col("held_out")).height
        what = {"total": "total", "matched": "count over the parts of speech of each published "
                "value's lexicon"}.get(apos, f"{apos}s")
        out.append(
            f"Apertium's {what} against the published total on the {langs.height} languages "
            f"with both; " + ("none was held out when the tag mapping was designed, so this is "
                              "an in-sample check" if held == 0 else
                              f"{held} of them were held out of the tag mapping's design")
            + f". Ratio Apertium / published from {fmt(langs['ratio'][0])} "
              f"({name(langs['language'][0])}) to {fmt(langs['ratio'][-1])} "
              f"({name(langs['language'][-1])}).")
        for r in part.filter(row="correlation").iter_rows(named=True):
            if r["spearman_rho"] is None:
                continue
            strength = ("the two rank these languages alike beyond chance"
                        if r["spearman_p"] is not None and r["spearman_p"] < ALPHA else
                        f"with {r['n']} languages this cannot be told from chance")
            out.append(f"{'All' if r['subset'] == 'all' else r['subset']} ({r['n']} "
                       f"languages): Spearman rho {fmt(r['spearman_rho'])}, exact p "
                       f"{fmt(r['spearman_p'])}: {strength}.")
    return out


def lemmas_sentence(coverage: pl.DataFrame | None, names: dict[str, str]) -> str:
    """The lemmatized control in words, with its coverage from the table."""
    text = ("The lemmatized control (Cotterell et al. 2018): every word of a language's text is "
            "replaced by its lemma (simplemma's dictionaries; punctuation and spaces kept), and "
            "models of the same kind are trained and scored on that copy. BPEC on lemmas is "
            "divided by the characters of the original English, as on words, so the difference "
            "words - lemmas is the bits per English character a model spends on inflection "
            "(the paper's Figure 1c).")
    if coverage is None or "covered" not in coverage.columns:
        return text
    covered = coverage.filter(pl.col("covered"))
    missing = coverage.filter(~pl.col("covered"))
    text += f" {covered.height} of {coverage.height} languages have a lemmatizer"
    if missing.height:
        text += (" (not: " + ", ".join(name for name in
                                       (names.get(x, x) for x in missing["language"])) + ")")
    return text + "."


def morphology_body(tables: dict[str, pl.DataFrame], names: dict[str, str],
                    figures: dict[str, str], figure,
                    corpus_types: dict[str, str] | None = None) -> str | None:
    """The section's HTML (None when the stage produced nothing). ``figure(path, alt)`` embeds a
    PNG; ``figures`` maps ``morphology_<source>`` to the Figure 1 panels of that MCC source;
    ``corpus_types`` maps corpus ids to their configured ``type`` (the Europarl sentence).
    Every count, name and comparison in its sentences is computed from the tables."""
    parts = []
    mcc = _have(tables, "mcc")
    regressions = _have(tables, "regressions")
    if mcc is None and regressions is None and _have(tables, "difficulty") is None:
        return None
    parts.append(subsection("mcc", "Morphological counting complexity"))
    if mcc is not None:
        parts.append(_p(sources_sentence(mcc, names)))
    if regressions is not None:
        sentence = small_n_sentence(regressions)
        if sentence:
            parts.append(_p(sentence, "note"))
    if mcc is not None:
        mcc = mcc.filter(pl.col("language").is_in(list(names)))
        total = mcc.filter(pl.col("pos") == "total")
        wide = total.pivot(on="source", index="language", values="mcc").sort("language")
        parts.append(_table(wide, "MCC by source for the study's languages (total over verbs, "
                            "nouns and adjectives; empty: the source has no value for the "
                            "language; mcc.csv has every published language)", names,
                            headers={c: "bundles (count)" for c in wide.columns[1:]}))
        per_pos = mcc.filter(pl.col("pos") != "total").sort("source", "language", "pos")
        if per_pos.height:
            parts.append(_table(per_pos, "MCC and forms per lemma per part of speech", names))
    validation = _have(tables, "mcc_validation")
    if validation is not None:
        parts.extend(_p(s, "note") for s in validation_sentences(validation, names))
        parts.append(_table(validation, "Apertium's MCC against the published values on the "
                            "languages that have both", names,
                            headers={"ratio": "Apertium / published (ratio)",
                                     "n": "languages (count)",
                                     "held_out": "left out of the tag mapping's design"}))
    forms = _have(tables, "forms_per_lemma")
    if forms is not None:
        parts.append(_table(forms, "Forms per lemma of simplemma's dictionaries", names))
    coverage = _have(tables, "lemmatizer_coverage")
    parts.append(subsection("lemmas", "The lemmatized control"))
    parts.append(_p(lemmas_sentence(coverage, names)))
    if coverage is not None:
        parts.append(_table(coverage, "Which languages have a lemmatized copy, and why not",
                            names))
    if regressions is not None:
        parts.append(subsection("mcc-regressions", "BPEC against MCC"))
        for source in sorted(set(regressions.filter(pl.col("measure") == "mcc")["source"])):
            sentences = regression_sentences(regressions, source, names)
            if sentences:
                parts.append(_p(f"BPEC against {source} MCC, per model:", "answer"))
                parts.extend(_p(s, "answer") for s in sentences)
            parts.append(figure(figures.get(f"morphology_{source}"),
                                f"BPEC against {source} MCC: words, lemmas, difference"))
        fitted = regressions.filter(pl.col("slope").is_not_null()).drop(
            "note", "intercept", "permutations", strict=False)
        parts.append(_table(fitted.sort("measure", "source", "model", "text"),
                            "The regressions with a fit; morphology.csv has every row, with the "
                            "languages left out and why", names,
                            keep=("model", "measure", "source", "text")))
        sentence = family_control_sentence(regressions, "permutation_p",
                                           "the permutation test of the slope")
        if sentence:
            parts.append(_p(sentence, "note"))
        languages = _have(tables, "languages")
        if languages is not None and {"measure", "source", "value"} <= set(languages.columns):
            for source in ("simplemma", "apertium"):
                sentence = outlier_sentence(languages, "forms_per_lemma", source, names)
                if sentence:
                    parts.append(_p(sentence, "note"))
    parts.extend(_difficulty_parts(tables, names, corpus_types))
    return "\n".join(p for p in parts if p)


def mielke_bible_parts(tables: dict[str, pl.DataFrame], names: dict[str, str]) -> list[str]:
    """Our difficulties beside Mielke et al.'s on the Bibles that are their text
    (fairppl.morphology.mielke_bible): which translations match, the rank correlations, and how
    weak a check it is."""
    summary = _have(tables, "mielke_bible")
    if summary is None:
        return []
    rows = _have(tables, "mielke_bible_rows")
    matched = sorted(set(rows["translation"])) if rows is not None else []
    # the spread of their difficulties over the most languages any model matched
    first = summary.sort("n_matched", descending=True, maintain_order=True).row(0, named=True)
    spread = (f"their difficulties on the {first['n_matched']} languages matched in "
              f"{first.get('corpus', 'the corpus')} spread by a standard deviation of "
              f"{first['their_sd_bpe']:.3f} (BPE) and {first['their_sd_char']:.3f} (character)"
              f", and their own two models differ by {first['their_models_mean_abs_diff']:.3f}"
              f" on average" if first["their_sd_bpe"] is not None else "")
    parts = [_p(
        "Mielke et al. (2019) published a difficulty per Bible translation (106 translations, "
        "62 languages). Only a translation that is the very text of one of ours can be "
        "compared, and the names do not say which: resources/published/"
        "mielke2019_bible_matches.tsv decides it from their published counts (tokens, "
        "characters, types and unigram entropy, each relative to the King James Version on "
        f"both sides). {len(matched)} of their translations are ours here"
        + (f" ({', '.join(matched)})" if matched else "")
        + "; both sides are renormalised to a mean of 1 over those languages. "
        + (f"This is a weak check: {spread}, so the order of a few languages is all it can "
           f"test." if spread else "")),
        ]
    parts.extend(_p(s, "answer") for s in summary["summary"])
    if rows is not None and rows.height:
        parts.append(_table(rows, "Our difficulty and theirs on the matched Bibles, each "
                            "renormalised over them (mean 1)", names,
                            headers={"ours": "difficulty (ratio)", "theirs": "difficulty "
                                     "(ratio)"}))
    return parts


def published_source_sentence(difficulty: pl.DataFrame, corpus_types: dict[str, str]) -> str:
    """What the published difficulties (Mielke et al.'s Europarl values) can be compared with:
    on a Europarl study the same kind of text, elsewhere a different corpus. A corpus is Europarl
    when its configured ``type`` is ``europarl`` (``corpus_types``: corpus id -> type), or, with
    no type given, when its id starts with "europarl"."""
    corpora = difficulty["corpus"].unique().to_list() if "corpus" in difficulty.columns else []

    def europarl(corpus: str) -> bool:
        kind = corpus_types.get(corpus)
        return kind == "europarl" if kind else corpus.lower().startswith("europarl")

    if corpora and all(europarl(c) for c in corpora):
        return ("Their Europarl values come from the same kind of text (parliament proceedings) "
                "but their own extract of it and a character LSTM: compare the ranking of the "
                "shared languages, not the digits.")
    return ("Their Europarl values come from a different corpus (parliament proceedings, 21 "
            "European languages) and a character LSTM: only the direction of a shared language "
            "can be compared.")


def _family_parts(predictors: pl.DataFrame, where: str, names: dict[str, str]) -> list[str]:
    """The family-controlled tests of the predictors of difficulty: the sentence and the rows
    significant plainly or where family control disagrees (nothing without families)."""
    sentence = family_control_sentence(predictors, "spearman_p", "Spearman's test")
    if not sentence:
        return []
    return [_p(where + sentence, "note"), family_control_table(
        predictors, "spearman_p", f"{where}{'p' if where else 'P'}redictors of difficulty "
        f"significant by Spearman's "
        f"test or where family control disagrees: the plain p beside the family-controlled ones "
        f"(tests of the rank slope)", names)]


def _difficulty_parts(tables: dict[str, pl.DataFrame], names: dict[str, str],
                      corpus_types: dict[str, str] | None = None) -> list[str]:
    corpus_types = corpus_types or {}
    parts = []
    difficulty = _have(tables, "difficulty")
    if difficulty is not None:
        parts.append(subsection("difficulty", "Difficulty (Mielke et al. 2019)"))
        parts.append(_p(
            "The difficulty model of Mielke et al. (2019) explains each unit's bits in each "
            "language as a unit effect times a language effect, fitted on every unit each model "
            "scored, so a language counts on all its units, not only on the units common to "
            "every language. The heteroscedastic model is the one behind the authors' published "
            "difficulties (a unit's spread shrinks as its information content grows); the "
            "homoscedastic one gives every cell one noise variance. Difficulty d_j is relative "
            f"({_fit_description(difficulty)}). "
            + published_source_sentence(difficulty, corpus_types)))
        parts.append(difficulty_grid(difficulty, names))
    parts.extend(translation_parts(tables, names))
    parts.extend(mielke_bible_parts(tables, names))
    agreement = _have(tables, "agreement")
    if agreement is not None:
        parts.append(_table(agreement, "Do the difficulties (every unit) rank the languages as "
                            "BPEC on the common units does?", names, keep=("model",)))
    predictors = _have(tables, "predictors")
    if predictors is not None:
        over = adjusted_over(predictors, "spearman_p", words=True)
        parts.append(_p(
            "Does MCC predict difficulty once the simple statistics of the text are in the "
            "running? Each predictor is correlated with each model's difficulty across "
            "languages; the p-values are adjusted by Benjamini-Hochberg "
            + (f"{over} (every corpus, model, response and predictor, as Mielke et al. pooled "
               f"theirs)" if over else "over the rows of one test_family")
            + ". Cells: Spearman's rho (adjusted p, languages); the full "
            "table with Pearson's r and BPEC as the response is "
            "results/tables/difficulty_predictors.csv.", "note"))
        short = adjusted_over(predictors, "spearman_p")
        corpora = (predictors["corpus"].unique(maintain_order=True).to_list()
                   if "corpus" in predictors.columns else [None])
        for corpus in corpora:
            part = predictors if corpus is None else predictors.filter(corpus=corpus)
            where = f"{corpus}: " if len(corpora) > 1 else ""
            parts.extend(_p(where + s, "answer")
                         for s in predictor_sentences(part, "difficulty", short))
            parts.append(predictor_grid(part, "difficulty", corpus if where else None))
            parts.extend(_family_parts(part.filter(pl.col("response") == "difficulty"),
                                       where, names))
    fairness = _have(tables, "fairness")
    if fairness is not None:
        parts.append(subsection("fairness", "Fairness"))
        parts.append(_table(fairness, "How unequal is each model across languages", names,
                            keep=("model",)))
    premium = _have(tables, "premium")
    if premium is not None:
        parts.append(_p(
            "A tokenizer's premium (Petrov et al. 2023) is how many more tokens a language "
            "needs than English for the same content; with a tokenizer trained per language "
            "it mixes the tokenizer and the writing system.", "note"))
        corpora = (premium["corpus"].unique(maintain_order=True).to_list()
                   if "corpus" in premium.columns else [None])
        for corpus in corpora:
            part = premium if corpus is None else premium.filter(corpus=corpus)
            wide = _labelled(part).pivot(on="model", index="language", values="premium")
            where = f"{corpus}: t" if len(corpora) > 1 else "T"
            parts.append(_table(wide, f"{where}okens relative to English on the same units "
                                f"(premium)", names,
                                headers={c: "premium (ratio; English = 1)"
                                         for c in wide.columns[1:]}))
    return parts
