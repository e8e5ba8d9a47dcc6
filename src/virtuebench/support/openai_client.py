"""The one way this project calls an OpenAI-compatible Chat Completions endpoint (the `openai` model
backend, the `llm` judge, the curation filters through the backend): the key from the environment, a
lazily built client that retries 429, 5xx and timeouts with backoff, one request with only the
parameters that are set, the reply's text, model snapshot and token counts, and the key scrubbed from
every error text. Nothing here knows about models or judges.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any


class ChatError(RuntimeError):
    """A request failed after the client's retries; the message is already scrubbed of the key."""


def read_api_key(env_var: str | None, purpose: str, error: type[Exception] = ValueError) -> str:
    """The key in `env_var`; "EMPTY" for a server that needs none (env_var None)."""
    if env_var is None:
        return "EMPTY"
    value = os.environ.get(env_var, "")
    if not value:
        raise error(f"{purpose} needs an API key: set the environment variable {env_var}")
    return value


def make_client(api_key: str, base_url: str | None, max_retries: int, timeout_s: float):
    from openai import OpenAI

    # The client retries 429, 5xx, connection errors and timeouts with exponential backoff.
    return OpenAI(api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout_s)


def redact(text: str, api_key: str) -> str:
    return text.replace(api_key, "[redacted]") if api_key and api_key != "EMPTY" else text


@dataclass
class Completion:
    text: str | None  # None where the reply had no choices or no message content
    model: str  # the snapshot the endpoint reports
    usage: dict[str, int] = field(default_factory=dict)  # prompt_tokens, completion_tokens (+ reasoning_tokens)
    problem: str | None = None  # why text is None


class ChatClient:
    """A key, an endpoint and a client built on first use; `complete` sends one request."""

    def __init__(self, api_key: str, base_url: str | None, max_retries: int, timeout_s: float, client=None) -> None:
        self._key, self._base_url, self._max_retries, self._timeout_s = api_key, base_url, max_retries, timeout_s
        self._client = client

    @property
    def client(self):
        if self._client is None:
            self._client = make_client(self._key, self._base_url, self._max_retries, self._timeout_s)
        return self._client

    def redact(self, text: str) -> str:
        return redact(text, self._key)

    def complete(self, model: str, messages: list[dict[str, Any]], **options: Any) -> Completion:
        """One Chat Completions request with the options that are not None; ChatError when it fails."""
        sent = {name: value for name, value in options.items() if value is not None}
        try:
            completion = self.client.chat.completions.create(model=model, messages=messages, **sent)
        except Exception as error:  # the client already retried 429/5xx/timeouts with backoff
            raise ChatError(self.redact(f"{type(error).__name__}: {error}")) from None
        usage = getattr(completion, "usage", None)
        counts = {name: getattr(usage, name, 0) or 0 for name in ("prompt_tokens", "completion_tokens")} if usage is not None else {}
        reasoning = getattr(getattr(usage, "completion_tokens_details", None), "reasoning_tokens", None)
        if reasoning:  # reasoning models (GPT-5) think unseen: only the count comes back
            counts["reasoning_tokens"] = reasoning
        snapshot = getattr(completion, "model", None) or model
        if not getattr(completion, "choices", None):
            return Completion(None, snapshot, counts, "no choices")
        text = completion.choices[0].message.content
        return Completion(text, snapshot, counts, None if text is not None else "no message content")
