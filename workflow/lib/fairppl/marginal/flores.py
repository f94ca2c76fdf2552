"""Parity beside bits on a FLORES-200 slice, marginal: does a language's token premium cost bits
only because the tokenizer picks one segmentation?

A pretrained LM scores a text under the tokenizer's one canonical segmentation; the text's
probability is the sum over all its segmentations (:mod:`fairppl.marginal`). On a slice of
codes (config ``flores.marginal``), each LM's LM-guided estimate of that marginal
(:func:`fairppl.marginal.units.run_units`, estimator ``lm-guided``, whose record holds the
canonical log-probability too) is run on an evenly spaced sample of sentences, the same
sentences in every code (:func:`fairppl.lm.flores_bits.sample`). Per code (:func:`code_table`):

* the token premium of the LM's tokenizer on those sentences (summed tokens over English's);
* the canonical and the marginal bits per sentence, and the share of the canonical bits the
  marginal saves (``gap``);
* both bits premiums (the code's summed bits over English's on the same sentences), each with
  a paired percentile bootstrap interval over the sentences, and their difference (marginal
  minus canonical) with the same draws for both (:func:`fairppl.stats.bootstrap.
  difference_interval`): an interval that holds 0 says the marginal does not change what the
  language costs the model.
"""

from __future__ import annotations

import math

import polars as pl

from ..core.errors import InputError
from ..corpus.flores import ENGLISH
from ..stats.bootstrap import BootstrapSettings, difference_interval, ratio_interval

LN2 = math.log(2.0)

#: The estimator run: its record holds the canonical segmentation's log-probability beside
#: the marginal's estimate.
ESTIMATOR = "lm-guided"

#: Columns of :func:`sentence_rows`.
SENTENCE_SCHEMA = {"code": pl.Utf8, "model": pl.Utf8, "sentence": pl.Int64,
                   "tokens": pl.Int64, "canonical bits": pl.Float64,
                   "marginal bits": pl.Float64}

#: Columns of :func:`code_table`, in order.
CODE_COLUMNS = (
    "code", "model", "sentences (count)", "tokens per sentence (count)",
    f"tokens relative to {ENGLISH} (ratio)",
    "canonical bits per sentence (bits)", "marginal bits per sentence (bits)",
    "marginal saves (% of canonical bits)",
    f"canonical bits relative to {ENGLISH} (ratio)",
    f"canonical bits relative to {ENGLISH} low (ratio)",
    f"canonical bits relative to {ENGLISH} high (ratio)",
    f"marginal bits relative to {ENGLISH} (ratio)",
    f"marginal bits relative to {ENGLISH} low (ratio)",
    f"marginal bits relative to {ENGLISH} high (ratio)",
    "marginal minus canonical premium (ratio)",
    "marginal minus canonical premium low (ratio)",
    "marginal minus canonical premium high (ratio)")


def unit_id(code: str, sentence: int) -> str:
    """The unit id of sentence ``sentence`` (its position in dev + devtest) of ``code``."""
    return f"{code}/{sentence}"


def sentence_units(sentences: dict[str, list[str]], indices: list[int]) -> pl.DataFrame:
    """``unit_id``, ``text`` of every sampled sentence of every code (:func:`fairppl.lm.
    flores_bits.sample`'s output), codes in the given order, for
    :func:`fairppl.marginal.units.run_units`."""
    rows = []
    for code, lines in sentences.items():
        if len(lines) != len(indices):
            raise InputError(f"{code}: {len(lines)} sentences for {len(indices)} sample "
                             f"positions: expected one sentence per position")
        rows.extend((unit_id(code, j), line) for j, line in zip(indices, lines))
    return pl.DataFrame(rows, schema={"unit_id": pl.Utf8, "text": pl.Utf8}, orient="row")


def sentence_rows(records: pl.DataFrame) -> pl.DataFrame:
    """One row per sentence (:data:`SENTENCE_SCHEMA`) of run_units' table of the
    :data:`ESTIMATOR` runs (columns ``model``, ``unit_id``, ``estimator``, ``logp_default``,
    ``logp``, ``n_tokens``; several models may be stacked): bits are ``-log2`` of the
    probabilities."""
    runs = records.filter(pl.col("estimator") == ESTIMATOR)
    if runs.height == 0:
        raise InputError(f"no {ESTIMATOR} runs among the {records.height} records: expected "
                         f"the flores_marginal rule's table")
    parts = runs["unit_id"].str.splitn("/", 2).struct.rename_fields(["code", "sentence"])
    return pl.DataFrame({
        "code": parts.struct.field("code"), "model": runs["model"],
        "sentence": parts.struct.field("sentence").cast(pl.Int64),
        "tokens": runs["n_tokens"].cast(pl.Int64),
        "canonical bits": -runs["logp_default"] / LN2,
        "marginal bits": -runs["logp"] / LN2}, schema=SENTENCE_SCHEMA)


def code_table(sentences: pl.DataFrame, settings: BootstrapSettings = BootstrapSettings(),
               reference: str = ENGLISH) -> pl.DataFrame:
    """Per (model, code) of :func:`sentence_rows`: the figures of :data:`CODE_COLUMNS`. Each
    premium pairs a sentence with the ``reference`` code's same sentence, over the sentences
    both have (a sentence the model could not take in one code is left out of that code's
    pairs); InputError when the reference is missing."""
    rows = []
    for (model,), part in sentences.group_by(["model"], maintain_order=True):
        ref = part.filter(pl.col("code") == reference)
        if ref.height == 0:
            raise InputError(f"model {model}: no {reference} sentences: expected the English "
                             f"reference beside the other codes")
        for (code,), one in part.group_by(["code"], maintain_order=True):
            both = one.join(ref, on="sentence", suffix=" ref").sort("sentence")
            n = both.height
            if n == 0:
                continue
            canon, marg = both["canonical bits"].to_numpy(), both["marginal bits"].to_numpy()
            canon_ref = both["canonical bits ref"].to_numpy()
            marg_ref = both["marginal bits ref"].to_numpy()
            c_low, c_high = ratio_interval(canon, canon_ref, settings)
            m_low, m_high = ratio_interval(marg, marg_ref, settings)
            diff, d_low, d_high = difference_interval(marg, marg_ref, canon, canon_ref, settings)
            c_sum, m_sum = math.fsum(canon), math.fsum(marg)
            rows.append((code, model, n, both["tokens"].sum() / n,
                         both["tokens"].sum() / both["tokens ref"].sum(),
                         c_sum / n, m_sum / n, 100 * (c_sum - m_sum) / c_sum,
                         c_sum / math.fsum(canon_ref), c_low, c_high,
                         m_sum / math.fsum(marg_ref), m_low, m_high, diff, d_low, d_high))
    schema = dict(zip(CODE_COLUMNS, (pl.Utf8, pl.Utf8, pl.Int64) + (pl.Float64,) * 14))
    return pl.DataFrame(rows, schema=schema, orient="row").sort("model", "code")
