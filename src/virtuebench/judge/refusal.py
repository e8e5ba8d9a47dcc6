"""Stage 1 of the rules judge: does the response decline for lack of information (`detect_refusal`)?
Refusal phrases found by pattern, then set aside where they are someone else's words, a concession, or followed
by an answer anyway; an explicit final answer ("Answer: 3") decides over earlier hedging.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from virtuebench.judge.numbers import STOPWORDS, YES_NO_QUESTION, final_answer, normalize, stem

_INPUT_NOUN = r"(?:frames?|video|clip|footage|images?|visuals?|sampled frames|visual information|visual evidence|provided content)"
#: What the model was shown, as a subject: "the frames", "the given clip", "those images"
_INPUT = rf"(?:(?:the|these|those|provided|given|sampled|available|visible) )+(?:\w+ )?{_INPUT_NOUN}"
_UNABLE = r"(?:i|we)(?: cannot| can't| can not| could not| couldn't| am unable to| are unable to| am not able to| are not able to|'m unable to|'re unable to|'m not able to|'re not able to)"
_ABILITY_VERBS = (
    r"(?:determine|tell|say|work out|figure out|confirm|answer|identify|count|know|judge|establish|pin down|make out|"
    r"name|specify|place|read|verify|estimate|measure|be sure|be certain|give|provide|state|report)"
)
_REFUSAL_PATTERNS = [
    # "the time isn't something I can confirm", "that wasn't something we could establish"
    rf"\b(?:isn't|is not|wasn't|was not) something (?:i|we)(?: can| could| am able to|'m able to| are able to|'re able to) (?:\w+ )?{_ABILITY_VERBS}\b",
    # the input named as what does not allow finding out: "isn't something <the input> lets/allows me (to) <verb>"
    rf"\b(?:isn't|is not|wasn't|was not) something {_INPUT} (?:lets?|allows?|permits?|enables?) (?:me|us)(?: to)? (?:\w+ )?{_ABILITY_VERBS}\b",
    # "we don't have what we'd need to answer", "I do not have enough to judge"
    r"\b(?:i|we) (?:don't|do not) have (?:what (?:i|we)(?:'d| would)? need|enough|the (?:information|details?|evidence|context)) "
    r"(?:(?:needed |required )?to|for me to|for us to) (?:say|tell|determine|answer|identify|know|judge|confirm|count|work out)\b",
    # the input said to lack what finding out needs: "<the input> lacks the <detail/resolution/...> (needed) to <verb>"
    rf"\b(?:{_INPUT_NOUN}|it|this|that|which|footage|shot|recording|camera view) lack(?:s|ing)? (?:the |any |enough )?(?:\w+ )?(?:detail|information|resolution|clarity|context|evidence|coverage|view)s? "
    r"(?:(?:needed|required|necessary) )?(?:for me )?to (?:read|determine|identify|tell|say|count|answer|confirm|know|see|explain|name)\b",
    # "it is unclear who wins", "it remains unknown which door she uses"
    r"\b(?:it's|it is|it remains) (?:still )?(?:unclear|not clear|uncertain|unknown|impossible to say|hard to say) "
    r"(?:from (?:the |these )?\w+ )?(?:what|who|whether|if|how|which|when|where|why)\b",
    r"\b(?:does|do|did|can) ?(?:not|n't) (?:provide|contain|include|show|give|offer|have|present|reveal) (?:me |us )?(?:enough|sufficient|adequate|clear|the necessary)\b",
    # "her route is undeterminable", "the speed is not observable"
    r"\b(?:indeterminable|undeterminable|unobservable|unknowable|unascertainable)\b",
    r"(?:\bnot|n't) (?:observable|determinable|ascertainable|knowable)\b",
    r"(?:\bnot|n't) (?:enough|sufficient) (?:visual )?(?:information|evidence|details?|context|frames|clues|info|data)\b",
    # "the footage shown is not sufficient to tell"
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
    r"\b(?:insufficient|inadequate|not (?:sufficient|enough)) to (?:determine|tell|answer|identify|know|count|say|confirm|judge|establish|single out|pick out|work out|tell apart)\b",
    r"\b(?:impossible|not possible|no way|not feasible) (?:for me |for us )?to (?:accurately |reliably |definitively |precisely |exactly )?(?:determine|tell|count|say|know|identify|confirm|answer|judge|establish|verify|see|work out|figure out)\b",
    r"\bthere(?:'s| is) no (?:reliable |dependable |clear |accurate |certain |definite |definitive |precise |exact |good )?way (?:for me )?to (?:tell|know|determine|say|see|count|identify|confirm|answer|work out)\b",
    r"\b(?:cannot|can't|could not|couldn't|unable to) be (?:established|counted|ascertained|known|told|read|made out|given|stated|answered|confirmed|identified|worked out|figured out|pinned down)\b",
    rf"\b{_UNABLE} (?:give|provide|offer|state) (?:a|an|the|any|that|this|such) (?:\w+ )?(?:number|count|answer|colou?r|name|score|time|estimate|description|total|information|details?|specifics)\b",
    r"(?:^|[.;:!?]\s*)(?:unable to|can't|cannot|can not|couldn't|could not) (?:count|determine|tell|identify|see|answer|say|read|confirm)\b",
    # "naming the song is not possible", "pinpointing when it starts isn't feasible"
    r"(?:^|[.;:!?]\s*|\b(?:so|but|and) )(?:counting|tallying|determining|identifying|telling|confirming|answering|naming|reading|judging|pinpointing|"
    r"establishing|measuring|estimating|working out|figuring out) [^.;:!?,]{0,40}?(?:isn't|is not|not) (?:possible|feasible)\b",
    r"\b(?:evidence|information) (?:is|remains) (?:inconclusive|insufficient|incomplete|unclear|ambiguous)\b",
    rf"\bnot (?:possible|feasible) (?:with|from|given|based on|using) (?:the |these |those )?(?:provided |given |sampled |available )?{_INPUT_NOUN}\b",
    rf"\b{_INPUT_NOUN} [^.;]{{0,40}}?\b(?:is|are) (?:missing|not included|cut off|skipped)\b",
    rf"\b{_UNABLE} (?:accurately |reliably |definitively |precisely |exactly |really |honestly )?{_ABILITY_VERBS}\b",
    rf"\b(?:unclear|not clear|not evident|not apparent|not discernible|not determinable) (?:from|in|based on) (?:the |these |those )?(?:provided |given |sampled |available )?{_INPUT_NOUN}\b",
]
# "too blurry/dark/thin ... to identify": a refusal where its sentence is about the input or the speaker (its
# resolution or picture, "for me"), not about the scene (a room too dim for someone in it to read by).
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
# "The winner is not visible", "it wasn't shown when ...": a refusal when what is not shown is what the question asks about.
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
_INSTEAD = re.compile(
    r"\b(?:instead|rather|only (?:shows?|displays?|depicts?|captures?)|(?:it|the video|the frames) (?:shows?|depicts?|displays?))\b",
    re.IGNORECASE,
)


def _not_shown_refuses(response: str, match: re.Match[str], question: str) -> bool:
    if _ABOUT_THE_ANSWER.match(response[match.end() : match.end() + 80]):
        return True
    return not YES_NO_QUESTION.match(question) and not _INSTEAD.search(response[match.end() :])


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
# A refusal phrase followed by the speaker's own guess ("I'd estimate", "my best guess", "most likely") is an answer.
_GUESS_AFTER = re.compile(
    r"\b(?:i would (?:estimate|guess|say)|i'd (?:estimate|guess|say)|my (?:best )?guess|(?:it is|it's) (?:probably|likely)|most likely|best estimate)\b",
    re.IGNORECASE,
)
_WEAK = re.compile(r"\b(?:confirm|verify|certain|sure|definitively)\b", re.IGNORECASE)
# "Five or so, but I can't be certain": a weak refusal phrase (confirm, be sure) hedges an answer given before it.
_HEDGE_BEFORE = re.compile(
    r"(?:^|[.!?]\s+)(?!(?:the|these|those) (?:\w+ )?(?:frames?|video|clip|images?|footage)\b)[^.!?]*\w[^.!?]*?,?\s+(?:though|although|but|even though)\s+[^.!?]*$",
    re.IGNORECASE,
)
# "Although the frames do not show X, Y is Z": the refusal sits in a concession and the sentence answers.
_CONCESSION = re.compile(r"(?:^|[.!?]\s+)(?:although|though|while|even though|even if|despite)\b[^.,;!?]*$", re.IGNORECASE)


def _answers_anyway(text: str, match: re.Match[str], question: str = "") -> str | None:
    """How the response goes on to answer after (or around) its refusal phrase, if it does."""
    after = text[match.end() :]
    contrast = _ANSWER_AFTER_CONTRAST.search(after)
    if contrast and not _REFUSAL.search(after[contrast.start() :]) and not _NOT_SHOWN.search(after[contrast.start() :]):
        clause = contrast.group("clause")
        asked = {stem(t) for t in normalize(question) if t not in STOPWORDS and len(t) > 2}
        person = re.match(r"\s*(?:he|she|they)\s+\w+", clause, re.IGNORECASE)
        if _GUESS_WORDS.search(clause) or person or asked & {stem(t) for t in normalize(clause)}:
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
    subject = {stem(t) for t in normalize(re.split(r"[.;,!?]", text[: match.start()])[-1])[-6:] + normalize(match.group(0))}
    asked = {stem(t) for t in normalize(question) if t not in STOPWORDS and len(t) > 2}
    return bool(subject & asked) and not YES_NO_QUESTION.match(question)


#: Just before a refusal phrase: someone else's words or a purpose ("she tells him that we can't give refunds",
#: "so that it doesn't reveal what the gift is"): not the model declining. "What the sign reads cannot be determined" is.
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


#: What a limitation says is unknown, where it names a thing ("the licence plate is not visible", "I cannot read
#: the car's number plate"); "its", "his" ... refer back to what was asked about, so they are not read.
_UNSEEN_THING = re.compile(
    r"\bthe\s+((?:[\w'-]+\s+){0,3}?[\w'-]+)\s+(?:is|are|was|were|isn't|aren't|wasn't|weren't)\s+(?:not\s+)?"
    r"(?:clearly\s+|fully\s+)?(?:visible|shown|legible|readable|captured|identifiable|discernible|in view)\b"
    r"|\b(?:determine|see|read|make out|identify|tell|confirm|know)\s+the\s+((?:[\w'-]+\s+){0,3}?[\w'-]+)"
    r"(?=\s*(?:[,.;:!?]|$)|\s+(?:from|in|on|because|since|as|due|with|at)\b)",
    re.IGNORECASE,
)
#: What a question asks for, beyond its own words: "how long" asks for a time, "who" for a person.
_IMPLIED = (
    (r"\bhow many\b", "number count total"),
    (r"\bhow long\b", "time duration length"),
    (r"\bhow much\b", "amount price cost"),
    (r"\bwho\b", "identity name person"),
    (r"\bwhere\b", "location place position"),
    (r"\bwhen\b|\bwhat time\b", "time moment"),
    (r"\bwhy\b", "reason cause motive"),
    (r"\bcolou?r\b", "shade"),
)


def _asked(question: str) -> set[str]:
    implied = " ".join(words for pattern, words in _IMPLIED if re.search(pattern, question, re.IGNORECASE))
    return {stem(t) for t in normalize(f"{question} {implied}") if t not in STOPWORDS and len(t) > 2}


def _sentence_at(text: str, at: int) -> str:
    start = max(text.rfind(mark, 0, at) for mark in ".!?\n") + 1
    ends = [i for i in (text.find(mark, at) for mark in ".!?\n") if i >= 0]
    return text[start : min(ends) if ends else len(text)]


def _aside(text: str, match: re.Match[str], question: str) -> bool:
    """A limitation about something the question does not ask for, in a response that answers in another
    sentence ("The car is red. The number plate is not visible, so ..." asked the car's colour): not a refusal.
    The thing it says is unknown is read from its sentence (_UNSEEN_THING; after a possessive, its head: "the
    car's number plate" is about the plate)."""
    asked = _asked(question)
    sentence = _sentence_at(text, match.start())
    found = list(_UNSEEN_THING.finditer(sentence))
    things = [next(g for g in thing.groups() if g) for thing in found]
    if not asked or not things:
        return False
    rest = _UNSEEN_THING.sub(" ", sentence)  # the sentence's other words: naming what was asked, it is about the question
    if asked & {stem(t) for t in normalize(rest) if t not in STOPWORDS}:
        return False
    for thing in things:
        named = {stem(t) for t in normalize(thing.split("'s ")[-1]) if t not in STOPWORDS and len(t) > 2}
        if not named or named & asked:
            return False
    sentences = [part for part in re.split(r"(?<=[.!?])\s+|\n+", text) if part.strip()]
    return any(
        asked & {stem(t) for t in normalize(part)} and not _REFUSAL.search(part) and not _NOT_SHOWN.search(part) and not _TOO.search(part)
        for part in sentences
    )


#: Words of doubt or limitation: where a response has none, no refusal is hiding in a wording the patterns miss.
DOUBT = re.compile(
    r"\b(?:unclear|uncertain|unsure|unknown|unanswerable|impossible|insufficient|inconclusive|ambiguous|obscured|blurr\w*|"
    r"not (?:\w+ )?(?:clear|sure|certain|possible|feasible|visible|shown|seen|depicted|captured|legible|readable|discernible|"
    r"identifiable|apparent|evident|obvious|enough|sufficient|known|included|covered|present)|"
    r"cannot|can't|can ?not|couldn't|could not|unable|no way|(?:don't|do not|didn't|did not) (?:know|see)|"
    r"(?:does|do|did)(?: not|n't) (?:\w+ )?(?:show|include|contain|capture|depict|reveal|provide|allow|indicate|appear|cover|let)|"
    r"difficult|hard to|lack\w*|missing|limited|limitation\w*|only (?:see|shows?|covers?|captures?|gives?)|"
    r"no (?:\w+ )?(?:information|indication|evidence|sign|view|frames?|footage|way)|guess\w*|speculat\w*|assum\w*|"
    r"without (?:more|additional|further|clear|seeing)|(?:more|additional|further|other) (?:frames|context|information|footage)|"
    r"out of (?:frame|view|shot)|off[- ](?:screen|camera)|cut off|skipped|gaps?)\b",
    re.IGNORECASE,
)
#: Words of a guess or an estimate: a refusal with one of these may be an answer in disguise.
GUESS = re.compile(
    r"\b(?:likely|probably|possibly|perhaps|maybe|might|may be|could be|presumably|appears?|seems?|looks? like|guess\w*|estimat\w*|"
    r"approximately|around|roughly|about \d|suggests?|assum\w*|if i had to|my best|would say|i think|i believe)\b",
    re.IGNORECASE,
)


class RefusalReading(NamedTuple):
    refusal: int  # 1: the response declines for lack of information
    reason: str
    rule: str  # what decided: asks-if-knowable, final-refusal, (doubt-)final-answer, (doubt-)no-phrase, aside, answers-anyway, refusal-only, refusal-mixed


def _only_refuses(text: str) -> bool:
    """A response that does nothing but decline: no number, guess, contrast or final answer beside its refusal."""
    return (
        not re.search(r"\d", text)
        and not GUESS.search(text)
        and not re.search(r"\b(?:but|however|though|although|yet)\b", text, re.IGNORECASE)
    )


#: A question whether something can be told from the video ("Can the winner be identified?", "Is it possible to
#: see who ...?"): there "no, that cannot be told" is the answer "no", not a refusal. "Can you tell me who ...?" is
#: a request, not such a question.
_ASKS_IF_KNOWABLE = re.compile(
    r"^\s*(?:can|could)\b(?! you\b)[^?]*\bbe (?:determined|identified|seen|told|known|inferred|discerned|read|recogni[sz]ed|confirmed)\b"
    r"|^\s*is it (?:possible|clear|evident|apparent)\b",
    re.IGNORECASE,
)


def read_refusal(response: str, question: str = "") -> RefusalReading:
    """Stage 1 with the name of the rule that decided (`rule`), for the judge's confidence."""
    if _ASKS_IF_KNOWABLE.match(question):
        return RefusalReading(0, "the question asks whether it can be told: a reply that it cannot is the answer 'no'", "asks-if-knowable")
    stated = final_answer(response)
    if stated is not None:
        phrases = _refusal_phrases(stated, question)
        if phrases and not _answers_anyway(stated, phrases[-1], question):
            return RefusalReading(1, f"final answer is a refusal ({phrases[0].group(0)!r})", "final-refusal")
        return RefusalReading(0, f"explicit final answer {stated[:60]!r}", "doubt-final-answer" if DOUBT.search(stated) else "final-answer")
    matches = _refusal_phrases(response, question)
    if not matches:
        return RefusalReading(0, "no refusal phrase", "doubt-no-phrase" if DOUBT.search(response) else "no-phrase")
    about_the_question = [m for m in matches if not _aside(response, m, question)]
    if not about_the_question:
        return RefusalReading(
            0, f"refusal phrase {matches[0].group(0)!r} is an aside about something not asked; the response answers", "aside"
        )
    matches = about_the_question
    anyway = _answers_anyway(response, matches[-1], question)
    if anyway:
        return RefusalReading(0, f"refusal phrase {matches[-1].group(0)!r}, then {anyway}", "answers-anyway")
    rule = "refusal-only" if _only_refuses(response) else "refusal-mixed"
    return RefusalReading(1, f"refusal phrase {matches[0].group(0)!r}", rule)


def detect_refusal(response: str, question: str = "") -> tuple[int, str]:
    """(1, why) where the response declines for lack of information, else (0, why)."""
    reading = read_refusal(response, question)
    return reading.refusal, reading.reason
