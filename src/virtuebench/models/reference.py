"""Reference backends that need no weights: the anchor rows of the paper's argument.

`refuse` always declines, so it scores 100 on the refusal subset and 0 on the rest; `guess` never
declines and answers from the question text alone with a fixed prior per kind of question, the
behaviour the benchmark is built to expose. Neither looks at the frames.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from virtuebench import REFUSAL_ANSWER
from virtuebench.models.base import DETERMINISTIC, Backend, Reply, Request
from virtuebench.support.settings import settings_from_dict


class RefuseBackend(Backend):
    @classmethod
    def decoding(cls, settings: dict[str, Any]) -> str:
        return DETERMINISTIC

    def __init__(self, settings: dict[str, Any]) -> None:
        self.text = settings.get("text", REFUSAL_ANSWER)

    def answer(self, request: Request) -> Reply:
        return Reply(self.text)


@dataclass(frozen=True)
class Priors:
    """The guess backend's fixed answer per kind of question (settings `priors`)."""

    colour: str = "red"
    shape: str = "circle"
    count: str = "2"
    before_after: str = "before"
    other: str = "yes"


class GuessBackend(Backend):
    @classmethod
    def decoding(cls, settings: dict[str, Any]) -> str:
        return DETERMINISTIC  # a rule on the question's text

    def __init__(self, settings: dict[str, Any]) -> None:
        self.priors = asdict(settings_from_dict(Priors, settings.get("priors", {}), "guess backend priors"))

    def answer(self, request: Request) -> Reply:
        question = request.question.strip()
        lowered = question.lower()
        choice = re.search(r",\s*(.+?)\s+or\s+(.+?)\?\s*$", question)
        if "before or after" in lowered:
            return Reply(self.priors["before_after"])
        if choice and "first" in lowered:
            return Reply(choice.group(1))  # the option named first
        if re.search(r"\bwhat colou?r\b", lowered):
            return Reply(self.priors["colour"])
        if re.search(r"\bwhat shape\b", lowered):
            return Reply(self.priors["shape"])
        if re.search(r"\bhow many\b", lowered):
            return Reply(self.priors["count"])
        return Reply(self.priors["other"])
