"""Per-unit scores to per-language metrics: bits per utterance, BPEC, bits per char and per byte.

Every rate is a ratio of sums (total bits over total units/characters/bytes), never a mean of
per-unit ratios. Bits are base-2 code lengths; the English character count that defines BPEC is
taken on the same aligned units as the language's own score.
"""

from __future__ import annotations

import math

import polars as pl

from ..corpus.align import common_set_languages, majority_counts  # noqa: F401 (re-exported)

LN2 = math.log(2.0)
LOG2_10 = math.log2(10.0)

#: Columns of a per-unit score table (one row per scored unit). ``bits`` is the unit's code
#: length under the model (every token and the end of the unit); for closed-vocabulary models it
#: is the naive score with p(<unk>) as is, and ``oov_types`` lists the unit's distinct OOV word
#: types (null for open-vocabulary models): the UNK correction is computed over the units summed.
SCORE_COLUMNS = {
    "corpus": pl.String, "language": pl.String, "model": pl.String, "tokenizer": pl.String,
    "vocab_size": pl.Int64, "open_vocabulary": pl.Boolean,
    "split": pl.String, "unit_id": pl.String, "n_chars": pl.Int64, "n_bytes": pl.Int64,
    "n_tokens": pl.Int64, "n_unseen": pl.Int64, "n_oov": pl.Int64, "bits": pl.Float64,
    "oov_types": pl.List(pl.String),
}

#: Optional key columns of newer score tables, kept in the aggregates when present.
OPTIONAL_KEYS = ["train_corpus"]

#: Optional per-unit value columns: ``bits_eos`` is the bits of the charged end-of-unit token
#: (the n-grams' ``</s>``, the token LMs' end token; already inside ``bits``). Where a table
#: lacks it, the aggregates without the end charge are null.
OPTIONAL_VALUES = ["bits_eos"]

#: Columns of the bits-per-utterance table, with their units.
BPU_COLUMNS = {
    "corpus": "corpus id",
    "language": "language id",
    "model": "model id",
    "tokenizer": "tokenizer id",
    "vocab_size": "tokenizer/model vocabulary (types)",
    "open_vocabulary": "every character charged (true) or OOV words merged into <unk> (false)",
    "split": "scored split",
    "n_units": "aligned units scored (count)",
    "n_chars": "characters of the language's text (count)",
    "n_bytes": "UTF-8 bytes of the language's text (count)",
    "n_english_chars": "characters of the English text of the same units (count)",
    "n_tokens": "tokens scored, end-of-unit included (count)",
    "n_unseen": "tokens unseen in training, charged p(<unk>) plus a spell-out (count)",
    "bits_total": "total code length (bits)",
    "bits_per_utterance": "bits per unit (bits/utterance)",
    "bpec": "bits per English character (bits/char of English)",
    "bits_per_char": "bits per character of the language itself (bits/char)",
    "bits_per_byte": "bits per UTF-8 byte of the language itself (bits/byte)",
    "bits_eos_total": "bits of the end-of-unit token, summed over the units (bits); empty where "
                      "the score table does not record it (n-gram models)",
    "eos_share": "bits_eos_total / bits_total (fraction)",
    "bits_per_utterance_no_eos": "bits per unit without the end-of-unit token (bits/utterance)",
    "bpec_no_eos": "BPEC without the end-of-unit token (bits/char of English)",
    "n_oov_types": "closed vocabulary: distinct OOV word types of the units summed (count)",
    "bits_unk_corrected": "closed vocabulary: total bits with every p(<unk>) / n_oov_types",
    "ppl_naive": "closed vocabulary: per-token perplexity with p(<unk>) as is",
    "ppl_unk_corrected": "closed vocabulary: per-token perplexity, p(<unk>) / #OOV types",
    "oov_rate": "closed vocabulary: <unk> tokens / words (fraction)",
}

#: Optional columns of the aggregated tables (added when known), with their units.
EXTRA_COLUMNS = {
    "train_corpus": "corpus whose train split trained the model (empty: pretrained LM)",
    "unit_set": "the units this row is computed on",
    "common_set_languages": "languages of the corpus and split in the common unit set (count), "
                            "and those left out by common_min_share with their majority units "
                            "(count)",
}

#: Columns of the common-set languages table (:func:`common_unit_set`), with their units.
COMMON_SET_COLUMNS = {
    "corpus": "corpus id",
    "split": "scored split",
    "language": "language id",
    "n_units": "units the language scored, any model (count)",
    "n_majority_units": "of those, units that at least half the languages scored (count)",
    "min_units": "common_min_share x the largest n_majority_units of the corpus and split "
                 "(count)",
    "in_common_set": "the language's units enter the common unit set (true/false)",
}


