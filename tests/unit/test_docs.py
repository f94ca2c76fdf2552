"""The documentation is exercised: README.md and docs/*.md.

Every fenced code block is checked by what it holds:

* ``bash``/``sh`` blocks: each command line (continuations joined, comments and leading
  ``NAME=value`` assignments dropped) by its program. ``make X``: X is a target of the Makefile.
  ``snakemake ...``: dry-run (``-n``; tests/workflow/test_docs_commands.py) with the repository's
  Snakefile in a temporary working directory (conftest's ``make_workdir``): on the test config, or
  on the repository's config/ when the command names a ``--configfile`` of it; a ``--profile
  NAME`` is the YAML snippet of the docs whose first comment line names
  ``.../NAME/profile.yaml``. ``fairppl ...`` and ``python bench/<script>.py ...``: their own
  argparse parses the arguments without running anything; a synopsis (``[--opt X]``, ``a|b``)
  only needs its sub-command and every option it names to exist. Programs of the system or the
  cluster (``printf``, ``squeue``, ...) are listed in ``EXTERNAL``; any other program fails the
  test, so a new kind of command gets a check.
* ``yaml`` blocks parse; a profile's ``set-resources`` names rules of the workflow; a config
  fragment (top-level keys of config/config.yaml) passes the config's checks merged over it.
* ``json`` blocks parse, one object per line.

And every relative link or image of these files resolves to an existing file and, with
``#anchor``, to a heading of that file (GitHub's anchors).
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import runpy
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Programs the docs show that belong to the system or the cluster, not to this repository.
EXTERNAL = {"printf", "echo", "cd", "mkdir", "cp", "ln", "ls", "cat", "export", "source", "git",
            "squeue", "sacct", "sbatch", "srun", "scancel", "sinfo", "scontrol", "module", "tmux",
            "screen", "apptainer", "singularity", "ssh", "tail", "less", "sed", "tar", "rm"}
SHELL_LANGS = {"bash", "sh", "shell", "console"}


def _blocks():
    """(file, line, language, text) of every fenced code block of the docs."""
    found = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").split("\n")
        i = 0
        while i < len(lines):
            m = re.match(r"^```(\w*)\s*$", lines[i])
            if m:
                j = i + 1
                while j < len(lines) and not lines[j].startswith("```"):
                    j += 1
                found.append((path, i + 1, m.group(1), "\n".join(lines[i + 1:j])))
                i = j
            i += 1
    return found


BLOCKS = _blocks()


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def _commands():
    """(where, tokens) of every command line of the shell blocks."""
    out = []
    for path, line, lang, text in BLOCKS:
        if lang not in SHELL_LANGS:
            continue
        for command in re.sub(r"\\\n", " ", text).split("\n"):
            tokens = shlex.split(command, comments=True)
            while tokens and re.match(r"^[A-Z_][A-Z0-9_]*=", tokens[0]):
                tokens.pop(0)
            if tokens:
                out.append((_where(path, line), tokens))
    return out


COMMANDS = _commands()


def _program(tokens: list[str]) -> str:
    name = Path(tokens[0]).name
    if name.startswith("python") and len(tokens) > 1:
        return "python -m " + tokens[2] if tokens[1] == "-m" else "python"
    return name


def test_docs_show_commands():
    """The extraction finds the commands it should (a broken fence would hide them)."""
    programs = {_program(tokens) for _, tokens in COMMANDS}
    assert {"make", "snakemake", "fairppl", "python"} <= programs, programs


def test_every_command_has_a_check():
    unknown = [f"{where}: {tokens[0]}" for where, tokens in COMMANDS
               if _program(tokens) not in {"make", "snakemake", "fairppl", "python",
                                           "python -m fairppl", "bash"}
               and Path(tokens[0]).name not in EXTERNAL]
    assert not unknown, (f"commands in the docs that tests/unit/test_docs.py does not check: "
                         f"{unknown}; add a check, or add the program to EXTERNAL if it is the "
                         f"system's")


def _make_targets() -> set[str]:
    targets = set()
    for line in (ROOT / "Makefile").read_text(encoding="utf-8").split("\n"):
        m = re.match(r"^([A-Za-z0-9_.\- ]+):(?!=)", line)
        if m:
            targets.update(m.group(1).split())
    return targets


def test_make_targets_exist():
    targets = _make_targets()
    used = [(where, t) for where, tokens in COMMANDS if _program(tokens) == "make"
            for t in tokens[1:] if not t.startswith("-") and "=" not in t]
    assert used
    missing = [f"{where}: make {t}" for where, t in used if t not in targets]
    assert not missing, f"Makefile targets the docs name but the Makefile lacks: {missing}"


# --- argparse of the project's own programs -------------------------------------------------


class _Parsed(Exception):
    def __init__(self, parser, namespace=None):
        super().__init__("parsed")
        self.parser, self.namespace = parser, namespace


def _parse_only(run, argv: list[str], monkeypatch, parse: bool):
    """Run ``run()`` with sys.argv = argv until its parser parses: the top-level parser
    (``parse=False``: before parsing, for a synopsis) and its namespace. A parse error fails."""
    original = argparse.ArgumentParser.parse_args

    def stop(self, args=None, namespace=None):
        if not parse:
            raise _Parsed(self)
        return original(self, args, namespace)

    def stop_after(self, args=None, namespace=None):
        raise _Parsed(self, stop(self, args, namespace))

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", stop_after)
    monkeypatch.setattr(sys, "argv", argv)
    try:
        run()
    except _Parsed as parsed:
        return parsed.parser, parsed.namespace
    except SystemExit as err:
        pytest.fail(f"{argv}: argparse refused the arguments (exit {err.code})")
    pytest.fail(f"{argv}: ran to the end without parsing arguments")


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    return {s for action in parser._actions for s in action.option_strings}


def _subparser(parser: argparse.ArgumentParser, name: str):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            return action.choices[name]
    return None


def _check_synopsis(parser, args: list[str], where: str) -> None:
    """A synopsis such as ``campaign score DIR BETS [--json]``: its sub-commands exist and every
    option it names is one of the (sub-)command's options."""
    words = [w.strip("[]") for a in args for w in a.split("|")]
    for word in words:
        if word.startswith("-"):
            option = word.split("=")[0]
            assert option in _option_strings(parser), \
                f"{where}: option {option} is not an option of {parser.prog}"
        else:
            sub = _subparser(parser, word)
            if sub is not None:
                parser = sub


