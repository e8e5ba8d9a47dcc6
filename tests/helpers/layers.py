"""The import layers' contract as the tests check it (tests/workflow/test_layers.py, and test_extending.py on a copy
with a new benchmark): pyproject.toml's, with every benchmark package placed in CVRR-ES's layer, run by import-linter."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from helpers.data import REPO

PACKAGE = REPO / "src" / "virtuebench"


def contract(package: Path = PACKAGE, pyproject: Path = REPO / "pyproject.toml") -> dict:
    """pyproject.toml's layers contract, with every benchmark package found in `package` placed in CVRR-ES's layer."""
    from virtuebench.benchmarks import discover

    (layers,) = tomllib.loads(pyproject.read_text())["tool"]["importlinter"]["contracts"]
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


def lint_imports(config: Path, cwd: Path, src: Path = REPO / "src") -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(src)}
    return subprocess.run([*command, "--config", str(config)], cwd=cwd, capture_output=True, text=True, env=env, timeout=120)
