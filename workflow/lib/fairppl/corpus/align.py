"""Alignment of a multi-text into the study's units table: placeholder units and the verses
that hold merged placeholder text dropped in every language together, and train/dev/test splits
by each unit's position in the corpus's own order, so every language holds out exactly the same
content.

Which units are dropped is decided by :func:`find_dropped` from the translations it is given;
:func:`fairppl.corpus.prepare.prepare_units` gives it every translation the corpus ships (not only the
configured languages), so adding or removing a language changes no other language's units.
A corpus with ``units: own`` drops a unit only in the language whose translation causes it (and
in every language where the English reference does): :func:`align_units`.

Every bad input raises :class:`fairppl.core.errors.InputError` naming the corpus, the language (and
its file or translation code) and what was expected.
"""

from __future__ import annotations

import re

import polars as pl
from tqdm import tqdm

from ..core.errors import InputError
from .merged import held_runs, marker_meanings
from .splits import SplitScheme
from ..core.text import normalize

#: A reader's output: ``{language: [(unit_id, raw_text), ...]}`` in the corpus's own order.
Texts = dict[str, list[tuple[str, str]]]

#: Columns of the dropped-units table (:func:`find_dropped`, ``dropped.tsv``): one row per dropped
#: unit and translation that causes the drop. ``reason`` is "empty", "placeholder" or "host";
#: ``how`` is, for a placeholder, what it says about its text (``previous``, ``missing`` or
#: ``unknown``, :mod:`fairppl.corpus.merged`), for a host the rule that found it (``marker`` or
#: ``length``), for an empty unit ``unknown`` (or :data:`NO_BOOK`, set by
#: :func:`fairppl.corpus.prepare.prepare_units`); ``detail`` is the placeholder's text (its first
#: 40 characters) or the unit ids of the placeholder run(s) a host holds ("a..b" for a run).
DROPPED_SCHEMA = {"corpus": pl.Utf8, "position": pl.Int64, "unit_id": pl.Utf8,
                  "translation": pl.Utf8, "reason": pl.Utf8, "how": pl.Utf8, "detail": pl.Utf8}

#: How a corpus's units are kept (config ``corpora.<corpus>.units``): ``shared`` (the default)
#: keeps in every language only the units no translation drops; ``own`` keeps in each language
#: every unit its own translation and the English reference have (:func:`align_units`).
UNIT_MODES = ("shared", "own")

#: The column a dropped-units table of ``units: own`` adds: the configured languages the row's
#: drop applies in (comma-separated ids, or :data:`EVERY_LANGUAGE` for the English reference's).
DROPPED_IN = "dropped_in"
EVERY_LANGUAGE = "every language"

#: ``how`` of an empty unit of a book its translation has no verse of (a CES XML corpus with
#: ``units: own`` reads the books of every configured file): the unit is absent, not merged.
NO_BOOK = "no book"


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
                  n_placeholder_units: int, n_host_units: int, who: str = "") -> list[str]:
    """Split of each kept unit (by its original position); raise if a split gets none (``who``,
    e.g. ", language gla (...)", names the language whose units these are)."""
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
            f"corpus {corpus!r}{who}: split(s) {', '.join(empty)} empty: {n_units} aligned "
            f"units, {n_units - len(kept)} dropped ({n_placeholder_units} placeholder units, "
            f"{n_host_units} merged-verse hosts), {len(kept)} kept -> train={counts['train']}, "
            f"dev={counts['dev']}, test={counts['test']}; expected {expected}")
    return splits


def _compile(corpus: str, placeholder_patterns: list[str]) -> list[re.Pattern]:
    try:
        return [re.compile(p) for p in placeholder_patterns]
    except re.error as err:
        raise InputError(f"corpus {corpus!r}: invalid placeholder pattern {err.pattern!r} "
                         f"({err}): expected a Python regular expression") from None


def _check_texts(corpus: str, texts: Texts, english: str, what: str) -> None:
    if not texts:
        raise InputError(f"corpus {corpus!r}: no {what}s given: expected at least one")
    if english not in texts:
        raise InputError(f"corpus {corpus!r}: English reference {what} {english!r} is not "
                         f"among its {what}s: expected one of {', '.join(texts)}")


