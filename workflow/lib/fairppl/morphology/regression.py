"""Regressions across languages: BPEC against a morphology measure (Cotterell et al. 2018,
Figure 1), one regression per corpus, model, measure, measure source and text (words, lemmas,
their difference, or the marginal BPEC over tokenizations).

Each regression reports the least-squares slope and intercept, Pearson's r with scipy's t-test
p-value (exact for bivariate normal data only), Spearman's rho with an exact p-value up to
:data:`fairppl.stats.correlates.EXACT_DP_MAX_PAIRS` languages (every pairing of the ranks
counted; scipy's t approximation above), and, as the basis of every claim, the **permutation
test** of the slope (:mod:`fairppl.stats.permutation`: exact over all n! pairings up to 8
languages, Monte Carlo above; the same test as for Pearson's r). The slope interval inverts that
test, so under the linear model (errors independent of the measure, of any distribution) it
covers the true slope at least at its level, and it excludes 0 exactly when the permutation
p-value is at most 1 - level. (A percentile bootstrap over languages, used
before, rejected a true null 8.9% of the time at a nominal 5% with 8 languages and 10.2% with
17: ``bench/bench_morphology_tests.py`` prints the rates of what is reported now: all at 0.05
within Monte Carlo error at 8, 11, 17 and 22 languages, except the t test of Pearson's r with a
skewed measure and heavy-tailed BPEC at 8 languages, 0.064, which is why it is not the basis of
claims.)

Multiple testing: every test answers one of the questions declared up front in
:data:`fairppl.morphology.questions.QUESTIONS`, and the permutation and Spearman p-values are
adjusted by Benjamini-Hochberg over every test of that question (``_bh`` columns; the
question's id is the row's ``test_family``, the multiple-testing family), as Mielke et al.
(2019) pooled all the tests of their question into one family. Every regression of
``morphology.csv`` answers one question (does morphological complexity explain the cost of a
language's text?), so a claim such as "the cost of inflection rises with the published MCC" is
adjusted over every corpus, model, measure, source and text, not over its own panel alone.

Languages are not independent: languages of one family share traits, and a test that treats
them as independent draws over-states the evidence (:mod:`fairppl.stats.family`). Where the
language sheet gives every language of a row its family, the row carries three family-controlled
p-values beside the plain one (:data:`FAMILY_COLUMNS`: the within-family permutation test, the
studentized permutation test of the family means, the family-clustered t) and flags where they
and the plain test fall on different sides of :data:`FAMILY_ALPHA`; where a language has no
family the row says so in its note and those columns stay empty.

With fewer than :data:`MIN_LANGUAGES` languages, or one x value for all of them, the row is kept
with empty statistics and a ``note`` that says why; languages without a measure value or without
a BPEC are left out of that regression and named in the note. Where so few languages remain that
the test can reject no slope at all (4 languages: the smallest two-sided p-value is 2/24), the
interval is unbounded and left empty, with a note.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from scipy.stats import pearsonr

from scipy.stats import rankdata

from ..core.errors import InputError
from ..stats.correlates import (EXACT_DP_MAX_PAIRS, benjamini_hochberg, spearman,
                                 spearman_interval)
from ..stats.family import (clustered_slope, family_means, studentized_slope_test,
                            within_family_permutations, within_family_slope_test)
from ..stats.permutation import (EXACT_MAX, PermutationSettings, monte_carlo_interval,
                                 reference_permutations, slope_test)
from .questions import question_of

#: The fewest languages a regression is computed on.
MIN_LANGUAGES = 3

#: The texts a model is scored on: the words as written, the lemmatized copy, the difference of
#: the two BPECs (words - lemmas, the third panel of the paper's Figure 1), and the words
#: scored by the marginal likelihood over tokenizations (where the marginal stage has it).
TEXTS = ("words", "lemmas", "difference", "marginal")

#: Columns of the long input table (one row per language and regression), with their units.
LONG_COLUMNS = {
    "corpus": "corpus id",
    "language": "language id",
    "model": "model id (with its tokenizer where the caller adds a tokenizer column)",
    "measure": "morphology measure id (e.g. mcc, forms_per_lemma)",
    "source": "where the measure comes from (e.g. published, apertium, unimorph)",
    "text": "words, lemmas, difference or marginal",
    "value": "the language's measure (its unit depends on the measure); empty: no data",
    "bpec": "BPEC on that text (bits/char of English); empty: not scored",
}

#: The level at which ``family_disagrees`` compares the plain test with the family-controlled
#: ones (the report's, :data:`fairppl.report.morphology.ALPHA`).
FAMILY_ALPHA = 0.05

#: Level of the interval of Spearman's rho in :func:`predictor_correlations`.
RHO_LEVEL = 0.95


def _family_columns(of: str, plain: str) -> dict[str, str]:
    """The family-controlled columns, for tests of ``of`` against the plain test ``plain``."""
    return {
        "n_families": "language families among the row's languages (count; empty where the "
                      "sheet gives no family for some language: the note names them)",
        "within_family_p": f"two-sided permutation p-value of the pooled within-family slope "
                           f"of {of}, values permuted only within language families (empty "
                           f"where its reference set is too small for a p of {FAMILY_ALPHA} or "
                           f"less, e.g. no family holding two languages with distinct values: "
                           f"the note says so)",
        "family_means_p": f"two-sided studentized permutation p-value of the slope of {of} "
                          f"over the family means (one point per language family; empty under "
                          f"4 families: G! pairings cannot give a p of {FAMILY_ALPHA} or less)",
        "clustered_p": f"two-sided p-value of the least-squares slope of {of} with a "
                       f"family-clustered (CR1) standard error, Student t with families - 1 "
                       f"degrees of freedom (an approximation that rejects too often with few "
                       f"and unequal families: shown, not counted in family_disagrees)",
        "family_disagrees": f"true where {plain} and the within-family or the family-means "
                            f"p-value fall on different sides of {FAMILY_ALPHA} (significant "
                            f"plainly, not under family control, or the reverse); the "
                            f"clustered p is not counted",
    }


#: Family-controlled columns of :func:`regression_table` (tests of the slope itself).
FAMILY_COLUMNS_SLOPE = _family_columns("BPEC on the measure", "permutation_p")
#: Family-controlled columns of :func:`predictor_correlations` (tests of the rank slope, the
#: analogue of Spearman's rho: ranks over the row's languages).
FAMILY_COLUMNS_RANK = _family_columns("the ranks (Spearman's rho's analogue; ranks over the "
                                      "row's languages)", "spearman_p")
#: The family-controlled columns (the names both tables share).
FAMILY_COLUMNS = tuple(FAMILY_COLUMNS_SLOPE)


#: Columns of ``morphology.csv`` (one row per regression), with their units.
REGRESSION_COLUMNS = {
    "corpus": "corpus id",
    "model": "model id",
    "measure": "morphology measure id",
    "source": "source of the measure",
    "text": "words, lemmas, difference (words - lemmas) or marginal",
    "n_languages": "languages in the regression (count)",
    "slope": "least-squares slope of BPEC on the measure (bits/char of English per measure unit)",
    "slope_low": "slope, lower end of the interval that inverts the permutation test (empty: "
                 "unbounded, too few languages)",
    "slope_high": "slope, upper end of that interval",
    "intercept": "least-squares intercept (bits/char of English)",
    "pearson_r": "Pearson correlation (-1 to 1)",
    "permutation_p": f"two-sided permutation p-value of the slope, the same test as of Pearson's "
                     f"r (exact up to {EXACT_MAX} languages, else Monte Carlo)",
    "permutation_p_bh": "permutation_p adjusted by Benjamini-Hochberg over every test of the "
                        "row's question (test_family)",
    "permutations": f"size of the permutation reference set: n! (every permutation) up to "
                    f"{EXACT_MAX} languages, else 1 + the Monte Carlo draws (count)",
    "spearman_rho": "Spearman rank correlation (-1 to 1)",
    "spearman_p": f"two-sided p-value of Spearman's rho (exact up to {EXACT_DP_MAX_PAIRS} "
                  f"languages, t approximation above)",
    "spearman_p_bh": "spearman_p adjusted by Benjamini-Hochberg over every test of the row's "
                     "question (test_family)",
    **FAMILY_COLUMNS_SLOPE,
    "test_family": "multiple-testing family: the id of the question the row's test answers "
                   "(fairppl.morphology.questions; here every regression answers "
                   "morphology-cost), over whose tests its p-values are adjusted (not a "
                   "language family)",
    "note": "why statistics are empty, languages left out, unbounded intervals",
}

#: The regression's statistics. Pearson's r has no t-test p-value here: at 8 languages with a
#: skewed measure (as MCC is) and heavy-tailed BPEC it rejected a true null 6.4% of the time at
#: a nominal 5% (bench/bench_morphology_tests.py), and its test is the permutation test of the
#: slope (``permutation_p``), which holds its level.
_STATS = ["slope", "slope_low", "slope_high", "intercept", "pearson_r", "permutation_p",
          "spearman_rho", "spearman_p"]

#: Types of the family-controlled columns.
_FAMILY_SCHEMA = {"n_families": pl.Int64, "within_family_p": pl.Float64,
                  "family_means_p": pl.Float64, "clustered_p": pl.Float64,
                  "family_disagrees": pl.Boolean}

def regress(x, y, settings: PermutationSettings = PermutationSettings(),
            min_languages: int = MIN_LANGUAGES) -> dict:
    """The statistics of one regression of ``y`` (BPEC) on ``x`` (a measure) over languages:
    n_languages, slope, slope_low, slope_high (the inverted permutation test at
    ``settings.level``), intercept, pearson_r, permutation_p, permutations,
    spearman_rho, spearman_p and note (empty when nothing needs saying). Pairs with a None or
    NaN are an error here: the caller leaves such languages out and says so."""
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    if len(x) != len(y):
        raise ValueError(f"regress: {len(x)} x values but {len(y)} y values")
    if any(math.isnan(v) for v in x + y):
        raise ValueError("regress: a missing value (NaN); leave that language out first")
    n = len(x)
    row: dict = {"n_languages": n} | dict.fromkeys(_STATS) | {"permutations": None, "note": ""}
    if n < min_languages:
        row["note"] = f"fewer than {min_languages} languages ({n}): no regression"
        return row
    if len(set(x)) < 2:
        row["note"] = f"every language has the same measure ({x[0]:g}): no slope"
        return row
    xa, ya = np.array(x), np.array(y)
    test = slope_test(xa, ya, settings)
    row.update(slope=test.slope, slope_low=test.low, slope_high=test.high,
               intercept=float(ya.mean() - test.slope * xa.mean()),
               permutations=test.permutations)
    if test.low is None:
        row["note"] = (f"slope interval unbounded: with {n} languages the permutation test "
                       f"cannot reject any slope at {1 - settings.level:.2g}")
    if len(set(y)) >= 2:
        result = pearsonr(xa, ya)
        rho, p, _ = spearman(x, y, exact_max=EXACT_DP_MAX_PAIRS)
        row.update(pearson_r=float(result.statistic), permutation_p=test.p, spearman_rho=rho,
                   spearman_p=p)
    else:
        row["note"] = _join(row["note"], "every language has the same BPEC: no correlation")
    return row


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


class _References:
    """Permutation reference sets reused across the rows that share a family layout (the
    within-family set) or a number of families (the family means')."""

    def __init__(self, settings: PermutationSettings):
        self.settings = settings
        self._within: dict[tuple, tuple] = {}
        self._means: dict[int, tuple] = {}

    def within(self, families: list[str]) -> tuple[np.ndarray, bool]:
        key = tuple(families)
        if key not in self._within:
            self._within[key] = within_family_permutations(families, self.settings)
        return self._within[key]

    def means(self, groups: int) -> tuple[np.ndarray, bool]:
        if groups not in self._means:
            self._means[groups] = reference_permutations(groups, self.settings)
        return self._means[groups]


#: The words by which a row's note says a drawn-permutation p is within its Monte Carlo error of
#: FAMILY_ALPHA (fairppl.report.morphology counts such rows by them).
MONTE_CARLO_NOTE = "within their Monte Carlo error"


def _near_alpha(name: str, p: float, permutations: int) -> str:
    """A note where a p-value from drawn permutations is within their Monte Carlo error of
    :data:`FAMILY_ALPHA` (its 99% interval holds it): another seed could put it on the other
    side; "" otherwise."""
    low, high = monte_carlo_interval(p, permutations)
    if not low <= FAMILY_ALPHA <= high:
        return ""
    return (f"{name} p {p:.3g} from {permutations - 1:,} drawn permutations is {MONTE_CARLO_NOTE}"
            f" of {FAMILY_ALPHA} (99% interval {low:.3g} to {high:.3g}): another seed "
            f"could put it on the other side; raise morphology.permutations to settle it")


def family_control(x, y, languages: list[str], families: dict[str, str] | None,
                   plain_p: float | None,
                   settings: PermutationSettings = PermutationSettings(),
                   references: _References | None = None) -> tuple[dict, str]:
    """The family-controlled columns (:data:`FAMILY_COLUMNS`) of one slope of ``y`` on ``x``
    over ``languages``, and a note ("" when nothing needs saying).

    ``families`` maps a language id to its family ("" or absent: not known); None means the
    sheet gives no families, and every column stays empty without a note. A language without a
    family empties the columns too, and the note names it (no test on part of the languages).
    ``plain_p`` is the plain test's p-value; None (no plain test) leaves the columns empty.
    A method that cannot run (one family: no family means, no clustered error), or whose
    reference set is too small for its p to reach :data:`FAMILY_ALPHA` (fewer than 1 / alpha
    permutations: 2 or 3 families for the family means; no family holding two distinct values,
    or too few within-family arrangements, for the within-family test), leaves its column
    empty and the note says why: such a test cannot contradict a significant plain test.
    ``family_disagrees`` compares the plain test with the within-family and family-means
    p-values that exist, at :data:`FAMILY_ALPHA`; the clustered p is reported beside them but
    not counted (it over-rejects with few, unequal families)."""
    out: dict = dict.fromkeys(FAMILY_COLUMNS)
    if families is None or plain_p is None:
        return out, ""
    missing = [lang for lang in languages if not families.get(lang)]
    if missing:
        return out, (f"no language family in the sheet for {', '.join(missing)}: no "
                     f"family-controlled tests")
    references = references or _References(settings)
    named = [families[lang] for lang in languages]
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    groups = len(set(named))
    notes = []
    within = within_family_slope_test(x, y, named, settings, reference=references.within(named))
    within_p = within.p
    if not within.informative_families:
        within_p = None
        notes.append("no language family holds two languages with distinct values: no "
                     "within-family test")
    elif within.permutations * FAMILY_ALPHA < 1:
        within_p = None
        notes.append(f"{within.permutations} within-family arrangements: the within-family "
                     f"test's smallest p, 1/{within.permutations}, exceeds {FAMILY_ALPHA}: no "
                     f"within-family test")
    means_p = clustered_p = None
    if groups < 2:
        notes.append(f"every language is in family {named[0]!r}: no family-means or clustered "
                     f"test")
    else:
        means = family_means(x, y, named)
        mx, my = means["mean x"].to_numpy(), means["mean y"].to_numpy()
        pairings = len(references.means(groups)[0])
        if pairings * FAMILY_ALPHA < 1:
            notes.append(f"{groups} families: the family-means test's smallest p, "
                         f"1/{pairings}, exceeds {FAMILY_ALPHA}: no family-means test")
        elif np.ptp(mx) > 0:
            means_p = studentized_slope_test(mx, my, settings,
                                             reference=references.means(groups)).p
        else:
            notes.append(f"the {groups} family means of x are equal: no family-means test")
        clustered_p = clustered_slope(x, y, named, settings.level).p
    drawn = [("within-family", within_p, within.permutations, within.exact)]
    if means_p is not None:
        means_reference, means_exact = references.means(groups)
        drawn.append(("family-means", means_p, len(means_reference), means_exact))
    notes += [_near_alpha(name, p, count) for name, p, count, exact in drawn
              if p is not None and not exact]
    # The clustered t is shown but does not decide: with few, unequal families it rejects a
    # true null far above its level (14-18% at nominal 5% at the default Bible's 9 families,
    # bench/bench_family_size.py); the two permutation tests hold theirs.
    controlled = [p for p in (within_p, means_p) if p is not None]
    plain = plain_p <= FAMILY_ALPHA
    out.update(n_families=groups, within_family_p=within_p, family_means_p=means_p,
               clustered_p=clustered_p,
               family_disagrees=any((p <= FAMILY_ALPHA) != plain for p in controlled))
    return out, _join(*notes)


def with_difference(long: pl.DataFrame) -> pl.DataFrame:
    """``long`` (columns of :data:`LONG_COLUMNS`, texts ``words`` and ``lemmas``) with the
    ``difference`` rows added: per language, BPEC on words - BPEC on lemmas, empty where either
    is. Existing ``difference`` rows raise ValueError."""
    _check_long(long)
    if long.filter(pl.col("text") == "difference").height:
        raise ValueError("with_difference: the table already has difference rows")
    keys = [c for c in long.columns if c not in ("text", "bpec", "reason")]
    words = long.filter(pl.col("text") == "words").select(*keys, words="bpec")
    lemmas = long.filter(pl.col("text") == "lemmas").select(*keys, lemmas="bpec")
    both = words.join(lemmas, on=keys, how="full", coalesce=True, nulls_equal=True)
    diff = both.select(*keys, text=pl.lit("difference"),
                       bpec=pl.col("words") - pl.col("lemmas"))
    if "reason" in long.columns:
        diff = diff.with_columns(reason=pl.when(pl.col("bpec").is_null())
                                 .then(pl.lit("no BPEC on words and on lemmas")))
    return pl.concat([long, diff.select(long.columns)], how="vertical_relaxed")


def _check_long(long: pl.DataFrame) -> None:
    missing = [c for c in LONG_COLUMNS if c not in long.columns]
    if missing:
        raise InputError(f"morphology regressions: the long table lacks columns {missing}; it "
                         f"has {long.columns}")
    bad = sorted(set(long["text"].drop_nulls().to_list()) - set(TEXTS))
    if bad or long["text"].null_count():
        raise InputError(f"morphology regressions: text must be one of {list(TEXTS)}, got "
                         f"{bad or ['(empty)']}")


def regression_table(long: pl.DataFrame,
                     settings: PermutationSettings = PermutationSettings(),
                     min_languages: int = MIN_LANGUAGES,
                     language_families: dict[str, str] | None = None) -> pl.DataFrame:
    """The rows of ``morphology.csv`` (:data:`REGRESSION_COLUMNS`) from the long table ``long``
    (:data:`LONG_COLUMNS`; one row per corpus, model, measure, source, text and language; a
    ``tokenizer`` column, when present, is a key too and kept after ``model``; an optional
    ``reason`` column says why a language's value or BPEC is empty). A language whose value or
    BPEC is empty is left out of that regression and named in the note with its reason. The
    permutation and Spearman p-values are adjusted by Benjamini-Hochberg over every row of the
    row's question (``test_family``, :func:`fairppl.morphology.questions.question_of`). Two
    rows for one language of one regression raise InputError. ``language_families`` (language
    id -> family, from the sheet; None: the sheet gives none) adds the family-controlled tests
    of the slope (:func:`family_control`)."""
    _check_long(long)
    keys = ["corpus", "model"] + (["tokenizer"] if "tokenizer" in long.columns else []) + [
        "measure", "source", "text"]
    repeated = long.group_by(keys + ["language"]).len().filter(pl.col("len") > 1)
    if repeated.height:
        first = repeated.row(0, named=True)
        raise InputError(f"morphology regressions: {first['len']} rows for language "
                         f"{first['language']!r} of " + ", ".join(
                             f"{k}={first[k]!r}" for k in keys))
    has_reason = "reason" in long.columns
    long = long.with_columns(pl.col("value", "bpec").cast(pl.Float64))
    rows = []
    references = _References(settings)
    for key, part in long.sort(keys + ["language"]).group_by(keys, maintain_order=True):
        usable = part.filter(pl.col("value").is_not_null() & pl.col("value").is_not_nan()
                             & pl.col("bpec").is_not_null() & pl.col("bpec").is_not_nan())
        left_out = []
        for r in part.join(usable, on="language", how="anti").iter_rows(named=True):
            value_missing = r["value"] is None or math.isnan(r["value"])
            why = (r["reason"] if has_reason and r["reason"] else
                   "no measure" if value_missing else "no BPEC")
            left_out.append(f"{r['language']} ({why})")
        row = regress(usable["value"].to_list(), usable["bpec"].to_list(), settings,
                      min_languages)
        if left_out:
            row["note"] = _join(row["note"], "left out: " + ", ".join(left_out))
        control, said = family_control(usable["value"].to_list(), usable["bpec"].to_list(),
                                       usable["language"].to_list(), language_families,
                                       row["permutation_p"], settings, references)
        row.update(control)
        row["note"] = _join(row["note"], said)
        named = dict(zip(keys, key))
        rows.append(named | row | {"test_family": question_of("morphology", named).id})
    schema = ({k: pl.String for k in keys} | {"n_languages": pl.Int64}
              | {k: pl.Float64 for k in _STATS} | {"permutations": pl.Int64,
                                                   "test_family": pl.String,
                                                   "note": pl.String}
              | _FAMILY_SCHEMA)
    table = with_adjusted_p(pl.DataFrame(rows, schema=schema, orient="row"),
                            columns=("permutation_p", "spearman_p"), by=["test_family"])
    order = [c for c in REGRESSION_COLUMNS if c in table.columns]
    return table.select(order[:2] + [k for k in keys if k not in order] + order[2:]
                        if "tokenizer" in keys else order)


def with_adjusted_p(table: pl.DataFrame, columns=("pearson_p", "spearman_p"),
                    by: list[str] | None = None) -> pl.DataFrame:
    """``table`` with a Benjamini-Hochberg adjusted column ``<column>_bh`` beside each p-value
    column, adjusting over every row of a family: the rows sharing the ``by`` columns (the whole
    table when None). Empty p-values stay empty and do not count."""
    if not table.height:
        return table.with_columns(*[pl.lit(None, pl.Float64).alias(f"{c}_bh") for c in columns])
    out = table.with_row_index("_row")
    families = [out] if not by else [p for _, p in out.group_by(by, maintain_order=True)]
    adjusted = []
    for part in families:
        adjusted.append(part.select("_row", *[
            pl.Series(f"{c}_bh", benjamini_hochberg(part[c].to_list()), dtype=pl.Float64)
            for c in columns]))
    extra = pl.concat(adjusted).sort("_row")
    return out.join(extra, on="_row", how="left").sort("_row").drop("_row")


#: Columns of :func:`predictor_correlations` beyond the response keys, with their units.
PREDICTOR_COLUMNS = {
    "response": "what is explained (e.g. difficulty, bpec)",
    "predictor": "what explains it (e.g. mcc, train_word_types)",
    "n_languages": "languages with both values (count)",
    "pearson_r": "Pearson correlation (-1 to 1; no p-value: its t test rejected a true null "
                 "6.4% of the time at a nominal 5% with 8 languages, skewed and heavy-tailed "
                 "data, bench/bench_morphology_tests.py)",
    "spearman_rho": "Spearman rank correlation (-1 to 1)",
    "spearman_rho_low": f"lower end of the {RHO_LEVEL:.0%} interval of Spearman's rho (Fisher's "
                        f"z with Bonett & Wright's variance (1 + rho^2/2)/(n - 3); languages "
                        f"taken as independent; empty under 4 languages or at |rho| = 1)",
    "spearman_rho_high": f"upper end of the {RHO_LEVEL:.0%} interval of Spearman's rho",
    "spearman_p": f"two-sided p-value of Spearman's rho (exact up to {EXACT_DP_MAX_PAIRS} "
                  f"languages)",
    "spearman_p_bh": "spearman_p adjusted by Benjamini-Hochberg over every test of the row's "
                     "question (test_family)",
    **FAMILY_COLUMNS_RANK,
    "test_family": "multiple-testing family: the id of the question the row's test answers "
                   "(fairppl.morphology.questions; here difficulty-predictors, every corpus, "
                   "model, response and predictor), over whose tests spearman_p is adjusted "
                   "(not a language family)",
    "note": "why the family-controlled columns are empty or one of them is (empty when "
            "nothing needs saying)",
}


def predictor_correlations(responses: pl.DataFrame, predictors: pl.DataFrame,
                           language_families: dict[str, str] | None = None,
                           settings: PermutationSettings = PermutationSettings()
                           ) -> pl.DataFrame:
    """Pearson's r and Spearman's rho with its p-value (exact up to ``EXACT_DP_MAX_PAIRS``
    languages), across languages, of every response with every predictor (Mielke et al. 2019's
    test of MCC against simple corpus statistics). Pearson's r has no p-value here: its t test
    over-rejects at these sizes with skewed data (bench/bench_morphology_tests.py).

    ``responses``: corpus, language, response, value, and key columns among model, tokenizer
    and family (a model family: character, subword, pretrained); ``predictors``: corpus,
    language, predictor, value. One row per response key, response and predictor, on the
    languages that have both values (fewer than 3, or a constant column: empty statistics).
    The Benjamini-Hochberg adjustment runs over every row of a question
    (:func:`fairppl.morphology.questions.question_of`, ``test_family``): every corpus, model,
    response and predictor of the table answer one question, as Mielke et al.'s tests did.

    ``language_families`` (language id -> language family, from the sheet; None: the sheet
    gives none) adds the family-controlled tests (:func:`family_control`, ``settings`` for
    their permutations) of the slope of the ranks (average ranks for ties over the row's
    languages), whose plain permutation test is the permutation test of Spearman's rho; they
    are compared with ``spearman_p``."""
    for name, frame, need in (("responses", responses, ["corpus", "language", "response",
                                                        "value"]),
                              ("predictors", predictors, ["corpus", "language", "predictor",
                                                          "value"])):
        missing = [c for c in need if c not in frame.columns]
        if missing:
            raise InputError(f"predictor correlations: {name} lack columns {missing}; they have "
                             f"{frame.columns}")
    keys = ["corpus"] + [k for k in ("family", "model", "tokenizer") if k in responses.columns]
    joined = (responses.select(*keys, "language", "response", y=pl.col("value").cast(pl.Float64))
              .join(predictors.select("corpus", "language", "predictor",
                                      x=pl.col("value").cast(pl.Float64)),
                    on=["corpus", "language"], how="inner")
              .filter(pl.col("x").is_not_null() & pl.col("x").is_not_nan()
                      & pl.col("y").is_not_null() & pl.col("y").is_not_nan()))
    rows = []
    group = keys + ["response", "predictor"]
    references = _References(settings)
    for key, part in joined.sort(group + ["language"]).group_by(group, maintain_order=True):
        x, y = part["x"].to_list(), part["y"].to_list()
        row = dict(zip(group, key)) | {"n_languages": len(x), "pearson_r": None,
                                       "spearman_rho": None, "spearman_rho_low": None,
                                       "spearman_rho_high": None, "spearman_p": None}
        if len(x) >= MIN_LANGUAGES and len(set(x)) > 1 and len(set(y)) > 1:
            result = pearsonr(x, y)
            rho, p, _ = spearman(x, y, exact_max=EXACT_DP_MAX_PAIRS)
            low, high = spearman_interval(rho, len(x), RHO_LEVEL) or (None, None)
            row.update(pearson_r=float(result.statistic), spearman_rho=rho,
                       spearman_rho_low=low, spearman_rho_high=high, spearman_p=p)
        control, note = family_control(rankdata(x), rankdata(y), part["language"].to_list(),
                                       language_families, row["spearman_p"], settings,
                                       references)
        question = question_of("difficulty_predictors", dict(zip(group, key))).id
        rows.append(row | control | {"test_family": question, "note": note})
    schema = ({k: pl.String for k in group} | {"n_languages": pl.Int64}
              | {c: pl.Float64 for c in ["pearson_r", "spearman_rho", "spearman_rho_low",
                                          "spearman_rho_high", "spearman_p"]}
              | _FAMILY_SCHEMA | {"test_family": pl.String, "note": pl.String})
    table = pl.DataFrame(rows, schema=schema, orient="row")
    table = with_adjusted_p(table, columns=("spearman_p",), by=["test_family"])
    return table.select(*group, *[c for c in PREDICTOR_COLUMNS if c in table.columns
                                 and c not in group])
