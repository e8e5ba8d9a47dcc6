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


def merge_settings(tracked: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """A job's whole settings from its tracked half (what changes its answers) and its untracked half (what changes
    only how it runs: virtuebench.config.run_settings), a model's `settings` and a hybrid judge's `llm` merged key by key."""
    merged = {**tracked, **{name: value for name, value in run.items() if name not in ("settings", "llm")}}
    if "settings" in run:
        merged["settings"] = {**(tracked.get("settings") or {}), **run["settings"]}
    if isinstance(run.get("llm"), dict) and isinstance(tracked.get("llm"), dict):  # a hybrid judge's LLM judge
        merged["llm"] = merge_settings(tracked["llm"], run["llm"])
    return merged
