"""Projection: the pretrained LMs' cost under a profile (default: config/gpu/config.yaml), from
measured seconds per unit and the profile's unit counts (figures only, no assertions;
docs/scale.md, "The GPU profile").

    python bench/bench_gpu_cost.py --units results/corpus/bible/units.parquet
    python bench/bench_gpu_cost.py --units ... --gpu marginal:smollm2-135m=0.25 \\
        --gpu marginal:gemma3-270m=0.25

Per stage (canonical scoring, the LM-guided marginal, the Shannon game's pretrained bettors) and
model it prints the units the profile runs (scoring, marginal: test units of every language the
model sheet gives the model; the game: truncations, one per word and one for the end, of the
test units of at most ``shannon.max_unit_chars`` characters of each playing language), the
seconds per unit it assumes and where that figure was measured, and the hours that make.

The default seconds per unit were measured on this repository's shared 2-core CPU, one thread
(scoring: two; :data:`CPU_SECONDS`, each with its source in docs/benchmarks.md): their hours are
CPU hours. A ``--gpu STAGE:MODEL=SECONDS`` figure, measured on a GPU, replaces one and its hours are
GPU-hours; every row says which. Without one no GPU-hours are claimed: a CPU thread's seconds do
not convert into a GPU's (the GPU's rate depends on how full its calls are: docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "lib"))

import polars as pl  # noqa: E402
import yaml  # noqa: E402

#: Seconds per unit on the shared 2-core CPU (one thread; scoring: two), and where each was
#: measured (docs/benchmarks.md; the load of other work on the machine is in them): scoring
#: per verse, the marginal per verse (K=32, M=16, the batched path of marginal.lm.pass_tokens),
#: the game per truncation (m = 1,002 outcomes).
CPU_SECONDS = {
    ("scoring", "smollm2-135m"): (0.152, "bench/bench_dtype.py, float32, 2 threads, 6 languages "
                                         "x 20 verses"),
    ("scoring", "gemma3-270m"): (0.211, "bench/bench_dtype.py, float32, 2 threads, 6 languages "
                                        "x 20 verses"),
    ("marginal", "smollm2-135m"): (3.0, "docs/benchmarks.md: ~300 positions/s x 526-1,916 "
                                        "positions per verse over 6 languages"),
    ("marginal", "gemma3-270m"): (11.0, "docs/benchmarks.md: ~100 positions/s x 334-2,253 "
                                        "positions per verse over 6 languages"),
    ("shannon", "smollm2-135m"): (5.5, "docs/benchmarks.md: bench_shannon_bets, English"),
    ("shannon", "gemma3-270m"): (12.1, "docs/benchmarks.md: bench_shannon_bets, English"),
}
STAGES = ("scoring", "marginal", "shannon")


def merged_config(profile: Path) -> dict:
    """config/config.yaml with ``profile`` merged over it as Snakemake merges --configfile:
    mappings key by key, everything else (lists included) replaced whole."""
    def merge(base, over):
        if isinstance(base, dict) and isinstance(over, dict):
            return {**base, **{k: merge(base.get(k), v) for k, v in over.items()}}
        return over
    base = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    return merge(base, yaml.safe_load(profile.read_text(encoding="utf-8")))


def sheet_rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def model_languages(config: dict, corpus: str) -> dict[str, list[str]]:
    """Model id -> the language ids of ``corpus`` it is run on (the sheet's `all`: every one)."""
    langs = [r["language"] for r in sheet_rows(ROOT / config["languages"])
             if r["corpus"] == corpus]
    out = {}
    for row in sheet_rows(ROOT / config["models"]):
        if corpus not in row["corpora"].split(","):
            continue
        mine = row["languages"].split(",")
        out[row["model"]] = langs if "all" in mine else [lang for lang in langs if lang in mine]
    return out


def unit_counts(config: dict, units: pl.DataFrame, corpus: str) -> dict:
    """(stage, model) -> (units run, languages) under ``config``."""
    test = units.filter(pl.col("corpus") == corpus, pl.col("split") == "test")
    per_lang = dict(test.group_by("language").len().iter_rows())
    models = model_languages(config, corpus)
    out = {}
    cap = config["scoring"].get("max_units")
    for model, langs in models.items():
        out[("scoring", model)] = (sum(min(per_lang.get(lang, 0), cap or 10**12)
                                       for lang in langs), len(langs))
    marg = config["marginal"]
    marg_langs = marg.get("languages")
    cap = marg["lm"].get("pretrained_max_units")
    if corpus in marg["corpora"] and marg["lm"]["estimators"]:
        for model, langs in models.items():
            langs = [lang for lang in langs if marg_langs is None or lang in marg_langs]
            out[("marginal", model)] = (sum(min(per_lang.get(lang, 0), cap or 10**12)
                                            for lang in langs), len(langs))
    game = config["shannon"]
    if corpus in game["corpora"] and "pretrained" in game["bettors"]:
        chars = game.get("max_unit_chars")
        cap = game.get("pretrained_max_units")
        playing = game["pretrained_languages"] or game["languages"]
        for model, langs in models.items():
            if game["pretrained_models"] is not None and model not in game["pretrained_models"]:
                continue
            langs = [lang for lang in langs if lang in playing and lang in game["languages"]]
            total = 0
            for lang in langs:
                texts = test.filter(pl.col("language") == lang)["text"].to_list()
                texts = [t for t in texts if chars is None or len(t) <= chars]
                if cap is not None:
                    step = max(1, len(texts) // cap) if texts else 1
                    texts = texts[::step][:cap]
                total += sum(len(t.split()) + 1 for t in texts)
            out[("shannon", model)] = (total, len(langs))
    return out


def parse_figures(items: list[str]) -> dict[tuple[str, str], float]:
    out = {}
    for item in items:
        try:
            key, value = item.split("=")
            stage, model = key.split(":")
            out[(stage, model)] = float(value)
        except ValueError:
            raise SystemExit(f"--gpu {item!r}: expected STAGE:MODEL=SECONDS, e.g. "
                             f"marginal:smollm2-135m=0.25") from None
        if stage not in STAGES:
            raise SystemExit(f"--gpu {item!r}: stage {stage!r} is not one of {', '.join(STAGES)}")
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default=str(ROOT / "config" / "gpu" / "config.yaml"))
    parser.add_argument("--units", default=str(ROOT / "results/corpus/bible/units.parquet"),
                        help="the prepared units.parquet of the corpus (unit counts, words)")
    parser.add_argument("--corpus", default="bible")
    parser.add_argument("--gpu", action="append", default=[], metavar="STAGE:MODEL=SECONDS",
                        help="a GPU-measured seconds per unit (verse; truncation for shannon)")
    args = parser.parse_args(argv)
    if not Path(args.units).is_file():
        raise SystemExit(f"--units {args.units}: no such file (a prepared units.parquet, e.g. "
                         "results/corpus/bible/units.parquet after `make study`)")
    config = merged_config(Path(args.profile))
    counts = unit_counts(config, pl.read_parquet(args.units), args.corpus)
    gpu = parse_figures(args.gpu)
    print(f"profile {args.profile}; units from {args.units} ({args.corpus} test split)")
    if not gpu:
        print("No GPU figure given: every row is CPU-measured (the shared 2-core CPU), its hours "
              "CPU-hours, not GPU-hours; no GPU was lent to these measurements.")
    print("\n| stage | model | languages | units | s/unit | measured on | hours |")
    print("|---|---|---|---|---|---|---|")
    totals = {"GPU": 0.0, "CPU": 0.0}
    for (stage, model), (n, langs) in sorted(counts.items(),
                                             key=lambda kv: (STAGES.index(kv[0][0]), kv[0][1])):
        if (stage, model) in gpu:
            seconds, where, kind = gpu[(stage, model)], "GPU (--gpu)", "GPU"
        elif (stage, model) in CPU_SECONDS:
            seconds, source = CPU_SECONDS[(stage, model)]
            where, kind = f"CPU ({source})", "CPU"
        else:
            print(f"| {stage} | {model} | {langs} | {n:,} | ? | no figure (give --gpu) | ? |")
            continue
        hours = n * seconds / 3600
        totals[kind] += hours
        print(f"| {stage} | {model} | {langs} | {n:,} | {seconds:g} | {where} | "
              f"{hours:,.1f} {kind}-hours |")
    print(f"\ntotal: {totals['GPU']:,.1f} GPU-hours (GPU-measured rows), "
          f"{totals['CPU']:,.1f} CPU-hours (CPU-measured rows)")


if __name__ == "__main__":
    main()
