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

VERSION = "rules/8"

_INPUT_NOUN = r"(?:frames?|video|clip|footage|images?|visuals?|sampled frames|visual information|visual evidence|provided content)"
#: What the model was shown, as a subject: "the frames", "the provided video", "these images"
_INPUT = rf"(?:(?:the|these|those|provided|given|sampled|available|visible) )+(?:\w+ )?{_INPUT_NOUN}"
_UNABLE = r"(?:i|we)(?: cannot| can't| can not| could not| couldn't| am unable to| are unable to| am not able to| are not able to|'m unable to|'re unable to|'m not able to|'re not able to)"
_ABILITY_VERBS = (
    r"(?:determine|tell|say|work out|figure out|confirm|answer|identify|count|know|judge|establish|pin down|make out|"
    r"name|specify|place|read|verify|estimate|measure|be sure|be certain|give|provide|state|report)"
)
_REFUSAL_PATTERNS = [
    # "that isn't something I'm able to determine", "a count isn't something I can work out"
    rf"\b(?:isn't|is not|wasn't|was not) something (?:i|we)(?: can| could| am able to|'m able to| are able to|'re able to) (?:\w+ )?{_ABILITY_VERBS}\b",
    # "The footage lacks the detail needed to read ...", "the frames lack the resolution to tell ..."
    rf"\b(?:{_INPUT_NOUN}|it|this|that|which|footage|shot|recording|camera view) lack(?:s|ing)? (?:the |any |enough )?(?:\w+ )?(?:detail|information|resolution|clarity|context|evidence|coverage|view)s? "
    r"(?:(?:needed|required|necessary) )?(?:for me )?to (?:read|determine|identify|tell|say|count|answer|confirm|know|see|explain|name)\b",
    # "It's unclear what is in the pan", "it remains uncertain whether he scores"
    r"\b(?:it's|it is|it remains) (?:still )?(?:unclear|not clear|uncertain|unknown|impossible to say|hard to say) "
    r"(?:from (?:the |these )?\w+ )?(?:what|who|whether|if|how|which|when|where|why)\b",
    r"\b(?:does|do|did|can) ?(?:not|n't) (?:provide|contain|include|show|give|offer|have|present|reveal) (?:enough|sufficient|adequate|clear|the necessary)\b",
    r"(?:\bnot|n't) (?:enough|sufficient) (?:visual )?(?:information|evidence|details?|context|frames|clues|info|data)\b",
    # "what the video offers isn't enough for me to say"
    r"(?:\bnot|n't) (?:enough|sufficient) (?:for me |for us )?to (?:say|tell|determine|answer|identify|know|judge|confirm|count|conclude|work out)\b",
    r"\binsufficient (?:visual )?(?:information|evidence|details?|context|data)\b",
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
    r"(?:\bnot|n't|\bnever) (?:clearly )?(?:visible|shown|depicted|captured|present|covered|included|given|mentioned|stated|revealed|legible|readable|identifiable) in (?:the|any of the|these|those) (?:provided |given |sampled |available )?(?:frames|video|images|clip|footage)\b",
    rf"\b{_INPUT} (?:is|are|was|were|seems?|appears?) (?:insufficient|inadequate|not (?:sufficient|enough|clear enough))\b",
    r"\b(?:insufficient|inadequate|not (?:sufficient|enough)) to (?:determine|tell|answer|identify|know|count|say|confirm|judge|establish)\b",
    r"\b(?:impossible|not possible|no way|not feasible) (?:for me |for us )?to (?:accurately |reliably |definitively |precisely |exactly )?(?:determine|tell|count|say|know|identify|confirm|answer|judge|establish|verify|see|work out|figure out)\b",
    r"\bthere(?:'s| is) no (?:reliable |dependable |clear |accurate |certain |definite |definitive |precise |exact |good )?way (?:for me )?to (?:tell|know|determine|say|see|count|identify|confirm|answer|work out)\b",
    r"\b(?:cannot|can't|could not|couldn't|unable to) be (?:established|counted|ascertained|known|told|read|made out|given|stated|answered|confirmed|identified)\b",
    rf"\b{_UNABLE} (?:give|provide|offer|state) (?:a|an|the|any|that|this|such) (?:\w+ )?(?:number|count|answer|colou?r|name|score|time|estimate|description|total|information|details?|specifics)\b",
    r"(?:^|[.;:!?]\s*)(?:unable to|can't|cannot|can not|couldn't|could not) (?:count|determine|tell|identify|see|answer|say|read|confirm)\b",
    # "Counting them isn't possible", "telling them apart is not feasible"
    r"(?:^|[.;:!?]\s*|\b(?:so|but|and) )(?:counting|tallying|determining|identifying|telling|confirming|answering|naming|reading|judging|pinpointing|"
    r"establishing|measuring|estimating|working out|figuring out) [^.;:!?,]{0,40}?(?:isn't|is not|not) (?:possible|feasible)\b",
    r"\b(?:evidence|information) (?:is|remains) (?:inconclusive|insufficient|incomplete|unclear|ambiguous)\b",
    rf"\bnot (?:possible|feasible) (?:with|from|given|based on|using) (?:the |these |those )?(?:provided |given |sampled |available )?{_INPUT_NOUN}\b",
    rf"\b{_INPUT_NOUN} [^.;]{{0,40}}?\b(?:is|are) (?:missing|not included|cut off|skipped)\b",
    rf"\b{_UNABLE} (?:accurately |reliably |definitively |precisely |exactly |really |honestly )?{_ABILITY_VERBS}\b",
    rf"\b(?:unclear|not clear|not evident|not apparent|not discernible|not determinable) (?:from|in|based on) (?:the |these |those )?(?:provided |given |sampled |available )?{_INPUT_NOUN}\b",
]
# "too blurry/dark/thin ... to identify": a refusal where its sentence is about the input or the speaker ("the
# resolution is too low to identify it", "too dark for me to tell"), not a story's ("the light is too dim to read").
_TOO = re.compile(
    r"\btoo (?:blurry|blurred|dark|dim|small|sparse|far|distant|grainy|low|poor|noisy|shaky|obscured|low[- ]resolution|pixelated|fast|brief|unclear|short|"
    r"thin|limited|incomplete|fragmentary|scant|vague|ambiguous|patchy)\b[^.]{0,40}?\bto (?:identify|tell|count|determine|read|see|make out|track|recogni[sz]e|say|explain|name|pin down|work out|conclude|answer|confirm)\b",
    re.IGNORECASE,
)
#: "too dark/dim/small/far/short ... to": about a scene as often as about the frames; the others (blurry,
#: grainy, pixelated, thin, fragmentary ...) describe the input or the evidence.
_AMBIGUOUS_TOO = re.compile(r"too (?:dark|dim|small|far|distant|fast|brief|short|low|poor)\b", re.IGNORECASE)
_ABOUT_INPUT = re.compile(
    rf"\b(?:{_INPUT_NOUN}|resolution|quality|picture|camera|shots?|view|angle|recording|context|evidence|information|details?|for me|i|i'm|we)\b",
    re.IGNORECASE,
)
_REFUSAL = re.compile("|".join(f"(?:{p})" for p in _REFUSAL_PATTERNS), re.IGNORECASE)
# The input does not show the thing asked about ("the frames do not show ...", "none of the frames show ...",
# "I cannot see ..."). A refusal, except where it is the answer: to a yes/no question about what the video shows
# ("Does the video depict a snowball fight?" - "The video does not depict one": that is "no"), or followed by
# what the video shows instead. "... does not show whether/how/when ..." is always a refusal.
_NOT_SHOWN_PATTERNS = [
    rf"\b{_INPUT} (?:do|does|did|do not|does not|did not)?\s*(?:not|n't) (?:\w+ )?(?:show|cover|capture|depict|include|contain|reveal|display|indicate|make (?:it )?clear|allow|let me|permit)\b",
    r"\b(?:no|none of the) (?:\w+ )?(?:frames?|images?|shots?) (?:shows?|depicts?|captures?|contains?|reveals?|includes?)\b",
    rf"\b{_INPUT} (?:does|do) not (?:appear|seem) to (?:show|include|contain|capture|cover|depict)\b",
    rf"\b{_UNABLE} (?:clearly )?(?:see|make out|discern|find|locate|observe|spot)\b",
    r"\b(?:it|this) (?:does not|doesn't|did not|didn't) (?:show|reveal|capture|cover|include|make clear) (?=(?:what|who|whether|if|how|which|when|where|why)\b)",
]
# "The diamond isn't shown", "it isn't shown where ...": a refusal when what is not shown is what the question asks about.
_PASSIVE_NOT_SHOWN = re.compile(
    r"(?:(?:\b(?:is|are|was|were) not|\b(?:isn't|aren't|wasn't|weren't)) (?:clearly )?(?:shown|visible|captured|seen|depicted)"
    r"|\bno (?:\w+ ){1,2}(?:is|are|was|were) (?:shown|visible|seen|depicted|captured)"
    r"|\bthere(?:'s| is| are) no (?:\w+ ){1,2}(?:shown|visible|seen|depicted|captured))\b",
    re.IGNORECASE,
)
_NOT_SHOWN = re.compile("|".join(f"(?:{p})" for p in _NOT_SHOWN_PATTERNS), re.IGNORECASE)
_ABOUT_THE_ANSWER = re.compile(
    r"\s*(?:\w+\s+){0,3}?(?:whether|if|how|what|which|who|whom|when|where|why|enough|clearly|exactly|the answer)\b", re.IGNORECASE
)
_YES_NO_QUESTION = re.compile(
    r"^\s*(?:(?:in|throughout|during|at) [^,?]*, )?(?:does|do|did|is|are|was|were|can|could|has|have|had|will|would|should)\b",
    re.IGNORECASE,
)
_INSTEAD = re.compile(
    r"\b(?:instead|rather|only (?:shows?|displays?|depicts?|captures?)|(?:it|the video|the frames) (?:shows?|depicts?|displays?))\b",
    re.IGNORECASE,
)


