"""Score one language's evaluation split with its character n-gram: per-unit bits."""

import logging

from fairppl.ngram.char import score_units
from fairppl.corpus.readers import read_split
from fairppl.core.io import write_table
from fairppl.stats.metrics import score_frame


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    wc = snakemake.wildcards
    units = read_split(snakemake.input.units, wc.language, snakemake.params.split)
    scores = score_units(snakemake.input.model, units["text"].to_list())
    table = score_frame(
        corpus=wc.corpus,
        language=wc.language,
        model=f"kenlm-char-o{wc.order}",
        tokenizer="char",
        vocab_size=None,
        open_vocabulary=True,
        split=snakemake.params.split,
        unit_ids=units["unit_id"].to_list(),
        n_chars=[s.n_chars for s in scores],
        n_bytes=[s.n_bytes for s in scores],
        n_tokens=[s.n_chars + 1 for s in scores],  # every character plus end-of-unit
        bits=[s.bits for s in scores],
        n_unseen=[s.n_unseen for s in scores],
        extra={"bits_eos": [s.bits_eos for s in scores]},
    )
    logging.info("%d units, %.1f bits, %d unseen characters", table.height,
                 table["bits"].sum(), table["n_unseen"].sum())
    write_table(table, parquet=snakemake.output.scores)


if "snakemake" in globals():
    main(snakemake)
