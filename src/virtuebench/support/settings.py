"""Typed settings from config dicts, with one error shape for unknown or missing keys, and each setting's rerun class
(how far a change to it reaches) declared on the settings dataclass itself."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import MISSING, field, fields
from typing import Any, TypeVar

T = TypeVar("T")


def settings_from_dict(
    cls: type[T], values: dict[str, Any], owner: str, error: type[Exception] = ValueError, read_elsewhere: Iterable[str] = ()
) -> T:
    """`cls(**values)`, naming `owner` and the allowed keys when a key is unknown or a required one is missing.
    `read_elsewhere`: keys another stage reads (the judging stage's input settings), allowed and left out here."""
    values = {key: value for key, value in values.items() if key not in read_elsewhere}
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise error(f"{owner}: unknown setting(s) {unknown}; allowed: {sorted(known | set(read_elsewhere))}")
    missing = [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING and f.name not in values]
    if missing:
        raise error(f"{owner}: setting(s) {missing} required")
    return cls(**values)


def did_you_mean(name: Any, choices: Iterable[str]) -> str:
    """For a misspelt name, `did you mean 'X'? ` (the same name in other case, else up to three close ones, by
    difflib), to go before the list of allowed values; "" where no choice is close."""
    if not isinstance(name, str):
        return ""
    by_lower: dict[str, str] = {}
    for choice in map(str, choices):
        by_lower.setdefault(choice.lower(), choice)
    if name.lower() in by_lower:
        close = [by_lower[name.lower()]]
    else:
        close = [by_lower[match] for match in difflib.get_close_matches(name.lower(), list(by_lower), n=3)]
    return f"did you mean {' or '.join(map(repr, close))}? " if close else ""


def merge_settings(tracked: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """A job's whole settings from its tracked half (what changes its answers) and its untracked half (what changes
    only how it runs: the `run` half of a ModelSpec or JudgeSpec), a model's `settings` and a hybrid judge's `llm` merged key by key."""
    merged = {**tracked, **{name: value for name, value in run.items() if name not in ("settings", "llm")}}
    if "settings" in run:
        merged["settings"] = {**(tracked.get("settings") or {}), **run["settings"]}
    if isinstance(run.get("llm"), dict) and isinstance(tracked.get("llm"), dict):  # a hybrid judge's LLM judge
        merged["llm"] = merge_settings(tracked["llm"], run["llm"])
    return merged


#: How far a change of a setting reaches: `answers` (a tracked param of the jobs that run the model or judge:
#: changing it reruns them), `scheduling` (how a job runs: resources, retries, concurrency; never reruns),
#: `description` (words for people; never reruns). A backend's and a judge kind's settings dataclass
#: declares each of its settings' class with `setting`; a model registry entry's own keys (hub_id, gpus, ...) have
#: theirs in config/models.schema.yaml (`x-rerun`).
RERUN_CLASSES = ("answers", "scheduling", "description")


def setting(
    default: Any = MISSING,
    *,
    rerun: str,
    schema: dict[str, Any] | None = None,
    description: str = "",
    default_factory: Any = MISSING,
) -> Any:
    """A field of a settings dataclass with its rerun class (RERUN_CLASSES), the JSON Schema its config value must
    meet (the config check reports a violation as it reports the schema's own) and a line for people.
    `default_factory` in place of `default` for a mutable default (a dict of further arguments)."""
    if rerun not in RERUN_CLASSES:
        raise ValueError(f"rerun class {rerun!r} is not one of {RERUN_CLASSES}")
    metadata = {"rerun": rerun, "schema": dict(schema or {}), "description": description}
    if default_factory is not MISSING:
        return field(default_factory=default_factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def rerun_classes(cls: type) -> dict[str, str]:
    """{setting: rerun class} of a settings dataclass, in the order its fields are declared."""
    return {f.name: f.metadata["rerun"] for f in fields(cls)}


def settings_schema(cls: type) -> dict[str, dict[str, Any]]:
    """{setting: JSON Schema} of a settings dataclass (its description and x-rerun included, as the schemas write them)."""
    schemas = {}
    for f in fields(cls):
        schema = {**f.metadata["schema"], "x-rerun": f.metadata["rerun"]}
        if f.metadata["description"]:
            schema["description"] = f.metadata["description"]
        schemas[f.name] = schema
    return schemas
