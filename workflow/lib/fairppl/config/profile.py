"""A site profile checked before Snakemake reads it (`fairppl profile check PATH`,
docs/cluster.md): Snakemake stops at a key it does not know with its usage text of several
hundred lines, naming neither the file nor the key's right spelling, and ignores a rule name
under `set-resources` that no rule has.

Every key is checked against Snakemake's own command line (snakemake.cli's parser: a profile's
key is an option's name without its `--`), every rule name under `set-resources` and
`set-threads` against the workflow's rules, and the `config:` block against the config schema,
read as Snakemake reads it (its leaves arrive as text, :mod:`.overrides`). Each problem names the
file, the line, the key and what was expected (the closest valid names).
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import yaml

from ..core.errors import InputError
from .overrides import check_value, leaves, read_schema, typed

#: Where a profile folder keeps its settings, in Snakemake's order of preference.
PROFILE_FILES = ("profile.yaml", "config.yaml")
#: The profile keys whose value maps rule names to settings.
PER_RULE_KEYS = ("set-resources", "set-threads")
_RULE = re.compile(r"^(?:rule|checkpoint)\s+(\w+)\s*:", re.M)


def profile_file(path: str | Path) -> Path:
    """The YAML file of the profile ``path`` (a folder holding profile.yaml or config.yaml, or
    the file itself)."""
    path = Path(path)
    if path.is_dir():
        for name in PROFILE_FILES:
            if (path / name).is_file():
                return path / name
        raise InputError(f"no {' or '.join(PROFILE_FILES)} in this folder; expected a profile "
                         f"folder (a copy of workflow/profiles/site-template)", path=str(path))
    if not path.is_file():
        raise InputError("no such file or folder; expected a profile folder or its "
                         "profile.yaml", path=str(path))
    return path


def snakemake_options() -> list[str]:
    """Every long option of Snakemake's command line (executor plugins' included) without its
    `--`: the keys a profile may hold."""
    from snakemake.cli import get_argument_parser

    return sorted({opt[2:] for action in get_argument_parser()._actions
                   for opt in action.option_strings if opt.startswith("--")})


def workflow_rules(root: str | Path) -> list[str]:
    """The rule names of the workflow under ``root`` (its Snakefile and workflow/rules/)."""
    root = Path(root)
    files = [root / "Snakefile", *sorted((root / "workflow" / "rules").rglob("*.smk"))]
    return sorted({name for path in files if path.is_file()
                   for name in _RULE.findall(path.read_text(encoding="utf-8"))})


def _lines(node, path: tuple = (), found: dict | None = None) -> dict:
    """(dotted key path) -> 1-based line of each key of a composed YAML mapping ``node``; a key
    given twice in one mapping raises InputError."""
    found = {} if found is None else found
    if isinstance(node, yaml.MappingNode):
        seen: dict = {}
        for key_node, value_node in node.value:
            key = key_node.value
            line = key_node.start_mark.line + 1
            if key in seen:
                raise InputError(f"key {key!r} is given twice in one mapping (first on line "
                                 f"{seen[key]}); expected each key once", line=line)
            seen[key] = line
            found[path + (key,)] = line
            _lines(value_node, path + (key,), found)
    return found


def _closest(name: str, names: list[str]) -> list[str]:
    exact = [n for n in names if n == name.replace("_", "-")]
    return exact or difflib.get_close_matches(name, names, n=3, cutoff=0.6)


def profile_problems(path: str | Path, schema_path: str, rules: list[str],
                     options: list[str] | None = None) -> list[str]:
    """Every problem of the profile at ``path``, one line each, naming the file and the line:
    keys that are not Snakemake options, rule names under `set-resources`/`set-threads` that are
    not among ``rules``, values of the `config:` block that the config schema refuses."""
    file = profile_file(path)
    name = str(file)
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        return [str(InputError(f"invalid UTF-8 at byte {err.start}: expected a UTF-8 YAML file "
                               f"of Snakemake options", path=name))]
    try:
        lines = _lines(yaml.compose(text))
        data = yaml.safe_load(text)
    except InputError as err:
        return [str(InputError(str(err), path=name, line=err.line))]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        return [str(InputError(f"YAML syntax error: {getattr(err, 'problem', None) or err}; "
                               f"expected a YAML mapping of Snakemake options", path=name,
                               line=mark.line + 1 if mark else None))]
    if not isinstance(data, dict):
        return [str(InputError(f"the top level is a {type(data).__name__}; expected a mapping "
                               f"of Snakemake options (jobs, cores, default-resources, ...)",
                               path=name))]
    options = snakemake_options() if options is None else options
    problems = []
    for key in data:
        if key not in options:
            close = _closest(str(key), options)
            expected = (f"expected an option such as {', '.join(close)}" if close else
                        "expected a Snakemake option (`snakemake --help` lists them; a key is "
                        "an option without its `--`)")
            problems.append(str(InputError(
                f"key {key!r} is not an option of Snakemake, which would stop with its usage "
                f"text; {expected}", path=name, line=lines.get((key,)))))
    for key in PER_RULE_KEYS:
        block = data.get(key)
        if block is None:
            continue
        if not isinstance(block, dict):
            problems.append(str(InputError(f"{key} is a {type(block).__name__}; expected a "
                                           f"mapping of rule names", path=name,
                                           line=lines.get((key,)))))
            continue
        for rule in block:
            if rule not in rules:
                close = _closest(str(rule), rules)
                expected = (f"expected a rule such as {', '.join(close)}" if close else
                            "expected a rule of the workflow (`snakemake --list-rules`)")
                problems.append(str(InputError(
                    f"{key}: {rule!r} is not a rule of the workflow, so its setting would be "
                    f"ignored; {expected}", path=name, line=lines.get((key, rule)))))
    if isinstance(data.get("config"), dict):
        problems += _config_problems(file, data["config"], lines, read_schema(schema_path))
    return problems


def _as_snakemake_reads_it(file: Path) -> dict:
    """The profile's `config:` block as the workflow gets it: Snakemake's own profile parser
    turns it into `--config` arguments, which its own parser reads (nested leaves as text)."""
    from snakemake.cli import parse_config
    from snakemake.profiles import ProfileConfigFileParser

    with file.open(encoding="utf-8") as stream:
        parsed = ProfileConfigFileParser().parse(stream)
    return parse_config(parsed.get("config") or [])


def _config_problems(file: Path, block: dict, lines: dict, schema: dict) -> list[str]:
    try:
        given = _as_snakemake_reads_it(file)
    except Exception as err:  # Snakemake's own parsers: what they say is the answer
        return [str(InputError(f"config: Snakemake cannot read this block ({err}); expected "
                               f"keys of config/config.yaml", path=str(file),
                               line=lines.get(("config",))))]
    problems = []
    for path, value in leaves(typed(given, schema)):
        line = next((lines[("config",) + path[:n]] for n in range(len(path), 0, -1)
                     if ("config",) + path[:n] in lines), lines.get(("config",)))
        try:
            check_value(path, value, schema, source=str(file), line=line,
                        origin="in the config: block")
        except InputError as err:
            problems.append(str(err))
    return problems


def check_profile(path: str | Path, schema_path: str, rules: list[str]) -> None:
    """Raise InputError with the profile's first problem (:func:`profile_problems`)."""
    problems = profile_problems(path, schema_path, rules)
    if problems:
        raise InputError(problems[0])