def _run_cli(args: list[str], where: str, monkeypatch) -> None:
    from fairppl.cli import app

    synopsis = any(("[" in a or "|" in a) for a in args)
    parser, namespace = _parse_only(lambda: app.main(args), ["fairppl", *args], monkeypatch,
                                    parse=not synopsis)
    if synopsis:
        _check_synopsis(parser, args, where)
    else:
        assert namespace.command == args[0], f"{where}: parsed as {namespace.command}"


def _project_commands(kind: str):
    return [pytest.param(where, tokens, id=f"{where}:{' '.join(tokens[:3])}")
            for where, tokens in COMMANDS if _program(tokens) in kind]


@pytest.mark.parametrize("where,tokens", _project_commands({"fairppl", "python -m fairppl"}))
def test_fairppl_command_parses(where, tokens, monkeypatch):
    args = tokens[1:] if _program(tokens) == "fairppl" else tokens[3:]
    args = args[:args.index(">")] if ">" in args else args
    _run_cli(args, where, monkeypatch)


@pytest.mark.parametrize("where,tokens", _project_commands({"python"}))
def test_python_script_parses(where, tokens, monkeypatch):
    script = ROOT / tokens[1]
    assert script.is_file(), f"{where}: {tokens[1]} is not a file of the repository"
    monkeypatch.syspath_prepend(str(script.parent))
    _parse_only(lambda: runpy.run_path(str(script), run_name="__main__"),
                [str(script), *tokens[2:]], monkeypatch, parse=True)


