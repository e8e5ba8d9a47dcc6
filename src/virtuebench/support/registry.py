"""One shape for every extension point: a table of name -> "module:attribute" (or "module"), each entry imported when
first asked for and checked to be what the table holds.

Models, judge kinds, sources, prompts and benchmarks each keep one Registry (docs/extending.md): listing its names
imports nothing, so the config check, the schema and the Snakefile read the names for free; asking for one entry
imports its module alone. An unknown name is a ValueError naming it, the close ones and every known one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from virtuebench.support.settings import did_you_mean

T = TypeVar("T")


class UnknownName(ValueError, KeyError):
    """A name no entry has: a ValueError for the checks that report it, a KeyError for Mapping.get and `in`."""

    def __str__(self) -> str:  # KeyError's would quote the message
        return str(self.args[0]) if self.args else ""


class Registry(Mapping[str, T], Generic[T]):
    """name -> the object at its target, loaded lazily.

    `expect`: a type the object must be an instance of (with `classes=True`, a subclass of), or a predicate; `expected`
    says it in words for the error. `named`: the object's `.name` must repeat its key (a judge kind, a benchmark).
    `external`: a name that is not registered but reads "package.module:attribute" is loaded as given (a backend that
    lives outside this package). `hint` ends the error of an entry whose module cannot be imported.
    `targets` stays a plain dict: `targets[name] = "module:attribute"` adds an entry (what a test does with
    monkeypatch.setitem). Nothing is kept here beyond Python's own module table (sys.modules): each lookup reads the
    target afresh, so a changed entry, or a module replaced in sys.modules, is what the next lookup gets.
    """

    def __init__(
        self,
        what: str,
        targets: dict[str, str],
        *,
        expect: type | Callable[[Any], bool],
        expected: str | None = None,
        classes: bool = False,
        named: bool = False,
        external: bool = False,
        hint: str = "",
    ) -> None:
        self.what, self.targets = what, targets
        self._expect, self._classes, self._named, self._external, self._hint = expect, classes, named, external, hint
        if expected is None:
            if not isinstance(expect, type):
                raise TypeError(f"{what} registry: say in `expected` what its predicate accepts")
            expected = f"{'a subclass of' if classes else 'a'} {expect.__module__}.{expect.__qualname__}"
        self.expected = expected

    def __iter__(self) -> Iterator[str]:
        return iter(self.targets)

    def __len__(self) -> int:
        return len(self.targets)

    def __contains__(self, name: object) -> bool:
        return name in self.targets

    def __getitem__(self, name: str) -> T:
        return self.load(name)

    def __repr__(self) -> str:
        return f"Registry({self.what}: {', '.join(self.targets)})"

    def names(self) -> list[str]:
        return list(self.targets)

    def unknown(self, name: Any) -> UnknownName:
        """The error for a name no entry has: the close ones (did you mean), then every known one."""
        extra = " or 'package.module:attribute'" if self._external else ""
        return UnknownName(f"unknown {self.what} {name!r}; {did_you_mean(name, self.targets)}known: {', '.join(self.targets)}{extra}")

    def target(self, name: str) -> str:
        """The "module:attribute" the name stands for (ValueError: an unknown name)."""
        if name in self.targets:
            return self.targets[name]
        if self._external and isinstance(name, str) and ":" in name:
            return name
        raise self.unknown(name)

    def load(self, name: str) -> T:
        """The object registered as `name`, imported the first time and checked to be what this registry holds."""
        target = self.target(name)
        found = _import(target, f"{self.what} {name!r}", self._hint)
        if not self._accepts(found):
            raise ValueError(f"{self.what} {name!r}: {target} is not {self.expected}")
        if self._named and getattr(found, "name", None) != name:
            raise ValueError(f"{self.what} {name!r}: {target} names itself {getattr(found, 'name', None)!r}, not {name!r}")
        return found

    def _accepts(self, found: Any) -> bool:
        if not isinstance(self._expect, type):
            return self._expect(found)
        if self._classes:
            return isinstance(found, type) and issubclass(found, self._expect)
        return isinstance(found, self._expect)


def _import(target: str, owner: str, hint: str) -> Any:
    """The module, or its attribute, that "module[:attribute]" names; one ValueError naming `owner` where neither is."""
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"{owner}: {target} cannot be imported ({error}){hint}") from None
    if not attribute:
        return module
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ValueError(f"{owner}: module {module_name} has no {attribute!r}") from None
