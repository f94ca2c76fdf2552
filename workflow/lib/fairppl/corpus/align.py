"""Alignment of a multi-text into the study's units table: placeholder units and the verses
that hold merged placeholder text dropped in every language together, and train/dev/test splits
by each unit's position in the corpus's own order, so every language holds out exactly the same
content.

Every bad input raises :class:`fairppl.core.errors.InputError` naming the corpus, the language (and
its file or translation code) and what was expected.
"""

from __future__ import annotations

import re

import polars as pl
from tqdm import tqdm

from ..core.errors import InputError
from .merged import merged_hosts
from .splits import SplitScheme
from ..core.text import normalize

#: A reader's output: ``{language: [(unit_id, raw_text), ...]}`` in the corpus's own order.
Texts = dict[str, list[tuple[str, str]]]


def _describe(lang: str, source_label: dict[str, str] | None) -> str:
    if source_label and lang in source_label:
        return f"language {lang} ({source_label[lang]})"
    return f"language {lang}"


def _first(items: list[str], k: int = 5) -> str:
    shown = ", ".join(items[:k])
    return shown + (f", ... ({len(items) - k} more)" if len(items) > k else "")


def _check_ids(corpus: str, texts: Texts, english: str,
               source_label: dict[str, str] | None) -> list[str]:
    """The unit ids of ``english``; raise unless every language has exactly them, in order and
    each once."""
    for lang, units in texts.items():
        seen, dups = set(), []
        for uid, _ in units:
            if uid in seen:
                dups.append(uid)
            seen.add(uid)
        if dups:
            raise InputError(f"corpus {corpus!r}, {_describe(lang, source_label)}: "
                             f"{len(dups)} duplicate unit id(s) {_first(dups)}: expected each "
                             f"unit id once")

    ref_ids = [uid for uid, _ in texts[english]]
    ref_set = set(ref_ids)
    ref = _describe(english, source_label)
    for lang, units in texts.items():
        ids = [uid for uid, _ in units]
        if ids == ref_ids:
            continue
        id_set = set(ids)
        missing = [u for u in ref_ids if u not in id_set]
        extra = [u for u in ids if u not in ref_set]
        where = f"corpus {corpus!r}, {_describe(lang, source_label)}"
        if not missing and not extra:
            first_diff = next(i for i, (a, b) in enumerate(zip(ids, ref_ids)) if a != b)
            raise InputError(f"{where}: same {len(ids)} units as {ref} but in a different "
                             f"order (first difference at position {first_diff}: "
                             f"{ids[first_diff]} vs {ref_ids[first_diff]}): expected the same "
                             f"order")
        parts = [f"{len(ids)} units vs {len(ref_ids)} in {ref}; "
                 f"{len(missing) + len(extra)} unit id(s) differ"]
        if missing:
            parts.append(f"missing {len(missing)}: {_first(missing)}")
        if extra:
            parts.append(f"extra {len(extra)}: {_first(extra)}")
        raise InputError(f"{where} is not aligned: {'; '.join(parts)}; expected exactly the "
                         f"unit ids of {ref}")
    return ref_ids


def _check_splits(corpus: str, scheme: SplitScheme, n_units: int, kept: list[int],
                  n_placeholder_units: int, n_host_units: int) -> list[str]:
    """Split of each kept unit (by its original position); raise if a split gets none."""
    splits = [scheme.split_of(i) for i in kept]
    counts = {s: splits.count(s) for s in ("train", "dev", "test")}
    empty = [s for s, c in counts.items() if c == 0]
    if empty:
        need = max(scheme.first_positions().values()) + 1
        if n_units < need:
            expected = (f"at least {need} aligned units (the split scheme {scheme} fills every "
                        f"split within the first {need} positions)")
        else:
            expected = (f"kept units at positions of every split (the split scheme {scheme} "
                        f"assigns splits by position among all {n_units} units, before "
                        f"dropping)")
        raise InputError(
            f"corpus {corpus!r}: split(s) {', '.join(empty)} empty: {n_units} aligned units, "
            f"{n_units - len(kept)} dropped ({n_placeholder_units} placeholder units, "
            f"{n_host_units} merged-verse hosts), {len(kept)} kept -> train={counts['train']}, "
            f"dev={counts['dev']}, test={counts['test']}; expected {expected}")
    return splits


