"""The one way this project calls an OpenAI-compatible Chat Completions endpoint (the `openai` model
backend, the `llm` judge, the curation filters through the backend): the key from the environment, a
lazily built client that retries 429, 5xx and timeouts with backoff, one request with only the
parameters that are set, the reply's text, model snapshot and token counts. Nothing here knows about models
or judges.

Everything that leaves the client (the reply's text and model snapshot, every error text) has passed the
client's `Redactor` (support/redact.py): the key, and any "Bearer ..." or "Authorization: ..." credential an
endpoint echoes, read "[REDACTED]", so no record, cache or log line written from it holds the key.

A request that fails is named in the job's log (stderr, which the workflow's rules send to logs/...): each
failed attempt's HTTP status, URL and (redacted, shortened) body as it happens, then the final failure of the
request once the client's retries are spent.

Before a job's first request, `check_endpoint` finds a dead endpoint in seconds rather than after every
item's retries (14 s an item with the client's backoff): a host that does not resolve, a refused connection,
a failed TLS handshake, or a `GET /models` (the health check OpenAI-compatible servers offer) that cannot
connect or is refused the key. Timeouts, 429 and 5xx are left to the retries: they pass.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import sys
import threading
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from virtuebench.support.redact import Redactor

DEFAULT_BASE_URL = "https://api.openai.com/v1"  # the openai client's default
PROBE_TIMEOUT_S = 5.0
LOGGED_BODY_CHARS = 300  # how much of a failed request's body a log line shows


class ChatError(RuntimeError):
    """A request failed after the client's retries; the message is already scrubbed of the key."""


class EndpointUnreachable(ChatError):
    """The endpoint cannot be reached at all (DNS, refused connection, TLS) or refuses the key: no item can succeed."""


