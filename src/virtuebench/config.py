"""Configuration checks with messages a person can act on.

The JSON schemas (config/schema.yaml, config/models.schema.yaml) describe the shape; this module
turns each violation into one line naming the key and the allowed values, and checks the
references between config, model registry and the code's registries (backends, prompts, judges).
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from virtuebench.levels import LEVELS
from virtuebench.models import samples_check
from virtuebench.models.spec import ChoiceInEffect, ModelSpec, apply_option, resolve_choices, resolve_spec
from virtuebench.report.paper import paper_models
from virtuebench.support.settings import RERUN_CLASSES, did_you_mean, merge_settings  # noqa: F401  (the classes; the other half of run_settings)


class ConfigError(ValueError):
    """The configuration is invalid; the message lists every problem, one per line."""


def _and_did_you_mean(name: Any, choices: Iterable[str]) -> str:
    """did_you_mean as the end of a message: "; did you mean 'X'?", or ""."""
    hint = did_you_mean(name, choices)
    return f"; {hint.strip()}" if hint else ""


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
        allowed = list(map(str, error.validator_value))
        return f"{where}: {error.instance!r} is not allowed; {did_you_mean(error.instance, allowed)}allowed values: {', '.join(allowed)}"
    if error.validator == "anyOf" and any("enum" in option for option in error.validator_value):
        allowed = [value for option in error.validator_value for value in option.get("enum", [])]
        hint = did_you_mean(error.instance, allowed)
        return f"{where}: {error.instance!r} is not allowed; {hint}allowed values: {', '.join(allowed)} (or package.module:Class)"
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
    from virtuebench.prompts import TEMPLATES
    from virtuebench.sources import ADAPTERS

    return {
        "backends": lambda: {"enum": list(BACKENDS)},
        "benchmarks": lambda: {"enum": list(BENCHMARKS)},
        # The top level: each benchmark's block of settings (config.cvrr ...), and no key beside the schema's and theirs.
        "benchmark-settings": lambda: {"properties": settings_blocks(), "additionalProperties": False},
        "sources": lambda: {"enum": [*ADAPTERS, CURATED_SOURCE]},
        "prompts": lambda: {"enum": list(TEMPLATES)},
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
    return _errors(Draft202012Validator(load_schema(schema_path)), data, root)


def _errors(validator: Draft202012Validator, data: Any, root: str) -> list[str]:
    return [_describe(error, root) for error in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))]


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
            errors += _errors(validator, apply_option(entry, keys), f"{root} (choices.{choice}: {option})")
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
    errors = [line for name, entry in registry.items() for line in _errors(validator, entry, f"{path}: {name}")]
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


def logs_folder(results: str) -> str:
    """The logs folder of a results folder: logs/ for the default results/, logs/<rest> for results/<rest>, else
    <results>/logs (an absolute folder, say on a cluster's scratch, keeps its logs beside it)."""
    path = PurePath(os.path.normpath(results))
    if path == PurePath("results"):
        return "logs"
    if not path.is_absolute() and path.parts[0] == "results":
        return str(PurePath("logs", *path.parts[1:]))
    return str(path / "logs")


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
    #: Every model's resolved spec (those of config.models and the curation's), by name: what its jobs are given.
    specs: dict[str, ModelSpec] = field(default_factory=dict)
    #: Each model's named registry choices at the option the run uses (config.model_choices, else the default), by
    #: name; a model that declares none is absent. The table captions state them (virtuebench.plan.Plan.choices_note).
    choices: dict[str, list[ChoiceInEffect]] = field(default_factory=dict)


def frame_storage_pixels(specs: list[ModelSpec]) -> int | None:
    """The stored frames' pixel cap for `frames.max_pixels: auto`: the largest per-frame cap among the models (the
    setting each backend declares as its cap: ModelSpec.frame_pixels), so that each can shrink to its own; None
    (source size) when no model states one."""
    return max((spec.frame_pixels for spec in specs if spec.frame_pixels), default=None)


def start_warnings(checked: Checked, runs_jobs: bool) -> list[str]:
    """What the Snakefile prints before the DAG: the checks' warnings and, where the run starts no job (a dry run),
    each missing API key or token, on which a real run stops before its first job (the Snakefile's onstart)."""
    if runs_jobs:
        return list(checked.warnings)
    return [*checked.warnings, *(f"{line}; a real run stops here, before any job" for line in checked.missing_keys)]


def frame_size_warnings(frame_pixels: int | None, specs: list[ModelSpec]) -> list[str]:
    """A model whose own pixel cap is above the stored frames' sees smaller frames than its authors' code gives it."""
    if frame_pixels is None:
        return []
    return [
        f"config.models: {spec.name}'s max_pixels {spec.frame_pixels} is above the stored frames' cap config.frames.max_pixels "
        f"{frame_pixels}: it sees frames of at most {frame_pixels} pixels; raise frames.max_pixels to give it its own (every "
        "video's frames are then extracted again)"
        for spec in specs
        if spec.frame_pixels and spec.frame_pixels > frame_pixels
    ]


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


# --- Which settings change the answers ----------------------------------------------------------------------------

# How far a setting reaches (RERUN_CLASSES, virtuebench.support.settings): a model registry entry's own keys declare
# theirs in config/models.schema.yaml (`x-rerun`), its backend settings on the backend's settings dataclass
# (virtuebench.models.spec), a judge kind's on its settings dataclass (virtuebench.judge.kinds).


def _properties(config_dir: Path) -> dict[str, dict[str, Any]]:
    return yaml.safe_load((config_dir / "models.schema.yaml").read_text())["properties"]


@lru_cache(maxsize=8)
def setting_classes(kind: str, config_dir: str | Path) -> dict[str, str]:
    """{setting: class} for a model registry entry (`model`), from the schema in `config_dir` (the workflow's config/:
    the Snakefile passes it, so an installed package reads the same schemas), or for any judge's settings (`judge`: the
    registered kinds' settings together, from virtuebench.judge.kinds)."""
    if kind == "model":
        return {name: spec.get("x-rerun") for name, spec in _properties(Path(config_dir)).items()}
    if kind == "judge":
        from virtuebench.judge.kinds import settings_properties

        return {"kind": "answers", **{name: spec["x-rerun"] for name, spec in settings_properties().items()}}
    raise ValueError(f"unknown settings kind {kind!r}: model or judge")


def model_spec(name: str, entry: dict[str, Any], config_dir: str | Path) -> ModelSpec:
    """A registry entry resolved (virtuebench.models.spec), its own keys classified by the schema in `config_dir`."""
    return resolve_spec(name, entry, setting_classes("model", config_dir))


def _split(kind: str, entry: dict[str, Any], config_dir: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the settings that change the answers, those that change only how the job runs); description settings are in
    neither. A model's are its spec's halves (its `settings` split by its backend's settings dataclass); a judge's are
    split by its kind (virtuebench.judge.kinds.split_settings: its code's version is tracked too, where it has one)."""
    if kind == "judge":
        from virtuebench.judge.kinds import split_settings

        return split_settings(entry)
    if kind != "model":
        raise ValueError(f"unknown settings kind {kind!r}: model or judge")
    spec = model_spec("model", entry, config_dir)
    return spec.answers, spec.run


def tracked_settings(kind: str, entry: dict[str, Any], config_dir: str | Path) -> str:
    """The settings of a model (`model`: a registry entry) or judge (`judge`) that change its answers, as sorted
    JSON: the one tracked param of every job that runs it (inference, judging, the supplement's, the curation's)."""
    return json.dumps(_split(kind, entry, config_dir)[0], sort_keys=True)


def run_settings(kind: str, entry: dict[str, Any], config_dir: str | Path) -> str:
    """The settings that change only how its jobs run (`scheduling`), as JSON: they reach the job untracked."""
    return json.dumps(_split(kind, entry, config_dir)[1], sort_keys=True)


# --- The checks, one per section ----------------------------------------------------------------------------------


@dataclass
class _Review:
    """What the checks found: problems stop the run, warnings are printed, missing keys stop it before the first job."""

    config: dict[str, Any]
    environ: dict[str, str]
    defer_keys: bool
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    missing_keys: list[str] = field(default_factory=list)

    def missing_key(self, message: str) -> None:
        (self.missing_keys if self.defer_keys else self.problems).append(message)


#: What the workflow writes directly under a results folder, by folder name: the one list. Plan.res builds no path in a
#: folder not listed here, and a configuration's results folder may not lie in one of another's (results_collision).
RESULTS_FOLDERS = (
    "annotation",
    "browser",
    "curation",
    "frames",
    "judge_agreement",
    "judgments",
    "published",
    "report",
    "responses",
    "sources",
    "stats",
    "supplement",
    "videos",
)


def known_results_folders(config_dir: str | Path) -> dict[str, str]:
    """The results folder of each configuration shipped beside the schema (config/*.yaml: the demo's, CVRR-ES's, the
    paper's), by its file, and the schema's default."""
    config_dir = Path(config_dir)
    folders = {}
    for path in sorted(config_dir.glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(data, dict) and isinstance(data.get("results"), str) and "benchmark" in data:
            folders[f"{config_dir.name}/{path.name}"] = data["results"]
    default = str(with_defaults({}, config_dir / "schema.yaml").get("results", "results"))
    return folders if default in folders.values() else {**folders, "the schema's default": default}


def results_collision(results: str, known: Mapping[str, str], base_dir: str | Path = ".") -> str | None:
    """Why `results` may not be a results folder beside the configurations `known` (name -> results folder), or None:
    it lies in a folder the workflow writes under one of theirs (results/frames, results/report ...), or one of theirs
    lies in a folder the workflow would write under it. Two configurations' results folders may nest otherwise (the demo's
    results/ holds CVRR-ES's results/cvrr and the paper's results/paper)."""
    here = Path(os.path.abspath(base_dir))
    mine = Path(os.path.normpath(here / results))
    for name, other in known.items():
        theirs = Path(os.path.normpath(here / other))
        if mine != theirs and mine.is_relative_to(theirs):
            first = mine.relative_to(theirs).parts[0]
            if first in RESULTS_FOLDERS:
                return f"it is inside {os.path.join(other, first)}, a folder the workflow writes for the results folder {other!r} ({name})"
        if mine != theirs and theirs.is_relative_to(mine):
            first = theirs.relative_to(mine).parts[0]
            if first in RESULTS_FOLDERS:
                return f"the workflow would write {os.path.join(results, first)}, which holds the results folder {other!r} ({name})"
    return None


def _check_results(review: _Review, config_dir: Path, base_dir: str | Path) -> None:
    given = review.config["results"]
    folder = os.path.normpath(given)
    if os.path.isabs(folder) and Path(folder).is_relative_to(os.path.abspath(base_dir)):
        folder = os.path.relpath(folder, os.path.abspath(base_dir))  # the project folder named in full is the same folder
    if folder == "." or folder.split(os.sep)[0] in ("..", "logs", "config", "rules", "src", "envs", "profiles", "tests", ".snakemake"):
        review.problems.append(
            f"config.results: {given!r} is not allowed: a folder of its own, e.g. results/cvrr "
            "(not the project folder, nor one of its logs, config, rules, src, envs, profiles, tests or .snakemake)"
        )
    elif why := results_collision(given, known_results_folders(config_dir), base_dir):
        review.problems.append(f"config.results: {given!r} is not allowed: {why}; give a folder of its own, e.g. results/mine")


def _check_source_and_levels(review: _Review) -> None:
    # The source's name and the prompts' are checked with the schema (first), whose allowed values load_schema takes
    # from the code's registries, so they are not checked again here.
    config = review.config
    if config["source"]["name"] == "cvrr":
        from virtuebench.cvrr.source import source_levels

        level = config["source"]["settings"].get("level", 8)
        try:
            levels = source_levels(level)
        except ValueError as error:
            review.problems.append(f"config.source.settings.level: {error}")
            return
        if sorted(config["levels"]) != sorted(levels):
            review.problems.append(
                f"config.levels: {config['levels']} must be {levels}, the CVRR-ES source's levels (config.source.settings.level)"
            )
        return
    unusual = [level for level in config["levels"] if level not in LEVELS]
    if unusual:
        review.warnings.append(
            f"config.levels: {unusual} are not the paper's levels {list(LEVELS)}: accepted, but the tables then differ from the paper's"
        )


def _check_cvrr_model_levels(review: _Review, registry: Any) -> None:
    """CVRR-ES's tables have one column per model: a model sampled at two of the source's frame counts would pool
    them, so each runs at one (its registry entry's `levels` picks it where the source lists more than one)."""
    config = review.config
    if config["source"]["name"] != "cvrr" or len(config["levels"]) < 2:
        return
    for index, model in enumerate(config["models"]):
        entry = registry.entries.get(model)
        if entry is None:
            continue  # named by the models' own check
        own, max_level = entry.get("levels"), entry.get("max_level")
        runs = [n for n in config["levels"] if (own is None or n in own) and (max_level is None or n <= max_level)]
        if len(runs) > 1:
            review.problems.append(
                f"config.models[{index}]: model {model} would run at {runs} frames, and CVRR-ES's tables would pool them: "
                f"give its registry entry `levels: [n]`, one of the source's levels {config['levels']}"
            )


def _check_prompts_and_report(review: _Review) -> None:
    config, report = review.config, review.config["report"]
    if report["prompt"] not in config["prompts"]:
        review.problems.append(
            f"config.report.prompt: {report['prompt']!r} is not allowed; {did_you_mean(report['prompt'], config['prompts'])}"
            f"allowed values (config.prompts): {', '.join(config['prompts'])}"
        )
    trust = report["trust"]
    if not trust["wrong_answer"] < trust["unwarranted_refusal"]:
        review.problems.append(
            "config.report.trust: wrong_answer must be below unwarranted_refusal (a guess must cost more than an honest refusal), "
            f"got {trust['wrong_answer']} and {trust['unwarranted_refusal']}"
        )
    for i, pair in enumerate(report["compare"]):
        for arm in pair:
            model, _, prompt = str(arm).partition(":")
            if model not in config["models"]:
                review.problems.append(
                    f"config.report.compare[{i}]: model {model!r} is not in config.models{_and_did_you_mean(model, config['models'])}"
                )
            if prompt and prompt not in config["prompts"]:
                review.problems.append(
                    f"config.report.compare[{i}]: prompt {prompt!r} is not in config.prompts{_and_did_you_mean(prompt, config['prompts'])}"
                )
    rows = paper_models()
    for model, row in report.get("paper_names", {}).items():
        if model not in config["models"]:
            review.problems.append(
                f"config.report.paper_names: model {model!r} is not in config.models{_and_did_you_mean(model, config['models'])}"
            )
        if row not in rows:
            review.problems.append(
                f"config.report.paper_names.{model}: {row!r} is not a row of the paper's Tables 1 and 2{_and_did_you_mean(row, rows)}"
            )


def _defined_judges(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every judge the config may name: the built-in `rules`, then config.judges."""
    return {"rules": {"kind": "rules"}, **config["judges"]}


def _judge_key_env(settings: dict[str, Any]) -> str | None:
    """The variable a judge reads its API key from (its settings' default where unset); None where its kind needs no
    key or checks its own (a hybrid's LLM judge: virtuebench.judge.hybrid)."""
    from virtuebench.judge.kinds import judge_kind

    kind = judge_kind(settings["kind"])
    return kind.key_env(settings) if kind.key_env else None


def _check_judges(review: _Review) -> tuple[dict[str, dict[str, Any]], str]:
    """(settings of every judge in use, resolved by its kind; the judge the tables report after any key fallback)."""
    from virtuebench.judge.kinds import judge_kind

    config = review.config
    defined = _defined_judges(config)
    wanted = [("config.judge", config["judge"])] + [
        (f"config.compare_judges[{i}][{j}]", name) for i, pair in enumerate(config["compare_judges"]) for j, name in enumerate(pair)
    ]
    for where, name in wanted:
        if name not in defined:
            review.problems.append(
                f"{where}: {name!r} is not allowed; {did_you_mean(name, defined)}allowed values: {', '.join(defined)} "
                "(define others under config.judges)"
            )
    judge, judges = config["judge"], {}
    compared = {name for pair in config["compare_judges"] for name in pair}
    for name in dict.fromkeys(name for _, name in wanted if name in defined):
        settings = defined[name]
        resolved = judge_kind(settings["kind"]).resolved(review, name, settings, defined)
        if resolved is None:
            continue
        key_env = _judge_key_env(settings)
        if key_env and not review.environ.get(key_env):
            if settings.get("if_no_key", "fail") == "rules" and name == judge and name not in compared:
                review.warnings.append(
                    f"{key_env} is not set: judging with rules instead of {name} (config.judges.{name}.if_no_key: rules)"
                )
                judge = "rules"
                judges["rules"] = {"kind": "rules"}
                continue
            review.missing_key(
                f"config.judges.{name}: the judge needs an API key: set the environment variable {key_env} "
                f"(or set config.judge: rules, or config.judges.{name}.if_no_key: rules)"
            )
        judges[name] = resolved
    return judges, judge


def _check_names(review: _Review) -> None:
    name_pattern = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # the workflow's wildcard constraints
    for where, names in (("config.models", review.config["models"]), ("config.judges", list(review.config["judges"]))):
        for name in names:
            if not name_pattern.match(name):
                review.problems.append(f"{where}: name {name!r} must be letters, digits, '.', '_' or '-' (it becomes a folder name)")


def _declared_choices(entries: dict[str, dict[str, Any]]) -> dict[str, dict[str, list[str]]]:
    """{choice: {model: its options}} of every named choice the registry's entries declare."""
    declared: dict[str, dict[str, list[str]]] = {}
    for model, entry in entries.items():
        for choice, spec in (entry.get("choices") or {}).items():
            declared.setdefault(choice, {})[model] = list(spec["options"])
    return declared


def _check_model_choices(review: _Review, registry: Registry, models: Iterable[str]) -> None:
    """config.model_choices: each a choice some registry entry declares, at an option every model of the run that
    declares it has (entries may declare a choice of the same name with different options; config/models.yaml's
    share theirs). A choice no model of the run declares is accepted with a warning: it changes nothing."""
    declared = _declared_choices(registry.entries)
    in_run = [model for model in models if model in registry.entries]
    for choice, option in review.config["model_choices"].items():
        if choice not in declared:
            review.problems.append(
                f"config.model_choices.{choice}: no entry of {registry.described()} declares a choice {choice!r}"
                f"{_and_did_you_mean(choice, declared)}; declared choices: {', '.join(sorted(declared)) or 'none'}"
            )
            continue
        options = sorted({name for names in declared[choice].values() for name in names})
        lacking = [model for model in in_run if model in declared[choice] and option not in declared[choice][model]]
        if option not in options:
            review.problems.append(
                f"config.model_choices.{choice}: {option!r} is not allowed; {did_you_mean(option, options)}"
                f"allowed values: {', '.join(options)}"
            )
        elif lacking:
            review.problems.append(
                f"config.model_choices.{choice}: {option!r} is not an option of {', '.join(lacking)} "
                f"(their options: {', '.join(declared[choice][lacking[0]])})"
            )
        elif not any(model in declared[choice] for model in in_run):
            review.warnings.append(
                f"config.model_choices.{choice}: does nothing for this run's models; it is declared by "
                f"{', '.join(sorted(declared[choice]))}"
            )


def _valid_picks(entry: dict[str, Any], picked: dict[str, str]) -> dict[str, str]:
    """The picks of config.model_choices that are options of `entry` (the others are config errors, reported)."""
    choices = entry.get("choices") or {}
    return {choice: option for choice, option in picked.items() if choice in choices and option in choices[choice]["options"]}


def _check_models(review: _Review, registry: Registry) -> None:
    # An entry's backend is checked by models.schema.yaml (load_registry): a registered one or package.module:Class.
    config, entries = review.config, registry.entries
    for i, model in enumerate(config["models"]):
        if model not in entries:
            review.problems.append(
                f"config.models[{i}]: {model!r} is not in {registry.described()}; {did_you_mean(model, entries)}"
                f"allowed values: {', '.join(sorted(entries))}"
            )
        elif entries[model]["backend"] == "oracle" and config["source"]["name"] != "synthetic":
            review.problems.append(
                f"config.models[{i}]: {model!r} reads only the synthetic demo's frames (source synthetic), not {config['source']['name']}'s"
            )
        else:  # the entry as the run's choices resolve it: the hub id and revision it will load, its settings
            resolved, _ = resolve_choices(entries[model], _valid_picks(entries[model], config["model_choices"]))
            review.warnings += registry_warnings(model, resolved)
            problems, warnings = samples_check(model, resolved)
            review.problems += [f"config.models[{i}]: {problem}" for problem in problems]
            review.warnings += warnings


def _check_supplement(review: _Review) -> None:
    from virtuebench.sources import REAL_SOURCES

    config, supplement = review.config, review.config["supplement"]
    for i, model in enumerate(supplement["models"]):
        if model not in config["models"]:
            review.problems.append(
                f"config.supplement.models[{i}]: {model!r} is not allowed; {did_you_mean(model, config['models'])}"
                f"allowed values (config.models): {', '.join(config['models'])}"
            )
    for i, source in enumerate(supplement["sources"]):
        if source not in REAL_SOURCES:
            review.problems.append(
                f"config.supplement.sources[{i}]: {source!r} is not allowed; {did_you_mean(source, REAL_SOURCES)}"
                f"allowed values: {', '.join(REAL_SOURCES)}"
            )
    from virtuebench.prompts import TEMPLATES

    for key in ("mcq_prompt", "oe_prompt"):
        if supplement[key] not in TEMPLATES:
            review.problems.append(
                f"config.supplement.{key}: {supplement[key]!r} is not allowed; {did_you_mean(supplement[key], TEMPLATES)}"
                f"allowed values: {', '.join(TEMPLATES)}"
            )
    if supplement["models"] and config["source"]["name"] != "virtuebench":
        review.problems.append(
            "config.supplement.models: the supplementary's table needs source virtuebench (the source benchmarks' questions)"
        )
    if supplement["videoevalpro_grader"] == "authors":
        _check_authors_grader(review, supplement)


def _check_authors_grader(review: _Review, supplement: dict[str, Any]) -> None:
    """supplement.videoevalpro_grader: authors needs the authors' prompt in a file (never in this repository) and,
    where the table judges VideoEval-Pro, the grader's API key."""
    from virtuebench.judge.letter_grade import GraderPromptError, LetterGradeSettings, read_grader_prompt

    path = supplement["authors_grader_prompt"]
    if not path:
        review.problems.append(
            "config.supplement.authors_grader_prompt: required with videoevalpro_grader: authors (a text file holding the "
            "authors' grading prompt; docs/supplement.md)"
        )
    else:
        try:
            read_grader_prompt(path)
        except GraderPromptError as error:
            review.problems.append(str(error))
    key_env = LetterGradeSettings(prompt_file=path or "").api_key_env
    judged = supplement["models"] and "videoeval-pro" in supplement["sources"]
    if judged and key_env and not review.environ.get(key_env):
        review.missing_key(
            f"config.supplement.videoevalpro_grader: the authors' grader needs an API key: set the environment variable {key_env} "
            "(or set config.supplement.videoevalpro_grader: virtuebench)"
        )


def _check_curation(review: _Review, registry: Registry, judges: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The curation's models (source virtuebench), their keys and the gated sources' token; the difficulty judge's
    resolved settings are added to `judges` (the judges in use) when it is not one of them already."""
    from virtuebench.sources import REAL_SOURCES, real_source

    config, curation = review.config, review.config["curation"]
    if config["source"]["name"] != "virtuebench":
        return {}
    defined = _defined_judges(config)
    difficulty_judge = curation["difficulty_judge"]
    if difficulty_judge not in defined:
        review.problems.append(
            f"config.curation.difficulty_judge: {difficulty_judge!r} is not allowed; {did_you_mean(difficulty_judge, defined)}"
            f"allowed values: {', '.join(defined)}"
        )
    elif difficulty_judge not in judges:
        judges[difficulty_judge] = _curation_judge(review, difficulty_judge, defined)
    for i, source in enumerate(curation["sources"]):
        if source not in REAL_SOURCES:
            review.problems.append(
                f"config.curation.sources[{i}]: {source!r} is not allowed; {did_you_mean(source, REAL_SOURCES)}"
                f"allowed values: {', '.join(REAL_SOURCES)}"
            )
    curation_models = {}
    for key in ("filter_model", "reference_model"):
        name = curation[key]
        if name not in registry.entries:
            review.problems.append(
                f"config.curation.{key}: {name!r} is not in {registry.described()}{_and_did_you_mean(name, registry.entries)}"
            )
            continue
        curation_models[name] = registry.entries[name]
        key_env = (registry.entries[name].get("settings") or {}).get("api_key_env")
        if key_env and not review.environ.get(key_env):
            review.missing_key(f"config.curation.{key}: {name} needs an API key: set the environment variable {key_env}")
    key_env = _judge_key_env(defined[difficulty_judge]) if difficulty_judge in defined else None
    if key_env and not review.environ.get(key_env):
        # A hybrid's key was checked with its if_no_key (its kind's resolve); an llm judge's has no fallback here.
        review.missing_key(f"config.curation.difficulty_judge: {difficulty_judge} needs an API key: set the environment variable {key_env}")
    downloaded = [*curation["sources"], *(config["supplement"]["sources"] if config["supplement"]["models"] else [])]
    for source in dict.fromkeys(downloaded):
        if source in REAL_SOURCES and source not in curation["raw_dirs"]:
            release = real_source(source).RELEASE
            revision = curation["revisions"].get(source) or release.revision
            if not re.fullmatch(r"[0-9a-f]{40}", revision):
                # A branch moves: two runs a month apart may read different files with nothing to say so but
                # download.json's commit. Warned, not refused: no commit of some releases is known (docs/sources.md).
                review.warnings.append(
                    f"config.curation.revisions: {source} ({release.repo_id}) follows revision {revision!r}, not a commit: "
                    f"pin one with curation.revisions.{source}: <40-hex sha> (the commit each download resolved is in its download.json)"
                )
    if not review.environ.get("HF_TOKEN"):
        for source in curation["sources"]:
            if source in REAL_SOURCES and source not in curation["raw_dirs"] and real_source(source).RELEASE.gated:
                release = real_source(source).RELEASE
                review.missing_key(
                    f"config.curation.sources: {source} ({release.repo_id}) is gated: accept its terms at {release.url} "
                    "and set HF_TOKEN (or give an already downloaded copy in config.curation.raw_dirs)"
                )
    return curation_models


def _curation_judge(review: _Review, name: str, defined: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The settings of a difficulty judge that Table 2 does not use, resolved by its kind as `_check_judges` resolves
    its own (a hybrid's `llm` becomes its LLM judge's settings): the filter's job runs it from these."""
    from virtuebench.judge.kinds import judge_kind

    settings = defined[name]
    return judge_kind(settings["kind"]).resolved(review, name, settings, defined) or dict(settings)


#: The report.trust settings each scheme reads besides `scheme` (virtuebench.metrics.TrustWeights.value).
TRUST_SCHEME_SETTINGS = {"kalai": ("confidence_target",), "refusal-credit": ("wrong_answer", "unwarranted_refusal")}


def _check_unused_settings(review: _Review, given: dict[str, Any]) -> None:
    """Warn of each setting the config gives (`given`: before the schema's defaults) that does nothing under its other
    choices: the other trust scheme's, one a judge's kind does not read, the curation's without source virtuebench,
    the supplement's without supplement.models, another benchmark's block, the authors' grader prompt without the
    authors' grader, the supplement's seed without its sample size."""
    config = review.config
    trust = (given.get("report") or {}).get("trust") or {}
    scheme = config["report"]["trust"]["scheme"]
    chosen = f"scheme {scheme}" + ("" if "scheme" in trust else " (the default)")
    for other, keys in TRUST_SCHEME_SETTINGS.items():
        for key in (key for key in keys if other != scheme and key in trust):
            review.warnings.append(
                f"config.report.trust.{key}: does nothing under {chosen}, which reads only "
                f"{', '.join(TRUST_SCHEME_SETTINGS[scheme])}; {key} is scheme {other}'s"
            )
    from virtuebench.judge.kinds import judge_kind

    for name, settings in config["judges"].items():
        reads = list(judge_kind(settings["kind"]).reads())  # an llm judge refuses those it does not read (its resolve)
        unread = [key for key in settings if key != "kind" and key not in reads]
        if unread:
            review.warnings.append(
                f"config.judges.{name}: {', '.join(unread)} {'does' if len(unread) == 1 else 'do'} nothing for a judge of kind "
                f"{settings['kind']}, which reads {', '.join(reads) if reads else 'no setting but kind'}"
            )
    unused = []
    if config["source"]["name"] != "virtuebench":
        unused += [(section, "without source virtuebench (they build it)") for section in ("curation", "annotation")]
    if not config["supplement"]["models"]:
        unused.append(("supplement", "without config.supplement.models (the supplementary's table is made for them)"))
    from virtuebench.benchmarks import REGISTRY as BENCHMARKS

    unused += [(name, f"without benchmark: {name} (its rules file reads them)") for name in BENCHMARKS if name != config["benchmark"]]
    for section, why in unused:
        keys = sorted(key for key in given.get(section) or {} if key != "models")
        if keys:
            review.warnings.append(f"config.{section}: {', '.join(keys)} {'does' if len(keys) == 1 else 'do'} nothing {why}")
    supplement, grader = config["supplement"], config["supplement"]["videoevalpro_grader"]
    if supplement["models"] and (given.get("supplement") or {}).get("authors_grader_prompt") and grader != "authors":
        review.warnings.append(
            f"config.supplement.authors_grader_prompt: does nothing with videoevalpro_grader: {grader}; "
            "it is the prompt of videoevalpro_grader: authors"
        )
    if supplement["models"] and "seed" in (given.get("supplement") or {}) and not supplement["max_questions_per_source"]:
        review.warnings.append(
            "config.supplement.seed: does nothing without supplement.max_questions_per_source (every question is asked; "
            "the seed draws the sample)"
        )


def check_config(
    config: dict[str, Any],
    config_dir: str | Path,
    base_dir: str | Path = ".",
    environ: dict[str, str] | None = None,
    defer_keys: bool = False,
) -> Checked:
    """Validate `config`: the schema first, then its defaults filled in (config/schema.yaml holds every one),
    then one check per section (the cross-references between config, model registry and the code's registries,
    the API keys and tokens the run needs).

    With `defer_keys`, a missing API key or token is not raised but listed in `Checked.missing_keys`: the
    Snakefile stops on it before the first job (onstart), so a dry run needs no key.
    """
    config_dir = Path(config_dir)
    errors = schema_errors(config, config_dir / "schema.yaml", "config")
    if errors:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(errors))
    given, config = config, with_defaults(config, config_dir / "schema.yaml")
    review = _Review(config, os.environ if environ is None else environ, defer_keys)
    _check_results(review, config_dir, base_dir)
    _check_source_and_levels(review)
    _check_prompts_and_report(review)
    judges, judge = _check_judges(review)
    _check_names(review)
    registry = load_registries(config["model_registry"], base_dir, config_dir.parent, config_dir / "models.schema.yaml")
    _check_models(review, registry)
    _check_cvrr_model_levels(review, registry)
    _check_supplement(review)
    curation_models = _check_curation(review, registry, judges)
    _check_model_choices(review, registry, [*config["models"], *curation_models])
    _check_unused_settings(review, given)
    if review.problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(review.problems))
    # Each model's entry with the run's named choices applied, once: everything below (specs, resources, the tracked
    # params) reads the resolved entry, so an option switched reruns exactly the models that declare its choice.
    resolved = {name: resolve_choices(registry.entries[name], config["model_choices"]) for name in [*config["models"], *curation_models]}
    curation_models = {name: resolved[name][0] for name in curation_models}
    specs = {name: model_spec(name, entry, config_dir) for name, (entry, _) in resolved.items()}
    frame_pixels = config["frames"]["max_pixels"]
    if frame_pixels == "auto":
        frame_pixels = frame_storage_pixels([specs[model] for model in config["models"]])
    review.warnings += frame_size_warnings(frame_pixels, [specs[model] for model in config["models"]])
    return Checked(
        {model: resolved[model][0] for model in config["models"]},
        judges,
        judge,
        [(a, b) for a, b in config["compare_judges"]],
        review.warnings,
        curation_models,
        review.missing_keys,
        frame_pixels,
        specs,
        {name: in_effect for name, (_, in_effect) in resolved.items() if in_effect},
    )
