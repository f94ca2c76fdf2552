"""MCC and forms per lemma of one language's UniMorph lexicon (fairppl.morphology.mcc's rule)."""

import hashlib
import logging
from pathlib import Path

from fairppl.morphology.table import write_record
from fairppl.morphology.unimorph import unimorph_record


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    path = snakemake.input[0]
    sha256 = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    record = unimorph_record(snakemake.wildcards.language, path, snakemake.params.url, sha256)
    write_record(snakemake.output[0], record)
    logging.info("%s", record)


if "snakemake" in globals():
    main(snakemake)
