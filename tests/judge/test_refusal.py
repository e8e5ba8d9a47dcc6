"""Stage 1 of the rules judge (judge/refusal.py), rule by rule: every branch of `read_refusal` with the rule name
the judge's confidence rests on and the reason a judgment records, and each exception to a refusal phrase (an
aside, an answer after it, someone else's words, a sentence about the scene) with an input on each side of it.
Expected values are read off the rules' documented behaviour; the mutation report (`make mutation`, build/mutation.md) lists what each test catches."""

import pytest

from virtuebench.judge.refusal import detect_refusal, read_refusal

COLOUR = "What colour is the car?"
DOOR = "Does the man open the door?"


@pytest.mark.parametrize(
    ("response", "question", "expected"),
    [
        # a question whether something can be told: "it cannot be told" answers it
        (
            "No, it cannot be told.",
            "Can the winner be identified?",
            (0, "the question asks whether it can be told: a reply that it cannot is the answer 'no'", "asks-if-knowable"),
        ),
        # an explicit final answer decides, refusal or not, and says whether doubt words surround it
        ("Answer: I cannot determine the colour.", COLOUR, (1, "final answer is a refusal ('I cannot determine')", "final-refusal")),
        ("Answer: red", COLOUR, (0, "explicit final answer 'red'", "final-answer")),
        ("Answer: red (the frames are blurry)", COLOUR, (0, "explicit final answer 'red (the frames are blurry)'", "doubt-final-answer")),
        # a final answer that refuses, then answers (the contrast names the car the question asks about)
        (
            "Answer: I cannot determine the colour, but the car is red.",
            COLOUR,
            (0, "explicit final answer 'I cannot determine the colour, but the car is red.'", "doubt-final-answer"),
        ),
        # "the frames do not show the door" answers "Does the man open the door?" (no): not a refusal, final or not
        (
            "Answer: The frames do not show the door.",
            DOOR,
            (0, "explicit final answer 'The frames do not show the door.'", "doubt-final-answer"),
        ),
        ("The frames do not show the door.", DOOR, (0, "no refusal phrase", "doubt-no-phrase")),
        ("It is red.", COLOUR, (0, "no refusal phrase", "no-phrase")),
        (
            "The car is red. The hat is not visible in the frames.",
            COLOUR,
            (0, "refusal phrase 'not visible in the frames' is an aside about something not asked; the response answers", "aside"),
        ),
        (
            "I cannot determine the colour, but the car is red.",
            COLOUR,
            (0, "refusal phrase 'I cannot determine', then answers after 'but'", "answers-anyway"),
        ),
        (
            "The frames are not sufficient to count precisely; I would estimate around six.",
            "How many birds are there?",
            (0, "refusal phrase 'The frames are not sufficient', then guesses after it", "answers-anyway"),
        ),
        (
            "Five or so, but I can't be certain.",
            "How many birds are there?",
            (0, 'refusal phrase "I can\'t be certain", then the refusal phrase hedges an answer given before it', "answers-anyway"),
        ),
        (
            "Although the frames do not show the car, its colour is red.",
            COLOUR,
            (0, "refusal phrase 'the frames do not show', then the refusal is a concession and the sentence answers", "answers-anyway"),
        ),
        # a refusal and nothing else, or a refusal beside a number, a guess word or a contrast
        ("I cannot determine the colour.", COLOUR, (1, "refusal phrase 'I cannot determine'", "refusal-only")),
        # a long final answer is quoted to its first 60 characters
        (
            "Answer: red, the car in the middle of the picture is a deep and bright shade of red",
            COLOUR,
            (0, "explicit final answer 'red, the car in the middle of the picture is a deep and brig'", "final-answer"),
        ),
        ("I cannot determine the colour of the 3 cars.", COLOUR, (1, "refusal phrase 'I cannot determine'", "refusal-mixed")),
        ("I cannot determine the colour; perhaps red.", COLOUR, (1, "refusal phrase 'I cannot determine'", "refusal-mixed")),
        ("However, I cannot determine the colour.", COLOUR, (1, "refusal phrase 'I cannot determine'", "refusal-mixed")),
    ],
)
def test_each_rule_of_stage_one(response, question, expected):
    assert tuple(read_refusal(response, question)) == expected
    assert detect_refusal(response, question) == expected[:2]


