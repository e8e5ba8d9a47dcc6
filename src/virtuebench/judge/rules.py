"""The offline `rules` judge: the paper's two stages (shared/seeds/004, "Judgement prompt") as rules.

Stage 1, refusal detection (virtuebench.judge.refusal): refusal = 1 when the response says the video lacks
the information; an explicit final answer ("Answer: 3") decides over earlier hedging. Stage 2, correctness
(virtuebench.judge.matching, reading numbers through virtuebench.judge.numbers): Case A (a definite ground
truth) needs refusal = 0 and the ground truth stated in the response (numbers compared as numbers; where the
question offers alternatives, the one the response names first); for a sentence-long ground truth (CVRR-ES
style), yes/no and negation must agree and at least 30% of the ground truth's content words must appear.
Case B (the refusal ground truth) is correct exactly when refusal = 1.
It is a cheap stand-in for the LLM judge, not its equal; its agreement with an LLM judge is measured
separately.
"""

from __future__ import annotations

from virtuebench import is_refusal_answer
from virtuebench.judge.base import Judge, Verdict
from virtuebench.judge.matching import CONTENT_RECALL, answer_matches, concluded, question_options, sentence_matches
from virtuebench.judge.numbers import final_answer, normalize, number_matches
from virtuebench.judge.refusal import detect_refusal

# Any change to what the rules decide, here or in refusal, matching or numbers, needs a new VERSION: it
# re-judges every rules judgment.
VERSION = "rules/8"

__all__ = [
    "CONTENT_RECALL",
    "VERSION",
    "RulesJudge",
    "answer_matches",
    "concluded",
    "detect_refusal",
    "final_answer",
    "normalize",
    "number_matches",
    "question_options",
    "sentence_matches",
]


class RulesJudge(Judge):
    name = "rules"
    version = VERSION

    def judge(self, question: str, answer: str, response: str) -> Verdict:
        question, answer, response = (text.replace("’", "'").replace("‘", "'") for text in (question, answer, response))
        refusal, why = detect_refusal(response, question)
        if is_refusal_answer(answer):  # Case B
            return Verdict(refusal, refusal, True, f"case B: {why}")
        if refusal:  # Case A, refused
            return Verdict(1, 0, True, f"case A: refused ({why})")
        judgement, how = answer_matches(question, answer, response)
        return Verdict(0, judgement, True, f"case A: {how}")
