"""Convert an installed .gguf model once into a fast-loading float32 transformers folder."""

import torch

from fairppl.pretrained import cache_hf_copy


def main(snakemake):
    torch.set_num_threads(snakemake.threads)
    with open(snakemake.log[0], "w") as log:
        cache_hf_copy(snakemake.input.gguf, snakemake.params.gguf_file, snakemake.output.hf, log=log)


if "snakemake" in globals():
    main(snakemake)
