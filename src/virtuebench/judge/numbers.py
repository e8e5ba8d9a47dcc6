"""Reading text as tokens for the rules judge, numbers as numbers: number words, fractions, ordinals, symbols
and units (`normalize`), and a stated number compared with the ground truth's (`number_matches`). Also the few
readings both refusal and matching need (`final_answer`, yes/no questions, stop words), so neither imports the other.
"""

from __future__ import annotations

import re

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


def ordinal(tokens: list[str], i: int) -> str | None:
    """The number an ordinal word stands for ("third" -> 3; "second" unless a number precedes it: "5 second")."""
    if tokens[i] == "second":
        return "2" if i == 0 or not is_number(tokens[i - 1]) else None
    return _ORDINALS.get(tokens[i])


_FRACTIONS = {"half": "0.5", "quarter": "0.25", "quarters": "0.25", "third": "0.3333", "thirds": "0.3333"}
_DENOMINATORS = {"fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10}
_FRACTIONS |= {f"{name}{plural}": f"{1 / n:.4g}" for name, n in _DENOMINATORS.items() for plural in ("", "s")}
#: "a third", "one eighth": read as fractions only where the ground truth is one (else "a third goal" is 3rd)
_ONE_FRACTION = re.compile(rf"\b(?:a|an|one) ({'|'.join(['half', 'third', 'quarter', *_DENOMINATORS])})\b")
#: Units in their canonical form: value and unit must both be right (the judge prompt).
UNITS = {
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
    "gbp": "gbp",
    "sterling": "gbp",
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


_SMALL = {"a": "1", "an": "1"} | _NUMBER_WORDS  # before "and a half"
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9, "trillion": 10**12}


def _plain(value: float) -> str:
    """A number as the tokens write it: 2400000, 0.5 (never 2.4e+06)."""
    return str(int(value)) if value == int(value) else f"{value:.10g}"


def _symbols(text: str) -> str:
    """Symbols and compact forms as words: $5 -> 5 dollars, 5% -> 5 percent, 3rd -> 3, 1/2 -> 0.5, 9:30 kept."""
    text = text.lower().replace("’", "'").replace("–", "-").replace("—", " - ").replace("−", "-")
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 1,000 -> 1000, 2,400,000 -> 2400000
    # The currency after the amount and its scale word: "€7.5 billion" reads as "7.5 billion euros".
    for symbol, currency in (("[$]", "dollars"), ("€", "euros"), ("£", "gbp")):
        text = re.sub(rf"{symbol}\s*(\d+(?:\.\d+)?)(\s*(?:{'|'.join(_SCALES)})\b)?", rf"\1\2 {currency}", text)
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
    # a tie written out: "two apiece", "three-all", "one all", "tied at four", "level at 1" read as N to N
    _tied = r"(zero|nil|one|two|three|four|five|six|seven|eight|nine|ten|\d+)"
    text = re.sub(rf"\b{_tied}(?: apiece|[- ]all)\b", r"\1 to \1", text)
    text = re.sub(rf"\b(?:tied|level|square|drawn|even) at {_tied}\b", r"\1 to \1", text)
    text = re.sub(r"\brunners?[- ]up\b", "second", text)
    text = re.sub(r"\b(?:counter|anti)[- ]?clockwise\b", "anticlockwise", text)
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
            out.append(f"{12 * float(out.pop()):g}" if out and is_number(out[-1]) else "12")  # two dozen, half a dozen
        elif token in _SCALES and out and is_number(out[-1]):
            out.append(_plain(float(out.pop()) * _SCALES[token]))  # one hundred, 2.4 million
        elif token in _FRACTIONS and out and re.fullmatch(r"\d+", out[-1]) and token != "half":
            out.append(f"{int(out.pop()) * float(_FRACTIONS[token]):.4g}")  # three quarters, two thirds
        elif token in ("half", "quarter") and (not out or not re.fullmatch(r"\d+", out[-1])):
            out.append(_FRACTIONS[token])
        elif token == "1" and out and out[-1] in _ORDINALS:
            continue  # "the fourth one": a pronoun
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
            and is_number(tokens[i - 1])
            and is_number(tokens[i + 1])
        )
    ]


def is_number(token: str) -> bool:
    return re.fullmatch(r"\d+(?:\.\d+)?", token) is not None


def fractions_as_numbers(text: str) -> str:
    """The text lower-cased, with "a third", "one eighth" ... as their values (0.3333, 0.125)."""
    return _ONE_FRACTION.sub(lambda m: _FRACTIONS[m.group(1)], text.lower())


