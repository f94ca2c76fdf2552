#!/usr/bin/env bash
# Build KenLM's command-line tools (lmplz, build_binary, query) from the PyPI sdist kenlm==0.3.0 (by default).
#
# usage: build_kenlm.sh <outdir> <max_order> <threads> [version]   (or as a Snakemake script)
#
#   outdir     where the three binaries end up (created if missing)
#   max_order  largest n-gram order the binaries accept (KenLM's compile-time KENLM_MAX_ORDER)
#   threads    parallel make jobs
#   version    PyPI sdist version of kenlm (default 0.3.0, the only one tested)
#
# No Debian package and no wheel ships lmplz; the sdist holds the full C++ source. We fetch it with
# `pip download --no-deps` (never `--no-binary=:all:`, which makes pip build cmake from source).
# Environment: PIP overrides the pip executable (default: `pip`). BOOST_ROOT (or Boost_ROOT) and
# CMAKE_PREFIX_PATH, as `module load boost` sets them on a cluster, are passed to CMake, which
# looks for Boost there first; CXX picks the compiler. Ninja builds when it is on PATH, else make.
#
# Needs (Debian): cmake g++ libboost-program-options-dev libboost-system-dev libboost-thread-dev
#                 libboost-test-dev zlib1g-dev libbz2-dev liblzma-dev libeigen3-dev
# (elsewhere: a C++ compiler, CMake >= 3.10 and Boost; workflow/scripts/check_build_env.py checks
# them and names what is missing).
#
# The build runs in a temporary folder beside <outdir> (not /tmp), which is removed on exit,
# success or failure. Each binary is copied to a temporary name in <outdir> and renamed into place,
# so a failed build never leaves a half-written binary.
set -euo pipefail

APT_PACKAGES="cmake g++ libboost-program-options-dev libboost-system-dev libboost-thread-dev libboost-test-dev zlib1g-dev libbz2-dev liblzma-dev libeigen3-dev"
TOOLS=(lmplz build_binary query)

die() {
    echo "build_kenlm.sh: error: $*" >&2
    exit 1
}

# Run by Snakemake's `script:` directive (rule build_kenlm): the arguments come from the rule.
# (Not a params entry holding this script's path: that path is a per-run cache location, so the
# rule, and every n-gram after it, would rerun on every invocation.)
if declare -p snakemake_wildcards >/dev/null 2>&1; then
    exec >"${snakemake_log[0]}" 2>&1
    set -- "$(dirname "${snakemake_output[lmplz]}")" "${snakemake_wildcards[max_order]}" \
        "${snakemake[threads]}" "${snakemake_wildcards[version]}"
fi

