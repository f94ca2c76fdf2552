"""Score one language's evaluation split with its subword n-gram (default tokenization)."""

import logging

from fairppl.corpus.readers import read_split
from fairppl.core.io import write_table
from fairppl.stats.metrics import score_frame
from fairppl.ngram.subword import load_sentencepiece, score_piece_units


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    wc = snakemake.wildcards
    units = read_split(snakemake.input.units, wc.language, snakemake.params.split)
    texts = units["text"].to_list()
    scores = score_piece_units(snakemake.input.model, snakemake.input.tokenizer, texts)
    table = score_frame(
        corpus=wc.corpus,
        language=wc.language,
        model=f"kenlm-subword-o{wc.order}",
        tokenizer=wc.tokenizer,
        vocab_size=load_sentencepiece(snakemake.input.tokenizer).get_piece_size(),
        open_vocabulary=True,
        split=snakemake.params.split,
        unit_ids=units["unit_id"].to_list(),
        texts=texts,
        n_tokens=[s.n_tokens for s in scores],
        bits=[s.bits for s in scores],
        n_unseen=[s.n_unseen for s in scores],
        extra={"bits_eos": [s.bits_eos for s in scores]},
    )
    logging.info("%d units, %.1f bits, %d unseen pieces", table.height, table["bits"].sum(),
                 table["n_unseen"].sum())
    write_table(table, parquet=snakemake.output.scores)


if "snakemake" in globals():
    main(snakemake)
