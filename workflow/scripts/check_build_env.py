"""Check, before anything is built or installed, that this machine can build the study's KenLM.

`make setup` runs this where it cannot (or need not) install Debian packages itself: an
unprivileged user on a cluster login node, who gets the compiler and Boost from `module load`.
It looks where the build will look (the variables `module load` sets):

* a C++ compiler: ``$CXX``, else ``g++``, ``c++`` or ``clang++`` on ``PATH``, that compiles C++11;
* Boost >= 1.41, headers and the libraries program_options, system, thread and
  unit_test_framework (what KenLM 0.3.0's CMakeLists asks ``find_package(Boost)`` for), where
  CMake's find_package(Boost) looks: under ``BOOST_ROOT``/``Boost_ROOT``,
  ``BOOST_INCLUDEDIR``/``BOOST_LIBRARYDIR``, the prefixes of ``CMAKE_PREFIX_PATH`` or the
  system's folders (the compiler's own defaults). ``CPATH``, ``CPLUS_INCLUDE_PATH`` and
  ``LIBRARY_PATH`` are read by the compiler but not by CMake: a Boost found only through them
  would pass a compile and fail KenLM's CMake step after the whole virtual environment is
  built, so the probes run without them and such a Boost is named with the ``BOOST_ROOT`` to
  set. A variable naming a folder that does not exist is named as such;
* Python >= 3.11 with its ``venv`` module (ensurepip).

CMake (>= 3.15: KenLM needs 3.10, build_kenlm.sh builds several targets in one call) and Ninja
are not required: where they are missing (or CMake is too old) ``--pypi-tools`` names them and
the Makefile installs them from PyPI into the virtual environment. zlib, bzip2 and xz are optional in KenLM's build (without
them it cannot read compressed files, which the study never asks it to) and only noted; Eigen
is needed only by KenLM's `interpolate`, which the study does not build.

usage: check_build_env.py            check; on a missing piece print one message naming each
                                     and how a cluster provides it, exit 1
       check_build_env.py --pypi-tools   print the pinned build tools to take from PyPI (may be
                                     empty)

Standard library only: it runs with the system's python3 before the virtual environment exists.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

#: KenLM 0.3.0's CMakeLists: cmake_minimum_required(VERSION 3.10) (3.15 for build_kenlm.sh's
#: `cmake --build --target` of several targets), find_package(Boost 1.41.0
#: REQUIRED COMPONENTS program_options system thread unit_test_framework).
CMAKE_MINIMUM = (3, 15)
BOOST_MINIMUM = 104100
BOOST_LIBRARIES = ("program_options", "system", "thread", "unit_test_framework")
PYTHON_MINIMUM = (3, 11)
#: The PyPI builds of the build tools, pinned, for a machine that lacks them.
PYPI_PINS = {"cmake": "cmake==3.31.10", "ninja": "ninja==1.13.2"}

#: How a cluster (environment modules) or a distribution provides each piece.
FIXES = {
    "compiler": "`module load gcc` (or set CXX to a C++ compiler), or Debian `g++`, "
                "RHEL `gcc-c++`",
    "boost": "`module load boost` (it sets BOOST_ROOT or CMAKE_PREFIX_PATH; or set BOOST_ROOT "
             "to a Boost install prefix yourself), or Debian `libboost-program-options-dev "
             "libboost-system-dev libboost-thread-dev libboost-test-dev`, RHEL `boost-devel`",
    "python": "`module load python` (3.11 or newer; then `make PYTHON=python3.11 ...` if its "
              "name differs), or Debian `python3-venv`, RHEL `python3.11`",
}
#: Optional compression libraries: header, library, Debian and RHEL packages.
COMPRESSION = (("zlib", "zlib.h", "z", "zlib1g-dev", "zlib-devel"),
               ("bzip2", "bzlib.h", "bz2", "libbz2-dev", "bzip2-devel"),
               ("xz", "lzma.h", "lzma", "liblzma-dev", "xz-devel"))


def _split(value: str | None) -> list[str]:
    return [part for part in (value or "").split(os.pathsep) if part]


def search_dirs(env: dict[str, str]) -> tuple[list[str], list[str]]:
    """The include and library folders that the environment names for Boost, in CMake's order
    of preference: ``BOOST_INCLUDEDIR``/``BOOST_LIBRARYDIR``, then ``BOOST_ROOT``/``Boost_ROOT``,
    then each prefix of ``CMAKE_PREFIX_PATH`` (a prefix's ``include`` and ``lib``, ``lib64`` and
    the multiarch ``lib/<triplet>``). Only folders that exist are returned."""
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    includes, libraries = [], []
    includes += _split(env.get("BOOST_INCLUDEDIR"))
    libraries += _split(env.get("BOOST_LIBRARYDIR"))
    prefixes = [env.get("BOOST_ROOT"), env.get("Boost_ROOT"), env.get("BOOSTROOT")]
    prefixes = [p for p in prefixes if p] + _split(env.get("CMAKE_PREFIX_PATH"))
    for prefix in prefixes:
        includes.append(os.path.join(prefix, "include"))
        for lib in ("lib", "lib64", os.path.join("lib", multiarch) if multiarch else None):
            if lib:
                libraries.append(os.path.join(prefix, lib))

    def existing(folders):
        seen = []
        for folder in folders:
            if os.path.isdir(folder) and folder not in seen:
                seen.append(folder)
        return seen

    return existing(includes), existing(libraries)


#: Variables the compiler reads for its search folders and CMake's find_package(Boost) does not.
COMPILER_ONLY_VARS = ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "LIBRARY_PATH")
#: Variables naming Boost folders (or prefixes) for CMake's find_package(Boost).
BOOST_VARS = ("BOOST_ROOT", "Boost_ROOT", "BOOSTROOT", "BOOST_INCLUDEDIR", "BOOST_LIBRARYDIR",
              "CMAKE_PREFIX_PATH")


def missing_folders(env: dict[str, str]) -> list[str]:
    """``NAME=path`` of each folder that a Boost variable of ``env`` names and that does not
    exist (a `module load` of another machine, a typo): said as such, not as "unset"."""
    return [f"{name}={folder}" for name in BOOST_VARS for folder in _split(env.get(name))
            if not os.path.isdir(folder)]


def compiler_only_prefixes(env: dict[str, str]) -> list[str]:
    """The prefixes whose ``include/boost/version.hpp`` the compiler finds through CPATH (or
    C_INCLUDE_PATH, CPLUS_INCLUDE_PATH) only: what BOOST_ROOT should be set to."""
    prefixes = []
    for name in ("CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH"):
        for folder in _split(env.get(name)):
            if os.path.isfile(os.path.join(folder, "boost", "version.hpp")):
                prefix = os.path.dirname(os.path.normpath(folder))
                if prefix not in prefixes:
                    prefixes.append(prefix)
    return prefixes


def find_compiler(env: dict[str, str]) -> str | None:
    """The C++ compiler the build will use: ``CXX`` (a name on PATH or a path), else the first
    of g++, c++, clang++ on PATH."""
    path = env.get("PATH")
    if env.get("CXX"):
        return shutil.which(env["CXX"].split()[0], path=path)
    for name in ("g++", "c++", "clang++"):
        found = shutil.which(name, path=path)
        if found:
            return found
    return None


def _compile(compiler: str, source: str, args: list[str], env: dict[str, str],
             workdir: str) -> tuple[bool, str]:
    src = Path(workdir) / "probe.cc"
    src.write_text(source, encoding="utf-8")
    cmd = [compiler, "-std=c++11", str(src), "-o", str(Path(workdir) / "probe"), *args]
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as err:
        return False, str(err)
    return done.returncode == 0, (done.stderr or done.stdout).strip()


def cmake_version(env: dict[str, str]) -> tuple[int, ...] | None:
    """The version of the ``cmake`` on PATH, or None when there is none (or it does not run)."""
    cmake = shutil.which("cmake", path=env.get("PATH"))
    if cmake is None:
        return None
    try:
        out = subprocess.run([cmake, "--version"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"version (\d+)\.(\d+)(?:\.(\d+))?", out)
    return tuple(int(g or 0) for g in match.groups()) if match else None


def pypi_tools(env: dict[str, str]) -> list[str]:
    """The build tools to install from PyPI, as pinned requirements (PYPI_PINS): cmake when
    missing or older than CMAKE_MINIMUM, ninja when missing."""
    tools = []
    version = cmake_version(env)
    if version is None or version[:2] < CMAKE_MINIMUM:
        tools.append(PYPI_PINS["cmake"])
    if shutil.which("ninja", path=env.get("PATH")) is None:
        tools.append(PYPI_PINS["ninja"])
    return tools


def check(env: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    """Check the build environment ``env`` (default ``os.environ``). Returns ``(missing,
    notes)``: one line per missing piece, naming it and how to provide it, and one line per
    optional piece that is absent."""
    env = dict(os.environ if env is None else env)
    missing, notes = [], []
    if sys.version_info[:2] < PYTHON_MINIMUM:
        missing.append(f"Python >= {'.'.join(map(str, PYTHON_MINIMUM))} (this is "
                       f"{sys.version.split()[0]} at {sys.executable}): {FIXES['python']}")
    else:
        try:
            import ensurepip  # noqa: F401 - `python -m venv` needs it to install pip
        except ImportError:
            missing.append(f"Python's venv module with ensurepip ({sys.executable} lacks "
                           f"it): {FIXES['python']}")

    compiler = find_compiler(env)
    if compiler is None:
        named = f"CXX={env['CXX']!r} is not found" if env.get("CXX") else \
            "none of g++, c++, clang++ on PATH"
        missing.append(f"a C++ compiler ({named}): {FIXES['compiler']}")
        missing.append(f"Boost (program_options, system, thread, unit_test_framework; not "
                       f"checked without a compiler): {FIXES['boost']}")
        return missing, notes

    includes, libraries = search_dirs(env)
    include_args = [f"-I{d}" for d in includes]
    lib_args = [f"-L{d}" for d in libraries]
    # the probes see what CMake sees: not the compiler-only search variables
    cmake_env = {k: v for k, v in env.items() if k not in COMPILER_ONLY_VARS}
    with tempfile.TemporaryDirectory(prefix="fairppl-build-env-") as tmp:
        ok, err = _compile(compiler, "int main() { auto x = 1; return x - 1; }\n", [], env, tmp)
        if not ok:
            missing.append(f"a working C++11 compiler ({compiler} failed on a one-line "
                           f"program: {err.splitlines()[-1] if err else 'no output'}): "
                           f"{FIXES['compiler']}")
            return missing, notes
        header = ("#include <boost/version.hpp>\n"
                  f"#if BOOST_VERSION < {BOOST_MINIMUM}\n#error Boost too old\n#endif\n"
                  "int main() { return 0; }\n")
        ok, err = _compile(compiler, header, include_args, cmake_env, tmp)
        where = boost_search_words(env, includes)
        if not ok:
            what = "too old (needs 1.41 or newer)" if "too old" in err else "headers not found"
            missing.append(f"Boost (program_options, system, thread, unit_test_framework): "
                           f"{what}, {where}: {boost_fix(env)}")
        else:
            absent = []
            for name in BOOST_LIBRARIES:
                if not any(_compile(compiler, "int main() { return 0; }\n",
                                    include_args + lib_args + [f"-l{lib}"], cmake_env, tmp)[0]
                           for lib in (f"boost_{name}", f"boost_{name}-mt")):
                    absent.append(name)
            if absent:
                missing.append(f"Boost libraries {', '.join(absent)} (headers found; "
                               f"libboost_<name>.so not found, {where}): {boost_fix(env)}")
        gone = missing_folders(env)
        if gone and not any(line.startswith("Boost") for line in missing):
            notes.append(f"{', '.join(gone)}: no such folder (Boost was found elsewhere, where "
                         f"CMake looks too; unset the variable or point it at a Boost prefix)")
        for name, hdr, lib, debian, rhel in COMPRESSION:
            source = f"#include <{hdr}>\nint main() {{ return 0; }}\n"
            if not _compile(compiler, source, include_args + lib_args + [f"-l{lib}"], env,
                            tmp)[0]:
                notes.append(f"{name} not found (optional: KenLM then cannot read "
                             f"{name}-compressed files, which the study does not use; Debian "
                             f"`{debian}`, RHEL `{rhel}`)")
    return missing, notes


def boost_search_words(env: dict[str, str], includes: list[str]) -> str:
    """Where the Boost probes looked, in words: the folders the variables name (or that they
    are unset, or name folders that do not exist) and the compiler's own folders."""
    parts = []
    gone = missing_folders(env)
    if gone:
        parts.append(f"{', '.join(gone)} does not exist" if len(gone) == 1 else
                     f"{', '.join(gone)} do not exist")
    if includes:
        parts.append("searched " + ", ".join(includes) + " and the compiler's own folders")
    else:
        if not any(env.get(name) for name in BOOST_VARS):
            parts.append("BOOST_ROOT and CMAKE_PREFIX_PATH unset")
        parts.append("searched the compiler's own folders")
    found = [name for name in COMPILER_ONLY_VARS if env.get(name)]
    if found:
        parts.append(f"not {'/'.join(found)}, which CMake's find_package(Boost) does not read")
    return "; ".join(parts)


