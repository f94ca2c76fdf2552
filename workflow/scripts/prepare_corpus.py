"""Read one corpus for every configured language and write its aligned, split units table."""

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
    )


if "snakemake" in globals():
    main(snakemake)
