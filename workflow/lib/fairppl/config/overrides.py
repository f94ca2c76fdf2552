"""Settings given on the command line (`--config key=value`) or in a profile's `config:` block:
typed as the config schema says, checked with their origin named, and noted where they replace a
config file's value.

Snakemake turns a profile's `config:` block into `--config` arguments and reads each one with
int, float and bool parsers at the top level only; a nested value goes through YAML's
BaseLoader, so every leaf of it arrives as text: `16384` as "16384", `false` as "False", `null`
as "None" (Python's repr of the profile's value) or "null" (typed on the command line). The
schema says what each place holds, so a text is read back where the schema wants a number, a
boolean or null there and the text does not fit while its reading does; any other text is left
as it is, for the schema to refuse with its field and with where it came from.

Snakemake keeps these values apart from the config files' (``workflow.config_settings.config``),
which is how a value is known to come from the command line or a profile.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jsonschema
import yaml

from ..core.errors import InputError
from .settings import read_schema, renamed_key, renamed_words, schema_expectation

#: How a message names the origin of a value that did not come from a config file.
ORIGIN = "(from --config or a profile's config: block)"
#: The study's config schema (workflow/schemas/config.schema.yaml).
CONFIG_SCHEMA = Path(__file__).resolve().parents[3] / "schemas" / "config.schema.yaml"
#: The texts that stand for null: Python's repr of a profile's `null`, and YAML's spellings.
NULL_TEXTS = frozenset({"None", "null", "Null", "NULL", "~"})


def _branches(schema: dict) -> list[dict]:
    """``schema`` and the alternatives and conditions it holds (anyOf, oneOf, allOf, then,
    else), each once: the places where a key's or an item's schema can be declared."""
    found, todo = [], [schema]
    while todo:
        node = todo.pop(0)
        if not isinstance(node, dict) or any(node is seen for seen in found):
            continue
        found.append(node)
        for word in ("anyOf", "oneOf", "allOf"):
            todo.extend(node.get(word) or [])
        todo.extend(node[word] for word in ("then", "else") if word in node)
    return found


def child_schema(schema: dict, key: str) -> dict | None:
    """The schema of the value under ``key`` of a mapping that ``schema`` describes; ``{}`` (any
    value) where nothing constrains it, None where the schema allows no such key."""
    found, closed = [], False
    for node in _branches(schema):
        if key in (node.get("properties") or {}):
            found.append(node["properties"][key])
            continue
        matched = [sub for pattern, sub in (node.get("patternProperties") or {}).items()
                   if re.search(pattern, key)]
        if matched:
            found.extend(matched)
        elif isinstance(node.get("additionalProperties"), dict):
            found.append(node["additionalProperties"])
        elif node.get("additionalProperties") is False and node is schema:
            closed = True
    if not found:
        return None if closed else {}
    return found[0] if len(found) == 1 else {"anyOf": found}


def item_schema(schema: dict, index: int) -> dict:
    """The schema of item ``index`` of a list that ``schema`` describes (``{}``: any)."""
    found = []
    for node in _branches(schema):
        prefix = node.get("prefixItems") or []
        if index < len(prefix):
            found.append(prefix[index])
        elif isinstance(node.get("items"), dict):
            found.append(node["items"])
    if not found:
        return {}
    return found[0] if len(found) == 1 else {"anyOf": found}


def _fits(value, schema: dict) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def readings(text: str) -> list:
    """What ``text`` may stand for besides itself: null for the null spellings, else the YAML
    reading of it ("16384" -> 16384, "False" -> False, "[1, 2]" -> [1, 2]) and the Python
    number ("1e-3" -> 0.001, which YAML 1.1 reads as text)."""
    stripped = text.strip()
    if stripped in NULL_TEXTS:
        return [None]
    found = []
    try:
        found.append(yaml.safe_load(stripped))
    except yaml.YAMLError:
        pass
    for number in (int, float):
        try:
            found.append(number(stripped))
        except ValueError:
            pass
    return [value for value in found if not isinstance(value, str)]


def typed(value, schema: dict):
    """``value`` (a mapping, list or leaf of the config) with each text read as what the schema
    wants at its place: a text that does not fit there while its reading does becomes that
    reading; a null spelling becomes null wherever null fits. Other values are returned as
    they are."""
    if schema is None:
        return value
    if isinstance(value, dict):
        return {key: typed(item, child_schema(schema, str(key))) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item, item_schema(schema, i)) for i, item in enumerate(value)]
    if isinstance(value, str):
        options = readings(value)
        if options == [None] and _fits(None, schema):
            return None
        if _fits(value, schema):
            return value
        options = [typed(option, schema) if isinstance(option, (dict, list)) else option
                   for option in options]
        for option in options:
            if _fits(option, schema):
                return option
        # a number outside its bounds is still a number: read as the type the schema wants
        # there, the schema then refuses it for its bound ("0 is less than the minimum of 1"),
        # not as "'0' is not of type 'integer'"
        for option in options:
            if _of_type(option, schema):
                return option
    return value


#: JSON types of Python values, as the schema names them.
def _json_types(value) -> set[str]:
    if value is None:
        return {"null"}
    if isinstance(value, bool):
        return {"boolean"}
    if isinstance(value, int):
        return {"integer", "number"}
    if isinstance(value, float):
        return {"number", "integer"}  # 2.5 where an integer goes: refused as not an integer
    if isinstance(value, list):
        return {"array"}
    if isinstance(value, dict):
        return {"object"}
    return {"string"}


def _of_type(value, schema: dict) -> bool:
    """Whether some branch of ``schema`` declares a type that ``value`` has (bounds, patterns
    and choices aside), and no branch takes text there."""
    declared = set()
    for node in _branches(schema):
        kind = node.get("type")
        declared |= {kind} if isinstance(kind, str) else set(kind or ())
    return "string" not in declared and bool(declared & _json_types(value))


def leaves(tree: dict, path: tuple = ()):
    """(path, value) of each leaf of ``tree``: its mappings are walked, a list is one leaf."""
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            yield from leaves(value, path + (key,))
        else:
            yield path + (key,), value


def dotted(path) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def check_value(path: tuple, value, schema: dict, source: str | None = None,
                line: int | None = None, origin: str = ORIGIN) -> None:
    """Refuse ``value`` at ``path`` of the config where the config schema ``schema`` does not
    allow it (an unknown key included), naming the field and ``origin``."""
    node, block = schema, ()
    for key in path:
        sub = child_schema(node, str(key))
        if sub is None:
            new = next(filter(None, (renamed_key(b, str(key)) for b in _branches(node))), None)
            if new is not None:
                raise InputError(f"field '{dotted(path)}' {origin}: "
                                 + renamed_words(block, str(key), new), path=source, line=line)
            allowed = sorted(set().union(*(b.get("properties") or {} for b in _branches(node))))
            where = f"block '{dotted(block)}'" if block else "the top level"
            raise InputError(f"field '{dotted(path)}' {origin}: unknown key {str(key)!r} in "
                             f"{where} (misspelt?); expected keys among {allowed}",
                             path=source, line=line)
        node, block = sub, block + (key,)
    errors = list(jsonschema.Draft202012Validator(node).iter_errors(value))
    if errors:
        err = min(errors, key=lambda e: (len(e.absolute_path), str(list(e.absolute_path))))
        field = dotted(path + tuple(err.absolute_path))
        raise InputError(f"field '{field}' {origin}: {err.message}; {schema_expectation(err)}",
                         path=source, line=line)


def type_overrides(config: dict, overrides: dict, schema: dict) -> dict:
    """Type ``overrides`` (Snakemake's ``workflow.config_settings.config``: the `--config` and
    profile values) as the schema says, put each typed leaf into ``config`` (the merged config,
    in place), refuse a leaf that still does not fit, naming its field and its origin, and
    return the typed overrides."""
    done = typed(dict(overrides), schema)
    for path, value in leaves(done):
        check_value(path, value, schema)
        node = config
        for key in path[:-1]:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                break
        else:
            node[path[-1]] = value
    return done


def _shown(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def _file_name(path, cwd: str) -> str:
    full = os.path.normpath(os.path.join(cwd, str(path)))
    relative = os.path.relpath(full, cwd)
    return str(path) if relative.startswith("..") else relative


def replaced_notes(overrides: dict, configfiles, cwd: str | None = None) -> list[str]:
    """One sentence per leaf of the typed ``overrides`` whose value differs from the one a config
    file (``configfiles``, in Snakemake's order: the last holding the key wins) gives it: the
    profile or command line wins silently otherwise (a site template's `max_runtime: 1440` over
    the config's `0`)."""
    cwd = os.path.abspath(cwd or os.getcwd())
    files = []
    for path in configfiles:
        try:
            files.append((_file_name(path, cwd),
                          yaml.safe_load(Path(cwd, path).read_text(encoding="utf-8")) or {}))
        except (OSError, yaml.YAMLError):
            continue
    notes = []
    for path, value in leaves(overrides):
        replaced = None
        for name, data in files:
            node = data
            for key in path:
                if not isinstance(node, dict) or key not in node:
                    break
                node = node[key]
            else:
                replaced = (name, node)
        if replaced is not None and replaced[1] != value:
            notes.append(f"{dotted(path)}: {_shown(value)} from the command line or a profile "
                         f"replaces {_shown(replaced[1])} in {replaced[0]}")
    return notes


