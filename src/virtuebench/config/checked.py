"""The configuration check: the schema first, its defaults filled in, then one check per section; its result,
`Checked`, holds what the run resolved once (the models' entries and specs, the judges' settings and specs, the
report's judge after any key fallback), which the plan (virtuebench.plan) reads."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from virtuebench.config.check_judges import check_judges, judge_specs
from virtuebench.config.check_models import check_model_choices, check_models
from virtuebench.config.check_run import (
    check_cvrr_model_levels,
    check_names,
    check_prompts_and_report,
    check_source_and_levels,
    check_unused_settings,
)
from virtuebench.config.check_sources import check_curation, check_supplement
from virtuebench.config.model_registry import load_registries
from virtuebench.config.model_specs import frame_size_warnings, frame_storage_pixels, model_spec
from virtuebench.config.results import check_results
from virtuebench.config.review import ConfigError, Review
from virtuebench.config.schema import schema_errors, with_defaults
from virtuebench.judge.spec import JudgeSpec
from virtuebench.models.spec import ChoiceInEffect, ModelSpec, resolve_choices


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
    #: Every judge in use as its jobs run it (`judges`' settings split once by its kind), by name.
    judge_specs: dict[str, JudgeSpec] = field(default_factory=dict)


def start_warnings(checked: Checked, runs_jobs: bool) -> list[str]:
    """What the Snakefile prints before the DAG: the checks' warnings and, where the run starts no job (a dry run),
    each missing API key or token, on which a real run stops before its first job (the Snakefile's onstart)."""
    if runs_jobs:
        return list(checked.warnings)
    return [*checked.warnings, *(f"{line}; a real run stops here, before any job" for line in checked.missing_keys)]


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
    review = Review(config, os.environ if environ is None else environ, defer_keys)
    check_results(review, config_dir, base_dir)
    check_source_and_levels(review)
    check_prompts_and_report(review)
    judges, judge = check_judges(review)
    check_names(review)
    registry = load_registries(config["model_registry"], base_dir, config_dir.parent, config_dir / "models.schema.yaml")
    check_models(review, registry)
    check_cvrr_model_levels(review, registry)
    check_supplement(review)
    curation_models = check_curation(review, registry, judges)
    check_model_choices(review, registry, [*config["models"], *curation_models])
    check_unused_settings(review, given)
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
        judge_specs(judges),
    )
