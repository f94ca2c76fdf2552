"""Cao & Rimell's caching analysis and the consistent-vs-independent comparison on documents of
consecutive evaluation units, for one language's Transformer over unigram pieces: one CSV."""

import logging

import polars as pl

from fairppl.corpus.readers import read_split
from fairppl.core.io import write_table
from fairppl.marginal.api import check_unigram_ids
from fairppl.marginal.caching import caching_table
from fairppl.marginal.unigram import UnigramModel
from fairppl.marginal.units import hf_lm


def main(snakemake):
    import torch

    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    torch.set_num_threads(snakemake.threads)
    wc, params = snakemake.wildcards, snakemake.params
    lm, vocab, _, start = hf_lm(snakemake.input.model)
    unigram = UnigramModel.from_file(snakemake.input.tokenizer)
    check_unigram_ids(unigram, vocab)
    units = read_split(snakemake.input.units, wc.language, params.split)
    keys = {"corpus": wc.corpus, "language": wc.language, "model": "transformer",
            "tokenizer": wc.tokenizer, "split": params.split, "start_token": start}
    table = caching_table(lm, unigram, units["text"].to_list(),
                          units["unit_id"].cast(pl.String).to_list(), keys,
                          n_documents=params.n_documents, verses=params.verses,
                          K=params.K, tau=params.tau, seed=params.seed, fill=params.fill)
    write_table(table, csv=snakemake.output.csv)
    logging.info("%s: %d documents (%d skipped: a sample past the window)", wc.language,
                 table["n_documents"][0], table["n_documents_skipped"][0])


if "snakemake" in globals():
    main(snakemake)
