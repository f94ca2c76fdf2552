"""The language sheet (config/languages.tsv): reading, validation, cross-checks with the config.

Every error names the sheet, the line (1-based, header = line 1), the field and what was expected.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import yaml

from .errors import InputError

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


def read_language_sheet(path: str, schema_path: str) -> list[Language]:
    """Read and validate the sheet at ``path`` against the row schema at ``schema_path``.

    Checks each row's fields, then that no (corpus, language) appears twice and that no
    (corpus, source_id) appears twice (the same text under two names).
    """
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    fields = list(schema["properties"])
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError("language sheet not found (config key `languages`)", path=path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise InputError("invalid UTF-8: expected a UTF-8 TSV file", path=path, line=line) from None
    lines = text.splitlines()
    if not lines:
        raise InputError(f"empty sheet: expected a header with columns {fields}", path=path, line=1)
    header = lines[0].split("\t")
    missing = [f for f in fields if f not in header]
    extra = [h for h in header if h not in fields]
    if missing or extra:
        raise InputError(
            f"header has missing columns {missing} and unknown columns {extra}; "
            f"expected the tab-separated columns {fields}", path=path, line=1)
    rows: list[Language] = []
    seen: dict[tuple[str, str], int] = {}
    seen_source: dict[tuple[str, str], int] = {}
    for lineno, values in enumerate(csv.reader(lines[1:], delimiter="\t"), start=2):
        if not values or all(not v.strip() for v in values):
            continue
        if len(values) != len(header):
            raise InputError(
                f"{len(values)} fields, expected {len(header)} tab-separated fields ({header})",
                path=path, line=lineno)
        record: dict = dict(zip(header, (v.strip() for v in values)))
        flag = record["english_reference"].lower()
        if flag in _BOOL:
            record["english_reference"] = _BOOL[flag]
        errors = sorted(validator.iter_errors(record), key=lambda e: list(e.path))
        if errors:
            err = errors[0]
            field = err.path[0] if err.path else "(row)"
            raise InputError(f"field '{field}': {err.message}", path=path, line=lineno)
        key = (record["corpus"], record["language"])
        if key in seen:
            raise InputError(
                f"language '{key[1]}' is listed twice for corpus '{key[0]}' (first on line "
                f"{seen[key]}); expected one row per corpus and language", path=path, line=lineno)
        seen[key] = lineno
        skey = (record["corpus"], record["source_id"])
        if skey in seen_source:
            raise InputError(
                f"source_id '{skey[1]}' of corpus '{skey[0]}' is already used on line "
                f"{seen_source[skey]}; expected each text once", path=path, line=lineno)
        seen_source[skey] = lineno
        rows.append(Language(line=lineno, **record))
    return rows


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


def check_config(config: dict, schema_path: str, source: str) -> None:
    """Validate the study config against its JSON schema; on failure raise InputError naming the
    config file(s) ``source``, the dotted path of the offending key and what was expected."""
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(config))
    if not errors:
        kenlm_default = schema["properties"]["kenlm"]["properties"]["max_order"]["default"]
        orders = config["char_ngram"]["orders"]
        max_order = config["kenlm"].get("max_order", kenlm_default)
        if max(orders) > max_order:
            raise InputError(
                f"field 'char_ngram.orders': order {max(orders)} exceeds kenlm.max_order "
                f"{max_order}; expected orders <= kenlm.max_order (or raise max_order)", path=source)
        return
    err = min(errors, key=lambda e: (len(e.absolute_path), str(list(e.absolute_path))))
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
    field = where.lstrip(".") or "(top level)"
    raise InputError(f"field '{field}': {err.message}", path=source)
