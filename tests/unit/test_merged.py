"""Merged-verse hosts (fairppl.corpus.merged) and their removal by align_units, against hand counts:
the placeholder's own meaning where it says which neighbour holds the text, the length rule
where it does not."""

from __future__ import annotations

import re

import polars as pl
import pytest

from fairppl.corpus.align import align_units
from fairppl.corpus.readers import DEFAULT_PLACEHOLDER_PATTERNS
from fairppl.corpus.merged import (MISSING, PREVIOUS, UNKNOWN, held_runs, marker_meanings,
                            merged_hosts, placeholder_meaning, placeholder_runs)
from fairppl.corpus.splits import SplitScheme

F, T = False, True


@pytest.mark.parametrize("flags, runs", [
    ([], []),
    ([T], [(0, 0)]),
    ([F, T, T, F, T], [(1, 2), (4, 4)]),
    ([T, F, F, T, T, T], [(0, 0), (3, 5)]),
])
def test_placeholder_runs(flags, runs):
    assert placeholder_runs(flags) == runs


def test_host_is_the_previous_verse_holding_the_run():
    # English 10 chars each; the language writes 10 per 10 (median ratio 1) but verse 1 holds
    # verses 1-2 (20 chars) and verse 2 is a placeholder: x = 2 >= sqrt(y) = sqrt(2).
    english = [10] * 6
    flags = [F, F, T, F, F, F]
    assert merged_hosts([10, 20, 1, 10, 10, 10], english, flags, [F] * 6) == {1: "length"}
    # The next verse holds it instead.
    assert merged_hosts([10, 10, 1, 20, 10, 10], english, flags, [F] * 6) == {3: "length"}


def test_host_threshold_is_the_geometric_mean_of_the_two_predictions():
    # Host verse 10 English chars, run 30: holding the run predicts x = 4, not holding it x = 1;
    # the threshold is sqrt(4) = 2, so 20 language chars (x = 2) is a host and 19 is not.
    english = [10, 10, 30, 10, 10, 10, 10]
    flags = [F, F, T, F, F, F, F]
    assert merged_hosts([10, 20, 1, 10, 10, 10, 10], english, flags, [F] * 7) == {1: "length"}
    assert merged_hosts([10, 19, 1, 10, 10, 10, 10], english, flags, [F] * 7) == {}
    # The ratio is taken relative to the language's median (here 2 chars per English char).
    assert merged_hosts([20, 40, 1, 20, 20, 20, 20], english, flags, [F] * 7) == {1: "length"}
    assert merged_hosts([20, 38, 1, 20, 20, 20, 20], english, flags, [F] * 7) == {}


def test_missing_verse_has_no_host_and_both_long_neighbours_are_hosts():
    english = [10] * 7
    flags = [F, F, T, F, F, F, F]
    # A verse simply missing: both neighbours of ordinary length (x = 1.2 < sqrt(2)).
    assert merged_hosts([10, 12, 1, 12, 10, 10, 10], english, flags, [F] * 7) == {}
    # Both neighbours long: both dropped rather than guess.
    assert merged_hosts([10, 15, 1, 15, 10, 10, 10], english, flags, [F] * 7) == {
        1: "length", 3: "length"}
    # A run that English lacks too has no English text to hold: no host however long.
    english_flags = [F, F, T, F, F, F, F]
    assert merged_hosts([10, 30, 1, 10, 10, 10, 10], english, flags, english_flags) == {}
    # A run of two at the very start: only the next verse can host (10 + 20 English chars).
    assert merged_hosts([1, 1, 30, 10, 10, 10, 10], english, [T, T, F, F, F, F, F],
                        [F] * 7) == {2: "length"}


def test_merged_hosts_rejects_lists_of_different_lengths():
    with pytest.raises(ValueError, match="expected one length"):
        merged_hosts([1, 2], [1, 2, 3], [F, F], [F, F])
    with pytest.raises(ValueError, match="expected one length"):
        merged_hosts([1, 2], [1, 2], [F, T], [F, F], [None])
    with pytest.raises(ValueError, match=r"placeholder meaning\(s\) \['next'\]"):
        merged_hosts([1, 2], [1, 2], [F, T], [F, F], [None, "next"])


