"""One pretrained LM's LM-guided marginal over all tokenizations, beside its canonical
tokenization's bits, on an evenly spaced sample of the sentences of a slice of FLORES-200 codes
(config flores.marginal; the same sentences in every code): a resumable per-sentence table
(fairppl.marginal.flores, fairppl.marginal.units.run_units)."""

import logging
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from fairppl.corpus.flores import read_flores, with_english  # noqa: E402
from fairppl.lm.flores_bits import sample  # noqa: E402
from fairppl.marginal.flores import ESTIMATOR, sentence_units  # noqa: E402
from fairppl.marginal.units import (  # noqa: E402
    CONTEXT_FILL, file_identity, fitting_units, hf_lm, run_units, speed_settings)


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    torch.set_num_threads(snakemake.threads)
    block, sampling = snakemake.params.slice, snakemake.params.sampling
    model_id = snakemake.wildcards.model
    files = read_flores(snakemake.input.archive, snakemake.params.sha256,
                        with_english(block["codes"]))
    sentences, indices = sample(files, block["sentences"])
    units = sentence_units(sentences, indices)
    # framed as flores_bits frames a sentence: the model's start token, no end token
    start_token = snakemake.params.start_token
    lm, vocab, encode, start = hf_lm(snakemake.input.model, {"bos": start_token},
                                     dtype=snakemake.params.dtype, score_end=False)
    units, skipped = fitting_units(units, encode, lm.max_length)
    if skipped:
        logging.info("%d sentences left out, longer than %.0f%% of the model's %d positions: %s",
                     len(skipped), 100 * CONTEXT_FILL, lm.max_length, ", ".join(skipped))
    batch_tokens, lanes = speed_settings(snakemake.config)
    logging.info("%s: %d codes x %d sentences, %s K=%d M=%s L=%s (start token %s)", model_id,
                 len(sentences), len(indices), ESTIMATOR, sampling["K"], sampling["M"],
                 sampling["L"], start)
    keys = {"corpus": snakemake.params.corpus, "language": "flores", "model": model_id,
            "tokenizer": "native", "split": "dev+devtest"}
    identity = {"model": file_identity(snakemake.input.model), "start": start_token, "end": None,
                "dtype": snakemake.params.dtype, "units": units["unit_id"].to_list()}
    table = run_units(
        lm, vocab, encode, units, keys=keys, estimators=[ESTIMATOR], taus=sampling["tau"],
        K=sampling["K"], L=sampling["L"], M=sampling["M"], seed=sampling["seed"],
        part=snakemake.params.part, out=snakemake.output.table, start_token=start,
        options=identity, progress=True, pass_tokens=batch_tokens, lanes=lanes)
    logging.info("%d runs; %.1f s in the estimator", table.height, table["seconds"].sum())


if "snakemake" in globals():
    main(snakemake)
