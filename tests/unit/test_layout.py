"""The library's layout: one sub-package per stage, imports pointing one way (from the report and
the CLI down to the foundations), and no import cycle between modules.

Imports are read from the source (module level and inside functions alike), so a lazy import
cannot hide a cycle or an upward dependency."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "workflow" / "lib" / "fairppl"

#: The stage packages from the bottom up: each may import itself and the packages before it.
LAYERS = ["core", "config", "corpus", "tokenizers", "ngram", "neural", "stats", "lm", "tokenlm",
          "marginal", "morphology", "shannon", "report", "cli"]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(LIB.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The fairppl modules ``path`` imports (``from X import name`` counts X.name when that is a
    module, else X)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "fairppl")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "fairppl":
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in MODULES else target)
    return {m for m in found if m != name}


MODULES = {module_name(p): p for p in LIB.rglob("*.py")}


def stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_module_sits_in_a_stage_package_with_a_docstring():
    flat = sorted(p.name for p in LIB.glob("*.py") if p.name != "__init__.py")
    assert not flat, f"modules outside a stage package: {flat}"
    packages = sorted(p.parent.name for p in LIB.glob("*/__init__.py"))
    assert packages == sorted(LAYERS)
    for name in LAYERS:
        doc = ast.get_docstring(ast.parse((LIB / name / "__init__.py").read_text(encoding="utf-8")))
        assert doc and len(doc) > 80, f"fairppl.{name} needs a docstring saying what it holds"


def test_imports_point_down_the_layers():
    wrong = []
    for name, path in MODULES.items():
        here = stage(name)
        if here is None:
            continue
        for target in imports(path):
            there = stage(target)
            if there is not None and LAYERS.index(there) > LAYERS.index(here):
                wrong.append(f"{name} imports {target}")
    assert not wrong, "imports pointing up the layers:\n" + "\n".join(sorted(wrong))


def test_no_import_cycle_between_modules():
    graph = {name: {t for t in imports(path) if t in MODULES} for name, path in MODULES.items()}
    state, stack, cycles = {}, [], []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    # A package's __init__ that imports its own modules is not a cycle of the code's logic.
    cycles = [c for c in cycles if not any(part.count(".") == 1 and part.split(".")[1] in LAYERS
                                           and MODULES[part].name == "__init__.py"
                                           for part in c.split(" -> "))]
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


@pytest.mark.parametrize("source, expected", [
    ("from ..core.errors import InputError\n", {"fairppl.core.errors"}),
    ("from .lattice import count_paths\n", {"fairppl.marginal.lattice"}),
    ("from . import lattice as lat\n", {"fairppl.marginal.lattice"}),
    ("import fairppl.stats.metrics\n", {"fairppl.stats.metrics"}),
])
def test_imports_are_read_as_written(tmp_path, monkeypatch, source, expected):
    path = LIB / "marginal" / "_layout_probe.py"
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: source)
    assert imports(path) == expected


def test_project_text_speaks_of_the_project_alone():
    """The library, the rules, the configs, the benchmark scripts and the docs name no folder
    outside the repository (the tests' real-data folder is the tests' business:
    tests/shared_data.py)."""
    places = [*(ROOT / "workflow").rglob("*.py"), *(ROOT / "workflow").rglob("*.smk"),
              *(ROOT / "workflow").rglob("*.yaml"), *(ROOT / "config").rglob("*.yaml"),
              *(ROOT / "bench").glob("*.py"), *(ROOT / "bench").glob("*.sh"),
              *(ROOT / "docs").glob("*.md"), ROOT / "README.md", ROOT / "Makefile"]
    assert ROOT / "bench" / "bench_gpu.sh" in places  # the benchmark scripts are read
    found = [f"{path.relative_to(ROOT)}:{number}"
             for path in places for number, line in
             enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if "../shared" in line]
    assert not found, found
