"""The published MCC of one language (Cotterell et al. 2018, Table 1) as an MCC record, its note
saying what the published rule and this study's rule give on the lexicon of that time, and its
details that lexicon's parts of speech, where it was found (resources/published/
mcc_rule_check.tsv)."""

import logging

from fairppl.morphology.published import (
    CITATION,
    read_published_mcc,
    read_rule_check,
    rule_check_note,
)
from fairppl.morphology.table import published_record, write_record


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    language = snakemake.wildcards.language
    values = read_published_mcc(snakemake.input.published)
    if language not in values:
        raise ValueError(f"{snakemake.input.published}: no published MCC for {language!r}")
    check = read_rule_check(snakemake.input.rule_check).get(language)
    note = f"{CITATION}; {rule_check_note(check)}"
    record = published_record(language, values[language], note)
    if check is not None:
        # the parts of speech the value was counted on: what Apertium's count is compared with
        record["details"] = {"lexicon": f"{check['lexicon']}@{check['commit']}",
                             "lexicon_pos": list(check["pos"])}
    write_record(snakemake.output[0], record)
    logging.info("%s: published MCC %d", language, values[language])


if "snakemake" in globals():
    main(snakemake)
