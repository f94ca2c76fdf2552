"""Normalisation and splits against exact answers."""

import pytest

from fairppl.errors import InputError
from fairppl.splits import SplitScheme, assign_splits
from fairppl.text import decode_utf8, normalize


def test_normalize_nfc_and_whitespace():
    decomposed = "Cafe\u0301  au\tlait\u00a0\n noir "
    assert normalize(decomposed) == "Caf\u00e9 au lait noir"
    assert len(normalize(decomposed)) == 17


def test_normalize_drops_invisible_format_chars_but_keeps_zwj_zwnj():
    assert normalize("a\u200bb\ufeffc\x07") == "abc"
    hindi = "परमेश्\u200dवर"
    assert normalize(hindi) == hindi
    assert normalize("می\u200cخواهم") == "می\u200cخواهم"


def test_normalize_ideographic_space_and_empty():
    assert normalize("神爱世人，\u3000甚至") == "神爱世人， 甚至"
    assert normalize(" \n\t ") == ""


def test_decode_utf8_names_line_and_offset():
    data = "first line\nsecond ".encode() + b"\xff\xfe bad\n"
    with pytest.raises(InputError) as err:
        decode_utf8(data, "corpus.txt")
    msg = str(err.value)
    assert msg.startswith("corpus.txt, line 2: invalid UTF-8 at byte 18")
    assert "expected UTF-8" in msg


def test_mielke_scheme_exact_positions():
    labels = assign_splits(65)
    # 1-based lines 1-5 dev, 6-10 test, 11-30 train, in every block of 30.
    assert labels[:5] == ["dev"] * 5
    assert labels[5:10] == ["test"] * 5
    assert labels[10:30] == ["train"] * 20
    assert labels[30:35] == ["dev"] * 5 and labels[35:40] == ["test"] * 5
    assert labels[60:65] == ["dev"] * 5
    assert labels.count("train") == 40 and labels.count("test") == 10 and labels.count("dev") == 15


def test_configurable_scheme():
    scheme = SplitScheme(block_size=4, dev_start=4, dev_end=4, test_start=1, test_end=1)
    assert assign_splits(8, scheme) == ["test", "train", "train", "dev"] * 2


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(block_size=10, dev_start=1, dev_end=5, test_start=5, test_end=6),  # overlap
        dict(block_size=10, dev_start=0, dev_end=5, test_start=6, test_end=7),  # 0-based start
        dict(block_size=10, dev_start=1, dev_end=5, test_start=6, test_end=11),  # past block
    ],
)
def test_invalid_scheme_is_rejected(kwargs):
    with pytest.raises(InputError, match="invalid split scheme"):
        SplitScheme(**kwargs)
