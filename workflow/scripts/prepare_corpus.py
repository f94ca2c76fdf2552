"""Read one corpus, decide its dropped units from every translation it ships, and write the
configured languages' aligned, split units table and the dropped units (fairppl.corpus.prepare)."""

import logging

from fairppl.corpus.prepare import prepare_corpus


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    prepare_corpus(
        snakemake.wildcards.corpus,
        snakemake.input.source,
        snakemake.params.spec,
        snakemake.params.sources,
        snakemake.params.scheme,
        snakemake.params.english,
        units_out=snakemake.output.units,
        dropped_out=snakemake.output.dropped,
        character_maps=snakemake.params.character_maps,
        reference_db=snakemake.input.get("reference") or None,
        common_min_share=snakemake.config["corpora"][snakemake.wildcards.corpus].get(
            "common_min_share"),
    )


if "snakemake" in globals():
    main(snakemake)
