"""Every key of the config schema is shown at work or refused: the matrix beside the schema
(workflow/schemas/config.coverage.yaml) names, for each leaf key, the tests that show its effect
and those that refuse bad values of it, and this file keeps the matrix honest.

- The schema is walked (properties, array items, maps, oneOf/anyOf branches, $ref) and every leaf
  key must have a row, every row a key of the schema, every named test a real test function.
- Every leaf is given values of the wrong type and values just outside its bounds, enum or
  pattern, in a copy of the tests' config, and the start-up check must refuse each in one line
  naming the config file, the dotted key and what was expected.
- An unknown key at every object level of the schema is refused naming it; a map that accepts
  any name is listed in the matrix with the check that refuses a bad one.
"""

from __future__ import annotations

import ast
import copy
import re
from functools import cache
from pathlib import Path

import jsonschema
import pytest
import yaml

from conftest import ROOT, SUMMARY_LINES
from fairppl.config import settings
from fairppl.config.settings import TYPE_KEYS, check_config
from fairppl.core.errors import InputError

SCHEMA_PATH = ROOT / "workflow" / "schemas" / "config.schema.yaml"
MATRIX_PATH = ROOT / "workflow" / "schemas" / "config.coverage.yaml"
SOURCE = "config/config.yaml"

#: The name a map's entries get in a dotted key (corpora.<corpus>.type); `<name>` where unlisted.
PLACEHOLDERS = {
    "corpora": "<corpus>",
    "corpora.<corpus>.sha256": "<pair>",
    "normalization.characters": "<language>",
    "normalization.characters.<language>": "<character>",
}
#: The concrete name each placeholder takes when a value is put into a config.
EXAMPLE_NAMES = {"<corpus>": "bible", "<language>": "eng", "<character>": "\u017f",
                 "<pair>": "fr-en", "<name>": "made-up"}


# ------------------------------------------------------------------ the schema, walked


def load_schema() -> dict:
    return yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))


def resolve(node: dict, root: dict) -> dict:
    """``node`` with a local ``$ref`` (``#/$defs/...``) followed."""
    while isinstance(node, dict) and "$ref" in node:
        target = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def branches(node: dict, root: dict) -> list[dict]:
    """``node`` and, recursively, the branches of its oneOf/anyOf."""
    node = resolve(node, root)
    out = [node]
    for key in ("oneOf", "anyOf"):
        for branch in node.get(key, []):
            out += branches(branch, root)
    return out


def is_object(node: dict) -> bool:
    return ("properties" in node or isinstance(node.get("additionalProperties"), dict)
            or node.get("type") == "object")


def is_object_array(node: dict, root: dict) -> bool:
    return node.get("type") == "array" and is_object(resolve(node.get("items", {}), root))


def is_value(node: dict, root: dict) -> bool:
    """Whether a branch holds a value (not a block of keys, nor an array of blocks, nor only a
    oneOf/anyOf of branches); a key with no type at all holds any value."""
    wrapper = any(k in node for k in ("oneOf", "anyOf")) and not any(
        k in node for k in ("type", "enum", "const"))
    return not is_object(node) and not is_object_array(node, root) and not wrapper


class Walk:
    """The leaves (dotted key -> its schema), the object levels with named keys (dotted path ->
    schema) and the maps (dotted path -> schema) of a config schema."""

    def __init__(self, schema: dict):
        self.root = schema
        self.leaves: dict[str, dict] = {}
        self.levels: dict[str, dict] = {}
        self.maps: dict[str, dict] = {}
        self._walk(schema, "")

    def _walk(self, node: dict, path: str) -> None:
        node = resolve(node, self.root)
        parts = branches(node, self.root)
        if path and any(is_value(b, self.root) for b in parts):
            self.leaves[path] = node
        # allOf's if/then only constrain keys that `properties` names: not walked
        for branch in parts + [resolve(b, self.root) for b in node.get("allOf", [])
                               if "properties" in b]:
            if "properties" in branch:
                self.levels.setdefault(path, branch)
                for key, sub in branch["properties"].items():
                    self._walk(sub, f"{path}.{key}" if path else key)
            extra = branch.get("additionalProperties")
            if isinstance(extra, dict):
                self.maps.setdefault(path, branch)
                self._walk(extra, f"{path}.{PLACEHOLDERS.get(path, '<name>')}")
            if is_object_array(branch, self.root):
                self._walk(branch["items"], f"{path}[]")
            if is_object(branch) and "properties" not in branch and not isinstance(extra, dict):
                # an object with no keys named: a map of anything, itself a value to check
                self.maps.setdefault(path, branch)
                self.leaves[path] = node


