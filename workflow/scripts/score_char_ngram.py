"""Score one language's evaluation split with its character n-gram: per-unit bits."""

import logging

import polars as pl

from fairppl.charlm import score_units
from fairppl.io import write_table
from fairppl.metrics import SCORE_COLUMNS


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    wc = snakemake.wildcards
    units = (
        pl.scan_parquet(snakemake.input.units)
        .filter(language=wc.language, split=snakemake.params.split)
        .sort("position")
        .collect()
    )
    scores = score_units(snakemake.input.model, units["text"].to_list())
    table = pl.DataFrame(
        {
            "corpus": wc.corpus,
            "language": wc.language,
            "model": f"kenlm-char-o{wc.order}",
            "tokenizer": "char",
            "split": snakemake.params.split,
            "unit_id": units["unit_id"],
            "n_chars": [s.n_chars for s in scores],
            "n_bytes": [s.n_bytes for s in scores],
            "n_tokens": [s.n_chars + 1 for s in scores],  # every character plus end-of-unit
            "n_unseen": [s.n_unseen for s in scores],
            "bits": [s.bits for s in scores],
        },
        schema=SCORE_COLUMNS,
    )
    logging.info("%d units, %.1f bits, %d unseen characters", table.height,
                 table["bits"].sum(), table["n_unseen"].sum())
    write_table(table, parquet=snakemake.output.scores)


if "snakemake" in globals():
    main(snakemake)
