"""Configuration checks with messages a person can act on.

The JSON schemas (config/schema.yaml, config/models.schema.yaml) describe the shape; this module
turns each violation into one line naming the key and the allowed values, and checks the
references between config, model registry and the code's registries (backends, prompts, judges).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from virtuebench import LEVELS


class ConfigError(ValueError):
    """The configuration is invalid; the message lists every problem, one per line."""


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
        return f"{where}: {error.instance!r} is not allowed; allowed values: {', '.join(map(str, error.validator_value))}"
    if error.validator == "anyOf" and any("enum" in option for option in error.validator_value):
        allowed = [value for option in error.validator_value for value in option.get("enum", [])]
        return f"{where}: {error.instance!r} is not allowed; allowed values: {', '.join(allowed)} (or package.module:Class)"
    if error.validator == "type":
        return f"{where}: must be of type {error.validator_value}, got {error.instance!r}"
    if error.validator == "required":
        return f"{where}: {error.message}"
    return f"{where}: {error.message}"


def schema_errors(data: Any, schema_path: str | Path, root: str) -> list[str]:
    schema = yaml.safe_load(Path(schema_path).read_text())
    validator = Draft202012Validator(schema)
    return [_describe(error, root) for error in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))]


def load_registry(path: str | Path, schema_path: str | Path) -> dict[str, dict[str, Any]]:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"model_registry: file {path} not found")
    try:
        registry = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML ({error})") from None
    if not isinstance(registry, dict):
        raise ConfigError(f"{path}: must map model names to entries")
    errors = [line for name, entry in registry.items() for line in schema_errors(entry, schema_path, f"{path}: {name}")]
    if errors:
        raise ConfigError("\n".join(errors))
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


@dataclass
class Checked:
    """The validated configuration's resolved parts."""

    models: dict[str, dict[str, Any]]  # registry entries of the models to run
    judges: dict[str, dict[str, Any]]  # settings of every judge in use, by name
    judge: str  # the judge the tables report (after any fallback)
    compare: list[tuple[str, str]]  # judge pairs to measure agreement of
    warnings: list[str] = field(default_factory=list)
    curation_models: dict[str, dict[str, Any]] = field(default_factory=dict)  # filter and reference models (source virtuebench)
    missing_keys: list[str] = field(default_factory=list)  # API keys the run needs and lacks (defer_keys)
    frame_pixels: int | None = None  # cap on a stored frame's area (frames.max_pixels, `auto` resolved)


def frame_storage_pixels(entries: list[dict[str, Any]]) -> int | None:
    """The stored frames' pixel cap for `frames.max_pixels: auto`: the largest per-frame cap among the models,
    so that each backend can shrink to its own; None (source size) when no model states one."""
    caps = [(entry.get("settings") or {}).get("max_pixels") for entry in entries]
    return max((cap for cap in caps if cap), default=None)


