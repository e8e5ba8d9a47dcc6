"""Model backends behind one interface (virtuebench.models.base.Backend), picked by name from config.

A model's `backend` in config is a registered name, or `package.module:Class` for a backend that
lives outside this package.
"""

from __future__ import annotations

import importlib
from typing import Any

from virtuebench.models.base import Backend, Reply, Request
from virtuebench.models.reference import GuessBackend, RefuseBackend

BACKENDS: dict[str, type] = {
    "refuse": RefuseBackend,
    "guess": GuessBackend,
}

__all__ = ["BACKENDS", "Backend", "Reply", "Request", "load_backend"]


def backend_class(name: str) -> type:
    if name in BACKENDS:
        return BACKENDS[name]
    if ":" in name:
        module_name, _, class_name = name.partition(":")
        try:
            return getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError) as error:
            raise ValueError(f"backend {name!r} cannot be imported: {error}") from None
    raise ValueError(f"unknown backend {name!r}; known backends: {sorted(BACKENDS)} or 'package.module:Class'")


def load_backend(name: str, settings: dict[str, Any] | None = None) -> Backend:
    return backend_class(name)(dict(settings or {}))
