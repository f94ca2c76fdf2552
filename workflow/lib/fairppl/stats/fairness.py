"""How unequal a model is across languages, and how much of a language's cost is its tokenizer.

Fairness summary, per (corpus, split, model, tokenizer) over the languages it scored, on the units
common to all of them (so every language's BPEC divides by the same English characters):

- the **hardest/easiest ratio**: BPEC of the hardest language over that of the easiest (a
  language pair named by the point estimate; its interval is the paired interval of that pair's
  ratio, because the maximum over noisy languages divided by their minimum is biased upwards
  and its percentile interval may even miss the estimate when languages are close);
- the **Gini coefficient** of the languages' BPECs, sum_i sum_j |x_i - x_j| / (2 n^2 mean(x))
  (0 when every language costs the same, (n - 1)/n when one language carries all the bits).

Intervals are percentile intervals of the paired bootstrap of :mod:`fairppl.stats.bootstrap`:
each replicate draws the common units with replacement (the same draws for every language),
recomputes every language's BPEC as a ratio of sums, then the statistic.

Tokenizer premium (Petrov et al. 2023): for each tokenizer and language, the language's tokens
over the reference language's (English's) tokens on the same units, that is tokens per English
character relative to English. With one tokenizer per language (this study's SentencePiece
models, trained on each language's own text) the premium mixes the tokenizer with the writing
system and the translation: it compares what each language pays with a tokenizer of the same
kind and size, not one tokenizer across languages, as Petrov et al.'s shared tokenizers do.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .bootstrap import (
    BootstrapSettings,
    percentile_interval,
    ratio_interval,
    replicate_ratios,
    resample_counts,
)
from .metrics import OPTIONAL_KEYS


def gini(values) -> float:
    """Gini coefficient of non-negative ``values`` (not all 0): sum_i (2i - n - 1) x_(i) /
    (n sum x) over the sorted values, i = 1..n, which equals the mean absolute difference of
    all ordered pairs over twice the mean."""
    return float(gini_rows(np.asarray(values, dtype=float)[None, :])[0])


def gini_rows(matrix: np.ndarray) -> np.ndarray:
    """:func:`gini` of every row of a (B x n) matrix."""
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2 or matrix.shape[1] < 1:
        raise ValueError("gini: need at least one value per row")
    if (matrix < 0).any() or not np.isfinite(matrix).all():
        raise ValueError("gini: values must be finite and non-negative")
    totals = matrix.sum(axis=1)
    if (totals <= 0).any():
        raise ValueError("gini: the values sum to 0")
    n = matrix.shape[1]
    weights = 2 * np.arange(1, n + 1) - n - 1
    return (np.sort(matrix, axis=1) @ weights) / (n * totals)


#: Columns of the fairness summary, with their units.
FAIRNESS_COLUMNS = {
    "corpus": "corpus id", "split": "scored split", "model": "model id",
    "tokenizer": "tokenizer id",
    "n_languages": "languages compared (count)",
    "n_units": "units common to every language of the model (count)",
    "hardest": "language with the highest BPEC", "easiest": "language with the lowest BPEC",
    "bpec_hardest": "BPEC of the hardest language (bits/char of English)",
    "bpec_easiest": "BPEC of the easiest language (bits/char of English)",
    "ratio": "bpec_hardest / bpec_easiest (ratio)",
    "ratio_low": "ratio, lower end of the paired interval",
    "ratio_high": "ratio, upper end of the paired interval",
    "gini": "Gini coefficient of the languages' BPEC (0 = equal)",
    "gini_low": "Gini coefficient, lower end of the interval",
    "gini_high": "Gini coefficient, upper end of the interval",
    "ci_level": "central coverage of the intervals (fraction)",
    "ci_replicates": "bootstrap replicates B (count)", "ci_seed": "seed of the bootstrap draws",
}


def _refuse_repeats(part: pl.DataFrame, what: str) -> None:
    """ValueError when a (language, unit_id) appears twice in ``part``: "<what> unit U n times
    in L"."""
    repeated = part.group_by("language", "unit_id").len().filter(pl.col("len") > 1)
    if repeated.height:
        r = repeated.row(0, named=True)
        raise ValueError(f"{what} unit {r['unit_id']!r} {r['len']} times in {r['language']!r}")


