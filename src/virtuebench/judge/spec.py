"""A judge as its jobs run it, resolved once from its settings: `JudgeSpec`, the judges' counterpart of a model's
`ModelSpec` (virtuebench.models.spec).

The config check resolves each judge in use (virtuebench.config: a hybrid's `llm` becomes its LLM judge's settings)
and makes its spec once; the plan hands the rules its two halves as they are: `answers`, the tracked param of every
job that runs the judge (its kind, its code's version, the settings that change its verdicts:
virtuebench.judge.kinds.split_settings), and `run`, what reaches the job untracked (key variable, concurrency,
retries). The job merges the two halves back into the settings it builds the judge from (virtuebench.judge.__main__).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from virtuebench.judge.inputs import NAMES as INPUT_SETTINGS
from virtuebench.judge.kinds import split_settings


@dataclass(frozen=True)
class JudgeSpec:
    name: str  # the name the config gives it: its folder under judgments/, its --judge
    #: Its settings as resolved (what its kind reads; a hybrid's `llm` as its LLM judge's settings).
    settings: dict[str, Any]
    #: The tracked param of its jobs: its kind and code version, the settings that change its verdicts (JSON-ready).
    answers: dict[str, Any]
    #: What reaches its jobs untracked: the settings that change only how they run.
    run: dict[str, Any]

    @classmethod
    def resolve(cls, name: str, settings: Mapping[str, Any]) -> JudgeSpec:
        """The spec of a judge's resolved settings; ValueError where a nested judge is not resolved (a hybrid's `llm`
        given by name: the config check resolves it)."""
        answers, run = split_settings(dict(settings))
        return cls(name, dict(settings), answers, run)

    @property
    def kind(self) -> str:
        return self.answers["kind"]

    def tracked(self, responses: bool = True) -> dict[str, Any]:
        """The settings that change its verdicts (`answers`) for a job that judges responses records; with
        `responses=False`, for a job that judges answers itself (the curation's difficulty filter), which the judging
        stage's input settings (virtuebench.judge.inputs) do not reach: those left out."""
        if responses:
            return dict(self.answers)
        return {key: value for key, value in self.answers.items() if key not in INPUT_SETTINGS}
