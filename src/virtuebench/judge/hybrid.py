"""The `hybrid` judge: the rules judge's verdict where it is confident (a rule of known precision decided:
docs/judge_set.md gives the precision), an LLM judge's otherwise, so an LLM is asked only about the items the
rules cannot settle. Without an LLM judge (no key and `if_no_key: rules`), an item the rules are not sure of
is not guessed: it is recorded `valid: false`, counts as wrong, and is listed in results/invalid_items.csv and
counted in the tables' captions. Every verdict says which judge gave it (`decided_by`).

In config: `judges: {both: {kind: hybrid, llm: gpt-4o}}` where `gpt-4o` is an `llm` judge defined beside it.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import replace
from typing import Any

from virtuebench.judge.base import Judge, Verdict
from virtuebench.judge.rules import RulesJudge


class HybridJudge(Judge):
    def __init__(self, name: str, settings: dict[str, Any], cache=None, client=None) -> None:
        super().__init__()
        self.name = name
        self.rules = RulesJudge()
        self.llm = None
        if settings.get("llm"):
            from virtuebench.judge.llm import LlmJudge

            self.llm = LlmJudge(f"{name}/llm", settings["llm"], cache, client)
        self.uses_api = self.llm is not None
        self.max_concurrency = self.llm.max_concurrency if self.llm else 1
        self.version = f"hybrid({self.rules.version} + {self.llm.version if self.llm else 'no LLM judge'})"
        self.decided = Counter({"rules": 0, "llm": 0, "none": 0})
        self._lock = threading.Lock()

    @property
    def requests(self) -> int:  # what the LLM judge sent
        return self.llm.requests if self.llm else 0

    @requests.setter
    def requests(self, value: int) -> None:  # Judge's class default; the LLM judge keeps the count
        pass

    def _count(self, by: str) -> None:
        with self._lock:
            self.decided[by] += 1

    def judge(self, question: str, answer: str, response: str) -> Verdict:
        verdict = self.rules.judge(question, answer, response)
        if verdict.confident:
            self._count("rules")
            return replace(verdict, decided_by="rules")
        if self.llm is None:
            self._count("none")
            return Verdict(
                0, 0, False, f"the rules are not sure ({verdict.reason}) and no LLM judge was given", confident=False, decided_by="none"
            )
        decided = self.llm.judge(question, answer, response)
        if not decided.retryable:
            self._count("llm")
        self.tokens = self.llm.tokens
        return replace(decided, confident=False, decided_by="llm")

    def check_endpoint(self) -> None:
        if self.llm:
            self.llm.check_endpoint()

    def cached(self, question: str, answer: str, response: str) -> Verdict | None:
        """The rules' verdict where it is confident (no request needed), else the LLM judge's cached one."""
        verdict = self.rules.judge(question, answer, response)
        if verdict.confident:
            return verdict
        return self.llm.cached(question, answer, response) if self.llm else None

    def estimate_tokens(self, question: str, answer: str, response: str) -> int:
        return self.llm.estimate_tokens(question, answer, response) if self.llm else 0

    def pending_note(self, items: list[tuple[Any, str, str, str]]) -> str:
        """Before a run: how many items the rules settle and how many the LLM judge's cache answers."""
        unsure = [(q, a, r) for _, q, a, r in items if not self.rules.judge(q, a, r).confident]
        cached = sum(self.llm.cached(*item) is not None for item in unsure) if self.llm else 0
        return f"{len(items) - len(unsure)} decided by the rules (confident), {cached} cached LLM verdicts"

    def spent_note(self) -> str:
        """After a run: who decided how many, and the requests the rules saved."""
        d = self.decided
        undecided = f", {d['none']} uncertain without an LLM judge (invalid)" if d["none"] else ""
        return f"; decided by the rules {d['rules']} (requests saved), by the LLM judge {d['llm']}{undecided}"