def align_units(corpus: str, texts: Texts, placeholder_patterns: list[str],
                scheme: SplitScheme, *, english: str,
                source_label: dict[str, str] | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Align the units of a multi-text, drop placeholders and merged-verse hosts in every
    language, assign splits.

    ``texts`` is a reader's output ``{language: [(unit_id, raw_text), ...]}``; every language
    must have exactly the unit ids of ``english`` (the English reference language, which must be
    among them), in the same order. Texts are normalised with :func:`fairppl.core.text.normalize`.

    A unit is dropped in ALL languages if in ANY language its normalised text is empty or fully
    matches (``re.fullmatch``) one of ``placeholder_patterns``, or if it is the *host* of a
    neighbouring run of that language's placeholders: the verse that holds the merged text,
    found from lengths against ``english`` by :func:`fairppl.corpus.merged.merged_hosts`. Dropping the
    host too keeps a language from being charged for two verses against one English verse.

    A unit's split is ``scheme.split_of(position)`` of its 0-based position among ALL units of
    the corpus, before anything is dropped, so adding a language (or a placeholder) never moves
    another unit between splits. ``source_label`` (language -> file or translation code) is only
    used in error messages.

    Returns ``(units, dropped)``:

    - ``units``: columns corpus, unit_id, position (Int64, 0-based position in the corpus's own
      order, before dropping: gaps where units were dropped), language, split
      ("train"/"dev"/"test"), text (normalised); sorted by language, then position.
    - ``dropped``: one row per language (sorted): corpus, language, n_placeholder (units empty
      or placeholder in that language), n_merged_hosts (units holding that language's merged
      placeholder text), n_dropped (units dropped in every language; the same on every row),
      n_kept (aligned units kept per language). Counts are units.
    """
    if not texts:
        raise InputError(f"corpus {corpus!r}: no languages given: expected at least one")
    if english not in texts:
        raise InputError(f"corpus {corpus!r}: English reference language {english!r} is not "
                         f"among its languages: expected one of {', '.join(texts)}")
    try:
        compiled = [re.compile(p) for p in placeholder_patterns]
    except re.error as err:
        raise InputError(f"corpus {corpus!r}: invalid placeholder pattern {err.pattern!r} "
                         f"({err}): expected a Python regular expression") from None
    ref_ids = _check_ids(corpus, texts, english, source_label)

    languages = list(texts)
    n_units = len(ref_ids)
    normalized = {
        lang: [normalize(text) for _, text in texts[lang]]
        for lang in tqdm(languages, desc=f"{corpus}: normalising", unit="language",
                         disable=n_units * len(languages) < 100_000)
    }

    def is_placeholder(text: str) -> bool:
        return text == "" or any(rx.fullmatch(text) for rx in compiled)

    flags = {lang: [is_placeholder(t) for t in normalized[lang]] for lang in languages}
    english_chars = [len(t) for t in normalized[english]]
    hosts = {lang: [] if lang == english else
             merged_hosts([len(t) for t in normalized[lang]], english_chars, flags[lang],
                          flags[english])
             for lang in languages}
    placeholder_units = {i for lang in languages for i, flag in enumerate(flags[lang]) if flag}
    host_units = {i for lang in languages for i in hosts[lang]} - placeholder_units
    kept = [i for i in range(n_units) if i not in placeholder_units and i not in host_units]
    splits = _check_splits(corpus, scheme, n_units, kept, len(placeholder_units),
                           len(host_units))

    order = sorted(languages)
    n = len(kept)
    units = pl.DataFrame(
        {
            "corpus": [corpus] * (n * len(order)),
            "unit_id": [ref_ids[i] for i in kept] * len(order),
            "position": kept * len(order),
            "language": [lang for lang in order for _ in range(n)],
            "split": splits * len(order),
            "text": [normalized[lang][i] for lang in order for i in kept],
        },
        schema={"corpus": pl.Utf8, "unit_id": pl.Utf8, "position": pl.Int64,
                "language": pl.Utf8, "split": pl.Utf8, "text": pl.Utf8},
    )
    dropped = pl.DataFrame(
        {
            "corpus": [corpus] * len(order),
            "language": order,
            "n_placeholder": [sum(flags[lang]) for lang in order],
            "n_merged_hosts": [len(hosts[lang]) for lang in order],
            "n_dropped": [n_units - n] * len(order),
            "n_kept": [n] * len(order),
        },
        schema={"corpus": pl.Utf8, "language": pl.Utf8, "n_placeholder": pl.Int64,
                "n_merged_hosts": pl.Int64, "n_dropped": pl.Int64, "n_kept": pl.Int64},
    )
    return units, dropped