def nats_to_bits(nats: float) -> float:
    """Convert a natural-log quantity (nats) to bits."""
    return nats / LN2


def log10_to_bits(log10_prob: float) -> float:
    """Code length in bits of an event with base-10 log-probability ``log10_prob`` (<= 0)."""
    return -log10_prob * LOG2_10


def score_frame(*, corpus: str, language: str, model: str, tokenizer: str, vocab_size: int | None,
                open_vocabulary: bool, split: str, unit_ids: list[str],
                n_tokens: list[int], bits: list[float], texts: list[str] | None = None,
                n_chars: list[int] | None = None, n_bytes: list[int] | None = None,
                n_unseen: list[int] | None = None, n_oov: list[int] | None = None,
                oov_types: list[list[str]] | None = None,
                extra: dict | None = None) -> pl.DataFrame:
    """A per-unit score table with the canonical columns (``SCORE_COLUMNS``), constants broadcast
    and absent counts set to 0 (``oov_types`` to null); ``n_chars`` and ``n_bytes``
    are counted from ``texts`` when given; ``extra`` adds columns (e.g. per-token ids and nats)
    after the canonical ones."""
    n = len(unit_ids)
    if texts is not None:
        n_chars = [len(t) for t in texts]
        n_bytes = [len(t.encode("utf-8")) for t in texts]
    if not (len(n_chars) == len(n_bytes) == len(n_tokens) == len(bits) == n):
        raise ValueError("score_frame: per-unit lists of different lengths")
    data = {
        "corpus": [corpus] * n, "language": [language] * n, "model": [model] * n,
        "tokenizer": [tokenizer] * n, "vocab_size": [vocab_size] * n,
        "open_vocabulary": [open_vocabulary] * n, "split": [split] * n, "unit_id": unit_ids,
        "n_chars": n_chars, "n_bytes": n_bytes, "n_tokens": n_tokens,
        "n_unseen": n_unseen if n_unseen is not None else [0] * n,
        "n_oov": n_oov if n_oov is not None else [0] * n,
        "bits": bits,
        "oov_types": oov_types if oov_types is not None else [None] * n,
    }
    frame = pl.DataFrame(data, schema=SCORE_COLUMNS)
    if extra:
        frame = frame.with_columns(**{k: pl.Series(k, v) for k, v in extra.items()})
    return frame


