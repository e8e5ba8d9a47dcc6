"""The offline `rules` judge: the paper's two stages (the VirtueBench supplementary material, section 4, "Prompt for Judgement") as rules, and
how sure it is of each verdict.

Stage 1, refusal detection (virtuebench.judge.refusal): refusal = 1 when the response says the video lacks
the information; an explicit final answer ("Answer: 3") decides over earlier hedging. Stage 2, correctness
(virtuebench.judge.matching, reading numbers through virtuebench.judge.numbers): Case A (a definite ground
truth) needs refusal = 0 and the ground truth stated in the response (numbers compared as numbers; where the
question offers alternatives, the one the response names first); for a sentence-long ground truth (CVRR-ES
style), yes/no and negation must agree and at least 30% of the ground truth's content words must appear.
Case B (the refusal ground truth) is correct exactly when refusal = 1. Only the final answer is read: a closed
`<think>` block is set aside, and markdown emphasis, headings and bullets are read as plain text.

Confidence: each verdict is labelled with the rules that decided it (the refusal rule and, in Case A, the
matcher, each with the answer's length band), and is `confident` only where every deciding label is in
`CONFIDENT_REFUSAL` / `CONFIDENT_MATCH`: labels whose precision on the judge set's tuning parts is at least
`MIN_PRECISION` over at least `MIN_CASES` cases (`python -m virtuebench.judge precision` prints them;
docs/judge_set.md gives the table and the held-out check). The `hybrid` judge sends the rest to an LLM judge.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from virtuebench import is_refusal_answer
from virtuebench.judge.base import Judge, Verdict
from virtuebench.judge.kinds import JudgeKind, NoSettings
from virtuebench.judge.matching import CONTENT_RECALL, answer_matches, answer_shape, concluded, decide, question_options, sentence_matches
from virtuebench.judge.numbers import final_answer, normalize, number_matches
from virtuebench.judge.refusal import detect_refusal, read_refusal

# Any change to what the rules decide (or to how sure they are), here or in refusal, matching or numbers,
# needs a new VERSION: it re-judges every rules judgment.
VERSION = "rules/10"

#: Length bands of the final answer, in words: short (up to 20), medium (21-48), long (49-100), very long.
LENGTH_BANDS = ((20, "short"), (48, "medium"), (100, "long"))
MIN_PRECISION = 0.97
MIN_CASES = 10
#: Stage-1 rules whose response carries signals both ways (a refusal phrase and a guess, number or contrast; doubt
#: words without a refusal phrase; a limitation set aside; reasoning that never closed): never confident, whatever
#: their precision on the tuning parts, which the rules were tuned on (docs/judge_set.md: rules/9's held-out read).
AMBIGUOUS_RULES = frozenset({"refusal-mixed", "answers-anyway", "aside", "doubt-no-phrase", "doubt-final-answer", "unclosed-thinking"})

#: Chosen by `judge_set.calibrate` on the tuning parts (docs/judge_set.md), then frozen for the version: the
#: labels whose decisions agreed with the hand labels on >= MIN_PRECISION of >= MIN_CASES tuning cases.
CONFIDENT_REFUSAL: frozenset[str] = frozenset(
    {
        "final-answer@medium",
        "no-phrase@short",  # in Case A, where the matcher's label must be confident too
        "no-phrase@medium",
        "no-phrase@long",
        "no-phrase@short+colour",  # in Case B: no refusal phrase and a colour stated to a colour question
        "no-phrase@short+number",
        "refusal-only@short",
    }
)
CONFIDENT_MATCH: frozenset[str] = frozenset(
    {
        "another_colour=0@short",
        "number_as_written=1@short",
        "stated_number=1@short",
        "stated_number=1@medium",
        "yes_or_no=0@short",
        "yes_or_no=1@short",
    }
)

__all__ = [
    "AMBIGUOUS_RULES",
    "CONFIDENT_MATCH",
    "CONFIDENT_REFUSAL",
    "CONTENT_RECALL",
    "VERSION",
    "RulesJudge",
    "RulesReading",
    "answer_matches",
    "concluded",
    "detect_refusal",
    "final_answer",
    "final_text",
    "length_band",
    "normalize",
    "number_matches",
    "question_options",
    "read",
    "sentence_matches",
]

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_MARKDOWN = (
    (re.compile(r"(\*\*|__|`)"), ""),  # emphasis and code marks
    (re.compile(r"^\s{0,3}#{1,6}\s*", re.MULTILINE), ""),  # headings
    (re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(?=\S)", re.MULTILINE), ""),  # bullets and numbered items
    (re.compile(r"^\s*\|?[\s:|-]*-{3,}[\s:|-]*\|?\s*$", re.MULTILINE), ""),  # a table's rule line
    (re.compile(r"\s*\|\s*"), "; "),  # table cells
)


def final_text(response: str) -> tuple[str, bool]:
    """The answer a strict reader judges, and whether the response ended inside an unclosed thinking block.

    A closed `<think>...</think>` is reasoning, not the answer (an orphan `</think>`: the prompt opened the block,
    so the answer is what follows it); markdown marks are dropped so that a bold "**Answer:** 3" reads as
    "Answer: 3"."""
    text = response.replace("’", "'").replace("‘", "'")
    text = _THINK.sub(" ", text)
    if "</think>" in text.lower():
        text = text[text.lower().rfind("</think>") + len("</think>") :]
    unfinished = "<think>" in text.lower()
    if unfinished:
        text = re.sub(r"<think>", " ", text, flags=re.IGNORECASE)
    for pattern, replacement in _MARKDOWN:
        text = pattern.sub(replacement, text)
    return text.strip(), unfinished


def length_band(text: str) -> str:
    words = len(text.split())
    return next((band for limit, band in LENGTH_BANDS if words <= limit), "very-long")


class RulesReading(NamedTuple):
    refusal: int
    judgement: int
    reason: str
    refusal_rule: str  # e.g. "refusal-only@short": the stage-1 rule that decided, and the answer's length band
    match_rule: str | None  # Case A answered: e.g. "truth_stated=1@medium" (the matcher and what it decided)

    @property
    def confident(self) -> bool:
        if self.refusal_rule not in CONFIDENT_REFUSAL:
            return False
        return self.match_rule is None or self.match_rule in CONFIDENT_MATCH


def read(question: str, answer: str, response: str) -> RulesReading:
    """The rules' verdict with the labels of the rules that reached it."""
    question, answer = (text.replace("’", "'").replace("‘", "'") for text in (question, answer))
    text, unfinished = final_text(response)
    band = length_band(text)
    if unfinished:  # reasoning that never reached an answer: judged, never confidently
        reading = read_refusal(text, question)
        refusal, why, rule = reading.refusal, f"unclosed thinking block; {reading.reason}", "unclosed-thinking"
    else:
        refusal, why, rule = read_refusal(text, question)
    refusal_rule = f"{rule}@{band}"
    if is_refusal_answer(answer):  # Case B
        if not refusal:  # "not a refusal" is sure only where something answers: refusals are worded without limit
            shape = answer_shape(question, text)
            refusal_rule += f"+{shape}" if shape else "+no-answer-shape"
        return RulesReading(refusal, refusal, f"case B: {why}", refusal_rule, None)
    if refusal:  # Case A, refused
        return RulesReading(1, 0, f"case A: refused ({why})", refusal_rule, None)
    decision, matcher = decide(question, answer, text)
    return RulesReading(0, decision.judgement, f"case A: {decision.reason}", refusal_rule, f"{matcher}={decision.judgement}@{band}")


class RulesJudge(Judge):
    name = "rules"
    version = VERSION

    def __init__(self, name: str = "rules") -> None:
        super().__init__()
        self.name = name  # the name the config gives it: its records and the tables carry that name

    def judge(self, question: str, answer: str, response: str) -> Verdict:
        reading = read(question, answer, response)
        rules = reading.refusal_rule + (f", {reading.match_rule}" if reading.match_rule else "")
        sure = "confident" if reading.confident else "not confident"
        return Verdict(reading.refusal, reading.judgement, True, f"{reading.reason} [{rules}; {sure}]", confident=reading.confident)


#: The `rules` kind: no setting; its VERSION is tracked, so a new version re-judges.
KIND = JudgeKind("rules", NoSettings, lambda name, settings, cache_path: RulesJudge(name), version=VERSION)
