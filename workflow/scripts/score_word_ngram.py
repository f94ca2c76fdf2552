"""Score one language's evaluation split with a closed-vocabulary word n-gram: naive bits, UNK
tokens and distinct OOV word types per unit (the UNK correction is applied where units are summed,
over their OOV types: fairppl.stats.metrics.bits_per_utterance)."""

import json
import logging

from fairppl.corpus.readers import read_split
from fairppl.core.io import write_table
from fairppl.stats.metrics import score_frame
from fairppl.ngram.word import count_oov_types, score_word_units


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    wc = snakemake.wildcards
    units = read_split(snakemake.input.units, wc.language, snakemake.params.split)
    with open(snakemake.input.record, encoding="utf-8") as handle:
        record = json.load(handle)
    texts = units["text"].to_list()
    scores = score_word_units(snakemake.input.model, texts, frozenset(record["words"]))
    n_types = count_oov_types(scores)
    table = score_frame(
        corpus=wc.corpus,
        language=wc.language,
        model=f"kenlm-word-o{wc.order}",
        tokenizer=f"word-v{wc.vocab}",
        vocab_size=record["actual"],
        open_vocabulary=False,
        split=snakemake.params.split,
        unit_ids=units["unit_id"].to_list(),
        texts=texts,
        n_tokens=[s.n_tokens for s in scores],
        bits=[s.bits for s in scores],
        n_oov=[s.n_oov for s in scores],
        oov_types=[list(s.oov_types) for s in scores],
        extra={"bits_eos": [s.bits_eos for s in scores]},
    )
    logging.info("%d units, %d tokens, %d <unk> tokens of %d OOV types", table.height,
                 table["n_tokens"].sum(), table["n_oov"].sum(), n_types)
    write_table(table, parquet=snakemake.output.scores)


if "snakemake" in globals():
    main(snakemake)
