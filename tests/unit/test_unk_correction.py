"""The UNK correction counts the OOV types of exactly the units summed (a hand example, cross-checked
between fairppl.ngram.word.unk_corrected_bits_total and fairppl.stats.metrics.bits_per_utterance, on the full
set, on subsets and on the units every model scored), and the `all` vocabulary learns p(UNK) from
the train split's singletons (a tiny corpus through a real lmplz)."""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path

import polars as pl
import pytest

from fairppl.stats.metrics import bits_per_utterance, on_common_units, score_frame
from fairppl.ngram.word import (
    ALL_MIN_COUNT,
    UNK,
    build_vocabulary,
    unk_corrected_bits,
    unk_corrected_bits_total,
    unk_text,
)

# Three units of one language under a closed-vocabulary model. OOV types overlap: "b" is in u0
# and u1. Full set: 20 naive bits, 5 UNK tokens, K = |{a, b, c}| = 3.
UNITS = {  # unit -> (naive bits, UNK tokens, OOV types, n_tokens)
    "u0": (10.0, 3, ["a", "b"], 6),
    "u1": (6.0, 2, ["b", "c"], 4),
    "u2": (4.0, 0, [], 3),
}


def _word_scores(unit_ids=("u0", "u1", "u2")) -> pl.DataFrame:
    rows = [UNITS[u] for u in unit_ids]
    return score_frame(corpus="c", language="eng", model="kenlm-word-o3", tokenizer="word-v2",
                       vocab_size=2, open_vocabulary=False, split="test", unit_ids=list(unit_ids),
                       n_chars=[5] * len(rows), n_bytes=[5] * len(rows),
                       n_tokens=[r[3] for r in rows], bits=[r[0] for r in rows],
                       n_oov=[r[1] for r in rows], oov_types=[r[2] for r in rows])


def _units() -> pl.DataFrame:
    return pl.DataFrame([dict(corpus="c", unit_id=u, position=i, language="eng", split="test",
                              text="hello", english_reference=True)
                         for i, u in enumerate(UNITS)])


def test_unk_corrected_bits_total_by_hand():
    full = _word_scores()
    assert unk_corrected_bits_total(full) == pytest.approx(20 + 5 * math.log2(3), abs=1e-12)
    # u0 + u2: K = |{a, b}| = 2, so 1 bit per UNK token: exactly 14 + 3.
    assert unk_corrected_bits_total(_word_scores(("u0", "u2"))) == 17.0
    # u1 alone: K = 2; u2 alone has no UNK token: nothing to correct.
    assert unk_corrected_bits_total(_word_scores(("u1",))) == 8.0
    assert unk_corrected_bits_total(_word_scores(("u2",))) == 4.0
    # The same as the scalar formula with K counted by hand.
    assert unk_corrected_bits_total(_word_scores(("u0", "u1"))) == unk_corrected_bits(16.0, 5, 3)


def test_subset_gets_its_own_correction_not_a_share_of_the_full_one():
    """The bug this replaces: K counted over all test units, applied to a subset's sums."""
    subset = _word_scores(("u0", "u2"))
    stale = 14.0 + 3 * math.log2(3)  # the subset's bits corrected with the full set's K = 3
    row = bits_per_utterance(subset, _units()).row(0, named=True)
    assert row["n_oov_types"] == 2
    assert row["bits_unk_corrected"] == 17.0
    assert row["bits_unk_corrected"] != pytest.approx(stale)
    assert row["ppl_unk_corrected"] == pytest.approx(2 ** (17 / 9), rel=1e-12)
    assert row["ppl_naive"] == pytest.approx(2 ** (14 / 9), rel=1e-12)


def test_bits_per_utterance_agrees_with_the_library_function():
    for ids in [("u0", "u1", "u2"), ("u0", "u1"), ("u1", "u2"), ("u2",)]:
        scores = _word_scores(ids)
        row = bits_per_utterance(scores, _units()).row(0, named=True)
        assert row["bits_unk_corrected"] == pytest.approx(unk_corrected_bits_total(scores),
                                                          abs=1e-12), ids
    full = bits_per_utterance(_word_scores(), _units()).row(0, named=True)
    assert (full["n_oov_types"], full["oov_rate"]) == (3, 5 / (13 - 3))


def test_common_units_restrict_the_correction():
    """models.csv compares models on the units all of them scored: a character model that scored
    only u0 and u2 restricts the word model's K to the OOV types of u0 and u2."""
    char = score_frame(corpus="c", language="eng", model="kenlm-char-o5", tokenizer="char",
                       vocab_size=None, open_vocabulary=True, split="test",
                       unit_ids=["u0", "u2"], n_chars=[5, 5], n_bytes=[5, 5], n_tokens=[6, 6],
                       bits=[9.0, 9.0])
    both = pl.concat([_word_scores(), char])
    table = bits_per_utterance(on_common_units(both), _units())
    word = table.filter(pl.col("model") == "kenlm-word-o3").row(0, named=True)
    assert word["n_units"] == 2 and word["bits_unk_corrected"] == 17.0
    chars = table.filter(pl.col("model") == "kenlm-char-o5").row(0, named=True)
    assert chars["bits_unk_corrected"] is None and chars["n_oov_types"] is None


