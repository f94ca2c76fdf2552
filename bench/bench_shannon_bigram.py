"""Benchmark: the paper's Tables 1 and 2 for its eq. 7 bigram on one language of a prepared corpus.

    python bench/bench_shannon_bigram.py --units results/corpus/bible/units.parquet --language fra

Builds the game's outcomes from the train split (``--vocab-size`` most frequent words, ``<unk>``,
``</s>``), fits fairppl.shannon.bigram.DiscountBigram, picks alpha on the dev split, and on the
test split prints, with the seconds each step took:

* the likelihood perplexity and the exhaustive gambling perplexity of the same bets (eq. 3; their
  relative difference must be below 1e-9);
* Table 1: for each n_t, 20 draws of consecutive truncations and of randomized truncations (one
  per distinct unit: uniformly over units, a mean over units shown for contrast; systematically
  as in the paper; length-weighted where the systematic scheme cannot give distinct units),
  eq. 8's geometric mean and 95% bounds;
* Table 2: for each l, the gambling perplexity of lists limited to the l best bets (with the
  count of lists failing the consistency check) and Shannon's perplexity bounds with the uniform
  and the Zipf tail.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "lib"))

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from fairppl.core.errors import InputError  # noqa: E402
from fairppl.shannon import gambling, ranks  # noqa: E402
from fairppl.shannon.bigram import DiscountBigram  # noqa: E402
from fairppl.shannon.outcomes import build_outcomes, contexts, unit_outcomes  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--units", default="results/corpus/bible/units.parquet")
    parser.add_argument("--language", default="fra")
    parser.add_argument("--vocab-size", type=int, default=10000)
    parser.add_argument("--grid", default="0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9")
    parser.add_argument("--n-t", default="100,200,500,1000,2000")
    parser.add_argument("--lengths", default="1,10,100,1000,5000")
    args = parser.parse_args()

    frame = pl.read_parquet(args.units).filter(pl.col("language") == args.language)
    split = {s: frame.filter(pl.col("split") == s).sort("position")["text"].to_list()
             for s in ("train", "dev", "test")}
    clock = time.perf_counter()
    outcomes = build_outcomes(split["train"], args.vocab_size)
    model = DiscountBigram.fit(split["train"], outcomes, 0.5)
    alpha = model.select_alpha(split["dev"], [float(a) for a in args.grid.split(",")])
    model = model.with_alpha(alpha)
    print(f"{args.language}: m = {outcomes.m}, alpha = {alpha} (dev), units train/dev/test = "
          f"{len(split['train'])}/{len(split['dev'])}/{len(split['test'])}, zero outcomes "
          f"{model.zero_outcomes}  [{time.perf_counter() - clock:.1f} s]")

    clock = time.perf_counter()
    m = outcomes.m
    lengths = [int(x) for x in args.lengths.split(",") if int(x) < m] + [m]
    per_unit, rows = [], []
    for text in split["test"]:
        logs = []
        for context, correct in zip(contexts(text), unit_outcomes(text, outcomes)):
            row = gambling.summarize_bets(model.bets(model.history(context)),
                                          outcomes.index[correct], lengths)
            rows.append(row)
            logs.append(row["log_bet"])
        per_unit.append(np.array(logs))
    log_bets = np.concatenate(per_unit)
    n = log_bets.size
    bet_seconds = time.perf_counter() - clock
    likelihood = model.perplexity(split["test"])
    exhaustive = gambling.gambling_perplexity(log_bets)
    print(f"test: {n} truncations, {bet_seconds / n * 1e6:.0f} us per truncation; likelihood "
          f"perplexity {likelihood:.4f}, exhaustive gambling {exhaustive:.4f} (relative "
          f"difference {abs(exhaustive / likelihood - 1):.1e})")

    print("\nTable 1: n_t | consecutive | randomized (units: a mean over units) | randomized "
          "(systematic) | randomized (weighted)")
    for n_t in [int(x) for x in args.n_t.split(",")]:
        cells = []
        for name in ("consecutive", "units", "systematic", "weighted"):
            try:
                if name == "consecutive":
                    qs = gambling.consecutive_draws(log_bets, n_t)
                else:
                    qs = gambling.randomized_draws(per_unit, n_t, sampling=name)
            except InputError as err:  # e.g. n_t too large for systematic sampling
                cells.append(f"(refused: {str(err)[:30]})")
                continue
            s = gambling.draw_summary(qs)
            cells.append(f"{s['perplexity']:8.2f} [{s['low']:7.2f}, {s['high']:7.2f}]")
        print(f"{n_t:6d} | " + " | ".join(cells))

    rank_values = np.array([r["rank"] for r in rows])
    q = ranks.shared_rank_frequencies([r["rank_tied_first"] for r in rows],
                                      [r["n_tied"] for r in rows], m)
    print("\nTable 2: l | gambling (inconsistent lists) | uniform bounds | Zipf bounds")
    for i, length in enumerate(lengths):
        listed = [r["listed_sum"][i] for r in rows]
        bad = sum(gambling.consistency_problem(r["listed_sum"][i], r["listed_last"][i], m,
                                               length) is not None for r in rows)
        limited = gambling.gambling_perplexity(
            gambling.limited_log_bets(log_bets, rank_values, listed, m, length))
        cells = [f"{limited:9.2f} ({bad})"]
        for tail in ranks.TAILS:
            low, high = ranks.bounds_as_perplexity(
                ranks.shannon_bounds_limited(q[:length], m, length, tail))
            cells.append(f"{low:8.2f} {high:8.2f}")
        print(f"{length:6d} | " + " | ".join(cells))
    print(f"\nlikelihood perplexity {likelihood:.2f}; {len(ranks.rank_histogram(rank_values))} "
          f"distinct ranks seen, q_1 = {q[0]:.4f}")


if __name__ == "__main__":
    main()
