"""Benchmark: how far reduced precision (``pretrained.dtype``: bfloat16, float16) moves the
pretrained LMs' numbers against float32, on the study's units (figures only, no assertions;
docs/benchmarks.md, "Reduced precision").

    python bench/bench_dtype.py --verses 10 --marginal-verses 2 -k 8

Per model (default: those of config/models.tsv installed under resources/models) and dtype it
loads the model with :func:`fairppl.lm.cache.load_lm` (as the study does) and runs, on the
``--verses`` evenly spaced test units of each language (``--units``: the study's prepared
``units.parquet``):

* **canonical scoring** (:func:`fairppl.lm.scoring.score_texts`, the model sheet's start and end
  tokens): bits per verse; the table gives the mean and the largest |delta| against float32;
* **the marginal gap** on the first ``--marginal-verses`` of them: LM-guided estimate minus the
  default tokenization's log-probability (:func:`fairppl.marginal.lm_guided.lm_guided_marginal`,
  ``-k`` samples, ``-m`` candidates, the same seed in every dtype), in bits per verse; the table
  gives the mean and the largest |delta of the gap|;
* **the language ranking** by mean bits per verse: Spearman's rho against float32's ranking and
  the adjacent pairs of float32's order that swap;
* **against the intervals**: the largest shift of a paired difference between two languages'
  mean bits per verse (delta of language a minus delta of language b) next to the smallest
  half-width of the float32 paired bootstrap intervals of those differences on the same verses
  and the median half-width of the float32 gap's per-verse Monte Carlo interval (90% BCa, the
  per-sequence intervals of the report's marginal section), which the delta of the gap is read
  against (:data:`fairppl.lm.precision.MEASURED` keeps the figures the start-up check uses).

On a CPU, torch runs bfloat16 and float16 matrix products through slower kernels than float32:
the seconds per verse printed here say nothing about a GPU's.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "lib"))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bench_lm_guided import sheet, study_verses  # noqa: E402
from fairppl.core.errors import ScoringError  # noqa: E402
from fairppl.lm.cache import DTYPES, load_lm  # noqa: E402
from fairppl.lm.scoring import score_texts  # noqa: E402
from fairppl.marginal.lm_guided import lm_guided_marginal  # noqa: E402
from fairppl.marginal.vocab import vocab_from_hf  # noqa: E402
from fairppl.tokenlm.lm_hf import HFTokenLM  # noqa: E402

LN2 = float(np.log(2.0))


def spearman(a: list[float], b: list[float]) -> float:
    """Spearman's rho of two equally long lists without ties (ranks' Pearson correlation)."""
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    if len(a) < 2:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def paired_half_widths(bits: dict[str, np.ndarray], replicates: int, level: float,
                       seed: int) -> dict[tuple[str, str], float]:
    """Half-width of the paired bootstrap interval of mean(bits a - bits b) for every pair."""
    langs = list(bits)
    n = len(next(iter(bits.values())))
    draws = np.random.default_rng(seed).integers(0, n, size=(replicates, n))
    out = {}
    for i, a in enumerate(langs):
        for b in langs[i + 1:]:
            diff = bits[a] - bits[b]
            means = diff[draws].mean(axis=1)
            lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
            out[(a, b)] = float(hi - lo) / 2
    return out


def run_dtype(folder: Path, special: dict, dtype: str, verses: dict, args) -> dict:
    model, tok = load_lm(folder, device="cpu", dtype=dtype)
    frame = dict(start_token=special.get("bos") or None, end_token=special.get("eos") or None)
    lm = HFTokenLM(model, tok, **frame)
    vocab = vocab_from_hf(tok)
    out = {"bits": {}, "gap": {}, "half": [], "score_s": 0.0, "marginal_s": 0.0,
           "n_marginal": 0}
    for lang, rows in verses.items():
        texts = [t for _, t in rows]
        t0 = time.perf_counter()
        scored = score_texts(model, tok, texts, batch_size=16, progress=False, **frame)
        out["score_s"] += time.perf_counter() - t0
        out["bits"][lang] = np.array([u.bits for u in scored])
        gaps = []
        t0 = time.perf_counter()
        for text in texts[:args.marginal_verses]:
            ids = tok(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]
            r = lm_guided_marginal(lm, vocab, text, default_ids=ids, K=args.k, M=args.m,
                                   rng=np.random.default_rng(args.seed))
            gaps.append((r.logp - r.logp_default) / LN2)
            out["half"].append((r.ci_high - r.ci_low) / 2 / LN2)
        out["marginal_s"] += time.perf_counter() - t0
        out["n_marginal"] += len(gaps)
        out["gap"][lang] = np.array(gaps)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="*", default=None,
                        help="model ids of config/models.tsv (default: those installed)")
    parser.add_argument("--dtypes", nargs="*", default=list(DTYPES[1:]), choices=DTYPES[1:],
                        help="reduced precisions to compare with float32")
    parser.add_argument("--languages", nargs="*", default=["eng", "deu", "rus", "ara", "hin",
                                                           "zho"])
    parser.add_argument("--units", default=str(ROOT / "results/corpus/bible/units.parquet"),
                        help="the study's prepared units.parquet")
    parser.add_argument("--split", default="test")
    parser.add_argument("--verses", type=int, default=10, help="scored units per language")
    parser.add_argument("--marginal-verses", type=int, default=2,
                        help="of those, units per language whose marginal gap is estimated")
    parser.add_argument("-k", type=int, default=8, help="LM-guided samples per unit")
    parser.add_argument("-m", type=int, default=16, help="LM-guided candidates per block")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    parser.add_argument("--replicates", type=int, default=1000, help="bootstrap replicates")
    parser.add_argument("--ci-level", type=float, default=0.95)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    models = sheet()
    ids = args.models or [m for m in models
                          if (ROOT / "resources/models" / m / "hf" / "config.json").is_file()]
    if not ids:
        raise SystemExit("no pretrained LM installed under resources/models/<model>/hf "
                         "(make study installs them)")
    if not Path(args.units).is_file():
        raise SystemExit(f"--units {args.units}: no such file (a prepared units.parquet, e.g. "
                         "results/corpus/bible/units.parquet after `make study`)")
    verses = {lang: study_verses(args.units, lang, args.split, args.verses)
              for lang in args.languages}
    print(f"CPU ({torch.get_num_threads()} threads), torch {torch.__version__}; "
          f"{args.verses} {args.split} units per language ({', '.join(args.languages)}), "
          f"marginal gap on {args.marginal_verses} of them (K={args.k}, M={args.m})")
    header = ("| model | dtype | mean abs delta bits/verse | max abs delta bits/verse | "
              "mean abs delta gap (bits) | max abs delta gap | Spearman | adjacent swaps | "
              "max shift of a paired difference | smallest paired half-width | "
              "median gap half-width | scoring s/verse | marginal s/verse |")
    rows = []
    for mid in ids:
        folder = ROOT / "resources/models" / mid / "hf"
        special = models[mid]
        base = run_dtype(folder, special, "float32", verses, args)
        means32 = {lang: float(b.mean()) for lang, b in base["bits"].items()}
        order32 = sorted(means32, key=means32.get)
        half = paired_half_widths(base["bits"], args.replicates, args.ci_level, args.seed)
        n_scored = sum(len(b) for b in base["bits"].values())
        print(f"\n{mid} float32: mean bits/verse " + ", ".join(
            f"{lang} {means32[lang]:.1f}" for lang in order32) + "; gap (bits) " + ", ".join(
            f"{lang} {base['gap'][lang].mean():.3f}" for lang in args.languages), flush=True)
        gap_half = float(np.median(base["half"])) if base["half"] else float("nan")
        rows.append((mid, "float32", 0, 0, 0, 0, 1.0, "-", 0, min(half.values()), gap_half,
                     base["score_s"] / n_scored, base["marginal_s"] / max(1, base["n_marginal"])))
        for dtype in args.dtypes:
            try:
                got = run_dtype(folder, special, dtype, verses, args)
            except ScoringError as err:  # e.g. float16 overflows to NaN/inf
                print(f"{mid} {dtype}: failed: {err}", flush=True)
                rows.append((mid, dtype, f"failed: {str(err).split(':', 1)[0]}: NaN/inf"))
                continue
            delta = np.concatenate([got["bits"][lang] - base["bits"][lang]
                                    for lang in args.languages])
            dgap = np.concatenate([got["gap"][lang] - base["gap"][lang]
                                   for lang in args.languages])
            means = {lang: float(b.mean()) for lang, b in got["bits"].items()}
            order = sorted(means, key=means.get)
            rho = spearman([means32[lang] for lang in args.languages],
                           [means[lang] for lang in args.languages])
            swaps = [f"{a}/{b}" for a, b in zip(order32, order32[1:])
                     if order.index(a) > order.index(b)]
            shift = {lang: means[lang] - means32[lang] for lang in args.languages}
            pair_shift = max(abs(shift[a] - shift[b]) for a, b in half)
            print(f"{mid} {dtype}: mean bits/verse " + ", ".join(
                f"{lang} {means[lang]:.1f}" for lang in order), flush=True)
            rows.append((mid, dtype, float(np.abs(delta).mean()), float(np.abs(delta).max()),
                         float(np.abs(dgap).mean()) if dgap.size else float("nan"),
                         float(np.abs(dgap).max()) if dgap.size else float("nan"), rho,
                         ", ".join(swaps) or "none", pair_shift, min(half.values()), gap_half,
                         got["score_s"] / n_scored,
                         got["marginal_s"] / max(1, got["n_marginal"])))
    print("\n" + header)
    print("|" + "---|" * header.count(" | ") + "---|")
    for r in rows:
        if len(r) == 3:
            print(f"| {r[0]} | {r[1]} | {r[2]} |" + " |" * 10)
            continue
        print(f"| {r[0]} | {r[1]} | {r[2]:.4f} | {r[3]:.4f} | {r[4]:.4f} | {r[5]:.4f} | "
              f"{r[6]:.2f} | {r[7]} | {r[8]:.4f} | {r[9]:.2f} | {r[10]:.3f} | {r[11]:.3f} | "
              f"{r[12]:.2f} |")


if __name__ == "__main__":
    main()