# Token and question readings that refusal detection and matching both use.


def stem(token: str) -> str:
    if len(token) == 4 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]  # puts, cars
    return re.sub(r"(?:ing|ed|es|s)$", "", token) if len(token) > 4 else token


STOPWORDS = set(
    "is are was were be been being do does did to of in on at by for with from and or but that this these those it its "
    "there their they them he she his her him we you your i me my as video shown shows show seen see frames frame into "
    "out up down over about than then so such can could would should will may might also only just very what which who "
    "whom whose when where why how any some all".split()
)
YES_NO_QUESTION = re.compile(
    r"^\s*(?:(?:in|throughout|during|at) [^,?]*, )?(?:does|do|did|is|are|was|were|can|could|has|have|had|will|would|should)\b",
    re.IGNORECASE,
)
_FINAL_ANSWER = re.compile(r"(?:final answer|the answer is|answer)\s*(?:is)?\s*[:：]|the answer is\b", re.IGNORECASE)


def final_answer(response: str) -> str | None:
    """The text after the last explicit 'Answer:' / 'the answer is', if the response has one."""
    markers = list(_FINAL_ANSWER.finditer(response))
    if not markers:
        return None
    return response[markers[-1].end() :].strip() or None


#: Before a number that is the whole a part is taken from ("of the 5 people, 3 stay", "among 8 cars, 2 are red"),
#: unless it is itself the total asked for ("a total of 9", "the number of 9").
_PART_OF = ("of", "among", "amongst")
_TOTAL_OF = ("total", "number", "sum", "count", "group", "set", "team", "series", "made", "consists", "consisting")


def _answering(tokens: list[str], positions: list[int]) -> int:
    """The position of the number that answers: the first one stated, passing over a whole that a later number
    is a part of (the answer then is the part)."""
    for i in positions[:-1]:
        whole = tokens[i - 1] in _PART_OF and not (i > 1 and tokens[i - 2] in _TOTAL_OF) if i > 0 else False
        if not whole:
            return i
    return positions[-1]


def number_matches(question: str, expected: list[str], tokens: list[str]) -> tuple[int, str]:
    """The first number stated (after any conclusion marker) against the ground truth's (whole numbers without a
    unit exactly, measurements within 1%); with a
    unit, the response's unit (if it gives one) must be the same, and a bare number counts only when the
    question names the unit."""
    positions = [i for i, token in enumerate(tokens) if is_number(token)]
    ordinals = [i for i in range(len(tokens)) if ordinal(tokens, i)]
    if not positions and ordinals and len(expected) == 1:
        positions, tokens = ordinals, [ordinal(tokens, i) or token for i, token in enumerate(tokens)]
    if not positions:
        return 0, "no number in the response"
    first = _answering(tokens, positions)
    value, wanted = float(tokens[first]), float(expected[0])
    unit = UNITS[expected[1]] if len(expected) > 1 else None
    said = UNITS.get(tokens[first + 1]) if first + 1 < len(tokens) else None
    if unit == "gbp" and said == "lb":
        said = "gbp"  # "5 pounds" against "£5": the currency
    if unit and said and said != unit and (unit, said) in _SCALE or (said, unit) in _SCALE:
        factor = _SCALE.get((said, unit)) or 1 / _SCALE[(unit, said)]
        value, said = value * factor, unit  # 120 seconds -> 2 min
    if said == "%" and unit is None and wanted <= 1:
        value, said = value / 100, None  # 50% against a fraction of 0.5
    elif unit == "%" and said is None and value <= 1 < wanted:
        value, said = value * 100, "%"  # "a quarter" against 25%
    # Whole numbers without a unit (counts, scores, years, bib or jersey numbers) must be exact; measurements and
    # decimals get a 1% rounding tolerance (9.6 s for 9.58 s).
    exact = unit is None and said is None and value.is_integer() and wanted.is_integer()
    if value != wanted if exact else abs(value - wanted) > 0.01 * max(1.0, abs(wanted)):
        return 0, f"number {tokens[first]} != {expected[0]}"
    if unit is None:
        return 1, f"number {tokens[first]} matches"
    if said is not None:
        return (1, f"{tokens[first]} {said} matches") if said == unit else (0, f"unit {said} != {unit}")
    named = any(UNITS.get(token) == unit for token in normalize(question))
    return (1, f"number {tokens[first]} matches; the question names the unit") if named else (0, f"number without its unit ({unit})")
