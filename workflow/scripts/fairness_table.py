"""Per model, how unequal it is across languages (results/tables/fairness.csv and its LaTeX copy:
the hardest/easiest BPEC ratio and the Gini coefficient of BPEC, with paired bootstrap intervals
over the common units), and each tokenizer's premium over English (tokenizer_premium.csv)."""

import logging

import polars as pl

from fairppl.core.io import write_table
from fairppl.core.latex import write_latex
from fairppl.stats.bootstrap import BootstrapSettings
from fairppl.stats.fairness import fairness_summary, tokenizer_premium
from fairppl.stats.metrics import english_char_counts


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    settings = BootstrapSettings(**snakemake.params.bootstrap)
    keep = ["corpus", "split", "language", "model", "tokenizer", "unit_id", "bits", "n_tokens",
            "open_vocabulary"]
    scores = pl.concat([pl.read_parquet(p, columns=keep) for p in snakemake.input.scores])
    units = pl.read_parquet(snakemake.input.units)
    english = english_char_counts(units)
    fairness = fairness_summary(scores, english, settings)
    pieces = scores.filter(pl.col("open_vocabulary") & (pl.col("tokenizer") != "char"))
    premium = tokenizer_premium(pieces.select("corpus", "model", "tokenizer", "language",
                                              "unit_id", "n_tokens"),
                                english, reference=snakemake.params.reference,
                                settings=settings, end_tokens=1)
    logging.info("%d fairness rows, %d premium rows; %s", fairness.height, premium.height,
                 settings.describe())
    write_table(fairness, csv=snakemake.output.csv)
    write_table(premium, csv=snakemake.output.premium)
    write_latex(fairness, snakemake.output.tex, caption="How unequal each model is across "
                "languages: hardest/easiest BPEC ratio and Gini coefficient of BPEC (paired "
                "bootstrap intervals over the common units).", label="tab:fairness")


if "snakemake" in globals():
    main(snakemake)
