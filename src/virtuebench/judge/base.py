"""What every judge returns, and the interface it implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Verdict:
    refusal: int  # 1: the response declines for lack of information
    judgement: int  # 1: correct under the paper's Case A / Case B rules
    valid: bool  # False: the judge could not reach a verdict (no response, malformed judge reply)
    reason: str


class Judge(Protocol):
    name: str
    version: str

    def judge(self, question: str, answer: str, response: str) -> Verdict: ...
