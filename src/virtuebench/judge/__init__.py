"""Judges: decide refusal and correctness of a response against a per-level ground truth.

`rules` is offline and built in, as is `mcq` (multiple-choice replies scored by their letter); `llm` judges
(virtuebench.judge.llm) are defined by name in config with their model, endpoint and prompt; a `hybrid` judge
(virtuebench.judge.hybrid) takes the rules' verdict where the rules are confident and an `llm` judge's otherwise; a
`letter-grade` judge (virtuebench.judge.letter_grade) is VideoEval-Pro's authors' grader, with their prompt from a file.
"""

from __future__ import annotations

from typing import Any

from virtuebench.judge.base import Judge, Verdict
from virtuebench.judge.rules import RulesJudge

KINDS = ("rules", "llm", "mcq", "hybrid")  # the kinds a judge under config.judges may have (config/schema.yaml)
#: Kinds the workflow sets up itself: `letter-grade` judges VideoEval-Pro with supplement.videoevalpro_grader: authors.
WORKFLOW_KINDS = ("letter-grade",)

__all__ = ["KINDS", "WORKFLOW_KINDS", "Judge", "Verdict", "get_judge", "judge_version"]


def judge_version(kind: str) -> str:
    """The code version of a built-in judge (rules, mcq): a new version re-judges what it judged."""
    if kind == "rules":
        from virtuebench.judge.rules import VERSION

        return VERSION
    if kind == "mcq":
        from virtuebench.judge.mcq import VERSION

        return VERSION
    raise ValueError(f"judge kind {kind!r} has no code version: only rules and mcq are built in")


def get_judge(name: str, settings: dict[str, Any] | None = None, cache_path: str | None = None) -> Judge:
    """The judge called `name`: `rules`, or one whose settings give its kind (a hybrid's `llm`: the resolved
    settings of its LLM judge, or None for none). Every kind is built under `name`, which its records carry."""
    settings = dict(settings or {})
    kind = settings.get("kind", name if name in KINDS else None)
    if kind == "rules":
        return RulesJudge(name)
    if kind == "mcq":
        from virtuebench.judge.mcq import McqJudge

        return McqJudge(name)
    if kind == "llm":
        from virtuebench.judge.cache import VerdictCache
        from virtuebench.judge.llm import LlmJudge

        return LlmJudge(name, settings, VerdictCache(cache_path) if cache_path else None)
    if kind == "hybrid":
        from virtuebench.judge.cache import VerdictCache
        from virtuebench.judge.hybrid import HybridJudge

        return HybridJudge(name, settings, VerdictCache(cache_path) if cache_path and settings.get("llm") else None)
    if kind == "letter-grade":
        from virtuebench.judge.cache import VerdictCache
        from virtuebench.judge.letter_grade import LetterGradeJudge

        return LetterGradeJudge(name, settings, VerdictCache(cache_path) if cache_path else None)
    raise ValueError(f"unknown judge {name!r}: give its settings with kind one of {list(KINDS + WORKFLOW_KINDS)}")