@pytest.mark.parametrize(
    ("response", "question", "refusal"),
    [
        # the contrast answers: by a guess word, by a person doing something (any case), by a word of the question
        ("I cannot determine the colour, but it is probably red.", COLOUR, 0),
        ("I cannot tell who leaves first, but they leave together.", "Who leaves first?", 0),
        ("I cannot tell who leaves first, but They leave together.", "Who leaves first?", 0),
        ("I cannot determine the colour, but the car is red.", COLOUR, 0),  # 'car', three letters, is a word of the question
        # ... but not by a word the question only shares in a stopword ('what') or a two-letter word ('tv')
        ("I cannot determine the colour, but what a nice day.", COLOUR, 1),
        ("I cannot tell what is on, but the tv is off.", "What is on the tv?", 1),
        # the concession answers only where the rest of its sentence does, and only the first comma splits it
        ("Although the frames do not show the car, its colour is red, clearly.", COLOUR, 0),
        ("Although the frames do not show the car, I cannot tell its colour.", COLOUR, 1),
        # ... nor where the rest says the frames show something else instead
        ("Although I cannot tell its colour, the frames do not show the car; instead they show a bus.", COLOUR, 1),
    ],
)
def test_answers_after_a_refusal_phrase(response, question, refusal):
    assert detect_refusal(response, question)[0] == refusal


@pytest.mark.parametrize(
    ("response", "question", "refusal"),
    [
        # "the frames do not show whether ...": always about the answer; otherwise a yes/no question's "no"
        ("The frames do not show whether the man opens the door.", DOOR, 1),
        ("The frames do not show the door.", DOOR, 0),
        ("The frames do not show the car; instead they show a bus.", COLOUR, 0),  # what they show instead answers
        # the look-ahead for "whether" is 80 characters: here it ends at the 81st, outside
        ("The frames do not show " + " ".join(["a" * 24, "a" * 24, "a" * 22]) + " whether it opens.", DOOR, 0),
        ("It is not shown whether the man wins.", "Does the man win?", 1),
        ("The man is not shown " + " ".join(["a" * 24, "a" * 24, "a" * 22]) + " whether it opens.", DOOR, 0),
        # a passive "not visible" refuses when its subject is what was asked: the last six words before it
        ("The man is not visible.", "Where does the man go?", 1),
        ("The man waves. The sign is not visible.", "What does the man hold?", 0),  # the subject is the sign
        ("The man beside the old red blue green car is not visible.", "Where does the man go?", 0),  # 'man' is 7 words back
        ("The car is not visible.", "Where is the car?", 1),
        ("The tv is not visible.", "Where is the tv?", 0),  # two-letter words are not read
        ("What is in there is not visible.", "What does the man hold?", 0),  # nor stopwords
        ("The xxxx is not visible.", "", 0),  # no question: nothing it could be about
    ],
)
def test_what_the_frames_do_not_show(response, question, refusal):
    assert detect_refusal(response, question)[0] == refusal
    assert read_refusal(response, question).refusal == refusal


def test_without_a_question_nothing_is_taken_as_asked():
    assert detect_refusal("The xxxx is not visible.") == (0, "no refusal phrase")
    assert read_refusal("The xxxx is not visible.").rule == "doubt-no-phrase"