def _not_shown_refuses(response: str, match: re.Match[str], question: str) -> bool:
    if _ABOUT_THE_ANSWER.match(response[match.end() : match.end() + 80]):
        return True
    return not _YES_NO_QUESTION.match(question) and not _INSTEAD.search(response[match.end() :])


# After a refusal phrase, a contrast that goes on to answer anyway ("..., but it is probably red"): the model
# attempts an answer, so the paper's prompt says refusal = 0.
_ANSWER_AFTER_CONTRAST = re.compile(
    r"\b(?:but|however|though|although|yet|nevertheless|nonetheless|still)\b,?\s+"
    r"(?!(?:it|this|that) (?:is|remains) (?:impossible|unclear|not possible))"
    r"(?!(?:the|these|those|all|other) (?:\w+ )?(?:frames?|video|clip|images?|footage|scenes?|shots?)\b)"  # side information about the input
    r"(?P<clause>[^.?!]*)",
    re.IGNORECASE,
)
_GUESS_WORDS = re.compile(
    r"\b(?:likely|probably|possibly|presumably|appears?|appeared|seems?|seemed|looks?|would be|guess|estimate|answer is|best|believe|think)\b",
    re.IGNORECASE,
)
# "... not sufficient to count precisely; I would estimate around six": a guess after the refusal is an answer.
_GUESS_AFTER = re.compile(
    r"\b(?:i would (?:estimate|guess|say)|i'd (?:estimate|guess|say)|my (?:best )?guess|(?:it is|it's) (?:probably|likely)|most likely|best estimate)\b",
    re.IGNORECASE,
)
_WEAK = re.compile(r"\b(?:confirm|verify|certain|sure|definitively)\b", re.IGNORECASE)
# "Probably red, though I cannot confirm this": a weak refusal phrase (confirm, be sure) hedges an answer given before it.
_HEDGE_BEFORE = re.compile(
    r"(?:^|[.!?]\s+)(?!(?:the|these|those) (?:\w+ )?(?:frames?|video|clip|images?|footage)\b)[^.!?]*\w[^.!?]*?,?\s+(?:though|although|but|even though)\s+[^.!?]*$",
    re.IGNORECASE,
)
# "Although the frames do not show X, Y is Z": the refusal sits in a concession and the sentence answers.
_CONCESSION = re.compile(r"(?:^|[.!?]\s+)(?:although|though|while|even though|even if|despite)\b[^.,;!?]*$", re.IGNORECASE)
_FINAL_ANSWER = re.compile(r"(?:final answer|the answer is|answer)\s*(?:is)?\s*[:：]|the answer is\b", re.IGNORECASE)

