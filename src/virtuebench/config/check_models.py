"""The models' checks: each configured model is a registry entry the run's source can feed, and each of
config.model_choices is a choice some entry declares, at an option of every model of the run that declares it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from virtuebench.config.model_registry import Registry, registry_warnings
from virtuebench.config.review import Review, and_did_you_mean, not_allowed
from virtuebench.models import samples_check
from virtuebench.models.spec import resolve_choices
from virtuebench.support.settings import did_you_mean


def _declared_choices(entries: dict[str, dict[str, Any]]) -> dict[str, dict[str, list[str]]]:
    """{choice: {model: its options}} of every named choice the registry's entries declare."""
    declared: dict[str, dict[str, list[str]]] = {}
    for model, entry in entries.items():
        for choice, spec in (entry.get("choices") or {}).items():
            declared.setdefault(choice, {})[model] = list(spec["options"])
    return declared


def check_model_choices(review: Review, registry: Registry, models: Iterable[str]) -> None:
    """config.model_choices: each a choice some registry entry declares, at an option every model of the run that
    declares it has (entries may declare a choice of the same name with different options; config/models.yaml's
    share theirs). A choice no model of the run declares is accepted with a warning: it changes nothing."""
    declared = _declared_choices(registry.entries)
    in_run = [model for model in models if model in registry.entries]
    for choice, option in review.config["model_choices"].items():
        if choice not in declared:
            review.problems.append(
                f"config.model_choices.{choice}: no entry of {registry.described()} declares a choice {choice!r}"
                f"{and_did_you_mean(choice, declared)}; declared choices: {', '.join(sorted(declared)) or 'none'}"
            )
            continue
        options = sorted({name for names in declared[choice].values() for name in names})
        lacking = [model for model in in_run if model in declared[choice] and option not in declared[choice][model]]
        if option not in options:
            review.problems.append(not_allowed(f"config.model_choices.{choice}", option, options))
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


def valid_picks(entry: dict[str, Any], picked: dict[str, str]) -> dict[str, str]:
    """The picks of config.model_choices that are options of `entry` (the others are config errors, reported)."""
    choices = entry.get("choices") or {}
    return {choice: option for choice, option in picked.items() if choice in choices and option in choices[choice]["options"]}


def check_models(review: Review, registry: Registry) -> None:
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
            resolved, _ = resolve_choices(entries[model], valid_picks(entries[model], config["model_choices"]))
            review.warnings += registry_warnings(model, resolved)
            problems, warnings = samples_check(model, resolved)
            review.problems += [f"config.models[{i}]: {problem}" for problem in problems]
            review.warnings += warnings
