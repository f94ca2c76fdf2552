"""Score one language's evaluation split with a token LM (a trained Transformer or a pretrained
model) through the canonical scoring path, in resumable chunks."""

import logging

import torch

from fairppl.lm.score_split import score_split_with_lm
from fairppl.neural import check_trained


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    torch.set_num_threads(snakemake.threads)
    wc = snakemake.wildcards
    if snakemake.params.get("hyper") is not None:
        # a trained Transformer: refuse a model trained with other settings than the config's
        check_trained(snakemake.input.model, snakemake.params.hyper)
    score_split_with_lm(
        snakemake.input.units,
        corpus=wc.corpus,
        language=wc.language,
        split=snakemake.params.split,
        # a trained Transformer has its model folder as an input, a pretrained model a path
        model_id=getattr(wc, "model", "transformer"),
        tokenizer_id=getattr(wc, "tokenizer", "native"),
        load_from=snakemake.input.get("model", None) or snakemake.params.load_from,
        scoring=snakemake.params.scoring,
        parts_dir=snakemake.params.parts,
        scores_out=snakemake.output.scores,
        conventions_out=snakemake.output.conventions,
        # a pretrained model's start/end tokens from the model sheet (a trained model has none)
        special=snakemake.params.get("special") or None,
        # a pretrained model's precision (config pretrained.dtype); a trained one is float32
        dtype=snakemake.params.get("dtype") or "float32",
    )


if "snakemake" in globals():
    main(snakemake)
