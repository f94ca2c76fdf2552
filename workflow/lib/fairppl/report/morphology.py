"""The report's section on why languages differ: morphological counting complexity by source and
its validation, BPEC against MCC on words, on lemmas and their difference (Cotterell et al. 2018),
the per-language difficulty model (Mielke et al. 2019) and what predicts it, and per model a
fairness summary and each tokenizer's premium.

Built from the tables of the morphology rules, held in ``ReportInputs.morphology`` under the
names of :data:`fairppl.morphology.TABLES`, and the figures of ``plot_morphology``.
"""

from __future__ import annotations

import polars as pl

from .html import constants_text, drop_constant_columns, fmt, html_table
from .html import paragraph as _p
from .plots import model_label

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
    "permutation_p_bh": "Benjamini-Hochberg adjusted over the family",
    "permutations": "permutations behind the p (count)",
    "spearman_rho": "Spearman's rho",
    "spearman_p": "two-sided p (exact up to 12 languages)",
    "spearman_p_bh": "Benjamini-Hochberg adjusted over the family",
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
    "test_family": "family of tests adjusted together",
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
    """One row per language, one column per model: difficulty [interval]; languages ordered by
    the first model's difficulty, hardest first; the published Europarl value beside."""
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
    units = ", ".join(f"{m}: {n}" for m, n in _labelled(difficulty).group_by("model")
                      .agg(pl.col("n_units").max()).sort("model").rows())
    fitted = _fit_description(difficulty)
    return html_table(_named(wide, names), {
        "language": "name", **{m: "d_j [95% interval]" for m in models},
        "published_difficulty": "Mielke et al. 2019, Europarl (difficulty)"},
        caption=f"Difficulty per language ({fitted}), hardest first by {models[0]}; units per "
                f"language: {units}")


def _fit_description(difficulty: pl.DataFrame) -> str:
    """Which model and normalisation produced the difficulties, in words, from the table."""
    models = sorted(set(difficulty["difficulty_model"])) if (
        "difficulty_model" in difficulty.columns) else ["homoscedastic"]
    norms = sorted(set(difficulty["normalisation"])) if (
        "normalisation" in difficulty.columns) else ["geometric"]
    mean = " and ".join(f"{n} mean" for n in norms)
    return f"{' and '.join(models)} model; {mean} of each model's languages = 1"


def predictor_sentences(predictors: pl.DataFrame, response: str) -> list[str]:
    """Per model: the predictor with the smallest adjusted p (then the largest |Spearman rho|)
    for ``response``, and where MCC (each source) stands, so a reader sees whether morphology or a simple
    statistic of the text explains difficulty."""
    out = []
    data = _labelled(predictors.filter((pl.col("response") == response)
                                       & pl.col("spearman_rho").is_not_null()))
    for model, part in sorted(data.group_by("model"), key=lambda g: g[0]):
        best = part.sort([pl.col("spearman_p_bh"), pl.col("spearman_rho").abs()],
                         descending=[False, True], nulls_last=True).row(0, named=True)
        mcc = [f"{r['predictor'].split(':')[1]} MCC rho {r['spearman_rho']:.2f} (adjusted p "
               f"{fmt(r['spearman_p_bh'])}, {r['n_languages']} languages)"
               for r in part.filter(pl.col("predictor").str.starts_with("mcc:"))
               .sort("predictor").iter_rows(named=True)]
        verdict = ("significant after the adjustment" if best["spearman_p_bh"] is not None
                   and best["spearman_p_bh"] < 0.05 else "not significant after the adjustment")
        out.append(f"{model[0] if isinstance(model, tuple) else model}: strongest "
                   f"{best['predictor']} (rho {best['spearman_rho']:.2f}, adjusted p "
                   f"{fmt(best['spearman_p_bh'])}, {best['n_languages']} languages; "
                   f"{verdict})" + (f"; {'; '.join(mcc)}" if mcc else "") + ".")
    return out


def predictor_grid(predictors: pl.DataFrame, response: str) -> str:
    """One row per predictor, one column per model: Spearman's rho with ``response`` (adjusted
    p, languages), grouped by segmentation family."""
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
    return html_table(wide, {"predictor": "property of the language", **{
        c: "Spearman's rho (BH-adjusted p, languages)" for c in wide.columns[1:]}},
        caption=f"What predicts {response} across languages, per model")


