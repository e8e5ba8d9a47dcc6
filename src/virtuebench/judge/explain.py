"""Plain words for a verdict's reason. The rules judge ends each reason with the labels of the rules that decided it
(judge/rules.py: `case B: no refusal phrase [no-phrase@short+option; not confident]`): the stage-1 rule with the
answer's length band and, in Case B, what in the answer has an answer's shape; in Case A the matcher with what it
decided. The results browser shows these words and keeps the raw labels behind a toggle.

A label this vocabulary does not know (a rule added later) is shown as it is: nothing is hidden.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from virtuebench.judge.matching import CONTENT_RECALL, HIGH_RECALL
from virtuebench.judge.rules import LENGTH_BANDS

#: Stage 1 (judge/refusal.py, `read_refusal`; `unclosed-thinking` from judge/rules.py): what decided refusal or not.
REFUSAL_RULES = {
    "asks-if-knowable": "the question asks whether it can be told, so 'it cannot' is the answer 'no'",
    "final-refusal": "its final answer is a refusal",
    "final-answer": "an explicit final answer",
    "doubt-final-answer": "an explicit final answer, worded with doubt",
    "no-phrase": "no refusal phrase",
    "doubt-no-phrase": "no refusal phrase, but words of doubt",
    "aside": "a refusal phrase about something not asked, beside an answer",
    "answers-anyway": "a refusal phrase, then an answer anyway",
    "refusal-only": "a refusal and nothing else",
    "refusal-mixed": "a refusal phrase beside other content",
    "unclosed-thinking": "reasoning that never closed",
}

#: The final answer's length band (judge/rules.py, LENGTH_BANDS), in words.
BANDS = {band: f"{band} answer (up to {limit} words)" for limit, band in LENGTH_BANDS} | {
    "very-long": f"very long answer (over {LENGTH_BANDS[-1][0]} words)"
}

#: Case B, no refusal: what in the answer has an answer's shape (judge/matching.py, `answer_shape`).
SHAPES = {
    "number": "stating a number",
    "colour": "naming a colour",
    "yes-no": "saying yes or no",
    "option": "naming one of the question's options",
    "no-answer-shape": "with nothing shaped like an answer",
}

#: Case A: the matcher that decided (judge/matching.py, MATCHERS, or `not_stated` where none did).
MATCHERS = {
    "empty_truth": "the ground truth is empty",
    "number_as_written": "the ground truth's number as written",
    "stated_number": "the number it states, compared as a number",
    "named_option": "the option of the question it names first",
    "yes_or_no": "its yes or no",
    "sides_score": "the score it gives each side",
    "negation_for_no": "a negation, for the ground truth's 'no'",
    "affirmation_for_yes": "an affirmation, for the ground truth's 'yes'",
    "someone_else": "a person other than the ground truth's",
    "listed_items": "the items it lists",
    "opposite_named": "the opposite of the ground truth",
    "truth_stated": "the ground truth's words",
    "another_colour": "a colour other than the ground truth's",
    "digits_left_out": "digits of the ground truth left out",
    "sentence": "a sentence-long ground truth, read word by word",
    "not_stated": "no rule found the ground truth in it",
}

#: How a matcher with several ways decided (judge/matching.py, `Decision.how`).
HOWS = {
    "polarity": "by its yes or no",
    "negation": "by negation",
    "no-content": "no content words to compare",
    "recall-none": "none of the ground truth's content words",
    "recall-low": f"under {CONTENT_RECALL:.0%} of the ground truth's content words",
    "recall-mid": f"{CONTENT_RECALL:.0%} to {HIGH_RECALL:.0%} of the ground truth's content words",
    "recall-high": f"{HIGH_RECALL:.0%} or more of the ground truth's content words",
}

CONFIDENCE = {"confident": "high confidence", "not confident": "low confidence"}

#: Which case the rules judged (judge/rules.py, `read`).
CASES = {"case A": "the truth is an answer", "case B": "the truth is the refusal"}

_LABELS = re.compile(r"\s*\[([^\[\]]*); (confident|not confident)\]")
_CASE = re.compile(r"\bcase [AB](?=:)")
_REFUSAL_LABEL = re.compile(r"^(?P<rule>[a-z-]+)@(?P<band>[a-z-]+)(?:\+(?P<shape>[a-z-]+))?$")
_MATCH_LABEL = re.compile(r"^(?P<matcher>\w+)(?:/(?P<how>[a-z-]+))?=(?P<decided>[01])@(?P<band>[a-z-]+)$")


class Explained(NamedTuple):
    reason: str  # the reason without its labels, its case named
    rules: str  # the labels in words, with the confidence ("" where the reason has none)
    labels: list[str]  # the raw labels, as the judge wrote them between brackets


def _refusal_label(label: str) -> str | None:
    found = _REFUSAL_LABEL.match(label)
    if not found or found["rule"] not in REFUSAL_RULES or found["band"] not in BANDS:
        return None
    if found["shape"] and found["shape"] not in SHAPES:
        return None
    words = f"{REFUSAL_RULES[found['rule']]}; {BANDS[found['band']]}"
    return words + (f" {SHAPES[found['shape']]}" if found["shape"] else "")


def _match_label(label: str) -> str | None:
    found = _MATCH_LABEL.match(label)
    if not found or found["matcher"] not in MATCHERS or (found["how"] and found["how"] not in HOWS):
        return None
    how = f", {HOWS[found['how']]}" if found["how"] else ""
    return f"{MATCHERS[found['matcher']]}{how}: {'right' if found['decided'] == '1' else 'wrong'}"


def label_words(label: str) -> str:
    """One rule's label in words (`no-phrase@short+option`: "no refusal phrase; short answer (up to 20 words)
    naming one of the question's options"), or the label itself where the vocabulary does not know it."""
    return _refusal_label(label) or _match_label(label) or label


def explain(reason: str) -> Explained:
    """The reason in words: its labels taken out and put in words, its case named. A reason without labels (an LLM
    judge's, an MCQ judge's) keeps its text."""
    labels = [found.group(0).strip() for found in _LABELS.finditer(reason)]
    rules = [
        "; ".join([*(label_words(label.strip()) for label in found[1].split(",") if label.strip()), CONFIDENCE[found[2]]])
        for found in _LABELS.finditer(reason)
    ]
    text = _CASE.sub(lambda found: CASES[found.group(0)], _LABELS.sub("", reason)).strip()
    return Explained(text, " / ".join(rules), labels)
