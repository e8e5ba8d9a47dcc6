"""The Backend interface every model backend implements, and the request it answers.

A backend answers one request at a time (`answer`). What it can do beyond that is declared here with
defaults, so inference never has to probe for it:
- `batch_size` > 1: `answer_batch` takes that many requests at once (vLLM).
- `max_concurrency` > 1: `answer` may be called from that many threads at once (API backends).
- `pipelined`: `answer` is split into `prepare` (CPU: read and resize the frames, run the processor)
  and `generate` (the accelerator), so inference prepares the next item while the current one
  generates.
A backend that loads weights sets `weights_commit` once loaded; inference writes it into every record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from virtuebench.models.timing import FrameTimes


@dataclass(frozen=True)
class Request:
    """One question at one level: the rendered prompt and the level's frames in time order."""

    instance_id: str
    question: str
    prompt: str
    frames: list[Path]
    timestamps: list[float]
    level: int
    duration_s: float | None = None  # of the source video (the frame manifest's), for the frame times

    @property
    def times(self) -> FrameTimes:
        return FrameTimes.of(self.timestamps, self.duration_s)


@dataclass
class Reply:
    text: str  # the final answer: what the judge reads
    usage: dict[str, Any] = field(default_factory=dict)  # token counts and the like, where a backend has them
    thinking: str | None = None  # a thinking model's reasoning, kept apart from the answer (models/families.py)
    finish_reason: str | None = None  # "stop" or "length" (the token limit), where the backend can tell
    unclosed_thinking: bool = False  # the reply ended inside a thinking block: no answer was given

    @property
    def truncated(self) -> bool:
        """Cut off at the token limit or inside an unclosed thinking block: judged as no answer (docs/records.md)."""
        return self.finish_reason == "length" or self.unclosed_thinking


class Backend:
    """A model behind one method. Constructed once per job with the model's `settings` from config."""

    batch_size: int = 1
    max_concurrency: int = 1
    pipelined: bool = False
    weights_commit: str | None = None  # the commit of the weights loaded (models/weights.py); None: no weights
    settings_type: type | None = None  # the dataclass its settings are read into (checked against the registry)

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings

    def answer(self, request: Request) -> Reply:
        return self.generate(self.prepare(request))

    def prepare(self, request: Request) -> Any:
        """CPU work for one request; its result goes to `generate` (pipelined backends override both)."""
        return request

    def generate(self, prepared: Any) -> Reply:
        raise NotImplementedError(f"{type(self).__name__} implements neither answer nor generate")

    def answer_batch(self, requests: list[Request]) -> list[Reply]:
        return [self.answer(request) for request in requests]