@cache
def walk() -> Walk:
    return Walk(load_schema())


def load_matrix() -> dict:
    return yaml.safe_load(MATRIX_PATH.read_text(encoding="utf-8"))


# ------------------------------------------------------------------ the matrix


def test_every_leaf_key_has_a_row_and_every_row_a_key():
    keys, rows = set(walk().leaves), set(load_matrix()["keys"])
    missing, stale = sorted(keys - rows), sorted(rows - keys)
    assert not missing and not stale, (
        f"keys of {SCHEMA_PATH.name} without a row in {MATRIX_PATH.name} (name the tests of their "
        f"effect and refusal): {missing}; rows that name no key of the schema: {stale}")
    assert len(keys) > 100, "the walk lost the schema's keys"


def test_every_key_has_an_effect_test_or_says_why_not():
    bare, unknown = [], []
    for key, row in load_matrix()["keys"].items():
        row = row or {}
        unknown += [f"{key}.{field}" for field in row if field not in ("effect", "refusal",
                                                                      "reason")]
        if not row.get("effect") and not str(row.get("reason", "")).strip():
            bare.append(key)
    assert not unknown, f"fields other than effect, refusal and reason: {unknown}"
    assert not bare, (f"keys with no test of their effect and no reason why a refusal is all "
                      f"they get (every key is refused by this file's walk): {bare}")


