"""Sum every per-unit marginal table into results/tables/marginal.{parquet,csv} (one row per
corpus, language, model, tokenizer, estimator, K, tau, L and M), keep the per-unit records
(without the texts) in marginal_units.parquet, and write the comparisons the report shows
(fairppl.marginal.compare): default vs marginal bits, the ranking change, the estimators against
the exact marginal, lattice entropy vs gap, the published numbers beside ours, and the length
sweep's summary (fairppl.marginal.lengths)."""

import logging

import polars as pl

from fairppl.stats.bootstrap import BootstrapSettings
from fairppl.core.io import write_table
from fairppl.marginal import compare
from fairppl.marginal.lengths import SUMMARY_COLUMNS, length_summary
from fairppl.marginal.table import MARGINAL_COLUMNS, marginal_table
from fairppl.marginal.units import unit_table


def caching_rows(paths) -> pl.DataFrame:
    """The caching analyses of every language in one table (none: an empty one)."""
    frames = [pl.read_csv(p) for p in paths]
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame(
        schema={"corpus": pl.String, "language": pl.String, "analysis": pl.String})


def empty(columns: dict) -> pl.DataFrame:
    """A table with ``columns`` and no rows."""
    return pl.DataFrame(schema={c: pl.String for c in columns})


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    settings = BootstrapSettings(**snakemake.params.bootstrap)
    out = snakemake.output
    if not snakemake.input.tables:  # the stage covers no language: empty tables, with headers
        logging.info("no marginal runs configured (marginal.corpora/languages): empty tables")
        write_table(empty(MARGINAL_COLUMNS), parquet=out.parquet, csv=out.csv)
        # typed, with every per-unit column (the figures filter on them), no text
        write_table(unit_table([], {}).drop("text"), parquet=out.per_unit)
        for name, columns in (("fair", compare.FAIR_COLUMNS), ("rankings",
                              compare.RANKING_COLUMNS), ("accuracy", compare.ACCURACY_COLUMNS),
                              ("entropy", compare.ENTROPY_COLUMNS),
                              ("published", compare.PUBLISHED_COLUMNS),
                              ("lengths", SUMMARY_COLUMNS)):
            write_table(empty(columns), csv=getattr(out, name))
        write_table(caching_rows(snakemake.input.caching), csv=out.caching)
        return
    per_unit = pl.concat([pl.read_parquet(p) for p in snakemake.input.tables],
                         how="vertical_relaxed")
    units = pl.concat([pl.read_parquet(p) for p in snakemake.input.units], how="vertical_relaxed")
    min_units = int(snakemake.params.min_units)
    table = marginal_table(per_unit, units, settings, min_units)
    logging.info("%d rows from %d per-unit tables (%d runs); %s; rows on fewer than %d units "
                 "get no intervals", table.height, len(snakemake.input.tables), per_unit.height,
                 settings.describe(), min_units)
    write_table(table, parquet=snakemake.output.parquet, csv=snakemake.output.csv)
    write_table(per_unit.drop("text"), parquet=out.per_unit)  # log_weights kept (a list)
    fair = compare.fair_bits(table)
    write_table(fair, csv=out.fair)
    write_table(compare.ranking_change(fair, min_units), csv=out.rankings)
    write_table(compare.estimator_accuracy(per_unit, table=table), csv=out.accuracy)
    write_table(compare.entropy_gap(per_unit, min_units), csv=out.entropy)
    published = pl.read_csv(snakemake.input.published, separator="\t")
    write_table(compare.published_comparison(table, published), csv=out.published)
    write_table(caching_rows(snakemake.input.caching), csv=out.caching)
    lengths = [pl.read_parquet(p) for p in snakemake.input.lengths]
    write_table(length_summary(pl.concat(lengths)) if lengths else empty(SUMMARY_COLUMNS),
                csv=out.lengths)


if "snakemake" in globals():
    main(snakemake)