def probe_connection(base_url: str, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """Why `base_url`'s host cannot be reached (DNS, refused, TLS), or None (reached, or only slow: left to retries)."""
    parts = urlsplit(base_url)
    host, secure = parts.hostname, parts.scheme == "https"
    if not host:
        return f"{base_url!r} names no host"
    port = parts.port or (443 if secure else 80)
    if _proxied(parts.scheme, host):
        return None  # the client reaches it through the proxy (HTTPS_PROXY and the like), which a direct probe would miss
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as connection:
            if secure:
                with ssl.create_default_context().wrap_socket(connection, server_hostname=host):
                    pass
    except socket.gaierror as error:
        return f"the host {host} does not resolve ({error.strerror or error})"
    except ConnectionRefusedError:
        return f"nothing accepts connections on {host}:{port} (connection refused)"
    except ssl.SSLError as error:
        return f"the TLS handshake with {host}:{port} failed ({error.reason or error})"
    except TimeoutError:
        return None  # slow, not dead: the requests' own timeouts and retries decide
    except OSError as error:  # unreachable network, reset: nothing will get through
        return f"{host}:{port} cannot be reached ({error.strerror or error})"
    return None


def _proxied(scheme: str, host: str) -> bool:
    """Whether the environment routes requests to `host` through a proxy, as the openai client's httpx reads it."""
    proxies = urllib.request.getproxies_environment()
    if not (proxies.get(scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass_environment(host, proxies)


def read_api_key(env_var: str | None, purpose: str, error: type[Exception] = ValueError) -> str:
    """The key in `env_var`; "EMPTY" for a server that needs none (env_var None)."""
    if env_var is None:
        return "EMPTY"
    value = os.environ.get(env_var, "")
    if not value:
        raise error(f"{purpose} needs an API key: set the environment variable {env_var}")
    return value


def make_client(api_key: str, base_url: str | None, max_retries: int, timeout_s: float, event_hooks: dict[str, list] | None = None):
    from openai import DefaultHttpxClient, OpenAI

    # The client retries 429, 5xx, connection errors and timeouts with exponential backoff. DefaultHttpxClient
    # keeps the openai client's own defaults (timeouts, connection limits, redirects, proxies from the environment).
    http_client = DefaultHttpxClient(event_hooks=event_hooks) if event_hooks else None
    return OpenAI(api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout_s, http_client=http_client)


def print_to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def shorten(text: str, limit: int = LOGGED_BODY_CHARS) -> str:
    """`text` on one line, cut to `limit` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class Completion:
    text: str | None  # None where the reply had no choices or no message content
    model: str  # the snapshot the endpoint reports
    usage: dict[str, int] = field(default_factory=dict)  # prompt_tokens, completion_tokens (+ reasoning_tokens)
    problem: str | None = None  # why text is None
    finish_reason: str | None = None  # "stop", or "length" where the reply hit the token limit


class ChatClient:
    """A key, an endpoint and a client built on first use; `complete` sends one request.

    `who` names the caller in log lines (a judge, a model); `warn` writes one (default: stderr)."""

    def __init__(
        self,
        api_key: str,
        base_url: str | None,
        max_retries: int,
        timeout_s: float,
        client=None,
        who: str | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self._key, self._base_url, self._max_retries, self._timeout_s = api_key, base_url, max_retries, timeout_s
        self._client = client
        self.redactor = Redactor([api_key])
        self.who = who
        self._warn = warn or print_to_stderr
        self._attempts = threading.local()  # the attempt the current thread's request is at (1-based)

    @property
    def client(self):
        if self._client is None:
            hooks = {"request": [self._on_request], "response": [self._on_response]}
            self._client = make_client(self._key, self._base_url, self._max_retries, self._timeout_s, hooks)
        return self._client

    def redact(self, text: str) -> str:
        return self.redactor.text(text)

    def _on_request(self, request) -> None:
        """Which attempt this is: the openai client numbers its retries in a header of each request it sends."""
        try:
            self._attempts.number = int(request.headers.get("x-stainless-retry-count", "0")) + 1
        except ValueError:
            self._attempts.number = getattr(self._attempts, "number", 0) + 1

    def _on_response(self, response) -> None:
        """One log line for each Chat Completions attempt the endpoint answers with an HTTP error (not the GET
        health check, which says its own)."""
        request = response.request
        if response.status_code < 400 or request.method == "GET":
            return
        try:
            response.read()  # the openai client reads it too; the second read is free
            body = response.text
        except Exception as error:  # a body cut off: say so rather than break the request
            body = f"(body unreadable: {type(error).__name__})"
        try:
            model = json.loads(request.content).get("model")
        except Exception:
            model = None
        who = self.who or model or "request"
        attempt = getattr(self._attempts, "number", 1)
        line = f"warning: {who}: HTTP {response.status_code} from {request.url} (attempt {attempt} of {self._max_retries + 1})"
        # Redacted before it is shortened: a cut may not leave part of a key.
        self._warn(self.redact(f"{line}: {shorten(self.redact(body))}"))

    def check_endpoint(self, who: str, key_env: str | None) -> None:
        """EndpointUnreachable naming `who`, the base_url and the key's variable when no request can succeed."""
        from openai import APIConnectionError, APITimeoutError, AuthenticationError, PermissionDeniedError

        base_url = self._base_url or DEFAULT_BASE_URL
        where = f"{who}: base_url {base_url}"
        key = f"the key in {key_env}" if key_env else "no key (api_key_env: null)"
        problem = probe_connection(base_url)
        if problem is None:
            try:
                self.client.with_options(max_retries=0, timeout=2 * PROBE_TIMEOUT_S).models.list()
            except APITimeoutError:
                pass  # slow: the requests' retries decide
            except APIConnectionError as error:
                problem = f"GET /models could not connect ({self.redact(str(error))})"
            except (AuthenticationError, PermissionDeniedError) as error:
                problem = f"the endpoint refused {key} (HTTP {error.status_code})"
            except Exception:  # no /models on this server (404 and the like): nothing learnt, carry on
                pass
        if problem:
            raise EndpointUnreachable(self.redact(f"{where}: {problem}; check base_url and {key}"))

    def complete(self, model: str, messages: list[dict[str, Any]], **options: Any) -> Completion:
        """One Chat Completions request with the options that are not None; ChatError when it fails."""
        sent = {name: value for name, value in options.items() if value is not None}
        self._attempts.number = 0
        try:
            completion = self.client.chat.completions.create(model=model, messages=messages, **sent)
        except Exception as error:  # the client already retried 429/5xx/timeouts with backoff
            message = self.redact(f"{type(error).__name__}: {error}")
            attempts = getattr(self._attempts, "number", 0)
            tries = f" after {attempts} attempt{'s' if attempts != 1 else ''}" if attempts else ""
            self._warn(self.redact(f"error: {self.who or model}: request failed{tries}, giving up on it: {shorten(message)}"))
            raise ChatError(message) from None
        usage = getattr(completion, "usage", None)
        counts = {name: getattr(usage, name, 0) or 0 for name in ("prompt_tokens", "completion_tokens")} if usage is not None else {}
        reasoning = getattr(getattr(usage, "completion_tokens_details", None), "reasoning_tokens", None)
        if reasoning:  # reasoning models (GPT-5) think unseen: only the count comes back
            counts["reasoning_tokens"] = reasoning
        snapshot = self.redact(getattr(completion, "model", None) or model)
        if not getattr(completion, "choices", None):
            return Completion(None, snapshot, counts, "no choices")
        choice = completion.choices[0]
        text = self.redactor.text(choice.message.content)  # verbatim but for the key an endpoint may echo
        finish_reason = getattr(choice, "finish_reason", None)
        if text is None and finish_reason == "length":  # a reasoning model that spent the whole limit thinking
            text = ""
        return Completion(text, snapshot, counts, None if text is not None else "no message content", finish_reason)
