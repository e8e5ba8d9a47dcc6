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
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from virtuebench.judge.base import Judge, Verdict
from virtuebench.judge.inputs import NAMES as INPUT_SETTINGS
from virtuebench.judge.inputs import judge_inputs
from virtuebench.judge.kinds import JudgeKind, Review
from virtuebench.judge.rules import VERSION as RULES_VERSION
from virtuebench.judge.rules import RulesJudge
from virtuebench.support.settings import did_you_mean, setting


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
        forbidden = self.llm.spent_note() if self.llm else ""
        return f"; decided by the rules {d['rules']} (requests saved), by the LLM judge {d['llm']}{undecided}{forbidden}"


@dataclass(frozen=True)
class HybridSettings:
    # In config, the name of an llm judge; check_config resolves it to that judge's settings, split as its own.
    llm: str | None = setting(
        None,
        rerun="answers",
        schema={"type": ["string", "null"]},
        description="hybrid: the llm judge (a name under judges) asked where the rules are not confident; null: none (those items are invalid)",
    )
    if_no_key: str = setting("fail", rerun="scheduling", schema={"type": "string", "enum": ["fail", "rules"]})


def _resolve(review: Review, name: str, settings: dict[str, Any], defined: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """_resolve_llm's, with the judging stage's input settings given to the hybrid (virtuebench.judge.inputs)."""
    resolved = _resolve_llm(review, name, settings, defined)
    try:
        judge_inputs(settings)
    except ValueError as error:
        review.problems.append(f"config.judges.{name}: {error}")
    return {**resolved, **{key: settings[key] for key in INPUT_SETTINGS if key in settings}}


def _resolve_llm(review: Review, name: str, settings: dict[str, Any], defined: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """A hybrid judge's settings with `llm` resolved to its LLM judge's settings (None: no LLM judge, or no key
    and `if_no_key: rules` on the hybrid or its LLM judge: the items the rules are not sure of are then invalid)."""
    from virtuebench.judge.llm import JudgeSetupError, LlmJudgeSettings

    llm_name = settings.get("llm")
    if llm_name is None:
        return {"kind": "hybrid", "llm": None}
    llm = defined.get(llm_name)
    if llm is None or llm["kind"] != "llm":
        allowed = [other for other, spec in defined.items() if spec["kind"] == "llm"]
        review.problems.append(
            f"config.judges.{name}.llm: {llm_name!r} is not an llm judge; {did_you_mean(llm_name, allowed)}"
            f"allowed values: {', '.join(allowed) or 'none defined'}"
        )
        return {"kind": "hybrid", "llm": None}
    try:
        parsed = LlmJudgeSettings.from_dict(llm)
    except JudgeSetupError as error:
        review.problems.append(f"config.judges.{llm_name}: {error}")
        return {"kind": "hybrid", "llm": None}
    if parsed.api_key_env and not review.environ.get(parsed.api_key_env):
        if settings.get("if_no_key", llm.get("if_no_key", "fail")) == "rules":
            review.warnings.append(
                f"{parsed.api_key_env} is not set: judge {name} decides only where the rules are confident; the other items "
                f"are marked invalid (results/invalid_items.csv), not guessed (config.judges.{name}: if_no_key: rules)"
            )
            return {"kind": "hybrid", "llm": None}
        review.missing_key(
            f"config.judges.{name}: its LLM judge {llm_name} needs an API key: set the environment variable {parsed.api_key_env} "
            f"(or set config.judges.{name}.if_no_key: rules to judge only what the rules are sure of)"
        )
    return {"kind": "hybrid", "llm": dict(llm)}


def _build(name: str, settings: dict[str, Any], cache_path: str | None) -> HybridJudge:
    from virtuebench.judge.cache import VerdictCache

    return HybridJudge(name, settings, VerdictCache(cache_path) if cache_path and settings.get("llm") else None)


#: The `hybrid` kind: the rules' version is tracked beside its LLM judge's settings; its resolve checks that judge's key
#: itself (no key with if_no_key: rules leaves it without one), so it names no key variable of its own.
KIND = JudgeKind("hybrid", HybridSettings, _build, version=RULES_VERSION, resolve=_resolve, nested=("llm",))