def _normalize_all(corpus: str, texts: Texts, normalized: bool = False) -> dict[str, list[str]]:
    if normalized:
        return {key: [text for _, text in units] for key, units in texts.items()}
    n = sum(len(units) for units in texts.values())
    return {key: [normalize(text) for _, text in texts[key]]
            for key in tqdm(list(texts), desc=f"{corpus}: normalising", unit="text",
                            disable=n < 100_000)}


def normalize_texts(corpus: str, texts: Texts) -> Texts:
    """``texts`` with every unit's text normalised (:func:`fairppl.core.text.normalize`), to pass to
    :func:`find_dropped` and :func:`align_units` with ``normalized=True`` (each normalises its
    input otherwise)."""
    norm = _normalize_all(corpus, texts)
    return {key: [(uid, text) for (uid, _), text in zip(units, norm[key])]
            for key, units in texts.items()}


def find_dropped(corpus: str, texts: Texts, placeholder_patterns: list[str], *, english: str,
                 source_label: dict[str, str] | None = None,
                 normalized: bool = False) -> pl.DataFrame:
    """The units to drop in every language of a multi-text, decided from the translations in
    ``texts`` (``{translation: [(unit_id, raw_text), ...]}``, aligned with ``english``, the
    English reference translation, which must be among them).

    A unit is dropped if in ANY translation its normalised text (:func:`fairppl.core.text.normalize`)
    is empty or fully matches (``re.fullmatch``) one of ``placeholder_patterns``, or if it is the
    *host* of a neighbouring run of that translation's placeholders: the verse that holds the
    merged text, named by the placeholder where it says so and otherwise found from lengths
    against ``english`` (:func:`fairppl.corpus.merged.merged_hosts`).

    ``normalized=True`` takes the texts as already normalised (:func:`normalize_texts`).
    Returns one row per dropped unit and translation that causes it (a unit can have several),
    with the columns of :data:`DROPPED_SCHEMA`, sorted by position and translation.
    """
    _check_texts(corpus, texts, english, "translation")
    compiled = _compile(corpus, placeholder_patterns)
    ref_ids = _check_ids(corpus, texts, english, source_label)
    return _decide(corpus, ref_ids, _normalize_all(corpus, texts, normalized), compiled,
                   english)


def _decide(corpus: str, ref_ids: list[str], normalized: dict[str, list[str]],
            compiled: list[re.Pattern], english: str) -> pl.DataFrame:
    """:func:`find_dropped` on checked, normalised texts."""

    def is_placeholder(text: str) -> bool:
        return text == "" or any(rx.fullmatch(text) for rx in compiled)

    keys = sorted(normalized)
    flags = {key: [is_placeholder(t) for t in normalized[key]] for key in keys}
    meanings = marker_meanings(normalized, flags)
    english_chars = [len(t) for t in normalized[english]]
    rows = []
    for key in keys:
        for i, flag in enumerate(flags[key]):
            if flag:
                text = normalized[key][i]
                rows.append((i, key, "placeholder" if text else "empty", meanings[key][i],
                             text[:40]))
        if key == english:
            continue
        hosts = held_runs([len(t) for t in normalized[key]], english_chars, flags[key],
                          flags[english], meanings[key])
        for h, (how, held) in hosts.items():
            detail = ", ".join(ref_ids[a] if a == b else f"{ref_ids[a]}..{ref_ids[b]}"
                               for a, b in held)
            rows.append((h, key, "host", how, detail))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    return pl.DataFrame(
        {
            "corpus": [corpus] * len(rows),
            "position": [r[0] for r in rows],
            "unit_id": [ref_ids[r[0]] for r in rows],
            "translation": [r[1] for r in rows],
            "reason": [r[2] for r in rows],
            "how": [r[3] for r in rows],
            "detail": [r[4] for r in rows],
        },
        schema=DROPPED_SCHEMA,
    )