def regression_sentences(regressions: pl.DataFrame, source: str) -> list[str]:
    """What the MCC regressions of one source say, model by model: the slope on words and on
    lemmas with their intervals (the inverted permutation test) and whether they exclude zero,
    the permutation and Spearman p-values with their Benjamini-Hochberg adjustment over the
    family."""
    out = []
    rows = regressions.filter((pl.col("measure") == "mcc") & (pl.col("source") == source))
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
            if r["slope_low"] is None:
                interval = " (no interval: too few languages)"
            else:
                zero = r["slope_low"] <= 0 <= r["slope_high"]
                interval = (f" [{fmt(r['slope_low'] * 100)}, {fmt(r['slope_high'] * 100)}]"
                            f"{' (the interval includes 0)' if zero else ' (excludes 0)'}")
            bits.append(
                f"on {text} {fmt(r['slope'] * 100)} bits/English char per 100 bundles"
                f"{interval}, permutation p {fmt(r.get('permutation_p'))} (adjusted "
                f"{fmt(r.get('permutation_p_bh'))}), Spearman rho "
                f"{fmt(r['spearman_rho'])} (p {fmt(r['spearman_p'])}, adjusted "
                f"{fmt(r.get('spearman_p_bh'))}; {r['n_languages']} languages)")
        if bits:
            out.append(f"{model_label(model, tok)}: " + "; ".join(bits) + ".")
    if unfit:
        out.append(f"No fit (fewer than 3 languages with both a {source} MCC and a BPEC; "
                   f"languages in parentheses): {', '.join(unfit)}.")
    return out


def morphology_body(tables: dict[str, pl.DataFrame], names: dict[str, str],
                    figures: dict[str, str], figure) -> str | None:
    """The section's HTML (None when the stage produced nothing). ``figure(path, alt)`` embeds a
    PNG; ``figures`` maps ``morphology_<source>`` to the Figure 1 panels of that MCC source."""
    parts = []
    mcc = _have(tables, "mcc")
    regressions = _have(tables, "regressions")
    if mcc is None and regressions is None and _have(tables, "difficulty") is None:
        return None
    parts.append(_p(
        "Morphological counting complexity (MCC) counts the distinct inflectional feature "
        "bundles a language's lexicon distinguishes (English verbs: a 3rd-person-singular "
        "present, a past, ...). It comes from three sources that are never mixed: the values "
        "Cotterell et al. (2018) published for the 21 Europarl languages (8 of them are Bible "
        "languages here), Apertium's morphological analysers (Debian packages), with their tags "
        "mapped to UniMorph's inflectional features, and UniMorph lexicons downloaded on a "
        "cluster. Forms per lemma, from simplemma's dictionaries and Apertium's paradigms, is a "
        "second, cruder proxy."))
    parts.append(_p(
        "With 7 to 11 languages per source, a slope or a correlation can be large by chance: "
        "each slope is tested by permuting the languages (exact up to 8 languages), its "
        "interval inverts that test, and the permutation and Spearman p-values are adjusted "
        "(Benjamini-Hochberg) over the family of one measure source and text, every model "
        "tested on it. A claim holds only where its adjusted p-value is below 0.05; even then "
        "it says how these few languages line up, not how morphology works in general.",
        "note"))
    if mcc is not None:
        mcc = mcc.filter(pl.col("language").is_in(list(names)))
        total = mcc.filter(pl.col("pos") == "total")
        wide = total.pivot(on="source", index="language", values="mcc").sort("language")
        parts.append(_table(wide, "MCC by source for the study's languages (total over verbs, "
                            "nouns and adjectives; empty: the source has no value for the "
                            "language; mcc.csv has all 21 published languages)", names,
                            headers={c: "bundles (count)" for c in wide.columns[1:]}))
        per_pos = mcc.filter(pl.col("pos") != "total").sort("source", "language", "pos")
        if per_pos.height:
            parts.append(_table(per_pos, "MCC and forms per lemma per part of speech", names))
    validation = _have(tables, "mcc_validation")
    if validation is not None:
        parts.append(_table(validation, "Apertium's MCC against the published values on the "
                            "languages that have both", names,
                            headers={"ratio": "Apertium / published (ratio)",
                                     "n": "languages (count)"}))
    forms = _have(tables, "forms_per_lemma")
    if forms is not None:
        parts.append(_table(forms, "Forms per lemma of simplemma's dictionaries", names))
    coverage = _have(tables, "lemmatizer_coverage")
    if coverage is not None:
        parts.append(_table(coverage, "Which languages have a lemmatized copy, and why not",
                            names))
    if regressions is not None:
        for source in sorted(set(regressions.filter(pl.col("measure") == "mcc")["source"])):
            sentences = regression_sentences(regressions, source)
            if sentences:
                parts.append(_p(f"BPEC against {source} MCC, per model:", "answer"))
                parts.extend(_p(s, "answer") for s in sentences)
            parts.append(figure(figures.get(f"morphology_{source}"),
                                f"BPEC against {source} MCC: words, lemmas, difference"))
        fitted = regressions.filter(pl.col("slope_low").is_not_null()).drop(
            "note", "intercept", "permutations", strict=False)
        parts.append(_table(fitted.sort("measure", "source", "model", "text"),
                            "The regressions on enough languages for a bounded slope interval; "
                            "morphology.csv has every row, with the languages left out and why",
                            names, keep=("model", "measure", "source", "text")))
        parts.append(_p("Forms per lemma from simplemma's dictionaries puts Swahili at 1,204 "
                        "(its dictionary lists generated verb paradigms): a least-squares slope "
                        "on that measure follows Swahili alone; Spearman's rho, on ranks, does "
                        "not.", "note"))
    parts.extend(_difficulty_parts(tables, names))
    return "\n".join(p for p in parts if p)


