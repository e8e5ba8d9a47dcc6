"""A model as its jobs run it, resolved once from its registry entry: `ModelSpec`.

The spec holds what the registry keeps apart (the backend, the weights' hub id and revision, the family, the env,
the resources) and the entry's backend settings split by the backend's settings dataclass (each field's rerun class,
virtuebench.support.settings.setting): `answers`, the one tracked param of every job that runs the model, and `run`,
what reaches the job untracked. The weights' commit is worked out here (`commit`), before loading by the inference
job and after loading by `virtuebench.models.load_backend`; the stored frames' pixel cap (`frame_pixels`) is the
setting the backend declares as its frame cap.

A registry entry may declare named choices (`choices`: the papers' open decisions, docs/choices.md), each a set of
options that override some of its keys; `resolve_choices` applies the options a run picks (the workflow config's
`model_choices`) before the spec is made, so the options' hub ids, revisions and settings reach the jobs through the
same tracked halves as any other key: switching an option reruns exactly the models that declare the choice.

The walk of a model setting, rule side then job side (docs/extending.md, "A model family"): config/models.yaml ->
virtuebench.config (the schema, filled from the backend registry) -> `resolve_spec` here -> rules/common.smk (the two
halves as JSON on the shell line) -> virtuebench.inference -> `ModelSpec.from_job` here -> virtuebench.models
(load_backend) -> the backend and its settings dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from virtuebench.models.backends import backend_class
from virtuebench.models.weights import resolve_commit

#: A registry entry's own keys that the spec reads into fields (their rerun classes are config/models.schema.yaml's).
WEIGHTS_KEYS = ("hub_id", "revision", "family")
RESOURCE_KEYS = ("gpus", "mem_gb", "runtime_min", "max_level")


@dataclass(frozen=True)
class Resources:
    """What a model's jobs ask the scheduler for (scheduling: a change reruns nothing); None where the entry is silent."""

    gpus: int | None = None
    mem_gb: int | None = None
    runtime_min: int | None = None
    max_level: int | None = None  # the highest frame level scheduled for it


@dataclass(frozen=True)
class ModelSpec:
    name: str
    backend: str
    hub_id: str | None
    revision: str | None
    family: str | None
    env: str | None
    resources: Resources
    #: The tracked param of the model's jobs: the entry's `answers` keys and its `answers` settings (JSON-ready).
    answers: dict[str, Any]
    #: What reaches the jobs untracked: the entry's `scheduling` keys and its `scheduling` settings.
    run: dict[str, Any]
    #: The largest frame (pixels) the backend asks for, from the setting it declares as its cap; None: the source's.
    frame_pixels: int | None = None
    _settings: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def settings(self) -> dict[str, Any]:
        """The backend's settings, both halves together: what it is built with."""
        return dict(self._settings)

    def commit(self, snapshot: str | Path | None = None) -> str | None:
        """The weights' commit (models/weights.py): before loading, what can be told from the revision, a local folder
        or the cache; after loading, with the folder the backend loaded from where it names one."""
        return resolve_commit(self.hub_id, self.revision, snapshot=snapshot)

    @classmethod
    def from_job(cls, name: str, answers: dict[str, Any], run: dict[str, Any]) -> ModelSpec:
        """The spec again from the two halves the job was given (rules/common.smk: `answers`, `run`)."""
        settings = {**(answers.get("settings") or {}), **(run.get("settings") or {})}
        kinds = {**answers, **run}
        resources = Resources(**{key: kinds[key] for key in RESOURCE_KEYS if key in kinds})
        backend = answers["backend"]
        return cls(
            name,
            backend,
            answers.get("hub_id"),
            answers.get("revision"),
            answers.get("family"),
            answers.get("env"),
            resources,
            answers,
            run,
            _frame_pixels(backend, settings),
            settings,
        )


def settings_classes(backend: str) -> dict[str, str]:
    """{setting: rerun class} the backend's settings dataclass declares (`settings_type`, each field a `setting`);
    {} where it declares none or cannot be imported here (a backend of its own environment): then every setting is
    taken to change the answers, the safe side."""
    try:
        settings_type = backend_class(backend).settings_type
    except ValueError:
        return {}
    if settings_type is None:
        return {}
    return {f.name: f.metadata.get("rerun", "answers") for f in fields(settings_type)}


def _frame_pixels(backend: str, settings: dict[str, Any]) -> int | None:
    try:
        name = backend_class(backend).frame_pixels_setting
    except ValueError:
        return None
    return settings.get(name) if name else None


def resolve_spec(name: str, entry: dict[str, Any], entry_classes: dict[str, str]) -> ModelSpec:
    """The spec of registry entry `entry` (checked against config/models.schema.yaml), whose own keys' rerun classes
    are `entry_classes` (the schema's x-rerun: virtuebench.config.setting_classes); a description key is in neither half."""
    answers = {key: value for key, value in entry.items() if key != "settings" and entry_classes.get(key) == "answers"}
    run = {key: value for key, value in entry.items() if key != "settings" and entry_classes.get(key) == "scheduling"}
    classes = settings_classes(entry["backend"])
    settings = dict(entry.get("settings") or {})
    answers["settings"] = {key: value for key, value in settings.items() if classes.get(key, "answers") == "answers"}
    run["settings"] = {key: value for key, value in settings.items() if classes.get(key) == "scheduling"}
    return ModelSpec.from_job(name, answers, run)


#: The keys a choice's option may set on its entry (config/models.schema.yaml, `choices`).
OPTION_KEYS = ("hub_id", "revision", "provenance", "settings")


@dataclass(frozen=True)
class ChoiceInEffect:
    """One named choice of a resolved entry: the option the run uses, and whether it is the entry's default."""

    choice: str
    option: str
    default: bool

    def describe(self) -> str:
        return f"{self.choice} = {self.option}" + (" (default)" if self.default else "")


def apply_option(entry: dict[str, Any], option: dict[str, Any]) -> dict[str, Any]:
    """`entry` with one option's keys: each key replaces the entry's, except `settings`, merged key by key, where a
    setting given as null removes the entry's (the backend's own default then applies). A setting cannot be set to
    null by an option: none of the registry's choices needs it, and null as "remove" lets an option undo a setting."""
    resolved = {key: value for key, value in entry.items() if key != "choices"}
    for key in OPTION_KEYS:
        if key not in option:
            continue
        if key != "settings":
            resolved[key] = option[key]
            continue
        settings = dict(resolved.get("settings") or {})
        for name, value in (option["settings"] or {}).items():
            if value is None:
                settings.pop(name, None)
            else:
                settings[name] = value
        resolved["settings"] = settings
    return resolved


def resolve_choices(entry: dict[str, Any], picked: dict[str, str]) -> tuple[dict[str, Any], list[ChoiceInEffect]]:
    """(the entry as the run uses it, its choices in effect): each choice it declares at the option `picked` names
    (the workflow config's `model_choices`), else at its default; the `choices` key itself is dropped. The options
    are checked before (virtuebench.config: an option a choice lacks is a config error)."""
    resolved = {key: value for key, value in entry.items() if key != "choices"}
    in_effect = []
    for choice, declared in (entry.get("choices") or {}).items():
        option = picked.get(choice, declared["default"])
        if option not in declared["options"]:  # the config check says so first, naming the key (virtuebench.config)
            raise ValueError(f"choice {choice}: {option!r} is not one of its options {', '.join(declared['options'])}")
        resolved = apply_option(resolved, declared["options"][option])
        in_effect.append(ChoiceInEffect(choice, option, option == declared["default"]))
    return resolved, in_effect
