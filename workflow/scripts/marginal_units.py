"""Run the configured marginal-likelihood estimators on one language's evaluation units with one
model (the subword n-gram, a trained Transformer or a pretrained LM): a resumable per-unit
table."""

import logging

from fairppl.corpus.readers import read_split
from fairppl.marginal.unigram import UnigramModel
from fairppl.core.errors import InputError
from fairppl.marginal.units import (
    CONTEXT_FILL,
    file_identity,
    fitting_units,
    hf_lm,
    kenlm_lm,
    run_units,
    speed_settings,
)


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    wc, params = snakemake.wildcards, snakemake.params
    sampling = params.sampling
    # tokens per LM call of the units advanced together (a Transformer only; read from the config,
    # not a param: a speed setting that changes no record must not rerun the finished jobs)
    batch_tokens, lanes = None, 1
    if snakemake.rule == "marginal_ngram":
        lm, vocab, encode, unigram = kenlm_lm(snakemake.input.model, snakemake.input.tokenizer)
        model, start = f"kenlm-subword-o{wc.order}", "<s>"
        identity = {"model": file_identity(snakemake.input.model),
                    "tokenizer": file_identity(snakemake.input.tokenizer)}
    else:
        import torch

        torch.set_num_threads(snakemake.threads)
        batch_tokens, lanes = speed_settings(snakemake.config)
        dtype = params.get("dtype") or "float32"  # config pretrained.dtype; float32 if trained
        lm, vocab, encode, start = hf_lm(params.load_from, params.special or None, dtype=dtype)
        model, unigram = wc.model, None
        identity = {"model": file_identity(params.load_from), "special": params.special or None}
        if dtype != "float32":  # a float32 run keeps the identity its records were written with
            identity["dtype"] = dtype
        if "tokenizer" in snakemake.input.keys():  # a Transformer over unigram pieces
            unigram = UnigramModel.from_file(snakemake.input.tokenizer)
            identity["tokenizer"] = file_identity(snakemake.input.tokenizer)
    units = read_split(snakemake.input.units, wc.language, params.split, params.max_units)
    if snakemake.rule != "marginal_ngram":
        units, skipped = fitting_units(units, encode, lm.max_length)
        if skipped:
            logging.info("%d units left out, longer than %.0f%% of the model's %d positions: %s",
                         len(skipped), 100 * CONTEXT_FILL, lm.max_length, ", ".join(skipped))
        if not units.height:
            raise InputError(f"no {wc.language} unit fits in {CONTEXT_FILL:.0%} of the model's "
                             f"{lm.max_length} positions: expected shorter units or a model "
                             f"with a longer context")
    keys = {"corpus": wc.corpus, "language": wc.language, "model": model,
            "tokenizer": wc.tokenizer, "split": params.split}
    table = run_units(
        lm, vocab, encode, units.select("unit_id", "text"), keys=keys,
        estimators=params.estimators, taus=sampling["tau"], K=sampling["K"],
        L=sampling["L"], M=sampling["M"], seed=sampling["seed"], part=params.part,
        out=snakemake.output.table, unigram_model=unigram, start_token=start,
        options=identity | {"units": units["unit_id"].to_list()}, progress=False,
        blocks=getattr(snakemake.output, "blocks", None), pass_tokens=batch_tokens,
        lanes=lanes)
    logging.info("%d runs on %d units; %.1f s in the estimators; start token %s; %s",
                 table.height, units.height, table["seconds"].sum(), start,
                 f"units batched, {batch_tokens} tokens per LM call, {lanes} lane(s)"
                 if batch_tokens
                 else "one unit per LM call")


if "snakemake" in globals():
    main(snakemake)