@pytest.mark.parametrize(
    ("response", "question", "refusal"),
    [
        ("Said we cannot tell who wins.", "Who wins?", 0),  # someone else's words, from the text's first character
        ("What he said cannot be determined.", "What did he say?", 1),  # 'what he said' is the thing not known
        ("Whatever she said cannot be determined.", "What did she say?", 1),
        # the look-behind is 80 characters: 'what' begins at the 81st before the phrase, so only 'hat ...' is read
        ("what " + "a" * 65 + " said that cannot be determined.", "What did he say?", 0),
    ],
)
def test_someone_elses_words_are_not_a_refusal(response, question, refusal):
    assert detect_refusal(response, question)[0] == refusal


@pytest.mark.parametrize(
    ("response", "refusal"),
    [
        # "too dark to read" is a refusal when its own sentence is about the input or the speaker
        ("I found it too dark to read the sign.", 1),
        ("I found it too dark to read the sign. Sorry! Why?", 1),
        ("dark.I found it too dark to read the sign.", 1),
        # ... and about the scene when the input is named only in the sentence before, whatever ends that sentence
        ("The frames are dark. It was too dark to read the sign.", 0),
        ("The frames are dark! It was too dark to read the sign.", 0),
        ("Are the frames dark? It was too dark to read the sign.", 0),
        ("It is night. The frames are dark. It was too dark to read the sign.", 0),  # the sentence starts at the last mark
        ("It is night! The frames are dark! It was too dark to read the sign.", 0),
        ("Is it night? Are the frames dark? It was too dark to read the sign.", 0),
    ],
)
def test_too_dark_is_about_the_frames_only_in_its_own_sentence(response, refusal):
    assert detect_refusal(response, "What does the sign say?")[0] == refusal


@pytest.mark.parametrize(
    ("response", "question", "refusal"),
    [
        # an aside: a limitation about something not asked, in a response that answers in another sentence
        ("The car is red. The hat is not visible in the frames.", COLOUR, 0),
        ("The number plate is not visible in the frames. The car is red.", COLOUR, 0),
        ("The car is red. The number plate is not visible in the frames", COLOUR, 0),  # no full stop at the end
        ("The car is red. The X-ray plate is not visible in the frames.", COLOUR, 0),
        ("The roof is red. The car's number plate is not visible in the frames.", "What colour is the car's roof?", 0),
        ("The car is red\nThe number plate is not visible in the frames.", COLOUR, 0),  # a line break ends a sentence
        # not an aside: no other sentence answers, or the limitation names what was asked (also by implication)
        ("The car is red. I cannot tell.", COLOUR, 1),
        ("The weather is nice. The hat is not visible in the frames.", COLOUR, 1),
        ("What a day. The hat is not visible in the frames.", COLOUR, 1),
        ("The tv is black. The hat is not visible in the frames.", "What colour is the tv?", 1),
        ("The number is 7. The number plate is not visible in the frames.", "What number is shown?", 1),
        ("Three cars pass. The total is not visible in the frames.", "How many cars pass when the light turns green?", 1),
        ("The car is red. The number plate is not visible in the frames, see X for the car.", COLOUR, 1),
        ("The car is red. The car is parked. The hat is not visible in the frames.", COLOUR, 0),  # its sentence only
        # what is not visible is the input itself, or a word too short to name anything
        ("The car is red. The frames are not visible in the video.", COLOUR, 1),
        ("The car is red. The tv is not visible in the frames.", COLOUR, 1),
    ],
)
def test_an_aside_about_something_not_asked(response, question, refusal):
    assert detect_refusal(response, question)[0] == refusal


@pytest.mark.xfail(
    strict=True,
    reason="known limitation: a phrase matched with the full stop before it ('.Unable to see') ends its own sentence "
    "at that mark (judge/refusal.py, _sentence_at), so the aside is not seen; a response rarely starts with a mark",
)
def test_a_leading_full_stop_does_not_hide_an_aside():
    assert (
        detect_refusal(".Unable to see the hat. The car is red.", COLOUR)[0]
        == detect_refusal("Unable to see the hat. The car is red.", COLOUR)[0]
    )