# ------------------------------------------------------------------------------------------
# What the placeholder says
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, meaning", [
    ("(aynı)", PREVIOUS), ("( aynı )", PREVIOUS), ("[aynı]", PREVIOUS),
    ("(앞절과 동일)", PREVIOUS), ("상동", PREVIOUS), ("(상동)", PREVIOUS),
    ("［前節に合節］", PREVIOUS),
    ("［本節欠如］", MISSING), ("(Missing KJV: For the Son of man ... >> 인자는 ...)", MISSING),
    ("[]", MISSING), ("(*)", MISSING), ("(8:1)", MISSING), ("(31:1)", MISSING),
    # Forms that do not say: "-" (Bengali, Persian, Tagalog, Korean), Korean "(없음)" ("none":
    # 1 Samuel 30:31 merged into 30:30, but also the omitted Matthew 17:21), BBE "...", "***",
    # Arabic ":", an empty unit.
    ("-", UNKNOWN), ("(없음)", UNKNOWN), ("...", UNKNOWN), ("***", UNKNOWN), (":", UNKNOWN),
    ("", UNKNOWN), ("(aynı gün)", UNKNOWN),
])
def test_placeholder_meaning(text, meaning):
    assert placeholder_meaning(text) == meaning


def test_previous_marker_names_the_host_whatever_its_length():
    # Turkish Genesis 1:14-15: verse 1 holds verses 1-2 compressed into one verse's length
    # (x = 1 < sqrt(2)): the length rule keeps it, the marker "(aynı)" names it.
    english = [10] * 6
    chars, flags = [10, 10, 1, 10, 10, 10], [F, F, T, F, F, F]
    assert merged_hosts(chars, english, flags, [F] * 6) == {}
    meaning = [None, None, PREVIOUS, None, None, None]
    assert merged_hosts(chars, english, flags, [F] * 6, meaning) == {1: "marker"}
    # A long next verse is not a host of a run whose marker says "previous".
    chars = [10, 10, 1, 30, 10, 10]
    assert merged_hosts(chars, english, flags, [F] * 6, meaning) == {1: "marker"}
    # A "previous" marker on the first unit has no verse before it: no host.
    assert merged_hosts([1, 10, 10], [10] * 3, [T, F, F], [F] * 3, [PREVIOUS, None, None]) == {}


def test_missing_marker_has_no_host_however_long_the_neighbours():
    english = [10] * 6
    chars, flags = [10, 30, 1, 30, 10, 10], [F, F, T, F, F, F]
    assert merged_hosts(chars, english, flags, [F] * 6) == {1: "length", 3: "length"}
    meaning = [None, None, MISSING, None, None, None]
    assert merged_hosts(chars, english, flags, [F] * 6, meaning) == {}


def test_mixed_run_counts_only_the_units_that_do_not_say():
    # A run of a missing unit (English 30 chars) and an unknown one (English 10): the length
    # rule predicts y = (10 + 10) / 10 = 2 for a host holding the unknown unit only, so a
    # neighbour with x = 1.5 >= sqrt(2) is a host; counting the missing unit too (y = 5) it
    # would need x >= sqrt(5) = 2.24.
    english = [10, 10, 30, 10, 10, 10]
    chars, flags = [10, 15, 1, 1, 10, 10], [F, F, T, T, F, F]
    meaning = [None, None, MISSING, UNKNOWN, None, None]
    assert merged_hosts(chars, english, flags, [F] * 6, meaning) == {1: "length"}
    assert merged_hosts(chars, english, flags, [F] * 6) == {}
    # A "previous" marker anywhere in the run decides it.
    meaning = [None, None, MISSING, PREVIOUS, None, None]
    assert merged_hosts([10, 10, 1, 1, 30, 10], english, flags, [F] * 6, meaning) == {
        1: "marker"}


def test_marker_meanings_reads_previous_as_missing_where_another_translation_says_missing():
    # Turkish "(aynı)" at a verse critical editions omit (Matthew 17:21), which Japanese marks
    # "［本節欠如］": no verse holds it. Elsewhere "(aynı)" keeps its meaning.
    texts = {"tur": ["a", "(aynı)", "b", "(aynı)"], "jpn": ["a", "［本節欠如］", "b", "c"],
             "eng": ["a", "x", "b", "y"]}
    flags = {"tur": [F, T, F, T], "jpn": [F, T, F, F], "eng": [F, F, F, F]}
    assert marker_meanings(texts, flags) == {"tur": [None, MISSING, None, PREVIOUS],
                                             "jpn": [None, MISSING, None, None],
                                             "eng": [None, None, None, None]}


# ------------------------------------------------------------------------------------------
# align_units: the host is dropped with its placeholders, in every language
# ------------------------------------------------------------------------------------------

N = 24
ENGLISH_CHARS = [20 + 3 * (7 * i % 13) for i in range(N)]  # 20..56 chars, varied
RATIO = {"eng": 1, "fra": 3, "tur": 2, "ben": 1}  # own chars per English char, every verse


