"""What the judging stage gives a judge of each response, settings every judge kind reads (docs/choices.md, "The judge"):
`reasoning`, whether a thinking model's reasoning goes to the judge with its final answer, and `truncated`, whether a
reply cut off at the token limit (or inside an unclosed thinking block) is judged or scored as no answer unasked.

VirtueBench (arXiv:2603.07071), section 3.4: "the judge model spots the answer from the model's reasoning or
explanation", hence `with-reasoning` by default. Judgments made before these settings existed were made with
LEGACY's values; a judge at those values is tracked (and fingerprinted) exactly as before, so they stay current.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from virtuebench.support.settings import setting

REASONING = ("with-reasoning", "answer-only")
TRUNCATED = ("no-answer", "judge")
_REASONING = (
    "with-reasoning: a thinking model's reasoning, in <think>...</think>, before its final answer; answer-only: the final answer alone"
)
_TRUNCATED = "no-answer: a reply cut off is scored wrong without asking the judge (valid false); judge: it is judged as it stands"


@dataclass(frozen=True)
class JudgeInputs:
    reasoning: str = setting("with-reasoning", rerun="answers", schema={"type": "string", "enum": list(REASONING)}, description=_REASONING)
    truncated: str = setting("no-answer", rerun="answers", schema={"type": "string", "enum": list(TRUNCATED)}, description=_TRUNCATED)

    def describe(self) -> str:
        """For a caption: "reasoning with-reasoning, truncated no-answer"."""
        return ", ".join(f"{name} {getattr(self, name)}" for name in NAMES)

    def changed(self) -> dict[str, str]:
        """The settings at another value than every judgment made before they existed (LEGACY): what the judging jobs
        track and fingerprint, so that a judge left at the old behaviour re-judges nothing."""
        return {name: getattr(self, name) for name in NAMES if getattr(self, name) != LEGACY[name]}


#: The llm judge's setting for the verdict pairs the VirtueBench prompt forbids (virtuebench.judge.llm), its default first.
FORBIDDEN_PAIRS = ("retry-then-invalid", "trust-refusal", "trust-judgement")
NAMES = tuple(f.name for f in fields(JudgeInputs))
#: What the judging stage did before these settings: the final answer alone, a cut-off reply unasked.
LEGACY = {"reasoning": "answer-only", "truncated": "no-answer"}


def judge_inputs(settings: dict[str, Any] | None) -> JudgeInputs:
    """The input settings in a judge's settings (the others ignored); ValueError names a value not allowed."""
    values = {name: (settings or {})[name] for name in NAMES if name in (settings or {})}
    for name, allowed in (("reasoning", REASONING), ("truncated", TRUNCATED)):
        if name in values and values[name] not in allowed:
            raise ValueError(f"judge setting {name}: {values[name]!r} is not one of {', '.join(allowed)}")
    return JudgeInputs(**values)


def judged_text(answer: str, thinking: str | None, unclosed: bool, inputs: JudgeInputs) -> str:
    """The text the judge reads for a response whose final answer is `answer` and reasoning `thinking` (None: a model
    that does not think, or one whose reasoning the API hides). With `with-reasoning` the reasoning comes first in
    <think> tags, as the model wrote it: closed before the answer, or left open where it never closed (`unclosed`), so
    that a judge still tells the reasoning from the answer (the rules judge reads only what follows it)."""
    if inputs.reasoning == "answer-only" or not thinking:
        return answer
    if unclosed:
        return f"<think>\n{thinking}"
    return f"<think>\n{thinking}\n</think>\n\n{answer}"


def options_note(settings: dict[str, Any]) -> str:
    """A judge's decisions that the papers leave open, at the values in effect, for a table's caption: "reasoning =
    with-reasoning (default); truncated = no-answer (default)", and `forbidden_pairs` where an LLM judge reads the
    VirtueBench prompt (its own, or a hybrid's)."""
    inputs = judge_inputs(settings)
    values = [(name, getattr(inputs, name), getattr(JudgeInputs(), name)) for name in NAMES]
    llm = settings if settings.get("kind") == "llm" else settings.get("llm") if settings.get("kind") == "hybrid" else None
    if isinstance(llm, dict) and llm.get("prompt", "virtuebench") == "virtuebench":
        values.append(("forbidden_pairs", llm.get("forbidden_pairs", FORBIDDEN_PAIRS[0]), FORBIDDEN_PAIRS[0]))
    return "; ".join(f"{name} = {value}" + (" (default)" if value == default else "") for name, value, default in values)