@pytest.mark.parametrize("where,tokens", _project_commands({"bash"}))
def test_bash_script_parses(where, tokens):
    """A ``bash SCRIPT`` line names a script of the repository that bash can parse."""
    script = ROOT / tokens[1]
    assert script.is_file(), f"{where}: {tokens[1]} is not a file of the repository"
    proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, f"{where}: {proc.stderr}"


# --- snakemake: dry runs --------------------------------------------------------------------


# --- YAML and JSON blocks -------------------------------------------------------------------


def _rule_names() -> set[str]:
    names = set()
    for path in [ROOT / "Snakefile", *(ROOT / "workflow" / "rules").glob("*.smk")]:
        names.update(re.findall(r"^(?:local)?rule (\w+):", path.read_text(encoding="utf-8"),
                                re.M))
    return names


def _blocks_of(*langs):
    return [pytest.param(path, line, text, id=_where(path, line))
            for path, line, lang, text in BLOCKS if lang in langs]


@pytest.mark.parametrize("path,line,text", _blocks_of("yaml", "yml"))
def test_yaml_block(path, line, text):
    where = _where(path, line)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        pytest.fail(f"{where}: not YAML: {err}")
    assert isinstance(data, dict), f"{where}: expected a mapping"
    default = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    if "set-resources" in data or "default-resources" in data:
        unknown = sorted(set(data.get("set-resources") or {}) - _rule_names())
        assert not unknown, f"{where}: set-resources names no rule of the workflow: {unknown}"
    elif set(data) <= set(default):
        from conftest import merge_config
        from fairppl.config.settings import check_config

        schema = ROOT / "workflow" / "schemas" / "config.schema.yaml"
        check_config(merge_config(copy.deepcopy(default), data), str(schema), where)
    else:
        pytest.fail(f"{where}: neither a profile nor a config fragment: keys {sorted(data)}")


@pytest.mark.parametrize("path,line,text", _blocks_of("json"))
def test_json_block(path, line, text):
    for i, row in enumerate(text.split("\n")):
        if row.strip():
            try:
                json.loads(row)
            except ValueError as err:
                pytest.fail(f"{_where(path, line + 1 + i)}: not JSON: {err}")


# --- links ----------------------------------------------------------------------------------


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces to -."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    anchors, seen, fence = set(), {}, False
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^#{1,6}\s+(.*)$", line)
        if m:
            slug = _slug(m.group(1))
            anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
    return anchors


def _links(path: Path):
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.findall(r"!?\[[^\]]*\]\(([^)\s]+)\)", text)


def test_slug_matches_github():
    assert _slug("Europarl: the paper's 21 languages") == "europarl-the-papers-21-languages"
    assert _slug("Why languages differ (`snakemake morphology`)") == \
        "why-languages-differ-snakemake-morphology"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path):
    broken = []
    for target in _links(path):
        if re.match(r"^[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            broken.append(f"{target}: no file {dest}")
        elif anchor and (dest.suffix != ".md" or anchor not in _anchors(dest)):
            broken.append(f"{target}: no heading with anchor #{anchor} in {dest.name}")
    assert not broken, f"{path.relative_to(ROOT)}: {broken}"


def test_every_docs_page_is_reachable_from_the_readme():
    reached, todo = set(), [(ROOT / "README.md").resolve()]
    while todo:
        page = todo.pop()
        if page in reached or page.suffix != ".md" or not page.is_file():
            continue
        reached.add(page)
        todo += [(page.parent / t.partition("#")[0]).resolve() for t in _links(page)
                 if t.partition("#")[0] and not re.match(r"^[a-z]+:", t)]
    orphans = [p.name for p in DOCS[1:] if p.resolve() not in reached]
    assert not orphans, f"docs pages no link from README.md leads to: {orphans}"
