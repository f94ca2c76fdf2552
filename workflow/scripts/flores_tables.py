"""The FLORES-200 table of the wide study (fairppl.lm.flores_table): one row per code with its
family, writing type and script, its premiums over English under every tokenizer, each LM's bits
per sentence and bits premium with intervals, and Goldfish's published second-half bits
(results/tables/flores.csv); the rank comparisons (results/tables/flores_ranks.csv); on the
slice of flores.marginal, canonical and marginal bits premiums beside the token premium
(results/tables/flores_marginal.csv, fairppl.marginal.flores); the figure
(results/figures/flores.png)."""

import logging

import polars as pl

from fairppl.core.io import write_table
from fairppl.lm.flores_bits import code_table as bits_table
from fairppl.lm.goldfish import read_goldfish
from fairppl.report.plots_flores import flores_figure
from fairppl.stats.bootstrap import BootstrapSettings
from fairppl.lm.flores_table import code_info, code_table, rank_table
from fairppl.marginal.flores import CODE_COLUMNS as MARGINAL_COLUMNS
from fairppl.marginal.flores import code_table as marginal_table
from fairppl.marginal.flores import sentence_rows
from fairppl.tokenizers.byte_premium import read_arnett
from fairppl.tokenizers.parity import read_petrov


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    settings = BootstrapSettings(**snakemake.params.bootstrap)
    parity = pl.read_csv(snakemake.input.parity)
    sentences = pl.concat([pl.read_parquet(p) for p in snakemake.input.bits])
    bits = bits_table(sentences, settings)
    petrov = read_petrov(snakemake.input.petrov_counts, snakemake.input.petrov_map)
    names = {code: row["Language"] for code, row in petrov.items()}
    info = code_info(sorted(set(parity["code"])), names, read_arnett(snakemake.input.arnett))
    goldfish = read_goldfish(snakemake.input.goldfish)
    table = code_table(parity, bits, info, goldfish)
    models = list(dict.fromkeys(sentences["model"].to_list()))
    ranks = rank_table(table, models, goldfish, settings)
    for row in ranks.iter_rows(named=True):
        logging.info("%s: rho %s over %d codes", row["comparison"], row["rho"],
                     row["codes (count)"])
    write_table(table, csv=snakemake.output.table)
    write_table(ranks, csv=snakemake.output.ranks)
    # parity beside bits on the slice, marginal (an empty table when flores.marginal.models is [])
    marginal = (marginal_table(sentence_rows(pl.concat([pl.read_parquet(p) for p in
                                                        snakemake.input.marginal])), settings)
                if snakemake.input.marginal else pl.DataFrame(schema=list(MARGINAL_COLUMNS)))
    write_table(marginal, csv=snakemake.output.marginal)
    tokenizers = list(dict.fromkeys(parity.filter(pl.col("text") == "sentences")["tokenizer"]))
    flores_figure(table, tokenizers, models, snakemake.output.figure)


if "snakemake" in globals():
    main(snakemake)
