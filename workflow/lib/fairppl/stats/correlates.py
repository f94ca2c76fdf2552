"""Correlates of difficulty: properties of each language's text, and their rank correlation with
its BPEC.

Words are whitespace words (fairppl.ngram.word.words), the same rule for every language: a language
written without spaces (Chinese, Japanese) has few, very long "words", hence a huge type
inventory and a high OOV rate. That is a property of the writing system, and the table says so.

Every property of the text is computed on the same units in every language of a corpus: the
train (and, for the OOV rate, test) units common to the languages of the corpus's common unit set
(:func:`common_units`: :func:`fairppl.corpus.align.common_set_languages` with the corpus's
``common_min_share``, as models.csv and the fairness summary choose their languages). Under
``units: shared`` that is every unit. A language the common set leaves out (a partial
translation) gets no text properties, and ``features_missing_reason`` says why.
"""

from __future__ import annotations

import math
from collections import Counter

import polars as pl

from ..core.integrity import verify
from ..corpus.align import common_set_languages
from ..ngram.word import build_vocabulary, words

#: Columns beside the features, not themselves correlated: the size of the text the features
#: are computed on (on a multi-text every language has the same units, so ``train_chars`` is
#: ``chars_per_english_char`` times the English count, one feature rescaled: their rank
#: correlations with anything are the same), and why a language's features are empty.
TRAIN_SIZE = {
    "train_chars": "characters of the common train units (count)",
    "feature_units": ("train units the text properties are computed on: those every language "
                      "of the corpus's common unit set has (count)"),
    "feature_test_units": "test units the OOV rate is computed on, common as the train units "
                          "(count)",
    "ttr_tokens": ("N of the fixed-length type/token ratio: the first N whitespace words of the "
                   "common train units, the same N in every language of the corpus (count)"),
    "features_missing_reason": "why this language's text properties are empty (text)",
}

#: Most words the fixed-length type/token ratio reads: N is this, or the word count of the
#: corpus's language with the fewest words on the common train units where that is smaller
#: (the default Bible: Japanese, about 20,000 whitespace words, so N = 10,000 there). A fixed N
#: keeps the ratio comparable across languages and corpora: the ratio on a whole text falls as
#: the text grows.
TTR_TOKENS = 10_000

#: Numeric properties per language that are correlated with BPEC, with their units.
FEATURES = {
    "train_words": "whitespace words of the common train units (count)",
    "train_word_types": "distinct whitespace words of the common train units (count)",
    "type_token_ratio": "word types / word tokens of the common train units (fraction)",
    "type_token_ratio_fixed": ("word types / word tokens of the first N words, the same N in "
                               "every language (fraction)"),
    "mean_word_length": "characters per whitespace word of the common train units (chars/word)",
    "utf8_bytes_per_char": "UTF-8 bytes per character of the common train units (bytes/char)",
    "chars_per_english_char": ("characters / characters of the English text, common train "
                               "units (ratio)"),
    "oov_rate": "test words outside the most frequent train word types (fraction)",
    "word_unigram_entropy": "entropy of the train words' unigram distribution (bits/word)",
    "unseen_char_rate": "scored characters never seen in the train split (fraction)",
}

#: The vocabulary behind ``oov_rate`` (not a feature): ``vocab_size`` words, or every train type
#: of a language whose train split has fewer, recorded per language so that the changed setting
#: is shown instead of silently mixing "the 5000 most frequent" with "all" across languages.
OOV_VOCABULARY = "oov_vocab_words"
OOV_VOCABULARY_DESCRIPTION = ("words of the OOV rate's vocabulary (report.correlates_vocab_size, "
                              "or every train type where there are fewer) (count)")

#: Prefix of the per-tokenizer features: ``tokens_per_word.<tokenizer id>`` is the tokenizer's
#: pieces per whitespace word on the common train units.
TOKENS_PER_WORD = "tokens_per_word."

#: Prefix of the tokenizer premiums: ``tokenizer_premium.<tokenizer id>`` is the pieces of the
#: language's text (its own model of that tokenizer) over the pieces of the English text (the
#: English model) on the same common train units. results/tables/tokenizer_premium.csv is another
#: measure: per model, on the units each language shares with English in the scored split.
TOKENIZER_PREMIUM = "tokenizer_premium."


