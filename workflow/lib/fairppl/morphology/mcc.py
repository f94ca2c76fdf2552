"""Morphological counting complexity (MCC): the number of distinct inflectional feature bundles a
language's lexicon distinguishes (Sagot 2013's counting complexity, counted on UniMorph lexicons
as Cotterell et al. 2018 describe it, section 2.1: "the categories annotated in the language's
UniMorph lexicon").

This is not their exact count, and no rule found here reproduces it. On the lexicons of that time
that could be read (English, Danish and Estonian UniMorph files, in part:
``resources/published/mcc_rule_check.tsv``) this rule gives 5, 14 and 108 against the published
6, 15 and 110. Those files hold only verbs and nouns without gender, each bundle in one feature
order, so counting raw feature strings over every part of speech gives the same numbers;
counting an empty bundle from the files' blank lines gives 5, 15, 109, and counting feature
values 6, 14, 33. The published rows of the MCC table carry that comparison, language by
language; for the other 18 languages the distance is not known.

The counting rule, applied to rows of (lemma, form, feature bundle, part of speech) whatever
their source (a UniMorph file, Apertium's paradigms mapped by :mod:`.apertium`):

- Only verbs, nouns and adjectives are counted. UniMorph's part-of-speech features ``V``,
  ``V.PTCP`` (participles), ``V.CVB`` (converbs, gerunds) and ``V.MSDR`` (verbal nouns) are
  verbs, ``N`` nouns, ``ADJ`` adjectives; rows of any other part of speech (``ADV``, ``PRO``,
  ``DET``, ...) are left out and counted in ``n_other_rows``.
- A bundle is the set of the row's features (order does not matter: ``V;3;SG;PRS`` and
  ``V;PRS;3;SG`` are one bundle) with the part of speech kept in it, as UniMorph writes it, so a
  verb's ``SG`` and a noun's ``SG`` are two bundles. The verb participle markers (``V.PTCP`` ...)
  stay in the bundle: a participle is a cell of the verb's paradigm.
- Inherent lexical features are not inflection and are dropped before counting: gender
  (``MASC``, ``FEM``, ``NEUT``) and animacy (``ANIM``, ``INAN``, ``HUM``, ``NHUM``) on nouns,
  where a lemma has one value for all its forms. On verbs and adjectives they are agreement,
  which is inflection, and are kept (Spanish ``hablada`` is ``V.PTCP;PST;FEM;SG``).
- Every other feature of the UniMorph schema's inflectional categories is kept: person, number,
  tense, aspect, mood, case, voice, finiteness, comparison, definiteness, possession, polarity,
  politeness, evidentiality, and so on. Clitics and derivation have no UniMorph feature; a source
  that marks them (Apertium) removes them in its mapping.
- MCC per part of speech is the number of distinct bundles of that part of speech; the total is
  the number of distinct bundles over the three (with the part of speech in the bundle, the sum of
  the three).

Forms per lemma, a second and cruder morphology proxy, is distinct forms / distinct lemmas of the
counted rows, per part of speech and over the three.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable

from ..core.errors import InputError

#: The parts of speech that are counted, and the UniMorph part-of-speech features that map to them.
POS_OF_FEATURE = {"V": "verb", "V.PTCP": "verb", "V.CVB": "verb", "V.MSDR": "verb",
                  "N": "noun", "ADJ": "adjective"}
COUNTED_POS = ("verb", "noun", "adjective")

#: UniMorph part-of-speech features that are not counted (a row with one of them is skipped).
OTHER_POS_FEATURES = frozenset({"PROPN", "PRO", "CLF", "ART", "DET", "AUX", "ADV", "ADP", "COMP",
                                "CONJ", "NUM", "PART", "INTJ"})

#: Features that are inherent (lexical) on nouns: gender and animacy.
NOUN_INHERENT = frozenset({"MASC", "FEM", "NEUT", "ANIM", "INAN", "HUM", "NHUM"})


@dataclass(frozen=True)
class Row:
    """One inflected form: its lemma, the form, its features (UniMorph values) and part of speech
    (``verb``, ``noun``, ``adjective``; the part-of-speech feature is one of ``features``)."""

    lemma: str
    form: str
    features: frozenset
    pos: str


def part_of_speech(features: Iterable[str], *, path: str | None = None,
                   line: int | None = None) -> str | None:
    """The counted part of speech (``verb``/``noun``/``adjective``) of a UniMorph bundle, None for
    another part of speech; an InputError when the bundle has no part-of-speech feature or two
    that disagree."""
    found = {POS_OF_FEATURE[f] for f in features if f in POS_OF_FEATURE}
    other = {f for f in features if f in OTHER_POS_FEATURES}
    if len(found) > 1:
        raise InputError(f"two parts of speech in one bundle: {sorted(features)}: expected "
                         f"one part of speech per feature bundle", path=path,
                         line=line)
    if found:
        return found.pop()
    if other:
        return None
    raise InputError(f"no part-of-speech feature (V, N, ADJ, ...) in {';'.join(features)!r}: "
                     f"expected one part of speech per feature bundle", path=path, line=line)


def inflectional_bundle(features: Iterable[str], pos: str) -> frozenset:
    """The bundle that counts: ``features`` less the inherent features of ``pos`` (gender and
    animacy on nouns)."""
    features = frozenset(features)
    if pos == "noun":
        return features - NOUN_INHERENT
    return features


def parse_features(text: str, *, path: str | None = None, line: int | None = None) -> frozenset:
    """A UniMorph feature string (``V;IND;PRS;3;SG``) as a set; an InputError for an empty string,
    an empty feature (``V;;SG``) or whitespace inside a feature."""
    parts = text.split(";")
    for part in parts:
        if not part or part != part.strip() or " " in part:
            raise InputError(f"malformed feature bundle {text!r}: expected features separated "
                             "by ';', none empty, no spaces", path=path, line=line)
    return frozenset(parts)


def read_unimorph(path: str | os.PathLike) -> tuple[list[Row], int]:
    """Rows of a UniMorph TSV file (``lemma<TAB>form<TAB>features``, blank lines skipped) whose
    part of speech is counted, and the number of rows of other parts of speech. A row with other
    than three fields, an empty lemma or form, a malformed bundle or no part of speech raises an
    InputError naming the file and line."""
    path = str(path)
    rows: list[Row] = []
    other = 0
    try:
        handle = open(path, encoding="utf-8")
    except FileNotFoundError:
        raise InputError("UniMorph file not found", path=path) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            text = raw.rstrip("\n").rstrip("\r")
            if not text.strip():
                continue
            fields = text.split("\t")
            if len(fields) != 3:
                raise InputError(f"expected 3 tab-separated fields (lemma, form, features), got "
                                 f"{len(fields)}: {text!r}", path=path, line=number)
            lemma, form, bundle = fields
            if not lemma.strip() or not form.strip():
                raise InputError(f"empty lemma or form: {text!r}: expected both non-empty",
                                 path=path, line=number)
            features = parse_features(bundle.strip(), path=path, line=number)
            pos = part_of_speech(features, path=path, line=number)
            if pos is None:
                other += 1
                continue
            rows.append(Row(lemma, form, features, pos))
    return rows, other


@dataclass(frozen=True)
class Count:
    """MCC and forms per lemma of one part of speech (or ``total``)."""

    pos: str
    mcc: int
    n_forms: int
    n_lemmas: int

    @property
    def forms_per_lemma(self) -> float | None:
        return self.n_forms / self.n_lemmas if self.n_lemmas else None


def count(rows: Iterable[Row]) -> dict[str, Count]:
    """MCC, distinct forms and distinct lemmas per counted part of speech and in ``total`` (see the
    module docstring for the rule). Parts of speech without rows have zeros."""
    bundles: dict[str, set] = {pos: set() for pos in COUNTED_POS}
    forms: dict[str, set] = {pos: set() for pos in COUNTED_POS}
    lemmas: dict[str, set] = {pos: set() for pos in COUNTED_POS}
    for row in rows:
        if row.pos not in bundles:
            raise ValueError(f"part of speech {row.pos!r} is not one of {COUNTED_POS}")
        bundles[row.pos].add(inflectional_bundle(row.features, row.pos))
        forms[row.pos].add(row.form)
        lemmas[row.pos].add(row.lemma)
    result = {pos: Count(pos, len(bundles[pos]), len(forms[pos]), len(lemmas[pos]))
              for pos in COUNTED_POS}
    result["total"] = Count("total", len(set().union(*bundles.values())),
                            len(set().union(*forms.values())),
                            len(set().union(*lemmas.values())))
    return result


def bundles_by_pos(rows: Iterable[Row]) -> dict[str, list[str]]:
    """The counted bundles of each part of speech as sorted UniMorph strings (what MCC counts)."""
    found: dict[str, set] = {pos: set() for pos in COUNTED_POS}
    for row in rows:
        found[row.pos].add(bundle_text(inflectional_bundle(row.features, row.pos)))
    return {pos: sorted(b) for pos, b in found.items()}


def bundle_text(bundle: Iterable[str]) -> str:
    """A bundle as a UniMorph string, the part of speech first and the rest sorted."""
    features = sorted(bundle)
    pos = [f for f in features if f in POS_OF_FEATURE or f in OTHER_POS_FEATURES]
    return ";".join(pos + [f for f in features if f not in pos])
