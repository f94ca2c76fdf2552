"""Align a Europarl corpus's pair archives through English and write its multi-text and the
counts of each pair (fairppl.corpus.europarl)."""

from fairppl.corpus.europarl import extract_multitext


def main(snakemake):
    with open(snakemake.log[0], "w") as log:
        extract_multitext(
            dict(zip(snakemake.params.languages, snakemake.input.archives)),
            snakemake.params.pivot,
            out=snakemake.output.multitext,
            stats_out=snakemake.output.pairs,
            log=log,
        )


if "snakemake" in globals():
    main(snakemake)
