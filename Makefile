# The two set-up commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
# Rules call `python -m virtuebench...`: the virtual environment's python must come first.
export PATH := $(BIN):$(PATH)

.PHONY: demo test install lint format clean slurm-profile

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	@touch $@

install: $(STAMP)

demo: $(STAMP)
	snakemake --profile profiles/default
	@echo "Done: results/table1.tex results/table2.tex results/fig4.png results/fig6.png results/scores.csv; open results/browser/index.html"

# Tests run in up to 4 worker processes (pytest-xdist), one test file per worker at a time, so that a
# file's module fixtures (one shared demo run) are built once.
test: $(STAMP)
	ruff check .
	ruff format --check .
	python -m pytest -n auto --maxprocesses 4 --dist loadfile

lint: $(STAMP)
	snakemake --lint
	ruff check .

# Rewrites the code in the project's style (ruff settings in pyproject.toml); `make test` checks it.
format: $(STAMP)
	ruff check --fix .
	ruff format .

# Installs profiles/slurm as ~/.config/snakemake/slurm, so that `snakemake --profile slurm` finds it.
slurm-profile: $(STAMP)
	python -m virtuebench.cluster install-profile

clean:
	rm -rf results logs .snakemake
