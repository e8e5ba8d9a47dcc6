"""The package's import graph keeps its layers: shared pieces never import the stages that use them, and the modules
of one layer never import each other. The contract is import-linter's (pyproject.toml, [tool.importlinter]), run
here on the whole package, subpackages and imports inside functions included:

  estimate
  check
  plan                                                      (the workflow's resolved configuration)
  config | cluster | environments | browser | curation    (they assemble stages)
  cvrr                                                      (and every benchmark package)
  inference | judge
  models
  report                                                    (scoring: below the models, beside them in the data flow)
  comparisons
  metrics
  verify
  provenance
  prompts | sources | frames
  instances | levels | records | benchmarks
  support                                                   (imports no stage)

A module may import the layers below its own; the package root (`virtuebench`: the refusal string) is free to all.
Scoring (report, comparisons, metrics, verify, provenance) loads no model backend: pyproject's second contract says
so for imports through other modules too, and importing them in a fresh interpreter loads no virtuebench.models or
virtuebench.inference module.
Every benchmark package (one with a `benchmark.py`: virtuebench.benchmarks.discover) sits in CVRR-ES's layer without a
line of its own in pyproject.toml: the contract checked here is pyproject's with each one found added there, so a new
benchmark is one package folder, its rules file and its config (docs/extending.md)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from helpers.layers import PACKAGE, contract, forbidden, lint_imports, write_contract, write_forbidden

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
    models, inference = layers.index("virtuebench.models"), layers.index("virtuebench.inference | virtuebench.judge")
    swapped = [*layers[:inference], layers[models], layers[inference], *layers[models + 1 :]]  # models above its user
    result = lint_imports(write_contract(tmp_path / "pyproject.toml", swapped, "swapped"), tmp_path)
    assert result.returncode != 0 and "BROKEN" in result.stdout


#: Imports each scoring module (a package with all its modules) in a fresh interpreter, then names every
#: virtuebench.models or virtuebench.inference module loaded: none, where scoring loads no backend.
LOADED_BACKENDS = """
import importlib, pkgutil, sys
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    for found in pkgutil.walk_packages(getattr(module, "__path__", []), name + "."):
        importlib.import_module(found.name)
print(sorted(name for name in sys.modules if name.startswith(("virtuebench.models", "virtuebench.inference"))))
"""


def loaded_backends(src=PACKAGE.parent) -> str:
    command = [sys.executable, "-c", LOADED_BACKENDS, *forbidden()["source_modules"]]
    result = subprocess.run(command, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(src)}, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip()


def test_scoring_loads_no_model_backend():
    assert {"virtuebench.metrics", "virtuebench.verify"} <= set(forbidden()["source_modules"])
    assert loaded_backends() == "[]"


def test_the_scoring_contract_is_kept(tmp_path):
    result = lint_imports(write_forbidden(tmp_path / "pyproject.toml", forbidden()), tmp_path)
    assert result.returncode == 0 and "1 kept, 0 broken" in result.stdout, result.stdout[-3000:]


def test_a_backend_reached_through_another_module_is_found(tmp_path):
    """Both checks can fail: in a copy where provenance (which metrics imports) imports inference, the contract names
    the chain from metrics, and importing metrics loads the backends."""
    src = tmp_path / "src"
    shutil.copytree(PACKAGE, src / "virtuebench", ignore=shutil.ignore_patterns("__pycache__"))
    provenance = src / "virtuebench" / "provenance.py"
    provenance.write_text(provenance.read_text() + "\nimport virtuebench.inference  # noqa: E402\n")
    result = lint_imports(write_forbidden(tmp_path / "pyproject.toml", forbidden()), tmp_path, src=src)
    assert result.returncode != 0 and "virtuebench.metrics is not allowed to import virtuebench.inference" in result.stdout, result.stdout[
        -3000:
    ]
    loaded = loaded_backends(src)
    assert "virtuebench.models" in loaded and "virtuebench.inference" in loaded, loaded
