"""One bettor of the Shannon game on one language: bets on every truncation of evenly spaced
evaluation units over the game's outcomes (the train split's vocabulary words, <unk>, </s>),
summarised per truncation (fairppl.shannon.bettors.truncation_rows_many, shannon.units_per_call
units per call); resumable unit by unit (a hidden partial file beside the output keeps the
finished units of a killed job)."""

import logging
import math

import polars as pl

from fairppl.core.errors import InputError
from fairppl.core.io import write_table
from fairppl.core.runner import read_done, run_documents
from fairppl.corpus.readers import read_split
from fairppl.shannon.bettors import records_maker
from fairppl.shannon.outcomes import build_outcomes
from fairppl.shannon.table import list_lengths
from fairppl.shannon.units import fitting_units, game_units


def make_bettor(kind, snakemake, outcomes, train_texts, dev_texts):
    """The bettor of the job, and what the table records about it."""
    from fairppl.shannon import bettors

    params = snakemake.params
    if kind == "kenlm-word":
        return bettors.WordNgramBettor(snakemake.input.model, outcomes), {}
    if kind == "bigram":
        from fairppl.shannon.bigram import train_bettor

        bettor, alpha = train_bettor(train_texts, dev_texts, outcomes,
                                     params.settings["bigram_alphas"])
        return bettor, {"alpha": alpha}
    import torch

    torch.set_num_threads(snakemake.threads)
    # a pretrained bettor's precision (config pretrained.dtype); a trained one is float32.
    # Positions per pass: read from the config, not a param (a speed setting reruns nothing)
    return bettors.TokenBettor.from_folder(params.load_from, outcomes, params.special or None,
                                           load_dtype=params.get("dtype") or "float32",
                                           pass_tokens=pass_tokens(snakemake.config)), {}


def pass_tokens(config: dict) -> int:
    """``shannon.pass_tokens`` of the run's config (its default when absent)."""
    return int((config.get("shannon") or {}).get("pass_tokens") or 1024)


def units_per_call(config: dict) -> int:
    """``shannon.units_per_call`` of the run's config (its default when absent)."""
    return int((config.get("shannon") or {}).get("units_per_call") or 1)


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    wc, params = snakemake.wildcards, snakemake.params
    settings = params.settings
    train = read_split(snakemake.input.train_units, wc.language, "train")["text"].to_list()
    dev = read_split(snakemake.input.train_units, wc.language, "dev")["text"].to_list()
    outcomes = build_outcomes(train, settings["vocab_size"],
                              where=f"{wc.corpus}/{wc.language}")
    lengths = list_lengths(settings["list_lengths"], outcomes.m)
    bettor, extra = make_bettor(params.kind, snakemake, outcomes, train, dev)
    units = game_units(read_split(snakemake.input.units, wc.language, params.split),
                       params.kind, settings)
    units, left = fitting_units(units, bettor)
    if left:
        logging.info("%d units left out, beyond the model's window: %s", len(left),
                     ", ".join(left))
    if not units.height:
        raise InputError(f"no {wc.language} unit fits the model's window with the longest "
                         f"vocabulary word: expected a lower shannon.max_unit_chars")
    ids, texts = units["unit_id"].to_list(), units["text"].to_list()

    computed = run_documents(texts, ids, None, params.part, desc=f"{wc.language} {wc.model}",
                             progress=False,
                             make_records=records_maker(bettor, outcomes, lengths,
                                                        units_per_call(snakemake.config)))
    done = read_done(params.part, ids)
    keys = {"corpus": wc.corpus, "language": wc.language, "model": wc.model,
            "tokenizer": wc.tokenizer, "split": params.split, "m": outcomes.m,
            "vocab_words": len(outcomes.words), **extra}
    rows = [dict(keys, unit_order=order, **row) for order, unit in enumerate(ids)
            for row in done[unit]["rows"]]
    table = pl.DataFrame(rows, infer_schema_length=None)
    write_table(table, parquet=snakemake.output.table)
    seconds = table["cost_seconds"].sum() if "cost_seconds" in table.columns else math.nan
    logging.info("%d truncations of %d units (%d computed in this run), m = %d; %.1f s betting",
                 table.height, len(ids), computed, outcomes.m, seconds)


if "snakemake" in globals():
    main(snakemake)
