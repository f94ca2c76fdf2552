"""Correlates of difficulty: properties of each language's text, and their rank correlation with
its BPEC.

Words are whitespace words (fairppl.ngram.word.words), the same rule for every language: a language
written without spaces (Chinese, Japanese) has few, very long "words", hence a huge type
inventory and a high OOV rate. That is a property of the writing system, and the table says so.
"""

from __future__ import annotations

import math

import polars as pl
from scipy.stats import spearmanr

from ..ngram.word import build_vocabulary, words

#: Numeric properties per language, with their units.
FEATURES = {
    "train_chars": "characters of the train split (count)",
    "train_words": "whitespace words of the train split (count)",
    "train_word_types": "distinct whitespace words of the train split (count)",
    "type_token_ratio": "word types / word tokens of the train split (fraction)",
    "chars_per_english_char": "characters / characters of the English text, train split (ratio)",
    "oov_rate": "test words outside the train split's most frequent word types (fraction)",
    "word_unigram_entropy": "entropy of the train split's word unigram distribution (bits/word)",
}

#: Prefix of the per-tokenizer features: ``tokens_per_word.<tokenizer id>`` is the tokenizer's
#: pieces per whitespace word on the train split.
TOKENS_PER_WORD = "tokens_per_word."


def feature_description(name: str) -> str:
    """What a feature column of :func:`language_features` measures, with its unit."""
    if name.startswith(TOKENS_PER_WORD):
        return (f"{name[len(TOKENS_PER_WORD):]} pieces per whitespace word of the train split "
                "(ratio)")
    return FEATURES[name]


def feature_names(columns) -> list[str]:
    """The feature columns among ``columns``, in table order."""
    return [c for c in FEATURES if c in columns] + sorted(
        c for c in columns if c.startswith(TOKENS_PER_WORD))


def language_features(units: pl.DataFrame, vocab_size: int = 5000,
                      train_split: str = "train", eval_split: str = "test",
                      tokenizers: dict | None = None) -> pl.DataFrame:
    """One row per (corpus, language) of the prepared units table: ``FEATURES`` computed from the
    text, with ``vocab_size`` the fixed vocabulary of the OOV rate (most frequent train types).

    ``tokenizers`` maps (corpus, language, tokenizer id) to a SentencePiece model file; each
    tokenizer id adds a ``tokens_per_word.<id>`` column (its pieces per whitespace word on the
    train split; null for a language it has no model for)."""
    tokenizers = tokenizers or {}
    tokenizer_ids = sorted({tok for _, _, tok in tokenizers})
    english = (units.filter(pl.col("english_reference") & (pl.col("split") == train_split))
               .select("corpus", "unit_id", pl.col("text").str.len_chars().alias("eng_chars")))
    rows = []
    for (corpus, language), part in units.group_by(["corpus", "language"], maintain_order=True):
        train = part.filter(split=train_split)
        test = part.filter(split=eval_split)
        counts: dict[str, int] = {}
        n_words = 0
        for text in train["text"]:
            for word in words(text):
                counts[word] = counts.get(word, 0) + 1
                n_words += 1
        vocab = build_vocabulary(train["text"], vocab_size)
        test_words = [w for text in test["text"] for w in words(text)]
        n_oov = sum(w not in vocab for w in test_words)
        ratio = (train.select("corpus", "unit_id", pl.col("text").str.len_chars().alias("n"))
                 .join(english, on=["corpus", "unit_id"]))
        entropy = (-sum(c / n_words * math.log2(c / n_words) for c in counts.values())
                   if n_words else None)
        row = {
            "corpus": corpus, "language": language,
            "train_chars": int(train["text"].str.len_chars().sum()), "train_words": n_words,
            "train_word_types": len(counts),
            "type_token_ratio": len(counts) / n_words if n_words else None,
            "chars_per_english_char": (ratio["n"].sum() / ratio["eng_chars"].sum()
                                       if ratio.height else None),
            "oov_rate": n_oov / len(test_words) if test_words else None,
            "word_unigram_entropy": entropy,
        }
        for tok in tokenizer_ids:
            path = tokenizers.get((corpus, language, tok))
            row[TOKENS_PER_WORD + tok] = (pieces_per_word(path, train["text"])
                                          if path and n_words else None)
        rows.append(row)
    schema = {"corpus": pl.String, "language": pl.String, "train_chars": pl.Int64,
              "train_words": pl.Int64, "train_word_types": pl.Int64,
              "type_token_ratio": pl.Float64, "chars_per_english_char": pl.Float64,
              "oov_rate": pl.Float64, "word_unigram_entropy": pl.Float64}
    schema.update({TOKENS_PER_WORD + tok: pl.Float64 for tok in tokenizer_ids})
    return pl.DataFrame(rows, schema=schema)


def pieces_per_word(model_file, texts) -> float:
    """SentencePiece pieces per whitespace word over ``texts`` with the model in ``model_file``
    (the same word rule as the other features)."""
    import sentencepiece as spm

    processor = spm.SentencePieceProcessor(model_file=str(model_file))
    texts = list(texts)
    n_pieces = sum(len(ids) for ids in processor.encode(texts))
    n_words = sum(len(words(t)) for t in texts)
    return n_pieces / n_words


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


def spearman(x, y) -> tuple[float | None, float | None, int]:
    """Spearman's rho (scipy.stats.spearmanr) and its two-sided p-value over the pairs where both
    values are present, and the number of pairs; (None, None, n) with fewer than 3 pairs or a
    constant column. The p-value is exact up to ``EXACT_MAX_PAIRS`` pairs
    (:func:`exact_spearman_p`), scipy's t approximation above."""
    pairs = [(a, b) for a, b in zip(x, y) if a is not None and b is not None]
    if len(pairs) < 3 or len({a for a, _ in pairs}) < 2 or len({b for _, b in pairs}) < 2:
        return None, None, len(pairs)
    xs, ys = [a for a, _ in pairs], [b for _, b in pairs]
    result = spearmanr(xs, ys)
    rho = float(result.statistic)
    p = exact_spearman_p(xs, ys) if len(pairs) <= EXACT_MAX_PAIRS else float(result.pvalue)
    return (None if math.isnan(rho) else rho), (None if math.isnan(p) else p), len(pairs)


def feature_correlations(features: pl.DataFrame, models: pl.DataFrame) -> pl.DataFrame:
    """Spearman's rho (and p) between each feature and the BPEC of each open-vocabulary
    (corpus, model, tokenizer) of the common-units table ``models``, across languages."""
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
