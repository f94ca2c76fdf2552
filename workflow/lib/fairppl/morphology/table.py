"""Per-language MCC records (one JSON file per source and language), the MCC table built from
them, and the validation of the Apertium MCC against the published values.

A record is ``{"language", "source", "note", "counts": {pos: {"mcc", "n_forms", "n_lemmas"}},
"details": {...}}`` with ``source`` one of ``published``, ``apertium``, ``unimorph`` and ``pos``
one of ``verb``, ``noun``, ``adjective``, ``total`` (a published record has ``total`` only, with
no forms or lemmas).
"""

from __future__ import annotations

import json
import math
import os

import polars as pl

from ..core.errors import InputError
from ..stats.correlates import spearman
from .mcc import COUNTED_POS, Count, pos_words

SOURCES = ("published", "apertium", "unimorph")
POSES = (*COUNTED_POS, "total")

MCC_SCHEMA = {"language": pl.String, "source": pl.String, "pos": pl.String, "mcc": pl.Int64,
              "n_forms": pl.Int64, "n_lemmas": pl.Int64, "forms_per_lemma": pl.Float64,
              "note": pl.String}

VALIDATION_SCHEMA = {"row": pl.String, "subset": pl.String, "language": pl.String,
                     "family": pl.String, "held_out": pl.Boolean, "apertium_pos": pl.String,
                     "lexicon_pos": pl.String, "apertium_mcc": pl.Int64,
                     "published_mcc": pl.Int64, "ratio": pl.Float64, "n": pl.Int64,
                     "pearson_r": pl.Float64, "permutation_p": pl.Float64,
                     "permutations": pl.Int64, "spearman_rho": pl.Float64,
                     "spearman_p": pl.Float64, "note": pl.String}


def count_record(language: str, source: str, counts: dict[str, Count], note: str = "",
                 details: dict | None = None) -> dict:
    """The record of counted rows (:func:`fairppl.morphology.mcc.count`)."""
    return {"language": language, "source": source, "note": note,
            "counts": {pos: {"mcc": c.mcc, "n_forms": c.n_forms, "n_lemmas": c.n_lemmas}
                       for pos, c in counts.items()},
            "details": details or {}}


def published_record(language: str, mcc: int, note: str) -> dict:
    """The record of a published MCC (a total, no forms or lemmas)."""
    return {"language": language, "source": "published", "note": note,
            "counts": {"total": {"mcc": mcc, "n_forms": None, "n_lemmas": None}}, "details": {}}


def write_record(path: str | os.PathLike, record: dict) -> None:
    from ..core.io import write_text

    write_text(path, json.dumps(record, indent=1, ensure_ascii=False) + "\n")


def read_record(path: str | os.PathLike) -> dict:
    """A record written by :func:`write_record`; an InputError naming the file when it is not
    one."""
    path = str(path)
    try:
        with open(path, encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError) as err:
        raise InputError(f"unreadable MCC record ({err})", path=path) from None
    if not isinstance(record, dict) or record.get("source") not in SOURCES \
            or not isinstance(record.get("counts"), dict) or not record.get("language"):
        raise InputError(f"not an MCC record (language, source in {SOURCES}, counts)", path=path)
    for pos, c in record["counts"].items():
        if pos not in POSES or not isinstance(c, dict) or not isinstance(c.get("mcc"), int):
            raise InputError(f"bad count for {pos!r}: {c!r}", path=path)
    return record


def mcc_table(records) -> pl.DataFrame:
    """One row per (language, source, pos) of the records, sorted by source, language and pos."""
    rows = []
    for record in records:
        for pos in POSES:
            c = record["counts"].get(pos)
            if c is None:
                continue
            forms, lemmas = c.get("n_forms"), c.get("n_lemmas")
            rows.append({"language": record["language"], "source": record["source"], "pos": pos,
                         "mcc": c["mcc"], "n_forms": forms, "n_lemmas": lemmas,
                         "forms_per_lemma": forms / lemmas if forms is not None and lemmas
                         else None,
                         "note": record.get("note", "")})
    table = pl.DataFrame(rows, schema=MCC_SCHEMA)
    order = {s: i for i, s in enumerate(SOURCES)}, {p: i for i, p in enumerate(POSES)}
    return (table.with_columns(pl.col("source").replace_strict(order[0], return_dtype=pl.Int64)
                               .alias("_s"),
                               pl.col("pos").replace_strict(order[1], return_dtype=pl.Int64)
                               .alias("_p"))
            .sort("_s", "language", "_p").drop("_s", "_p"))