def fairness_summary(scores: pl.DataFrame, english: pl.DataFrame,
                     settings: BootstrapSettings = BootstrapSettings()) -> pl.DataFrame:
    """One row (:data:`FAIRNESS_COLUMNS`) per (corpus, split, model, tokenizer) of per-unit
    ``scores`` (corpus, split, model, tokenizer, language, unit_id, bits; closed-vocabulary rows
    left out where an ``open_vocabulary`` column says so), on the units every language of that
    model scored. ``english`` has (corpus, unit_id, n_english_chars). Models with fewer than 2
    languages, or no unit common to them, get no row; a unit scored twice in one language
    raises ValueError. Optional keys of the score tables (``train_corpus``) are keys here too,
    added after ``tokenizer``."""
    keys = ["corpus", "split", "model", "tokenizer"] + [
        k for k in OPTIONAL_KEYS if k in scores.columns]
    if "open_vocabulary" in scores.columns:
        scores = scores.filter(pl.col("open_vocabulary"))
    rows = []
    for key, part in scores.group_by(keys, maintain_order=True):
        _refuse_repeats(part, f"fairness: {'/'.join(map(str, key))} scored")
        wide = part.pivot(on="language", index="unit_id", values="bits").drop_nulls()
        languages = sorted(c for c in wide.columns if c != "unit_id")
        if len(languages) < 2 or not wide.height:
            continue
        wide = wide.sort("unit_id").join(english.filter(corpus=key[0]).select(
            "unit_id", "n_english_chars"), on="unit_id", how="left")
        if wide["n_english_chars"].null_count():
            first = wide.filter(pl.col("n_english_chars").is_null())["unit_id"][0]
            raise ValueError(f"fairness: {'/'.join(map(str, key))}: units without English "
                             f"characters, e.g. {first!r}")
        bits = wide.select(languages).to_numpy().astype(float)
        den = wide["n_english_chars"].to_numpy().astype(float)
        point = bits.sum(axis=0) / den.sum()
        counts = resample_counts(len(den), settings.replicates, settings.seed)
        reps = replicate_ratios(counts, bits, np.repeat(den[:, None], len(languages), axis=1))
        hard, easy = int(np.argmax(point)), int(np.argmin(point))
        ratio_low, ratio_high = percentile_interval(reps[:, hard] / reps[:, easy],
                                                    settings.level)
        gini_low, gini_high = percentile_interval(gini_rows(reps), settings.level)
        rows.append(dict(zip(keys, key)) | {
            "n_languages": len(languages), "n_units": len(den),
            "hardest": languages[hard], "easiest": languages[easy],
            "bpec_hardest": float(point[hard]), "bpec_easiest": float(point[easy]),
            "ratio": float(point[hard] / point[easy]), "ratio_low": float(ratio_low),
            "ratio_high": float(ratio_high), "gini": gini(point), "gini_low": float(gini_low),
            "gini_high": float(gini_high), "ci_level": settings.level,
            "ci_replicates": settings.replicates, "ci_seed": settings.seed})
    types = {"n_languages": pl.Int64, "n_units": pl.Int64, "ci_replicates": pl.Int64,
             "ci_seed": pl.Int64}
    strings = keys + ["hardest", "easiest"]
    columns = list(FAIRNESS_COLUMNS)
    columns[4:4] = keys[4:]
    schema = {c: (pl.String if c in strings else types.get(c, pl.Float64)) for c in columns}
    return pl.DataFrame(rows, schema=schema, orient="row")


#: Columns of the tokenizer premium table beyond its keys, with their units.
PREMIUM_COLUMNS = {
    "language": "language id",
    "n_units": "units tokenized in this language and in the reference language (count)",
    "tokens": "tokens of the language on those units (count)",
    "reference_tokens": "tokens of the reference language (English) on the same units (count)",
    "tokens_per_english_char": "tokens / characters of the English text of the same units",
    "premium": "tokens / reference_tokens: tokens per English character relative to English",
    "premium_low": "premium, lower end of the paired interval over units",
    "premium_high": "premium, upper end of the paired interval over units",
}