def feature_description(name: str) -> str:
    """What a feature column of :func:`language_features` measures, with its unit."""
    if name.startswith(TOKENS_PER_WORD):
        return (f"{name[len(TOKENS_PER_WORD):]} pieces per whitespace word of the common train "
                "units (ratio)")
    if name.startswith(TOKENIZER_PREMIUM):
        tok = name[len(TOKENIZER_PREMIUM):]
        return (f"{tok} pieces / {tok} pieces of the English text, common train units (ratio)")
    return {**TRAIN_SIZE, **FEATURES}[name]


def feature_names(columns) -> list[str]:
    """The feature columns among ``columns``, in table order (the sizes and notes of
    :data:`TRAIN_SIZE` are not features)."""
    return [c for c in FEATURES if c in columns] + sorted(
        c for c in columns if c.startswith(TOKENS_PER_WORD)) + sorted(
        c for c in columns if c.startswith(TOKENIZER_PREMIUM))


#: Columns beside the features (not correlated): which characters the scored units have that
#: the train split lacks, so an outlier's cause can be read (and stated) from the table.
UNSEEN_COLUMNS = {
    "n_unseen_chars": "characters of the scored units never seen in the train split (count)",
    "unseen_chars": ("the most frequent of them: character, code point, occurrences "
                     "(count each)"),
}

#: How many distinct unseen characters ``unseen_chars`` names.
UNSEEN_TOP = 5


def unseen_characters(train_texts, scored_texts) -> Counter:
    """Each character of ``scored_texts`` that occurs nowhere in ``train_texts``, with how often
    it occurs in ``scored_texts``: what a character model trained on the train texts meets as
    unseen (each one charged as ``<unk>`` plus its spelled-out bytes,
    :func:`fairppl.ngram.char.unseen_char_bits`)."""
    seen = set().union(*map(set, train_texts))
    return Counter(ch for text in scored_texts for ch in text if ch not in seen)


def describe_characters(counts: Counter, top: int = UNSEEN_TOP) -> str:
    """The ``top`` most frequent characters of ``counts`` as 'â U+00E2 46, ‐ U+2010 12' (ties
    by code point; "+ k more" when there are more), empty for none."""
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], ord(kv[0])))
    shown = [(ch if ch.isprintable() and not ch.isspace() else "?", ord(ch), n)
             for ch, n in ranked[:top]]
    text = ", ".join(f"{ch} U+{code:04X} {n:,}" for ch, code, n in shown)
    return text + (f" (+ {len(ranked) - top} more)" if len(ranked) > top else "")


def unseen_char_rate(train_texts, scored_texts) -> float | None:
    """The fraction of the characters of ``scored_texts`` that occur nowhere in ``train_texts``
    (:func:`unseen_characters`). None when there is nothing scored."""
    scored_texts = list(scored_texts)
    total = sum(len(text) for text in scored_texts)
    if not total:
        return None
    return sum(unseen_characters(train_texts, scored_texts).values()) / total


def common_units(units: pl.DataFrame, split: str, min_share: float = 0.0
                 ) -> tuple[set[str], dict[str, str]]:
    """The units of ``split`` that every language of the common unit set of ``units`` (one
    corpus) has, and the languages that set leaves out, each with why. The common set's languages
    are those of :func:`fairppl.corpus.align.common_set_languages` with ``min_share`` (the
    corpus's ``common_min_share``: 0 keeps every language), as in models.csv; a language without
    units in ``split`` is neither. ``(set(), {})`` when the split has no units."""
    part = units.filter(pl.col("split") == split)
    ids = {lang: set(g["unit_id"].to_list())
           for (lang,), g in part.group_by("language", maintain_order=True)}
    if not ids:
        return set(), {}
    chosen, counts, threshold = common_set_languages(ids, min_share)
    common = set.intersection(*(ids[lang] for lang in chosen)) if chosen else set()
    left = {lang: (f"left out of the common {split} units by common_min_share {min_share:g} "
                   f"({counts[lang]} majority units, fewer than {threshold:g})")
            for lang in sorted(ids) if lang not in chosen}
    return common, left


