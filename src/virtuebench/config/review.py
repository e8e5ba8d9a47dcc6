"""What every section check reads and adds to: the configuration with its defaults, and the review of it (problems stop
the run, warnings are printed, missing keys stop it before the first job); the error that lists the problems."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from virtuebench.support.settings import did_you_mean


class ConfigError(ValueError):
    """The configuration is invalid; the message lists every problem, one per line."""


def and_did_you_mean(name: Any, choices: Iterable[str]) -> str:
    """did_you_mean as the end of a message: "; did you mean 'X'?", or ""."""
    hint = did_you_mean(name, choices)
    return f"; {hint.strip()}" if hint else ""


def not_allowed(where: str, value: Any, allowed: Iterable[str], of: str = "") -> str:
    """The line of a value outside its allowed set, as every check says it: "<where>: 'x' is not allowed; did you mean
    'y'? allowed values (<of>): a, b" (`of`: where the allowed values come from, where they are the configuration's)."""
    allowed = list(allowed)
    named = f" ({of})" if of else ""
    return f"{where}: {value!r} is not allowed; {did_you_mean(value, allowed)}allowed values{named}: {', '.join(allowed)}"


@dataclass
class Review:
    """What the checks found: problems stop the run, warnings are printed, missing keys stop it before the first job."""

    config: dict[str, Any]
    environ: dict[str, str]
    defer_keys: bool
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    missing_keys: list[str] = field(default_factory=list)

    def missing_key(self, message: str) -> None:
        (self.missing_keys if self.defer_keys else self.problems).append(message)
