"""FLORES-200 parity (fairppl.tokenizers.parity): every code's characters, UTF-8 bytes and tokens
under every tokenizer of the study, per sentence and (r50k_base, cl100k_base) as Petrov et al.'s
whole text, relative to English (results/flores/parity.csv); their published counts beside ours
(results/tables/flores_petrov.csv, every integer compared); and the byte premium beside Arnett et
al.'s (results/tables/flores_byte_premium.csv, fairppl.tokenizers.byte_premium)."""

import logging
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")


from fairppl.core.io import write_table  # noqa: E402
from fairppl.corpus.flores import petrov_text, read_flores, with_english  # noqa: E402
from fairppl.tokenizers import byte_premium  # noqa: E402
from fairppl.tokenizers.parity import (  # noqa: E402
    parity_table, petrov_comparison, read_petrov, study_counters, study_table)


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    settings = snakemake.params.settings
    codes = settings["codes"]
    wanted = with_english(codes)
    files = read_flores(snakemake.input.archive, settings["sha256"], wanted)
    logging.info("%d FLORES-200 codes read from %s", len(files), snakemake.input.archive)
    threads = snakemake.threads
    folders = snakemake.params.folders
    counters, notes = study_counters(
        list(folders), folders=folders, spm_dirs=snakemake.params.spm_dirs,
        languages_tsv=snakemake.params.languages, codes=list(files),
        spm_ids=settings["spm_ids"], threads=threads)
    for note in notes:
        logging.info("note: %s", note)
    table = study_table(files, counters)
    logging.info("parity: %d rows over %d tokenizers", table.height, len(counters))
    whole = parity_table({code: petrov_text(*pair) for code, pair in files.items()},
                         threads=threads)
    petrov = petrov_comparison(whole, read_petrov(snakemake.input.petrov_counts,
                                                  snakemake.input.petrov_map))
    logging.info("Petrov et al.: %d of %d published counts equal ours",
                 petrov["equal"].sum(), petrov.height)
    premium = byte_premium.comparison_table(files, byte_premium.read_arnett(snakemake.input.arnett))
    for line in byte_premium.summary(premium):
        logging.info("Arnett et al.: %s", line)
    write_table(table, csv=snakemake.output.parity)
    write_table(petrov, csv=snakemake.output.petrov)
    write_table(premium, csv=snakemake.output.byte_premium)


if "snakemake" in globals():
    main(snakemake)
