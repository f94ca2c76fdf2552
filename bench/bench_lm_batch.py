"""Benchmark: occupancy of the LM-guided marginal, one unit per LM call against many units per
LM call (:mod:`fairppl.tokenlm.batch`), both against a bare batched forward of the same model,
in one process at one thread count (``make bench`` runs it; figures only, no assertions).

    python bench/bench_lm_batch.py --threads 1 -k 32 -m 16 --verses 6 --pass-tokens 1024
    python bench/bench_lm_batch.py --random-weights --config-dir DIR --device cuda \\
        --pass-tokens 8192 --verses 20

Per model (default: SmolLM2-135M, and Gemma-3-270M when installed; ``--models`` picks them) and
language it prints one row per path:

* **one unit**: ``lm_guided_marginal`` verse by verse (the K samples of one verse per LM call);
* **batched**: ``lm_guided_steps`` of all verses through ``run_many`` (the verses in flight share
  each LM call, about ``--pass-tokens`` tokens asked per call);

with seconds per verse, LM calls per verse, positions per call, positions per second and that
rate over the bare forward's (``model(input_ids, attention_mask)`` over the verses' canonical
tokens in right-padded batches of ``--bare-batch`` rows, timed before and after the two paths;
their mean). It checks that both paths drew the same samples and prints the largest log-weight
difference. A last line per language times the study's canonical scorer (``score_texts``,
``--score-batch`` units per pass; 0 leaves it out) on the same verses: seconds per unit. The verses' candidate lists are built before the timings (both paths use them).
``--lanes N`` adds a row for the batched path in N lanes (threads with their own sessions:
:func:`run_many`'s ``lanes``, config ``marginal.lm.lanes``), whose passes overlap the host's
work on a GPU. ``--stages`` runs the batched path once more, each session stage timed with the device waited
for at its end (:data:`fairppl.tokenlm.kv_tree.PROFILE`), and prints milliseconds per LM call
per stage and what is left (the units' own steps, :func:`run_many`): where a GPU's call goes,
the host's bookkeeping or the device's work (that run is slower by the waits; its total is
printed beside the batched row's).

``--random-weights`` builds each model from its saved ``config.json`` and tokenizer with random
weights (seeded), so the benchmark runs from the repository plus a few MB of tokenizer and config
files, e.g. on a GPU machine without the weights: speed does not depend on the weights' values
(the work does: a random model spreads the samples over many more tokenizations than a trained
one, 1.4-6.4 times the positions per verse on the study's verses, ``bench_weights_work.py``).
``--config-dir DIR`` reads those files from ``DIR/<model id>/`` instead of ``resources/models/<model id>/hf``; ``--copy-configs DIR`` writes
them there (everything of the folder but the weights) and exits; ``--bundle DIR`` writes them to
``DIR/configs`` and, beside them, the test units of ``--languages`` (and the train units of
``--bundle-train``, for ``bench_shannon_bets.py``'s outcomes) as a sealed ``DIR/units.parquet``:
what ``bench/bench_gpu.sh`` needs on a GPU machine. ``--device cuda`` runs on a GPU.
Verses: ``--units`` (a prepared ``units.parquet``) as ``marginal_lm`` picks them, else
consecutive KJV verses of the installed Bible from ``--unit`` (English only).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "lib"))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bench_lm_guided import bare_forward, sheet, verses_of  # noqa: E402
from fairppl.marginal.blocks import BlockCandidates  # noqa: E402
from fairppl.marginal.lm_guided import lm_guided_marginal, lm_guided_steps, plan_blocks  # noqa: E402
from fairppl.marginal.vocab import vocab_from_hf  # noqa: E402
from fairppl.tokenlm import kv_layout, kv_tree  # noqa: E402
from fairppl.tokenlm.batch import PASS_TOKENS, run_many  # noqa: E402
from fairppl.tokenlm.lm_hf import HFTokenLM  # noqa: E402

#: What a model folder holds besides its weights (copied by --copy-configs).
WEIGHTS = (".safetensors", ".bin", ".gguf", ".pt", ".pth")


def load(folder: Path, random_weights: bool, device):
    """(model, tokenizer) from ``folder``: the saved weights, or random ones from its config."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    if random_weights:
        config = AutoConfig.from_pretrained(folder)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    else:
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    return model.to(device).eval(), tok


