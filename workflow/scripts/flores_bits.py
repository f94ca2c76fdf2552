"""One pretrained LM's bits on an evenly spaced sample of every FLORES-200 code's sentences (the
same sentences in every code): per sentence, the whole sentence's bits and Goldfish's second-half
bits, from one pass of the canonical scorer (fairppl.lm.flores_bits)."""

import logging
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from fairppl.core.io import write_table  # noqa: E402
from fairppl.corpus.flores import read_flores, with_english  # noqa: E402
from fairppl.lm.cache import load_lm  # noqa: E402
from fairppl.lm.flores_bits import sample, sentence_table  # noqa: E402


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    torch.set_num_threads(snakemake.threads)
    settings = snakemake.params.settings
    model_id = snakemake.wildcards.model
    codes = settings["codes"]
    wanted = with_english(codes)
    files = read_flores(snakemake.input.archive, settings["sha256"], wanted)
    sentences, indices = sample(files, settings["sentences"])
    model, tokenizer = load_lm(snakemake.input.model, dtype=snakemake.params.dtype)
    start = settings["start_tokens"].get(model_id)
    logging.info("%s: %d codes x %d sentences (start token %r)", model_id, len(sentences),
                 len(indices), start)
    table = sentence_table(model_id, model, tokenizer, sentences, indices, start_token=start,
                           batch_size=snakemake.params.batch_size, progress=True)
    logging.info("%d sentences scored; %d not lossless, %d cut at Goldfish's 511 tokens",
                 table.height, (~table["lossless"]).sum(), table["truncated"].sum())
    write_table(table, parquet=snakemake.output.sentences)


if "snakemake" in globals():
    main(snakemake)
