"""Benchmark: the cost of exact word bets from a token-level LM in the Shannon game
(:class:`fairppl.shannon.neural.TokenBettor`: the m words' tokens as one prefix tree after each
context, the context's keys/values kept from one truncation to the next) against a naive
per-word forward (start + context + word, one row per word, batched, nothing shared). Figures
only, no assertions.

    OMP_NUM_THREADS=1 python bench/bench_shannon_bets.py --threads 1 --verses 3 \\
        --units results/corpus/bible/units.parquet \\
        --model char=results/neural/bible/eng/char/model \\
        --model spm=results/neural/bible/eng/spm-unigram-4000/model \\
        --model smollm2-135m=resources/models/smollm2-135m/hf

Outcomes: the ``--vocab`` most frequent words of the language's train split, ``<unk>`` and
``</s>`` (m = vocab + 2). Evaluation units: ``--verses`` test units of at most ``--max-chars`` characters, spread evenly over
the split's units that short (the study's character Transformer has a window of 128 positions;
the bettor refuses a unit that does not fit, it never slides a window).
A model named in ``config/models.tsv`` is framed with its ``bos``/``eos``. Per model it prints:

* the tree: distinct token positions of the m words' tree (first word, later words);
* per truncation: seconds, forward passes and positions of the bettor, context by context and
  with a unit's truncations in one call (``TokenBettor.prefetch``, what ``truncation_rows``
  does), and with ``--units-per-call`` units per call (``truncation_rows_many``, what
  config ``shannon.units_per_call`` does), in one run (one warm-up unit first, outside the
  timings);
* the naive per-word forward on ``--naive`` truncations of the first unit (evenly spaced from
  its first to its last position): its positions (exact: the sum
  over words of 1 + context + word tokens, plus the word's boundary row) and seconds, and the
  ratios naive / tree for both (in one run, so comparable);
* the identity check: per unit, sum of the bettor's log_prob against the study's canonical score
  (``score_texts``, float32) as a relative difference;
* how many of the split's units (``--check-units``, evenly spaced) have a canonical tokenization
  that is the concatenation of their words' tokens (where the identity holds exactly), per
  model, and for any ``--tokenizer-only`` folder (e.g. Gemma-3's) too.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "lib"))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
import torch  # noqa: E402


def sheet() -> dict[str, dict]:
    with open(ROOT / "config" / "models.tsv", encoding="utf-8", newline="") as handle:
        return {row["model"]: row for row in csv.DictReader(handle, delimiter="\t")}


def naive_truncation(bettor, ctx_words, batch: int) -> tuple[float, int]:
    """Seconds and positions of one truncation's bets computed word by word: for each word a row
    start + context + word tokens, run in right-padded batches (no key/value sharing), its
    log-softmax rows gathered at the word's tokens and the boundary mass at its end."""
    lm = bettor.lm
    ctx = list(bettor.tokens.context(ctx_words))
    words = bettor._later if ctx_words else bettor._first
    seqs = [[lm.start_id, *ctx, *w] for w in words]
    bound = torch.tensor(bettor.boundary, device=lm.device)
    start, positions = time.perf_counter(), 0
    with torch.inference_mode():
        for lo in range(0, len(seqs), batch):
            rows = seqs[lo:lo + batch]
            width = max(map(len, rows))
            ids = torch.full((len(rows), width), lm.pad_id, dtype=torch.long)
            for k, r in enumerate(rows):
                ids[k, :len(r)] = torch.tensor(r)
            logits = lm.model(input_ids=ids.to(lm.device)).logits.float()
            lp = torch.log_softmax(logits, dim=-1)
            for k, r in enumerate(rows):
                n = len(r)
                w = r[1 + len(ctx):]
                _ = lp[k, len(ctx) + torch.arange(len(w)), torch.tensor(w)].sum() \
                    + torch.logsumexp(lp[k, n - 1, bound], 0)
            positions += sum(map(len, rows))
    return time.perf_counter() - start, positions