def one_unit(lm, vocab, verses, encoded, cache, args):
    t0, calls, pos = time.perf_counter(), lm.calls, lm.positions
    out = [lm_guided_marginal(lm, vocab, text, default_ids=ids, K=args.k, L=args.L, M=args.m,
                              cache=cache, return_samples=True,
                              rng=np.random.default_rng(args.seed))
           for (_, text), ids in zip(verses, encoded)]
    return out, time.perf_counter() - t0, lm.calls - calls, lm.positions - pos


def batched(lm, vocab, verses, encoded, cache, args, pass_tokens, lanes=1):
    starts = [lambda meter, text=text, ids=ids: lm_guided_steps(
        lm, vocab, text, default_ids=ids, K=args.k, L=args.L, M=args.m, cache=cache,
        return_samples=True, rng=np.random.default_rng(args.seed), meter=meter)
        for (_, text), ids in zip(verses, encoded)]
    t0, calls, pos = time.perf_counter(), lm.calls, lm.positions
    out = [r for _, r in run_many(lm, starts, pass_tokens=pass_tokens, stats=args.stats,
                                  lanes=lanes)]
    return out, time.perf_counter() - t0, lm.calls - calls, lm.positions - pos


def stages(lm, vocab, verses, encoded, cache, args, plain: float) -> None:
    """The batched path once more with :data:`kv_tree.PROFILE` on: ms per LM call per stage."""
    kv_tree.PROFILE, kept, args.stats = {}, args.stats, None
    prof = kv_tree.PROFILE
    try:
        _, seconds, calls, _ = batched(lm, vocab, verses, encoded, cache, args,
                                       args.pass_tokens)
    finally:
        kv_tree.PROFILE, args.stats = None, kept
    passes = prof.pop("passes", 0)
    rest = seconds - sum(prof.values())
    parts = ", ".join(f"{k} {1000 * v / calls:.1f}" for k, v in prof.items())
    print(f"stages of the batched path, ms per LM call ({calls} calls, {passes} passes; the "
          f"device waited for after each stage): {parts}, the rest (units' steps, run_many) "
          f"{1000 * rest / calls:.1f}; total {1000 * seconds / calls:.1f} against "
          f"{1000 * plain / calls:.1f} without the waits")


