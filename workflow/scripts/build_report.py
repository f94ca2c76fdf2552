"""The study's report: one self-contained HTML file built from the tables and figures."""

import json
import logging

import polars as pl

from fairppl.stats.bootstrap import BootstrapSettings
from fairppl.core.io import read_csv, write_text
from fairppl.corpus.prepare import read_dropped
from fairppl.report.html import conventions_table
from fairppl.report.flores import TABLES as FLORES_TABLES
from fairppl.report.marginal import TABLES as MARGINAL_TABLES
from fairppl.morphology import TABLES as MORPHOLOGY_TABLES
from fairppl.report.pages import ReportInputs, build_report
from fairppl.report.shannon import read_published as read_published_shannon


def unit_counts(paths):
    """Aligned units per (corpus, split), counted on the English reference rows, and the fewest
    and most units a language of the corpus keeps there (equal unless units: own)."""
    units = pl.concat([pl.read_parquet(p, columns=["corpus", "split", "language",
                                                   "english_reference"])
                       for p in paths], how="vertical_relaxed")
    english = (units.filter(pl.col("english_reference")).group_by("corpus", "split")
               .agg(pl.len().alias("n_units")))
    spread = (units.group_by("corpus", "split", "language").len()
              .group_by("corpus", "split")
              .agg(pl.col("len").min().alias("fewest (count)"),
                   pl.col("len").max().alias("most (count)")))
    return english.join(spread, on=["corpus", "split"]).sort("corpus", "split")


def shannon_tables(inputs):
    """The Shannon game's tables and the paper's values, when the game ran."""
    if "shannon_table" not in inputs.keys():
        return {}
    return {"table": read_csv(inputs.shannon_table), "ranks": read_csv(inputs.shannon_ranks),
            "published": read_published_shannon(inputs.shannon_published),
            **({"players": read_csv(inputs.shannon_players)}
               if "shannon_players" in inputs.keys() else {})}


def flores_tables(inputs):
    """The FLORES-200 tables, when those analyses ran (config flores.enabled)."""
    if "flores_table" not in inputs.keys():
        return {}
    return {name: read_csv(getattr(inputs, f"flores_{name}")) for name in FLORES_TABLES}


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    settings = snakemake.params.settings
    records = []
    for path in snakemake.input.conventions:
        with open(path, encoding="utf-8") as handle:
            records.append(json.load(handle))
    inputs = ReportInputs(
        bpu=pl.read_parquet(snakemake.input.bpu),
        models=pl.read_parquet(snakemake.input.models),
        sheet=pl.DataFrame(settings["languages"]),
        settings=settings,
        bootstrap=BootstrapSettings(**snakemake.params.bootstrap),
        differences=pl.read_csv(snakemake.input.differences),
        model_differences=pl.read_csv(snakemake.input.model_differences),
        rank_uncertainty=read_csv(snakemake.input.rank_uncertainty),
        unit_counts=unit_counts(snakemake.input.units),
        dropped=pl.concat([read_dropped(p) for p in snakemake.input.dropped]),
        tokenizers=pl.read_csv(snakemake.input.tokenizers),
        conventions=conventions_table(records),
        correlates=pl.read_csv(snakemake.input.correlates),
        correlations=pl.read_csv(snakemake.input.correlations),
        marginal={name: read_csv(getattr(snakemake.input, f"marginal_{name}"))
                  for name in MARGINAL_TABLES},
        morphology={name: read_csv(getattr(snakemake.input, f"morphology_{name}"))
                    for name in MORPHOLOGY_TABLES},
        shannon=shannon_tables(snakemake.input),
        flores=flores_tables(snakemake.input),
        figures={**{name.replace("morphology_figure_", "morphology_"): path
                    for name, path in snakemake.input.items()
                    if name.startswith("morphology_figure_")},
                 **({"shannon": snakemake.input.shannon_figure}
                    if "shannon_figure" in snakemake.input.keys() else {}),
                 **({"flores": snakemake.input.flores_figure}
                    if "flores_figure" in snakemake.input.keys() else {}),
                 "marginal_entropy": snakemake.input.marginal_entropy_figure,
                 "marginal_intervals": snakemake.input.marginal_intervals_figure,
                 "marginal_samples_needed": snakemake.input.marginal_needed_figure,
                 "main": snakemake.input.main, "unk": snakemake.input.unk,
                 **dict(zip(snakemake.params.second_corpora, snakemake.input.second))},
    )
    html = build_report(inputs)
    logging.info("report: %d characters", len(html))
    write_text(snakemake.output.html, html)


if "snakemake" in globals():
    main(snakemake)
