"""Run the configured marginal-likelihood estimators on one language's evaluation units with one
model (the subword n-gram, a trained Transformer or a pretrained LM): a resumable per-unit
table."""

import logging

from fairppl.corpora import read_split
from fairppl.marginal.unigram import UnigramModel
from fairppl.marginal.units import file_identity, hf_lm, kenlm_lm, run_units


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    wc, params = snakemake.wildcards, snakemake.params
    sampling = params.sampling
    if snakemake.rule == "marginal_ngram":
        lm, vocab, encode, unigram = kenlm_lm(snakemake.input.model, snakemake.input.tokenizer)
        model, start = f"kenlm-subword-o{wc.order}", "<s>"
        identity = {"model": file_identity(snakemake.input.model),
                    "tokenizer": file_identity(snakemake.input.tokenizer)}
    else:
        import torch

        torch.set_num_threads(snakemake.threads)
        lm, vocab, encode, start = hf_lm(params.load_from, params.special or None)
        model, unigram = wc.model, None
        identity = {"model": file_identity(params.load_from), "special": params.special or None}
        if "tokenizer" in snakemake.input.keys():  # a Transformer over unigram pieces
            unigram = UnigramModel.from_file(snakemake.input.tokenizer)
            identity["tokenizer"] = file_identity(snakemake.input.tokenizer)
    units = read_split(snakemake.input.units, wc.language, params.split, params.max_units)
    keys = {"corpus": wc.corpus, "language": wc.language, "model": model,
            "tokenizer": wc.tokenizer, "split": params.split}
    table = run_units(
        lm, vocab, encode, units.select("unit_id", "text"), keys=keys,
        estimators=params.estimators, taus=sampling["tau"], K=sampling["K"],
        L=sampling["L"], M=sampling["M"], seed=sampling["seed"], part=params.part,
        out=snakemake.output.table, unigram_model=unigram, start_token=start,
        options=identity | {"units": units["unit_id"].to_list()}, progress=False)
    logging.info("%d runs on %d units; %.1f s in the estimators; start token %s", table.height,
                 units.height, table["seconds"].sum(), start)


if "snakemake" in globals():
    main(snakemake)
