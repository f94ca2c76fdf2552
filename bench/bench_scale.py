"""Scale on paper: how a finished run's cost grows, from its own benchmark files.

    python bench/bench_scale.py --run . --figure scale.png

Loads the workflow in ``<run>`` (its ``config/config.yaml``) for the rules' benchmark and
output patterns, then reads ``<run>/benchmarks/`` (Snakemake's per-job files), the jobs' outputs
under ``<run>/results/`` and the pretrained models' weights under ``<run>/resources/models/``
(``bench/scale_model.py``) and prints:

* per rule family, the least-squares line wall seconds = a + b * size, with R^2, the number of
  jobs and the range of the sizes and seconds (wall seconds, not ``cpu_time``: Snakemake's
  ``cpu_time`` under-reports multi-threaded jobs), then the same for peak memory (MB);
* for the families whose size is parameters x positions, the effective floating-point rate of
  the run's CPU thread, 2 / b (2 operations per parameter per position; 6 / b for training);
* jobs and wall seconds per language and rule; tokens per unit (scoring) and LM positions per unit
  (LM-guided marginal) per language and model;
* the projection to ``--languages`` languages with a ``--params``-parameter model on an
  accelerator of ``--peak-tflops`` at ``--utilisation``, every input printed beside it;

and writes a figure (one panel per family: the jobs and the fitted line, log-log) to
``--figure``. The seconds are those of the run: on a loaded machine they carry its load.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "lib"))
sys.path.insert(0, str(ROOT / "bench"))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
import yaml  # noqa: E402

from fairppl.core.errors import InputError  # noqa: E402
from fairppl.core.io import atomic_path  # noqa: E402
import scale_model as scale  # noqa: E402


def figure(frame: pl.DataFrame, fits: pl.DataFrame, path: str) -> None:
    """One log-log panel per fitted family: the jobs (points) and the line a + b x."""
    rows = list(fits.iter_rows(named=True))
    columns = 4
    lines = math.ceil(len(rows) / columns)
    fig, axes = plt.subplots(lines, columns, figsize=(4.2 * columns, 3.4 * lines), squeeze=False)
    families = {f.name: f for f in scale.FAMILIES}
    for ax, fit in zip(axes.flat, rows):
        points = scale.family_points(frame, families[fit["family"]])
        for rule in sorted(set(points["rule"].to_list())):
            mine = points.filter(pl.col("rule") == rule)
            ax.scatter(mine["x"], mine["s"], s=12, alpha=0.7, label=rule)
        if fit["b"] is not None:
            x = np.geomspace(fit["x_min"], fit["x_max"], 50)
            ax.plot(x, fit["a"] + fit["b"] * x, color="black", lw=1,
                    label=f"{fit['a']:.3g} s + {fit['b']:.3g} s/unit\nR$^2$ = {fit['r2']:.2f}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"{fit['family']} ({fit['n']} jobs)", fontsize=9)
        ax.set_xlabel(fit["size_words"], fontsize=8)
        ax.set_ylabel("wall seconds", fontsize=8)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(rows):]:
        ax.axis("off")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or "png", dpi=110)
    plt.close(fig)


def du(path: Path) -> int:
    """Bytes of the files under ``path``."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", default=".", help="the run's folder (benchmarks/, results/, "
                        "resources/, config/config.yaml)")
    parser.add_argument("--figure", required=True, help="where to write the figure (.png, .pdf)")
    parser.add_argument("--languages", type=int, default=200)
    parser.add_argument("--params", type=float, default=7e9, help="parameters of the large model")
    parser.add_argument("--peak-tflops", type=float, default=989.0,
                        help="the accelerator's dense bf16 peak (H100 SXM: 989)")
    parser.add_argument("--utilisation", type=float, default=0.3)
    parser.add_argument("--score-units", type=int, default=100, help="units scored per language")
    parser.add_argument("--marginal-units", type=int, default=20,
                        help="units per language of the LM-guided marginal")
    args = parser.parse_args()
    run = Path(args.run)
    pl.Config.set_tbl_rows(200)
    pl.Config.set_tbl_cols(20)
    pl.Config.set_tbl_width_chars(200)
    pl.Config.set_fmt_str_lengths(40)
    try:
        config = yaml.safe_load((run / "config" / "config.yaml").read_text(encoding="utf-8"))
        rules = scale.workflow_rules(run)  # every path below: the rules' own patterns
        frame = scale.read_benchmarks(run / "benchmarks", rules)
        frame = scale.job_sizes(frame, run, config, rules)
    except InputError as err:
        sys.exit(f"error: {err}")
    print(f"{frame.height} jobs, {frame['s'].sum():.0f} s of wall time in all, "
          f"{frame['language'].drop_nulls().n_unique()} languages")

    fits = scale.fit_families(frame)
    print("\nWall seconds = a + b * size, per rule family (least squares)")
    print(fits.select("family", "size_words", "n", pl.col("a").round(3), "b", pl.col("r2").round(3),
                      "x_min", "x_max", "y_min", "y_max", pl.col("y_total").round(1)))
    memory = scale.fit_families(frame, y="max_rss_mb")
    print("\nPeak resident memory (MB) = a + b * size")
    print(memory.select("family", "n", pl.col("a").round(1), "b", pl.col("r2").round(3),
                        "y_min", "y_max"))

    print("\nEffective rate, k / b: k = 2 operations per parameter per position of a forward "
          "pass, 6 for training (forward and backward)")
    for fit in fits.filter(pl.col("size").str.starts_with("param")).iter_rows(named=True):
        k = 6 if fit["family"] == "Transformer training" else 2
        print(f"  {fit['family']:28s} b = {fit['b']:.4g} s per parameter-position: "
              f"{k / fit['b'] / 1e9:.1f} GFLOP/s")

    print("\nJobs and wall seconds per language")
    print(scale.jobs_per_language(frame))
    print("\nTokens per scored unit (Bible test units) per language and model")
    for rule in ("score_pretrained", "score_neural"):
        table = scale.per_unit(frame, rule, "tokens").filter(pl.col("corpus") == "bible")
        print(table.with_columns(pl.col("tokens_per_unit").round(1)))
    positions = scale.per_unit(frame, "marginal_lm", "positions")
    print(positions.with_columns(pl.col("positions_per_unit").round(0)))

    # Projection: the pretrained model's scoring and LM-guided marginal at the study's workload.
    pre = fits.filter(pl.col("family") == "pretrained scoring").row(0, named=True)
    mar = fits.filter(pl.col("family") == "LM-guided marginal").row(0, named=True)
    scored = scale.per_unit(frame, "score_pretrained", "tokens").filter(
        pl.col("corpus") == "bible")
    guided = positions.filter(pl.col("model") != "transformer")
    print(f"\nProjection: {args.languages} languages, {args.params:.3g} parameters, "
          f"{args.score_units} scored units and {args.marginal_units} marginal units per language, "
          f"{args.peak_tflops:g} TFLOP/s peak at {args.utilisation:g}")
    for label, tok, pos in [
        ("mean over measured models and languages", scored["tokens_per_unit"].mean(),
         guided["positions_per_unit"].mean()),
        ("largest measured (SmolLM2 on Hindi)", scored["tokens_per_unit"].max(),
         guided["positions_per_unit"].max())]:
        flops_score = scale.forward_flops(args.params, args.languages * args.score_units * tok)
        flops_marg = scale.forward_flops(args.params, args.languages * args.marginal_units * pos)
        cpu_score = pre["b"] * args.params * args.languages * args.score_units * tok / 3600
        cpu_marg = mar["b"] * args.params * args.languages * args.marginal_units * pos / 3600
        peak = args.peak_tflops * 1e12
        print(f"  {label}: {tok:.1f} tokens/unit, {pos:.0f} LM positions/unit")
        gpu_score = scale.gpu_hours(flops_score, peak, args.utilisation)
        gpu_marg = scale.gpu_hours(flops_marg, peak, args.utilisation)
        print(f"    scoring  {flops_score:.3g} FLOP; one CPU thread at the fitted rate "
              f"{cpu_score:.3g} h; accelerator {gpu_score:.3g} h")
        print(f"    marginal {flops_marg:.3g} FLOP; one CPU thread at the fitted rate "
              f"{cpu_marg:.3g} h; accelerator {gpu_marg:.3g} h")

    print("\nStorage of the run")
    results = run / "results"
    languages = frame.filter(pl.col("rule") == "train_ngram")["language"].n_unique()
    for name in sorted(p.name for p in results.iterdir() if p.is_dir()):
        size = du(results / name)
        print(f"  results/{name:20s} {size / 1e6:10.1f} MB")
    ngram = du(results / "ngram")
    print(f"  KenLM models: {ngram / 1e9:.2f} GB for {languages} languages, "
          f"{ngram / languages / 1e6:.0f} MB per language")
    models = run / "resources" / "models"
    if models.is_dir():
        for folder in sorted(models.iterdir()):
            print(f"  resources/models/{folder.name:16s} {du(folder) / 1e6:10.1f} MB")
    figure(frame, fits, args.figure)
    print(f"\nfigure: {args.figure}")


if __name__ == "__main__":
    main()
