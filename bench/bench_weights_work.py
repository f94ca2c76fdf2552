"""Benchmark: the LM-guided marginal's work per verse with the trained weights against random
weights built from the same config (figures only, no assertions; docs/scale.md, "The floor").

    python bench/bench_weights_work.py --units results/corpus/bible/units.parquet \\
        --languages eng deu hin --verses 20 --pass-tokens 16384

The GPU figures (``bench/bench_gpu.sh``) are measured with random weights, because the weights do
not travel to the GPU machine. Speed per position does not depend on the weights' values, but the
number of positions does: a random model spreads the K samples over other tokenizations than a
trained one, and every distinct prefix of a sample is a position the LM runs. Positions and LM
calls are counts, the same on any device (up to float32's rounding in the sampling), so this
CPU run says by how much the GPU's random-weight seconds per verse over- or understate the
trained model's work.

Per model (default: those installed of SmolLM2-135M and Gemma-3-270M) and language it runs the
batched path (``run_many``, ``--pass-tokens`` per call) over the same verses (picked as
``marginal_lm`` picks them), K, M and seed with each set of weights, and prints per verse:
positions, LM calls and CPU seconds, and the ratio trained / random of the positions (per
language, and over the languages as a ratio of sums and the mean of the per-language ratios).
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

from bench_lm_batch import batched, load  # noqa: E402
from bench_lm_guided import sheet, verses_of  # noqa: E402
from fairppl.marginal.blocks import BlockCandidates  # noqa: E402
from fairppl.marginal.lm_guided import plan_blocks  # noqa: E402
from fairppl.marginal.vocab import vocab_from_hf  # noqa: E402
from fairppl.tokenlm.lm_hf import HFTokenLM  # noqa: E402


def work(model_id: str, folder: Path, special: dict, verses_by_lang: dict, args) -> list[tuple]:
    """Rows (language, verses, {weights: (positions, calls, seconds)}) of one model."""
    device = torch.device("cpu")
    frame = dict(start_token=special.get("bos") or None, end_token=special.get("eos") or None)
    out = {lang: {} for lang in verses_by_lang}
    for weights in ("trained", "random"):
        model, tok = load(folder, weights == "random", device)
        lm = HFTokenLM(model, tok, device=device, **frame)
        vocab = vocab_from_hf(tok)
        for lang, verses in verses_by_lang.items():
            encoded = [tok(t, add_special_tokens=False, split_special_tokens=True)["input_ids"]
                       for _, t in verses]
            cache = BlockCandidates(vocab, args.m)
            for (_, text), ids in zip(verses, encoded):
                plan_blocks(vocab, text, ids, args.L, args.m, cache)
            _, seconds, calls, positions = batched(lm, vocab, verses, encoded, cache, args,
                                                   args.pass_tokens)
            out[lang][weights] = (positions, calls, seconds)
            n = len(verses)
            print(f"  {model_id} {lang} {weights}: {positions / n:,.0f} positions/verse, "
                  f"{calls / n:.1f} LM calls/verse, {seconds / n:.2f} s/verse (CPU)", flush=True)
        del model, lm
    return [(lang, len(verses_by_lang[lang]), out[lang]) for lang in verses_by_lang]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="*", default=None,
                        help="model ids of config/models.tsv (default: those installed)")
    parser.add_argument("--units", default=str(ROOT / "results/corpus/bible/units.parquet"),
                        help="a prepared units.parquet")
    parser.add_argument("--languages", nargs="*", default=["eng", "deu", "hin"])
    parser.add_argument("--split", default="test")
    parser.add_argument("--verses", type=int, default=20)
    parser.add_argument("-k", type=int, default=32, help="samples K (the study's: 32)")
    parser.add_argument("-m", type=int, default=16, help="candidates per block M (study: 16)")
    parser.add_argument("-L", type=int, default=None, help="max block length (characters)")
    parser.add_argument("--pass-tokens", type=int, default=16384,
                        help="tokens per LM call (default 16384, the GPU profile's)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.stats, args.unit = None, None
    if not Path(args.units).is_file():
        raise SystemExit(f"--units {args.units}: no such file (a prepared units.parquet, e.g. "
                         "results/corpus/bible/units.parquet after `make study` or `make test`)")
    torch.set_num_threads(args.threads)
    models = sheet()
    base = ROOT / "resources/models"
    ids = args.models or [m for m in models if (base / m / "hf" / "config.json").is_file()]
    if not ids:
        raise SystemExit(f"no model under {base}: run `make resources`")
    verses = verses_of(args)
    print(f"K={args.k}, M={args.m}, seed {args.seed}, pass_tokens={args.pass_tokens}, "
          f"{args.verses} {args.split} verses per language; CPU, {args.threads} threads, float32")
    table = []
    for model_id in ids:
        if model_id not in models:
            raise SystemExit(f"--models {model_id}: not in config/models.tsv")
        table.append((model_id, work(model_id, base / model_id / "hf", models[model_id], verses,
                                     args)))
    print("\n| model | language | verses | trained positions/verse | random positions/verse "
          "| trained / random | trained LM calls/verse | random LM calls/verse |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for model_id, rows in table:
        ratios = []
        for lang, n, w in rows:
            (pt, ct, _), (pr, cr, _) = w["trained"], w["random"]
            ratios.append(pt / pr)
            print(f"| {model_id} | {lang} | {n} | {pt / n:,.0f} | {pr / n:,.0f} | {pt / pr:.2f} "
                  f"| {ct / n:.1f} | {cr / n:.1f} |")
        pt = sum(w["trained"][0] for _, _, w in rows)
        pr = sum(w["random"][0] for _, _, w in rows)
        print(f"| {model_id} | all {len(rows)} | | | | {pt / pr:.2f} (ratio of sums; mean of "
              f"ratios {np.mean(ratios):.2f}) | | |")


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"wall {time.perf_counter() - start:.1f} s")
