"""MCC and forms per lemma from Apertium's morphological analysers (Debian packages).

``lt-paradigm -a`` (in Debian 12's ``lttoolbox-dev``, not ``lttoolbox``) lists every path of a
compiled analyser (``*.automorf.bin``) that matches a pattern: ``*<vblex><*>`` gives every
lexical verb form as ``lemma<vblex><tag>...:form``. Apertium's tags are not UniMorph's and mix
inflection with lexical classes, clitics and derivation (distinct raw tag sequences of lexical
verbs, nouns and adjectives: eng 18, spa 145, pol 863, ind 153, against published MCCs eng 6,
spa 71, pol 112), so each tag is mapped by its category, the same way in every language, before
the counting rule of :mod:`.mcc` is applied:

- Part of speech: ``vblex`` (lexical verbs; auxiliaries, copulas and modals are closed classes
  and not listed) is ``V``, ``n`` (common nouns; proper nouns ``np`` are not listed) ``N``,
  ``adj`` ``ADJ``.
- Lexical class tags right after the part of speech are dropped, the form kept: ``acr``
  (acronym), ``sint`` (takes synthetic comparison), ``pron`` (pronominal verb), and a verb's
  aspect ``perf``/``impf``/``dual`` (biaspectual) there, which Slavic analysers give the lemma,
  not the form. Transitivity (``tv``, ``iv``) is lexical wherever it stands. An adjective whose
  class tag is ``pos`` (possessive), ``itg`` (interrogative), ``ind`` (indefinite), ``dem``
  (demonstrative), ``ord`` (ordinal) or ``det`` is a determiner or numeral (UniMorph ``DET``,
  ``NUM``) and is not counted, nor is a form tagged ``det`` anywhere.
- Derivation and compounding are not inflection: a form tagged ``subs`` (English -ing noun),
  ``cmp``/``cpd`` (compounding stem), ``po`` (Polish po-...-u adverb), ``dim`` (diminutive),
  ``agnt`` (Hindi agentive -nevala), ``stem`` (Hindi bare stem for compound verbs), ``subst``,
  ``actio``, ``attr`` or an Indonesian affix tag (``ber``, ``ber-an``, ``ke-an``, ``kan``,
  ``peN``, ``peN-an``, ``per-an``, ...) is not counted. Clitics are not inflection either: a form
  with Indonesian ``nya`` is not counted; Polish emphatic ``emph`` (-ż) and the optional-variant
  marker ``fac`` are dropped from the bundle, the form kept. Indonesian ``red`` (reduplication)
  is how the plural is made; its ``pl`` carries the number. An indeclinable noun (Polish
  ``indecl``) fills every case cell with one form and is not counted.
- Inflectional tags map to UniMorph features: person ``p1 p2 p3``; number ``sg pl du`` (``sp``, and
  ``ND``, the same form for both, expand to ``SG`` and ``PL``); gender ``m f nt`` and Polish ``ma mi
  mp`` (masculine animate, inanimate, personal), with the underspecified ``mf GD mfn mn fn`` and
  ``nm`` (non-masculine-personal) expanded to every value they cover; animacy ``aa nn`` (``an``:
  both); case ``nom acc gen dat ins voc``, ``loc`` (``IN+ESS``), ``prp`` (Russian prepositional,
  ``ESS``), ``dg`` (Romanian genitive-dative, ``GEN+DAT``), ``obl`` (Hindi oblique, ``OBL``);
  definiteness ``def ind``; comparison ``comp`` (``CMPR``), ``sup`` (``SPRL``); voice ``actv``
  (``ACT``), ``pasv``/``pass`` (``PASS``), ``impers`` (``IMPRS``); politeness ``frm``
  (``FORM``); Russian short adjectives ``short`` (``SHORT``, not a UniMorph value); and the
  verb forms: ``inf`` NFIN, ``infps`` (Portuguese personal infinitive) NFIN, ``ger``/``gna``/
  ``adv`` V.CVB, ``pp`` V.PTCP;PST, ``pprs``/``ppres`` V.PTCP;PRS, ``pres``/``nonpast`` PRS,
  ``past`` PST, ``fut`` FUT, ``pri`` IND;PRS, ``pii`` IND;PST;IPFV, ``ifi``/``pper`` IND;PST;PFV,
  ``pmp`` IND;PST;PRF, ``fti`` IND;FUT, ``cni`` COND, ``prs`` SBJV;PRS, ``pis`` SBJV;PST,
  ``fts`` SBJV;FUT, ``imp`` IMP, and an aspect tag elsewhere than right after ``vblex`` (Hindi
  participles) ``perf`` PFV, ``impf`` IPFV.
- On verbs, case is dropped: it is the declension of participles and verbal nouns, adjectives
  and nouns in form; the verb's paradigm counts each participle once per tense, voice, gender and
  number. Gender and animacy are dropped on nouns by :mod:`.mcc` (inherent); on verbs and
  adjectives they are agreement and kept.
- An analysis with two values of one case, number or person (a compound whose tags are written
  twice) is inconsistent and not counted.
- A tag the table does not know is an error naming the tag, the analyser and the line: no tag is
  counted or dropped silently.

Forms per lemma counts the forms kept by these rules (distinct forms / distinct lemmas).
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InputError
from .mcc import Row

#: Where Debian installs the analysers.
APERTIUM_DIR = Path("/usr/share/apertium")

#: Language -> (Debian package, analyser file in APERTIUM_DIR/<package>/). Where several pairs
#: hold a language, the one with the largest analyser file (the largest lexicon) was chosen.
ANALYSERS = {
    "eng": ("apertium-eng-spa", "eng-spa.automorf.bin"),
    "spa": ("apertium-eng-spa", "spa-eng.automorf.bin"),
    "fra": ("apertium-fra-cat", "fra-cat.automorf.bin"),
    "ita": ("apertium-cat-ita", "ita-cat.automorf.bin"),
    "por": ("apertium-por-cat", "por-cat.automorf.bin"),
    "ron": ("apertium-es-ro", "ro-es.automorf.bin"),
    "pol": ("apertium-pol-szl", "pol-szl.automorf.bin"),
    "rus": ("apertium-rus-ukr", "rus-ukr.automorf.bin"),
    "ukr": ("apertium-rus-ukr", "ukr-rus.automorf.bin"),
    "ind": ("apertium-ind-zlm", "ind-zlm.automorf.bin"),
    "hin": ("apertium-hin", "hin.automorf.bin"),
}

#: Apertium part-of-speech tag -> UniMorph part of speech and the counted part of speech.
POS_TAGS = {"vblex": ("V", "verb"), "n": ("N", "noun"), "adj": ("ADJ", "adjective")}

#: The lt-paradigm patterns that list the counted parts of speech.
PATTERNS = tuple(f"*<{tag}><*>" for tag in POS_TAGS)

#: Tags right after the part of speech that mark a lexical class: dropped, the form kept.
CLASS_TAGS = {
    "vblex": frozenset({"pron", "perf", "impf", "dual"}),
    "n": frozenset({"acr"}),
    "adj": frozenset({"sint"}),
}

#: Adjective class tags (right after ``adj``) of determiners and numerals: not counted.
NOT_ADJECTIVE = frozenset({"pos", "itg", "ind", "dem", "ord", "det"})

#: Tags dropped wherever they stand, the form kept (lexical, clitic or variant markers).
DROPPED = frozenset({"tv", "iv", "emph", "fac", "red", "acr"})

#: Tags whose form is derivation, compounding or a clitic host: not counted.
NOT_INFLECTION = frozenset({
    "subs", "cmp", "cpd", "po", "dim", "agnt", "stem", "subst", "actio", "attr", "nya",
    "ber", "ber-an", "ber-kan", "ke-an", "kan", "peN", "peN-an", "pe", "pe-an", "per", "per-an",
    "per-i", "per-kan", "san", "se", "si", "ter", "indecl", "det",
})

#: Inflectional tags -> alternatives, each a tuple of UniMorph features (more than one
#: alternative: an underspecified tag that stands for every value it covers).
FEATURES: dict[str, tuple[tuple[str, ...], ...]] = {
    # person, number
    "p1": (("1",),), "p2": (("2",),), "p3": (("3",),),
    "sg": (("SG",),), "pl": (("PL",),), "du": (("DU",),), "dual": (("DU",),),
    "sp": (("SG",), ("PL",)), "ND": (("SG",), ("PL",)),
    # gender and animacy
    "m": (("MASC",),), "f": (("FEM",),), "nt": (("NEUT",),),
    "mf": (("MASC",), ("FEM",)), "GD": (("MASC",), ("FEM",)),
    "mfn": (("MASC",), ("FEM",), ("NEUT",)),
    "mn": (("MASC",), ("NEUT",)), "fn": (("FEM",), ("NEUT",)),
    "ma": (("MASC", "ANIM"),), "mi": (("MASC", "INAN"),), "mp": (("MASC", "HUM"),),
    "nm": (("MASC", "ANIM"), ("MASC", "INAN"), ("FEM",), ("NEUT",)),
    "aa": (("ANIM",),), "nn": (("INAN",),), "an": (("ANIM",), ("INAN",)),
    # case
    "nom": (("NOM",),), "acc": (("ACC",),), "gen": (("GEN",),), "dat": (("DAT",),),
    "ins": (("INS",),), "voc": (("VOC",),), "loc": (("IN+ESS",),), "prp": (("ESS",),),
    "dg": (("GEN+DAT",),), "obl": (("OBL",),),
    # definiteness, comparison, voice, politeness, adjective form
    "def": (("DEF",),), "ind": (("INDF",),),
    "comp": (("CMPR",),), "sup": (("SPRL",),),
    "actv": (("ACT",),), "pasv": (("PASS",),), "pass": (("PASS",),), "impers": (("IMPRS",),),
    "frm": (("FORM",),), "short": (("SHORT",),),
    # verb forms, tense, mood, aspect
    "inf": (("NFIN",),), "infps": (("NFIN",),),
    "ger": (("V.CVB",),), "gna": (("V.CVB",),), "adv": (("V.CVB",),),
    "pp": (("V.PTCP", "PST"),), "pprs": (("V.PTCP", "PRS"),), "ppres": (("V.PTCP", "PRS"),),
    "pres": (("PRS",),), "nonpast": (("PRS",),), "past": (("PST",),), "fut": (("FUT",),),
    "pri": (("IND", "PRS"),), "pii": (("IND", "PST", "IPFV"),), "ifi": (("IND", "PST", "PFV"),),
    "pper": (("IND", "PST", "PFV"),), "pmp": (("IND", "PST", "PRF"),), "fti": (("IND", "FUT"),),
    "cni": (("COND",),), "prs": (("SBJV", "PRS"),), "pis": (("SBJV", "PST"),),
    "fts": (("SBJV", "FUT"),), "imp": (("IMP",),),
    "perf": (("PFV",),), "impf": (("IPFV",),),
}

#: Case features, dropped on verbs.
CASES = frozenset({"NOM", "ACC", "GEN", "DAT", "INS", "VOC", "IN+ESS", "ESS", "GEN+DAT", "OBL"})

#: Categories of which an analysis has at most one value; one with two (Polish
#: ``wiceminister<n><mp><pl><nom><mp><pl><dat>``, a compound's tags written twice) is inconsistent
#: and not counted.
SINGLE_VALUED = (CASES, frozenset({"SG", "PL", "DU"}), frozenset({"1", "2", "3"}))

_LINE = re.compile(r"^([^<>]*)((?:<[^<>]+>)+):(.*)$")


class Skip(Exception):
    """A form that the mapping does not count (derivation, a determiner, ...)."""


def map_tags(tags: list[str], *, where: str = "") -> list[frozenset]:
    """The UniMorph bundles (one per expansion of underspecified tags) of one analysis's Apertium
    tags, the part of speech first; :class:`Skip` for a form that is not counted, an InputError
    for an unknown tag or part of speech."""
    if not tags or tags[0] not in POS_TAGS:
        raise InputError(f"{where}part of speech {tags[:1]} is not one of {sorted(POS_TAGS)}")
    pos_tag = tags[0]
    unimorph_pos, pos = POS_TAGS[pos_tag]
    rest = tags[1:]
    if pos_tag == "adj" and rest and rest[0] in NOT_ADJECTIVE:
        raise Skip(rest[0])
    choices: list[tuple[tuple[str, ...], ...]] = []
    for i, tag in enumerate(rest):
        if tag in NOT_INFLECTION:
            raise Skip(tag)
        if i == 0 and tag in CLASS_TAGS[pos_tag]:
            continue
        if tag in DROPPED:
            continue
        if tag not in FEATURES:
            raise InputError(f"{where}Apertium tag <{tag}> has no mapping: expected a tag that "
                             "fairppl.morphology.apertium maps (add it there by its category)")
        choices.append(FEATURES[tag])
    bundles = []
    for combination in itertools.product(*choices):
        features = {unimorph_pos}
        for part in combination:
            features.update(part)
        for category in SINGLE_VALUED:
            if len(features & category) > 1:
                raise Skip("inconsistent")
        if pos == "verb":
            features -= CASES
        bundles.append(frozenset(features))
    return bundles


def parse_line(line: str, *, where: str = "") -> tuple[str, list[str], str]:
    """``lemma<tag>...:form`` as (lemma, tags, form); an InputError for another shape."""
    match = _LINE.match(line)
    if not match:
        raise InputError(f"{where}not an lt-paradigm line (lemma<tag>...:form): {line!r}")
    lemma, tags, form = match.groups()
    if not lemma or not form:
        raise InputError(f"{where}empty lemma or form: {line!r}")
    return lemma, tags[1:-1].split("><"), form


@dataclass
class Mapped:
    """The counted rows of a paradigm listing, and what was left out."""

    rows: list[Row]
    n_lines: int
    n_skipped: int
    raw_bundles: dict[str, int]


def map_paradigm(lines, *, source: str = "lt-paradigm output") -> Mapped:
    """Rows (one per expansion) of lt-paradigm analyser lines (blank lines ignored); the number of
    lines, of forms not counted, and the raw Apertium tag bundles per part of speech."""
    rows: list[Row] = []
    raw: dict[str, set] = {pos: set() for _, pos in POS_TAGS.values()}
    n_lines = n_skipped = 0
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\n")
        if not line.strip():
            continue
        n_lines += 1
        where = f"{source}, line {number}: "
        lemma, tags, form = parse_line(line, where=where)
        if tags[0] in POS_TAGS:
            raw[POS_TAGS[tags[0]][1]].add(tuple(tags))
        try:
            bundles = map_tags(tags, where=where)
        except Skip:
            n_skipped += 1
            continue
        pos = POS_TAGS[tags[0]][1]
        rows.extend(Row(lemma, form, bundle, pos) for bundle in bundles)
    return Mapped(rows, n_lines, n_skipped, {pos: len(b) for pos, b in raw.items()})


def analyser_path(language: str, root: str | os.PathLike = APERTIUM_DIR) -> Path:
    """The analyser file of ``language``; an InputError naming the Debian package to install when
    the language has none configured or the file is missing."""
    if language not in ANALYSERS:
        raise InputError(f"no Apertium analyser is configured for {language!r} (known: "
                         f"{', '.join(sorted(ANALYSERS))})")
    package, name = ANALYSERS[language]
    path = Path(root) / package / name
    if not path.is_file():
        raise InputError(f"the Apertium analyser for {language} is missing: {path} (install the "
                         f"Debian package {package}: apt-get install {package} "
                         "lttoolbox-dev)")
    return path


def run_paradigm(analyser: str | os.PathLike, patterns=PATTERNS,
                 program: str = "lt-paradigm") -> tuple[list[str], float]:
    """The lines ``lt-paradigm -a`` lists for ``patterns``, and the seconds it took."""
    start = time.perf_counter()
    try:
        done = subprocess.run([program, "-a", str(analyser)], input="\n".join(patterns) + "\n",
                              capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise InputError(f"{program} is not installed (Debian package lttoolbox-dev)") from None
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise InputError(f"{program} failed on {analyser} (exit {done.returncode}): "
                         f"{done.stderr.strip()[:500]}")
    return done.stdout.splitlines(), seconds


def apertium_record(language: str, root: str | os.PathLike = APERTIUM_DIR,
                    program: str = "lt-paradigm") -> dict:
    """The MCC record (:mod:`.table`) of ``language``'s Apertium analyser: the counts, and in
    ``details`` the package, the analyser, lt-paradigm's seconds, the lines listed, the forms not
    counted, the number of raw tag bundles and the counted bundles per part of speech."""
    from .mcc import bundles_by_pos, count
    from .table import count_record

    path = analyser_path(language, root)
    lines, seconds = run_paradigm(path, program=program)
    mapped = map_paradigm(lines, source=str(path))
    if not mapped.rows:
        raise InputError(f"lt-paradigm listed no verb, noun or adjective that the mapping counts "
                         f"for {language}", path=str(path))
    package = ANALYSERS[language][0]
    note = f"Apertium {package} ({path.name}), tags mapped to UniMorph features"
    return count_record(language, "apertium", count(mapped.rows), note=note, details={
        "package": package, "analyser": str(path), "lt_paradigm_seconds": round(seconds, 3),
        "lines": mapped.n_lines, "forms_not_counted": mapped.n_skipped,
        "raw_bundles": mapped.raw_bundles, "bundles": bundles_by_pos(mapped.rows)})
