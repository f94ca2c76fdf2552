"""A pretrained LM's bits on a sample of every FLORES-200 code's sentences, and each code's bits
relative to English's on the same sentences, with a bootstrap interval over the sentences.

FLORES-200 is multi-parallel: sentence i of every code translates the same English sentence, so
an evenly spaced sample (:func:`fairppl.lm.goldfish.sample_sentences`: the same indices in every
code) compares languages on identical content. One scorer pass per sentence
(:func:`fairppl.lm.second_half.score_second_halves`, the study's canonical scorer with the
model's start token as context and no end token) gives both figures of a sentence:

* ``bits``: all of the sentence's tokens (the whole sentence, stripped as Goldfish strip it);
* ``second_half_bits``: Goldfish's measure, the tokens after the first half's (for the rank
  comparison with their table, :mod:`fairppl.lm.goldfish`).

Per code (:func:`code_table`): the mean bits per sentence, and the **bits premium**, the code's
summed bits over English's on the same sentences (a ratio of totals, as the token premium of
:mod:`fairppl.tokenizers.parity` is), with a percentile bootstrap interval that resamples the
sentences jointly in the code and in English (paired: the study's :func:`fairppl.stats.bootstrap.ratio_interval`). With a handful of sentences per code the
interval is wide and its coverage only approximate; raise ``flores.sentences`` for a real one.
"""

from __future__ import annotations

import math

import polars as pl

from ..corpus.flores import ENGLISH
from ..core.errors import InputError
from ..stats.bootstrap import BootstrapSettings, ratio_interval

#: Columns of :func:`sentence_table`.
SENTENCE_SCHEMA = {"code": pl.Utf8, "model": pl.Utf8, "sentence": pl.Int64, "bits": pl.Float64,
                   "second_half_bits": pl.Float64, "tokens": pl.Int64, "k": pl.Int64,
                   "aligned": pl.Boolean, "truncated": pl.Boolean, "unknown": pl.Int64,
                   "lossless": pl.Boolean}

#: Columns of :func:`code_table`, in order.
CODE_COLUMNS = ("code", "model", "sentences (count)", "bits per sentence (bits)",
                "tokens per sentence (count)", "second-half bits per sentence (bits)",
                f"bits relative to {ENGLISH} (ratio)", f"bits relative to {ENGLISH} low (ratio)",
                f"bits relative to {ENGLISH} high (ratio)")


def sample(files: dict[str, tuple[str, str]], n: int | None
           ) -> tuple[dict[str, list[str]], list[int]]:
    """``({code: its sampled lines, stripped}, their positions in dev + devtest)``: ``n``
    evenly spaced sentences of every code of ``files`` (:func:`fairppl.corpus.flores.read_flores`),
    the same positions in every code (:func:`fairppl.lm.goldfish.sample_sentences`); None: all."""
    from ..corpus.readers import evenly_spaced
    from .goldfish import sample_sentences

    sentences = sample_sentences(files, n)
    n_lines = {len("".join(pair).rstrip("\n").split("\n")) for pair in files.values()}
    if len(n_lines) != 1:
        raise InputError(f"FLORES-200 codes with {sorted(n_lines)} lines: expected the same "
                         f"sentences in every code")
    return sentences, evenly_spaced(n_lines.pop(), n)


def sentence_table(model_id: str, model, tokenizer, sentences: dict[str, list[str]],
                   indices: list[int], *, start_token: str | None = None,
                   batch_size: int = 16, progress: bool = False) -> pl.DataFrame:
    """One row per code and sampled sentence (:data:`SENTENCE_SCHEMA`): ``sentences`` maps a
    code to its sampled lines (stripped), ``indices`` the sample's positions in dev + devtest
    (the same for every code). One scorer call for all codes."""
    from .second_half import score_second_halves

    codes = list(sentences)
    for code in codes:
        if len(sentences[code]) != len(indices):
            raise InputError(f"{code}: {len(sentences[code])} sentences for {len(indices)} "
                             f"sample positions: expected one sentence per position")
    flat = [line for code in codes for line in sentences[code]]
    halves = score_second_halves(model, tokenizer, flat, start_token=start_token,
                                 batch_size=batch_size, progress=progress)
    rows = []
    for i, half in enumerate(halves):
        code, j = codes[i // len(indices)], indices[i % len(indices)]
        rows.append({"code": code, "model": model_id, "sentence": j, "bits": half.line_bits,
                     "second_half_bits": half.bits, "tokens": half.tokens, "k": half.k,
                     "aligned": half.aligned, "truncated": half.truncated,
                     "unknown": half.unknown, "lossless": half.lossless})
    return pl.DataFrame(rows, schema=SENTENCE_SCHEMA)


def code_table(sentences: pl.DataFrame, settings: BootstrapSettings = BootstrapSettings(),
               reference: str = ENGLISH) -> pl.DataFrame:
    """Per (code, model) of a :func:`sentence_table` (several models may be stacked): the
    figures of :data:`CODE_COLUMNS`. The premium pairs each sentence with the ``reference``
    code's same sentence; InputError when the reference is missing or its sentences differ."""
    rows = []
    for (model,), part in sentences.group_by(["model"], maintain_order=True):
        ref = part.filter(pl.col("code") == reference).sort("sentence")
        if ref.height == 0:
            raise InputError(f"model {model}: no {reference} sentences: expected the English "
                             f"reference beside the other codes")
        for (code,), one in part.group_by(["code"], maintain_order=True):
            one = one.sort("sentence")
            if one["sentence"].to_list() != ref["sentence"].to_list():
                raise InputError(f"{code} / {model}: sentences {one['sentence'].to_list()[:5]} "
                                 f"differ from {reference}'s: expected the same sample")
            low, high = ratio_interval(one["bits"].to_numpy(), ref["bits"].to_numpy(),
                                       settings)
            ratio = math.fsum(one["bits"]) / math.fsum(ref["bits"])
            n = one.height
            rows.append((code, model, n, math.fsum(one["bits"]) / n, one["tokens"].sum() / n,
                         math.fsum(one["second_half_bits"]) / n, ratio, low, high))
    schema = dict(zip(CODE_COLUMNS, (pl.Utf8, pl.Utf8, pl.Int64) + (pl.Float64,) * 6))
    return pl.DataFrame(rows, schema=schema, orient="row").sort("model", "code")
