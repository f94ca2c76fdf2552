"""One pretrained LM's bits on an evenly spaced sample of every FLORES-200 code's sentences (the
same sentences in every code): per sentence, the whole sentence's bits and Goldfish's second-half
bits, from one pass of the canonical scorer (fairppl.lm.flores_bits)."""

import logging
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from fairppl.core.io import write_table  # noqa: E402
from fairppl.corpus.flores import ENGLISH, read_flores  # noqa: E402
from fairppl.corpus.readers import evenly_spaced  # noqa: E402
from fairppl.lm.cache import load_lm  # noqa: E402
from fairppl.lm.flores_bits import sentence_table  # noqa: E402
from fairppl.lm.goldfish import sample_sentences  # noqa: E402


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    torch.set_num_threads(snakemake.threads)
    settings = snakemake.params.settings
    model_id = snakemake.wildcards.model
    codes = settings["codes"]
    wanted = None if codes is None else sorted(set(codes) | {ENGLISH})
    files = read_flores(snakemake.input.archive, settings["sha256"], wanted)
    sentences = sample_sentences(files, settings["sentences"])
    total = len(next(iter(sentences.values())))
    n_lines = sum(len(text.rstrip("\n").split("\n")) for text in files[ENGLISH])
    indices = evenly_spaced(n_lines, settings["sentences"])
    assert len(indices) == total
    model, tokenizer = load_lm(snakemake.input.model, dtype=snakemake.params.dtype)
    start = settings["start_tokens"].get(model_id)
    logging.info("%s: %d codes x %d sentences (start token %r)", model_id, len(sentences),
                 total, start)
    table = sentence_table(model_id, model, tokenizer, sentences, indices, start_token=start,
                           batch_size=snakemake.params.batch_size, progress=True)
    logging.info("%d sentences scored; %d not lossless, %d cut at Goldfish's 511 tokens",
                 table.height, (~table["lossless"]).sum(), table["truncated"].sum())
    write_table(table, parquet=snakemake.output.sentences)


if "snakemake" in globals():
    main(snakemake)
