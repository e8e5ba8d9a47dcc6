"""virtuebench.support.registry: the one shape behind every extension point (backends, judge kinds, sources, prompts,
benchmarks), and the registries themselves read through it."""

from __future__ import annotations

import ast
import subprocess
import sys
import types

import pytest
from helpers.data import REPO

from virtuebench.support.registry import Registry, UnknownName


class Base:
    pass


class Good(Base):
    name = "good"


@pytest.fixture
def module(monkeypatch):
    found = types.ModuleType("virtuebench_test_registry_entries")
    found.Good, found.NotBase, found.good, found.INSTANCE = Good, int, Good(), Good()
    monkeypatch.setitem(sys.modules, found.__name__, found)
    return found


def test_names_are_listed_without_importing_and_an_entry_is_loaded_when_asked(module):
    table = Registry(
        "widget", {"good": f"{module.__name__}:Good", "lost": "virtuebench_test_no_such_module:Thing"}, expect=Base, classes=True
    )
    assert list(table) == table.names() == ["good", "lost"] and len(table) == 2 and "lost" in table and "other" not in table
    assert table["good"] is Good and table.target("good") == f"{module.__name__}:Good"
    with pytest.raises(ValueError, match=r"^widget 'lost': virtuebench_test_no_such_module:Thing cannot be imported \(No module named"):
        table["lost"]


def test_an_unknown_name_says_the_close_ones_and_every_known_one(module):
    table = Registry("widget", {"good": f"{module.__name__}:Good", "gold": f"{module.__name__}:Good"}, expect=Base, classes=True)
    with pytest.raises(UnknownName) as error:
        table["goood"]
    assert str(error.value) == "unknown widget 'goood'; did you mean 'good' or 'gold'? known: good, gold"
    assert isinstance(error.value, ValueError) and isinstance(error.value, KeyError)
    assert table.get("goood") is None and table.get("goood", "fallback") == "fallback"  # Mapping.get sees a KeyError
    assert str(table.unknown("zzz")) == "unknown widget 'zzz'; known: good, gold"


def test_an_entry_of_the_wrong_type_or_name_is_refused_naming_its_target(module):
    classes = Registry("widget", {"int": f"{module.__name__}:NotBase", "good": f"{module.__name__}:Good"}, expect=Base, classes=True)
    with pytest.raises(ValueError, match=rf"^widget 'int': {module.__name__}:NotBase is not a subclass of {__name__}.Base$"):
        classes["int"]
    objects = Registry("widget", {"good": f"{module.__name__}:good", "other": f"{module.__name__}:INSTANCE"}, expect=Base, named=True)
    assert objects["good"] is module.good
    with pytest.raises(ValueError, match=rf"^widget 'other': {module.__name__}:INSTANCE names itself 'good', not 'other'$"):
        objects["other"]
    missing = Registry("widget", {"absent": f"{module.__name__}:Absent"}, expect=Base)
    with pytest.raises(ValueError, match=rf"^widget 'absent': module {module.__name__} has no 'Absent'$"):
        missing["absent"]
    modules = Registry("widget", {"mod": module.__name__}, expect=lambda found: hasattr(found, "Good"), expected="a module with Good")
    assert modules["mod"] is module
    with pytest.raises(TypeError, match="expected"):
        Registry("widget", {}, expect=callable)


