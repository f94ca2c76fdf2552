"""Scoring a split with a token LM (fairppl.lm.score_split) on a tiny random Llama saved to a folder:
the table agrees with score_texts, the conventions record says what was scored, a killed job
resumes from its chunks under the same fingerprint as before, and bad input is refused."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

from fairppl.lm import score_split as lmscore
from fairppl.core.errors import InputError, ScoringError
from fairppl.lm.score_split import model_identity, score_split_with_lm, score_units
from fairppl.stats.metrics import SCORE_COLUMNS
from fairppl.core.resume import fingerprint
from fairppl.lm.scoring import conventions, score_texts
from test_scoring import CHARS, make_model, make_texts, make_tokenizer

SCORING = {"batch_size": 4, "chunk_units": 5, "max_units": None}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A tiny Llama and its character tokenizer, saved as a transformers folder."""
    folder = tmp_path_factory.mktemp("lm") / "model"
    tok = make_tokenizer()
    make_model(len(tok)).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def units_path(tmp_path_factory):
    """A units table of one language, 27 units: the 13 odd ones test (u01, u03, ..., u25), the
    rest train."""
    texts = [t for t in make_texts(28) if t]  # non-empty, as prepared units are
    path = tmp_path_factory.mktemp("units") / "units.parquet"
    pl.DataFrame({"language": ["xx"] * len(texts),
                  "split": ["test" if i % 2 else "train" for i in range(len(texts))],
                  "position": list(range(len(texts))),
                  "unit_id": [f"u{i:02d}" for i in range(len(texts))],
                  "text": texts}).write_parquet(path)
    return path


def _run(saved, units_path, out, **kwargs):
    return score_split_with_lm(
        units_path, corpus="toy", language="xx", split="test", model_id="transformer",
        tokenizer_id="char", load_from=str(saved), scoring=SCORING, parts_dir=out / "parts",
        scores_out=out / "scores.parquet", conventions_out=out / "conventions.json",
        device="cpu", **kwargs)


def test_table_agrees_with_score_texts_and_the_record_says_what_was_scored(saved, units_path,
                                                                           tmp_path):
    table = _run(saved, units_path, tmp_path)
    assert pl.read_parquet(tmp_path / "scores.parquet").equals(table)
    assert not (tmp_path / "parts").exists()
    assert table.columns == list(SCORE_COLUMNS) + ["bits_eos", "token_ids", "token_nats"]
    units = pl.read_parquet(units_path).filter(split="test")
    assert table["unit_id"].to_list() == units["unit_id"].to_list()
    assert table["n_chars"].to_list() == [len(t) for t in units["text"]]
    # the same units scored directly, one call: the same tokens and bits
    model, tok = make_model(len(make_tokenizer())), make_tokenizer()
    direct = score_texts(model, tok, units["text"].to_list(), progress=False)
    assert table["token_ids"].to_list() == [u.token_ids for u in direct]
    # one token per character, or per UTF-8 byte of one it cannot spell, and </s>
    assert table["n_tokens"].to_list() == [
        sum(1 if ch in CHARS else len(ch.encode("utf-8")) for ch in t) + 1 for t in units["text"]]
    for row, unit in zip(table.iter_rows(named=True), direct):
        assert row["bits"] == pytest.approx(unit.nats / math.log(2), abs=1e-4)
        assert row["bits_eos"] == pytest.approx(unit.token_nats[-1] / math.log(2), abs=1e-5)
        assert row["bits"] == pytest.approx(math.fsum(row["token_nats"]) / math.log(2),
                                            rel=1e-12)
    record = json.loads((tmp_path / "conventions.json").read_text(encoding="utf-8"))
    assert {k: record[k] for k in ("corpus", "language", "model", "tokenizer", "loaded_from",
                                   "weights", "model_sheet")} == {
        "corpus": "toy", "language": "xx", "model": "transformer", "tokenizer": "char",
        "loaded_from": str(saved), "weights": "as saved (float32)", "model_sheet": None}
    assert record["start_token"] == "<s>" and record["end_token"] == "</s>"
    assert record["max_length"] == 256 and record["stride"] == 128
    assert {k: v for k, v in record.items() if k in conventions(tok, model)} == \
        conventions(tok, model)


