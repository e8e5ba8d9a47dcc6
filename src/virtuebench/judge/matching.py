"""Stage 2 of the rules judge, Case A: does the response give the ground truth (`answer_matches`)? The response
is read once (`read`), then `MATCHERS`, small named rules, are asked in order; the first that decides gives the
verdict and its reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from virtuebench.judge.numbers import (
    STOPWORDS,
    UNITS,
    YES_NO_QUESTION,
    final_answer,
    fractions_as_numbers,
    is_number,
    normalize,
    number_matches,
    ordinal,
    stem,
)

_NEGATIONS = {"not", "no", "never", "nor", "n't", "isn't", "aren't", "wasn't", "weren't", "doesn't", "don't"}


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


_SENTENCE_NEGATIONS = _NEGATIONS | {"none", "nothing", "nobody", "neither", "without", "didn't", "cannot", "can't", "wasn't", "weren't"}
#: Share of the ground truth's content words a sentence-long response must contain. Measured against
#: the CVRR-ES authors' GPT-3.5 verdicts (docs/judges.md, "How far the rules judge is from an LLM judge").
CONTENT_RECALL = 0.3


def _first_sentence(text: str) -> list[str]:
    return normalize(re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0])


def _polarity(tokens: list[str]) -> str | None:
    return next((token for token in tokens[:3] if token in ("yes", "no")), None)


def sentence_matches(answer: str, response: str) -> tuple[int, str]:
    """For a sentence-long ground truth: yes/no, then negation, then content-word recall."""
    decision = _sentence(answer, response)
    return decision.judgement, decision.reason


#: Content-word recall bands of a sentence answer, for the rules' confidence: none, low (below CONTENT_RECALL),
#: mid (up to HIGH_RECALL), high.
HIGH_RECALL = 0.6


def _sentence(answer: str, response: str) -> Decision:
    expected, tokens = normalize(answer), normalize(response)
    wanted, said = _polarity(expected), _polarity(tokens)
    if wanted and said:
        if wanted == said:
            return Decision(1, f"answers {said!r} as the ground truth", "polarity")
        return Decision(0, f"answers {said!r}, ground truth {wanted!r}", "polarity")
    if bool(_SENTENCE_NEGATIONS & set(_first_sentence(answer))) != bool(_SENTENCE_NEGATIONS & set(_first_sentence(response))):
        return Decision(0, "negates where the ground truth affirms, or the reverse", "negation")
    content = {t for t in expected if t not in STOPWORDS and len(t) > 2}
    if not content:
        return Decision(0, "no content words to compare", "no-content")
    recall = len(content & {t for t in tokens if t not in STOPWORDS}) / len(content)
    band = (
        "recall-none"
        if recall == 0
        else "recall-low"
        if recall < CONTENT_RECALL
        else "recall-mid"
        if recall < HIGH_RECALL
        else "recall-high"
    )
    return Decision(int(recall >= CONTENT_RECALL), f"{recall:.0%} of the ground truth's content words", band)


class Decision(NamedTuple):
    judgement: int  # 1: the response gives the ground truth
    reason: str
    how: str = ""  # which way the matcher decided, where it has several (the rules' confidence labels tell them apart)


@dataclass(frozen=True)
class Reading:
    """One (question, ground truth, response) as every matcher sees it, read once."""

    question: str
    answer: str
    response: str
    expected: list[str]  # the ground truth's tokens
    as_number: list[str]  # an ordinal or a numbered label read as its number: "third (lap)", "lap 3" -> ["3"]
    as_written: list[str]  # the response's tokens before a fractional ground truth has "a third" read as 0.3333
    segment: str  # what is read of the response: its explicit final answer if it has one, timestamps blanked
    tokens: list[str]
    conclusion: list[str]  # the tokens after its last conclusion marker ("so", "in total", "="), if any


Matcher = Callable[[Reading], Decision | None]


def _as_number(expected: list[str], answer: str) -> list[str]:
    if not expected:
        return expected
    duration = re.search(r"\b(?:a|one|per|each) second\b", answer, re.IGNORECASE)
    if (number := ordinal(expected, 0)) and len(expected) <= 2 and not duration:
        return [number]  # "third (lap)" as 3: "3rd", "third" and "lap 3" all answer it
    if len(expected) == 2 and (number := ordinal(expected, 1)):
        return [number]
    if len(expected) == 2 and is_number(expected[1]) and not is_number(expected[0]):
        return [expected[1]]  # "lap 3"
    return expected


def read(question: str, answer: str, response: str) -> Reading:
    segment = final_answer(response) or response
    # Timestamps ("at 0:15") are not the answer's number.
    segment = re.sub(r"\b\d{1,2}:\d{2}(?::\d{2})?\b", " ", segment)
    expected = normalize(answer)
    as_number = _as_number(expected, answer)
    tokens = as_written = normalize(segment)
    if as_number and is_number(as_number[0]) and float(as_number[0]) < 1 and "." in as_number[0]:
        # only against a fractional ground truth is "a third" a fraction; elsewhere "a third goal" is the 3rd
        segment = fractions_as_numbers(segment)
        tokens = normalize(segment)
    # A short chain of reasoning: where the part after its conclusion marker states a number or names an
    # option, that is the answer; otherwise the whole response is read.
    conclusion = normalize(concluded(segment))
    return Reading(question, answer, response, expected, as_number, as_written, segment, tokens, conclusion)


def empty_truth(r: Reading) -> Decision | None:
    """Nothing to compare against: wrong."""
    return None if r.expected else Decision(0, "empty ground truth")


def number_as_written(r: Reading) -> Decision | None:
    """A label with its number ("the number 9", "lap 3") stated as the ground truth writes it."""
    if len(r.expected) == 2 and is_number(r.expected[1]) and _find(r.as_written, r.expected):
        return Decision(1, f"states {' '.join(r.expected)!r}")
    return None


def stated_number(r: Reading) -> Decision | None:
    """A number, with its unit if it has one, against the number the response concludes on or the sentence
    about what was asked states; words after it ("50% off", "3 people") are not compared."""
    expected = r.as_number
    if not (expected and is_number(expected[0]) and len(expected) <= 3 and not any(map(is_number, expected[1:]))):
        return None
    unit = [expected[1]] if len(expected) > 1 and expected[1] in UNITS else []
    marked = concluded(r.segment) != r.segment and any(map(is_number, r.conclusion))
    chosen = r.conclusion if marked else _closest_sentence(r.question, r.segment)
    return Decision(*number_matches(r.question, [expected[0], *unit], chosen))


def named_option(r: Reading) -> Decision | None:
    """Where the question offers alternatives and the ground truth is one, the one the response names first."""
    options = [normalize(option) for option in question_options(r.question)]
    if r.expected not in options:
        return None
    tokens = r.conclusion if any(_find(r.conclusion, option) for option in options) else r.tokens
    named = sorted((hits[0], i) for i, option in enumerate(options) if (hits := _find(tokens, option)))
    if not named:
        return Decision(0, "names none of the question's options")
    chosen = options[named[0][1]]
    if options == [["before"], ["after"]]:
        chosen = _relative_to_question(r.question, tokens, named[0][0], chosen)
    if chosen == r.expected:
        return Decision(1, f"names {' '.join(chosen)!r} first")
    return Decision(0, f"names {' '.join(chosen)!r} first, expected {' '.join(r.expected)!r}")


def yes_or_no(r: Reading) -> Decision | None:
    """A yes/no question with a sentence-long ground truth: the same yes or no, and nothing contradicting it."""
    wanted, said = _polarity(r.expected), _polarity(r.tokens)
    if not (wanted and said and len(r.expected) > 1 and YES_NO_QUESTION.match(r.question)):
        return None
    # "No, the shop is closed" answered "No, its shutters are down": the question asked yes or no; the
    # rest may not contradict the truth's colour, number or name ("No, it is blue" answered "No, it is green")
    if wanted != said:
        return Decision(0, f"answers {said!r}, ground truth {wanted!r}")
    clash = _contradicts(r.answer, r.expected, r.response, r.tokens)
    if clash:
        return Decision(0, f"answers {said!r} as the ground truth, but {clash}")
    return Decision(1, f"answers {said!r} as the ground truth")


def sides_score(r: Reading) -> Decision | None:
    """A score that names both sides ("Lions 2, Tigers 3"): see _score_with_sides."""
    score = _score_with_sides(r.answer, r.segment)
    return None if score is None else Decision(*score)


def negation_for_no(r: Reading) -> Decision | None:
    """A bare "no" answered by a first sentence that negates."""
    if r.expected == ["no"] and not _find(r.tokens, ["yes"]) and _NEGATIONS & set(_first_sentence(r.segment)):
        return Decision(1, "negates, as the ground truth's 'no'")
    return None


_SHORT_YES = re.compile(
    r"\s*(?:(?:yes|yep|yeah|yup)\b|(?:he|she|it|they|there) (?:does|did|is|was|are|were|can|has|have)\b(?!\s*(?:not|n't)))",
    re.IGNORECASE,
)


def affirmation_for_yes(r: Reading) -> Decision | None:
    """A bare "yes" answered by "yes" or "it does", without a negation in the first sentence."""
    if r.expected == ["yes"] and _SHORT_YES.match(r.segment) and not _NEGATIONS & set(_first_sentence(r.segment)):
        return Decision(1, "affirms, as the ground truth's 'yes'")
    return None


def someone_else(r: Reading) -> Decision | None:
    """The ground truth names someone and the response names others, not them."""
    other = _other_name(r.answer, r.response)
    return Decision(0, other) if other else None


def listed_items(r: Reading) -> Decision | None:
    """A ground truth listing a few items ("salt, then pepper"): all of them, in its order where the question
    asks for an order."""
    items = [normalize(part) for part in re.split(r",|\bthen\b|->|→|\band\b", r.answer) if normalize(part)]
    if not (2 <= len(items) <= 6 and all(len(item) <= 4 for item in items)):
        return None
    found = [(_find(r.tokens, item) or [None])[0] for item in items]
    if any(position is None for position in found):
        missing = [" ".join(item) for item, position in zip(items, found) if position is None]
        # none of them named: the commas may not make a list at all; the matchers after this one decide
        return Decision(0, f"leaves out {', '.join(missing)}") if len(missing) < len(items) else None
    if re.search(r"\b(?:order|sequence|first|appear|happen|list)\w*\b", r.question, re.IGNORECASE) and re.search(
        r",|\bthen\b|->|→", r.answer
    ):
        if found == sorted(found):
            return Decision(1, "names the items in the ground truth's order")
        return Decision(0, "names the items in another order")
    return Decision(1, "names every item of the ground truth")


#: Words naming one of two opposite directions, orders, sides or outcomes (with their synonyms): a response that
#: names one side where the ground truth names the other, and not the ground truth's, contradicts it, however many
#: other words they share ("the visitors scored" is not "the hosts scored").
_OPPOSITES: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(a.split()), frozenset(b.split()))
    for a, b in (
        ("left leftward leftwards", "right rightward rightwards"),
        ("clockwise", "counterclockwise anticlockwise"),
        ("upward upwards upstairs uphill", "downward downwards downstairs downhill"),
        ("forward forwards", "backward backwards reverse"),
        ("increase increases increased increasing", "decrease decreases decreased decreasing"),
        ("ascend ascends ascending ascended", "descend descends descending descended"),
        ("before earlier", "after later"),
        ("first", "last"),
        ("win wins won winning winner winners", "lose loses lost losing loser losers"),
        ("home hosts host", "away visitors visiting visitor"),
        ("push pushes pushed pushing", "pull pulls pulled pulling"),
        ("inside", "outside"),
        ("above", "below beneath underneath"),
        ("top", "bottom"),
        ("north northward", "south southward"),
        ("east eastward", "west westward"),
        ("higher", "lower"),
        ("more", "fewer less"),
        ("faster", "slower"),
        ("taller", "shorter"),
        ("heavier", "lighter"),
        ("larger bigger", "smaller"),
        ("older", "younger"),
        ("day daytime daylight", "night nighttime"),
        ("open opens opened opening", "close closes closed closing shut shuts"),
        ("enter enters entered entering", "exit exits exited exiting"),
    )
)
_PAIRED = {word: (a, b) for a, b in _OPPOSITES for word in a | b}
#: "from north to south", "east to west", "top towards the bottom": a direction between two opposite ends.
_FROM_TO = re.compile(
    r"\b(?:from )?(?:the )?(\w+)(?: (?:side|edge|end|corner)(?: of (?:the )?\w+)?)? (?:to|towards|toward|into) (?:the )?(\w+)\b"
)


def _direction(text: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """The (from, to) sides of the first "from X to Y" in `text` whose X and Y are opposites, if any."""
    for match in _FROM_TO.finditer(text.lower()):
        first, second = match.group(1), match.group(2)
        if first in _PAIRED and _PAIRED[first] == _PAIRED.get(second) and (first in _PAIRED[first][0]) != (second in _PAIRED[first][0]):
            pair = _PAIRED[first]
            return (pair[0], pair[1]) if first in pair[0] else (pair[1], pair[0])
    return None


def _opposite(answer: str, expected: list[str], response: str, tokens: list[str]) -> str | None:
    """The response goes the other way than the ground truth ("south to north" for "north to south"), or names the
    opposite of a side, direction or outcome the ground truth names and not the ground truth's own."""
    wanted, said = _direction(answer), _direction(response)
    if wanted and said and wanted != said:
        return "gives the opposite direction to the ground truth's"
    truth, words = set(expected), set(tokens)
    for a, b in _OPPOSITES:
        for mine, other in ((a, b), (b, a)):
            if truth & mine and not truth & other and words & other and not words & mine:
                return f"says {sorted(words & other)[0]!r} where the ground truth says {sorted(truth & mine)[0]!r}"
    return None


