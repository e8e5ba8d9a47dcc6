"""Secrets out of everything written: one helper, applied where replies and errors leave the API client
(support/openai_client.py), so the judges and the API model backend all write redacted text.

A `Redactor` holds the secret values (the API key a client was built with, the value of the variable it read)
and replaces each, wherever it occurs, by "[REDACTED]": "Bearer sk-..." becomes "Bearer [REDACTED]". A value
shorter than 8 characters is not treated as a secret (replacing "EMPTY" or "abc" everywhere would mangle
replies). Credentials the endpoint echoes that are not one of those values are caught by pattern: the token of
"Bearer <token>", the value of an "Authorization:", "api-key:" or "x-api-key:" header (as a header line, JSON or
a Python dict), and OpenAI-style "sk-..." keys. Everything else in the text is kept verbatim.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import overload

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 8

# A token counts as a credential only where it is long and holds a digit: "Bearer authentication" stays prose.
# After a scheme ("Basic dXNl...") any long token is one.
_ANY_TOKEN = r"(?!\[REDACTED\])[A-Za-z0-9\-._~+/]{8,}=*"
_TOKEN = r"(?=[A-Za-z0-9\-._~+/]*\d)" + _ANY_TOKEN
_BEARER = re.compile(rf"(?i)\b(bearer\s+){_TOKEN}")
_HEADER = re.compile(
    rf"""(?i)\b((?:proxy-)?authorization|x-api-key|api-key|x-goog-api-key)(["']?\s*[:=]\s*["']?)"""
    rf"""(?:((?:bearer|basic|token|apikey)\s+){_ANY_TOKEN}|{_TOKEN})"""
)
_OPENAI_KEY = re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}")


class Redactor:
    """Replaces the secrets it holds, and credential-shaped tokens, by [REDACTED]; None passes through."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._secrets: tuple[str, ...] = ()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | None) -> None:
        """Hold `secret` too (and its JSON-escaped form, where that differs); short or empty values are ignored."""
        if not secret or len(secret) < MIN_SECRET_LENGTH:
            return
        forms = {secret, json.dumps(secret)[1:-1]}
        # Longest first: a secret that contains another is replaced whole.
        self._secrets = tuple(sorted(set(self._secrets) | forms, key=len, reverse=True))

    @property
    def secrets(self) -> tuple[str, ...]:
        return self._secrets

    @overload
    def text(self, value: str) -> str: ...

    @overload
    def text(self, value: None) -> None: ...

    def text(self, value: str | None) -> str | None:
        """`value` with every secret and credential-shaped token replaced by [REDACTED]."""
        if not value:
            return value
        for secret in self._secrets:
            value = value.replace(secret, REDACTED)
        value = _HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3) or ''}{REDACTED}", value)
        value = _BEARER.sub(lambda m: f"{m.group(1)}{REDACTED}", value)
        return _OPENAI_KEY.sub(REDACTED, value)

    __call__ = text
