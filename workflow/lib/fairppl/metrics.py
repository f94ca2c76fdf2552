"""Per-unit scores to per-language metrics: bits per utterance, BPEC, bits per char and per byte.

Every rate is a ratio of sums (total bits over total units/characters/bytes), never a mean of
per-unit ratios. Bits are base-2 code lengths; the English character count that defines BPEC is
taken on the same aligned units as the language's own score.
"""

from __future__ import annotations

import math

import polars as pl

LN2 = math.log(2.0)
LOG2_10 = math.log2(10.0)

#: Columns of a per-unit score table (one row per scored unit).
SCORE_COLUMNS = {
    "corpus": pl.String, "language": pl.String, "model": pl.String, "tokenizer": pl.String,
    "split": pl.String, "unit_id": pl.String, "n_chars": pl.Int64, "n_bytes": pl.Int64,
    "n_tokens": pl.Int64, "n_unseen": pl.Int64, "bits": pl.Float64,
}

#: Columns of the bits-per-utterance table, with their units.
BPU_COLUMNS = {
    "corpus": "corpus id",
    "language": "language id",
    "model": "model id",
    "tokenizer": "tokenizer id",
    "split": "scored split",
    "n_units": "aligned units scored (count)",
    "n_chars": "characters of the language's text (count)",
    "n_bytes": "UTF-8 bytes of the language's text (count)",
    "n_english_chars": "characters of the English text of the same units (count)",
    "n_unseen": "characters unseen in training (count)",
    "bits_total": "total code length (bits)",
    "bits_per_utterance": "bits per unit (bits/utterance)",
    "bpec": "bits per English character (bits/char of English)",
    "bits_per_char": "bits per character of the language itself (bits/char)",
    "bits_per_byte": "bits per UTF-8 byte of the language itself (bits/byte)",
}


def nats_to_bits(nats: float) -> float:
    """Convert a natural-log quantity (nats) to bits."""
    return nats / LN2


def log10_to_bits(log10_prob: float) -> float:
    """Code length in bits of an event with base-10 log-probability ``log10_prob`` (<= 0)."""
    return -log10_prob * LOG2_10


def empty_scores() -> pl.DataFrame:
    """An empty per-unit score table with the canonical schema."""
    return pl.DataFrame(schema=SCORE_COLUMNS)


def bits_per_utterance(scores: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """Aggregate per-unit ``scores`` into one row per (corpus, language, model, tokenizer, split).

    ``units`` is the prepared corpus table (corpus, unit_id, language, split, text,
    english_reference) of the corpora in ``scores``; BPEC divides by the characters of the
    English reference text of the same units (see :func:`english_char_counts`).

    Raises ValueError if a scored unit has no English counterpart (the corpus is misaligned).
    """
    english = english_char_counts(units)
    joined = scores.join(english, on=["corpus", "unit_id"], how="left")
    missing = joined.filter(pl.col("n_english_chars").is_null())
    if missing.height:
        first = missing.row(0, named=True)
        raise ValueError(
            f"{missing.height} scored units have no English reference text, e.g. corpus "
            f"'{first['corpus']}' unit '{first['unit_id']}' ({first['language']}): the corpus "
            f"is not aligned")
    keys = ["corpus", "language", "model", "tokenizer", "split"]
    out = (
        joined.group_by(keys, maintain_order=True)
        .agg(
            pl.len().alias("n_units"),
            pl.col("n_chars").sum(),
            pl.col("n_bytes").sum(),
            pl.col("n_english_chars").sum(),
            pl.col("n_unseen").sum(),
            pl.col("bits").sum().alias("bits_total"),
        )
        .with_columns(
            (pl.col("bits_total") / pl.col("n_units")).alias("bits_per_utterance"),
            (pl.col("bits_total") / pl.col("n_english_chars")).alias("bpec"),
            (pl.col("bits_total") / pl.col("n_chars")).alias("bits_per_char"),
            (pl.col("bits_total") / pl.col("n_bytes")).alias("bits_per_byte"),
        )
        .sort(keys)
    )
    return out.select(list(BPU_COLUMNS))


def english_char_counts(units: pl.DataFrame) -> pl.DataFrame:
    """Characters of the English reference text per (corpus, unit_id).

    ``units`` must carry a boolean ``english_reference`` column marking the reference language's
    rows (exactly one language per corpus)."""
    ref = units.filter(pl.col("english_reference"))
    per_corpus = ref.group_by("corpus").agg(pl.col("language").n_unique().alias("n"))
    bad = per_corpus.filter(pl.col("n") != 1)
    if bad.height or ref.height == 0:
        raise ValueError("expected exactly one English reference language per corpus")
    return ref.select(
        "corpus", "unit_id", pl.col("text").str.len_chars().cast(pl.Int64).alias("n_english_chars"))
