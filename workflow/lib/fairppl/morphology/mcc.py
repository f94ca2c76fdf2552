"""Morphological counting complexity (MCC): the number of distinct inflectional feature bundles a
language's lexicon distinguishes (Sagot 2013's counting complexity, counted on UniMorph lexicons
as Cotterell et al. 2018 describe it, section 2.1: "the categories annotated in the language's
UniMorph lexicon").

Two counting rules live here, and they are kept apart by name:

- **The published rule** (:func:`feature_string_count`): the number of distinct third-column
  strings of a ``lemma<TAB>form<TAB>features`` file, the empty string that a blank line gives
  included, as ``cut -f3 | sort -u | wc -l`` counts them. On the UniMorph lexicons of Cotterell
  et al.'s time (the versions of 2017-08-03) it reproduces their published MCC exactly for
  Bulgarian 96, Danish 15, English 6, Estonian 110, Dutch 26, Romanian 60, Slovenian 100 and
  Swedish 35; Lithuanian gives 140 against the published 152 (not explained:
  ``resources/published/mcc_rule_check.tsv``). Every one of those files has at least one blank
  line, so every one of those values counts one empty "bundle"; a feature string written with a
  typo, or with its features in another order, counts as a bundle of its own.
- **This study's rule** (:func:`count`, below), used for every source the study counts itself
  (Apertium's analysers, UniMorph files): a blank line is no form and gives no bundle, a bundle
  is a set of features (order does not matter), known typos of the files are corrected
  (:data:`FEATURE_ERRATA`), gender and animacy of nouns are dropped, and only verbs, nouns and
  adjectives count. On those nine lexicons it is one lower than the published rule (the blank
  line's empty string) for eight of them; on Estonian two lower (the typo ``PRF:POS`` written
  for ``PRF;POS`` in one bundle, which the published rule counts as a bundle of its own).

The published rule is kept to reproduce and check the published values (the rule check of
:mod:`.published`), not to count: an empty string is no inflected form, and a typo no new cell.

This study's counting rule, applied to rows of (lemma, form, feature bundle, part of speech)
whatever their source (a UniMorph file, Apertium's paradigms mapped by :mod:`.apertium`):

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

#: Typos found in UniMorph files, each feature -> the features it stands for; this study's reader
#: corrects them (the published rule counts the strings as written). ``V.PCTP``: the
#: participle marker ``V.PTCP`` misspelt (Slovenian, 2017: 3 bundles, no correct spelling beside
#: them; without the correction the reader refused the file, having no part of speech for
#: them); ``PRF:POS``: ``PRF;POS`` with a colon for the semicolon (Estonian, 2017: one bundle,
#: ``V;ACT;PRS;PRF:POS;COND;2;PL``, whose correct spelling is also in the file; fixed there in
#: 2019).
FEATURE_ERRATA = {"V.PCTP": ("V.PTCP",), "PRF:POS": ("PRF", "POS")}


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
    """A UniMorph feature string (``V;IND;PRS;3;SG``) as a set, the typos of
    :data:`FEATURE_ERRATA` corrected; an InputError for an empty string, an empty feature
    (``V;;SG``) or whitespace inside a feature."""
    parts = text.split(";")
    features = set()
    for part in parts:
        if not part or part != part.strip() or any(c.isspace() for c in part):
            raise InputError(f"malformed feature bundle {text!r}: expected features separated "
                             "by ';', none empty, no spaces", path=path, line=line)
        features.update(FEATURE_ERRATA.get(part, (part,)))
    return frozenset(features)


def _fields(text: str, *, path: str, line: int) -> list[str]:
    """The three tab-separated fields of a non-blank lexicon line; an InputError for another
    number."""
    fields = text.split("\t")
    if len(fields) != 3:
        raise InputError(f"expected 3 tab-separated fields (lemma, form, features), got "
                         f"{len(fields)}: {text!r}", path=path, line=line)
    return fields


def parse_unimorph(lines: Iterable[str], source: str) -> tuple[list[Row], int]:
    """This study's reading of UniMorph lines (``lemma<TAB>form<TAB>features``; blank and
    whitespace-only lines are no form and are skipped): the rows whose part of speech is counted,
    and the number of rows of other parts of speech. A row with other than three fields, an empty
    lemma or form, a malformed bundle or no part of speech raises an InputError naming
    ``source`` and the line."""
    rows: list[Row] = []
    other = 0
    for number, raw in enumerate(lines, start=1):
        text = raw.rstrip("\n").rstrip("\r")
        if not text.strip():
            continue
        lemma, form, bundle = _fields(text, path=source, line=number)
        if not lemma.strip() or not form.strip():
            raise InputError(f"empty lemma or form: {text!r}: expected both non-empty",
                             path=source, line=number)
        features = parse_features(bundle.strip(), path=source, line=number)
        pos = part_of_speech(features, path=source, line=number)
        if pos is None:
            other += 1
            continue
        rows.append(Row(lemma, form, features, pos))
    return rows, other


def _read_lexicon(path: str | os.PathLike, parse):
    """``parse(lines, path)`` on a UTF-8 file read line by line at ``\n`` only (a ``\r`` stays
    in the line, as ``cut`` keeps it); an InputError naming the file when it is missing or not
    UTF-8."""
    try:
        handle = open(path, encoding="utf-8", newline="\n")
    except FileNotFoundError:
        raise InputError("UniMorph file not found", path=str(path)) from None
    with handle:
        try:
            return parse(handle, str(path))
        except UnicodeDecodeError as err:
            raise InputError(f"not UTF-8 text ({err.reason}): expected a UTF-8 TSV file",
                             path=str(path)) from None


def read_unimorph(path: str | os.PathLike) -> tuple[list[Row], int]:
    """:func:`parse_unimorph` on a UniMorph TSV file."""
    return _read_lexicon(path, parse_unimorph)


def feature_strings(lines: Iterable[str], source: str) -> set[str]:
    """The distinct third-column strings of ``lemma<TAB>form<TAB>features`` lines as written (no
    typo corrected, no reordering), with the empty string for a blank line: what ``cut -f3 |
    sort -u`` lists. Only the line end (``\n``) is removed. A whitespace-only line counts as
    blank, as :func:`parse_unimorph` skips it (``cut`` would list its spaces; no lexicon checked
    has one). Any other line without exactly three tab-separated fields raises an InputError
    naming ``source`` and the line: ``cut`` would print something for it, but no feature
    string."""
    found: set[str] = set()
    for number, raw in enumerate(lines, start=1):
        text = raw[:-1] if raw.endswith("\n") else raw
        if not text.strip():
            found.add("")
            continue
        found.add(_fields(text, path=source, line=number)[2])
    return found


def feature_string_count(lines: Iterable[str], source: str) -> int:
    """The published rule (Cotterell et al. 2018's MCC, reproduced on their lexicons; see the
    module docstring): the number of :func:`feature_strings`, the empty string of blank lines
    included, as ``cut -f3 | sort -u | wc -l`` counts. It is not this study's rule
    (:func:`count`), which counts no empty bundle, so on a file with a blank line and one
    spelling per bundle it is one higher."""
    return len(feature_strings(lines, source))


def read_feature_string_count(path: str | os.PathLike) -> int:
    """:func:`feature_string_count` of a UniMorph TSV file."""
    return _read_lexicon(path, feature_string_count)


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
    """This study's rule: MCC, distinct forms and distinct lemmas per counted part of speech and
    in ``total`` (see the module docstring; no empty bundle, unlike the published rule of
    :func:`feature_string_count`). Parts of speech without rows have zeros."""
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


def pos_words(poses: Iterable[str]) -> str:
    """Counted parts of speech in words: ``("verb", "noun")`` -> ``verbs and nouns``."""
    words = [f"{p}s" for p in poses]
    return ", ".join(words[:-1]) + (" and " if len(words) > 1 else "") + words[-1]


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
