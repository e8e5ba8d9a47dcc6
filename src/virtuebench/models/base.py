"""The Backend interface every model backend implements, and the request it answers.

A backend answers one request at a time (`answer`). What it can do beyond that is declared here with
defaults, so inference never has to probe for it:
- `batch_size` > 1: `answer_batch` takes that many requests at once (vLLM).
- `max_concurrency` > 1: `answer` may be called from that many threads at once (API backends).
- `pipelined`: `answer` is split into `prepare` (CPU: read and resize the frames, run the processor)
  and `generate` (the accelerator), so inference prepares the next item while the current one
  generates.
A backend that loads weights sets `loads_weights` once loaded (and `weights_folder` where it loaded them from a folder
of its own): `load_backend` then sets `weights_commit`, which inference writes into every record.

What the rest of the workflow reads from the class, its registration (virtuebench.models.backends.BACKENDS):
- `settings_type`: the dataclass its settings are read into, each field a `virtuebench.support.settings.setting`
  with its rerun class (`answers`: a tracked param of its jobs; `scheduling`: reaches them untracked) and the JSON
  Schema of its value, which the config check applies to a registry entry's `settings`.
- `frame_pixels_setting`: the setting that caps a frame's pixels (`frames.max_pixels: auto` stores the frames at
  the largest cap among the models run).
- `env_imports`: what the environment of its route must import beyond its own module (`make env-check`).
- `decoding`: what its settings say of an item asked again (a sampled model's runs, models.yaml `samples`): the same
  answer every time (`deterministic`: greedy decoding, a rule), a sample seeded per run (`seeded`: a rerun repeats it),
  a sample no seed fixes (`unseeded`), or None where it cannot tell.
- `from_spec`: how it is built from its resolved spec (models/spec.py); a backend that loads weights takes the
  spec's hub id, revision and family there, kept apart from its settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from virtuebench.models.timing import FrameTimes

if TYPE_CHECKING:
    from virtuebench.models.spec import ModelSpec


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
    # Which of a sampled model's runs this is (models.yaml `samples`; 0 for a model run once): a backend that samples
    # seeds the request with its seed + sample, so that run k samples the same answer on every rerun and resume.
    sample: int = 0

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
    model: str | None = None  # the model that answered as the endpoint names it (an API reply's `model`)

    @property
    def truncated(self) -> bool:
        """Cut off at the token limit or inside an unclosed thinking block: judged as no answer (docs/records.md)."""
        return self.finish_reason == "length" or self.unclosed_thinking


#: Backend.decoding's answers: what the config check makes of `samples` > 1 (virtuebench.models.samples_check).
DETERMINISTIC, SEEDED, UNSEEDED = "deterministic", "seeded", "unseeded"


class Backend:
    """A model behind one method. Constructed once per job with the model's `settings` from config."""

    batch_size: int = 1
    max_concurrency: int = 1
    pipelined: bool = False
    weights_commit: str | None = None  # the commit of the weights loaded (models/weights.py); None: no weights
    loads_weights: bool = False  # True once it loaded weights by its spec's hub id: load_backend records their commit
    weights_folder: Path | str | None = None  # the folder it loaded them from, where not the Hugging Face cache
    settings_type: type | None = None  # the dataclass its settings are read into, each setting's rerun class on it
    frame_pixels_setting: str | None = None  # the setting capping a frame's pixels (config.frames.max_pixels: auto)
    env_imports: tuple[str, ...] = ()  # what its route's environment must import beyond its module (environments.py)

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings

    @classmethod
    def decoding(cls, settings: dict[str, Any]) -> str | None:
        """DETERMINISTIC, SEEDED or UNSEEDED for a registry entry's `settings`; None: this backend cannot tell."""
        return None

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> Backend:
        """Built from a resolved model spec: with its settings (a backend that loads weights takes the spec too)."""
        return cls(spec.settings)

    def answer(self, request: Request) -> Reply:
        return self.generate(self.prepare(request))

    def prepare(self, request: Request) -> Any:
        """CPU work for one request; its result goes to `generate` (pipelined backends override both)."""
        return request

    def generate(self, prepared: Any) -> Reply:
        raise NotImplementedError(f"{type(self).__name__} implements neither answer nor generate")

    def answer_batch(self, requests: list[Request]) -> list[Reply]:
        return [self.answer(request) for request in requests]
