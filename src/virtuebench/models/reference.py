"""Reference backends that need no weights: the anchor rows of the paper's argument.

`refuse` always declines, so it scores 100 on the refusal subset and 0 on the rest; `guess` never
declines and answers from the question text alone with a fixed prior per kind of question, the
behaviour the benchmark is built to expose. Neither looks at the frames.
"""

from __future__ import annotations

import re
from typing import Any

from virtuebench import REFUSAL_ANSWER
from virtuebench.models.base import Backend, Reply, Request


class RefuseBackend(Backend):
    def __init__(self, settings: dict[str, Any]) -> None:
        self.text = settings.get("text", REFUSAL_ANSWER)

    def answer(self, request: Request) -> Reply:
        return Reply(self.text)


DEFAULT_PRIORS = {"colour": "red", "shape": "circle", "count": "2", "before_after": "before", "other": "yes"}


class GuessBackend(Backend):
    def __init__(self, settings: dict[str, Any]) -> None:
        unknown = set(settings.get("priors", {})) - set(DEFAULT_PRIORS)
        if unknown:
            raise ValueError(f"guess backend: unknown prior(s) {sorted(unknown)}; known: {sorted(DEFAULT_PRIORS)}")
        self.priors = {**DEFAULT_PRIORS, **settings.get("priors", {})}

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
