"""The schemas (config/schema.yaml, config/models.schema.yaml): each `x-registry` filled in from the code's registries,
each violation turned into one line naming the key and the allowed values, and the defaults filled in."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from virtuebench.config.review import not_allowed


def _where(error: ValidationError, root: str) -> str:
    path = root
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _describe(error: ValidationError, root: str) -> str:
    where = _where(error, root)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(allowed))
        return f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; allowed keys: {', '.join(allowed)}"
    if error.validator == "enum":
        return not_allowed(where, error.instance, map(str, error.validator_value))
    if error.validator == "anyOf" and any("enum" in option for option in error.validator_value):
        allowed = [value for option in error.validator_value for value in option.get("enum", [])]
        return not_allowed(where, error.instance, allowed) + " (or package.module:Class)"
    if error.validator == "type":
        return f"{where}: must be of type {error.validator_value}, got {error.instance!r}"
    if error.validator == "required":
        return f"{where}: {error.message}"
    return f"{where}: {error.message}"


#: The source name that is no adapter: the curated VirtueBench, built by rules/curation.smk from config.curation.sources.
CURATED_SOURCE = "virtuebench"


def _registry_names() -> dict[str, Any]:
    """The extension points whose names the schemas take from the code (`x-registry`), each read when asked for."""
    from virtuebench.benchmarks import REGISTRY as BENCHMARKS
    from virtuebench.benchmarks import settings_blocks
    from virtuebench.judge.kinds import configurable_kinds, settings_properties
    from virtuebench.models import BACKENDS, backend_class
    from virtuebench.prompts import PROMPTS
    from virtuebench.sources import SOURCES

    return {
        "backends": lambda: {"enum": list(BACKENDS)},
        "benchmarks": lambda: {"enum": list(BENCHMARKS)},
        # The top level: each benchmark's block of settings (config.cvrr ...), and no key beside the schema's and theirs.
        "benchmark-settings": lambda: {"properties": settings_blocks(), "additionalProperties": False},
        "sources": lambda: {"enum": [*SOURCES, CURATED_SOURCE]},
        "prompts": lambda: {"enum": list(PROMPTS)},
        "judge-kinds": lambda: {"enum": configurable_kinds()},
        # A judge's settings: every setting some kind reads (the kinds' own checks and the warnings say which it reads).
        "judge-settings": lambda: {"properties": settings_properties(), "additionalProperties": False},
        # A registry entry's settings: those its backend's settings dataclass declares, with their schemas.
        "backend-settings": lambda: {"allOf": [_backend_settings_schema(name, backend_class(name)) for name in BACKENDS]},
    }


def _backend_settings_schema(name: str, cls: type) -> dict[str, Any]:
    """`settings` of an entry with `backend: name`, as its settings dataclass declares them (none declared: any)."""
    from virtuebench.support.settings import settings_schema

    settings_type = getattr(cls, "settings_type", None)
    settings = {"properties": settings_schema(settings_type), "additionalProperties": False} if settings_type else {}
    return {"if": {"required": ["backend"], "properties": {"backend": {"const": name}}}, "then": {"properties": {"settings": settings}}}


def _fill_registries(node: Any, names: dict[str, Any]) -> Any:
    """The schema with each `x-registry: NAME` filled in from the code's registry (an enum of its names, or a judge's
    settings), so a new backend, source, prompt or judge kind is written once, in code."""
    if isinstance(node, list):
        return [_fill_registries(item, names) for item in node]
    if not isinstance(node, dict):
        return node
    filled = {key: _fill_registries(value, names) for key, value in node.items()}
    if "x-registry" in node:
        generated = names[node["x-registry"]]()
        properties = {**generated.pop("properties", {}), **filled.get("properties", {})}  # the schema's own win
        filled.update(generated)
        if properties:
            filled["properties"] = properties
    return filled


def load_schema(schema_path: str | Path) -> dict[str, Any]:
    """A schema file (config/schema.yaml, config/models.schema.yaml) with its registries' names filled in."""
    return _fill_registries(yaml.safe_load(Path(schema_path).read_text()), _registry_names())


def schema_errors(data: Any, schema_path: str | Path, root: str) -> list[str]:
    return validator_errors(Draft202012Validator(load_schema(schema_path)), data, root)


def validator_errors(validator: Draft202012Validator, data: Any, root: str) -> list[str]:
    return [_describe(error, root) for error in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))]


# --- Defaults ---------------------------------------------------------------------------------------------------


def _filling_validator():
    """Draft 2020-12 that writes each property's schema default into the instance before checking it (as
    Snakemake's `validate` does), so nested defaults under a defaulted `{}` are filled too."""
    from jsonschema import validators

    properties = Draft202012Validator.VALIDATORS["properties"]

    def fill(validator, schema_properties, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in schema_properties.items():
                if "default" in subschema and name not in instance:
                    instance[name] = copy.deepcopy(subschema["default"])
        yield from properties(validator, schema_properties, instance, schema)

    return validators.extend(Draft202012Validator, {"properties": fill})


def with_defaults(config: dict[str, Any], schema_path: str | Path) -> dict[str, Any]:
    """A copy of `config` with every schema default filled in: the defaults live in the schema alone (a benchmark's
    block's, in its settings dataclass: load_schema fills them in)."""
    filled = copy.deepcopy(config)
    # Violations are reported by schema_errors; this pass only fills (iterating the errors is what runs the validator).
    list(_filling_validator()(load_schema(schema_path)).iter_errors(filled))
    return filled