def check_config(
    config: dict[str, Any],
    config_dir: str | Path,
    base_dir: str | Path = ".",
    environ: dict[str, str] | None = None,
    defer_keys: bool = False,
) -> Checked:
    """Validate `config` (schema, cross-references, API keys of the judges in use).

    With `defer_keys`, a missing API key is not raised but listed in `Checked.missing_keys`: the
    Snakefile stops on it before the first job (onstart), so a dry run needs no key.
    """
    from virtuebench.judge.llm import JudgeSetupError, LlmJudgeSettings
    from virtuebench.models import BACKENDS
    from virtuebench.prompts import TEMPLATES
    from virtuebench.sources import ADAPTERS

    environ = os.environ if environ is None else environ
    config_dir = Path(config_dir)
    errors = schema_errors(config, config_dir / "schema.yaml", "config")
    if errors:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(errors))

    problems, warnings, missing_keys = [], [], []
    source_names = sorted([*ADAPTERS, "virtuebench"])  # virtuebench: curated from the real sources (rules/curation.smk)
    if config["source"]["name"] not in source_names:
        problems.append(f"config.source.name: {config['source']['name']!r} is not allowed; allowed values: {', '.join(source_names)}")
    for i, prompt in enumerate(config["prompts"]):
        if prompt not in TEMPLATES:
            problems.append(f"config.prompts[{i}]: {prompt!r} is not allowed; allowed values: {', '.join(sorted(TEMPLATES))}")
    if config["source"]["name"] == "cvrr":
        level = config["source"].get("settings", {}).get("level", 8)
        if config["levels"] != [level]:
            problems.append(
                f"config.levels: {config['levels']} must be [{level}], the CVRR-ES source's one level (config.source.settings.level)"
            )
    else:
        unusual = [level for level in config["levels"] if level not in LEVELS]
        if unusual:
            warnings.append(
                f"config.levels: {unusual} are not the paper's levels {list(LEVELS)}: accepted, but the tables then differ from the paper's"
            )
    report_prompt = config.get("report", {}).get("prompt", "honest")
    if report_prompt not in config["prompts"]:
        problems.append(
            f"config.report.prompt: {report_prompt!r} is not allowed; allowed values (config.prompts): {', '.join(config['prompts'])}"
        )

    trust = config.get("report", {}).get("trust", {})
    if not trust.get("wrong_answer", -1.0) < trust.get("unwarranted_refusal", 0.0):
        problems.append(
            "config.report.trust: wrong_answer must be below unwarranted_refusal (a guess must cost more than an honest refusal), "
            f"got {trust.get('wrong_answer', -1.0)} and {trust.get('unwarranted_refusal', 0.0)}"
        )
    for i, pair in enumerate(config.get("report", {}).get("compare", [])):
        for arm in pair:
            model, _, prompt = str(arm).partition(":")
            if model not in config["models"]:
                problems.append(f"config.report.compare[{i}]: model {model!r} is not in config.models")
            if prompt and prompt not in config["prompts"]:
                problems.append(f"config.report.compare[{i}]: prompt {prompt!r} is not in config.prompts")

    defined = {"rules": {"kind": "rules"}, **config.get("judges", {})}
    curation = config.get("curation", {})
    if config["source"]["name"] == "virtuebench" and "difficulty_judge" in curation:
        if curation["difficulty_judge"] not in defined:
            problems.append(
                f"config.curation.difficulty_judge: {curation['difficulty_judge']!r} is not allowed; allowed values: {', '.join(defined)}"
            )
    wanted = [config["judge"]] + [name for pair in config.get("compare_judges", []) for name in pair]
    for where, name in [("config.judge", config["judge"])] + [
        (f"config.compare_judges[{i}][{j}]", name) for i, pair in enumerate(config.get("compare_judges", [])) for j, name in enumerate(pair)
    ]:
        if name not in defined:
            problems.append(f"{where}: {name!r} is not allowed; allowed values: {', '.join(defined)} (define others under config.judges)")
    judge, judges = config["judge"], {}
    for name in dict.fromkeys(wanted):
        settings = defined.get(name)
        if settings is None or settings["kind"] != "llm":
            judges[name] = {"kind": "rules"}
            continue
        try:
            parsed = LlmJudgeSettings.from_dict(settings)
        except JudgeSetupError as error:
            problems.append(f"config.judges.{name}: {error}")
            continue
        if parsed.api_key_env and not environ.get(parsed.api_key_env):
            compared = any(name in pair for pair in config.get("compare_judges", []))
            if settings.get("if_no_key", "fail") == "rules" and name == judge and not compared:
                warnings.append(
                    f"{parsed.api_key_env} is not set: judging with rules instead of {name} (config.judges.{name}.if_no_key: rules)"
                )
                judge = "rules"
                judges["rules"] = {"kind": "rules"}
                continue
            message = (
                f"config.judges.{name}: the judge needs an API key: set the environment variable {parsed.api_key_env} "
                f"(or set config.judge: rules, or config.judges.{name}.if_no_key: rules)"
            )
            (missing_keys if defer_keys else problems).append(message)
        judges[name] = settings

    name_pattern = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # the workflow's wildcard constraints
    for where, names in (("config.models", config["models"]), ("config.judges", list(config.get("judges", {})))):
        for name in names:
            if not name_pattern.match(name):
                problems.append(f"{where}: name {name!r} must be letters, digits, '.', '_' or '-' (it becomes a folder name)")
    registry_path = resolve_registry(config.get("model_registry", "config/models.yaml"), base_dir, config_dir.parent)
    registry = load_registry(registry_path, config_dir / "models.schema.yaml")
    for i, model in enumerate(config["models"]):
        if model not in registry:
            problems.append(
                f"config.models[{i}]: {model!r} is not in the model registry {registry_path}; allowed values: {', '.join(sorted(registry))}"
            )
        elif ":" not in registry[model]["backend"] and registry[model]["backend"] not in BACKENDS:
            problems.append(
                f"{registry_path}: {model}.backend: {registry[model]['backend']!r} is not allowed; allowed values: {', '.join(sorted(BACKENDS))}"
            )
        elif registry[model]["backend"] == "oracle" and config["source"]["name"] != "synthetic":
            problems.append(
                f"config.models[{i}]: {model!r} reads only the synthetic demo's frames (source synthetic), not {config['source']['name']}'s"
            )
        else:
            warnings += registry_warnings(model, registry[model])
    for i, model in enumerate(config.get("supplement", {}).get("models", [])):
        if model not in config["models"]:
            problems.append(
                f"config.supplement.models[{i}]: {model!r} is not allowed; allowed values (config.models): {', '.join(config['models'])}"
            )
    for i, source in enumerate(config.get("supplement", {}).get("sources", [])):
        from virtuebench.sources import REAL_SOURCES

        if source not in REAL_SOURCES:
            problems.append(f"config.supplement.sources[{i}]: {source!r} is not allowed; allowed values: {', '.join(REAL_SOURCES)}")
    if config.get("supplement", {}).get("models") and config["source"]["name"] != "virtuebench":
        problems.append("config.supplement.models: the supplementary's table needs source virtuebench (the source benchmarks' questions)")
    curation_models = {}
    if config["source"]["name"] == "virtuebench":
        from virtuebench.sources import REAL_SOURCES

        if not curation:
            problems.append("config.curation: required with source virtuebench (the sources, filter and reference models)")
        for i, source in enumerate(curation.get("sources", [])):
            if source not in REAL_SOURCES:
                problems.append(f"config.curation.sources[{i}]: {source!r} is not allowed; allowed values: {', '.join(REAL_SOURCES)}")
        for key, default in (("filter_model", "Gemini-2.5-Flash"), ("reference_model", "Gemini-2.5-Pro")):
            name = curation.get(key, default)
            if name is not None and name not in registry:
                problems.append(f"config.curation.{key}: {name!r} is not in the model registry {registry_path}")
            elif name is not None:
                curation_models[name] = registry[name]
                key_env = (registry[name].get("settings") or {}).get("api_key_env")
                if key_env and not environ.get(key_env):
                    (missing_keys if defer_keys else problems).append(
                        f"config.curation.{key}: {name} needs an API key: set the environment variable {key_env}"
                    )
        difficulty_judge = curation.get("difficulty_judge", "rules")
        judge_settings = defined.get(difficulty_judge, {})
        key_env = judge_settings.get("api_key_env", "OPENAI_API_KEY") if judge_settings.get("kind") == "llm" else None
        if key_env and not environ.get(key_env):
            (missing_keys if defer_keys else problems).append(
                f"config.curation.difficulty_judge: {difficulty_judge} needs an API key: set the environment variable {key_env}"
            )
        for source in curation.get("sources", []):
            if source in REAL_SOURCES and source not in curation.get("raw_dirs", {}) and not environ.get("HF_TOKEN"):
                from virtuebench.sources import real_source

                release = real_source(source).RELEASE
                if release.gated:
                    (missing_keys if defer_keys else problems).append(
                        f"config.curation.sources: {source} ({release.repo_id}) is gated: accept its terms at {release.url} "
                        "and set HF_TOKEN (or give an already downloaded copy in config.curation.raw_dirs)"
                    )
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))
    frame_pixels = config.get("frames", {}).get("max_pixels", "auto")
    if frame_pixels == "auto":
        frame_pixels = frame_storage_pixels([registry[model] for model in config["models"]])
    compare = [(a, b) for a, b in config.get("compare_judges", [])]
    return Checked(
        {model: registry[model] for model in config["models"]},
        judges,
        judge,
        compare,
        warnings,
        curation_models,
        missing_keys,
        frame_pixels,
    )
