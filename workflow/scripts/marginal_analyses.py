"""Two analyses of the marginal likelihood on one language's evaluation units
(fairppl.marginal.analyses): the samples-needed curves of the subword n-gram against its exact
marginal (rule marginal_samples_needed), and the Q(default) records and bins of the LM-guided
proposal with a token LM (rule marginal_qdefault); and the two summaries of every language in
one table each (rule marginal_analyses_tables)."""

import logging

import polars as pl

from fairppl.corpora import read_split
from fairppl.io import write_table
from fairppl.marginal.analyses import (
    qdefault_bins,
    qdefault_records,
    samples_needed_curves,
    samples_needed_summary,
)
from fairppl.marginal.units import fitting_units, hf_lm, kenlm_lm


def samples_needed(snakemake, units, keys):
    params = snakemake.params
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


def qdefault(snakemake, units, keys):
    import torch

    params, sampling = snakemake.params, snakemake.params.sampling
    torch.set_num_threads(snakemake.threads)
    lm, vocab, encode, start = hf_lm(params.load_from, params.special or None)
    units, skipped = fitting_units(units, encode, lm.max_length)
    if skipped:
        logging.info("%d units left out, too long for the model's %d positions: %s",
                     len(skipped), lm.max_length, ", ".join(skipped))
    records = qdefault_records(lm, vocab, encode, units.select("unit_id", "text"),
                               K=sampling["K"], L=sampling["L"], M=sampling["M"],
                               seed=sampling["seed"], keys=keys)
    write_table(records, csv=snakemake.output.blocks)
    write_table(qdefault_bins(records), csv=snakemake.output.bins)
    logging.info("%d blocks recorded (start token %s)", records.height, start)


def tables(snakemake):
    """The per-job summaries and bins of every language side by side, one table each."""
    for name in ("summary", "bins"):
        paths = list(getattr(snakemake.input, name))
        frame = (pl.concat([read_summary(p) for p in paths], how="diagonal_relaxed") if paths
                 else pl.DataFrame())
        write_table(frame, csv=getattr(snakemake.output, name))
        logging.info("%s: %d rows from %d files", name, frame.height, len(paths))


def read_summary(path):
    """A per-job summary CSV, its statistics as floats (an all-null column reads as text)."""
    frame = pl.read_csv(path, infer_schema_length=None)
    stats = [c for c in frame.columns if c.startswith(("median_", "share_", "mean_"))]
    return frame.with_columns(pl.col(stats).cast(pl.Float64))


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    if snakemake.rule == "marginal_analyses_tables":
        return tables(snakemake)
    wc, params = snakemake.wildcards, snakemake.params
    units = read_split(snakemake.input.units, wc.language, params.split, params.max_units)
    ngram = snakemake.rule == "marginal_samples_needed"
    keys = {"corpus": wc.corpus, "language": wc.language,
            "model": f"kenlm-subword-o{wc.order}" if ngram else wc.model,
            "tokenizer": wc.tokenizer, "split": params.split}
    (samples_needed if ngram else qdefault)(snakemake, units, keys)


if "snakemake" in globals():
    main(snakemake)