def language_features(units: pl.DataFrame, vocab_size: int = 5000,
                      train_split: str = "train", eval_split: str = "test",
                      tokenizers: dict | None = None, train_corpora: dict | None = None,
                      eval_splits: dict | None = None, min_share: dict | None = None,
                      ttr_tokens: int = TTR_TOKENS) -> pl.DataFrame:
    """One row per (corpus, language) of the prepared units table: ``FEATURES`` computed from the
    text, with ``vocab_size`` the fixed vocabulary of the OOV rate (most frequent train types).

    Every feature but the unseen-character rate is computed on the corpus's common units
    (:func:`common_units` of ``train_split``, and of ``eval_split`` for the OOV rate, with
    ``min_share[corpus]``, its ``common_min_share``; absent: 0), counted in ``feature_units`` and
    ``feature_test_units``; a language left out of them has those features null and the reason
    in ``features_missing_reason``. ``type_token_ratio_fixed`` reads the first N words of the
    common train units in unit order (``position`` where the table has it, else row order), N
    (``ttr_tokens`` column) = ``ttr_tokens`` or the fewest words of a language of the corpus's
    common set, whichever is smaller: the same N in every language of a corpus.

    ``unseen_char_rate`` compares the units a corpus's models score (``eval_splits[corpus]``,
    ``all`` for every unit; default ``eval_split``) with the train split of the corpus that
    trained them (``train_corpora[corpus]``, default the corpus itself: the Bible's for the
    evaluation-only UDHR); null when that corpus has no units of the language here. Beside it
    (not features, :data:`UNSEEN_COLUMNS`): ``n_unseen_chars``, how many scored characters are
    unseen, and ``unseen_chars``, the most frequent of them (:func:`describe_characters`).

    ``tokenizers`` maps (corpus, language, tokenizer id) to a SentencePiece model file; each
    tokenizer id adds ``tokens_per_word.<id>`` (pieces per whitespace word) and
    ``tokenizer_premium.<id>`` (pieces per piece of the corpus's English reference with its own
    model of the tokenizer), both on the common train units; null for a language (or, for the
    premium, an English reference) the tokenizer has no model for."""
    if ttr_tokens < 1:
        raise ValueError(f"language_features: ttr_tokens {ttr_tokens}: expected at least 1")
    tokenizers = tokenizers or {}
    train_corpora, eval_splits = train_corpora or {}, eval_splits or {}
    min_share = min_share or {}
    train_texts = {key: part["text"] for key, part in units.filter(split=train_split)
                   .group_by(["corpus", "language"], maintain_order=True)}
    tokenizer_ids = sorted({tok for _, _, tok in tokenizers})
    common = {}
    for (corpus,), part in units.group_by("corpus", maintain_order=True):
        share = float(min_share.get(corpus) or 0)
        common[corpus] = (common_units(part, train_split, share),
                          common_units(part, eval_split, share))
    english = (units.filter(pl.col("english_reference") & (pl.col("split") == train_split))
               .select("corpus", "unit_id", pl.col("text").str.len_chars().alias("eng_chars")))
    references = dict(units.filter(pl.col("english_reference"))
                      .select("corpus", "language").unique().rows())
    rows, firsts, pieces = [], {}, {}
    for (corpus, language), part in units.group_by(["corpus", "language"], maintain_order=True):
        if "position" in part.columns:
            part = part.sort("position", maintain_order=True)
        (train_ids, train_left), (test_ids, test_left) = common[corpus]
        reasons = [why for why in (train_left.get(language), test_left.get(language)) if why]
        row = {"corpus": corpus, "language": language}
        unseen = _unseen(part, corpus, language, train_texts, train_corpora,
                         eval_splits.get(corpus, eval_split))
        row["unseen_char_rate"] = unseen[0] if unseen else None
        row["n_unseen_chars"] = sum(unseen[1].values()) if unseen else None
        row["unseen_chars"] = describe_characters(unseen[1]) if unseen else None
        rows.append(row)
        if language in train_left:
            row["features_missing_reason"] = "; ".join(reasons)
            continue
        train = part.filter((pl.col("split") == train_split)
                            & pl.col("unit_id").is_in(list(train_ids)))
        counts: dict[str, int] = {}
        first: list[str] = []
        n_words = n_word_chars = 0
        for text in train["text"]:
            for word in words(text):
                counts[word] = counts.get(word, 0) + 1
                n_words += 1
                n_word_chars += len(word)
                if len(first) < ttr_tokens:
                    first.append(word)
        firsts[corpus, language] = first
        n_chars = int(train["text"].str.len_chars().sum())
        ratio = (train.select("corpus", "unit_id", pl.col("text").str.len_chars().alias("n"))
                 .join(english, on=["corpus", "unit_id"]))
        entropy = (-sum(c / n_words * math.log2(c / n_words) for c in counts.values())
                   if n_words else None)
        row.update({
            "train_chars": n_chars, "feature_units": train.height, "train_words": n_words,
            "train_word_types": len(counts),
            "type_token_ratio": len(counts) / n_words if n_words else None,
            "mean_word_length": n_word_chars / n_words if n_words else None,
            "utf8_bytes_per_char": (int(train["text"].str.len_bytes().sum()) / n_chars
                                    if n_chars else None),
            "chars_per_english_char": (ratio["n"].sum() / ratio["eng_chars"].sum()
                                       if ratio.height else None),
            "word_unigram_entropy": entropy,
        })
        if language not in test_left:
            vocab = build_vocabulary(train["text"], vocab_size)
            test = part.filter((pl.col("split") == eval_split)
                               & pl.col("unit_id").is_in(list(test_ids)))
            test_words = [w for text in test["text"] for w in words(text)]
            row["oov_rate"] = (sum(w not in vocab for w in test_words) / len(test_words)
                               if test_words else None)
            row[OOV_VOCABULARY] = vocab.actual
            row["feature_test_units"] = test.height
        for tok in tokenizer_ids:
            path = tokenizers.get((corpus, language, tok))
            if path and n_words:
                pieces[corpus, language, tok] = count_pieces(path, train["text"])
                row[TOKENS_PER_WORD + tok] = pieces[corpus, language, tok] / n_words
        if reasons:
            row["features_missing_reason"] = "; ".join(reasons)
    _fixed_ratios(rows, firsts, ttr_tokens)
    for row in rows:
        for tok in tokenizer_ids:
            mine = pieces.get((row["corpus"], row["language"], tok))
            ref = pieces.get((row["corpus"], references.get(row["corpus"]), tok))
            row[TOKENIZER_PREMIUM + tok] = mine / ref if mine is not None and ref else None
    schema = {"corpus": pl.String, "language": pl.String, "train_chars": pl.Int64,
              "feature_units": pl.Int64, "train_words": pl.Int64,
              "train_word_types": pl.Int64, "type_token_ratio": pl.Float64,
              "type_token_ratio_fixed": pl.Float64, "ttr_tokens": pl.Int64,
              "mean_word_length": pl.Float64, "utf8_bytes_per_char": pl.Float64,
              "chars_per_english_char": pl.Float64, "oov_rate": pl.Float64,
              OOV_VOCABULARY: pl.Int64, "feature_test_units": pl.Int64,
              "word_unigram_entropy": pl.Float64, "unseen_char_rate": pl.Float64,
              "n_unseen_chars": pl.Int64, "unseen_chars": pl.String}
    schema.update({TOKENS_PER_WORD + tok: pl.Float64 for tok in tokenizer_ids})
    schema.update({TOKENIZER_PREMIUM + tok: pl.Float64 for tok in tokenizer_ids})
    schema["features_missing_reason"] = pl.String
    return pl.DataFrame([{c: row.get(c) for c in schema} for row in rows], schema=schema)


