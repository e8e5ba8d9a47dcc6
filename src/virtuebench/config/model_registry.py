"""The model registry as the config names it (`model_registry`: one file, or several read in order), each entry checked
against config/models.schema.yaml with its named choices, and the warnings a user should read before its numbers."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator

from virtuebench.config.review import ConfigError
from virtuebench.config.schema import load_schema, validator_errors
from virtuebench.models.spec import apply_option
from virtuebench.support.settings import did_you_mean


def choice_errors(entry: dict[str, Any], validator: Draft202012Validator, root: str) -> list[str]:
    """A registry entry's named choices (`choices`), each checked: its default is one of its options, and the entry
    with each option applied is itself a valid entry (an option's setting its backend does not have is an error here,
    not when a run first picks it)."""
    errors = []
    for choice, declared in (entry.get("choices") or {}).items():
        options = declared["options"]
        if declared["default"] not in options:
            errors.append(
                f"{root}.choices.{choice}.default: {declared['default']!r} is not one of its options; "
                f"{did_you_mean(declared['default'], options)}allowed values: {', '.join(options)}"
            )
        for option, keys in options.items():
            errors += validator_errors(validator, apply_option(entry, keys), f"{root} (choices.{choice}: {option})")
    return errors


def load_registry(path: str | Path, schema_path: str | Path, key: str = "model_registry") -> dict[str, dict[str, Any]]:
    """One registry file, every entry checked against models.schema.yaml; each error names the file (`key`: where the
    config names it)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{key}: file {path} not found")
    try:
        registry = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML ({error})") from None
    if not isinstance(registry, dict):
        raise ConfigError(f"{path}: must map model names to entries")
    validator = Draft202012Validator(load_schema(schema_path))
    errors = [line for name, entry in registry.items() for line in validator_errors(validator, entry, f"{path}: {name}")]
    if not errors:  # the choices' own checks read a valid entry
        errors = [line for name, entry in registry.items() for line in choice_errors(entry, validator, f"{path}: {name}")]
    if errors:
        raise ConfigError("\n".join(errors))
    return registry


@dataclass
class Registry:
    """The model registry as the config names it: one file, or several read in order (`model_registry`)."""

    entries: dict[str, dict[str, Any]]  # every model of every file
    files: list[Path]  # as resolved, in the order read
    origin: dict[str, Path] = field(default_factory=dict)  # the file that defines each model

    def described(self) -> str:
        """Where a model name was looked for, for the errors that list the allowed names."""
        if len(self.files) == 1:
            return f"the model registry {self.files[0]}"
        return f"the model registries {', '.join(map(str, self.files))} (read in that order)"


def load_registries(value: str | list[str], work_dir: str | Path, workflow_dir: str | Path, schema_path: str | Path) -> Registry:
    """`model_registry`: one file, or a list of files read in order, each found as `resolve_registry` finds it and
    checked on its own. A later file adds models; a name an earlier file defines is an error naming both files: a
    model's name is its folder in results/ and its row in every table, so it must mean one entry (a variant of a
    registry model goes under a new name; docs/models.md, "Adding your own model")."""
    listed = isinstance(value, list)
    names = value if listed else [value]
    files = [resolve_registry(name, work_dir, workflow_dir) for name in names]
    registry, problems, read = Registry({}, files), [], {}
    for i, (name, path) in enumerate(zip(names, files)):
        key = f"model_registry[{i}]" if listed else "model_registry"
        if path.resolve() in read:
            problems.append(f"{key}: {name} is the file {read[path.resolve()]} names (listed twice)")
            continue
        read[path.resolve()] = key
        if not path.is_file() and not Path(name).is_absolute():
            problems.append(
                f"{key}: file {path} not found (a relative path is looked for in the working directory "
                f"{Path(work_dir).resolve()} first, then in the workflow's folder {Path(workflow_dir).resolve()})"
            )
            continue
        try:
            entries = load_registry(path, schema_path, key)
        except ConfigError as error:
            problems.append(str(error))
            continue
        for model, entry in entries.items():
            if model in registry.origin:
                problems.append(
                    f"{path}: {model}: already defined in {registry.origin[model]}; a name means one model in every table and "
                    "results folder: give this entry another name (a variant of a registry model is a copy of its entry under a new name)"
                )
                continue
            registry.entries[model], registry.origin[model] = entry, path
    if problems:
        raise ConfigError("\n".join(problems))
    return registry


def registry_warnings(model: str, entry: dict[str, Any]) -> list[str]:
    """What a user should know before trusting a model's numbers: an unverified route, unconfirmed weights."""
    warnings = []
    if str(entry.get("verified", "unverified")).startswith("unverified"):
        warnings.append(
            f"{model}: its route is unverified ({entry.get('verified', 'no verified: entry')}); see docs/models.md before trusting its numbers"
        )
    if entry.get("hub_id"):
        if str(entry.get("provenance", "unconfirmed")).startswith("unconfirmed"):
            warnings.append(f"{model}: hub id {entry['hub_id']} is unconfirmed ({entry.get('provenance', 'no provenance: entry')})")
        if not entry.get("revision"):
            warnings.append(
                f"{model}: weights unpinned (revision: null): each record names the commit it was answered with (weights_commit)"
            )
    return warnings


def resolve_registry(path: str | Path, work_dir: str | Path, workflow_dir: str | Path) -> Path:
    """A relative registry path is looked up in the working directory first, then in the workflow's."""
    path = Path(path)
    if path.is_absolute() or (Path(work_dir) / path).exists():
        return Path(work_dir) / path
    return Path(workflow_dir) / path
