"""The report's summary page: the bits-per-utterance tables, dropped units and the settings."""

import polars as pl

from fairppl.io import write_text
from fairppl.report import summary_html


def main(snakemake):
    bpu = pl.read_parquet(snakemake.input.bpu)
    dropped = pl.concat([pl.read_csv(p, separator="\t") for p in snakemake.input.dropped])
    models = pl.read_parquet(snakemake.input.models)
    tokenizers = pl.read_csv(snakemake.input.tokenizers)
    html = summary_html(bpu, dropped, snakemake.params.settings, models, tokenizers)
    write_text(snakemake.output.html, html)


if "snakemake" in globals():
    main(snakemake)
