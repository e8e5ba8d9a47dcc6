"""Judges: decide refusal and correctness of a response against a per-level ground truth.

Every kind of judge (rules, llm, mcq, hybrid, VideoEval-Pro's authors' letter grade, ...) is registered once, in
virtuebench.judge.kinds, with its settings and its factory; get_judge builds one by name from that registry.
"""

from __future__ import annotations

from typing import Any

from virtuebench.judge.base import Judge, Verdict
from virtuebench.judge.inputs import judge_inputs
from virtuebench.judge.kinds import REGISTRY, judge_kind

__all__ = ["Judge", "Verdict", "get_judge"]


def get_judge(name: str, settings: dict[str, Any] | None = None, cache_path: str | None = None) -> Judge:
    """The judge called `name`: one whose settings give its kind (a hybrid's `llm`: the resolved settings of its LLM
    judge, or None for none), or a kind's own name (`rules`, `mcq`). Every kind is built under `name`, which its records
    carry."""
    settings = dict(settings or {})
    kind = settings.get("kind", name if name in REGISTRY else None)
    if kind not in REGISTRY:
        raise ValueError(f"unknown judge {name!r}: give its settings with kind one of {list(REGISTRY)}")
    judge = judge_kind(kind).build(name, settings, cache_path)
    judge.inputs = judge_inputs(settings)  # what the judging stage gives it (virtuebench.judge.inputs)
    return judge