def bench(name: str, folder: Path, outcomes, units, args) -> None:
    from fairppl.lm.scoring import score_texts
    from fairppl.shannon.bettors import (ContextByContext, TokenBettor, truncation_rows,
                                         truncation_rows_many)
    from fairppl.shannon.neural import concatenation_holds

    row = sheet().get(name, {})
    special = {k: row.get(k) or None for k in ("bos", "eos")}
    if args.random_weights:
        bettor = random_bettor(folder, outcomes, special, args.device, args.pass_tokens)
    else:
        bettor = TokenBettor.from_folder(folder, outcomes, special=special, device=args.device,
                                         pass_tokens=args.pass_tokens)
    lm = bettor.lm
    first = {t[:j] for t in bettor._first for j in range(1, len(t) + 1)}
    later = {t[:j] for t in bettor._later for j in range(1, len(t) + 1)}
    weights = "RANDOM weights from config.json" if args.random_weights else "trained weights"
    print(f"\n== {name} ({folder}, {weights}) on {lm.device}, {torch.get_num_threads()} threads, "
          f"m = {outcomes.m}, vocabulary rows {lm.vocab_rows}, pass size "
          f"{bettor.session.pass_tokens}")
    print(f"tree positions: first word {len(first)}, later words {len(later)} "
          f"(word tokens {sum(map(len, bettor._later))}); boundary tokens {len(bettor.boundary)}")
    truncation_rows(bettor, "warm-up", "In the", outcomes, [1])  # warm-up, not timed
    secs, pos, passes, n = [], [], [], 0
    tok = bettor.tokens
    fitting = [(uid, text) for uid, text in units if bettor.fits(text)]
    if len(fitting) < len(units):
        print(f"  {len(units) - len(fitting)} of {len(units)} units do not fit in the window "
              f"of {lm.max_length} positions: skipped")
    units = fitting
    one = {"seconds": 0.0, "passes": 0, "positions": 0}
    for uid, text in units:
        # context by context first (the bettor without its prefetch), then the unit in one call
        t0 = time.perf_counter()
        slow = truncation_rows(ContextByContext(bettor), uid, text, outcomes, [1, 10, 100, 1000])
        one["seconds"] += time.perf_counter() - t0
        one["passes"] += sum(r["cost_passes"] for r in slow)
        one["positions"] += sum(r["cost_positions"] for r in slow)
        t0 = time.perf_counter()
        rows = truncation_rows(bettor, uid, text, outcomes, [1, 10, 100, 1000])
        wall = time.perf_counter() - t0
        secs += [r["cost_seconds"] for r in rows]
        pos += [r["cost_positions"] for r in rows]
        passes += [r["cost_passes"] for r in rows]
        n += len(rows)
        total = math.fsum(r["log_prob"] for r in rows)
        ref = score_texts(lm.model, _tokenizer(folder), [text], progress=False,
                          start_token=special["bos"], end_token=special["eos"])[0].nats
        concat = concatenation_holds(bettor.encode, tok, text)
        print(f"  unit {uid}: {len(rows)} truncations in {wall:.2f} s; sum log_prob "
              f"{total:.6f} vs canonical {-ref:.6f} (rel. diff {abs(total + ref) / ref:.2e}); "
              f"concatenation {'holds' if concat else 'FAILS'}")
    print(f"per truncation, context by context: {one['seconds'] / n:.3f} s, "
          f"{one['positions'] / n:.0f} positions, {one['passes'] / n:.2f} passes; "
          f"{one['positions'] / one['seconds']:.0f} positions/s")
    print(f"per truncation, a unit per call (prefetch): {np.mean(secs):.3f} s, "
          f"{np.mean(pos):.0f} positions, {np.mean(passes):.2f} passes; "
          f"{sum(pos) / sum(secs):.0f} positions/s; time ratio {sum(secs) / one['seconds']:.2f}")
    if args.units_per_call > 1:
        g = args.units_per_call
        many = {"seconds": 0.0, "passes": 0, "positions": 0, "n": 0}
        for lo in range(0, len(units), g):
            t0 = time.perf_counter()
            groups = truncation_rows_many(bettor, units[lo:lo + g], outcomes, [1, 10, 100, 1000])
            many["seconds"] += time.perf_counter() - t0
            for rows in groups:
                many["passes"] += sum(r["cost_passes"] for r in rows)
                many["positions"] += sum(r["cost_positions"] for r in rows)
                many["n"] += len(rows)
        k = many["n"]
        print(f"per truncation, {g} units per call: {many['seconds'] / k:.3f} s, "
              f"{many['positions'] / k:.0f} positions, {many['passes'] / k:.2f} passes; "
              f"{many['positions'] / many['seconds']:.0f} positions/s; time ratio to a unit "
              f"per call {many['seconds'] / sum(secs):.2f}")
    # naive on --naive truncations of the first unit, evenly spaced from the first to the last
    ws = units[0][1].split(" ")
    n_sec = n_pos = t_sec = t_pos = 0.0
    for k in sorted({int(round(x)) for x in np.linspace(0, len(ws), args.naive)}):
        s, p = naive_truncation(bettor, ws[:k], args.batch)
        n_sec += s
        n_pos += p
        bettor.take_cost()
        bettor._ctx_key, bettor._ready = None, {}  # computed again, not served from memory
        bettor.bets(ws[:k])
        c = bettor.take_cost()
        t_sec += c["cost_seconds"]
        t_pos += c["cost_positions"]
    print(f"naive per-word forward, {args.naive} truncations of unit {units[0][0]} (first to "
          f"last): {n_sec / args.naive:.3f} s and {n_pos / args.naive:.0f} positions per "
          f"truncation; tree on the same: {t_sec / args.naive:.3f} s, {t_pos / args.naive:.0f} "
          f"positions; ratio naive/tree: {n_sec / t_sec:.1f}x seconds, {n_pos / t_pos:.1f}x "
          f"positions")


