"""Collect the tokenizer training records (requested and actual vocabulary sizes) in one table."""

import json
from pathlib import Path

import polars as pl

from fairppl.io import write_table

SCHEMA = {"corpus": pl.String, "language": pl.String, "tokenizer": pl.String,
          "model_type": pl.String, "vocab_size_requested": pl.Int64, "vocab_size": pl.Int64,
          "reduced": pl.Boolean, "n_train_units": pl.Int64, "n_train_chars": pl.Int64}


def main(snakemake):
    rows = []
    for path in snakemake.input.records:
        parts = Path(path).parts  # results/tokenizers/{corpus}/{language}/{tokenizer}.json
        record = json.loads(Path(path).read_text(encoding="utf-8"))
        rows.append({"corpus": parts[-3], "language": parts[-2], "tokenizer": Path(path).stem,
                     **record})
    # With no tokenizers (no corpus in tokenizers.corpora) the table is empty but keeps its header.
    write_table(pl.DataFrame(rows, schema=SCHEMA), csv=snakemake.output.csv)


if "snakemake" in globals():
    main(snakemake)