def _pearson(x, y) -> tuple[float | None, float | None, int | None]:
    """Pearson's r and its two-sided permutation p (:func:`fairppl.stats.permutation.slope_test`:
    the slope's permutation test is r's, every permutation up to 8 languages), and the number of
    permutations; Nones with fewer than 3 pairs or a constant column. Not the t test's p: at a
    handful of languages with skewed counts its normal assumption does not hold."""
    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return None, None, None
    # Imported here: scipy.stats takes about 1 s to import, and the many per-language jobs
    # that import this module never call it.
    from scipy.stats import pearsonr

    from ..stats.permutation import slope_test

    r = float(pearsonr(x, y).statistic)
    test = slope_test(x, y, interval=False)
    return (None if math.isnan(r) else r), test.p, test.permutations


#: Family of each language with an Apertium analyser (:data:`.apertium.ANALYSERS`; genus level,
#: WALS). The validation is repeated within every family of at least 3 languages: across
#: families a correlation can come from the gap between them alone (English lowest, Polish
#: highest), within one it cannot.
FAMILIES = {"eng": "Germanic", "spa": "Romance", "fra": "Romance", "ita": "Romance",
            "por": "Romance", "ron": "Romance", "pol": "Slavic", "rus": "Slavic",
            "ukr": "Slavic", "ind": "Malayic", "hin": "Indo-Aryan"}

#: The languages whose published MCC was in view while the Apertium tag mapping
#: (:mod:`.apertium`) was designed: every language with both an analyser and a published value.
#: None was held out, so the validation on them is in-sample; a language outside this set that
#: gains a published value is a held-out check, and its rows say so (``held_out``).
MAPPING_DESIGNED_WITH = frozenset({"eng", "spa", "fra", "ita", "por", "ron", "pol"})

#: What the validation compares and why: a published MCC counts the feature bundles of the parts
#: of speech its lexicon of that time held (English's held verbs only, Danish's and Estonian's
#: verbs and nouns: ``resources/published/mcc_rule_check.tsv``), so by default (``matched``)
#: Apertium's count over those parts of speech is compared with it, and Apertium's total over
#: verbs, nouns and adjectives where that lexicon was not found. ``total`` and ``verb`` compare
#: that count whatever the lexicon held, each language's row saying where the two differ. The
#: published value keeps the empty "bundle" of its lexicon's blank line (:mod:`.mcc`; every one
#: of the nine lexicons of that time found has one): a shift of all values alike, it changes the
#: ratios a little and the correlations not at all.
VALIDATED_POS = ("matched",)

#: The fewest languages a subset's correlation is computed on.
MIN_VALIDATION_LANGUAGES = 3


def lexicon_pos(records) -> dict[str, tuple[str, ...]]:
    """Language -> the parts of speech of the lexicon its published value was counted on, from
    the published records that carry them (``details.lexicon_pos``, written from
    ``resources/published/mcc_rule_check.tsv``)."""
    return {r["language"]: tuple(r["details"]["lexicon_pos"]) for r in records
            if r["source"] == "published" and (r.get("details") or {}).get("lexicon_pos")}


def _compared(apos: str, lang: str, counts: dict, lexicon_pos: dict) -> tuple[int | None, str]:
    """Apertium's count of ``lang`` under comparison ``apos`` (None without one) and the note of
    its row: where the published value's lexicon held other parts of speech, or is unknown."""
    held = lexicon_pos.get(lang)
    if apos == "matched":
        if held is None:
            return counts.get((lang, "total")), (
                "the published value's lexicon of that time was not found: its parts of speech "
                "are not known, Apertium's total compared")
        if set(held) == set(COUNTED_POS):
            return counts.get((lang, "total")), ""
        if any((lang, p) not in counts for p in held):
            return None, ""
        return sum(counts[lang, p] for p in held), (
            f"the published value's lexicon held {pos_words(held)} only: Apertium's count "
            "over the same compared")
    note = ""
    if held is not None and set(held) != ({apos} if apos != "total" else set(COUNTED_POS)):
        note = (f"not like with like: the published value's lexicon held {pos_words(held)}, "
                f"Apertium's {apos} compared")
    return counts.get((lang, apos)), note


