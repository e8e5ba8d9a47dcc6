"""The offline `rules` judge: the paper's two stages (shared/seeds/004, "Judgement prompt") as rules.

Stage 1, refusal detection: refusal = 1 when the response says the video lacks the information;
an explicit final answer ("Answer: 3") decides over earlier hedging. Stage 2, correctness:
Case A (a definite ground truth) needs refusal = 0 and the ground truth stated in the response
(numbers compared as numbers; where the question offers alternatives, the one the response names
first); for a sentence-long ground truth (CVRR-ES style), yes/no and negation must agree and at least
30% of the ground truth's content words must appear. Case B (the refusal ground truth) is correct
exactly when refusal = 1.
It is a cheap stand-in for the LLM judge, not its equal; its agreement with an LLM judge is measured
separately.
"""

from __future__ import annotations

import re

from virtuebench import is_refusal_answer
from virtuebench.judge.base import Judge, Verdict

VERSION = "rules/3"

_REFUSAL_PATTERNS = [
    r"\b(?:does|do|did|can) ?(?:not|n't) (?:provide|contain|include|show|give|offer|have|present|reveal) (?:enough|sufficient|adequate|clear|the necessary)\b",
    r"\b(?:not|n't) (?:enough|sufficient) (?:visual )?(?:information|evidence|details?|context|frames|clues|info)\b",
    r"\binsufficient (?:visual )?(?:information|evidence|details?|context)\b",
    r"\black(?:s|ing)? (?:of )?(?:sufficient|enough|the necessary|clear|any) (?:visual )?(?:information|evidence|details?)\b",
    r"\b(?:cannot|can't|can not|could not|couldn't|unable to|impossible to|not possible to) (?:be )?(?:determined?|identif(?:y|ied)|confirm(?:ed)?|infer(?:red)?)\b",
    # "cannot answer/tell/say/know" only about the question or the frames ("he cannot answer the phone" is an answer)
    r"\b(?:cannot|can't|can not|could not|couldn't|unable to|impossible to|not possible to) (?:answer|tell|say|know)(?:ed)? (?:the question|this question|from|based on|with certainty|for sure|for certain|whether|which|what|how|if|who|when|where)\b",
    r"\b(?:question|this) cannot be answered\b",
    # "no information about ..." is a refusal; "no evidence of rain" is an answer unless it is about the frames
    r"\bno (?:visual )?(?:information|details?) (?:about|on|regarding|to determine|to answer)\b",
    r"\bno (?:visual )?(?:information|evidence|indication) (?:in|from|within) the (?:provided |given |sampled )?(?:frames|video|images|clip)\b",
    r"\b(?:i|we) (?:do not|don't) know\b",
    r"\bunanswerable\b",
    r"\bnot (?:enough|sufficient) info(?:rmation)?\b",
    r"\bnot (?:clearly )?(?:visible|shown|depicted|captured) in (?:the|any of the) (?:provided |given |sampled )?(?:frames|video|images)\b",
]
_REFUSAL = re.compile("|".join(f"(?:{p})" for p in _REFUSAL_PATTERNS), re.IGNORECASE)
_FINAL_ANSWER = re.compile(r"(?:final answer|the answer is|answer)\s*(?:is)?\s*[:：]|the answer is\b", re.IGNORECASE)

_NUMBER_WORDS = {
    "zero": "0",
    "none": "0",
    "one": "1",
    "once": "1",
    "two": "2",
    "twice": "2",
    "three": "3",
    "thrice": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "thirteen": "13",
    "fourteen": "14",
    "fifteen": "15",
    "sixteen": "16",
    "seventeen": "17",
    "eighteen": "18",
    "nineteen": "19",
    "twenty": "20",
}
_SPELLING = {"colour": "color", "colours": "colors", "coloured": "colored", "grey": "gray", "centre": "center"}
_ARTICLES = {"a", "an", "the"}
_NEGATIONS = {"not", "no", "never", "nor", "n't", "isn't", "aren't", "wasn't", "weren't", "doesn't", "don't"}


def normalize(text: str) -> list[str]:
    """Lower-case word tokens with spelling, number words and articles normalised away."""
    text = text.lower().replace("’", "'")
    text = re.sub(r"(\d),(\d{3})\b", r"\1\2", text)  # 1,000 -> 1000
    tokens = re.findall(r"\d+(?:\.\d+)?|[a-z]+(?:'[a-z]+)?", text)
    tokens = [_NUMBER_WORDS.get(_SPELLING.get(token, token), _SPELLING.get(token, token)) for token in tokens]
    return [token for token in tokens if token not in _ARTICLES]


def final_answer(response: str) -> str | None:
    """The text after the last explicit 'Answer:' / 'the answer is', if the response has one."""
    markers = list(_FINAL_ANSWER.finditer(response))
    if not markers:
        return None
    return response[markers[-1].end() :].strip() or None


