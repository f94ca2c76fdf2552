"""How much of a language's difficulty is its translator's: the difficulties of
:func:`fairppl.morphology.difficulty.difficulty_table` (one column per sheet id, i.e. per
translation, as Mielke et al.'s Model 2 takes them) grouped by the sheet's ``iso639_3``, with the
spread between translations of one language beside the spread between languages.

Two scopes, each a row of ``difficulty_translations.csv`` per model (model, tokenizer):

- **one corpus** (``corpus`` = its id): x = ln d_j of that corpus's fit, every translation of
  the corpus (English included).
- **across corpora** (``corpus`` = the corpora joined by "+", where the same model and tokenizer
  were fitted in two or more corpora): each corpus's difficulties come from a fit of their own,
  normalised over that corpus's languages, and a model of the same name is trained on that
  corpus's own split of its own books, so two corpora's d_j are not on one scale. A joint fit on
  the units both corpora score was not chosen: the two corpora split their units by their own
  positions (only part of one's test units are the other's) and their models learn from
  different training text, so a joint fit would book the corpus's training regime as the
  translation's. Instead each translation is put relative to its own corpus's English
  reference, x = ln(d_j / d_English): both English references are the same text (the King
  James Version), scored by that corpus's model, so the ratio cancels the corpus's
  normalisation and, to first order, what its training regime does to every language alike.
  The English rows are left out of this scope (each is 0 by construction).

The decomposition (one-way random effects, the analysis-of-variance estimator; Searle, Casella &
McCulloch 1992, *Variance Components*, ch. 3): G languages, n_g translations of language g,
N = sum n_g, language means m_g, grand mean m (over translations):

- SS_W = sum_g sum_k (x_gk - m_g)^2 on N - G degrees of freedom, MS_W = SS_W / (N - G): a
  language with one translation adds nothing to SS_W nor to its degrees of freedom;
- SS_B = sum_g n_g (m_g - m)^2 on G - 1, MS_B = SS_B / (G - 1);
- n0 = (N - sum_g n_g^2 / N) / (G - 1) (n when every language has n translations);
- sigma_w^2 = MS_W, sigma_b^2 = max(0, (MS_B - MS_W) / n0), and the within share
  sigma_w^2 / (sigma_w^2 + sigma_b^2).

``within_sd`` = sqrt(MS_W) (the pooled standard deviation between translations of one
language), ``between_sd`` the standard deviation of the G language means (ddof 1), both in
nats of ln d; as a percentage, 100 (e^sd - 1).

The interval of the within share treats the translations as drawn at random: with
F = MS_B / MS_W and F(G-1, N-G)'s quantiles, theta = sigma_b^2 / sigma_w^2 lies in
[(F / F_hi - 1) / n0, (F / F_lo - 1) / n0] (each end at least 0), and the share 1 / (1 + theta)
in the mirrored interval: exact when every language has the same number of translations,
approximate (n0 in place of n) otherwise. With one language of two translations (N - G = 1) it
is honest and wide. It does not hold the noise of the fit: ``noise_sd``, the root mean square of
the Laplace standard errors of ln d over the translations of the languages with more than one,
is the within spread that estimation noise alone would give (sampling units, not translators).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy.stats import f as f_dist

from ..core.errors import InputError
from ..stats.metrics import OPTIONAL_KEYS

#: Columns of ``difficulty_translations.csv`` beyond its keys (corpus, model, tokenizer).
TRANSLATION_COLUMNS = {
    "scale": "what x is: ln d_j of the corpus's fit, or ln(d_j / d_English of its own corpus) "
             "across corpora",
    "n_translations": "translations in the decomposition, N (count)",
    "n_languages": "languages (distinct ISO 639-3 codes), G (count)",
    "n_multi": "languages with more than one translation (count)",
    "multi_languages": "their ISO 639-3 codes (;-separated)",
    "df_within": "degrees of freedom between translations of one language, N - G (count)",
    "within_sd": "pooled standard deviation of x between translations of one language, "
                 "sqrt(MS_W) (nats)",
    "within_pct": "within_sd as a factor: 100 (e^within_sd - 1) (percent)",
    "between_sd": "standard deviation of the languages' mean x (nats)",
    "between_pct": "between_sd as a factor: 100 (e^between_sd - 1) (percent)",
    "noise_sd": "root mean square standard error of ln d_j over the multi-translation "
                "languages' translations: within_sd expected from fit noise alone (nats)",
    "within_share": "share of the variance of x that is between translations of one language, "
                    "sigma_w^2 / (sigma_w^2 + sigma_b^2), ANOVA estimator (fraction)",
    "within_share_low": "lower end of its F-based interval (fraction)",
    "within_share_high": "upper end (fraction)",
    "ci_level": "central coverage of the interval (fraction)",
}

#: Columns of ``difficulty_translations_rows.csv`` (one row per translation of a language with
#: more than one) beyond the keys.
TRANSLATION_ROW_COLUMNS = {
    "scale": "what x is (as in difficulty_translations.csv)",
    "iso639_3": "the language (ISO 639-3 code of the sheet)",
    "translation_corpus": "the corpus of the translation",
    "language": "the translation (sheet language id)",
    "difficulty": "e^x: d_j, or d_j / d_English of its corpus across corpora (ratio)",
    "log_difficulty": "x (nats)",
    "log_difficulty_se": "standard error of ln d_j from its fit (nats)",
    "deviation": "x minus the mean x of its language's translations (nats)",
    "language_range": "largest minus smallest x among its language's translations (nats)",
}


@dataclass(frozen=True)
class Decomposition:
    """One-way random-effects decomposition of x over languages (see the module docstring);
    the spreads are None where their degrees of freedom are 0."""

    n_translations: int
    n_languages: int
    n_multi: int
    df_within: int
    within_sd: float | None
    between_sd: float | None
    within_share: float | None
    within_share_low: float | None
    within_share_high: float | None


def decompose(values, groups, level: float = 0.95) -> Decomposition:
    """The decomposition of ``values`` (x, one per translation) over ``groups`` (the language
    of each), with the ``level`` interval of the within share."""
    x = np.asarray(values, dtype=float)
    groups = list(groups)
    if len(groups) != x.size:
        raise ValueError(f"decompose: {x.size} values but {len(groups)} groups")
    if not np.isfinite(x).all():
        raise InputError("translation spread: values that are not finite")
    labels = sorted(set(groups))
    index = np.array([labels.index(g) for g in groups], dtype=np.int64)
    n_total, n_groups = x.size, len(labels)
    sizes = np.bincount(index, minlength=n_groups).astype(float)
    means = np.bincount(index, weights=x, minlength=n_groups) / np.maximum(sizes, 1)
    df_w, df_b = n_total - n_groups, n_groups - 1
    ss_w = float(((x - means[index]) ** 2).sum())
    ms_w = ss_w / df_w if df_w > 0 else None
    between_sd = float(np.std(means, ddof=1)) if df_b > 0 else None
    share = low = high = None
    if ms_w is not None and df_b > 0:
        grand = float(x.mean())
        ms_b = float((sizes * (means - grand) ** 2).sum()) / df_b
        n0 = (n_total - float((sizes ** 2).sum()) / n_total) / df_b
        sigma_b2 = max(0.0, (ms_b - ms_w) / n0)
        total = ms_w + sigma_b2
        share = ms_w / total if total > 0 else None
        if ms_w > 0:
            ratio = ms_b / ms_w
            tail = (1.0 - level) / 2.0
            f_lo, f_hi = f_dist.ppf([tail, 1.0 - tail], df_b, df_w)
            theta_low = max(0.0, (ratio / f_hi - 1.0) / n0)
            theta_high = max(0.0, (ratio / f_lo - 1.0) / n0)
            low, high = 1.0 / (1.0 + float(theta_high)), 1.0 / (1.0 + float(theta_low))
    return Decomposition(
        n_translations=n_total, n_languages=n_groups, n_multi=int((sizes > 1).sum()),
        df_within=df_w, within_sd=None if ms_w is None else math.sqrt(ms_w),
        between_sd=between_sd, within_share=share, within_share_low=low,
        within_share_high=high)


def read_sheet(sheet: pl.DataFrame) -> pl.DataFrame:
    """The sheet's corpus, language, iso639_3 and english_reference (bool) columns, checked."""
    missing = [c for c in ("corpus", "language", "iso639_3", "english_reference")
               if c not in sheet.columns]
    if missing:
        raise InputError(f"translation spread: the language sheet lacks columns {missing}; it "
                         f"has {sheet.columns}")
    flag = pl.col("english_reference")
    if sheet.schema["english_reference"] == pl.String:  # a TSV's true/false
        flag = flag.str.to_lowercase().replace_strict({"true": True, "false": False},
                                                      default=None, return_dtype=pl.Boolean)
    sheet = sheet.select(pl.col("corpus", "language", "iso639_3").cast(pl.String),
                         flag.cast(pl.Boolean))
    unread = sheet.filter(pl.col("english_reference").is_null() | pl.col("iso639_3").is_null())
    if unread.height:
        r = unread.row(0, named=True)
        raise InputError(f"translation spread: the sheet's row for {r['language']!r} of corpus "
                         f"{r['corpus']!r} has no iso639_3 or an english_reference that is not "
                         f"true or false")
    repeated = sheet.group_by("corpus", "language").len().filter(pl.col("len") > 1)
    if repeated.height:
        r = repeated.row(0, named=True)
        raise InputError(f"translation spread: the sheet has {r['len']} rows for language "
                         f"{r['language']!r} of corpus {r['corpus']!r}; one expected")
    return sheet


