"""What the OpenAI-compatible callers share (the llm judge, the openai backend): the key from the
environment, a lazily built client with retries and a timeout, and scrubbing the key from any text."""

from __future__ import annotations

import os


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