def tokenizer_premium(tokens: pl.DataFrame, english: pl.DataFrame, reference: str = "eng",
                      settings: BootstrapSettings = BootstrapSettings(),
                      end_tokens: int = 0) -> pl.DataFrame:
    """The premium of every language for every tokenizer in per-unit ``tokens`` (corpus,
    tokenizer, language, unit_id, n_tokens; a ``model`` column, when present, is a key too), on
    the units the language shares with ``reference``: one row per key and language (the keys,
    then :data:`PREMIUM_COLUMNS`; the reference language's premium is 1). ``english`` has
    (corpus, unit_id, n_english_chars). ``end_tokens`` is subtracted from every unit's count
    (1 for the score tables' ``n_tokens``, which count the end-of-unit token). Raises ValueError
    when a key has no reference language rows or a unit is tokenized twice in one language."""
    keys = ["corpus"] + (["model"] if "model" in tokens.columns else []) + ["tokenizer"]
    tokens = tokens.with_columns(n=pl.col("n_tokens") - end_tokens)
    if tokens.filter(pl.col("n") < 0).height:
        raise ValueError(f"tokenizer premium: a unit has fewer than end_tokens={end_tokens} "
                         f"tokens")
    rows = []
    for key, part in tokens.group_by(keys, maintain_order=True):
        _refuse_repeats(part, f"tokenizer premium: {'/'.join(map(str, key))} tokenized")
        ref = part.filter(language=reference).select("unit_id", ref="n")
        if not ref.height:
            raise ValueError(f"tokenizer premium: {'/'.join(map(str, key))} has no rows of the "
                             f"reference language {reference!r}")
        chars = english.filter(corpus=key[0]).select("unit_id", "n_english_chars")
        for (language,), lang in part.sort("unit_id").group_by("language", maintain_order=True):
            paired = (lang.select("unit_id", "n").join(ref, on="unit_id", how="inner")
                      .join(chars, on="unit_id", how="left").sort("unit_id"))
            if not paired.height:
                continue
            num = paired["n"].to_numpy().astype(float)
            den = paired["ref"].to_numpy().astype(float)
            low, high = ratio_interval(num, den, settings)
            n_chars = paired["n_english_chars"]
            rows.append(dict(zip(keys, key)) | {
                "language": language, "n_units": paired.height, "tokens": int(num.sum()),
                "reference_tokens": int(den.sum()),
                "tokens_per_english_char": (float(num.sum() / n_chars.sum())
                                            if not n_chars.null_count() else None),
                "premium": float(num.sum() / den.sum()), "premium_low": low,
                "premium_high": high})
    schema = ({k: pl.String for k in keys} | {"language": pl.String, "n_units": pl.Int64,
                                              "tokens": pl.Int64, "reference_tokens": pl.Int64}
              | {c: pl.Float64 for c in list(PREMIUM_COLUMNS)[4:]})
    return pl.DataFrame(rows, schema=schema, orient="row").sort(keys + ["language"])


def fairness_tables(scores: pl.DataFrame, english: pl.DataFrame, references: dict[str, str],
                    min_share: dict[str, float] | None = None,
                    settings: BootstrapSettings = BootstrapSettings()
                    ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The fairness summary and the tokenizer premium of per-unit ``scores`` of one or more
    corpora (``references``: corpus -> its English reference language): ``(fairness, premium,
    left out)``. The summary takes the languages of each corpus's common unit set
    (:func:`fairppl.stats.metrics.common_unit_set` with ``min_share``, corpus ->
    ``common_min_share``): a corpus keeping each language's own units leaves out the languages
    with few units, as models.csv does; ``left out`` lists them (corpus, split, language). The
    premium is per corpus, against its own English."""
    from .metrics import common_unit_set

    _, languages = common_unit_set(scores.filter(pl.col("open_vocabulary")), min_share)
    chosen = languages.filter(pl.col("in_common_set")).select("corpus", "split", "language")
    left = languages.filter(~pl.col("in_common_set")).select("corpus", "split", "language")
    fairness = fairness_summary(scores.join(chosen, on=["corpus", "split", "language"],
                                            how="semi"), english, settings)
    pieces = scores.filter(pl.col("open_vocabulary") & (pl.col("tokenizer") != "char"))
    columns = ["corpus", "model", "tokenizer", "language", "unit_id", "n_tokens"]
    premium = pl.concat([
        tokenizer_premium(part.select(columns), english, reference=references[corpus],
                          settings=settings, end_tokens=1)
        for (corpus,), part in pieces.group_by(["corpus"], maintain_order=True)]
        or [tokenizer_premium(pieces.select(columns), english, settings=settings,
                              end_tokens=1)])
    return fairness, premium, left
