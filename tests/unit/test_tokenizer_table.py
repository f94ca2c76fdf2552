"""The tokenizer records table (fairppl.tokenizers.records): ids from the record's path, fields
from its JSON, an empty table with its header, and errors that name the file."""

from __future__ import annotations

import json

import polars as pl
import pytest

from fairppl.core.errors import InputError
from fairppl.tokenizers.records import SCHEMA, record_table

RECORD = {"model_type": "unigram", "vocab_size_requested": 8000, "vocab_size": 7421,
          "reduced": True, "n_train_units": 120, "n_train_chars": 9876}


def _write(root, corpus, language, tokenizer, record):
    path = root / "results" / "tokenizers" / corpus / language / f"{tokenizer}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def test_rows_take_ids_from_the_path_in_the_given_order(tmp_path):
    paths = [_write(tmp_path, "bible", "deu", "spm-unigram-8000", RECORD),
             _write(tmp_path, "bible", "eng", "spm-bpe-4000",
                    {**RECORD, "model_type": "bpe", "vocab_size_requested": 4000,
                     "vocab_size": 4000, "reduced": False})]
    table = record_table([str(p) for p in paths])
    assert table.schema == pl.Schema(SCHEMA)
    assert table.rows() == [
        ("bible", "deu", "spm-unigram-8000", "unigram", 8000, 7421, True, 120, 9876),
        ("bible", "eng", "spm-bpe-4000", "bpe", 4000, 4000, False, 120, 9876)]


def test_no_records_give_an_empty_table_with_its_header(tmp_path):
    table = record_table([])
    assert table.height == 0 and table.columns == list(SCHEMA)
    table.write_csv(tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_text().strip() == ",".join(SCHEMA)


def test_a_broken_or_incomplete_record_names_the_file(tmp_path):
    broken = _write(tmp_path, "bible", "fra", "spm-bpe-4000", RECORD)
    broken.write_text('{"model_type": "bpe", ', encoding="utf-8")
    with pytest.raises(InputError) as err:
        record_table([broken])
    assert str(broken) in str(err.value) and "unreadable tokenizer record" in str(err.value)
    partial = _write(tmp_path, "bible", "ita", "spm-bpe-4000",
                     {k: v for k, v in RECORD.items() if k != "vocab_size"})
    with pytest.raises(InputError) as err:
        record_table([partial])
    assert str(partial) in str(err.value) and "lacks ['vocab_size']" in str(err.value)
