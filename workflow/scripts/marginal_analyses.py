"""Analyses of the marginal likelihood (fairppl.marginal.analyses): the samples-needed curves of
the subword n-gram against its exact marginal on one language's evaluation units (rule
marginal_samples_needed), and the tables of every language (rule marginal_analyses_tables): the
samples-needed summaries side by side, and the Q(default) bins of the blocks that the
marginal_lm jobs' lm-guided runs recorded."""

import logging

import polars as pl

from fairppl.corpus.readers import read_split
from fairppl.core.io import write_table
from fairppl.marginal.analyses import qdefault_bins, samples_needed_curves, samples_needed_summary
from fairppl.marginal.units import block_table, kenlm_lm


def samples_needed(snakemake):
    wc, params = snakemake.wildcards, snakemake.params
    units = read_split(snakemake.input.units, wc.language, params.split, params.max_units)
    keys = {"corpus": wc.corpus, "language": wc.language, "model": f"kenlm-subword-o{wc.order}",
            "tokenizer": wc.tokenizer, "split": params.split}
    lm, vocab, _, unigram = kenlm_lm(snakemake.input.model, snakemake.input.tokenizer)
    if unigram is None:
        raise ValueError(f"{snakemake.input.tokenizer}: expected a unigram SentencePiece model")
    curves = samples_needed_curves(lm, vocab, unigram, units.select("unit_id", "text"),
                                   K=params.sampling["K"], tau=params.tau,
                                   seed=params.sampling["seed"], keys=keys)
    summary = samples_needed_summary(curves)
    write_table(curves, csv=snakemake.output.curves)
    write_table(summary, csv=snakemake.output.summary)
    for row in summary.iter_rows(named=True):
        logging.info("order %s: median paths to 99%% / 99.9%% of the exact marginal: %s / %s",
                     row["order"], row["median_paths_to_99pct"],
                     row["median_paths_to_99_9pct"])


def tables(snakemake):
    """The per-job samples-needed summaries of every language in one table, and the Q(default)
    bins of every (corpus, language, model, tokenizer) with lm-guided blocks."""
    paths = list(snakemake.input.summary)
    summary = (pl.concat([read_summary(p) for p in paths], how="diagonal_relaxed") if paths
               else samples_needed_summary(pl.DataFrame()))
    write_table(summary, csv=snakemake.output.summary)
    blocks = [pl.read_parquet(p) for p in snakemake.input.blocks]
    blocks = [b for b in blocks if b.height]
    bins = qdefault_bins(pl.concat(blocks) if blocks else block_table([], {}))
    write_table(bins, csv=snakemake.output.bins)
    logging.info("samples needed: %d rows from %d files; Q(default): %d blocks from %d files",
                 summary.height, len(paths), sum(b.height for b in blocks),
                 len(snakemake.input.blocks))


def read_summary(path):
    """A per-job summary CSV, its statistics as floats (an all-null column reads as text)."""
    frame = pl.read_csv(path, infer_schema_length=None)
    stats = [c for c in frame.columns if c.startswith(("median_", "share_", "mean_"))]
    return frame.with_columns(pl.col(stats).cast(pl.Float64))


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    if snakemake.rule == "marginal_analyses_tables":
        tables(snakemake)
    else:
        samples_needed(snakemake)


if "snakemake" in globals():
    main(snakemake)
