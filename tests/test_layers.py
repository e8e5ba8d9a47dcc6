"""The package's import graph keeps its layers: shared pieces never import the stages that use them.

Layers, lowest first (a module may import only its own layer or lower ones):
  0  virtuebench (the package root: levels' constants and the refusal string), support/
  1  records, levels, instances
  2  prompts, sources, frames
  3  models
  4  inference, judge
  5  metrics, comparisons, cvrr
  6  report, curation, config, cluster, browser, environments  (the top: they assemble stages)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "virtuebench"
LAYER = {
    "__init__": 0,
    "support": 0,
    "records": 1,
    "levels": 1,
    "instances": 1,
    "prompts": 2,
    "sources": 2,
    "frames": 2,
    "models": 3,
    "inference": 4,
    "judge": 4,
    "metrics": 5,
    "cvrr": 5,
    "comparisons": 5,
    "report": 6,
    "curation": 6,
    "config": 6,
    "cluster": 6,
    "browser": 6,
    "environments": 6,
}


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> list[tuple[str, int]]:
    """(imported virtuebench top-level module, line) for every import in the file, lazy ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.split(".")[0] == "virtuebench":
            if node.module == "virtuebench":  # `from virtuebench import x`: x may be a subpackage
                found += [(alias.name if alias.name in LAYER else "__init__", node.lineno) for alias in node.names]
            else:
                found.append((_top(node.module), node.lineno))
        elif isinstance(node, ast.Import):
            found += [(_top(alias.name), node.lineno) for alias in node.names if alias.name.split(".")[0] == "virtuebench"]
    return found


def test_every_module_has_a_layer():
    tops = {path.relative_to(PACKAGE).parts[0].removesuffix(".py") for path in PACKAGE.rglob("*.py")}
    assert tops - set(LAYER) == set(), "add the new module to LAYER in tests/test_layers.py (and to its docstring)"


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_module_imports_a_higher_layer(path):
    own = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
    upward = [
        f"line {line}: {own} (layer {LAYER[own]}) imports {target} (layer {LAYER[target]})"
        for target, line in _imports(path)
        if target != own and LAYER[target] > LAYER[own]
    ]
    assert upward == [], f"{path.relative_to(PACKAGE)}: {upward}"