def test_an_external_target_is_loaded_as_given_and_a_changed_entry_is_read_afresh(module, monkeypatch):
    table = Registry("widget", {}, expect=Base, classes=True, external=True, hint="; is it installed?")
    assert table[f"{module.__name__}:Good"] is Good and f"{module.__name__}:Good" not in table
    with pytest.raises(UnknownName, match=r"known: {2}or 'package.module:attribute'$"):
        table["plain"]
    with pytest.raises(ValueError, match=r"cannot be imported \(.*\); is it installed\?$"):
        table["virtuebench_test_no_such_module:Thing"]
    monkeypatch.setitem(table.targets, "w", f"{module.__name__}:Good")
    assert table["w"] is Good
    table.targets["w"] = f"{module.__name__}:NotBase"
    with pytest.raises(ValueError, match="is not a subclass"):
        table["w"]
    # A module replaced under the same name (a test's stand-in made afresh by each test) is the one served, not the
    # first one looked up: test_hub's dummy source failed in one shuffle order when the registry kept its own copy.
    again = types.ModuleType(module.__name__)
    again.Good = type("Good", (Base,), {"name": "good"})
    monkeypatch.setitem(sys.modules, module.__name__, again)
    assert table[f"{module.__name__}:Good"] is again.Good


def test_every_registry_loads_every_entry_it_lists():
    """Each extension point's registry, through the one helper: every entry imports (backends of their own environment
    aside) and is what its registry holds. The lists come from the registries, so a new entry is checked here too."""
    from virtuebench import sources
    from virtuebench.benchmarks import REGISTRY as BENCHMARKS
    from virtuebench.judge.kinds import REGISTRY as JUDGE_KINDS
    from virtuebench.models import BACKENDS
    from virtuebench.prompts import PROMPTS

    for registry in (BENCHMARKS, JUDGE_KINDS, PROMPTS, sources.SOURCES):
        assert isinstance(registry, Registry)
        for name in registry:
            assert registry[name] is not None, (registry.what, name)
    for name in BACKENDS:
        try:
            BACKENDS[name]
        except ValueError as error:  # a backend whose route's packages this environment lacks
            assert "cannot be imported" in str(error), error
    assert set(sources.REAL_SOURCES) <= set(sources.SOURCES)
    assert all(hasattr(sources.real_source(name), "RELEASE") for name in sources.REAL_SOURCES)
    # ...and the other way: a source with a release left out of REAL_SOURCES would be asked for an adapter it lacks.
    others = [name for name in sources.SOURCES if name not in sources.REAL_SOURCES]
    assert others and all(callable(getattr(sources.SOURCES[name], "adapter", None)) for name in others), others


def test_listing_the_registries_imports_none_of_their_entries():
    """The config check and the Snakefile read the names; only a job or a check that uses one entry imports it."""
    code = (
        "import sys\n"
        "from virtuebench.models import BACKENDS\n"
        "from virtuebench.judge.kinds import REGISTRY\n"
        "from virtuebench.sources import SOURCES, REAL_SOURCES\n"
        "from virtuebench.prompts import PROMPTS\n"
        "from virtuebench.benchmarks import REGISTRY as BENCHMARKS\n"
        "names = [*BACKENDS, *REGISTRY, *SOURCES, *REAL_SOURCES, *PROMPTS, *BENCHMARKS]\n"
        "targets = [r.target(n) for r in (BACKENDS, REGISTRY, SOURCES, PROMPTS, BENCHMARKS) for n in r]\n"
        "loaded = sorted({t.partition(':')[0] for t in targets} & set(sys.modules) - {'virtuebench.benchmarks'})\n"
        "print(len(names), loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(" ", 1)
    assert int(out[0]) > 0 and out[1].strip() == "[]"


def test_a_models_spec_imports_the_backend_registry_not_the_package_that_builds_backends():
    """The latent cycle of issue 51: models/spec.py imported virtuebench.models (whose load_backend takes a ModelSpec)
    inside a function. It reads the registry from models/backends.py at its top; no module under models/ imports the
    package itself."""
    for path in sorted((REPO / "src" / "virtuebench" / "models").glob("*.py")):
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "virtuebench.models":
                pytest.fail(f"{path.name}:{node.lineno} imports virtuebench.models (the package) instead of its module")
            if isinstance(node, ast.Import) and any(alias.name == "virtuebench.models" for alias in node.names):
                pytest.fail(f"{path.name}:{node.lineno} imports virtuebench.models")
