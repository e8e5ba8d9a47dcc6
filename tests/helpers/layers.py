"""The import contracts as the tests check them (tests/workflow/test_layers.py, and test_extending.py on a copy
with a new benchmark): pyproject.toml's layers, with every benchmark package placed in CVRR-ES's layer, and its
contract that scoring loads no model backend, each run by import-linter."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

from helpers.data import REPO

PACKAGE = REPO / "src" / "virtuebench"


def contracts(pyproject: Path = REPO / "pyproject.toml") -> list[dict]:
    return tomllib.loads(pyproject.read_text())["tool"]["importlinter"]["contracts"]


def forbidden(pyproject: Path = REPO / "pyproject.toml") -> dict:
    """pyproject.toml's contract that scoring loads no model backend (its modules import none, directly or not)."""
    (found,) = [found for found in contracts(pyproject) if found["type"] == "forbidden"]
    return found


def contract(package: Path = PACKAGE, pyproject: Path = REPO / "pyproject.toml") -> dict:
    """pyproject.toml's layers contract, with every benchmark package found in `package` placed in CVRR-ES's layer."""
    from virtuebench.benchmarks import discover

    (layers,) = [found for found in contracts(pyproject) if found["type"] == "layers"]
    benchmarks = [f"virtuebench.{name}" for name in discover(package) if name != "virtuebench"]
    (home,) = [i for i, layer in enumerate(layers["layers"]) if "virtuebench.cvrr" in (n.strip() for n in layer.split("|"))]
    placed = {name.strip() for layer in layers["layers"] for name in layer.split("|")}
    extra = [name for name in benchmarks if name not in placed]
    layers["layers"][home] = " | ".join([layers["layers"][home], *extra])
    return layers


def write_contract(path: Path, layers: list[str], name: str = "stages import only downward") -> Path:
    path.write_text(
        f'[tool.importlinter]\nroot_package = "virtuebench"\n\n[[tool.importlinter.contracts]]\nname = "{name}"\ntype = "layers"\n'
        "layers = [\n" + "".join(f'    "{layer}",\n' for layer in layers) + "]\n"
    )
    return path


def write_forbidden(path: Path, found: dict) -> Path:
    """A config file holding the forbidden contract `found` (as `forbidden` gives it) alone."""
    path.write_text(
        f'[tool.importlinter]\nroot_package = "virtuebench"\n\n[[tool.importlinter.contracts]]\nname = "{found["name"]}"\n'
        f'type = "forbidden"\nsource_modules = {json.dumps(found["source_modules"])}\n'
        f"forbidden_modules = {json.dumps(found['forbidden_modules'])}\n"
    )
    return path


def lint_imports(config: Path, cwd: Path, src: Path = REPO / "src") -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(src)}
    return subprocess.run([*command, "--config", str(config)], cwd=cwd, capture_output=True, text=True, env=env, timeout=120)
