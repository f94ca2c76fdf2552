"""Merged-verse hosts (fairppl.corpus.merged) and their removal by align_units, against hand counts."""

from __future__ import annotations

import re

import polars as pl
import pytest

from fairppl.corpus.align import align_units
from fairppl.corpus.readers import DEFAULT_PLACEHOLDER_PATTERNS
from fairppl.corpus.merged import merged_hosts, placeholder_runs
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
    assert merged_hosts([10, 20, 1, 10, 10, 10], english, [F, F, T, F, F, F], [F] * 6) == [1]
    # The next verse holds it instead.
    assert merged_hosts([10, 10, 1, 20, 10, 10], english, [F, F, T, F, F, F], [F] * 6) == [3]


def test_host_threshold_is_the_geometric_mean_of_the_two_predictions():
    # Host verse 10 English chars, run 30: holding the run predicts x = 4, not holding it x = 1;
    # the threshold is sqrt(4) = 2, so 20 language chars (x = 2) is a host and 19 is not.
    english = [10, 10, 30, 10, 10, 10, 10]
    flags = [F, F, T, F, F, F, F]
    assert merged_hosts([10, 20, 1, 10, 10, 10, 10], english, flags, [F] * 7) == [1]
    assert merged_hosts([10, 19, 1, 10, 10, 10, 10], english, flags, [F] * 7) == []
    # The ratio is taken relative to the language's median (here 2 chars per English char).
    assert merged_hosts([20, 40, 1, 20, 20, 20, 20], english, flags, [F] * 7) == [1]
    assert merged_hosts([20, 38, 1, 20, 20, 20, 20], english, flags, [F] * 7) == []


def test_missing_verse_has_no_host_and_both_long_neighbours_are_hosts():
    english = [10] * 7
    flags = [F, F, T, F, F, F, F]
    # A verse simply missing: both neighbours of ordinary length (x = 1.2 < sqrt(2)).
    assert merged_hosts([10, 12, 1, 12, 10, 10, 10], english, flags, [F] * 7) == []
    # Both neighbours long: both dropped rather than guess.
    assert merged_hosts([10, 15, 1, 15, 10, 10, 10], english, flags, [F] * 7) == [1, 3]
    # A run that English lacks too has no English text to hold: no host however long.
    english_flags = [F, F, T, F, F, F, F]
    assert merged_hosts([10, 30, 1, 10, 10, 10, 10], english, flags, english_flags) == []
    # A run of two at the very start: only the next verse can host (10 + 20 English chars).
    assert merged_hosts([1, 1, 30, 10, 10, 10, 10], english, [T, T, F, F, F, F, F],
                        [F] * 7) == [2]


def test_merged_hosts_rejects_lists_of_different_lengths():
    with pytest.raises(ValueError, match="expected one length"):
        merged_hosts([1, 2], [1, 2, 3], [F, F], [F, F])


# ------------------------------------------------------------------------------------------
# align_units: the host is dropped with its placeholders, in every language
# ------------------------------------------------------------------------------------------

N = 24
ENGLISH_CHARS = [20 + 3 * (7 * i % 13) for i in range(N)]  # 20..56 chars, varied
RATIO = {"eng": 1, "fra": 3, "tur": 2, "ben": 1}  # own chars per English char, every verse


def _toy_corpus():
    """English, French (no placeholders), Turkish merging verse 5 into 4 and 12-13 into 14
    (next), Bengali missing verse 19 (no host). Every other verse has exactly RATIO chars per
    English char."""
    texts = {}
    for lang, ratio in RATIO.items():
        texts[lang] = [(f"v{i:02d}", "x" * (ratio * ENGLISH_CHARS[i])) for i in range(N)]
    tur = texts["tur"]
    tur[4] = ("v04", "x" * (2 * (ENGLISH_CHARS[4] + ENGLISH_CHARS[5])))
    tur[5] = ("v05", "(aynı)")
    tur[14] = ("v14", "x" * (2 * sum(ENGLISH_CHARS[12:15])))
    tur[12], tur[13] = ("v12", "(aynı)"), ("v13", "( aynı )")
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
    assert dropped.rows() == [
        ("toy", "ben", 1, 0, 6, 18),
        ("toy", "eng", 0, 0, 6, 18),
        ("toy", "fra", 0, 0, 6, 18),
        ("toy", "tur", 3, 2, 6, 18),
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