def _difficulty_parts(tables: dict[str, pl.DataFrame], names: dict[str, str]) -> list[str]:
    parts = []
    difficulty = _have(tables, "difficulty")
    if difficulty is not None:
        parts.append(_p(
            "The difficulty model of Mielke et al. (2019) explains each unit's bits in each "
            "language as a unit effect times a language effect, fitted on every unit each model "
            "scored, so a language counts on all its units, not only on the units common to "
            "every language. The heteroscedastic model is the one behind the authors' published "
            "difficulties (a unit's spread shrinks as its information content grows); the "
            "homoscedastic one gives every cell one noise variance. Difficulty d_j is relative "
            f"({_fit_description(difficulty)}). Their Europarl values come from a "
            "different corpus (parliament proceedings, 21 European languages) and a character "
            "LSTM: only the direction of a shared language can be compared."))
        parts.append(difficulty_grid(difficulty, names))
    agreement = _have(tables, "agreement")
    if agreement is not None:
        parts.append(_table(agreement, "Do the difficulties (every unit) rank the languages as "
                            "BPEC on the common units does?", names, keep=("model",)))
    predictors = _have(tables, "predictors")
    if predictors is not None:
        parts.append(_p(
            "Does MCC predict difficulty once the simple statistics of the text are in the "
            "running? Each predictor is correlated with each model's difficulty across "
            "languages; the p-values are adjusted for every predictor tested for that model "
            "(Benjamini-Hochberg). Cells: Spearman's rho (adjusted p, languages); the full "
            "table with Pearson's r and BPEC as the response is "
            "results/tables/difficulty_predictors.csv.", "note"))
        parts.extend(_p(s, "answer") for s in predictor_sentences(predictors, "difficulty"))
        parts.append(predictor_grid(predictors, "difficulty"))
    fairness = _have(tables, "fairness")
    if fairness is not None:
        parts.append(_table(fairness, "How unequal is each model across languages", names,
                            keep=("model",)))
    premium = _have(tables, "premium")
    if premium is not None:
        parts.append(_p(
            "A tokenizer's premium (Petrov et al. 2023) is how many more tokens a language "
            "needs than English for the same content; with a tokenizer trained per language "
            "it mixes the tokenizer and the writing system.", "note"))
        wide = (_labelled(premium).pivot(on="model", index="language", values="premium"))
        parts.append(_table(wide, "Tokens relative to English on the same units (premium)",
                            names, headers={c: "premium (ratio; English = 1)"
                                            for c in wide.columns[1:]}))
    return parts