def _fixed_ratios(rows: list[dict], firsts: dict, ttr_tokens: int) -> None:
    """Set ``type_token_ratio_fixed`` and ``ttr_tokens`` of each row of :func:`language_features`
    in place: N per corpus is ``ttr_tokens`` or the fewest train words of a language of its common
    set with train units (the rows with ``firsts``: their first words), whichever is smaller.
    A row without common train units, with fewer than N words (none, by that choice) or of a
    corpus without words is null, with the reason in ``features_missing_reason``."""
    fewest: dict[str, int] = {}
    for row in rows:
        if (row["corpus"], row["language"]) in firsts and row["feature_units"]:
            fewest[row["corpus"]] = min(fewest.get(row["corpus"], ttr_tokens), row["train_words"])
    for row in rows:
        first = firsts.get((row["corpus"], row["language"]))
        if first is None:
            continue
        n = fewest.get(row["corpus"], 0)
        why = ("no common train units" if not row["feature_units"] else
               "no words in the common train units of the corpus" if not n else
               f"fewer than the corpus's N = {n} words in the common train units"
               if len(first) < n else None)
        if why:
            reason = row.get("features_missing_reason")
            row["features_missing_reason"] = f"{reason}; {why}" if reason else why
            continue
        row["type_token_ratio_fixed"] = len(set(first[:n])) / n
        row["ttr_tokens"] = n


def _unseen(part: pl.DataFrame, corpus: str, language: str, train_texts: dict,
            train_corpora: dict, split: str) -> tuple[float | None, Counter] | None:
    """(unseen-character rate, unseen characters) of the units scored against the train split
    of the corpus that trained the models; None without that train split."""
    train = train_texts.get((train_corpora.get(corpus, corpus), language))
    if train is None:
        return None
    scored = (part if split == "all" else part.filter(split=split))["text"].to_list()
    return unseen_char_rate(train, scored), unseen_characters(train, scored)


