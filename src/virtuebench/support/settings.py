"""Typed settings from config dicts, with one error shape for unknown or missing keys."""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any, TypeVar

T = TypeVar("T")


def settings_from_dict(cls: type[T], values: dict[str, Any], owner: str, error: type[Exception] = ValueError) -> T:
    """`cls(**values)`, naming `owner` and the allowed keys when a key is unknown or a required one is missing."""
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise error(f"{owner}: unknown setting(s) {unknown}; allowed: {sorted(known)}")
    missing = [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING and f.name not in values]
    if missing:
        raise error(f"{owner}: setting(s) {missing} required")
    return cls(**values)
