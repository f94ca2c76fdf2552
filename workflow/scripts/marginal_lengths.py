"""Which proposal at what text length: every estimator against the exact marginal of the subword
n-gram on prefixes of one language's evaluation units (fairppl.marginal.lengths)."""

import logging

import polars as pl

from fairppl.corpus.readers import read_split
from fairppl.core.io import write_table
from fairppl.marginal.lengths import length_sweep
from fairppl.marginal.units import kenlm_lm


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    wc, params = snakemake.wildcards, snakemake.params
    lm, vocab, encode, unigram = kenlm_lm(snakemake.input.model, snakemake.input.tokenizer)
    units = read_split(snakemake.input.units, wc.language, params.split, params.max_units)
    sweep = length_sweep(lm, vocab, encode, units.select("unit_id", "text"),
                         word_counts=params.word_counts, K=params.sampling["K"],
                         M=params.sampling["M"], seed=params.sampling["seed"],
                         unigram_model=unigram)
    sweep = sweep.select(pl.lit(wc.corpus).alias("corpus"), pl.lit(wc.language).alias("language"),
                         pl.lit(f"kenlm-subword-o{wc.order}").alias("model"),
                         pl.lit(wc.tokenizer).alias("tokenizer"), pl.all())
    write_table(sweep, parquet=snakemake.output.table)
    logging.info("%d runs on %d units, %.1f s in the estimators", sweep.height, units.height,
                 sweep["seconds"].sum())


if "snakemake" in globals():
    main(snakemake)
