"""`make setup` and a dry run as an unprivileged user, Boost from a prefix (the heavy half of
tests/unit/test_build_env.py, whose other rootless test stops before Snakemake runs): it runs
Snakemake, so it is e2e, and builds KenLM, so it is heavy (`make test-heavy`)."""

from __future__ import annotations

import pytest

from test_build_env import rootless_user  # noqa: F401  (the fixture, by name)


@pytest.mark.e2e
@pytest.mark.heavy
def test_setup_as_unprivileged_user_with_boost_from_a_prefix_then_dry_run(rootless_user):
    """The whole set-up as a cluster user would run it: no apt-get, sudo, CMake, Ninja,
    lt-paradigm or Node on PATH, Boost only under BOOST_ROOT (Debian's packages unpacked into a
    folder stand in for `module load boost`). `make setup` builds the virtual environment
    (CMake and Ninja from PyPI, KenLM's module compiled); the build_kenlm rule compiles KenLM's
    programs against the prefix's Boost once Apertium is off (with it on, every Snakemake
    start is refused naming lt-paradigm); then the study's dry run plans every stage."""
    import time

    import rootless

    prefix = rootless.boost_prefix(rootless_user.base / "boost")
    env = rootless_user.env(BOOST_ROOT=str(prefix), CMAKE_PREFIX_PATH=str(prefix),
                            LD_LIBRARY_PATH=str(prefix / "lib" / "x86_64-linux-gnu"))
    timings = {}
    start = time.monotonic()
    proc = rootless_user.run("nice make setup", env=env)
    timings["make setup"] = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert "check_build_env: C++ compiler, Boost and Python found" in proc.stdout
    assert "Installing from PyPI into .venv: cmake==3.31.10 ninja==1.13.2" in proc.stdout
    assert "Installing Debian packages" not in proc.stdout
    venv_bin = rootless_user.clone / ".venv" / "bin"
    assert (venv_bin / "cmake").exists() and (venv_bin / "ninja").exists()

    print(f"make setup as the unprivileged user: {timings['make setup']:.0f} s")

    # Apertium on (the default) without lt-paradigm: refused at start-up, naming it
    proc = rootless_user.run(".venv/bin/snakemake -n --cores 2", env=env)
    assert proc.returncode != 0
    assert ("field 'morphology.apertium_languages': the Apertium MCC source is on (eng, spa, "
            "fra, ita, por, ron, pol, rus, ukr, ind, hin) but lt-paradigm is not on PATH"
            ) in proc.stdout, proc.stdout[-3000:]
    # the one line a user without Apertium edits (docs/cluster-setup.md)
    proc = rootless_user.run(
        "sed -i 's/^  apertium_languages: .*/  apertium_languages: []/' config/config.yaml",
        env=env)
    assert proc.returncode == 0, proc.stdout

    start = time.monotonic()
    proc = rootless_user.run("nice .venv/bin/snakemake --cores 2 "
                             "resources/kenlm/0.3.0-o7/bin/lmplz", env=env)
    timings["build_kenlm"] = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout[-5000:]
    log = (rootless_user.clone / "logs" / "build_kenlm" / "0.3.0-o7.log").read_text()
    assert "Ninja, " in log and f"BOOST_ROOT={prefix})" in log, log[-2000:]
    lmplz = rootless_user.clone / "resources" / "kenlm" / "0.3.0-o7" / "bin" / "lmplz"
    linked = subprocess.run(["ldd", str(lmplz)], capture_output=True, text=True).stdout
    assert f"libboost_program_options.so.1.74.0 => {prefix}" in linked, linked

    proc = rootless_user.run("nice .venv/bin/snakemake -n --cores 2", env=env)
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert "mcc_apertium" not in proc.stdout and "report" in proc.stdout
    assert "build_kenlm" not in proc.stdout  # built above, on the login node
    print(f"rootless set-up timings (s): {timings}")
