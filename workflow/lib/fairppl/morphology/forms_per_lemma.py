"""Forms per lemma: a second, simpler morphology proxy beside MCC, from simplemma's dictionaries.

Each simplemma 2.0.0 dictionary is a form -> lemma mapping (one lemma per form), shipped as
``simplemma/strategies/dictionaries/data/<code>.plzma`` and read through its public
``DefaultDictionaryFactory().get_dictionary(code)`` (:func:`fairppl.morphology.lemmatize.
simplemma_factory`). For a language:

- ``n_forms``: distinct forms (the mapping's keys; the lemmas themselves are keys too, mapped to
  themselves, in every covered language but a handful of entries, which the note counts);
- ``n_lemmas``: distinct lemmas (the mapping's values);
- ``forms_per_lemma`` = n_forms / n_lemmas: the number of distinct forms mapped to each lemma,
  averaged over lemmas.

It measures the dictionary as much as the language: a dictionary that lists many uninflected
words (English: 77,504 lemmas, 24,779 of them with one form) or generated paradigms (Swahili:
4.9 million forms of 4,044 lemmas, every verb with its subject, tense and negation prefixes)
moves the ratio as much as inflection does. The note says which lemma has the most forms and
how many, so a reader sees where a value comes from. Keys differing only in case are distinct
forms, as the dictionary lists them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping

import polars as pl

from .lemmatize import lemmatizer_for, simplemma_factory

#: The ``source`` column of the table.
SOURCE = "simplemma"

COLUMNS = {"language": pl.String, "source": pl.String, "n_forms": pl.Int64,
           "n_lemmas": pl.Int64, "forms_per_lemma": pl.Float64, "note": pl.String}


def count_forms(mapping: Mapping[str, str]) -> dict:
    """Forms per lemma of a form -> lemma mapping: n_forms, n_lemmas, forms_per_lemma, the lemma
    with the most forms (``largest``, ties broken by the lemma's sorting order) and its count
    (``largest_forms``), and ``lemmas_not_forms`` (lemmas that are not keys themselves).
    ValueError on an empty mapping."""
    per_lemma = Counter(mapping.values())
    if not per_lemma:
        raise ValueError("an empty form -> lemma mapping has no forms per lemma")
    n_forms = sum(per_lemma.values())
    largest_forms = max(per_lemma.values())
    largest = min(lemma for lemma, n in per_lemma.items() if n == largest_forms)
    not_forms = sum(1 for lemma in per_lemma if mapping.get(lemma) is None)
    return {"n_forms": n_forms, "n_lemmas": len(per_lemma),
            "forms_per_lemma": n_forms / len(per_lemma), "largest": largest,
            "largest_forms": largest_forms, "lemmas_not_forms": not_forms}


def simplemma_dictionary(code: str) -> Mapping[str, str]:
    """simplemma's form -> lemma dictionary ``code``, loaded by a factory of its own (freed with
    the mapping)."""
    return simplemma_factory().get_dictionary(code)


def forms_per_lemma_table(languages: Iterable[str],
                          dictionary: Callable[[str], Mapping[str, str]] = simplemma_dictionary,
                          progress: bool = True) -> pl.DataFrame:
    """One row per study language id (columns of :data:`COLUMNS`): the counts of
    :func:`count_forms` for the languages simplemma covers (the note names the largest
    paradigm), empty counts and the reason in the note for the others. ``dictionary`` maps a
    simplemma code to its form -> lemma mapping (tests pass small ones)."""
    from tqdm import tqdm

    rows = []
    for language in tqdm(list(languages), desc="forms per lemma", unit="language",
                         disable=not progress):
        cov = lemmatizer_for(language)
        row = {"language": language, "source": SOURCE, "n_forms": None, "n_lemmas": None,
               "forms_per_lemma": None}
        if not cov.covered:
            row["note"] = f"not covered: {cov.reason}"
        else:
            counts = count_forms(dictionary(cov.code))
            note = (f"dictionary {cov.code}; most forms: {counts['largest']!r} with "
                    f"{counts['largest_forms']}")
            if counts["lemmas_not_forms"]:
                note += (f"; {counts['lemmas_not_forms']} lemmas are not listed as forms "
                         f"themselves")
            row.update({k: counts[k] for k in ("n_forms", "n_lemmas", "forms_per_lemma")},
                       note=note)
        rows.append(row)
    return pl.DataFrame(rows, schema=COLUMNS)