def _tests_of(path: Path) -> set[str]:
    """Names of the test functions of a test file: module-level ``test_*`` and ``Test*``
    classes' methods (as ``Class::test_x``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.name.startswith("test"):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            names |= {f"{node.name}::{n.name}" for n in node.body
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                      and n.name.startswith("test")}
    return names


def named_tests(matrix: dict) -> list[tuple[str, str]]:
    """(where, test id) of every test the matrix names."""
    out = []
    for section in ("keys", "maps"):
        for key, row in (matrix.get(section) or {}).items():
            for field in ("effect", "refusal"):
                out += [(f"{section}.{key}.{field}", test) for test in (row or {}).get(field) or []]
    return out


def test_every_named_test_exists():
    missing, cache_ = [], {}
    for where, test in named_tests(load_matrix()):
        match = re.fullmatch(r"(tests/[\w/]+\.py)::([\w:]+?)(?:\[(.+)\])?", test)
        if not match:
            missing.append(f"{where}: {test!r} is not tests/<file>.py::<test>[<id>]")
            continue
        file, name, param = match.groups()
        path = ROOT / file
        if not path.is_file():
            missing.append(f"{where}: {file} does not exist")
            continue
        if file not in cache_:
            cache_[file] = (_tests_of(path), path.read_text(encoding="utf-8"))
        names, text = cache_[file]
        if name not in names:
            missing.append(f"{where}: {file} defines no test {name}")
        elif param is not None and param not in text:
            missing.append(f"{where}: {file} has no parameter id {param!r} for {name}")
    assert not missing, "\n".join(missing)


# ------------------------------------------------------------------ bad values, generated


#: One value of each JSON type.
SAMPLES = {"string": "wrong", "integer": 7, "number": 2.5, "boolean": True, "array": [7],
           "object": {"wrong": 7}, "null": None}
UNMATCHED = ("NOT a match!", "x")


def _valid(value, schema: dict, root: dict) -> bool:
    validator = jsonschema.Draft202012Validator({**schema, "$defs": root.get("$defs", {})})
    return validator.is_valid(value)


def scalar_candidates(schema: dict, root: dict) -> list[tuple[str, object]]:
    """(what, value) pairs meant to break ``schema``: a value of every JSON type, and for each
    branch one just outside its bounds, enum, const and pattern."""
    out = [(f"type {name}", value) for name, value in SAMPLES.items()]
    for branch in branches(schema, root):
        types = branch.get("type", [])
        types = [types] if isinstance(types, str) else types
        step = 1 if "integer" in types or "number" not in types else 0.5
        for bound, sign in (("minimum", -step), ("maximum", step)):
            if bound in branch:
                out.append((f"{bound} {branch[bound]}", branch[bound] + sign))
        for bound in ("exclusiveMinimum", "exclusiveMaximum"):
            if bound in branch:
                out.append((f"{bound} {branch[bound]}", branch[bound]))
        if "enum" in branch:
            out.append(("outside the enum", f"not-{branch['enum'][0]}"))
        if "const" in branch:
            out.append(("not the const", f"not-{branch['const']}"))
        if "pattern" in branch:
            out += [(f"pattern {branch['pattern']}", text) for text in UNMATCHED]
    return out


def bad_values(schema: dict, root: dict, current) -> list[tuple[str, object]]:
    """Values that ``schema`` refuses, each with what it breaks: ``scalar_candidates``, and for
    an array wrong items and lengths (``current``: a valid value, for its items)."""
    out = scalar_candidates(schema, root)
    for branch in branches(schema, root):
        if branch.get("type") != "array" and "items" not in branch:
            continue
        items = resolve(branch.get("items", {}), root)
        good = [x for x in (current if isinstance(current, list) else []) if _valid(x, items, root)]
        # the wrong item beside valid ones, so that the array's length is not what is refused
        pad = [good[0]] * (branch.get("minItems", 1) - 1) if good else []
        out += [(f"an item of {what}", pad + [value])
                for what, value in scalar_candidates(items, root)]
        if good and branch.get("uniqueItems"):
            out.append(("a repeated item", [good[0], good[0]]))
        if good and branch.get("minItems", 0) > 0:
            out.append((f"minItems {branch['minItems']}", [good[0]] * (branch["minItems"] - 1)))
        if good and "maxItems" in branch:
            out.append((f"maxItems {branch['maxItems']}", [good[0]] * (branch["maxItems"] + 1)))
    seen, kept = set(), []
    for what, value in out:
        marker = repr(value)
        if marker not in seen and not _valid(value, schema, root):
            seen.add(marker)
            kept.append((what, value))
    return kept


# ------------------------------------------------------------------ a config with every key


def base_config() -> dict:
    """The tests' config with a disabled corpus of each type that it lacks (the default config's
    url and europarl blocks, with one pair's digest), so that every corpus key has a home."""
    config = yaml.safe_load((ROOT / "tests" / "config" / "config.yaml")
                            .read_text(encoding="utf-8"))
    default = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    kinds = {spec["type"] for spec in config["corpora"].values()}
    for name, spec in default["corpora"].items():
        if spec["type"] not in kinds:
            kinds.add(spec["type"])
            config["corpora"][f"made-up-{spec['type']}"] = dict(copy.deepcopy(spec),
                                                                enabled=False)
    europarl = config["corpora"].get("made-up-europarl")
    if europarl is not None:
        europarl["sha256"] = {EXAMPLE_NAMES["<pair>"]: None}
    return config


def corpus_for(key: str, config: dict) -> str:
    """The corpus whose block a corpus key goes into: one of the type that reads it."""
    field = key.split(".")[2]
    kinds = [kind for kind, keys in TYPE_KEYS.items() if field in keys]
    if field == "sha256" and key.endswith("<pair>"):
        kinds = ["europarl"]
    for name, spec in config["corpora"].items():
        if not kinds or spec["type"] in kinds:
            return name
    raise AssertionError(f"the base config has no corpus of the types {kinds} for {key}")


def concrete(key: str, config: dict) -> str:
    """``key`` with each placeholder replaced by a name the config has (or can take) and each
    array of blocks by its first item."""
    parts = key.replace("[]", ".[0]").split(".")
    if parts[0] == "corpora" and len(parts) > 2:
        parts[1] = corpus_for(key, config)
    parts = [EXAMPLE_NAMES.get(p, p) for p in parts]
    return ".".join(parts).replace(".[0]", "[0]")