def boost_fix(env: dict[str, str]) -> str:
    """How to provide Boost: where CPATH leads the compiler to a Boost that CMake will not
    find, the BOOST_ROOT to set first."""
    prefixes = compiler_only_prefixes(env)
    if prefixes:
        return (f"set BOOST_ROOT={prefixes[0]} (the prefix of the Boost that CPATH names; CMake "
                f"looks under BOOST_ROOT, not CPATH), or {FIXES['boost']}")
    return FIXES["boost"]


def message(missing: list[str]) -> str:
    """The one message naming every missing piece."""
    lines = ["check_build_env: cannot build KenLM here; nothing was built or installed. Missing:"]
    lines += [f"  - {line}" for line in missing]
    lines.append("Load the modules (or install the packages) named above and run `make setup` "
                 "again; docs/cluster-setup.md shows the module lines for a cluster login node.")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv == ["--pypi-tools"]:
        print(" ".join(pypi_tools(dict(os.environ))))
        return 0
    if argv:
        print("usage: check_build_env.py [--pypi-tools]", file=sys.stderr)
        return 2
    missing, notes = check()
    for note in notes:
        print(f"check_build_env: note: {note}", file=sys.stderr)
    if missing:
        print(message(missing), file=sys.stderr)
        return 1
    print("check_build_env: C++ compiler, Boost and Python found; KenLM can be built",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
