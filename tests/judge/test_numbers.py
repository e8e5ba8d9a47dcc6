"""Numbers as the rules judge reads them (judge/numbers.py): symbols and spelled-out forms written as plain words and
numbers, and a stated number against the ground truth's, with its unit. Expected values follow the conversions
the module documents ("$5 -> 5 dollars", "120 seconds -> 2 min", whole counts exact, measurements within 1%)."""

import pytest

from virtuebench.judge.numbers import _symbols, normalize, number_matches


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("It’s 2–3 — or 4−1", "it's 2-3  -  or 4-1"),  # typographic apostrophe and dashes
        ("1,000 and 2,400,000 but 1,00", "1000 and 2400000 but 1,00"),  # thousands separators only
        ("$5", "5 dollars"),
        ("€7.5 billion", "7.5 billion euros"),  # the currency after the amount and its scale
        ("£3", "3 gbp"),
        ("5 %", "5 percent"),
        ("5 per cent", "5 percent"),
        ("99¢", "0.99 dollars"),
        ("50 cents", "0.5 dollars"),
        ("two hours and a half", "2.5 hours"),
        ("half an hour", "0.5 hours"),
        ("one and a half", "1.5"),
        ("a quarter of an hour", "15 minutes"),
        ("three quarters of an hour", "45 minutes"),
        ("not one, but two goals", "two goals"),  # the correction counts
        ("Not a single one.", "zero"),
        ("two apiece", "two to two"),
        ("three-all", "three to three"),
        ("tied at four", "four to four"),
        ("runner-up", "second"),
        ("counter-clockwise", "anticlockwise"),
        ("plus sign", "cross"),
        ("30 degrees celsius", "30 degc"),
        ("80 deg fahrenheit", "80 degf"),
        ("20 °C", "20 degc"),
        ("90°", "90 degrees"),
        ("3rd", "3"),
        ("1/2", "0.5"),
        ("3/0", "3/0"),  # no division by zero
        ("5km", "5 km"),
        ("6 games to 4", "6 to 4"),
        ("a three-sided shape", "a triangle"),
        ("6 sided figure", "hexagon"),
        ("an eight-sided polygon", "an octagon"),
    ],
)
def test_symbols_and_spelled_out_forms_are_written_plainly(text, written):
    assert _symbols(text) == written


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("twenty-five cars", ["25", "cars"]),
        ("the twenty-third lap", ["23", "lap"]),
        ("two dozen eggs", ["24", "eggs"]),
        ("half a dozen", ["6"]),
        ("one hundred", ["100"]),
        ("2.4 million", ["2400000"]),
        ("three quarters", ["0.75"]),
        ("a half", ["0.5"]),
        ("the fourth one", ["fourth"]),
        ("€7.5 billion", ["7500000000", "euros"]),
    ],
)
def test_number_words_become_numbers(text, tokens):
    assert normalize(text) == tokens


@pytest.mark.parametrize(
    ("question", "expected", "response", "verdict"),
    [
        ("How many birds?", ["3"], "There are three birds.", (1, "number 3 matches")),
        ("How many birds?", ["3"], "four birds", (0, "number 4 != 3")),
        ("How many birds?", ["3"], "Some birds.", (0, "no number in the response")),
        ("How many?", ["100"], "101", (0, "number 101 != 100")),  # a count is exact: 1% would let 101 pass
        ("How many?", ["3"], "3 of the 10 cars", (1, "number 3 matches")),
        ("Which place did she finish?", ["2"], "She came second.", (1, "number 2 matches")),  # an ordinal alone
        ("Which lap?", ["2"], "the second lap and the third", (1, "number 2 matches")),
        ("Who came first?", ["1"], "He was 5 second behind", (0, "number 5 != 1")),  # "5 second": a time, not 2nd
        # measurements: 1% tolerance, units converted
        ("How fast?", ["9.58", "s"], "9.6 s", (1, "9.6 s matches")),
        ("How fast?", ["9.58", "s"], "9.7 s", (0, "number 9.7 != 9.58")),
        ("How long?", ["2", "min"], "120 seconds", (1, "120 min matches")),
        ("How long?", ["120", "s"], "2 minutes", (1, "2 s matches")),
        ("How far?", ["1500", "m"], "1.5 km", (1, "1.5 m matches")),
        ("How far?", ["1.5", "km"], "1500 m", (1, "1500 km matches")),
        ("How far?", ["5", "km"], "5 miles", (0, "unit mi != km")),
        ("How much?", ["5", "gbp"], "5 pounds", (1, "5 gbp matches")),  # pounds against £: the currency
        # shares: 50% against 0.5, a quarter against 25%
        ("What share?", ["0.5"], "50%", (1, "number 50 matches")),
        ("What share?", ["25", "percent"], "a quarter", (1, "0.25 % matches")),
        # a bare number counts only where the question names the unit
        ("How many kilometres did she run?", ["5", "km"], "5", (1, "number 5 matches; the question names the unit")),
        ("How far did she run?", ["5", "km"], "5", (0, "number without its unit (km)")),
        ("How many?", ["3", "percent"], "3", (0, "number without its unit (%)")),
    ],
)
def test_a_stated_number_against_the_truth(question, expected, response, verdict):
    assert number_matches(question, expected, normalize(response)) == verdict
