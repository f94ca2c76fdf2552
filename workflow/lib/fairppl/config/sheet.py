"""The sheets (config/languages.tsv, config/models.tsv) and the config: reading, validation,
cross-checks.

Every error names the sheet, the line (1-based, header = line 1), the field and what was expected.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import yaml

from ..core.errors import InputError
from .iso15924 import check_iso15924
from .iso639 import check_iso639_3
from .settings import schema_expectation

_BOOL = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


@dataclass(frozen=True)
class Language:
    """One row of the sheet."""

    corpus: str
    language: str
    iso639_3: str
    name: str
    script: str
    source_id: str
    english_reference: bool
    line: int
    #: top-level language family; "" where the sheet has no ``family`` column or leaves the
    #: cell empty (not known)
    family: str = ""


#: Cell values that stand for "not known": an unknown family is an empty cell, never a word
#: that would group every unknown language into one family.
FAMILY_PLACEHOLDERS = frozenset({"unknown", "none", "na", "n/a", "null", "nan", "-", "--",
                                 "unclassified", "isolate"})


def read_tsv_sheet(path: str, schema_path: str, what: str, config_key: str,
                   unique: list[tuple[str, ...]]) -> list[dict]:
    """Read a tab-separated sheet with a header and validate each row against the JSON schema
    at ``schema_path`` (booleans written true/false/yes/no/1/0, lists comma-separated where the
    schema says array; a leading UTF-8 byte-order mark ignored; a row may stop before trailing
    columns the schema does not require, which are then empty). ``unique`` lists field tuples
    that must not repeat. Returns the rows as dicts with their 1-based ``line``."""
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    fields = list(schema["properties"])
    required = set(schema.get("required", fields))
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"{what} not found (config key `{config_key}`)", path=path) from None
    # A UTF-8 byte-order mark (spreadsheets write one when saving "UTF-8 text") is not part of
    # the first column's name: it is dropped, as a UTF-8 reader that knows it would.
    raw = raw.removeprefix(codecs.BOM_UTF8)
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise InputError("starts with a UTF-16 byte-order mark: expected a UTF-8 TSV file (save "
                         "it as UTF-8)", path=path, line=1)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise InputError("invalid UTF-8: expected a UTF-8 TSV file", path=path, line=line) from None
    lines = text.splitlines()
    if not lines:
        raise InputError(f"empty sheet: expected a header with columns {fields}", path=path, line=1)
    header = lines[0].split("\t")
    missing = [f for f in fields if f in required and f not in header]
    extra = [h for h in header if h not in fields]
    if missing or extra:
        raise InputError(
            f"header has missing columns {missing} and unknown columns {extra}; "
            f"expected the tab-separated columns {fields}", path=path, line=1)
    rows: list[dict] = []
    seen: dict[tuple, dict[tuple, int]] = {key: {} for key in unique}
    for lineno, line in enumerate(lines[1:], start=2):
        # No quote processing: a stray '"' is a character of its field, never the start of a
        # quoted field that would swallow the next rows.
        values = line.split("\t")
        if all(not v.strip() for v in values):
            continue
        left_out = header[len(values):]
        if len(values) < len(header) and not any(h in required for h in left_out):
            # trailing optional columns left out (a row written before the sheet had them, or
            # a spreadsheet that drops trailing empty cells): empty, as their cells would be
            values = values + [""] * len(left_out)
        if len(values) != len(header):
            optional = [h for h in header if h not in required]
            raise InputError(
                f"{len(values)} fields, expected {len(header)} tab-separated fields ({header}"
                + (f"; the optional {optional} may be left out at the end of a row"
                   if optional else "") + ")",
                path=path, line=lineno)
        record: dict = dict(zip(header, (v.strip() for v in values)))
        for name, value in list(record.items()):
            kind = schema["properties"][name].get("type")
            if kind == "boolean" and value.lower() in _BOOL:
                record[name] = _BOOL[value.lower()]
            elif kind == "array":
                record[name] = [v.strip() for v in value.split(",") if v.strip()]
        errors = sorted(validator.iter_errors(record), key=lambda e: list(e.path))
        if errors:
            err = errors[0]
            field = err.path[0] if err.path else "(row)"
            raise InputError(f"field '{field}': {err.message}; {schema_expectation(err)}",
                             path=path, line=lineno)
        for key in unique:
            value = tuple(record[k] for k in key)
            if value in seen[key]:
                raise InputError(
                    f"{'/'.join(key)} {'/'.join(map(str, value))} is listed twice (first on line "
                    f"{seen[key][value]}); expected each {'/'.join(key)} once",
                    path=path, line=lineno)
            seen[key][value] = lineno
        record["line"] = lineno
        rows.append(record)
    return rows


def read_language_sheet(path: str, schema_path: str) -> list[Language]:
    """Read and validate the language sheet: each row's fields, no (corpus, language) twice, no
    (corpus, source_id) twice (the same text under two names), every ``iso639_3`` a code of
    the ISO 639-3 table and every ``script`` a code of the ISO 15924 table (the ``language`` id
    is free: it names paths and tables)."""
    rows = read_tsv_sheet(path, schema_path, "language sheet", "languages",
                          unique=[("corpus", "language"), ("corpus", "source_id")])
    languages = [Language(**row) for row in rows]
    check_iso639_3(languages, path)
    check_iso15924(languages, path)
    check_families(languages, path)
    return languages


def check_families(languages: list[Language], path: str) -> None:
    """The ``family`` column: no placeholder word for "not known" (:data:`FAMILY_PLACEHOLDERS`;
    leave the cell empty), and one family per ISO 639-3 code and per language id across the
    rows that give one."""
    first: dict[tuple[str, str], Language] = {}
    for row in languages:
        if not row.family:
            continue
        if row.family.lower() in FAMILY_PLACEHOLDERS:
            raise InputError(f"field 'family': {row.family!r} stands for no family; expected the "
                             f"language's top-level family (an isolate: the language's own name), "
                             f"or an empty cell where it is not known", path=path, line=row.line)
        for key in (("ISO 639-3 code", row.iso639_3), ("language id", row.language)):
            seen = first.setdefault(key, row)
            if seen.family != row.family:
                raise InputError(f"field 'family': {row.family!r} for {key[0]} {key[1]!r}, "
                                 f"which line {seen.line} gives family {seen.family!r}; expected "
                                 f"one family per language", path=path, line=row.line)


def families_by_language(languages: list[Language]) -> dict[str, str] | None:
    """Language id -> its family ("" where the sheet leaves it empty: not known), for the
    family-controlled tests across languages; None where no row gives a family (a sheet
    without the column). :func:`check_families` has made each language id's family one."""
    if not any(row.family for row in languages):
        return None
    out: dict[str, str] = {}
    for row in languages:
        out[row.language] = row.family or out.get(row.language, "")
    return out