def bits_per_utterance(scores: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """Aggregate per-unit ``scores`` into one row per (corpus, language, model, tokenizer, split).

    ``units`` is the prepared corpus table (corpus, unit_id, language, split, text,
    english_reference) of the corpora in ``scores``; BPEC divides by the characters of the
    English reference text of the same units (see :func:`english_char_counts`).

    The end-of-unit columns (``bits_eos_total``, ``eos_share``, ``bits_per_utterance_no_eos``,
    ``bpec_no_eos``) come from the optional per-unit ``bits_eos``; they are null where it is
    absent or null for any unit of the row.

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
    keys = ["corpus", "language", "model", "tokenizer", "vocab_size", "open_vocabulary", "split"]
    # Which corpus trained the model (absent in older tables, null for pretrained LMs).
    keys += [c for c in OPTIONAL_KEYS if c in scores.columns]
    if "bits_eos" not in joined.columns:
        joined = joined.with_columns(bits_eos=pl.lit(None, dtype=pl.Float64))
    closed = ~pl.col("open_vocabulary")
    is_open = pl.col("open_vocabulary")
    out = (
        joined.group_by(keys, maintain_order=True)
        .agg(
            pl.len().alias("n_units"),
            pl.col("n_chars").sum(),
            pl.col("n_bytes").sum(),
            pl.col("n_english_chars").sum(),
            pl.col("n_tokens").sum(),
            pl.col("n_unseen").sum(),
            pl.col("n_oov").sum(),
            pl.col("bits").sum().alias("bits_total"),
            pl.col("bits_eos").sum().alias("bits_eos_total"),
            pl.col("bits_eos").null_count().alias("_eos_missing"),
            # K of the UNK correction: distinct OOV types of exactly the units summed here.
            pl.when(closed.all())
            .then(pl.col("oov_types").explode().drop_nulls().n_unique().cast(pl.Int64))
            .alias("n_oov_types"),
        )
        .with_columns(
            # The UNK correction (fairppl.ngram.word.unk_corrected_bits): log2(K) bits per UNK token.
            pl.when(closed & (pl.col("n_oov") > 0))
            .then(pl.col("bits_total") + pl.col("n_oov") * pl.col("n_oov_types").log(2))
            .when(closed).then(pl.col("bits_total"))
            .alias("bits_unk_corrected"),
            # One unit without its end-of-unit cost makes the total unknown, not smaller.
            pl.when(pl.col("_eos_missing") == 0).then(pl.col("bits_eos_total")),
        )
        .with_columns(
            (pl.col("bits_eos_total") / pl.col("bits_total")).alias("eos_share"),
            ((pl.col("bits_total") - pl.col("bits_eos_total")) / pl.col("n_units"))
            .alias("bits_per_utterance_no_eos"),
            pl.when(is_open)
            .then((pl.col("bits_total") - pl.col("bits_eos_total")) / pl.col("n_english_chars"))
            .alias("bpec_no_eos"),
        )
        .with_columns(
            (pl.col("bits_total") / pl.col("n_units")).alias("bits_per_utterance"),
            # Open-vocabulary rates only: a closed vocabulary's bits do not spell out OOV words.
            pl.when(is_open).then(pl.col("bits_total") / pl.col("n_english_chars")).alias("bpec"),
            pl.when(is_open).then(pl.col("bits_total") / pl.col("n_chars")).alias("bits_per_char"),
            pl.when(is_open).then(pl.col("bits_total") / pl.col("n_bytes")).alias("bits_per_byte"),
            pl.when(closed).then(2 ** (pl.col("bits_total") / pl.col("n_tokens")))
            .alias("ppl_naive"),
            pl.when(closed).then(2 ** (pl.col("bits_unk_corrected") / pl.col("n_tokens")))
            .alias("ppl_unk_corrected"),
            # Words = tokens minus one end-of-unit symbol per unit.
            pl.when(closed).then(pl.col("n_oov") / (pl.col("n_tokens") - pl.col("n_units")))
            .alias("oov_rate"),
        )
        .sort(keys)
    )
    untyped = out.filter(closed & (pl.col("n_oov") > 0) & (pl.col("n_oov_types") < 1))
    if untyped.height:
        first = untyped.row(0, named=True)
        raise ValueError(
            f"{first['corpus']}/{first['language']} {first['model']} {first['tokenizer']}: "
            f"{first['n_oov']} <unk> tokens but no OOV types in the score table's oov_types "
            f"column: cannot apply the UNK correction")
    return out.select(list(BPU_COLUMNS) + [c for c in OPTIONAL_KEYS if c in out.columns])


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


def common_unit_set(scores: pl.DataFrame, min_share: dict[str, float] | None = None
                    ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`on_common_units` and which languages entered each common set: ``(scores on the
    common units, one row per (corpus, split, language) with the columns of
    COMMON_SET_COLUMNS)``. ``min_share`` maps a corpus to its ``common_min_share`` (absent: 0):
    a language with fewer majority units than that share of the largest count of its corpus
    and split (:func:`common_set_languages`) is left out of the common set, so its units and
    rows are not in the returned scores. ValueError naming the corpus and the key when a
    (corpus, split) keeps no common unit."""
    min_share = min_share or {}
    keys = ["corpus", "split"]
    rows, kept = [], []
    for (corpus, split), part in scores.group_by(keys, maintain_order=True):
        unit_sets = {lang: set(g["unit_id"].to_list())
                     for (lang,), g in part.group_by("language", maintain_order=True)}
        share = float(min_share.get(corpus) or 0)
        chosen, counts, threshold = common_set_languages(unit_sets, share)
        for lang in sorted(unit_sets):
            rows.append((corpus, split, lang, len(unit_sets[lang]), counts[lang],
                         threshold, lang in chosen))
        kept.extend((corpus, split, lang) for lang in chosen)
    languages = pl.DataFrame(rows, schema={
        "corpus": pl.String, "split": pl.String, "language": pl.String, "n_units": pl.Int64,
        "n_majority_units": pl.Int64, "min_units": pl.Float64, "in_common_set": pl.Boolean},
        orient="row")
    chosen_rows = pl.DataFrame(kept, schema={"corpus": pl.String, "split": pl.String,
                                             "language": pl.String}, orient="row")
    common = _common(scores.join(chosen_rows, on=["corpus", "split", "language"], how="semi"))
    have = set(common.select(keys).unique().rows())
    for (corpus, split), part in languages.group_by(keys, maintain_order=True):
        if (corpus, split) in have:
            continue
        fewest = part.sort("n_units", "language").head(5)
        raise ValueError(
            f"corpus {corpus!r}, split {split}: the {int(part['in_common_set'].sum())} "
            f"languages of its common unit set have no unit in common (fewest units: "
            f"{', '.join(f'{r[0]} {r[1]}' for r in fewest.select('language', 'n_units').rows())}"
            f"; most: {part['n_units'].max()}): the per-language comparisons would be empty; "
            f"expected languages that share units (units: shared), or "
            f"`corpora.{corpus}.common_min_share` (now {float(min_share.get(corpus) or 0):g}) "
            f"high enough to leave the languages with few units out of the common set")
    return common, languages


def on_common_units(scores: pl.DataFrame, min_share: dict[str, float] | None = None
                    ) -> pl.DataFrame:
    """Restrict per-unit ``scores`` to the units that every (language, model, tokenizer) of the
    same (corpus, split) scored, so that languages and models are compared on identical text:
    one common unit set per corpus and split. ``min_share`` (corpus -> ``common_min_share``)
    leaves the languages with few units out of that set first (:func:`common_unit_set`)."""
    return common_unit_set(scores, min_share)[0]


def describe_common_set(languages: pl.DataFrame) -> pl.DataFrame:
    """Per (corpus, split) of a common-set languages table (:func:`common_unit_set`), the column
    ``common_set_languages``: '46 languages', or '40 of 46 languages; left out by
    common_min_share (fewer than 993.8 majority units): cha 801, gla 110'."""
    out = []
    for (corpus, split), part in languages.group_by("corpus", "split", maintain_order=True):
        n_in, n = int(part["in_common_set"].sum()), part.height
        left = part.filter(~pl.col("in_common_set")).sort("language")
        text = f"{n} languages" if n_in == n else (
            f"{n_in} of {n} languages; left out by common_min_share (fewer than "
            f"{left['min_units'][0]:g} majority units): " + ", ".join(
                f"{lang} {k}" for lang, k in left.select("language", "n_majority_units").rows()))
        out.append((corpus, split, text))
    return pl.DataFrame(out, schema={"corpus": pl.String, "split": pl.String,
                                     "common_set_languages": pl.String}, orient="row")


def _common(scores: pl.DataFrame) -> pl.DataFrame:
    """The units of ``scores`` that every run of the same (corpus, split) scored."""
    keys = ["corpus", "split"]
    runs = pl.struct("language", "model", "tokenizer",
                     *[c for c in OPTIONAL_KEYS if c in scores.columns])
    n_models = scores.group_by(keys).agg(runs.n_unique().alias("n_models"))
    per_unit = scores.group_by(keys + ["unit_id"]).agg(runs.n_unique().alias("n_scored"))
    common = per_unit.join(n_models, on=keys).filter(pl.col("n_scored") == pl.col("n_models"))
    return scores.join(common.select(keys + ["unit_id"]), on=keys + ["unit_id"], how="semi")


def model_order(labels) -> list[str]:
    """Model labels ('model / tokenizer') in report order: character n-grams first (the
    reference of the rankings and of the model-vs-model differences), then the others by name."""
    return sorted(set(labels), key=lambda s: (not s.startswith("kenlm-char"), s))


def describe_units(n: int, split: str) -> str:
    """'200 test units', or '31 units (all splits)' for a corpus scored whole."""
    return f"{n} units (all splits)" if split == "all" else f"{n} {split} units"


def with_unit_set(table: pl.DataFrame, common: bool) -> pl.DataFrame:
    """Add ``unit_set``: which units a row of a bits-per-utterance table is on, in words."""
    units = pl.struct("n_units", "split").map_elements(
        lambda r: describe_units(r["n_units"], r["split"]), return_dtype=pl.String)
    if common:
        label = pl.format("common to every language and model of {} ({})", pl.col("corpus"),
                          units)
    else:
        label = pl.format("every unit this model scored ({})", units)
    return table.with_columns(unit_set=label)


def with_common_set(table: pl.DataFrame, languages: pl.DataFrame) -> pl.DataFrame:
    """A common-units table (:func:`with_unit_set` with ``common=True``) with the column
    ``common_set_languages`` (:func:`describe_common_set`) and, where common_min_share left
    languages out, a ``unit_set`` that says so ('common to every language and model of c but
    the 2 left out by common_min_share (10 test units)')."""
    left = (languages.group_by("corpus", "split")
            .agg((~pl.col("in_common_set")).sum().cast(pl.Int64).alias("_left")))
    out = (table.join(describe_common_set(languages), on=["corpus", "split"], how="left")
           .join(left, on=["corpus", "split"], how="left"))
    if "unit_set" in out.columns:
        out = out.with_columns(unit_set=pl.when(pl.col("_left") > 0).then(
            pl.col("unit_set").str.replace(
                " (", pl.format(" but the {} left out by common_min_share (", pl.col("_left")),
                literal=True)).otherwise(pl.col("unit_set")))
    return out.drop("_left")