def opposite_named(r: Reading) -> Decision | None:
    """The opposite direction, order, side or outcome to the ground truth's (see _OPPOSITES)."""
    clash = _opposite(r.answer, r.expected, r.segment, r.tokens)
    return Decision(0, clash) if clash else None


def truth_stated(r: Reading) -> Decision | None:
    """The ground truth's words, in order and not negated."""
    return Decision(1, f"states {' '.join(r.expected)!r}") if _find(r.tokens, r.expected) else None


def another_colour(r: Reading) -> Decision | None:
    """Another colour named than the ground truth's."""
    other = _other_colour(r.expected, r.tokens)
    return Decision(0, other) if other else None


def digits_left_out(r: Reading) -> Decision | None:
    """A sentence-long ground truth whose numbers in digits (a score within a sentence) are not all stated."""
    if len(r.expected) < 3:
        return None
    missing = [t for t in normalize(" ".join(re.findall(r"\d+(?:[.,]\d+)?", r.answer))) if t not in r.tokens]
    return Decision(0, f"leaves out {', '.join(missing)} of the ground truth") if missing else None


def sentence(r: Reading) -> Decision | None:
    """A sentence-long ground truth (CVRR-ES style): see sentence_matches."""
    return _sentence(r.answer, r.segment) if len(r.expected) >= 3 else None