@dataclass(frozen=True)
class ModelRow:
    """One row of the model sheet (config/models.tsv)."""

    model: str
    source: str
    spec: str
    corpora: list
    languages: list
    description: str
    line: int
    bos: str = ""
    eos: str = ""


def read_model_sheet(path: str, schema_path: str) -> list[ModelRow]:
    """Read and validate the model sheet: each row's fields, and no model id twice."""
    rows = read_tsv_sheet(path, schema_path, "model sheet", "models", unique=[("model",)])
    return [ModelRow(**{"description": "", **row}) for row in rows]


def check_against_config(rows: list[Language], corpora: dict, path: str) -> None:
    """Cross-check the sheet with the config's ``corpora``: every row names a configured corpus;
    every enabled corpus has at least two languages and exactly one English reference; an
    enabled url corpus has its sha256."""
    for row in rows:
        if row.corpus not in corpora:
            raise InputError(
                f"field 'corpus': unknown corpus '{row.corpus}'; expected one of "
                f"{sorted(corpora)} (the keys of `corpora` in the config)", path=path, line=row.line)
    for corpus, spec in corpora.items():
        if not spec.get("enabled", True):
            continue
        mine = [r for r in rows if r.corpus == corpus]
        if len(mine) < 2:
            raise InputError(
                f"corpus '{corpus}' is enabled but has {len(mine)} language rows; expected at "
                f"least 2 (an English reference and one more)", path=path)
        refs = [r for r in mine if r.english_reference]
        if len(refs) != 1:
            where = ", ".join(f"line {r.line}" for r in refs) or "none"
            raise InputError(
                f"corpus '{corpus}' has {len(refs)} rows with english_reference=true ({where}); "
                f"expected exactly one", path=path)
        if spec["type"] == "url" and not spec.get("sha256"):
            raise InputError(
                f"corpus '{corpus}' is enabled but `corpora.{corpus}.sha256` is null; expected "
                f"the archive's sha256 (64 hex digits) so the download can be verified")
        if spec["type"] == "europarl":
            _check_europarl(corpus, spec, mine, refs[0], path)


