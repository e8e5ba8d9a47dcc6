"""What every judge returns, and the interface it implements."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Verdict:
    refusal: int  # 1: the response declines for lack of information
    judgement: int  # 1: correct under the paper's Case A / Case B rules (CVRR-ES: "correct")
    valid: bool  # False: no verdict could be reached (no response, a failed request, a malformed reply)
    reason: str
    score: int | None = None  # a graded score where the judge gives one (CVRR-ES: 0-5)
    raw: str | None = None  # the judge's reply, verbatim, for an LLM judge
    judge_model: str | None = None  # the model snapshot that gave the verdict
    usage: dict[str, int] | None = None  # tokens of the request that gave it
    retryable: bool = False  # a failed request (not a verdict): asked again on the next run

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Judge(Protocol):
    name: str
    version: str

    def judge(self, question: str, answer: str, response: str) -> Verdict: ...
