"""Collect the tokenizer training records (requested and actual vocabulary sizes) in one table."""

import json
from pathlib import Path

import polars as pl

from fairppl.io import write_table


def main(snakemake):
    rows = []
    for path in snakemake.input.records:
        parts = Path(path).parts  # results/tokenizers/{corpus}/{language}/{tokenizer}.json
        record = json.loads(Path(path).read_text(encoding="utf-8"))
        rows.append({"corpus": parts[-3], "language": parts[-2], "tokenizer": Path(path).stem,
                     **record})
    write_table(pl.DataFrame(rows), csv=snakemake.output.csv)


if "snakemake" in globals():
    main(snakemake)