def random_bettor(folder: Path, outcomes, special: dict, device, pass_tokens):
    """A TokenBettor over the model of ``folder``'s config.json with random (seeded) weights,
    framed as the study frames the pretrained LM (speed does not depend on the weights' values;
    the identity check still holds: it is arithmetic, not quality)."""
    from bench_lm_batch import load
    from fairppl.marginal.units import framed_lm
    from fairppl.shannon.bettors import TokenBettor

    where = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    lm, vocab, encode, _ = framed_lm(*load(folder, True, where), special)
    return TokenBettor(lm, vocab, encode, outcomes, pass_tokens=pass_tokens)


_TOKENIZERS: dict = {}


def _tokenizer(folder):
    from transformers import AutoTokenizer

    if folder not in _TOKENIZERS:
        _TOKENIZERS[folder] = AutoTokenizer.from_pretrained(folder)
    return _TOKENIZERS[folder]


def concatenation_rate(name: str, folder: Path, texts: list[str]) -> None:
    from fairppl.marginal.vocab import vocab_from_hf
    from fairppl.shannon.neural import WordTokens, concatenation_holds

    tok = _tokenizer(folder)

    def encode(text):
        return tok(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]

    words = WordTokens(encode, vocab_from_hf(tok))
    bad = [t for t in texts if not concatenation_holds(encode, words, t)]
    print(f"{name}: canonical tokenization == words' tokens concatenated on "
          f"{len(texts) - len(bad)} of {len(texts)} units" +
          (f"; e.g. {bad[0][:80]!r}" if bad else ""))


def main() -> None:
    from fairppl.corpus.readers import read_split
    from fairppl.shannon.outcomes import build_outcomes

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--units", default=str(ROOT / "results/corpus/bible/units.parquet"))
    ap.add_argument("--language", default="eng")
    ap.add_argument("--split", default="test")
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--verses", type=int, default=3)
    ap.add_argument("--max-chars", type=int, default=100,
                    help="units of at most this many characters (the char model's window)")
    ap.add_argument("--model", action="append", default=[], metavar="NAME=FOLDER")
    ap.add_argument("--tokenizer-only", action="append", default=[], metavar="NAME=FOLDER")
    ap.add_argument("--check-units", type=int, default=500)
    ap.add_argument("--naive", type=int, default=3, help="truncations timed the naive way")
    ap.add_argument("--batch", type=int, default=64, help="rows per naive forward")
    ap.add_argument("--pass-tokens", type=int, default=None,
                    help="new tree positions per forward pass (shannon.pass_tokens)")
    ap.add_argument("--units-per-call", type=int, default=1,
                    help="also time the units in calls of this many (shannon.units_per_call)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--device", default=None)
    ap.add_argument("--random-weights", action="store_true",
                    help="build each --model from its config.json with random weights (a folder "
                         "of bench_lm_batch.py --copy-configs or --bundle: no weights needed)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    train = read_split(args.units, args.language, "train")["text"].to_list()
    outcomes = build_outcomes(train, args.vocab)
    frame = read_split(args.units, args.language, args.split)
    short = [(str(u), t) for u, t in zip(frame["unit_id"], frame["text"])
             if len(t) <= args.max_chars]
    units = [short[int(i)] for i in np.linspace(0, len(short) - 1, args.verses)]
    check = read_split(args.units, args.language, args.split, args.check_units)["text"].to_list()
    print(f"{args.language} {args.split}: {len(units)} units, m = {outcomes.m}; "
          f"concatenation checked on {len(check)} units")
    for spec in args.model + args.tokenizer_only:
        name, _, folder = spec.partition("=")
        concatenation_rate(name, Path(folder), check)
    for spec in args.model:
        name, _, folder = spec.partition("=")
        bench(name, Path(folder), outcomes, units, args)


if __name__ == "__main__":
    main()
