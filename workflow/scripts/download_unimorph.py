"""Download one language's UniMorph lexicon (the URL pattern of morphology.unimorph.url)."""

import logging

from fairppl.morphology.unimorph import download


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    sha256 = download(snakemake.params.url, snakemake.output[0])
    logging.info("%s -> %s (sha256 %s)", snakemake.params.url, snakemake.output[0], sha256)


if "snakemake" in globals():
    main(snakemake)