_NUMBER_WORDS = {
    "zero": "0",
    "nil": "0",
    "none": "0",
    "one": "1",
    "once": "1",
    "two": "2",
    "twice": "2",
    "pair": "2",
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
_TENS = {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_ORDINALS = {
    "first": "1",
    "third": "3",
    "fourth": "4",
    "fifth": "5",
    "sixth": "6",
    "seventh": "7",
    "eighth": "8",
    "ninth": "9",
    "tenth": "10",
    "eleventh": "11",
    "twelfth": "12",
}  # "second" is left out: it is also a unit of time; "2nd" is read as 2, and "second" where no number precedes it


def _ordinal(tokens: list[str], i: int) -> str | None:
    """The number an ordinal word stands for ("third" -> 3; "second" unless a number precedes it: "5 second")."""
    if tokens[i] == "second":
        return "2" if i == 0 or not _is_number(tokens[i - 1]) else None
    return _ORDINALS.get(tokens[i])


_FRACTIONS = {"half": "0.5", "quarter": "0.25", "quarters": "0.25", "third": "0.3333", "thirds": "0.3333"}
_DENOMINATORS = {"fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10}
_FRACTIONS |= {f"{name}{plural}": f"{1 / n:.4g}" for name, n in _DENOMINATORS.items() for plural in ("", "s")}
#: "a third", "one eighth": read as fractions only where the ground truth is one (else "a third goal" is 3rd)
_ONE_FRACTION = re.compile(rf"\b(?:a|an|one) ({'|'.join(['half', 'third', 'quarter', *_DENOMINATORS])})\b")
#: Units in their canonical form: value and unit must both be right (the judge prompt).
_UNITS = {
    "km": "km",
    "kilometer": "km",
    "kilometers": "km",
    "kilometre": "km",
    "kilometres": "km",
    "m": "m",
    "meter": "m",
    "meters": "m",
    "metre": "m",
    "metres": "m",
    "cm": "cm",
    "centimeter": "cm",
    "centimeters": "cm",
    "centimetre": "cm",
    "centimetres": "cm",
    "mm": "mm",
    "millimeter": "mm",
    "millimeters": "mm",
    "kg": "kg",
    "kilogram": "kg",
    "kilograms": "kg",
    "kilo": "kg",
    "kilos": "kg",
    "g": "g",
    "gram": "g",
    "grams": "g",
    "lb": "lb",
    "lbs": "lb",
    "pound": "lb",
    "pounds": "lb",
    "mi": "mi",
    "mile": "mi",
    "miles": "mi",
    "ft": "ft",
    "foot": "ft",
    "feet": "ft",
    "inch": "in",
    "inches": "in",
    "s": "s",
    "sec": "s",
    "secs": "s",
    "second": "s",
    "seconds": "s",
    "min": "min",
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "h": "h",
    "hr": "h",
    "hrs": "h",
    "hour": "h",
    "hours": "h",
    "ml": "ml",
    "milliliter": "ml",
    "milliliters": "ml",
    "millilitre": "ml",
    "millilitres": "ml",
    "l": "l",
    "liter": "l",
    "liters": "l",
    "litre": "l",
    "litres": "l",
    "percent": "%",
    "percentage": "%",
    "pct": "%",
    "dollar": "usd",
    "dollars": "usd",
    "usd": "usd",
    "euro": "eur",
    "euros": "eur",
    "eur": "eur",
    "degc": "degc",
    "celsius": "degc",
    "centigrade": "degc",
    "degf": "degf",
    "fahrenheit": "degf",
    "degree": "deg",
    "degrees": "deg",
    "deg": "deg",
    "mph": "mph",
    "kmh": "kmh",
    "kph": "kmh",
    "point": "pt",
    "points": "pt",
    "pts": "pt",
}
#: (unit, unit it converts to) -> factor
_SCALE = {("s", "min"): 1 / 60, ("min", "h"): 1 / 60, ("s", "h"): 1 / 3600, ("m", "km"): 1 / 1000, ("cm", "m"): 1 / 100}
_SCALE |= {("ml", "l"): 1 / 1000, ("mm", "m"): 1 / 1000, ("mm", "cm"): 1 / 10, ("g", "kg"): 1 / 1000, ("cm", "km"): 1 / 100000}
_SPELLING = {"colour": "color", "colours": "colors", "coloured": "colored", "grey": "gray", "centre": "center"}
_SPELLING |= {"yep": "yes", "yeah": "yes", "yup": "yes", "nope": "no", "nah": "no", "rhombus": "diamond", "lozenge": "diamond"}
_ARTICLES = {"a", "an", "the"}
_NEGATIONS = {"not", "no", "never", "nor", "n't", "isn't", "aren't", "wasn't", "weren't", "doesn't", "don't"}


_SMALL = {"a": "1", "an": "1"} | _NUMBER_WORDS  # before "and a half"


def _symbols(text: str) -> str:
    """Symbols and compact forms as words: $5 -> 5 dollars, 5% -> 5 percent, 3rd -> 3, 1/2 -> 0.5, 9:30 kept."""
    text = text.lower().replace("’", "'").replace("–", "-").replace("—", " - ").replace("−", "-")
    text = re.sub(r"(\d),(\d{3})\b", r"\1\2", text)  # 1,000 -> 1000
    text = re.sub(r"[$]\s*(\d+(?:\.\d+)?)", r"\1 dollars", text)
    text = re.sub(r"€\s*(\d+(?:\.\d+)?)", r"\1 euros", text)
    text = re.sub(r"(\d)\s*%", r"\1 percent", text)
    text = re.sub(r"\bper cent\b", "percent", text)
    text = re.sub(r"(\d+(?:\.\d+)?)\s*(?:¢|cents?\b)", lambda m: f"{float(m.group(1)) / 100:g} dollars", text)  # 99¢
    text = re.sub(
        r"\b(an?|one|two|three|four|five|six|seven|eight|nine|ten|\d+) (hours?|minutes?) and a half\b",
        lambda m: f"{_SMALL.get(m.group(1), m.group(1))}.5 {m.group(2)}",
        text,
    )
    text = re.sub(r"\bhalf an? (hour|minute)\b", r"0.5 \1s", text)
    text = re.sub(
        r"\b(an?|one|two|three|four|five|six|seven|eight|nine|ten|\d+) and a half\b",
        lambda m: f"{_SMALL.get(m.group(1), m.group(1))}.5",
        text,
    )  # one and a half minutes
    text = re.sub(r"\b(?:a|one) quarter of an hour\b", "15 minutes", text)
    text = re.sub(r"\bthree quarters of an hour\b", "45 minutes", text)
    text = re.sub(r"\bnot (?:\w+ ){0,2}?\w+,? but (?:rather )?", "", text)  # "not one, but two goals": the correction counts
    text = re.sub(r"^\s*not (?:a single|one)(?: one)?\s*[.!]?\s*$", "zero", text)  # the whole answer: "Not a single one."
    text = re.sub(r"\b(zero|nil|one|two|three|four|five|\d+)(?: apiece|-all)\b", r"\1 to \1", text)  # one apiece: 1-1
    text = re.sub(r"\brunners?[- ]up\b", "second", text)
    text = re.sub(r"\bplus[- ](?:sign|shaped|shape|symbol)\b", "cross", text)
    text = re.sub(r"\bdeg(?:rees?)? (?:celsius|centigrade)\b", "degc", text)
    text = re.sub(r"\bdeg(?:rees?)? fahrenheit\b", "degf", text)
    text = re.sub(r"(\d)\s*°\s*([cf])\b", r"\1 deg\2", text)
    text = re.sub(r"(\d)\s*°", r"\1 degrees", text)
    text = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", r"\1", text)
    text = re.sub(r"\b(\d+)\s*/\s*(\d+)\b", lambda m: f"{int(m.group(1)) / int(m.group(2)):.4g}" if int(m.group(2)) else m.group(0), text)
    text = re.sub(r"\b(\d+(?:\.\d+)?)(km|m|cm|mm|kg|g|ml|l|lbs?|mi|ft|s|min|h|hrs?|mph|kph|pts)\b", r"\1 \2", text)  # 5km -> 5 km
    text = re.sub(r"\b(\w+) (?:games?|goals?|points?|sets?|runs?) (to|-) (\w+)\b", r"\1 \2 \3", text)  # 6 games to 4 -> 6 to 4
    for sides, shape in (
        ("three", "triangle"),
        ("3", "triangle"),
        ("six", "hexagon"),
        ("6", "hexagon"),
        ("eight", "octagon"),
        ("8", "octagon"),
    ):
        text = re.sub(rf"\b{sides}[- ]sided(?: shape| figure| polygon)?\b", shape, text)
    return text


def _number_words(tokens: list[str]) -> list[str]:
    """twenty five / twenty-five -> 25, a dozen -> 12, one hundred -> 100, a half -> 0.5, three quarters -> 0.75."""
    out: list[str] = []
    for token in tokens:
        if token in _TENS:
            out.append(str(_TENS[token]))
        elif (token in _ORDINALS or token == "second") and out and re.fullmatch(r"[2-9]0", out[-1]):
            out.append(str(int(out.pop()) + int(_ORDINALS.get(token, "2"))))  # twenty-third, twenty-second
        elif token == "dozen":
            out.append(f"{12 * float(out.pop()):g}" if out and _is_number(out[-1]) else "12")  # two dozen, half a dozen
        elif token in ("hundred", "thousand") and out and out[-1].isdigit():
            out.append(str(int(out.pop()) * (100 if token == "hundred" else 1000)))
        elif token in _FRACTIONS and out and re.fullmatch(r"\d+", out[-1]) and token != "half":
            out.append(f"{int(out.pop()) * float(_FRACTIONS[token]):.4g}")  # three quarters, two thirds
        elif token in ("half", "quarter") and (not out or not re.fullmatch(r"\d+", out[-1])):
            out.append(_FRACTIONS[token])
        elif token == "1" and out and out[-1] in _ORDINALS:
            continue  # "the third one": a pronoun
        elif out and re.fullmatch(r"[2-9]0", out[-1]) and re.fullmatch(r"[1-9]", token):
            out.append(str(int(out.pop()) + int(token)))  # twenty five
        else:
            out.append(token)
    return out


def normalize(text: str) -> list[str]:
    """Lower-case word tokens with spelling, symbols, number words and articles normalised away."""
    tokens = re.findall(r"\d+(?:\.\d+)?|[a-z]+(?:'[a-z]+)?", _symbols(text).replace("-", " "))
    tokens = [_NUMBER_WORDS.get(_SPELLING.get(token, token), _SPELLING.get(token, token)) for token in tokens]
    tokens = _number_words([token for token in tokens if token not in _ARTICLES])
    # Scores and ranges: "3 to 2", "3 vs 2", "3-2", "between 3 and 5" all read as the two numbers.
    return [
        token
        for i, token in enumerate(tokens)
        if not (
            token in ("to", "vs", "versus", "and", "x")
            and 0 < i < len(tokens) - 1
            and _is_number(tokens[i - 1])
            and _is_number(tokens[i + 1])
        )
    ]


def _is_number(token: str) -> bool:
    return re.fullmatch(r"\d+(?:\.\d+)?", token) is not None


def final_answer(response: str) -> str | None:
    """The text after the last explicit 'Answer:' / 'the answer is', if the response has one."""
    markers = list(_FINAL_ANSWER.finditer(response))
    if not markers:
        return None
    return response[markers[-1].end() :].strip() or None


def _answers_anyway(text: str, match: re.Match[str], question: str = "") -> str | None:
    """How the response goes on to answer after (or around) its refusal phrase, if it does."""
    after = text[match.end() :]
    contrast = _ANSWER_AFTER_CONTRAST.search(after)
    if contrast and not _REFUSAL.search(after[contrast.start() :]) and not _NOT_SHOWN.search(after[contrast.start() :]):
        clause = contrast.group("clause")
        asked = {_stem(t) for t in normalize(question) if t not in _STOPWORDS and len(t) > 2}
        person = re.match(r"\s*(?:he|she|they)\s+\w+", clause, re.IGNORECASE)
        if _GUESS_WORDS.search(clause) or person or asked & {_stem(t) for t in normalize(clause)}:
            return f"answers after {contrast.group(0).split()[0]!r}"
    if _GUESS_AFTER.search(after) and not _REFUSAL.search(after[_GUESS_AFTER.search(after).end() :]):
        return "guesses after it"
    hedge = _WEAK.search(match.group(0)) and _HEDGE_BEFORE.search(text[: match.start()])
    if hedge and not _REFUSAL.search(text[: match.start()]) and not _NOT_SHOWN.search(text):
        return "the refusal phrase hedges an answer given before it"
    if _CONCESSION.search(text[: match.start()]):
        rest = re.split(r"[,;]", after, maxsplit=1)
        if len(rest) == 2 and rest[1].strip() and not _REFUSAL.search(rest[1]) and not _NOT_SHOWN.search(rest[1]):
            return "the refusal is a concession and the sentence answers"
    return None


def _passive_refuses(text: str, match: re.Match[str], question: str) -> bool:
    if _ABOUT_THE_ANSWER.match(text[match.end() : match.end() + 80]):
        return True
    subject = {_stem(t) for t in normalize(re.split(r"[.;,!?]", text[: match.start()])[-1])[-6:] + normalize(match.group(0))}
    asked = {_stem(t) for t in normalize(question) if t not in _STOPWORDS and len(t) > 2}
    return bool(subject & asked) and not _YES_NO_QUESTION.match(question)


#: Just before a refusal phrase: someone else's words or a purpose ("she tells him that we can't give refunds",
#: "so that it doesn't reveal what the gift is"): not the model declining. "What he says can't be known" is.
_REPORTED = re.compile(
    r"(?:\b(\w+\s+\w+\s+)?(?:says?|said|tells?|told|asks?|asked|explains?|explained|shouts?|shouted|writes?|wrote|replies|replied|"
    r"thinks?|thought|complains?|complained|admits?|admitted|insists?|insisted)(?:\s+(?:him|her|them|us|me|everyone|\w+))?"
    r"(?:\s+that)?|\b(?:so that|in order that|to make sure|to ensure))\s*$",
    re.IGNORECASE,
)


def _own(text: str, match: re.Match[str]) -> bool:
    before = _REPORTED.search(text[max(0, match.start() - 80) : match.start()])
    return not before or bool(before.group(1) and before.group(1).lower().startswith(("what ", "whatever ")))


def _refusal_phrases(text: str, question: str) -> list[re.Match[str]]:
    found = list(_REFUSAL.finditer(text))
    for match in _TOO.finditer(text):
        start = max(text.rfind(".", 0, match.start()), text.rfind("!", 0, match.start()), text.rfind("?", 0, match.start())) + 1
        if not _AMBIGUOUS_TOO.match(match.group(0)) or _ABOUT_INPUT.search(text[start : match.end()]):
            found.append(match)
    found += [m for m in _NOT_SHOWN.finditer(text) if _not_shown_refuses(text, m, question)]
    found += [m for m in _PASSIVE_NOT_SHOWN.finditer(text) if _passive_refuses(text, m, question)]
    return sorted((m for m in found if _own(text, m)), key=lambda m: m.start())


def detect_refusal(response: str, question: str = "") -> tuple[int, str]:
    stated = final_answer(response)
    if stated is not None:
        phrases = _refusal_phrases(stated, question)
        if phrases and not _answers_anyway(stated, phrases[-1], question):
            return 1, f"final answer is a refusal ({phrases[0].group(0)!r})"
        return 0, f"explicit final answer {stated[:60]!r}"
    matches = _refusal_phrases(response, question)
    if not matches:
        return 0, "no refusal phrase"
    anyway = _answers_anyway(response, matches[-1], question)
    if anyway:
        return 0, f"refusal phrase {matches[-1].group(0)!r}, then {anyway}"
    return 1, f"refusal phrase {matches[0].group(0)!r}"


def _find(tokens: list[str], phrase: list[str]) -> list[int]:
    """Start positions of `phrase` in `tokens` that are not negated just before."""
    n = len(phrase)
    hits = []
    for start in range(len(tokens) - n + 1):
        before = tokens[max(0, start - 3) : start]
        cut = max((i + 1 for i, t in enumerate(before) if t in ("but", "however", "although", "though", "yet", "while")), default=0)
        if tokens[start : start + n] == phrase and not _NEGATIONS & set(before[cut:]):
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
    # A short chain of reasoning: where the part after its conclusion marker states a number or names an
    # option, that is the answer; otherwise the whole response is read.
    conclusion = normalize(concluded(segment))
    if not expected:
        return 0, "empty ground truth"
    if len(expected) == 2 and _is_number(expected[1]) and _find(tokens, expected):
        return 1, f"states {' '.join(expected)!r}"  # "the number 9", "lap 3" as written
    duration = re.search(r"\b(?:a|one|per|each) second\b", answer, re.IGNORECASE)
    if _ordinal(expected, 0) and len(expected) <= 2 and not duration:
        expected = [_ordinal(expected, 0)]  # "third (lap)" as 3: "3rd", "third" and "lap 3" all answer it
    elif len(expected) == 2 and _ordinal(expected, 1):
        expected = [_ordinal(expected, 1)]
    elif len(expected) == 2 and _is_number(expected[1]) and not _is_number(expected[0]):
        expected = [expected[1]]  # "lap 3"
    if _is_number(expected[0]) and float(expected[0]) < 1 and "." in expected[0]:  # a fraction: "a third" is one here
        segment = _ONE_FRACTION.sub(lambda m: _FRACTIONS[m.group(1)], segment.lower())
        tokens, conclusion = normalize(segment), normalize(concluded(segment))
    if _is_number(expected[0]) and len(expected) <= 3 and not any(map(_is_number, expected[1:])):
        # a number, with its unit if it has one; words after it ("50% off", "3 people") are not compared
        unit = [expected[1]] if len(expected) > 1 and expected[1] in _UNITS else []
        marked = concluded(segment) != segment and any(map(_is_number, conclusion))
        chosen = conclusion if marked else _closest_sentence(question, segment)
        return number_matches(question, [expected[0], *unit], chosen)
    options = [normalize(option) for option in question_options(question)]
    if expected in options and any(_find(conclusion, option) for option in options):
        tokens = conclusion
    if expected in options:
        named = sorted((hits[0], i) for i, option in enumerate(options) if (hits := _find(tokens, option)))
        if not named:
            return 0, "names none of the question's options"
        chosen = options[named[0][1]]
        if options == [["before"], ["after"]]:
            chosen = _relative_to_question(question, tokens, named[0][0], chosen)
        return (
            (1, f"names {' '.join(chosen)!r} first")
            if chosen == expected
            else (0, f"names {' '.join(chosen)!r} first, expected {' '.join(expected)!r}")
        )
    wanted, said = _polarity(expected), _polarity(tokens)
    if wanted and said and len(expected) > 1 and _YES_NO_QUESTION.match(question):
        # "No, it is a daytime match" answered "No, it's played in daylight": the question asked yes or no; the
        # rest may not contradict the truth's colour, number or name ("No, it is blue" answered "No, it is green")
        if wanted != said:
            return 0, f"answers {said!r}, ground truth {wanted!r}"
        clash = _contradicts(answer, expected, response, tokens)
        return (0, f"answers {said!r} as the ground truth, but {clash}") if clash else (1, f"answers {said!r} as the ground truth")
    score = _score_with_sides(answer, segment)
    if score is not None:
        return score
    if expected == ["no"] and not _find(tokens, ["yes"]) and _NEGATIONS & set(_first_sentence(segment)):
        return 1, "negates, as the ground truth's 'no'"
    short_yes = re.match(
        r"\s*(?:(?:yes|yep|yeah|yup)\b|(?:he|she|it|they|there) (?:does|did|is|was|are|were|can|has|have)\b(?!\s*(?:not|n't)))",
        segment,
        re.IGNORECASE,
    )
    if expected == ["yes"] and short_yes and not _NEGATIONS & set(_first_sentence(segment)):
        return 1, "affirms, as the ground truth's 'yes'"
    other = _other_name(answer, response)
    if other:
        return 0, other
    items = [normalize(part) for part in re.split(r",|\bthen\b|->|→|\band\b", answer) if normalize(part)]
    if 2 <= len(items) <= 6 and all(len(item) <= 4 for item in items):
        found = [(_find(tokens, item) or [None])[0] for item in items]
        if any(position is None for position in found):
            missing = [" ".join(item) for item, position in zip(items, found) if position is None]
            if len(missing) < len(items):
                return 0, f"leaves out {', '.join(missing)}"
        elif re.search(r"\b(?:order|sequence|first|appear|happen|list)\w*\b", question, re.IGNORECASE) and re.search(
            r",|\bthen\b|->|→", answer
        ):
            ordered = found == sorted(found)
            return (1, "names the items in the ground truth's order") if ordered else (0, "names the items in another order")
        else:
            return 1, "names every item of the ground truth"
    if _find(tokens, expected):
        return 1, f"states {' '.join(expected)!r}"
    other = _other_colour(expected, tokens)
    if other:
        return 0, other
    # numbers the ground truth writes in digits ("3-2, the home team wins") must all be stated
    missing = [t for t in normalize(" ".join(re.findall(r"\d+(?:[.,]\d+)?", answer))) if t not in tokens]
    if len(expected) >= 3 and missing:
        return 0, f"leaves out {', '.join(missing)} of the ground truth"
    if len(expected) >= 3:
        return sentence_matches(answer, segment)
    return 0, f"does not state {' '.join(expected)!r}"


def _other_colour(expected: list[str], tokens: list[str]) -> str | None:
    wanted, said = _COLOURS & set(expected), _COLOURS & set(tokens)
    if wanted and said and not wanted & said:
        return f"names {'/'.join(sorted(said))}, not {'/'.join(sorted(wanted))}"
    return None


def _other_name(answer: str, response: str) -> str | None:
    names = _proper_names(answer)
    if names and _proper_names(response) and not names & _proper_names(response, all_words=True):
        return f"names someone else than {', '.join(sorted(names))}"
    return None


def _contradicts(answer: str, expected: list[str], response: str, tokens: list[str]) -> str | None:
    """A colour, number or name the response gives in place of the ground truth's, if any."""
    colour = _other_colour(expected, tokens)
    if colour:
        return colour
    wanted_numbers, said_numbers = {t for t in expected if _is_number(t)}, {t for t in tokens if _is_number(t)}
    if wanted_numbers and said_numbers and not wanted_numbers & said_numbers:
        return f"states {', '.join(sorted(said_numbers))}, not {', '.join(sorted(wanted_numbers))}"
    return _other_name(answer, response)


_SIDE_SCORE = re.compile(r"^\s*(?:the )?([A-Za-z][\w .'-]*?)\s+(\d+)\s*,\s*(?:the )?([A-Za-z][\w .'-]*?)\s+(\d+)\s*\.?\s*$", re.IGNORECASE)
_RESULT = re.compile(r"(\d+)\s*(?:-|to|:)\s*(\d+)", re.IGNORECASE)
_LOSES = (
    r"(?:(?:are|is|were|was|get|gets|got) (?:beaten|defeated|edged|outscored)|lose|loses|lost|fall|falls|fell|go down|goes down|"
    r"went down|trail|trails|trailed)\b"
)


def _sides(match: re.Match[str]) -> dict[str, int]:
    """{side: score} of a "<name> <n>, <name> <m>" match, each side by its name's last word ("Team Red" -> red)."""
    return {match.group(1).lower().split()[-1]: int(match.group(2)), match.group(3).lower().split()[-1]: int(match.group(4))}


def _score_with_sides(answer: str, response: str) -> tuple[int, str] | None:
    """A truth that names both sides ("Lions 2, Tigers 3") against a response that states the score and who
    won or lost ("The Lions lose 3-2", "3-2 to the Tigers", "Tigers 3, Lions 2"); None where either is not
    of that form."""
    truth = _SIDE_SCORE.match(answer)
    if not truth:
        return None
    sides = _sides(truth)
    if len(sides) != 2:
        return None
    said = _SIDE_SCORE.match(response)
    if said:  # both sides named with their numbers
        return (1, "names both sides' scores as the ground truth") if _sides(said) == sides else (0, "names the sides' scores otherwise")
    result = _RESULT.search(response)
    words = re.findall(r"[a-z]+", response.lower())
    mentioned = [name for name in sides if name in words]
    if not result or len(mentioned) != 1:
        return None
    if sorted((int(result.group(1)), int(result.group(2)))) != sorted(sides.values()):
        return 0, f"states {result.group(0)!r}, not the ground truth's numbers"
    name = mentioned[0]
    other = next(side for side in sides if side != name)
    after = response.lower()[response.lower().index(name) :]
    if re.match(rf"{re.escape(name)}\w*\s+(?:\w+\s+)?(?:never|not|don't|doesn't|didn't|do not|does not|did not)\b", after):
        return None  # "The Lions never lose at home": no result stated
    winner, loser = (other, name) if re.match(rf"{re.escape(name)}\w*\s+(?:\w+\s+)?{_LOSES}", after) else (name, other)
    if sides[winner] == sides[loser]:
        return None  # a draw: who "wins" says nothing
    if sides[winner] > sides[loser]:
        return 1, f"names {winner} the winner, as the ground truth"
    return 0, f"names {winner} the winner; the ground truth says otherwise"


_COLOURS = {
    "red",
    "green",
    "blue",
    "yellow",
    "magenta",
    "cyan",
    "white",
    "orange",
    "purple",
    "brown",
    "pink",
    "gray",
    "black",
    "violet",
    "beige",
    "gold",
    "silver",
    "navy",
    "maroon",
}


def _relative_to_question(question: str, tokens: list[str], at: int, said: list[str]) -> list[str]:
    """'Does A appear before or after B?' answered 'B appears after A': the relation read from A's side."""
    match = re.search(
        r"\b(?:does|did|is|was) (.+?) (?:appear|happen|occur|come|show up|arrive)\w* before or after (.+?)\?", question, re.IGNORECASE
    )
    if not match:
        return said
    first, second = normalize(match.group(1)), normalize(match.group(2))
    a_at = [i for i in _find(tokens, first) if i < at]
    b_at = [i for i in _find(tokens, second) if i < at]
    if b_at and not a_at:  # the sentence is about B: invert
        return [{"before": "after", "after": "before"}[said[0]]]
    return said


def _proper_names(text: str, all_words: bool = False) -> set[str]:
    """Capitalised words that are not the first of a sentence (names), lower-cased; with all_words, every word."""
    if all_words:
        return {w.lower() for w in re.findall(r"[A-Za-z]+", text)}
    names = set()
    for sentence in re.split(r"(?<=[.!?])\s+", text.strip()):
        words = re.findall(r"[A-Za-z][\w'&]*", sentence)
        names |= {w.lower() for w in words[1:] if w[0].isupper() and w.lower() not in _STOPWORDS and w.lower() != "i"}
    return names


def _closest_sentence(question: str, text: str) -> list[str]:
    """Where several sentences state numbers, the one that shares most words with the question (the last
    on a tie): 'Six people wait on the dock. Four are on board.' answers 'how many are on board?' with 4."""
    sentences = [normalize(part) for part in re.split(r"(?<=[.!?;])\s+", text.strip()) if part.strip()]
    with_numbers = [tokens for tokens in sentences if any(map(_is_number, tokens))]
    if len(with_numbers) <= 1:
        return normalize(text)
    asked = {_stem(t) for t in normalize(question) if t not in _STOPWORDS and not _is_number(t)}
    # on a tie the later sentence: a description usually ends on what it was asked
    return max(reversed(with_numbers), key=lambda tokens: len(asked & {_stem(t) for t in tokens}))


def _stem(token: str) -> str:
    if len(token) == 4 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]  # puts, cars
    return re.sub(r"(?:ing|ed|es|s)$", "", token) if len(token) > 4 else token


_CONCLUSION = re.compile(
    r"\b(?:so|therefore|thus|hence|in total|a total of|the total is|altogether|in all|overall|which makes|that makes|making it|making)\b|=",
    re.IGNORECASE,
)


def concluded(text: str) -> str:
    """A short chain of reasoning ends in its answer: the text after the last conclusion marker ("so",
    "therefore", "in total", "=") when something follows it, else the whole text."""
    for marker in reversed(list(_CONCLUSION.finditer(text))):
        if re.search(r"\w", text[marker.end() :]):
            return text[marker.end() :]
        # "... : two in total." - the marker ends the text: its clause holds the answer
        clause = re.split(r"[.,:;!?]", text[: marker.start()])[-1]
        if re.search(r"\w", clause):
            return clause
    return text


def number_matches(question: str, expected: list[str], tokens: list[str]) -> tuple[int, str]:
    """The first number stated (after any conclusion marker) against the ground truth's, within 1%; with a
    unit, the response's unit (if it gives one) must be the same, and a bare number counts only when the
    question names the unit."""
    positions = [i for i, token in enumerate(tokens) if _is_number(token)]
    ordinals = [i for i in range(len(tokens)) if _ordinal(tokens, i)]
    if not positions and ordinals and len(expected) == 1:
        positions, tokens = ordinals, [_ordinal(tokens, i) or token for i, token in enumerate(tokens)]
    if not positions:
        return 0, "no number in the response"
    first = positions[0]
    value, wanted = float(tokens[first]), float(expected[0])
    unit = _UNITS[expected[1]] if len(expected) > 1 else None
    said = _UNITS.get(tokens[first + 1]) if first + 1 < len(tokens) else None
    if unit and said and said != unit and (unit, said) in _SCALE or (said, unit) in _SCALE:
        factor = _SCALE.get((said, unit)) or 1 / _SCALE[(unit, said)]
        value, said = value * factor, unit  # 120 seconds -> 2 min
    if said == "%" and unit is None and wanted <= 1:
        value, said = value / 100, None  # 50% against a fraction of 0.5
    elif unit == "%" and said is None and value <= 1 < wanted:
        value, said = value * 100, "%"  # "a quarter" against 25%
    if abs(value - wanted) > 0.01 * max(1.0, abs(wanted)):
        return 0, f"number {tokens[first]} != {expected[0]}"
    if unit is None:
        return 1, f"number {tokens[first]} matches"
    if said is not None:
        return (1, f"{tokens[first]} {said} matches") if said == unit else (0, f"unit {said} != {unit}")
    named = any(_UNITS.get(token) == unit for token in normalize(question))
    return (1, f"number {tokens[first]} matches; the question names the unit") if named else (0, f"number without its unit ({unit})")


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
