"""Judges: decide refusal and correctness of a response against a per-level ground truth.

Only the offline `rules` judge exists so far; LLM judges plug in here by name.
"""

from __future__ import annotations

from virtuebench.judge.base import Judge, Verdict
from virtuebench.judge.rules import RulesJudge

JUDGES: dict[str, type] = {"rules": RulesJudge}

__all__ = ["JUDGES", "Judge", "Verdict", "get_judge"]


def get_judge(name: str) -> Judge:
    try:
        return JUDGES[name]()
    except KeyError:
        raise ValueError(f"unknown judge {name!r}; known judges: {sorted(JUDGES)}") from None
