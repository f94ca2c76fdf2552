"""The report's summary page: the bits-per-utterance tables, dropped units and the settings."""

import json

import polars as pl

from fairppl.io import write_text
from fairppl.report import conventions_table, summary_html


def main(snakemake):
    bpu = pl.read_parquet(snakemake.input.bpu)
    dropped = pl.concat([pl.read_csv(p, separator="\t") for p in snakemake.input.dropped])
    models = pl.read_parquet(snakemake.input.models)
    tokenizers = pl.read_csv(snakemake.input.tokenizers)
    records = []
    for path in snakemake.input.conventions:
        with open(path, encoding="utf-8") as handle:
            records.append(json.load(handle))
    html = summary_html(bpu, dropped, snakemake.params.settings, models, tokenizers,
                        conventions_table(records))
    write_text(snakemake.output.html, html)


if "snakemake" in globals():
    main(snakemake)