def align_units(corpus: str, texts: Texts, placeholder_patterns: list[str],
                scheme: SplitScheme, *, english: str,
                source_label: dict[str, str] | None = None, dropped: pl.DataFrame | None = None,
                normalized: bool = False, units: str = "shared",
                translation_of: dict[str, str] | None = None
                ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Align the units of a multi-text, drop placeholders and merged-verse hosts in every
    language (``units="shared"``) or in the language they belong to (``units="own"``), assign
    splits.

    ``texts`` is a reader's output ``{language: [(unit_id, raw_text), ...]}``; every language
    must have exactly the unit ids of ``english`` (the English reference language, which must be
    among them), in the same order. Texts are normalised with :func:`fairppl.core.text.normalize`.

    ``dropped`` is the table of units to drop (:func:`find_dropped`, decided from every
    translation the corpus ships, so that it does not depend on which languages are
    configured); without it, it is decided from ``texts`` themselves. Either way a unit that is
    empty or fully matches one of ``placeholder_patterns`` in one of ``texts`` must be in it
    (InputError otherwise: the table belongs to another corpus or other patterns), and so must
    the host holding its merged text, found by :func:`fairppl.corpus.merged.merged_hosts`. Dropping
    the host too keeps a language from being charged for two verses against one English verse.

    A unit's split is ``scheme.split_of(position)`` of its 0-based position among ALL units of
    the corpus, before anything is dropped, so adding a language (or a placeholder) never moves
    another unit between splits. ``source_label`` (language -> file or translation code) is only
    used in error messages; ``normalized=True`` takes the texts as already normalised.

    ``units="own"`` (:data:`UNIT_MODES`): each language keeps every unit that neither its own
    translation nor the English reference's drops (BPEC divides a language's bits by the
    English characters of the same units, so an English drop applies in every language); the
    rows of ``dropped`` whose translation is not one of ``texts`` are left out, and the table
    gets the column :data:`DROPPED_IN` (the languages each row's drop applies in).
    ``translation_of`` maps each language to its ``translation`` in ``dropped`` (its source id;
    default: the language id itself). Every language must still have a unit in every split.

    Returns ``(units, dropped)``:

    - ``units``: columns corpus, unit_id, position (Int64, 0-based position in the corpus's own
      order, before dropping: gaps where units were dropped), language, split
      ("train"/"dev"/"test"), text (normalised); sorted by language, then position.
    - ``dropped``: the dropped-units table (:data:`DROPPED_SCHEMA`, plus :data:`DROPPED_IN`
      under ``units="own"``).
    """
    if units not in UNIT_MODES:
        raise InputError(f"corpus {corpus!r}: units {units!r}: expected one of "
                         f"{', '.join(UNIT_MODES)}")
    _check_texts(corpus, texts, english, "language")
    compiled = _compile(corpus, placeholder_patterns)
    ref_ids = _check_ids(corpus, texts, english, source_label)
    languages = list(texts)
    n_units = len(ref_ids)
    normalized = _normalize_all(corpus, texts, normalized)
    if dropped is None:
        dropped = _decide(corpus, ref_ids, normalized, compiled, english)

    positions = dropped["position"].to_list()
    wrong = [(p, u) for p, u in zip(positions, dropped["unit_id"].to_list())
             if not 0 <= p < n_units or ref_ids[p] != u]
    if wrong:
        p, u = wrong[0]
        raise InputError(f"corpus {corpus!r}: the dropped-units table names unit {u!r} at "
                         f"position {p}, which this corpus does not have there "
                         f"({len(wrong)} such rows): expected a table decided from this corpus")
    if units == "own":
        return _align_own(corpus, ref_ids, normalized, compiled, scheme, english, source_label,
                          dropped, translation_of or {lang: lang for lang in languages})
    drop = set(positions)
    for lang in languages:
        _check_no_leak(corpus, lang, normalized[lang], drop, compiled, ref_ids, source_label,
                       "every language")
    kept = [i for i in range(n_units) if i not in drop]
    placeholder_units = set(dropped.filter(pl.col("reason") != "host")["position"])
    n_placeholder, n_hosts = len(placeholder_units), len(drop - placeholder_units)
    splits = _check_splits(corpus, scheme, n_units, kept, n_placeholder, n_hosts)

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
    return units, dropped


def _check_no_leak(corpus: str, lang: str, texts: list[str], drop: set[int],
                   compiled: list[re.Pattern], ref_ids: list[str],
                   source_label: dict[str, str] | None, decided_from: str) -> None:
    """Raise unless every empty or placeholder unit of ``lang``'s ``texts`` is in ``drop``: a
    dropped-units table decided otherwise (``decided_from``: what it should have been decided
    from) would leave a placeholder among the kept units."""
    leak = [i for i, t in enumerate(texts) if i not in drop
            and (t == "" or any(rx.fullmatch(t) for rx in compiled))]
    if leak:
        raise InputError(f"corpus {corpus!r}, {_describe(lang, source_label)}: "
                         f"{len(leak)} empty or placeholder unit(s) not in the dropped-units "
                         f"table ({_first([ref_ids[i] for i in leak])}): expected a table "
                         f"decided with the same placeholder patterns from {decided_from}")


def _align_own(corpus: str, ref_ids: list[str], normalized: dict[str, list[str]],
               compiled: list[re.Pattern], scheme: SplitScheme, english: str,
               source_label: dict[str, str] | None, dropped: pl.DataFrame,
               translation_of: dict[str, str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`align_units` with ``units="own"`` on checked, normalised texts."""
    languages = sorted(normalized)
    unknown = [lang for lang in languages if lang not in translation_of]
    if unknown:
        raise InputError(f"corpus {corpus!r}: language(s) {unknown} have no translation in "
                         f"translation_of: expected every language of the texts")
    reference = translation_of[english]
    by_translation: dict[str, set[int]] = {}
    for pos, sid in zip(dropped["position"].to_list(), dropped["translation"].to_list()):
        by_translation.setdefault(sid, set()).add(pos)
    english_drop = by_translation.get(reference, set())
    n_units = len(ref_ids)
    parts = []
    for lang in languages:
        mine = by_translation.get(translation_of[lang], set())
        drop = mine | english_drop
        _check_no_leak(corpus, lang, normalized[lang], drop, compiled, ref_ids, source_label,
                       f"its translation ({translation_of[lang]!r})")
        kept = [i for i in range(n_units) if i not in drop]
        mine_rows = dropped.filter(pl.col("translation").is_in(
            [translation_of[lang], reference]))
        placeholder_units = set(mine_rows.filter(pl.col("reason") != "host")["position"])
        splits = _check_splits(corpus, scheme, n_units, kept, len(placeholder_units),
                               len(drop - placeholder_units),
                               who=f", {_describe(lang, source_label)} (units: own)")
        parts.append(pl.DataFrame(
            {"corpus": [corpus] * len(kept), "unit_id": [ref_ids[i] for i in kept],
             "position": kept, "language": [lang] * len(kept), "split": splits,
             "text": [normalized[lang][i] for i in kept]},
            schema={"corpus": pl.Utf8, "unit_id": pl.Utf8, "position": pl.Int64,
                    "language": pl.Utf8, "split": pl.Utf8, "text": pl.Utf8}))
    languages_of: dict[str, list[str]] = {}
    for lang in languages:
        languages_of.setdefault(translation_of[lang], []).append(lang)
    where = {sid: ", ".join(langs) for sid, langs in languages_of.items()}
    where[reference] = EVERY_LANGUAGE
    dropped = (dropped.filter(pl.col("translation").is_in(list(where)))
               .with_columns(pl.col("translation").replace_strict(where, return_dtype=pl.Utf8)
                             .alias(DROPPED_IN)))
    return pl.concat(parts), dropped


def majority_counts(unit_sets: dict[str, set[str]]) -> dict[str, int]:
    """Per language of ``unit_sets`` (language -> its units in one corpus and split), how many
    of its units at least half of the languages have (the majority units): a partial
    translation's books that few others hold do not count."""
    have: dict[str, int] = {}
    for units in unit_sets.values():
        for uid in units:
            have[uid] = have.get(uid, 0) + 1
    need = len(unit_sets) / 2
    return {lang: sum(1 for uid in units if have[uid] >= need)
            for lang, units in unit_sets.items()}


def common_set_languages(unit_sets: dict[str, set[str]], min_share: float
                         ) -> tuple[list[str], dict[str, int], float]:
    """The languages of ``unit_sets`` (language -> its units in one corpus and split) whose units
    enter the common unit set: those with at least ``min_share`` times the largest count of
    majority units (:func:`majority_counts`); 0 keeps every language. Returns (those languages,
    sorted; every language's majority count; the threshold in units)."""
    counts = majority_counts(unit_sets)
    threshold = min_share * max(counts.values(), default=0)
    return sorted(lang for lang, n in counts.items() if n >= threshold), counts, threshold
