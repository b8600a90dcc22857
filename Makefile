# minichain: every entry point. `make` alone lists the targets.
#
# Two environments, one per audience that runs something (README, "Set-up"):
# - the learner's, .venv-lab: minichain with the [learner] extra only
#   (JupyterLab, a kernel, graphviz-pure), which `make lab` opens, so a
#   learner's JupyterLab has none of the teacher's or maintainer's tools;
# - the maintainer's, with the [dev] extra (every audience's tools): with a
#   conda environment active (CONDA_PREFIX set, e.g. after `conda env create
#   -f environment.yml && conda activate minichain`) its python, otherwise
#   `.venv`. `make install` (a prerequisite of test, notebooks, book, ...)
#   adds what is missing.
# Both pin every package to the versions in constraints.txt. PYTHON picks the
# interpreter a new venv is made with (`make install PYTHON=python3.12`).

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
CONSTRAINTS := constraints.txt
ifdef CONDA_PREFIX
ENV := $(CONDA_PREFIX)
else
ENV := $(CURDIR)/.venv
endif
BIN := $(ENV)/bin
PY := $(BIN)/python
LAB_ENV := $(CURDIR)/.venv-lab
LAB_BIN := $(LAB_ENV)/bin
LAB_PY := $(LAB_BIN)/python
# Written by a successful install; remade whenever what it read changes.
STAMP := $(ENV)/.minichain-installed
LAB_STAMP := $(LAB_ENV)/.minichain-installed
INSTALL_INPUTS := pyproject.toml $(CONSTRAINTS)

# One thread for NumPy's BLAS, as in the benchmarks and CI; `dot` on PATH.
THREADS := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
RUN := PATH="$(BIN):$$PATH" $(THREADS) JUPYTER_PREFER_ENV_PATH=1
# Not MPLBACKEND=Agg for notebooks: it would replace the inline backend and
# drop every figure from the outputs, so an MPLBACKEND set outside is unset.
NB_RUN := env -u MPLBACKEND $(RUN) PYTHONWARNINGS=ignore::DeprecationWarning
TEST_RUN := $(RUN) MPLBACKEND=Agg
PIP_ENV := PIP_DISABLE_PIP_VERSION_CHECK=1
PIP := $(PIP_ENV) $(PY) -m pip
LAB_PIP := $(PIP_ENV) $(LAB_PY) -m pip
# The learner's lab: its own bin/ first on PATH, one BLAS thread.
LAB_RUN := PATH="$(LAB_BIN):$$PATH" $(THREADS) JUPYTER_PREFER_ENV_PATH=1 \
	PYTHONWARNINGS=ignore::DeprecationWarning

NBVAL_FLAGS := --nbval --nbval-current-env \
	--nbval-sanitize-with notebooks/nbval_sanitize.cfg \
	--nbval-cell-timeout=300 -p no:cacheprovider
NBCONVERT_FLAGS := --to notebook --execute --inplace \
	--ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.timeout=600
# jupyter refuses to start as root without this flag (containers, CI).
LAB_FLAGS := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: help install install-lab trust-notebooks lab test test-unit test-reference test-notebooks test-gpu notebooks book \
	bench bench-peers lint clean clean-env test-portable test-portable-unit

help: ## list the targets
	@echo "minichain: make <target>   (environment: $(ENV))"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*## "} {printf "  %-19s %s\n", $$1, $$2}'

ifndef CONDA_PREFIX
$(PY):
	$(PYTHON) -m venv $(ENV)
endif
$(LAB_PY):
	$(PYTHON) -m venv $(LAB_ENV)

# Graphviz: a real `dot` wins; else graphviz-pure's program, installed in the
# environment whose bin/ is $(1), is linked there as dot.
define link_dot
	@export PATH="$(1):$$PATH"; \
	if command -v dot >/dev/null 2>&1; then exit 0; fi; \
	pure="$$(command -v graphviz-pure || true)"; \
	if [ -n "$$pure" ] && echo 'digraph{a->b}' | "$$pure" -Tsvg >/dev/null 2>&1; then \
		ln -sf "$$pure" "$(1)/dot"; \
		echo "Graphviz: no dot found, so $(1)/dot now runs graphviz-pure."; \
	else \
		echo "Graphviz: no working dot; graphs will not render until you install Graphviz (apt-get install graphviz, brew install graphviz or conda install -c conda-forge graphviz)."; \
	fi
