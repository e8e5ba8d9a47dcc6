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

A module may import the layers below its own; the package root (`virtuebench`: the refusal string) is free to all."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "src" / "virtuebench"
importlinter = pytest.importorskip("importlinter", reason="import-linter is not installed (the test extra)")


def contract() -> dict:
    (layers,) = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    return layers


def test_every_module_has_a_layer():
    placed = {name.strip().removeprefix("virtuebench.") for layer in contract()["layers"] for name in layer.split("|")}
    tops = {path.stem for path in PACKAGE.glob("*.py") if path.stem != "__init__"} | {
        path.parent.name for path in PACKAGE.glob("*/__init__.py")
    }
    assert tops - placed == set(), "add the new module to [tool.importlinter] in pyproject.toml (and to this docstring)"
    assert placed - tops == set(), "a module in the contract no longer exists"


def lint_imports(config: Path, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([*command, "--config", str(config)], cwd=cwd, capture_output=True, text=True, env=env, timeout=120)


def test_the_layers_contract_is_kept():
    result = lint_imports(REPO / "pyproject.toml", REPO)
    assert result.returncode == 0 and "1 kept, 0 broken" in result.stdout, result.stdout[-3000:]


def test_a_broken_contract_is_found(tmp_path):
    """The check can fail: the same contract with two layers swapped is broken by the real imports."""
    layers = contract()["layers"]
    models = layers.index("virtuebench.models")
    swapped = [*layers[:models], layers[models + 1], layers[models], *layers[models + 2 :]]  # models below what it imports
    config = tmp_path / "pyproject.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "virtuebench"\n\n[[tool.importlinter.contracts]]\nname = "swapped"\ntype = "layers"\n'
        "layers = [\n" + "".join(f'    "{layer}",\n' for layer in swapped) + "]\n"
    )
    result = lint_imports(config, tmp_path)
    assert result.returncode != 0 and "BROKEN" in result.stdout