def _toy_corpus():
    """English, French (no placeholders), Turkish merging verse 5 into 4 ("(aynı)": the
    placeholder names the previous verse) and 12-13 into 14 (the next verse, marked "-", which
    does not say: the length rule finds it), Bengali missing verse 19 (no host). Every other
    verse has exactly RATIO chars per English char."""
    texts = {}
    for lang, ratio in RATIO.items():
        texts[lang] = [(f"v{i:02d}", "x" * (ratio * ENGLISH_CHARS[i])) for i in range(N)]
    tur = texts["tur"]
    tur[4] = ("v04", "x" * (2 * (ENGLISH_CHARS[4] + ENGLISH_CHARS[5])))
    tur[5] = ("v05", "(aynı)")
    tur[14] = ("v14", "x" * (2 * sum(ENGLISH_CHARS[12:15])))
    tur[12], tur[13] = ("v12", "-"), ("v13", "- ")
    texts["ben"][19] = ("v19", "-")
    return texts


def test_align_drops_merged_hosts_in_every_language():
    units, dropped = align_units("toy", _toy_corpus(), DEFAULT_PLACEHOLDER_PATTERNS,
                                 SplitScheme(block_size=6, dev_start=1, dev_end=1, test_start=2,
                                             test_end=2), english="eng")
    gone = {4, 5, 12, 13, 14, 19}
    for lang in RATIO:
        sub = units.filter(pl.col("language") == lang)
        assert sub["position"].to_list() == [i for i in range(N) if i not in gone]
    assert dropped.select("position", "translation", "reason", "how", "detail").rows() == [
        (4, "tur", "host", "marker", "v05"),
        (5, "tur", "placeholder", "previous", "(aynı)"),
        (12, "tur", "placeholder", "unknown", "-"),
        (13, "tur", "placeholder", "unknown", "-"),
        (14, "tur", "host", "length", "v12..v13"),
        (19, "ben", "placeholder", "unknown", "-"),
    ]


def _ratio(frame: pl.DataFrame, lang: str, positions: set[int]) -> float:
    """Own characters per English character over the units at ``positions``."""
    def chars(language):
        return (frame.filter(pl.col("language") == language, pl.col("position").is_in(positions))
                ["text"].str.len_chars().sum())
    return chars(lang) / chars("eng")


def _next_to_placeholders(texts, lang: str, kept: set[int]) -> set[int]:
    """Kept positions next to a run of dropped units that holds a placeholder of ``lang``."""
    holes = {i for i, (_, text) in enumerate(texts[lang])
             if any(re.fullmatch(p, text) for p in DEFAULT_PLACEHOLDER_PATTERNS)}
    near = set()
    for first, last in placeholder_runs([i not in kept for i in range(N)]):
        if holes & set(range(first, last + 1)):
            near |= {first - 1, last + 1} & kept
    return near


def test_units_next_to_placeholders_have_the_usual_length_ratio():
    texts = _toy_corpus()
    units, _ = align_units("toy", texts, DEFAULT_PLACEHOLDER_PATTERNS, SplitScheme(),
                           english="eng")
    kept = set(units["position"].to_list())
    for lang in ("tur", "ben"):
        near = _next_to_placeholders(texts, lang, kept)
        # Exactly the language's own ratio, next to placeholders and elsewhere: no verse holds
        # text that English has in a dropped verse.
        assert _ratio(units, lang, near) == pytest.approx(RATIO[lang], rel=1e-12), lang
        assert _ratio(units, lang, kept - near) == pytest.approx(RATIO[lang], rel=1e-12), lang
    assert _next_to_placeholders(texts, "tur", kept) == {3, 6, 11, 15}
    assert _next_to_placeholders(texts, "ben", kept) == {18, 20}


def test_held_runs_names_every_run_a_host_holds():
    # Verse 3 sits between two one-verse runs and is three times its usual length: it holds
    # both (x = 3 >= sqrt(2) for each); verse 1 holds the first.
    english, flags = [10] * 7, [F, F, T, F, T, F, F]
    assert held_runs([10, 30, 1, 30, 1, 10, 10], english, flags, [F] * 7) == {
        1: ("length", [(2, 2)]), 3: ("length", [(2, 2), (4, 4)])}
    # A marker on the second run names verse 3 too: "marker" wins, both runs are listed.
    meaning = [None, None, UNKNOWN, None, PREVIOUS, None, None]
    assert held_runs([10, 30, 1, 30, 1, 10, 10], english, flags, [F] * 7, meaning) == {
        1: ("length", [(2, 2)]), 3: ("marker", [(2, 2), (4, 4)])}
