"""Find the verse that holds the text of a merged-verse placeholder.

Some translations merge neighbouring verses: Turkish NTB prints Genesis 1:14-15 as verse 14 and
fills verse 15 with "(aynı)" ("same"); Bengali writes "-", Japanese "［前節に合節］". Dropping the
placeholder alone leaves the merged text in its *host*, which is then compared with one English
verse: the language is charged for two verses against one. The host must be dropped with the
placeholder, in every language.

Which neighbour is the host is not written anywhere: Turkish and Bengali mostly put the merged
text in the verse before but sometimes in the verse after, and a verse that is simply missing
(Japanese "［本節欠如］", Korean "(Missing KJV: ...)") has no host at all. The rule decides from
lengths, in characters (Unicode code points of the normalised text):

- ``ratio(i) = chars(language, i) / chars(english, i)`` for a unit kept in both, and ``m`` the
  language's median ratio over those units (its usual length relative to English);
- for a maximal run of placeholder units ``a..b`` of that language and a neighbour ``h`` (``a-1``
  or ``b+1``, kept in the language and in English), ``x = ratio(h) / m`` is its length relative
  to the usual: about 1 if ``h`` holds only its own verse, about ``y = (chars(english, h) +
  chars(english, a..b)) / chars(english, h)`` if it holds the run as well;
- ``h`` is a host when ``x >= sqrt(y)``: on a log scale its length is nearer to holding the run
  than to holding its own verse (the threshold is the geometric mean of the two predictions,
  no tuned constant). Both neighbours can be hosts; then both are dropped. A verse dropped
  wrongly costs an aligned unit in every language and, being long in that language, lowers its
  characters per English character a little; a host kept wrongly would raise them a lot.

A host written much more tersely than usual can still be missed; a run that English lacks too
(placeholder in English as well) has no English text to hold and gets no host.

The README (section on the corpus) gives what this drops on the Bible and the check that the
verses next to placeholders then have the language's usual length per English character.
"""

from __future__ import annotations

import math
import statistics


def placeholder_runs(flags: list[bool]) -> list[tuple[int, int]]:
    """Maximal runs ``(first, last)`` (0-based, inclusive) of consecutive True ``flags``."""
    runs, start = [], None
    for i, flag in enumerate(flags):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            runs.append((start, i - 1))
            start = None
    if start is not None:
        runs.append((start, len(flags) - 1))
    return runs


def merged_hosts(chars: list[int], english_chars: list[int], placeholder: list[bool],
                 english_placeholder: list[bool]) -> list[int]:
    """0-based indices (sorted) of the units that hold the text of a neighbouring placeholder run
    in one language (the rule is in the module docstring).

    ``chars`` and ``english_chars`` are the lengths of each unit in characters in the language
    and in the English reference, ``placeholder`` and ``english_placeholder`` flag the units
    that are placeholders (or empty) in each; all four lists are aligned unit by unit. A run
    whose units are all placeholders in English too has no English text to hold and gets no
    host.
    """
    n = len(chars)
    if not (len(english_chars) == len(placeholder) == len(english_placeholder) == n):
        raise ValueError(f"merged_hosts: lists of lengths {len(chars)}, {len(english_chars)}, "
                         f"{len(placeholder)}, {len(english_placeholder)}: expected one length")

    def comparable(i: int) -> bool:
        return not placeholder[i] and not english_placeholder[i] and english_chars[i] > 0

    ratios = [chars[i] / english_chars[i] for i in range(n) if comparable(i)]
    if not ratios:
        return []
    median = statistics.median(ratios)
    if median <= 0:
        return []
    hosts = set()
    for first, last in placeholder_runs(placeholder):
        run_english = sum(english_chars[i] for i in range(first, last + 1)
                          if not english_placeholder[i])
        if run_english == 0:
            continue
        for h in (first - 1, last + 1):
            if 0 <= h < n and comparable(h):
                observed = chars[h] / english_chars[h] / median
                if_host = (english_chars[h] + run_english) / english_chars[h]
                if observed >= math.sqrt(if_host):
                    hosts.add(h)
    return sorted(hosts)