def detect_refusal(response: str) -> tuple[int, str]:
    stated = final_answer(response)
    if stated is not None:
        match = _REFUSAL.search(stated)
        if match:
            return 1, f"final answer is a refusal ({match.group(0)!r})"
        return 0, f"explicit final answer {stated[:60]!r}"
    match = _REFUSAL.search(response)
    if match:
        return 1, f"refusal phrase {match.group(0)!r}"
    return 0, "no refusal phrase"


def _find(tokens: list[str], phrase: list[str]) -> list[int]:
    """Start positions of `phrase` in `tokens` that are not negated just before."""
    n = len(phrase)
    hits = []
    for start in range(len(tokens) - n + 1):
        if tokens[start : start + n] == phrase and not _NEGATIONS & set(tokens[max(0, start - 3) : start]):
            hits.append(start)
    return hits


def question_options(question: str) -> list[str]:
    """The alternatives a question offers ('…, X or Y?', '… before or after …?'), if any."""
    if re.search(r"\bbefore or after\b", question, re.IGNORECASE):
        return ["before", "after"]
    match = re.search(r"[,:]\s*([^,:?]+?)\s+or\s+([^?]+?)\?\s*$", question)
    return [match.group(1), match.group(2)] if match else []


_STOPWORDS = set(
    "is are was were be been being do does did to of in on at by for with from and or but that this these those it its "
    "there their they them he she his her him we you your i me my as video shown shows show seen see frames frame into "
    "out up down over about than then so such can could would should will may might also only just very what which who "
    "whom whose when where why how any some all".split()
)
_SENTENCE_NEGATIONS = _NEGATIONS | {"none", "nothing", "nobody", "neither", "without", "didn't", "cannot", "can't", "wasn't", "weren't"}
#: Share of the ground truth's content words a sentence-long response must contain. Measured against
#: the CVRR-ES authors' GPT-3.5 verdicts (README, "How far the rules judge is from an LLM judge").
CONTENT_RECALL = 0.3


def _first_sentence(text: str) -> list[str]:
    return normalize(re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0])


def _polarity(tokens: list[str]) -> str | None:
    return next((token for token in tokens[:3] if token in ("yes", "no")), None)


def sentence_matches(answer: str, response: str) -> tuple[int, str]:
    """For a sentence-long ground truth: yes/no, then negation, then content-word recall."""
    expected, tokens = normalize(answer), normalize(response)
    wanted, said = _polarity(expected), _polarity(tokens)
    if wanted and said:
        return (1, f"answers {said!r} as the ground truth") if wanted == said else (0, f"answers {said!r}, ground truth {wanted!r}")
    if bool(_SENTENCE_NEGATIONS & set(_first_sentence(answer))) != bool(_SENTENCE_NEGATIONS & set(_first_sentence(response))):
        return 0, "negates where the ground truth affirms, or the reverse"
    content = {t for t in expected if t not in _STOPWORDS and len(t) > 2}
    if not content:
        return 0, "no content words to compare"
    recall = len(content & {t for t in tokens if t not in _STOPWORDS}) / len(content)
    return int(recall >= CONTENT_RECALL), f"{recall:.0%} of the ground truth's content words"


def answer_matches(question: str, answer: str, response: str) -> tuple[int, str]:
    segment = final_answer(response) or response
    # Timestamps ("at 0:15") are not the answer's number.
    segment = re.sub(r"\b\d{1,2}:\d{2}(?::\d{2})?\b", " ", segment)
    tokens, expected = normalize(segment), normalize(answer)
    if not expected:
        return 0, "empty ground truth"
    if len(expected) == 1 and re.fullmatch(r"\d+(?:\.\d+)?", expected[0]):
        numbers = [token for token in tokens if re.fullmatch(r"\d+(?:\.\d+)?", token)]
        if not numbers:
            return 0, "no number in the response"
        # The number stated (the final answer's, or the first one) must match.
        return (
            (1, f"number {numbers[0]} matches") if float(numbers[0]) == float(expected[0]) else (0, f"number {numbers[0]} != {expected[0]}")
        )
    options = [normalize(option) for option in question_options(question)]
    if expected in options:
        named = sorted((hits[0], i) for i, option in enumerate(options) if (hits := _find(tokens, option)))
        if not named:
            return 0, "names none of the question's options"
        chosen = options[named[0][1]]
        return (
            (1, f"names {' '.join(chosen)!r} first")
            if chosen == expected
            else (0, f"names {' '.join(chosen)!r} first, expected {' '.join(expected)!r}")
        )
    if _find(tokens, expected):
        return 1, f"states {' '.join(expected)!r}"
    if len(expected) >= 4:
        return sentence_matches(answer, segment)
    return 0, f"does not state {' '.join(expected)!r}"


class RulesJudge(Judge):
    name = "rules"
    version = VERSION

    def judge(self, question: str, answer: str, response: str) -> Verdict:
        refusal, why = detect_refusal(response)
        if is_refusal_answer(answer):  # Case B
            return Verdict(refusal, refusal, True, f"case B: {why}")
        if refusal:  # Case A, refused
            return Verdict(1, 0, True, f"case A: refused ({why})")
        judgement, how = answer_matches(question, answer, response)
        return Verdict(0, judgement, True, f"case A: {how}")