def test_a_killed_job_resumes_from_its_chunks_with_the_same_fingerprint(saved, units_path,
                                                                        tmp_path, monkeypatch):
    real = lmscore.score_chunk
    calls, die_after = [], [2]

    def dying(model, tokenizer, chunk, **kwargs):
        if die_after and len(calls) == die_after[0]:
            raise RuntimeError("killed")
        calls.append(chunk[0][0])
        return real(model, tokenizer, chunk, **kwargs)

    monkeypatch.setattr(lmscore, "score_chunk", dying)
    with pytest.raises(RuntimeError, match="killed"):
        _run(saved, units_path, tmp_path)
    parts = sorted(p.name for p in (tmp_path / "parts").glob("part-*.parquet"))
    # the chunk names use the fingerprint the scoring script has always used: the folder's
    # files and the conventions, then the chunk's (unit_id, text) pairs
    model, tok = make_model(len(make_tokenizer())), make_tokenizer()
    key = fingerprint(model_identity(saved), conventions(tok, model))
    units = pl.read_parquet(units_path).filter(split="test")
    items = list(zip(units["unit_id"], units["text"]))
    assert parts == [f"part-{i:05d}-{fingerprint(key, items[5 * i:5 * i + 5])}.parquet"
                     for i in range(2)]
    calls.clear()
    die_after.clear()
    resumed = _run(saved, units_path, tmp_path)
    assert calls == ["u21"]  # only the third chunk (units 21, 23, 25) was computed
    fresh = _run(saved, units_path, tmp_path / "fresh")
    assert resumed.equals(fresh)


def test_sheet_tokens_replace_bos_and_eos_and_are_checked(saved, units_path, tmp_path):
    model, tok = make_model(len(make_tokenizer())), make_tokenizer()
    units = pl.read_parquet(units_path).filter(split="test").head(3)
    special = {"model": "toy-lm", "bos": "</s>", "eos": "<pad>", "sheet": "config/models.tsv",
               "line": 4}
    table, record = score_units(
        units, model, tok, corpus="toy", language="xx", split="test", model_id="toy-lm",
        tokenizer_id="native", load_from="hub-id", parts_dir=tmp_path / "p", chunk_units=2,
        batch_size=2, special=special)
    assert record["model_sheet"] == special and record["weights"] == "hub: hub-id"
    assert record["start_token"] == "</s>" and record["end_token"] == "<pad>"
    assert [ids[-1] for ids in table["token_ids"]] == [tok.pad_token_id] * 3
    with pytest.raises(InputError) as err:
        score_units(units, model, tok, corpus="toy", language="xx", split="test",
                    model_id="toy-lm", tokenizer_id="native", load_from="hub-id",
                    parts_dir=tmp_path / "q", chunk_units=2, batch_size=2,
                    special={**special, "eos": "<|end|>"})
    message = str(err.value)
    assert "config/models.tsv" in message and "4" in message
    assert "column 'eos': token '<|end|>' is not in the vocabulary of model 'toy-lm'" in message


def test_a_unit_the_tokenizer_cannot_reproduce_is_refused(tmp_path):
    tok = make_tokenizer(byte_fallback=False)
    model = make_model(len(tok))
    units = pl.DataFrame({"unit_id": ["a", "b", "c"], "text": ["fine", "日本 no", "ok too"]})
    with pytest.raises(ScoringError, match=r"toy-lm: the tokenizer does not reproduce 1 units "
                                           r"exactly \(e.g. \['b'\]\)"):
        score_units(units, model, tok, corpus="toy", language="xx", split="test",
                    model_id="toy-lm", tokenizer_id="native", load_from="hub-id",
                    parts_dir=tmp_path / "p", chunk_units=5, batch_size=2)