def count_pieces(model_file, texts) -> int:
    """SentencePiece pieces of ``texts`` with the model in ``model_file`` (sealed: a model whose
    bytes changed is refused, :func:`fairppl.core.integrity.verify`)."""
    import sentencepiece as spm

    verify(model_file)
    processor = spm.SentencePieceProcessor(model_file=str(model_file))
    return sum(len(ids) for ids in processor.encode(list(texts)))


def pieces_per_word(model_file, texts) -> float:
    """SentencePiece pieces per whitespace word over ``texts`` with the model in ``model_file``
    (the same word rule as the other features)."""
    texts = list(texts)
    return count_pieces(model_file, texts) / sum(len(words(t)) for t in texts)


#: Up to this many pairs the p-value is exact: every pairing of the ranks is enumerated (8! =
#: 40,320). scipy's t approximation is poor there (rho = 1 over 6 languages gives p = 0, where
#: the exact two-sided value is 2/720).
EXACT_MAX_PAIRS = 8


def exact_spearman_p(x, y) -> float:
    """Two-sided p-value of Spearman's rho by enumerating every pairing of ``y``'s ranks with
    ``x``'s (ties keep their average ranks): the share of pairings whose |rho| reaches the
    observed |rho|."""
    from itertools import permutations

    import numpy as np
    from scipy.stats import rankdata

    rx, ry = rankdata(x), rankdata(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    norm = math.sqrt(float(rx @ rx) * float(ry @ ry))
    observed = abs(float(rx @ ry)) / norm
    perms = np.array(list(permutations(ry)))
    rhos = np.abs(perms @ rx) / norm
    return float(np.mean(rhos >= observed - 1e-12))


#: Up to this many pairs :func:`exact_spearman_p_dp` is quick (12 pairs: about 25,000 small
#: array additions; the count of pairings, 12! = 479,001,600, is never enumerated).
EXACT_DP_MAX_PAIRS = 12


def exact_spearman_p_dp(x, y) -> float:
    """The exact two-sided p-value of :func:`exact_spearman_p` (every pairing of the ranks, ties
    at their average ranks) without enumerating the n! pairings: a dynamic program over the
    subsets of ``y``'s ranks already paired with ``x``'s first k ranks counts the pairings by
    their statistic T = sum_i a_i b_pi(i), with a and b twice the centred average ranks (whole
    numbers, so the counts are exact integers). Cost about n 2^(n-1) array additions: 12 pairs
    take a fraction of a second. Raises ValueError above 20 pairs (n! overflows the counts)."""
    import numpy as np
    from scipy.stats import rankdata

    n = len(x)
    if n != len(y) or n < 2:
        raise ValueError(f"exact_spearman_p_dp: need two sequences of equal length >= 2, got "
                         f"{len(x)} and {len(y)}")
    if n > 20:
        raise ValueError(f"exact_spearman_p_dp: {n} pairs: n! overflows the exact counts; use "
                         f"scipy's approximation above {EXACT_DP_MAX_PAIRS} pairs")
    a = [int(round(2 * r)) - (n + 1) for r in rankdata(x)]
    b = [int(round(2 * r)) - (n + 1) for r in rankdata(y)]
    observed = abs(sum(ai * bi for ai, bi in zip(a, b)))
    if not any(a) or not any(b):
        return 1.0  # a constant column: every pairing has T = 0
    offset = sum(abs(v) for v in a) * max(abs(v) for v in b)
    size = 2 * offset + 1
    level = {0: np.zeros(size, dtype=np.int64)}
    level[0][offset] = 1
    for ai in a:  # pair x's rank i with every y rank not yet used
        nxt: dict[int, np.ndarray] = {}
        for mask, counts in level.items():
            for j, bj in enumerate(b):
                if mask >> j & 1:
                    continue
                target = nxt.get(mask | 1 << j)
                if target is None:
                    target = nxt[mask | 1 << j] = np.zeros(size, dtype=np.int64)
                shift = ai * bj
                if shift >= 0:
                    target[shift:] += counts[:size - shift]
                else:
                    target[:shift] += counts[-shift:]
        level = nxt
    (counts,) = level.values()
    totals = np.arange(size) - offset
    return float(counts[np.abs(totals) >= observed].sum() / counts.sum())


def benjamini_hochberg(p_values) -> list[float | None]:
    """Benjamini-Hochberg adjusted p-values (the false discovery rate step-up procedure), in the
    input order: with the m present p-values sorted, p_(k) * m / k, made monotone from the
    largest down and capped at 1. None and NaN stay None and do not count in m. Equal to
    ``scipy.stats.false_discovery_control(p, method='bh')`` on the present values."""
    import numpy as np

    present = [(i, float(p)) for i, p in enumerate(p_values)
               if p is not None and not math.isnan(float(p))]
    out: list[float | None] = [None] * len(p_values)
    if not present:
        return out
    for _, p in present:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"benjamini_hochberg: p-value {p} outside [0, 1]")
    ps = np.array([p for _, p in present])
    m = len(ps)
    order = np.argsort(ps, kind="stable")
    scaled = ps[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    for rank, k in enumerate(order):
        out[present[k][0]] = float(adjusted[rank])
    return out


def spearman(x, y, exact_max: int = EXACT_MAX_PAIRS) -> tuple[float | None, float | None, int]:
    """Spearman's rho (scipy.stats.spearmanr) and its two-sided p-value over the pairs where both
    values are present, and the number of pairs; (None, None, n) with fewer than 3 pairs or a
    constant column. The p-value is exact up to ``exact_max`` pairs (``EXACT_MAX_PAIRS`` by
    default: :func:`exact_spearman_p`; above that, up to ``EXACT_DP_MAX_PAIRS``, by
    :func:`exact_spearman_p_dp`), scipy's t approximation above."""
    pairs = [(a, b) for a, b in zip(x, y) if a is not None and b is not None]
    if len(pairs) < 3 or len({a for a, _ in pairs}) < 2 or len({b for _, b in pairs}) < 2:
        return None, None, len(pairs)
    xs, ys = [a for a, _ in pairs], [b for _, b in pairs]
    # Imported here: scipy.stats takes about 1 s to import, and the many per-language jobs
    # that import this module never call it.
    from scipy.stats import spearmanr

    result = spearmanr(xs, ys)
    rho = float(result.statistic)
    if len(pairs) <= min(exact_max, EXACT_MAX_PAIRS):
        p = exact_spearman_p(xs, ys)
    elif len(pairs) <= exact_max:
        p = exact_spearman_p_dp(xs, ys)
    else:
        p = float(result.pvalue)
    return (None if math.isnan(rho) else rho), (None if math.isnan(p) else p), len(pairs)


def spearman_interval(rho: float | None, n: int, level: float = 0.95
                      ) -> tuple[float, float] | None:
    """The ``level`` interval of Spearman's rho over ``n`` independent pairs: Fisher's z with
    Bonett & Wright's (2000) variance for rank correlations, (1 + rho^2 / 2) / (n - 3),
    transformed back. None with fewer than 4 pairs, no rho, or |rho| = 1 (z is infinite).
    Languages of one family are not independent pairs: the interval ignores families."""
    if rho is None or n < 4 or abs(rho) >= 1:
        return None
    from scipy.stats import norm

    half = norm.ppf(0.5 + level / 2) * math.sqrt((1 + rho * rho / 2) / (n - 3))
    z = math.atanh(rho)
    return math.tanh(z - half), math.tanh(z + half)


def feature_correlations(features: pl.DataFrame, models: pl.DataFrame) -> pl.DataFrame:
    """Spearman's rho (and p) between each feature and the BPEC of each open-vocabulary
    (corpus, model, tokenizer) of ``models`` (the study passes each model on all the units it
    scored, bpu.parquet), across languages."""
    rows = []
    data = models.filter(pl.col("open_vocabulary") & pl.col("bpec").is_not_null())
    for (corpus, model, tok), part in data.group_by(["corpus", "model", "tokenizer"],
                                                    maintain_order=True):
        joined = part.select("corpus", "language", "bpec").join(
            features, on=["corpus", "language"], how="inner")
        for feature in feature_names(features.columns):
            rho, p, n = spearman(joined[feature].to_list(), joined["bpec"].to_list())
            rows.append({"corpus": corpus, "model": model, "tokenizer": tok, "feature": feature,
                         "n_languages": n, "spearman_rho": rho, "p_value": p})
    return pl.DataFrame(rows, schema={"corpus": pl.String, "model": pl.String,
                                      "tokenizer": pl.String, "feature": pl.String,
                                      "n_languages": pl.Int64, "spearman_rho": pl.Float64,
                                      "p_value": pl.Float64})