def validation_table(mcc: pl.DataFrame, apertium_poses=VALIDATED_POS,
                     lexicon_pos: dict[str, tuple[str, ...]] | None = None) -> pl.DataFrame:
    """Apertium MCC against the published MCC on the languages that have both: per language the
    compared count (:data:`VALIDATED_POS`; ``lexicon_pos`` maps a language to the parts of
    speech of the lexicon its published value was counted on, shown in ``lexicon_pos``), the
    ratio apertium / published, its family (:data:`FAMILIES`) and whether it was held out of the
    mapping's design (:data:`MAPPING_DESIGNED_WITH`); and per comparison and subset of languages
    (``all``, each family with at least :data:`MIN_VALIDATION_LANGUAGES` languages, ``held
    out`` where there are that many) one ``correlation`` row with Pearson's r and its
    permutation p (:func:`_pearson`), Spearman's rho (exact p up to 8 languages, see
    :func:`fairppl.stats.correlates.spearman`), n and the geometric mean of the ratios. ``all``
    with fewer than 3 languages gives a correlation row without statistics and a note saying
    why."""
    lexicon_pos = lexicon_pos or {}
    published = dict(mcc.filter(source="published", pos="total")
                     .select("language", "mcc").iter_rows())
    counts = {(lang, pos): m for lang, pos, m in mcc.filter(source="apertium")
              .select("language", "pos", "mcc").iter_rows()}
    languages = sorted({lang for lang, _ in counts if lang in published})
    rows = []
    for apos in apertium_poses:
        pairs = []
        for lang in languages:
            m, note = _compared(apos, lang, counts, lexicon_pos)
            if m is None:
                continue
            pub = published[lang]
            pairs.append((lang, m, pub))
            held = lexicon_pos.get(lang)
            rows.append({"row": "language", "subset": "", "language": lang,
                         "family": FAMILIES.get(lang, "other"),
                         "held_out": lang not in MAPPING_DESIGNED_WITH, "apertium_pos": apos,
                         "lexicon_pos": ",".join(held) if held else None,
                         "apertium_mcc": m, "published_mcc": pub, "ratio": m / pub, "n": 1,
                         "note": note})
        subsets = {"all": pairs}
        for family in sorted({FAMILIES.get(p[0], "other") for p in pairs}):
            members = [p for p in pairs if FAMILIES.get(p[0], "other") == family]
            if len(members) >= MIN_VALIDATION_LANGUAGES:
                subsets[family] = members
        held = [p for p in pairs if p[0] not in MAPPING_DESIGNED_WITH]
        if len(held) >= MIN_VALIDATION_LANGUAGES:
            subsets["held out"] = held
        for subset, members in subsets.items():
            rows.append(_correlation_row(subset, members, apos))
    return pl.DataFrame(rows, schema=VALIDATION_SCHEMA)


def _correlation_row(subset: str, pairs: list[tuple[str, int, int]], apos: str) -> dict:
    x, y = [float(p[1]) for p in pairs], [float(p[2]) for p in pairs]
    r, rp, permutations = _pearson(x, y)
    rho, sp, _ = spearman(x, y)
    note = ("" if len(pairs) >= MIN_VALIDATION_LANGUAGES else
            f"{len(pairs)} languages have both an Apertium and a published MCC: no correlation "
            f"on fewer than {MIN_VALIDATION_LANGUAGES}")
    held = sum(p[0] not in MAPPING_DESIGNED_WITH for p in pairs)
    return {"row": "correlation", "subset": subset, "language": ",".join(p[0] for p in pairs),
            "family": "", "held_out": held == len(pairs) and held > 0, "apertium_pos": apos,
            "n": len(pairs), "pearson_r": r, "permutation_p": rp,
            "permutations": permutations, "spearman_rho": rho,
            "spearman_p": sp,
            "ratio": (math.exp(sum(math.log(p[1] / p[2]) for p in pairs) / len(pairs))
                      if pairs else None),
            "note": note or (f"ratio: geometric mean of the languages' ratios; {held} of "
                             f"{len(pairs)} languages held out of the tag mapping's design")}
