"""The `openai` backend: any OpenAI-compatible Chat Completions endpoint (OpenAI, Gemini's compatible
endpoint, a vLLM or SGLang server).

The level's frames go as base64 JPEG image parts, in time order, each after a text part naming its
time when `timestamps` is on (format `timestamp_format`; docs/models.md says which form each model
gets and why), followed by the prompt. Generation parameters are sent only where set: reasoning
models (GPT-5) reject `temperature` other than 1 and `max_tokens` with HTTP 400, so their registry
entries set neither. Frames larger than `max_pixels` are shrunk first (the
paper caps the pixels per frame). The client retries 429, 5xx and timeouts with exponential backoff;
a request that still fails raises, and inference records the item as failed and retries it on the
next run, never as an answer; each failed attempt's HTTP status and body is named in the job's log. The key
comes from the environment variable `api_key_env` names and is redacted from every reply and error text
(support/redact.py), so no response record holds it even where the endpoint echoes it.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from virtuebench.models.base import DETERMINISTIC, UNSEEDED, Backend, Reply, Request
from virtuebench.models.frames_io import load_frames
from virtuebench.models.timing import clock_text
from virtuebench.support.openai_client import ChatClient, EndpointUnreachable, read_api_key
from virtuebench.support.settings import setting, settings_from_dict

NULLABLE_INT = {"type": ["integer", "null"], "minimum": 1}
NULLABLE_STR = {"type": ["string", "null"]}


class BackendSetupError(ValueError):
    """The backend cannot start (a missing API key, bad settings); the message says what to set."""


@dataclass(frozen=True)
class OpenAISettings:
    """Every setting of the openai backend, each with its rerun class: the key's variable, the concurrency, the
    retries and the timeout change how the job runs, not its answers."""

    model: str = setting(rerun="answers", schema={"type": "string"}, description="the endpoint's model name")
    base_url: str | None = setting(None, rerun="answers", schema=NULLABLE_STR)
    api_key_env: str | None = setting("OPENAI_API_KEY", rerun="scheduling", schema=NULLABLE_STR)
    max_pixels: int | None = setting(None, rerun="answers", schema=NULLABLE_INT, description="per frame: larger frames are shrunk first")
    jpeg_quality: int = setting(85, rerun="answers", schema={"type": "integer", "minimum": 1, "maximum": 100})
    # OpenAI's image detail ("low", "high", "auto"); None: the endpoint's default.
    detail: str | None = setting(None, rerun="answers", schema=NULLABLE_STR)
    timestamps: bool = setting(False, rerun="answers", schema={"type": "boolean"}, description="precede each frame with its time")
    # {clock}: m:ss (h:mm:ss), {seconds}: the timestamp in seconds.
    timestamp_format: str = setting("Frame at {clock}", rerun="answers", schema={"type": "string"})
    # null: not sent (GPT-5 accepts only its default).
    temperature: float | None = setting(0.0, rerun="answers", schema={"type": ["number", "null"]})
    max_tokens: int | None = setting(None, rerun="answers", schema=NULLABLE_INT)
    # Reasoning models take this instead of max_tokens.
    max_completion_tokens: int | None = setting(None, rerun="answers", schema=NULLABLE_INT)
    # GPT-5: minimal, low, medium (the API's default), high; Gemini: its thinking budget.
    reasoning_effort: str | None = setting(None, rerun="answers", schema=NULLABLE_STR)
    max_concurrency: int = setting(4, rerun="scheduling", schema={"type": "integer", "minimum": 1})
    max_retries: int = setting(5, rerun="scheduling", schema={"type": "integer", "minimum": 0})
    timeout_s: float = setting(120.0, rerun="scheduling", schema={"type": "number", "exclusiveMinimum": 0})

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> OpenAISettings:
        return settings_from_dict(cls, values, "openai backend", BackendSetupError)


def encode_frame(path: Path, max_pixels: int | None, quality: int) -> str:
    """A frame as a JPEG data URL, shrunk (aspect kept) so that width x height <= max_pixels."""
    (image,) = load_frames([path], max_pixels)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode()


def build_messages(request: Request, settings: OpenAISettings) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    for path, timestamp in zip(request.frames, request.timestamps):
        if settings.timestamps:
            content.append({"type": "text", "text": settings.timestamp_format.format(clock=clock_text(timestamp), seconds=timestamp)})
        image: dict[str, Any] = {"url": encode_frame(path, settings.max_pixels, settings.jpeg_quality)}
        if settings.detail:
            image["detail"] = settings.detail
        content.append({"type": "image_url", "image_url": image})
    content.append({"type": "text", "text": request.prompt})
    return [{"role": "user", "content": content}]


class OpenAIBackend(Backend):
    settings_type = OpenAISettings
    frame_pixels_setting = "max_pixels"
    env_imports = ("openai", "av", "polars")

    def __init__(self, settings: dict[str, Any], client=None) -> None:
        self.settings = s = OpenAISettings.from_dict(settings)
        self.max_concurrency = s.max_concurrency
        key = read_api_key(s.api_key_env, f"the openai backend (model {s.model})", BackendSetupError)
        self.chat = ChatClient(key, s.base_url, s.max_retries, s.timeout_s, client, s.model)
        if client is None:  # a dead endpoint stops the job before its first item, not after every item's retries
            try:
                self.chat.check_endpoint(f"model {s.model}", s.api_key_env)
            except EndpointUnreachable as error:
                raise BackendSetupError(str(error)) from None

    @classmethod
    def decoding(cls, settings: dict[str, Any]) -> str:
        """Temperature 0 asks for greedy decoding; otherwise the endpoint samples, with no seed this backend sends."""
        return DETERMINISTIC if OpenAISettings.from_dict(settings).temperature == 0 else UNSEEDED

    def answer(self, request: Request) -> Reply:
        s = self.settings
        completion = self.chat.complete(
            s.model,
            build_messages(request, s),
            temperature=s.temperature,
            max_tokens=s.max_tokens,
            max_completion_tokens=s.max_completion_tokens,
            reasoning_effort=s.reasoning_effort,
        )
        if completion.text is None:
            raise RuntimeError(f"malformed reply from {s.model}: {completion.problem}")
        # A reply cut off at the token limit (GPT-5 can spend it all on unseen reasoning) is kept, marked truncated,
        # and judged as no answer (docs/records.md), never read as a finished answer.
        # The reply's own model name (what an alias such as gpt-5-chat-latest resolved to) goes to `answered_by`.
        return Reply(completion.text, usage=dict(completion.usage), finish_reason=completion.finish_reason, model=completion.model)