def bench_model(model_id: str, folder: Path, special: dict, verses_by_lang: dict, args) -> None:
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    model, tok = load(folder, args.random_weights, device)
    if args.dtype != "float32":
        model.to(getattr(torch, args.dtype))
    frame = dict(start_token=special.get("bos") or None, end_token=special.get("eos") or None)
    lm = HFTokenLM(model, tok, device=device, **frame)
    vocab = vocab_from_hf(tok)
    where = (torch.cuda.get_device_name(device) if device.type == "cuda"
             else f"cpu, {torch.get_num_threads()} threads")
    weights = ("RANDOM weights from config.json (speed does not depend on the values)"
               if args.random_weights else "trained weights") + f", {args.dtype}"
    for lang, verses in verses_by_lang.items():
        encoded = [tok(t, add_special_tokens=False, split_special_tokens=True)["input_ids"]
                   for _, t in verses]
        canonical = [[lm.start_id, *ids] for ids in encoded]
        n = len(verses)
        print(f"\n== {model_id} on {where}, {weights}; {lang}, {n} verses ({verses[0][0]} ...), "
              f"K={args.k}, M={args.m}, pass_tokens={args.pass_tokens}", flush=True)
        cache = BlockCandidates(vocab, args.m)
        for (_, text), ids in zip(verses, encoded):
            plan_blocks(vocab, text, ids, args.L, args.m, cache)  # candidates, untimed
        # warm-up outside the timings (first-call allocations) on both paths
        lm_guided_marginal(lm, vocab, verses[0][1], default_ids=encoded[0], K=2, L=args.L,
                           M=args.m, cache=cache, rng=np.random.default_rng(0))
        batched(lm, vocab, verses[:2], encoded[:2], cache, args, args.pass_tokens)
        args.stats = {}
        bare1 = bare_forward(model, canonical, args.bare_batch, device)
        rows, row_stats = {}, {}
        for r in args.layouts:
            kv_layout.LAYOUT = r
            tag = f" {r}" if len(args.layouts) > 1 else ""
            rows["one unit" + tag] = one_unit(lm, vocab, verses, encoded, cache, args)
            args.stats = row_stats[tag] = {}
            rows["batched" + tag] = batched(lm, vocab, verses, encoded, cache, args,
                                            args.pass_tokens)
        if args.lanes > 1:  # the first layout's batched path in lanes (LAYOUT: the last)
            kv_layout.LAYOUT = args.layouts[0]
            args.stats = {}
            rows[f"batched {args.lanes} lanes"] = batched(lm, vocab, verses, encoded, cache,
                                                          args, args.pass_tokens, args.lanes)
        bare2 = bare_forward(model, canonical, args.bare_batch, device)
        bare = float(np.mean([b[1] / b[0] for b in (bare1, bare2)]))
        print(f"bare batched forward: {bare1[1] / bare1[0]:,.0f} positions/s before, "
              f"{bare2[1] / bare2[0]:,.0f} after ({args.bare_batch} rows per pass)")
        if args.score_batch:
            seconds, tokens = scoring(model, tok, [t for _, t in verses], frame, args.score_batch,
                                      device)
            print(f"canonical scoring (score_texts, {args.score_batch} units per pass): "
                  f"{seconds / n:.4f} s/unit, {tokens / n:.1f} tokens/unit, "
                  f"{tokens / seconds:,.0f} tokens/s")
        print(f"{'path':<18} {'s/verse':>8} {'calls/verse':>12} {'positions/call':>15} "
              f"{'positions/s':>12} {'vs bare':>8}")
        for name, (_, seconds, calls, positions) in rows.items():
            print(f"{name:<18} {seconds / n:>8.3f} {calls / n:>12.1f} {positions / calls:>15.0f} "
                  f"{positions / seconds:>12,.0f} {positions / seconds / bare:>8.2f}")
        tag = f" {args.layouts[0]}" if len(args.layouts) > 1 else ""
        args.stats = row_stats[tag]
        (alone, s1, c1, _), (many, s2, c2, _) = rows["one unit" + tag], rows["batched" + tag]
        same = all(a.samples == b.samples for a, b in zip(alone, many))
        diffs = [float(np.abs(a.log_weights - b.log_weights).max()) for a, b in zip(alone, many)]
        diff = max(diffs)
        worst = int(np.argmax(diffs))
        factor = args.stats["unit_calls"] / c2
        if args.lanes > 1:
            lanes = rows[f"batched {args.lanes} lanes"]
            print(f"batched in {args.lanes} lanes / batched: time {lanes[1] / s2:.2f}; same "
                  f"samples {all(a.samples == b.samples for a, b in zip(many, lanes[0]))}")
        if args.stages:
            kv_layout.LAYOUT = args.layouts[0]
            stages(lm, vocab, verses, encoded, cache, args, rows["batched" + tag][1])
        print(f"batched / one unit: LM calls {c2 / c1:.2f}, batching factor {factor:.1f} units "
              f"per LM call (1/{factor:.1f} = {1 / factor:.2f}; one-unit calls per request "
              f"{c1 / args.stats['requests']:.2f}); time {s2 / s1:.2f}; same samples {same}, max "
              f"|log-weight difference| {diff:.1e} nats (verse {verses[worst][0]}; median over "
              f"verses {np.median(diffs):.1e})", flush=True)


def scoring(model, tok, texts: list[str], frame: dict, batch: int, device) -> tuple[float, int]:
    """Seconds and scored tokens of the study's canonical scorer (``score_texts``) over
    ``texts`` in passes of ``batch`` units (the first pass again before, untimed, as warm-up)."""
    from fairppl.lm.scoring import score_texts

    kw = dict(batch_size=batch, progress=False, device=device, start_token=frame["start_token"],
              end_token=frame["end_token"])
    score_texts(model, tok, texts[:batch], **kw)
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    units = score_texts(model, tok, texts, **kw)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start, sum(len(u.token_ids) for u in units)


def bundle(ids: list[str], target: Path, units: str, languages: list[str],
           train: list[str]) -> None:
    """What a GPU machine without the study needs to run this benchmark and
    ``bench_shannon_bets.py`` on the study's own units: ``configs/<model>/`` (everything of each
    model folder but the weights) and ``units.parquet`` (the test split of ``languages`` and the
    train split of ``train``, sealed, so that ``read_split`` picks the same units as here)."""
    import polars as pl

    from fairppl.core.io import write_table

    copy_configs(ids, target / "configs")
    frame = pl.read_parquet(units).filter(
        ((pl.col("split") == "test") & pl.col("language").is_in(languages))
        | ((pl.col("split") == "train") & pl.col("language").is_in(train)))
    write_table(frame, parquet=target / "units.parquet")
    print(f"{target / 'units.parquet'}: {frame.height} units "
          f"({(target / 'units.parquet').stat().st_size / 1e6:.1f} MB)")