#: In order: the first that decides (returns a Decision) gives the verdict. The order matters: a number is
#: compared as a number, and an option by which one is named first, before the ground truth's words are looked
#: for anywhere (a response that weighs both options states each).
MATCHERS: tuple[Matcher, ...] = (
    empty_truth,
    number_as_written,
    stated_number,
    named_option,
    yes_or_no,
    sides_score,
    negation_for_no,
    affirmation_for_yes,
    someone_else,
    listed_items,
    opposite_named,
    truth_stated,
    another_colour,
    digits_left_out,
    sentence,
)


_ASKS_NUMBER = re.compile(
    r"\b(?:how (?:many|much|long|far|fast|old|tall|high|often)|what (?:number|score|time|year|percentage|price|temperature))\b|\bcount\b",
    re.IGNORECASE,
)
_ASKS_COLOUR = re.compile(r"\bcolou?rs?\b", re.IGNORECASE)
_YES_NO = re.compile(r"^\W*(?:yes|no|yeah|yep|nope)\b", re.IGNORECASE)


def answer_shape(question: str, response: str) -> str | None:
    """What in the response has the shape of an answer to the question, without knowing the answer: a number to
    a how-many question, a colour to a colour question, a yes or no to a yes/no question, one of the options a
    question offers. None where nothing does (the response may still answer, in words the rules cannot check)."""
    tokens = normalize(final_answer(response) or response)
    if _ASKS_NUMBER.search(question) and any(is_number(t) for t in tokens):
        return "number"
    if _ASKS_COLOUR.search(question) and _COLOURS & set(tokens):
        return "colour"
    if YES_NO_QUESTION.match(question) and _YES_NO.match(final_answer(response) or response):
        return "yes-no"
    options = [normalize(option) for option in question_options(question)]
    if any(option and _find(tokens, option) for option in options):
        return "option"
    return None


