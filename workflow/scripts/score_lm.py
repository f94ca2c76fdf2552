"""Score one language's evaluation split with a token LM (a trained Transformer or a pretrained
model) through the canonical scoring path, in resumable chunks."""

import json
import logging
from pathlib import Path

import polars as pl
import torch

from fairppl.corpora import read_split
from fairppl.errors import ScoringError
from fairppl.io import write_table, write_text
from fairppl.metrics import nats_to_bits, score_frame
from fairppl.pretrained import check_special_tokens, load_lm, weights_note
from fairppl.resume import clear_parts, fingerprint, run_chunked
from fairppl.scoring import conventions, score_texts


def model_identity(load_from):
    """What the scores depend on: the folder's config and weight files (name, size, mtime)."""
    folder = Path(load_from)
    if not folder.is_dir():
        return load_from
    return sorted((p.name, p.stat().st_size, p.stat().st_mtime) for p in folder.iterdir())


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    wc = snakemake.wildcards
    model_id = getattr(wc, "model", "transformer")
    tokenizer_id = getattr(wc, "tokenizer", "native")
    load_from = snakemake.input.get("model", None) or snakemake.params.load_from
    scoring = snakemake.params.scoring
    split = snakemake.params.split
    torch.set_num_threads(snakemake.threads)
    units = read_split(snakemake.input.units, wc.language, split, scoring.get("max_units"))
    model, tokenizer = load_lm(load_from)
    # a pretrained model's start/end tokens from the model sheet (a trained model has none)
    special = snakemake.params.get("special") or {}
    if special:
        check_special_tokens(tokenizer, **special)
    tokens = {"start_token": special.get("bos"), "end_token": special.get("eos")}
    conv = conventions(tokenizer, model, **tokens)
    logging.info("model %s from %s; conventions %s", model_id, load_from, conv)
    key = fingerprint(model_identity(load_from), conv)

    def compute(chunk):
        texts = [text for _, text in chunk]
        scored = score_texts(model, tokenizer, texts, batch_size=scoring["batch_size"],
                             progress=False, **tokens)
        lossy = [uid for (uid, _), s in zip(chunk, scored) if not s.lossless]
        if lossy:
            raise ScoringError(
                f"{model_id}: the tokenizer does not reproduce {len(lossy)} units exactly (e.g. "
                f"{lossy[:5]}): their scores would not charge every character")
        return pl.DataFrame({
            "unit_id": [uid for uid, _ in chunk],
            "n_tokens": [s.n_tokens for s in scored],
            "bits": [nats_to_bits(s.nats) for s in scored],
            # the charged end token is each unit's last scored token
            "bits_eos": [nats_to_bits(s.token_nats[-1]) for s in scored],
            "token_ids": [s.token_ids for s in scored],
            "token_nats": [s.token_nats for s in scored],
        })

    items = list(zip(units["unit_id"].to_list(), units["text"].to_list()))
    done = run_chunked(items, scoring["chunk_units"], snakemake.params.parts, key, compute,
                       log=logging.info)
    texts = units["text"].to_list()
    table = score_frame(
        corpus=wc.corpus,
        language=wc.language,
        model=model_id,
        tokenizer=tokenizer_id,
        vocab_size=len(tokenizer),
        open_vocabulary=True,
        split=split,
        unit_ids=done["unit_id"].to_list(),
        texts=texts,
        n_tokens=done["n_tokens"].to_list(),
        bits=done["bits"].to_list(),
        extra={"bits_eos": done["bits_eos"].to_list(), "token_ids": done["token_ids"].to_list(),
               "token_nats": done["token_nats"].to_list()},
    )
    logging.info("%d units, %d tokens, %.1f bits", table.height, table["n_tokens"].sum(),
                 table["bits"].sum())
    record = {"corpus": wc.corpus, "language": wc.language, "model": model_id,
              "tokenizer": tokenizer_id, "loaded_from": str(load_from),
              "weights": weights_note(load_from), "model_sheet": special or None, **conv}
    write_text(snakemake.output.conventions, json.dumps(record, ensure_ascii=False, indent=1))
    write_table(table, parquet=snakemake.output.scores)
    clear_parts(snakemake.params.parts)


if "snakemake" in globals():
    main(snakemake)
