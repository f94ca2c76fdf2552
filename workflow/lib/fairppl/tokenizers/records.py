"""The table of tokenizer training records: vocabulary sizes requested and trained, per language.

Each trained tokenizer leaves a JSON record (:func:`fairppl.tokenizers.train_sentencepiece`'s
return value) at ``results/tokenizers/{corpus}/{language}/{tokenizer}.json``; the corpus,
language and tokenizer ids are read from that path.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl

from ..core.errors import InputError

#: Columns of the table: ids, then the record's fields (sizes in pieces, training text in units
#: and characters).
SCHEMA = {"corpus": pl.String, "language": pl.String, "tokenizer": pl.String,
          "model_type": pl.String, "vocab_size_requested": pl.Int64, "vocab_size": pl.Int64,
          "reduced": pl.Boolean, "n_train_units": pl.Int64, "n_train_chars": pl.Int64}


def record_table(paths: list[str | os.PathLike]) -> pl.DataFrame:
    """One row per record file in ``paths``, in the given order, with the columns of
    :data:`SCHEMA`. No paths give an empty table that keeps its header. InputError naming the
    file for a record that is not a JSON object holding every field."""
    rows = []
    fields = [name for name in SCHEMA if name not in ("corpus", "language", "tokenizer")]
    for path in paths:
        path = Path(path)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise InputError(f"unreadable tokenizer record ({err}): expected the JSON written "
                             f"by train_tokenizer", path=str(path)) from None
        missing = [name for name in fields if not isinstance(record, dict) or name not in record]
        if missing:
            raise InputError(f"tokenizer record lacks {missing}: expected the fields "
                             f"{fields}", path=str(path))
        # results/tokenizers/{corpus}/{language}/{tokenizer}.json
        rows.append({"corpus": path.parts[-3], "language": path.parts[-2],
                     "tokenizer": path.stem, **{name: record[name] for name in fields}})
    return pl.DataFrame(rows, schema=SCHEMA)
