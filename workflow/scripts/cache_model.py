"""Convert an installed .gguf model once into a fast-loading float32 transformers folder, after
checking its converted tokenizer against the GGUF's own on the first verses it will score."""

import polars as pl
import torch

from fairppl.lm.pretrained import cache_hf_copy


def check_texts(units_paths, languages, per_language):
    """The first ``per_language`` units (corpus order) of each of ``languages`` (or of every
    language, for `all`) in each prepared units table."""
    texts = []
    for path in units_paths:
        frame = pl.read_parquet(path, columns=["language", "position", "text"])
        if "all" not in languages:
            frame = frame.filter(pl.col("language").is_in(list(languages)))
        frame = frame.sort("language", "position").group_by("language", maintain_order=True)
        texts += frame.head(per_language)["text"].to_list()
    return texts


def main(snakemake):
    torch.set_num_threads(snakemake.threads)
    units = snakemake.input.get("units", [])
    units = [units] if isinstance(units, str) else list(units)
    texts = check_texts(units, snakemake.params.languages, snakemake.params.check_units)
    with open(snakemake.log[0], "w") as log:
        print(f"tokenizer check on {len(texts)} texts from {units}", file=log, flush=True)
        cache_hf_copy(snakemake.input.gguf, snakemake.params.gguf_file, snakemake.output.hf,
                      texts=texts, special=snakemake.params.special, log=log)


if "snakemake" in globals():
    main(snakemake)
