"""The judge kinds, each registered once: its name, its settings with each one's rerun class, and its factory.

A kind lives in one module that defines `KIND = JudgeKind(...)`, and REGISTRY names it there. Everything else reads
this table: get_judge builds a judge with the kind's factory, the config checks validate a judge's settings against
the kind's (virtuebench.config), the judging jobs' tracked params are the kind's `answers` settings (split_settings),
and the schema's allowed kinds and judge settings are filled in from it. Adding a kind is one module and one line
here (docs/extending.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from virtuebench.judge.base import Judge
from virtuebench.judge.inputs import NAMES as INPUT_SETTINGS
from virtuebench.judge.inputs import JudgeInputs, judge_inputs
from virtuebench.support.registry import Registry
from virtuebench.support.settings import rerun_classes, settings_from_dict, settings_schema


class Review(Protocol):
    """What a kind's config check reads and adds to (virtuebench.config's review of the whole configuration)."""

    environ: Mapping[str, str]
    problems: list[str]  # stop the run
    warnings: list[str]  # printed at start-up

    def missing_key(self, message: str) -> None:
        """An API key or token the run needs and lacks: a problem, or (a dry run) a line printed instead."""


@dataclass(frozen=True)
class NoSettings:
    """The settings of a kind that reads none but `kind` (its code's version is what changes its verdicts)."""


#: (the name the config gives the judge, its settings with `kind`, the verdict cache's path or None) -> the judge.
Factory = Callable[[str, dict[str, Any], "str | None"], Judge]
#: (the review, the judge's name, its settings as the config gives them, every judge defined, by name) -> the settings
#: its jobs run it with, or None where a problem was added.
Resolver = Callable[[Review, str, dict[str, Any], Mapping[str, dict[str, Any]]], "dict[str, Any] | None"]


@dataclass(frozen=True)
class JudgeKind:
    name: str
    #: A dataclass whose fields (made with virtuebench.support.settings.setting) are every setting a judge of this kind
    #: reads, each with its rerun class and the JSON Schema of its value.
    settings: type
    build: Factory
    #: The code's version, a tracked param beside the settings: a kind whose verdicts no setting determines (rules,
    #: mcq) re-judges when its code changes what it decides.
    version: str | None = None
    #: The config check beyond the settings' schema (default: the settings the kind reads, parsed by its dataclass).
    resolve: Resolver | None = None
    #: The environment variable holding the API key the judge needs, from its settings (None: it needs none). The
    #: config check names a missing one before any job, and `if_no_key: rules` falls back to the rules judge.
    key_env: Callable[[dict[str, Any]], str | None] | None = None
    #: False: the workflow sets such judges up itself (never under config.judges).
    configurable: bool = True
    #: Settings whose value is another judge's resolved settings (a hybrid's `llm`), split as that judge's own.
    nested: tuple[str, ...] = ()

    def reads(self) -> dict[str, str]:
        """{setting: rerun class} of every setting this kind reads: the judging stage's own (virtuebench.judge.inputs:
        what the judge is given), then its dataclass's, in the order declared."""
        return {**rerun_classes(JudgeInputs), **rerun_classes(self.settings)}

    def settings_from(self, settings: dict[str, Any]) -> Any:
        """The settings dataclass from a judge's settings (those its kind does not read, the stage's input settings,
        `kind` and `version` left out): what a factory builds its judge from. ValueError names a missing required setting."""
        own = rerun_classes(self.settings)
        return settings_from_dict(self.settings, {key: value for key, value in settings.items() if key in own}, f"{self.name} judge")

    def resolved(self, review: Review, name: str, settings: dict[str, Any], defined: Mapping[str, dict[str, Any]]) -> dict[str, Any] | None:
        """The settings a judge's jobs run it with, after its kind's check (problems and warnings go to `review`)."""
        if self.resolve is not None:
            return self.resolve(review, name, settings, defined)
        try:
            self.settings_from(settings)
            judge_inputs(settings)
        except ValueError as error:
            review.problems.append(f"config.judges.{name}: {error}")
            return None
        return {"kind": self.name, **{key: value for key, value in settings.items() if key in self.reads()}}


#: kind name -> "module:attribute" of its JudgeKind (virtuebench.support.registry). The kind's name is what `kind:`
#: says in config.judges.
REGISTRY: Registry[JudgeKind] = Registry(
    "judge kind",
    {
        "rules": "virtuebench.judge.rules:KIND",
        "llm": "virtuebench.judge.llm:KIND",
        "mcq": "virtuebench.judge.mcq:KIND",
        "hybrid": "virtuebench.judge.hybrid:KIND",
        "letter-grade": "virtuebench.judge.letter_grade:KIND",
    },
    expect=JudgeKind,
    named=True,
)


def judge_kind(name: str) -> JudgeKind:
    """The registered kind called `name`."""
    return REGISTRY[name]


def configurable_kinds() -> list[str]:
    """The kinds a judge under config.judges may have (the schema's allowed values of `kind`)."""
    return [name for name in REGISTRY if judge_kind(name).configurable]


def settings_properties() -> dict[str, dict[str, Any]]:
    """The JSON Schema of every setting some configurable kind reads, by name: what a judge under config.judges may
    set (one another kind reads does nothing for it: the config check warns). `kind` itself is the schema's."""
    properties: dict[str, dict[str, Any]] = dict(settings_schema(JudgeInputs))
    for name in configurable_kinds():
        for setting, schema in settings_schema(judge_kind(name).settings).items():
            properties.setdefault(setting, schema)
    return properties


def split_settings(entry: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the settings that change a judge's verdicts, with its kind and code version; those that change only how its
    job runs) of a judge's resolved settings. A setting its kind does not read is in neither; a nested judge's
    settings are split as its own. The stage's input settings (virtuebench.judge.inputs) are tracked at their value
    in effect, given or default, where it is not the one judgments were made with before they existed."""
    kind = judge_kind(entry.get("kind", "rules"))
    tracked: dict[str, Any] = {"kind": kind.name}
    if kind.version is not None:
        tracked["version"] = kind.version
    tracked.update(judge_inputs(entry).changed())
    run: dict[str, Any] = {}
    for setting, rerun in kind.reads().items():
        if setting in INPUT_SETTINGS:
            continue
        if setting in kind.nested:
            inner = entry.get(setting)
            if inner is not None and not isinstance(inner, dict):
                raise ValueError(
                    f"{kind.name} judge: `{setting}` must be resolved to its judge's settings (check_config does), got {inner!r}"
                )
            # the nested judge is given what its owner is given: its own input settings track nothing
            tracked[setting] = {k: v for k, v in split_settings(inner)[0].items() if k not in INPUT_SETTINGS} if inner else None
            if inner:
                run[setting] = split_settings(inner)[1]
        elif setting in entry and rerun in ("answers", "scheduling"):
            (tracked if rerun == "answers" else run)[setting] = entry[setting]
    return tracked, run