def _check_europarl(corpus: str, spec: dict, rows: list[Language], reference: Language,
                    path: str) -> None:
    """An enabled Europarl corpus: the English reference's source_id is the pivot, the others
    are 2-letter codes, and every configured pair has its archive's sha256."""
    pivot = spec.get("pivot", "en")
    if reference.source_id != pivot:
        raise InputError(f"corpus '{corpus}': the English reference's source_id is "
                         f"'{reference.source_id}' but `corpora.{corpus}.pivot` is '{pivot}'; "
                         f"expected them equal (the English side of every pair)", path=path,
                         line=reference.line)
    for row in rows:
        if not re.fullmatch(r"[a-z]{2,3}", row.source_id):
            raise InputError(f"field 'source_id': '{row.source_id}' for corpus '{corpus}'; "
                             f"expected Europarl's 2-letter language code (bg, cs, da, ...)",
                             path=path, line=row.line)
    digests = spec.get("sha256") or {}
    pairs = sorted(f"{r.source_id}-{pivot}" for r in rows if r.source_id != pivot)
    missing = [p for p in pairs if not digests.get(p)]
    if missing:
        raise InputError(f"corpus '{corpus}' is enabled but `corpora.{corpus}.sha256` has no "
                         f"digest for the pair(s) {', '.join(missing)}; expected the sha256 "
                         f"(64 hex digits) of each configured pair's archive so the downloads "
                         f"can be verified")


#: Model ids the study's own tables use (the ``model`` column of the score tables, the Shannon
#: game's and the marginal stage's): a sheet model of the same name would mix its rows with theirs.
STUDY_MODEL_IDS = ("transformer", "bigram-eq7")
#: Prefixes of the study's built model ids: kenlm-char-o<order>, kenlm-word-o<order>,
#: kenlm-subword-o<order>.
STUDY_MODEL_PREFIXES = ("kenlm-",)


def check_model_id(model: str, path: str, line: int | None = None) -> None:
    """Refuse a model sheet id that is one of the study's own model names, or starts like them."""
    clash = model in STUDY_MODEL_IDS or model.startswith(STUDY_MODEL_PREFIXES)
    if clash:
        raise InputError(f"field 'model': {model!r} is a name of the study's own models "
                         f"({', '.join(STUDY_MODEL_IDS)}, "
                         f"{', '.join(p + '*' for p in STUDY_MODEL_PREFIXES)}), whose rows it "
                         f"would mix with its own in every table; expected another model id",
                         path=path, line=line)


def check_models(models: list[ModelRow], languages: list[Language], config: dict,
                 path: str) -> None:
    """Cross-check the model sheet with the config and the language sheet: no model id is one of
    the study's own model names (:func:`check_model_id`), every corpus a model names exists, and
    every language it names has a row in at least one of its corpora (a model is scored on each
    (corpus, language) pair the language sheet has)."""
    known = {(row.corpus, row.language) for row in languages}
    for model in models:
        check_model_id(model.model, path, model.line)
        for corpus in model.corpora:
            if corpus not in config["corpora"]:
                raise InputError(f"model '{model.model}': unknown corpus '{corpus}'; expected one "
                                 f"of {sorted(config['corpora'])}", path=path, line=model.line)
        missing = [lang for lang in model.languages
                   if lang != "all" and not any((c, lang) in known for c in model.corpora)]
        if missing:
            raise InputError(f"model '{model.model}': languages {missing} have no row for any of "
                             f"its corpora {list(model.corpora)} in the language sheet; expected "
                             f"language ids of those corpora's rows, or `all`",
                             path=path, line=model.line)