if [[ $# -lt 3 || $# -gt 4 ]]; then
    echo "usage: build_kenlm.sh <outdir> <max_order> <threads> [version]" >&2
    exit 2
fi
outdir="$1"
max_order="$2"
threads="$3"
KENLM_VERSION="${4:-0.3.0}"
[[ "$KENLM_VERSION" =~ ^[0-9][0-9.]*$ ]] || die "version must look like 0.3.0, got '$KENLM_VERSION'"
[[ "$max_order" =~ ^[0-9]+$ ]] && (( max_order >= 1 )) \
    || die "max_order must be a positive integer, got '$max_order'"
[[ "$threads" =~ ^[0-9]+$ ]] && (( threads >= 1 )) \
    || die "threads must be a positive integer, got '$threads'"

PIP="${PIP:-pip}"
command -v cmake >/dev/null 2>&1 \
    || die "'cmake' not found: \`make setup\` installs it from PyPI into the virtual environment (put its bin/ on PATH), or apt-get install -y $APT_PACKAGES"
if command -v ninja >/dev/null 2>&1; then
    generator="Ninja"
elif command -v make >/dev/null 2>&1; then
    generator="Unix Makefiles"
else
    die "neither 'ninja' nor 'make' found: \`make setup\` installs ninja from PyPI into the virtual environment"
fi
cxx="${CXX:-}"
[[ -n "$cxx" ]] || cxx="$(command -v g++ || command -v c++ || command -v clang++ || true)"
[[ -n "$cxx" ]] \
    || die "no C++ compiler (g++, c++ or clang++ on PATH, or CXX): module load gcc, or apt-get install -y $APT_PACKAGES"
# Where Boost lies when it is not in the system's folders (module load boost).
cmake_prefix=()
boost_root="${BOOST_ROOT:-${Boost_ROOT:-}}"
# (BOOST_ROOT only: KenLM's CMake policies make FindBoost refuse the spelling Boost_ROOT)
[[ -n "$boost_root" ]] && cmake_prefix+=("-DBOOST_ROOT=$boost_root")
[[ -n "${CMAKE_PREFIX_PATH:-}" ]] && cmake_prefix+=("-DCMAKE_PREFIX_PATH=${CMAKE_PREFIX_PATH//:/;}")
command -v "$PIP" >/dev/null 2>&1 || [[ -x "$PIP" ]] || die "pip not found: '$PIP' (set PIP=/path/to/pip)"

mkdir -p "$outdir"
outdir="$(cd "$outdir" && pwd)"
parent="$(dirname "$outdir")"
workdir="$(mktemp -d "$parent/.build_kenlm.XXXXXX")"
cleanup() {
    rm -rf "$workdir"
    # Temporary copies of binaries left by an interrupted install step.
    rm -f "$outdir"/.*.part."$$" 2>/dev/null || true
}
trap cleanup EXIT

start=$(date +%s)

echo "[build_kenlm] downloading kenlm==$KENLM_VERSION sdist" >&2
"$PIP" download --no-deps --dest "$workdir/dl" "kenlm==$KENLM_VERSION" >&2 \
    || die "pip download kenlm==$KENLM_VERSION failed (is PyPI reachable?)"
shopt -s nullglob
sdists=("$workdir"/dl/kenlm-"$KENLM_VERSION".tar.gz)
shopt -u nullglob
(( ${#sdists[@]} == 1 )) \
    || die "expected the sdist kenlm-$KENLM_VERSION.tar.gz, pip fetched: $(ls "$workdir/dl")"

mkdir "$workdir/src"
tar -xzf "${sdists[0]}" -C "$workdir/src"
srcdir="$workdir/src/kenlm-$KENLM_VERSION"
[[ -f "$srcdir/CMakeLists.txt" ]] || die "no CMakeLists.txt in $srcdir"

builddir="$workdir/build"
mkdir "$builddir"
echo "[build_kenlm] configuring (KENLM_MAX_ORDER=$max_order, $generator, $cxx${boost_root:+, BOOST_ROOT=$boost_root})" >&2
if ! cmake -S "$srcdir" -B "$builddir" -G "$generator" \
        -DCMAKE_CXX_COMPILER="$cxx" \
        "${cmake_prefix[@]}" \
        -DCMAKE_BUILD_TYPE=Release \
        -DKENLM_MAX_ORDER="$max_order" \
        -DCOMPILE_TESTS=OFF >"$workdir/cmake.log" 2>&1; then
    cat "$workdir/cmake.log" >&2
    missing=""
    grep -qi 'boost' "$workdir/cmake.log" && missing+=" libboost-program-options-dev libboost-system-dev libboost-thread-dev libboost-test-dev"
    grep -qi 'zlib' "$workdir/cmake.log" && missing+=" zlib1g-dev"
    grep -qi 'bzip2\|bz2' "$workdir/cmake.log" && missing+=" libbz2-dev"
    grep -qi 'lzma' "$workdir/cmake.log" && missing+=" liblzma-dev"
    grep -qi 'eigen' "$workdir/cmake.log" && missing+=" libeigen3-dev"
    grep -qi 'CXX compiler\|CMAKE_CXX_COMPILER' "$workdir/cmake.log" && missing+=" g++"
    if [[ -n "$missing" ]]; then
        die "cmake configure failed; likely missing Debian packages:$missing
  install all build dependencies with: apt-get install -y $APT_PACKAGES
  (without root: module load boost, or set BOOST_ROOT to a Boost prefix; see docs/cluster-setup.md)"
    fi
    die "cmake configure failed (log above); the build needs: apt-get install -y $APT_PACKAGES"
fi

echo "[build_kenlm] compiling ${TOOLS[*]} with $threads jobs" >&2
cmake --build "$builddir" --parallel "$threads" --target "${TOOLS[@]}" >"$workdir/make.log" 2>&1 \
    || { tail -n 60 "$workdir/make.log" >&2; die "the build failed (last 60 lines above)"; }

for tool in "${TOOLS[@]}"; do
    bin="$builddir/bin/$tool"
    [[ -x "$bin" ]] || die "build finished but $bin is missing"
done
# Smoke test before installing. lmplz --help exits with status 1, so check its output instead
# (and capture it first: with pipefail, `lmplz --help | grep -q` would fail on that status).
help_text="$("$builddir/bin/lmplz" --help 2>&1 || true)"
[[ "$help_text" == *"--order"* ]] || die "built lmplz does not run: $help_text"

for tool in "${TOOLS[@]}"; do
    tmp="$outdir/.$tool.part.$$"
    cp "$builddir/bin/$tool" "$tmp"
    chmod 755 "$tmp"
    mv -f "$tmp" "$outdir/$tool"
done

end=$(date +%s)
echo "[build_kenlm] installed ${TOOLS[*]} (max order $max_order) into $outdir in $((end - start)) s" >&2
