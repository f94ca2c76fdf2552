"""Which evaluation units the game's bettors of one language bet on.

The units of at most ``max_unit_chars`` characters (every bettor the same: a token bettor never
slides a window, so a unit must fit the smallest model's context with the longest vocabulary
word), then nested evenly spaced subsets: the word bettors take ``max_units`` of them, the
Transformers ``neural_max_units`` of the word bettors' units, the pretrained LMs
``pretrained_max_units`` of the Transformers' units. Nesting makes the units of a cheaper bettor
contain those of a costlier one, so every bettor of a language has bet on the pretrained LMs'
units (the table's ``common`` rows compare the bettors there, on the same words).
"""

from __future__ import annotations

import polars as pl

from ..core.errors import InputError
from ..corpus.readers import evenly_spaced
from .protocol import Bettor

#: The chain of unit counts, cheapest bettors first.
LEVELS = {"kenlm-word": 1, "bigram": 1, "transformer": 2, "pretrained": 3}
SIZE_KEYS = ("max_units", "neural_max_units", "pretrained_max_units")


def game_units(split_units: pl.DataFrame, kind: str, settings: dict) -> pl.DataFrame:
    """The units of ``kind``'s bettors among ``split_units`` (one language's evaluation split
    in aligned order; module docstring). Raises InputError when none is short enough."""
    if kind not in LEVELS:
        raise InputError(f"unknown bettor kind {kind!r}: expected one of {sorted(LEVELS)}")
    frame = split_units
    limit = settings.get("max_unit_chars")
    if limit is not None:
        frame = frame.filter(pl.col("text").str.len_chars() <= limit)
        if not frame.height:
            raise InputError(f"no evaluation unit has at most {limit} characters "
                             f"(shannon.max_unit_chars): expected a larger limit")
    for key in SIZE_KEYS[:LEVELS[kind]]:
        frame = frame[evenly_spaced(frame.height, settings.get(key))]
    return frame


def fitting_units(units: pl.DataFrame, bettor: Bettor) -> tuple[pl.DataFrame, list[str]]:
    """The units ``bettor`` can bet on whole (its ``fits``: for a token bettor, the model's
    window holds the unit and the longest vocabulary word; every unit for a bettor without a
    window), and the ids of those left out."""
    keep = [bool(bettor.fits(text)) for text in units["text"]]
    kept = units.filter(pl.Series(keep))
    return kept, [u for u, k in zip(units["unit_id"], keep) if not k]