endef

$(STAMP): $(INSTALL_INPUTS) build_your_own/pyproject.toml | $(PY)
	$(PIP) install -c $(CONSTRAINTS) -e '.[dev]'
	$(PIP) install -c $(CONSTRAINTS) -e build_your_own
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3"
	@touch $@

$(LAB_STAMP): $(INSTALL_INPUTS) | $(LAB_PY)
	$(LAB_PIP) install -c $(CONSTRAINTS) -e '.[learner]'
	$(LAB_PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3"
	@touch $@

# JupyterLab reads its defaults from <prefix>/share/jupyter/lab/settings/: the
# course's turn off the news and update pop-ups (they would fetch from the web).
LAB_SETTINGS := share/jupyter/lab/settings/overrides.json
$(ENV)/$(LAB_SETTINGS): notebooks/lab/overrides.json | $(STAMP)
	mkdir -p $(dir $@) && cp $< $@
$(LAB_ENV)/$(LAB_SETTINGS): notebooks/lab/overrides.json | $(LAB_STAMP)
	mkdir -p $(dir $@) && cp $< $@

install: $(STAMP) $(ENV)/$(LAB_SETTINGS) ## the maintainer's environment: minichain with every audience's tools ([dev] extra, pinned by constraints.txt), mychain (build_your_own/), a python3 kernel, JupyterLab's settings and Graphviz's dot
	$(call link_dot,$(BIN))

install-lab: $(LAB_STAMP) $(LAB_ENV)/$(LAB_SETTINGS) ## the learner's environment, .venv-lab: minichain, JupyterLab and a kernel only ([learner] extra, pinned), JupyterLab's settings and Graphviz's dot
	$(call link_dot,$(LAB_BIN))

# A notebook's HTML output runs its scripts on open only in a notebook
# JupyterLab trusts: the backward players of chapters 05 and 10 step without
# them (next/prev links), and with them gain a play button and a slider.
# `jupyter trust`
# records each notebook's signature; the notary's settings (one file for the
# server, one for `jupyter trust`, in $(LAB_ENV)/etc/jupyter/) keep its
# database and secret in the lab environment, so a fresh home folder sees
# them too. It runs before every `make lab`: a pulled or rebuilt notebook
# needs a new signature.
NOTARY := $(LAB_ENV)/share/jupyter/notary
NOTARY_CONFIGS := $(foreach app,server notebook,\
	$(LAB_ENV)/etc/jupyter/jupyter_$(app)_config.json)
$(NOTARY_CONFIGS): | $(LAB_STAMP)
	mkdir -p $(NOTARY)
	echo '{"NotebookNotary": {"db_file": "$(NOTARY)/nbsignatures.db", "secret_file": "$(NOTARY)/notebook_secret"}}' > $@

trust-notebooks: install-lab $(NOTARY_CONFIGS) ## sign the course's notebooks as trusted in the learner's environment (the players' play button and slider)
	$(LAB_RUN) $(LAB_PY) -m jupyter trust notebooks/*.ipynb

lab: install-lab trust-notebooks ## open the course in JupyterLab, from the learner's environment (.venv-lab: no teacher's or maintainer's tools)
	$(LAB_RUN) $(LAB_PY) -m jupyter lab $(LAB_FLAGS) $(LAB_ARGS) notebooks/

test: test-unit test-reference test-notebooks ## unit tests, the same on the reference path, then every notebook under nbval

test-unit: install install-lab ## the pytest suite in tests/ (without GPU tests)
	$(TEST_RUN) $(PY) -m pytest -q -p no:cacheprovider tests -m "not gpu"

test-notebooks: install ## run every notebook and compare its outputs (nbval)
	@if ! ls notebooks/*.ipynb >/dev/null 2>&1; then \
		echo "test-notebooks: no notebooks in notebooks/ yet; nothing to check."; \
		exit 0; \
	fi; \
	echo "$(PY) -m pytest -q $(NBVAL_FLAGS) notebooks/"; \
	$(NB_RUN) $(PY) -m pytest -q $(NBVAL_FLAGS) notebooks/

# The engine's two readings (docs/engine-paths.md): the unit tests again, and
# every chapter but 13 (which switches between the two paths itself), with
# MINICHAIN_REFERENCE_MODE=1. Left
# out: tests that run no engine of ours (the grader's, the judge's, files,
# make's own commands, the browser); tests marked fast_path skip themselves.
REFERENCE_SKIP := $(addprefix --ignore=tests/,browser grading portable conformance \
	test_makefile.py test_notebook_structure.py test_notebook_sources.py \
	test_environment_files.py test_portable_matrix.py test_notebook_figures.py)
REFERENCE_CHAPTERS ?= $(filter-out notebooks/13_%,$(wildcard notebooks/[0-9][0-9]_*.ipynb))
REFERENCE_RUN := MINICHAIN_REFERENCE_MODE=1

test-reference: install ## the unit tests and the chapters (13 aside), on the reference path (docs/engine-paths.md)
	$(REFERENCE_RUN) $(TEST_RUN) $(PY) -m pytest -q -p no:cacheprovider tests -m "not gpu" $(REFERENCE_SKIP)
	$(REFERENCE_RUN) $(NB_RUN) $(PY) -m pytest -q $(NBVAL_FLAGS) $(REFERENCE_CHAPTERS)

# The same tests under other machines: NumPy's dispatch narrowed, OpenBLAS's
# kernel forced, NumPy's floor and newest release, torch, Python 3.12 and 3.13
# on the pinned versions (docs/contributing.md).
# Its own environments live in .venv-portable/. PORTABLE_ARGS="--only NAME".
PORTABLE := $(PY) tests/portable/matrix.py $(PORTABLE_ARGS) --

test-portable: install ## every notebook under nbval on emulated machines, NumPy floor and newest, with torch, and on Python 3.12 and 3.13
	$(NB_RUN) $(PORTABLE) -q $(NBVAL_FLAGS) notebooks/

# Left out: tests that compare no computed floats and take most of the time
# (leak and depth tests, the browser, notebook files, make's own commands).
PORTABLE_UNIT_SKIP := $(addprefix --ignore=tests/,browser robustness/test_leaks.py \
	robustness/test_depth.py test_makefile.py test_notebook_structure.py \
	test_notebook_sources.py)

test-portable-unit: install ## the unit tests on the same emulated machines, NumPy versions and Pythons
	$(TEST_RUN) $(PORTABLE) -q -p no:cacheprovider tests -m "not gpu" $(PORTABLE_UNIT_SKIP)

test-gpu: install ## the GPU tests (pip install -e '.[gpu]' first); skips without a GPU
	@status=0; \
	$(TEST_RUN) $(PY) -m pytest -q -rs -p no:cacheprovider tests -m gpu || status=$$?; \
	if [ $$status -eq 5 ]; then \
		echo "test-gpu: no GPU tests were collected; nothing to run."; exit 0; \
	fi; \
	exit $$status

# The book: Sphinx + myst-nb + sphinx-book-theme, configured in notebooks/book/
# (docs/book.md). Sphinx reads the chapters gathered in $(BOOK)-sources and
# keeps its cache in $(BOOK)-doctrees, so a second build redoes only what
# changed; a warning (a broken link, say) fails the build.
BOOK := _build/book
book: install ## the course as a static site in _build/book/ (open _build/book/index.html; offline)
	@mkdir -p $(BOOK)-sources
	$(RUN) $(PY) -m sphinx -b html -q -W --keep-going -c notebooks/book \
		-d $(BOOK)-doctrees $(BOOK)-sources $(BOOK)
	@echo "book: open $(abspath $(BOOK))/index.html"

notebooks: install ## build chapters from notebooks/src, then execute each top to bottom in a fresh kernel (CHAPTERS="03 05" for some)
	@# After execution, each cell's consecutive prints are joined into one output
	@# (a cell's print can arrive in pieces), as nbval and the book read them.
	@$(PY) notebooks/build.py $(CHAPTERS)
	@shopt -s nullglob; chapters=(notebooks/[0-9][0-9]_*.ipynb); \
	if [ $${#chapters[@]} -eq 0 ]; then \
		echo "notebooks: no chapters (notebooks/NN_topic.ipynb) yet."; exit 0; \
	fi; \
	for nb in "$${chapters[@]}"; do \
		num=$$(basename "$$nb" | cut -c1-2); \
		if [ -n "$(CHAPTERS)" ] && ! echo " $(CHAPTERS) " | grep -q " $$num "; then continue; fi; \
		echo "executing $$nb"; \
		$(NB_RUN) $(PY) -m jupyter nbconvert $(NBCONVERT_FLAGS) "$$nb" || exit 1; \
		$(PY) -m jupyter nbconvert --coalesce-streams --inplace --log-level=WARN "$$nb" || exit 1; \
	done

.PHONY: conformance
conformance: install ## judge your engine in build_your_own/mychain task by task (docs/build-your-own-engine.md)
	$(RUN) $(PY) -m minichain.conformance mychain --path build_your_own $(CONFORMANCE_ARGS)

.PHONY: release grade
release: install ## the student edition in _build/release/ (no key, no hidden case) and an nbgrader course in _build/nbgrader/ (CHAPTERS="03 05" for some)
	$(NB_RUN) $(PY) -m grading release $(CHAPTERS)

grade: install ## grade a class: SUBMISSIONS=folder (one folder per learner) -> _build/grades/gradebook.csv and feedback/ (GRADE_ARGS for more)
	@if [ -z "$(SUBMISSIONS)" ]; then \
		echo "grade: say which folder, e.g. make grade SUBMISSIONS=submissions/ (one folder per learner)"; exit 2; \
	fi
	$(RUN) $(PY) -m grading grade "$(SUBMISSIONS)" $(GRADE_ARGS)

.PHONY: solutions
solutions: install ## the teacher's key: chapters with every exercise answered and run, in _build/solutions/ (CHAPTERS="03 05" for some)
	$(NB_RUN) $(PY) -m grading.solutions $(CHAPTERS)

bench: install ## the benchmark suite (benchmarks/run.py)
	@if [ -f benchmarks/run.py ]; then $(RUN) $(PY) benchmarks/run.py; \
	else echo "bench: benchmarks/run.py does not exist yet."; fi

bench-peers: install ## compare with Chainer, DeZero, PyTorch (builds its own env)
	@if [ -f benchmarks/peers.py ]; then $(RUN) $(PY) benchmarks/peers.py; \
	else echo "bench-peers: benchmarks/peers.py does not exist yet."; fi

lint: install ## ruff on the package, tests, benchmarks, build_your_own, grading and the course's tools
	$(PY) -m ruff check $(wildcard minichain tests benchmarks build_your_own grading \
		notebooks/*.py notebooks/exercises notebooks/book)

clean: ## remove caches and build artefacts, _build/ included (keeps the environment)
	find . -path ./.venv -prune -o -path ./.venv-lab -prune -o -path ./.venv-peers -prune -o -path ./.venv-portable -prune \
		-o -path ./.git -prune -o \
		\( -name __pycache__ -o -name .ipynb_checkpoints -o -name '*.egg-info' \) \
		-type d -print -exec rm -rf {} +
	rm -rf .pytest_cache .hypothesis .ruff_cache build dist _build

clean-env: ## remove .venv, .venv-lab, .venv-peers and .venv-portable (a conda env is only marked for reinstall)
	rm -rf .venv .venv-lab .venv-peers .venv-portable
	rm -f $(STAMP)
