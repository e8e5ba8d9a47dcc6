"""What every judge returns, and the interface it implements.

A judge decides one (question, ground truth, response) at a time (`judge`). What it can do beyond that
is declared on `Judge` with defaults, so the judging stage never probes for it: `max_concurrency`
(requests in flight at once), `uses_api` (it sends requests: the stage announces their number and
estimated tokens first, and reports `requests` and `tokens` spent), `cached`, `estimate_tokens`, and the notes
it adds before and after a run (`pending_note`, `spent_note`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from virtuebench.judge.inputs import JudgeInputs


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
    confident: bool | None = None  # the rules judge: a rule of known precision decided (None: a judge that does not say)
    decided_by: str | None = None  # the hybrid judge: which of its judges gave the verdict (rules, llm, none)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Judge:
    name: str = ""
    version: str = ""
    max_concurrency: int = 1
    uses_api: bool = False
    requests: int = 0  # API requests sent so far (judges that use an API)
    inputs: JudgeInputs = JudgeInputs()  # what the judging stage gives it of each response (get_judge: its settings')

    def __init__(self) -> None:
        self.tokens = {"prompt_tokens": 0, "completion_tokens": 0}  # spent so far (judges that use an API)

    def judge(self, question: str, answer: str, response: str) -> Verdict:
        raise NotImplementedError

    def check_endpoint(self) -> None:
        """Judges that send requests check their endpoint before the first one; the others have none."""

    def cached(self, question: str, answer: str, response: str) -> Verdict | None:
        """A verdict already known for these inputs (judges with a cache), else None."""
        return None

    def estimate_tokens(self, question: str, answer: str, response: str) -> int:
        """Roughly what one request costs, for the announcement before a run (judges that use an API)."""
        return 0

    def pending_note(self, items: list[tuple[Any, str, str, str]]) -> str:
        """Before a run that sends requests, anything the judge adds about the (key, question, answer, response)
        items (the hybrid: how many the rules settle without a request)."""
        return ""

    def spent_note(self) -> str:
        """After a run, anything the judge adds to its summary line (the hybrid: which judge decided how many)."""
        return ""
