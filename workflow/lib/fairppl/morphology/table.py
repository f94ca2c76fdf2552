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
from .mcc import COUNTED_POS, Count

SOURCES = ("published", "apertium", "unimorph")
POSES = (*COUNTED_POS, "total")

MCC_SCHEMA = {"language": pl.String, "source": pl.String, "pos": pl.String, "mcc": pl.Int64,
              "n_forms": pl.Int64, "n_lemmas": pl.Int64, "forms_per_lemma": pl.Float64,
              "note": pl.String}

VALIDATION_SCHEMA = {"row": pl.String, "subset": pl.String, "language": pl.String,
                     "family": pl.String, "held_out": pl.Boolean, "apertium_pos": pl.String,
                     "apertium_mcc": pl.Int64, "published_mcc": pl.Int64, "ratio": pl.Float64,
                     "n": pl.Int64, "pearson_r": pl.Float64, "pearson_p": pl.Float64,
                     "spearman_rho": pl.Float64, "spearman_p": pl.Float64, "note": pl.String}


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


def _pearson(x, y) -> tuple[float | None, float | None]:
    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return None, None
    # Imported here: scipy.stats takes about 1 s to import, and the many per-language jobs
    # that import this module never call it.
    from scipy.stats import pearsonr

    result = pearsonr(x, y)
    r, p = float(result.statistic), float(result.pvalue)
    return (None if math.isnan(r) else r), (None if math.isnan(p) else p)


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

#: What the validation compares and why: the published MCC counts the feature bundles of verbs,
#: nouns and adjectives together (Cotterell et al. 2018, section 3), so it is compared with
#: Apertium's total over the same three parts of speech; another part of speech (``verb``) is
#: compared only when asked for, and its rows are then named by ``apertium_pos``.
VALIDATED_POS = ("total",)

#: The fewest languages a subset's correlation is computed on.
MIN_VALIDATION_LANGUAGES = 3


def validation_table(mcc: pl.DataFrame, apertium_poses=VALIDATED_POS) -> pl.DataFrame:
    """Apertium MCC against the published MCC on the languages that have both: per language the
    ratio apertium / published, its family (:data:`FAMILIES`) and whether it was held out of the
    mapping's design (:data:`MAPPING_DESIGNED_WITH`); and per compared Apertium part of speech
    and subset of languages (``all``, each family with at least
    :data:`MIN_VALIDATION_LANGUAGES` languages, ``held out`` where there are that many) one
    ``correlation`` row with Pearson's r (scipy, two-sided p), Spearman's rho (exact p up to 8
    languages, see :func:`fairppl.stats.correlates.spearman`), n and the geometric mean of the
    ratios. The published value is always the total (:data:`VALIDATED_POS`). ``all`` with fewer
    than 3 languages gives a correlation row without statistics and a note saying why."""
    published = dict(mcc.filter(source="published", pos="total")
                     .select("language", "mcc").iter_rows())
    rows = []
    for apos in apertium_poses:
        ours = mcc.filter(source="apertium", pos=apos).sort("language")
        pairs = [(lang, m, published[lang]) for lang, m in ours.select("language", "mcc")
                 .iter_rows() if lang in published]
        for lang, m, pub in pairs:
            rows.append({"row": "language", "subset": "", "language": lang,
                         "family": FAMILIES.get(lang, "other"),
                         "held_out": lang not in MAPPING_DESIGNED_WITH, "apertium_pos": apos,
                         "apertium_mcc": m, "published_mcc": pub, "ratio": m / pub, "n": 1,
                         "note": ""})
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
    r, rp = _pearson(x, y)
    rho, sp, _ = spearman(x, y)
    note = ("" if len(pairs) >= MIN_VALIDATION_LANGUAGES else
            f"{len(pairs)} languages have both an Apertium and a published MCC: no correlation "
            f"on fewer than {MIN_VALIDATION_LANGUAGES}")
    held = sum(p[0] not in MAPPING_DESIGNED_WITH for p in pairs)
    return {"row": "correlation", "subset": subset, "language": ",".join(p[0] for p in pairs),
            "family": "", "held_out": held == len(pairs) and held > 0, "apertium_pos": apos,
            "n": len(pairs), "pearson_r": r, "pearson_p": rp, "spearman_rho": rho,
            "spearman_p": sp,
            "ratio": (math.exp(sum(math.log(p[1] / p[2]) for p in pairs) / len(pairs))
                      if pairs else None),
            "note": note or (f"ratio: geometric mean of the languages' ratios; {held} of "
                             f"{len(pairs)} languages held out of the tag mapping's design")}