def _with_codes(difficulty: pl.DataFrame, sheet: pl.DataFrame) -> pl.DataFrame:
    missing = [c for c in ("corpus", "language", "log_difficulty", "log_difficulty_se")
               if c not in difficulty.columns]
    if missing:
        raise InputError(f"translation spread: the difficulty table lacks columns {missing}; "
                         f"it has {difficulty.columns}")
    joined = difficulty.join(sheet, on=["corpus", "language"], how="left")
    unknown = joined.filter(pl.col("iso639_3").is_null())
    if unknown.height:
        r = unknown.row(0, named=True)
        raise InputError(f"translation spread: language {r['language']!r} of corpus "
                         f"{r['corpus']!r} is in the difficulty table but not in the language "
                         f"sheet (expected a row with its iso639_3)")
    return joined


def _rows(part: pl.DataFrame, key: dict, scale: str) -> list[dict]:
    """The rows table's rows of one scope: the translations of languages with more than one."""
    stats = part.group_by("iso639_3").agg(
        pl.len().alias("n"), pl.col("x").mean().alias("mean"),
        (pl.col("x").max() - pl.col("x").min()).alias("language_range"))
    multi = part.join(stats.filter(pl.col("n") > 1), on="iso639_3", how="inner")
    return [key | {"scale": scale, "iso639_3": r["iso639_3"],
                   "translation_corpus": r["corpus"], "language": r["language"],
                   "difficulty": math.exp(r["x"]), "log_difficulty": r["x"],
                   "log_difficulty_se": r["log_difficulty_se"],
                   "deviation": r["x"] - r["mean"], "language_range": r["language_range"]}
            for r in multi.sort("iso639_3", "corpus", "language").iter_rows(named=True)]


