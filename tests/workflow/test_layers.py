"""The package's import graph keeps its layers: shared pieces never import the stages that use them, and the modules
of one layer never import each other. The contract is import-linter's (pyproject.toml, [tool.importlinter]), run
here on the whole package, subpackages and imports inside functions included:

  plan                                                      (the top: the workflow's resolved configuration)
  config | cluster | environments | browser | curation    (they assemble stages)
  report
  comparisons | cvrr
  metrics
  inference | judge
  models
  prompts | sources | frames
  instances | levels | records | benchmarks
  support                                                   (imports no stage)

A module may import the layers below its own; the package root (`virtuebench`: the refusal string) is free to all.
Every benchmark package (one with a `benchmark.py`: virtuebench.benchmarks.discover) sits in CVRR-ES's layer without a
line of its own in pyproject.toml: the contract checked here is pyproject's with each one found added there, so a new
benchmark is one package folder, its rules file and its config (docs/extending.md)."""

from __future__ import annotations

import pytest
from helpers.layers import PACKAGE, contract, lint_imports, write_contract

importlinter = pytest.importorskip("importlinter", reason="import-linter is not installed (the test extra)")


def test_every_module_has_a_layer():
    placed = {name.strip().removeprefix("virtuebench.") for layer in contract()["layers"] for name in layer.split("|")}
    tops = {path.stem for path in PACKAGE.glob("*.py") if path.stem != "__init__"} | {
        path.parent.name for path in PACKAGE.glob("*/__init__.py")
    }
    assert tops - placed == set(), "add the new module to [tool.importlinter] in pyproject.toml (and to this docstring)"
    assert placed - tops == set(), "a module in the contract no longer exists"


def test_the_layers_contract_is_kept(tmp_path):
    result = lint_imports(write_contract(tmp_path / "pyproject.toml", contract()["layers"]), tmp_path)
    assert result.returncode == 0 and "1 kept, 0 broken" in result.stdout, result.stdout[-3000:]


def test_a_broken_contract_is_found(tmp_path):
    """The check can fail: the same contract with two layers swapped is broken by the real imports."""
    layers = contract()["layers"]
    models = layers.index("virtuebench.models")
    swapped = [*layers[:models], layers[models + 1], layers[models], *layers[models + 2 :]]  # models below what it imports
    result = lint_imports(write_contract(tmp_path / "pyproject.toml", swapped, "swapped"), tmp_path)
    assert result.returncode != 0 and "BROKEN" in result.stdout