def copy_configs(ids: list[str], target: Path) -> None:
    for model_id in ids:
        src = ROOT / "resources/models" / model_id / "hf"
        if not src.is_dir():
            raise SystemExit(f"{src}: not installed (make resources)")
        dst = target / model_id
        dst.mkdir(parents=True, exist_ok=True)
        for f in src.iterdir():
            if f.is_file() and not f.name.endswith(WEIGHTS) and not f.name.startswith("."):
                shutil.copy2(f, dst / f.name)
        size = sum(f.stat().st_size for f in dst.iterdir())
        print(f"{dst}: {len(list(dst.iterdir()))} files, {size / 1e6:.1f} MB (no weights)")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="*", default=None,
                        help="model ids of config/models.tsv (default: those installed, or "
                             "those under --config-dir)")
    parser.add_argument("--units", default=None, help="a prepared units.parquet")
    parser.add_argument("--languages", nargs="*", default=["eng"],
                        help="language ids (with --units; KJV English otherwise)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--unit", default="43.001.001",
                        help="first KJV verse without --units (43.001.001: John 1:1)")
    parser.add_argument("--verses", type=int, default=6)
    parser.add_argument("-k", type=int, default=32, help="samples K (the study's: 32)")
    parser.add_argument("-m", type=int, default=16, help="candidates per block M (study: 16)")
    parser.add_argument("-L", type=int, default=None, help="max block length (characters)")
    parser.add_argument("--pass-tokens", type=int, default=PASS_TOKENS,
                        help=f"tokens per LM call of the batched path (default {PASS_TOKENS}, "
                             f"for a CPU thread; 8192 or more on a GPU)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--bare-batch", type=int, default=8, help="rows per bare forward pass")
    parser.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda if any)")
    parser.add_argument("--random-weights", action="store_true",
                        help="build each model from its config.json with random weights")
    parser.add_argument("--config-dir", type=Path, default=None,
                        help="DIR/<model id>/ holds config.json and the tokenizer files")
    parser.add_argument("--copy-configs", type=Path, default=None, metavar="DIR",
                        help="copy the installed models' config and tokenizer files (no "
                             "weights) to DIR/<model id>/ and exit")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--layouts", nargs="+", default=[kv_layout.LAYOUT],
                        choices=kv_layout.LAYOUTS,
                        help="how KVTree lays out a pass (rows, one row, auto); several: one "
                             "pair of rows each, the first compared")
    parser.add_argument("--lanes", type=int, default=1,
                        help="also time the batched path in this many lanes (run_many's lanes, "
                             "config marginal.lm.lanes)")
    parser.add_argument("--stages", action="store_true",
                        help="also time the batched path's session stages (kv_tree.PROFILE)")
    parser.add_argument("--dtype", default="float32",
                        choices=["float32", "float64", "bfloat16", "float16"],
                        help="cast the model (float64: the two paths must agree to ~1e-9 nats)")
    parser.add_argument("--score-batch", type=int, default=64,
                        help="units per pass of the canonical scoring row (0: no such row)")
    parser.add_argument("--bundle", type=Path, default=None, metavar="DIR",
                        help="write DIR/configs and DIR/units.parquet (see bundle()) and exit")
    parser.add_argument("--bundle-train", nargs="*", default=["eng"],
                        help="languages whose train split goes into --bundle's units")
    args = parser.parse_args(argv)
    args.stats = None
    torch.set_num_threads(args.threads)
    models = sheet()
    base = args.config_dir or ROOT / "resources/models"
    sub = "" if args.config_dir else "hf"
    ids = args.models or [m for m in models if (base / m / sub).is_dir()]
    if args.copy_configs:
        copy_configs(ids, args.copy_configs)
        return
    if args.bundle:
        bundle(ids, args.bundle, args.units or str(ROOT / "results/corpus/bible/units.parquet"),
               args.languages, args.bundle_train)
        return
    if args.config_dir and not args.random_weights:
        raise SystemExit("--config-dir holds no weights: give --random-weights with it")
    if not ids:
        raise SystemExit(f"no model under {base}: run `make resources` (or name folders with "
                         f"--models, --config-dir)")
    verses = verses_of(args)
    for model_id in ids:
        if model_id not in models:
            raise SystemExit(f"--models {model_id}: not in config/models.tsv")
        folder = base / model_id / sub
        if not (folder / "config.json").is_file():
            raise SystemExit(f"{folder}: no config.json (make resources, or --copy-configs)")
        bench_model(model_id, folder, models[model_id], verses, args)


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"wall {time.perf_counter() - start:.1f} s")