def _summary(part: pl.DataFrame, key: dict, scale: str, level: float) -> dict:
    result = decompose(part["x"].to_numpy(), part["iso639_3"].to_list(), level)
    sizes = part.group_by("iso639_3").len()
    multi = sorted(sizes.filter(pl.col("len") > 1)["iso639_3"].to_list())
    se = part.filter(pl.col("iso639_3").is_in(multi))["log_difficulty_se"].drop_nulls()
    pct = (lambda sd: None if sd is None else 100.0 * math.expm1(sd))
    return key | {
        "scale": scale, "n_translations": result.n_translations,
        "n_languages": result.n_languages, "n_multi": result.n_multi,
        "multi_languages": ";".join(multi), "df_within": result.df_within,
        "within_sd": result.within_sd, "within_pct": pct(result.within_sd),
        "between_sd": result.between_sd, "between_pct": pct(result.between_sd),
        "noise_sd": float(np.sqrt(np.mean(se.to_numpy() ** 2))) if se.len() else None,
        "within_share": result.within_share, "within_share_low": result.within_share_low,
        "within_share_high": result.within_share_high, "ci_level": level}


ONE_CORPUS = "ln d_j (this corpus's fit)"
ACROSS = "ln(d_j / d_English of its own corpus)"


def translation_tables(difficulty: pl.DataFrame, sheet: pl.DataFrame, level: float = 0.95
                       ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(summary, rows): ``difficulty_translations.csv`` (the keys, then
    :data:`TRANSLATION_COLUMNS`: one row per corpus and model, then one per model fitted in
    two or more corpora) and ``difficulty_translations_rows.csv`` (the keys, then
    :data:`TRANSLATION_ROW_COLUMNS`), from ``difficulty`` (difficulty.csv) and the language
    ``sheet`` (corpus, language, iso639_3, english_reference)."""
    data = _with_codes(difficulty, read_sheet(sheet)).with_columns(
        x=pl.col("log_difficulty").cast(pl.Float64))
    models = [k for k in ["model", "tokenizer"] + OPTIONAL_KEYS if k in data.columns]
    summary, rows = [], []
    for values, part in data.sort("corpus", *models, "language", nulls_last=True).group_by(
            ["corpus", *models], maintain_order=True):
        key = dict(zip(["corpus", *models], values))
        summary.append(_summary(part, key, ONE_CORPUS, level))
        rows.extend(_rows(part, key, ONE_CORPUS))
    english = data.filter(pl.col("english_reference")).group_by("corpus", *models).agg(
        pl.col("x").first().alias("x_english"), pl.len().alias("n_english"))
    doubled = english.filter(pl.col("n_english") > 1)
    if doubled.height:
        r = doubled.row(0, named=True)
        raise InputError(f"translation spread: corpus {r['corpus']!r} has {r['n_english']} "
                         f"English reference rows in the difficulty table; one expected")
    relative = (data.filter(~pl.col("english_reference"))
                .join(english.drop("n_english"), on=["corpus", *models], how="inner",
                      nulls_equal=True)
                .with_columns(x=pl.col("x") - pl.col("x_english")))
    for values, part in relative.sort(*models, "corpus", "language", nulls_last=True).group_by(
            models, maintain_order=True):
        corpora = part["corpus"].unique(maintain_order=True).to_list()
        if len(corpora) < 2:
            continue
        key = {"corpus": "+".join(corpora)} | dict(zip(models, values))
        summary.append(_summary(part, key, ACROSS, level))
        rows.extend(_rows(part, key, ACROSS))
    keys = {"corpus": pl.String} | {k: pl.String for k in models}
    types = {"scale": pl.String, "n_translations": pl.Int64, "n_languages": pl.Int64,
             "n_multi": pl.Int64, "multi_languages": pl.String, "df_within": pl.Int64}
    row_types = {"scale": pl.String, "iso639_3": pl.String, "translation_corpus": pl.String,
                 "language": pl.String}
    summary_schema = keys | {c: types.get(c, pl.Float64) for c in TRANSLATION_COLUMNS}
    rows_schema = keys | {c: row_types.get(c, pl.Float64) for c in TRANSLATION_ROW_COLUMNS}
    return (pl.DataFrame(summary, schema=summary_schema, orient="row"),
            pl.DataFrame(rows, schema=rows_schema, orient="row"))