def _default_block(schema: dict, root: dict) -> dict:
    """A valid block for ``schema``: its required keys at their defaults."""
    schema = resolve(schema, root)
    return {key: copy.deepcopy(resolve(schema["properties"][key], root)["default"])
            for key in schema.get("required", [])}


#: A valid item of each array of blocks, where a key below it needs one.
ITEMS = {"shannon.players": {"campaign": "campaigns/made-up", "player": "alice",
                             "protocol": "money"}}


def ensure(config: dict, path: str, root: dict):
    """The node at the concrete dotted ``path`` of ``config`` (``[0]``: an array's first item),
    creating the blocks on the way (with their required keys at their defaults) and an array of
    blocks with one valid item (ITEMS)."""
    node, schema, done = config, root, ""
    for step in re.findall(r"[^.\[\]]+|\[0\]", path):
        if step == "[0]":
            node, schema, done = node[0], resolve(schema["items"], root), done + "[0]"
            continue
        sub = resolve(schema.get("properties", {}).get(step)
                      or schema.get("additionalProperties") or {}, root)
        schema = next((b for b in branches(sub, root) if is_object(b) or is_object_array(b, root)),
                      sub)
        done = f"{done}.{step}" if done else step
        if not isinstance(node.get(step), (dict, list)):
            node[step] = ([copy.deepcopy(ITEMS[done])] if is_object_array(schema, root)
                          else _default_block(schema, root))
        node = node[step]
    return node


def put(config: dict, key: str, value, root: dict) -> str:
    """Set the leaf ``key`` (a schema key, or a made-up one under a block) of ``config`` to
    ``value``, creating the blocks on the way; return the concrete dotted path used."""
    path = concrete(key, config)
    parent, _, name = path.rpartition(".")
    ensure(config, parent, root)[name] = value
    return path


def current_value(key: str, config: dict, root: dict):
    """The value of ``key`` in ``config`` where it has one, else the schema's default."""
    node = config
    for step in re.findall(r"[^.\[\]]+|\[0\]", concrete(key, config)):
        try:
            node = node[0] if step == "[0]" else node[step]
        except (KeyError, IndexError, TypeError):
            return walk().leaves[key].get("default")
    return node


@pytest.fixture
def fast_schema(monkeypatch):
    """check_config parses the schema file on every call (70 ms); the walk's thousand calls get
    the parse of the same text from a cache (a fresh copy each time), so they take seconds."""
    parse, parsed = settings.yaml.safe_load, {}

    def cached(text):
        if text not in parsed:
            parsed[text] = parse(text)
        return copy.deepcopy(parsed[text])

    monkeypatch.setattr(settings.yaml, "safe_load", cached)


def refusal(config: dict) -> str:
    with pytest.raises(InputError) as err:
        check_config(config, str(SCHEMA_PATH), SOURCE)
    return str(err.value)


def test_the_base_config_passes():
    check_config(base_config(), str(SCHEMA_PATH), SOURCE)


def test_every_leaf_refuses_wrong_values(fast_schema):
    """Every leaf key, given each value its schema refuses (a wrong type, a bound, enum or
    pattern just missed, a wrong item), is refused at start-up in one line naming the file, the
    key and what was expected."""
    root, base = load_schema(), base_config()
    check_config(copy.deepcopy(base), str(SCHEMA_PATH), SOURCE)
    matrix = load_matrix()
    accepts_any = set(matrix.get("accepts_any") or {})
    tried, keys, failures, unrefusable = 0, 0, [], []
    for key, schema in walk().leaves.items():
        values = bad_values(schema, root, current_value(key, base, root))
        if not values:
            unrefusable.append(key)
            continue
        keys += 1
        for what, value in values:
            config = copy.deepcopy(base)
            path = put(config, key, value, root)
            tried += 1
            try:
                message = refusal(config)
            except pytest.fail.Exception:
                failures.append(f"{path} = {value!r} ({what}): accepted")
                continue
            # the key itself, also where it is an entry of a map that is one of a oneOf's forms
            # (corpora.<corpus>.sha256.<pair>: a digest, or a map of digests)
            names_key = f"field '{path}" in message
            problems = [why for why, ok in (
                ("does not open with the file", message.startswith(f"{SOURCE}: ")),
                ("does not name the key", names_key),
                ("says nothing expected", "expected" in message),
                ("is not one line", "\n" not in message)) if not ok]
            if problems:
                failures.append(f"{path} = {value!r} ({what}): the message "
                                f"{' and '.join(problems)}: {message}")
    line = (f"schema walk: {tried} bad values on {keys} keys of {SCHEMA_PATH.name} refused at "
            f"start-up")
    print(line)
    SUMMARY_LINES.append(line)
    assert not failures, f"{len(failures)} of {tried} bad values:\n" + "\n".join(failures)
    assert sorted(unrefusable) == sorted(accepts_any), (
        f"keys whose schema refuses no value (list them under accepts_any with a reason, or "
        f"give them a type): {sorted(set(unrefusable) - accepts_any)}; listed but refusable: "
        f"{sorted(accepts_any - set(unrefusable))}")
    assert tried >= 3 * keys


