"""The Backend interface every model backend implements, and the request it answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Request:
    """One question at one level: the rendered prompt and the level's frames in time order."""

    instance_id: str
    question: str
    prompt: str
    frames: list[Path]
    timestamps: list[float]
    level: int


@dataclass
class Reply:
    text: str
    usage: dict[str, Any] = field(default_factory=dict)  # token counts and the like, where a backend has them


@runtime_checkable
class Backend(Protocol):
    """A model behind one method. Constructed once per job with the model's `settings` from config."""

    def __init__(self, settings: dict[str, Any]) -> None: ...

    def answer(self, request: Request) -> Reply: ...
