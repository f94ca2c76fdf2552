"""Per corpus of the difficulty model (morphology.corpus and morphology.difficulty_corpora) and
model, how unequal it is across languages (results/tables/fairness.csv and its LaTeX copy:
the hardest/easiest BPEC ratio and the Gini coefficient of BPEC, with paired bootstrap intervals
over the common units), and each tokenizer's premium over English (tokenizer_premium.csv)."""

import logging

import polars as pl

from fairppl.core.io import write_table
from fairppl.core.latex import write_latex
from fairppl.stats.bootstrap import BootstrapSettings
from fairppl.stats.fairness import fairness_tables
from fairppl.stats.metrics import english_char_counts


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    settings = BootstrapSettings(**snakemake.params.bootstrap)
    keep = ["corpus", "split", "language", "model", "tokenizer", "unit_id", "bits", "n_tokens",
            "open_vocabulary"]
    scores = pl.concat([pl.read_parquet(p, columns=keep) for p in snakemake.input.scores])
    units = pl.concat([pl.read_parquet(p) for p in snakemake.input.units], how="diagonal_relaxed")
    english = english_char_counts(units)
    fairness, premium, left = fairness_tables(scores, english, snakemake.params.reference,
                                              snakemake.params.common_min_share, settings)
    if left.height:
        logging.info("left out of the common units by common_min_share: %s", ", ".join(
            f"{c}/{lang}" for c, lang in left.select("corpus", "language").unique().rows()))
    logging.info("%d fairness rows, %d premium rows; %s", fairness.height, premium.height,
                 settings.describe())
    write_table(fairness, csv=snakemake.output.csv)
    write_table(premium, csv=snakemake.output.premium)
    write_latex(fairness, snakemake.output.tex, caption="How unequal each model is across "
                "languages: hardest/easiest BPEC ratio and Gini coefficient of BPEC (paired "
                "bootstrap intervals over the common units).", label="tab:fairness")


if "snakemake" in globals():
    main(snakemake)