def decide(question: str, answer: str, response: str) -> tuple[Decision, str]:
    """Case A: the first matcher's decision, and the name of what decided (the matcher's, or `not_stated`)."""
    reading = read(question, answer, response)
    for matcher in MATCHERS:
        decision = matcher(reading)
        if decision is not None:
            return decision, matcher.__name__ + (f"/{decision.how}" if decision.how else "")
    return Decision(0, f"does not state {' '.join(reading.expected)!r}"), "not_stated"


def answer_matches(question: str, answer: str, response: str) -> tuple[int, str]:
    """Case A: (1, why) where the response gives the ground truth, else (0, why)."""
    decision, _ = decide(question, answer, response)
    return decision.judgement, decision.reason


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
    """A colour, opposite, number or name the response gives in place of the ground truth's, if any."""
    colour = _other_colour(expected, tokens) or _opposite(answer, expected, response, tokens)
    if colour:
        return colour
    wanted_numbers, said_numbers = {t for t in expected if is_number(t)}, {t for t in tokens if is_number(t)}
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
    won or lost ("the Hawks fall 1-4", "4-1 to the Owls", "Owls 4, Hawks 1"); None where either is not
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
        names |= {w.lower() for w in words[1:] if w[0].isupper() and w.lower() not in STOPWORDS and w.lower() != "i"}
    return names


def _closest_sentence(question: str, text: str) -> list[str]:
    """Where several sentences state numbers, the one that shares most words with the question (the last
    on a tie): 'Six people wait on the dock. Four are on board.' answers 'how many are on board?' with 4."""
    sentences = [normalize(part) for part in re.split(r"(?<=[.!?;])\s+", text.strip()) if part.strip()]
    with_numbers = [tokens for tokens in sentences if any(map(is_number, tokens))]
    if len(with_numbers) <= 1:
        return normalize(text)
    asked = {stem(t) for t in normalize(question) if t not in STOPWORDS and not is_number(t)}
    # on a tie the later sentence: a description usually ends on what it was asked
    return max(reversed(with_numbers), key=lambda tokens: len(asked & {stem(t) for t in tokens}))


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