# ------------------------------------------------------------------ unknown keys and names


def test_unknown_key_is_refused_at_every_level(fast_schema):
    """A misspelt key is refused in every block of the schema, named with its block (a block
    without additionalProperties: false would drop it silently); a block given as a word instead
    of its keys is refused naming the block."""
    root, base = load_schema(), base_config()
    open_levels = sorted(path or "(top level)" for path, schema in walk().levels.items()
                         if schema.get("additionalProperties") is not False)
    assert not open_levels, f"blocks that accept unknown keys silently: {open_levels}"
    failures = []
    for level in walk().levels:
        config = copy.deepcopy(base)
        leaf = f"{level}.frobnicate" if level else "frobnicate"
        path = put(config, leaf, 1, root)
        block = path.rsplit(".", 1)[0] if level else ""
        message = refusal(config)
        where = f"block '{block}'" if block else "the top level"
        wanted = f"{SOURCE}: field '{path}': unknown key(s) ['frobnicate'] in {where}"
        if not message.startswith(wanted) or "expected" not in message or "\n" in message:
            failures.append(f"{path}: {message}")
        if level:  # the block itself given as a word
            # an array of blocks: the array and its item
            wrong = ([(level[:-2], "wrong"), (level[:-2], ["wrong"])] if level.endswith("[]")
                     else [(level, "wrong")])
            for key, value in wrong:
                config = copy.deepcopy(base)
                path = put(config, key, value, root)
                message = refusal(config)
                if not message.startswith(f"{SOURCE}: field '{path}") or "expected" not in message:
                    failures.append(f"{path} = {value!r}: {message}")
    assert not failures, "\n".join(failures)
    assert len(walk().levels) >= 20


def test_maps_refuse_a_bad_name_or_say_where_it_is_checked(fast_schema):
    """A map (corpus ids, Europarl pairs, languages of the character maps) either refuses a bad
    entry name in the schema, naming the map, or is listed under `maps` in the matrix with the
    start-up check (and its test) that refuses it."""
    root, base, listed = load_schema(), base_config(), load_matrix().get("maps") or {}
    unlisted, failures = [], []
    for path, schema in walk().maps.items():
        if "propertyNames" not in schema:
            row = listed.get(path) or {}
            if not (str(row.get("reason", "")).strip() and row.get("refusal")):
                unlisted.append(path)
            continue
        config = copy.deepcopy(base)
        entry = concrete(f"{path}.{PLACEHOLDERS.get(path, '<name>')}", config)
        parent, _, name = entry.rpartition(".")
        node = ensure(config, parent, root)
        node["Not A Name!"] = copy.deepcopy(node.get(name, next(iter(node.values()), None)))
        message = refusal(config)
        if not (message.startswith(f"{SOURCE}: field '{parent}':") and "Not A Name!" in message
                and "expected" in message):
            failures.append(f"{parent}: {message}")
    assert not unlisted, (f"maps that accept any entry name in the schema, not listed under "
                          f"`maps` with a reason and the test of their start-up check: {unlisted}")
    assert not failures, "\n".join(failures)
    assert sorted(listed) == sorted(p for p, s in walk().maps.items() if "propertyNames" not in s)