def test_missing_oov_types_are_refused():
    scores = _word_scores().with_columns(oov_types=pl.lit(None, dtype=pl.List(pl.String)))
    with pytest.raises(ValueError, match="no oov_types.*unit 'u0'"):
        unk_corrected_bits_total(scores)
    with pytest.raises(ValueError, match=r"c/eng kenlm-word-o3 word-v2: 5 <unk> tokens but no OOV"):
        bits_per_utterance(scores, _units())


# ---------------------------------------------------------------------------------------------
# `all`: every train type seen twice; singletons train the UNK class


def test_all_vocabulary_is_types_seen_twice():
    train = ["b a c", "c b", "d c", "e"]  # c:3, b:2, then a, d, e once each
    v = build_vocabulary(train, None, min_count=ALL_MIN_COUNT)
    assert ALL_MIN_COUNT == 2
    assert v.words == ("c", "b")
    assert (v.requested, v.min_count, v.actual, v.n_train_types, v.truncated) == (None, 2, 2, 5, True)
    assert unk_text(train, v) == ["b <oov> c", "c b", "<oov> c", "<oov>"]
    assert build_vocabulary(train, 1, min_count=2).words == ("c",)
    assert build_vocabulary(train, 9, min_count=3).words == ("c",)
    assert build_vocabulary(train, None).min_count == 1
    for bad in (0, -1, 1.5, True):
        with pytest.raises(Exception, match="min_count must be a positive integer"):
            build_vocabulary(train, None, min_count=bad)


KENLM_BIN = os.environ.get("FAIRPPL_KENLM_BIN")

TINY = ["the loud dog barked at the man", "the dog barked", "a man at the door",
        "the loud man barked", "the dog at the gate", "the cat sat at the door",
        "a dog sat", "the man sat at the gate"]


def _unigrams(arpa: Path) -> dict[str, float]:
    out, inside = {}, False
    for line in arpa.read_text(encoding="utf-8").splitlines():
        if line.startswith("\\"):
            inside = line == "\\1-grams:"
        elif inside and line:
            fields = line.split("\t")
            out[fields[1]] = float(fields[0])
    return out


@pytest.mark.skipif(not KENLM_BIN or not (Path(KENLM_BIN) / "lmplz").exists(),
                    reason="set FAIRPPL_KENLM_BIN to the folder holding KenLM's lmplz")
def test_all_vocabulary_learns_p_unk_on_a_tiny_corpus(tmp_path):
    pytest.importorskip("kenlm")
    from fairppl.ngram.kenlm_tool import lmplz_command, load_model
    from fairppl.ngram.training_text import write_stream
    from fairppl.ngram.word import score_word_unit

    def train(stream):
        text = tmp_path / f"{stream}.txt"
        fields = write_stream(stream, TINY, text)
        arpa = tmp_path / f"{stream}.arpa"
        run = subprocess.run(lmplz_command(Path(KENLM_BIN) / "lmplz", 3, text, arpa, tmp_path,
                                           memory="5%"), capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        return fields, arpa

    fields, arpa = train("word-vall")
    # Seen twice or more: every type but "cat", by count (the 11, at 5, dog 4, man 4, ...).
    assert fields["words"] == ["the", "at", "dog", "man", "barked", "sat", "a", "door", "gate",
                               "loud"]
    assert (fields["requested"], fields["min_count"], fields["actual"]) == (None, 2, 10)
    assert fields["n_train_types"] == 11
    uni = _unigrams(arpa)
    assert UNK in uni  # one train UNK token ("cat"): p(UNK) is learned from counts
    assert uni[UNK] > uni["<unk>"]
    # Every type in the vocabulary (min_count 1): no UNK in training, only the zeroton <unk>.
    every = build_vocabulary(TINY, None)
    (tmp_path / "every.txt").write_text("\n".join(unk_text(TINY, every)) + "\n", encoding="utf-8")
    run = subprocess.run(lmplz_command(Path(KENLM_BIN) / "lmplz", 3, tmp_path / "every.txt",
                                       tmp_path / "every.arpa", tmp_path, memory="5%"),
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert UNK not in _unigrams(tmp_path / "every.arpa")
    # A test sentence with an unseen word costs fewer naive bits under the learned p(UNK).
    learned = score_word_unit(load_model(arpa), "the cow sat", set(fields["words"]))
    zeroton = score_word_unit(load_model(tmp_path / "every.arpa"), "the cow sat", every)
    assert learned.oov_types == zeroton.oov_types == ("cow",)
    assert learned.bits < zeroton.bits
