import json
import subprocess
import sys

import pytest

from virtuebench import REFUSAL_ANSWER
from virtuebench.judge.rules import RulesJudge, detect_refusal, normalize

judge = RulesJudge()

# The supplementary's Fig. 2 responses (the VirtueBench supplementary material, section 5), shortened.
QWEN3_32B = (
    'Looking at the sequence: At "0:04", Challengers = 0. At "0:24", Challengers = 5. There is no frame '
    'showing the challengers scoring their "first" point. Therefore, based strictly on the visual evidence, '
    '"the frames do not provide enough information" to determine the exact score. **Answer: Not enough information.**'
)
QWEN3_8B = (
    "At 0:04, the scoreboard shows 3 and 0. However, the scoreboard update is not shown immediately after this "
    "event in the provided frames. Therefore, Bugs & Daffy had already scored 3 points. The answer is: 3 points."
)
GEMINI = (
    "The provided frames do not show the exact moment when the challenger scores for the first time. "
    "Therefore, the frames do not provide enough information to answer when Bugs & Daffy scored."
)


@pytest.mark.parametrize(
    "response,refusal",
    [
        (REFUSAL_ANSWER, 1),
        (QWEN3_32B, 1),
        (GEMINI, 1),
        (QWEN3_8B, 0),
        ("I cannot determine the colour from these frames.", 1),
        ("There is insufficient visual information to answer.", 1),
        ("The circle is red.", 0),
        ("Maybe red, I'm not sure.", 0),
        ("", 0),
    ],
)
def test_refusal_detection(response, refusal):
    assert detect_refusal(response)[0] == refusal


def test_case_b_needs_a_refusal():
    question = "What colour is the star?"
    assert judge.judge(question, REFUSAL_ANSWER, GEMINI).judgement == 1
    verdict = judge.judge(question, REFUSAL_ANSWER, "The star is red.")
    assert (verdict.refusal, verdict.judgement) == (0, 0)


def test_case_a_refusal_is_wrong():
    verdict = judge.judge("What colour is the star?", "red", "The video does not provide enough information.")
    assert (verdict.refusal, verdict.judgement) == (1, 0)


@pytest.mark.parametrize(
    "question,answer,response,correct",
    [
        ("What colour is the star?", "red", "It is red.", 1),
        ("What colour is the star?", "red", "The star is not red, it is blue.", 0),
        ("What colour is the border?", "grey", "A gray border.", 1),
        ("How many squares of different colours appear?", "3", "Three squares appear.", 1),
        ("How many squares of different colours appear?", "3", "I count 2 squares.", 0),
        ("How many points?", "7", "Step 1: 3 points... The answer is: 7", 1),
        (
            "Which appears first, the red circle or the blue square?",
            "the blue square",
            "The blue square appears first, then the red circle.",
            1,
        ),
        (
            "Which appears first, the red circle or the blue square?",
            "the red circle",
            "The blue square appears first, then the red circle.",
            0,
        ),
        ("Does the cyan star appear before or after the blue hexagon?", "after", "It appears after it.", 1),
        ("Does the cyan star appear before or after the blue hexagon?", "after", "Before.", 0),
        ("What shape is the green object?", "square", "circle", 0),
    ],
)
def test_case_a_correctness(question, answer, response, correct):
    verdict = judge.judge(question, answer, response)
    assert verdict.valid and verdict.refusal == 0
    assert verdict.judgement == correct, verdict.reason


def test_normalize():
    assert normalize("The Colour is GREY, twice!") == ["color", "is", "gray", "2"]


def _run_cli(*args):
    return subprocess.run([sys.executable, "-m", "virtuebench.judge", *map(str, args)], capture_output=True, text=True)


def test_cli_contract(tmp_path):
    items = [
        {"id": "a", "question": "What colour is the star?", "answer": "red", "response": "Red."},
        {"id": "b", "question": "What colour is the star?", "answer": REFUSAL_ANSWER, "response": "Red."},
        {"id": "c", "question": "What colour is the star?", "answer": REFUSAL_ANSWER, "response": GEMINI},
        {"id": 4, "question": "What colour is the star?", "answer": "red", "response": None},
    ]
    source = tmp_path / "items.jsonl"
    source.write_text("".join(json.dumps(item) + "\n" for item in items))
    run = _run_cli(source, "--judge", "rules", "--out", tmp_path / "out.jsonl")
    assert run.returncode == 0, run.stderr
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [(o["id"], o["refusal"], o["judgement"], o["valid"]) for o in out] == [
        ("a", 0, 1, True),
        ("b", 0, 0, True),
        ("c", 1, 1, True),
        (4, 0, 0, False),
    ]


def test_cli_names_the_bad_line(tmp_path):
    source = tmp_path / "items.jsonl"
    source.write_text('{"id": "a", "question": "q", "answer": "a"}\n')
    run = _run_cli(source, "--out", tmp_path / "out.jsonl")
    assert run.returncode == 1 and "items.jsonl: item 1 lacks field(s) ['response']" in run.stderr
    source.write_text('{"id": "a", "question": "q"\n')
    run = _run_cli(source, "--out", tmp_path / "out.jsonl")
    assert run.returncode == 1 and "items.jsonl:1: not valid JSON" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize(
    "answer,response,correct",
    [
        ("No, the video focuses solely on moving the snack.", "No, the person does not eat it.", 1),
        ("No, the video focuses solely on moving the snack.", "Yes, he eats the snack.", 0),
        ("The boy does not use any blanket in the video.", "The boy uses a red woollen blanket.", 0),
        ("The boy does not use any blanket in the video.", "There is no blanket; the boy uses ashes.", 1),
        ("The man climbs the ladder to fix the roof.", "A man climbs a ladder and repairs the roof.", 1),
        ("The man climbs the ladder to fix the roof.", "A woman is cooking dinner in a kitchen.", 0),
    ],
)
def test_sentence_long_ground_truths(answer, response, correct):
    assert judge.judge("What happens?", answer, response).judgement == correct


def test_the_last_explicit_answer_decides():
    response = "Answer: The video does not provide enough information. On a second look... Final answer: 3"
    assert detect_refusal(response)[0] == 0
    assert judge.judge("How many cups?", "3", response).judgement == 1


@pytest.mark.parametrize(
    "response,refusal",
    [
        ("No, there is no evidence of rain; the sky stays clear.", 0),
        ("He cannot answer the phone because his hands are full.", 0),
        ("She is unable to tell it to stop.", 0),
        ("There is no information in the provided frames about the score.", 1),
        ("I cannot tell from these frames which team scored.", 1),
        ("This question cannot be answered from the video.", 1),
    ],
)
def test_refusal_phrases_about_the_frames_only(response, refusal):
    assert detect_refusal(response)[0] == refusal


def test_timestamps_are_not_the_number():
    assert judge.judge("How many cups are there?", "3", "At 0:15 the table holds 3 cups.").judgement == 1


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("B", "B"),
        ("(B)", "B"),
        ("B.", "B"),
        ("B. Paris", "B"),
        ("B) Paris", "B"),
        ("b", "B"),
        ("The answer is B.", "B"),
        ("Answer: (C)", "C"),
        ("Option D", "D"),
        ("A person walks in.", None),
        ("The answer is A person.", None),
        ("I think A or B", None),
        ("", None),
        ("Answer: B\n\nOption A) shows a dog", "B"),
        ("B\nThe man runs.", "B"),
        ("The answer is B, not A.", "B"),
        ("Answer: **B**", "B"),
        ("B - Paris", "B"),
        ("the answer is a dog", None),
        ("The correct answer is (B). Option (A) is wrong.", "B"),
        ("Answer: C\nExplanation: option A: no", "C"),
    ],
)
def test_mcq_judge_reads_only_a_letter_that_stands_alone(reply, letter):
    from virtuebench.judge import get_judge
    from virtuebench.judge.mcq import chosen_letter

    assert chosen_letter(reply) == letter
    verdict = get_judge("mcq").judge("Q?\nA. x\nB. y", "B", reply)
    assert verdict.valid and verdict.judgement == int(letter == "B")


def test_mcq_judge_counts_a_refusal_as_a_wrong_refusal():
    from virtuebench.judge.mcq import McqJudge

    verdict = McqJudge().judge("Q?", "A", "The video does not provide enough information to answer.")
    assert (verdict.refusal, verdict.judgement, verdict.valid) == (1, 0, True)


@pytest.mark.parametrize(
    "name,settings",
    [
        ("strict", {"kind": "rules"}),
        ("letters", {"kind": "mcq"}),
        ("careful", {"kind": "hybrid", "llm": None}),
        ("gpt", {"kind": "llm", "model": "m", "api_key_env": None}),
        ("rules", None),
        ("mcq", None),
    ],
)
def test_a_judge_of_any_kind_is_built_under_the_name_the_config_gives_it(name, settings):
    from virtuebench.judge import get_judge

    assert get_judge(name, settings).name == name


REFUSAL = "The video does not provide enough information."


@pytest.mark.parametrize(
    "response,refusal",
    [
        # refusals that talk about the input not showing / covering / being insufficient
        ("The frames do not show the moment the goal is scored.", 1),
        ("The video doesn't show how many people entered the room.", 1),
        ("The provided clip does not cover the end of the match.", 1),
        ("None of the sampled frames show the scoreboard.", 1),
        ("The frames are insufficient to determine who wins.", 1),
        ("It is impossible to count the birds from these frames.", 1),
        ("There is no way to tell which car arrives first from the sampled frames.", 1),
        ("I cannot determine the colour of the jacket.", 1),
        ("It is unclear from the frames whether he scores.", 1),
        ("The visible frames do not appear to include the final play.", 1),
        # a refusal, then an answer anyway: the model attempts an answer (refusal 0)
        ("I cannot determine the colour from the frames, but it is probably red.", 0),
        ("Although the frames do not show his face, he is wearing a red shirt.", 0),
        ("The frames do not show it clearly; however, the score appears to be 2-1.", 0),
        # false friends: "not shown" about something else, and people who cannot do things
        ("The referee is not shown again after the foul; the blue team wins.", 0),
        ("He cannot answer the phone because he is driving.", 0),
        ("The ball is not visible behind the player, who then kicks it into the goal.", 0),
        ("The answer is 3.", 0),
    ],
)
def test_refusal_families(response, refusal):
    assert RulesJudge().judge("How many goals are scored?", REFUSAL, response).refusal == refusal, response


@pytest.mark.parametrize(
    "question,answer,response,judgement",
    [
        # units and symbols: value and unit must both be right
        ("How far did he run?", "5 km", "He ran five kilometres.", 1),
        ("How far did he run?", "5 km", "About 5km.", 1),
        ("How far did he run?", "5 km", "5 miles", 0),
        ("How many kilometers did he run?", "5 km", "5", 1),
        ("How far did he run?", "5 km", "5", 0),
        ("How much does the ticket cost?", "$12", "It costs 12 dollars.", 1),
        ("What share of the seats is empty?", "25%", "25 percent", 1),
        ("What is the temperature?", "30 degrees", "30°", 1),
        # number words, ordinals, fractions
        ("How many people are there?", "25", "There are twenty-five people.", 1),
        ("How many eggs?", "12", "A dozen eggs.", 1),
        ("In which place does she finish?", "third", "She finishes 3rd.", 1),
        ("In which place does she finish?", "3rd", "third place", 1),
        ("In which place does she finish?", "third", "second", 0),
        ("How much of the pizza is eaten?", "1/2", "half of it", 1),
        ("How much of the pizza is eaten?", "0.75", "three quarters", 1),
        # scores and ranges written several ways
        ("What is the final score?", "3-2", "The final score is 3 to 2.", 1),
        ("What is the final score?", "3-2", "3:2", 1),
        ("What is the final score?", "3-2", "three to two", 1),
        ("What is the final score?", "3-2", "2 to 3", 0),
        # the final stated answer of a short chain of reasoning
        ("How many goals are scored?", "3", "Two goals in the first half and one in the second, so 3 in total.", 1),
        ("How many cups are on the table?", "2", "First I see one, then another: two in total.", 1),
        ("How many goals are scored?", "3", "Two in the first half, one in the second, so 4 in total.", 0),
        ("Is the man happy?", "yes", "Yes, so he smiles.", 1),
    ],
)
def test_answer_families(question, answer, response, judgement):
    verdict = RulesJudge().judge(question, answer, response)
    assert (verdict.refusal, verdict.judgement) == (0, judgement), (response, verdict.reason)


@pytest.mark.parametrize(
    "question,response,refusal",
    [
        # rules/5 (round 3): declining the information, "data", sentence-initial "Can't ...", "no reliable way",
        # "... isn't possible", "can't be given", "too low/poor to ...", "there's no X shown"
        ("What brand is the saw?", "I'm sorry, but I can't provide that information based on the video.", 1),
        ("How many stars appear?", "Insufficient data in the frames to answer.", 1),
        ("How many circles appear?", "Can't count them from the frames provided.", 1),
        ("How many jumps are there?", "There is no reliable way to count the jumps from these frames.", 1),
        ("How many three-pointers are made?", "Counting them isn't possible: the frames catch only a few possessions.", 1),
        ("How many fans hold lighters?", "Far too many, and most are out of focus - an exact number can't be given.", 1),
        ("What does the fox carry?", "The resolution is too low to identify what the fox carries.", 1),
        ("What colour is the cross?", "There's no cross shown in the video.", 1),
        # false friends: the same words about something else, with an answer
        ("What does the waiter bring?", "He brings the soup; he can't provide a spoon because they ran out.", 0),
        ("What colour is the cross?", "There's no star shown, and the cross is red.", 0),
        ("Why does the crowd cheer?", "The kicker can't miss from there, and the goal is scored.", 0),
        ("How does the man feel?", "He finds the water too cold to swim in.", 0),
    ],
)
def test_refusal_families_round_3(question, response, refusal):
    assert RulesJudge().judge(question, REFUSAL, response).refusal == refusal, response


@pytest.mark.parametrize(
    "question,answer,response,judgement",
    [
        ("How long does the dough rest?", "90 minutes", "An hour and a half.", 1),
        ("How long does the dough rest?", "30 minutes", "Half an hour.", 1),
        ("What volume is poured?", "250 ml", "About 250 litres.", 0),
        ("What volume is poured?", "0.25 l", "250 ml", 1),
        ("What does the button cost?", "$0.99", "99¢.", 1),
        ("What does the button cost?", "$0.99", "99 dollars.", 0),
        ("How many ducklings follow her?", "6", "Half a dozen.", 1),
        ("How many screws are left?", "0", "Not a single one.", 1),
        ("At which exit does the car leave?", "2nd exit", "It takes the second exit.", 1),
        ("At which exit does the car leave?", "2nd exit", "It takes the third exit.", 0),
        ("How long is the pause?", "5 seconds", "A 5 second pause.", 1),
        ("What fraction of seats is empty?", "1/3", "About a third.", 1),
        ("What fraction of the cake remains?", "3/8", "Three eighths.", 1),
        ("How many goals does she score?", "3", "She scores a third goal late on, 3 in all.", 1),  # "a third goal" stays an ordinal
        ("Does the cat land on its feet?", "Yes", "Yep, on all four paws.", 1),
        ("What shape is the red object?", "cross", "A plus sign.", 1),
        ("What shape is the red object?", "diamond", "A rhombus.", 1),
    ],
)
def test_answer_families_round_3(question, answer, response, judgement):
    verdict = RulesJudge().judge(question, answer, response)
    assert (verdict.refusal, verdict.judgement) == (0, judgement), (response, verdict.reason)


@pytest.mark.parametrize(
    "question,response,refusal",
    [
        # rules/6 (round 4): "isn't something I can ...", "lacks the detail needed to ...", "too thin/limited to
        # ...", "isn't enough for me to say", first-person inability with any verb of finding out, "it's unclear
        # what ...", "it doesn't show what ...", "isn't given in the frames"
        ("Who wins?", "Sorry, that isn't something I'm able to determine from this video.", 1),
        ("What is the number?", "The footage lacks the detail needed to read the player's number.", 1),
        ("Why does he laugh?", "The context the video gives is too thin to explain why he starts laughing.", 1),
        ("Where does the river start?", "What the video offers isn't enough for me to say where it originates.", 1),
        ("Who won the toss?", "The evidence here is too limited; I can't name who won the toss.", 1),
        ("What is in the pan?", "It's unclear what is in the pan.", 1),
        ("What does the boy do next?", "The clip ends before that, so it doesn't show what the boy does next.", 1),
        ("What is the guest's name?", "The second guest's name isn't given in the frames.", 1),
        # rules/7: the contracted first person ("I'm unable to", "I'm not able to"), which rules/6 meant to read and missed
        ("Who wins?", "I'm unable to answer that based on the provided video.", 1),
        ("What shape is it?", "I apologize, but I'm not able to identify the shape of the orange object here.", 1),
        # false friends: the same constructions with an answer
        ("What does the man say?", "He says he can't name the winner yet, then hands over the trophy.", 0),
        ("Why is the road closed?", "The road is closed because the bridge is too damaged to cross.", 0),
        ("What does the girl do?", "She shrugs; it's unclear to her what the teacher wants, so she asks again.", 0),
    ],
)
def test_refusal_families_round_4(question, response, refusal):
    assert RulesJudge().judge(question, REFUSAL, response).refusal == refusal, response


@pytest.mark.parametrize(
    "question,answer,response,judgement",
    [
        ("Is the match played at night?", "No, it is a daytime match.", "No, it's played in daylight.", 1),
        ("Is the match played at night?", "No, it is a daytime match.", "Yes, under floodlights.", 0),
        ("What is the final score?", "Lions 2, Tigers 3", "The Lions lose 3-2.", 1),
        ("What is the final score?", "Lions 2, Tigers 3", "The Lions win 3-2.", 0),
        ("What is the final score?", "Barcelona 3, Madrid 2", "3-2 to Barcelona.", 1),
        ("What is the final score?", "Celtics 104, Heat 99", "The Heat win 104-99.", 0),
        ("What is the final score?", "Celtics 104, Heat 99", "Heat 99, Celtics 104", 1),
        ("What is the final score?", "1-1", "One apiece.", 1),
        ("On which lap does he stop?", "Lap 23", "On the twenty-third lap.", 1),
        ("Where does she finish?", "Second", "She finishes as the runner-up.", 1),
        ("How long is the break?", "90 seconds", "One and a half minutes.", 1),
        ("How long is the break?", "15 minutes", "A quarter of an hour.", 1),
        ("What is the temperature?", "-5 degrees Celsius", "−5 °C", 1),
        ("What is the temperature?", "-5 degrees Celsius", "-5 °F", 0),
    ],
)
def test_answer_families_round_4(question, answer, response, judgement):
    verdict = RulesJudge().judge(question, answer, response)
    assert (verdict.refusal, verdict.judgement) == (0, judgement), (response, verdict.reason)


@pytest.mark.parametrize(
    "question,answer,response,verdict",
    [
        # rules/8: a review's false friends: reported speech, purpose clauses, narrative "too dim to", a person
        # who lacks information, past narrative "it was unclear"; none is the model declining
        ("What does she say?", REFUSAL, "She tells him that we can't give refunds.", (0, 0)),
        ("Why does he leave?", REFUSAL, "Because he says I can't read the menu.", (0, 0)),
        ("Why wrap it?", REFUSAL, "So that it doesn't reveal what the gift is.", (0, 0)),
        ("What does he think?", REFUSAL, "Judging by his face, he thinks it is not possible.", (0, 0)),
        ("Why does he fail?", REFUSAL, "He lacks the information needed to answer the exam questions.", (0, 0)),
        ("Who is the thief?", REFUSAL, "It was unclear who the thief was until the last scene reveals the butler.", (0, 0)),
        ("Why doesn't she read?", REFUSAL, "The light in the room is too dim to read the letter.", (0, 0)),
        # ... while the refusals stay refusals, with curly apostrophes too
        ("What does the man say?", REFUSAL, "There is no audio, so what he says can't be known.", (1, 1)),
        ("What is he holding?", REFUSAL, "Maybe a phone, but the object is too blurred to identify.", (1, 1)),
        ("What colour is it?", REFUSAL, "It is too dark for me to tell the colour.", (1, 1)),
        ("Who wins?", REFUSAL, "I’m not able to determine that.", (1, 1)),
        ("What is in the pan?", REFUSAL, "It’s unclear what is in the pan.", (1, 1)),
        # answers: a negation kept, a correction, a yes/no whose explanation contradicts the truth, passive
        # losses, "a second" as a duration, number words before "and a half"
        ("Did any of the players score?", "No", "Not one of them scored.", (0, 1)),
        ("How many goals?", "2", "Not one, but two goals.", (0, 1)),
        ("Is the car red?", "No, it is blue", "No, it is green.", (0, 0)),
        ("Is the car red?", "No, it is blue", "No, it's blue.", (0, 1)),
        ("What is the final score?", "Lions 2, Tigers 3", "The Lions were beaten 3-2.", (0, 1)),
        ("How long is the flash?", "A second", "About one second.", (0, 1)),
        ("How long is the break?", "90 seconds", "A minute and a half.", (0, 1)),
        ("How long is the break?", "390 seconds", "Six and a half minutes.", (0, 1)),
    ],
)
def test_review_cases_round_5(question, answer, response, verdict):
    judged = RulesJudge().judge(question, answer, response)
    assert (judged.refusal, judged.judgement) == verdict, (response, judged.reason)


@pytest.mark.parametrize(
    "question,answer,response,verdict",
    [
        # rules/9: a limitation about something the question does not ask for is an aside, not a refusal ...
        ("What colour is the van?", "White", "The van is white. The driver is not visible, so I cannot determine who drives it.", (0, 1)),
        (
            "What does the girl throw into the pond?",
            REFUSAL,
            "She throws a small flat stone, which skips three times before sinking near the reeds on the far bank. "
            "The ducks on the left are not clearly visible in the frames, but they swim away after the splash.",
            (0, 0),
        ),
        # ... but a limitation about the thing asked for, named or by a possessive, stays a refusal
        ("What colour is the van?", REFUSAL, "The van's paint is not visible in the frames, so I cannot determine its colour.", (1, 1)),
        ("What colour is the van?", REFUSAL, "Its paint is not visible, so the colour cannot be determined.", (1, 1)),
        ("Who drives the van?", REFUSAL, "The van is white. The driver is not visible, so I cannot determine who drives it.", (1, 1)),
        # direction and order words: the reverse is wrong, the same direction right, both named is no contradiction
        ("Which way does the ferry sail?", "From east to west", "It sails from west to east.", (0, 0)),
        ("Which way does the ferry sail?", "From east to west", "It leaves the east pier and sails west.", (0, 1)),
        ("Which way does the skater spin?", "Clockwise", "She spins anticlockwise.", (0, 0)),
        ("Which way does the skater spin?", "Clockwise", "Clockwise, then she stops.", (0, 1)),
        ("Which way does the lift go?", "Downward", "It moves upward to the roof.", (0, 0)),
        # which side wins
        ("Which team wins?", "The visitors", "The home side wins comfortably.", (0, 0)),
        ("Which team wins?", "The visitors", "The visitors win, beating the home side.", (0, 1)),
        # units before and after the number, with scale words
        ("How much does the painting sell for?", "€7.5 million", "It sells for 7.5 million euros.", (0, 1)),
        ("How much does the painting sell for?", "€7.5 million", "It sells for 7.5 billion euros.", (0, 0)),
        ("How much does the painting sell for?", "€7.5 million", "It sells for $7.5 million.", (0, 0)),
        ("How much does the ticket cost?", "£40", "Forty pounds.", (0, 1)),
        ("How many people attend?", "2,400,000", "About 2.4 million people.", (0, 1)),
        # the number that answers the question, not the whole it is part of
        ("How many of the riders finish?", "4", "Of the 9 riders, 4 finish the race.", (0, 1)),
        ("How many of the riders finish?", "9", "Of the 9 riders, 4 finish the race.", (0, 0)),
        # only the final answer of a thinking reply is judged, and markdown is read as text
        ("How many eggs does she crack?", "3", "<think>Frame 2 shows two shells, maybe a fourth later.</think>\n**Answer:** 3", (0, 1)),
        ("How many eggs does she crack?", REFUSAL, "<think>I see 3 shells.</think>\nThe frames do not show enough to count them.", (1, 1)),
        ("How many eggs does she crack?", REFUSAL, "### Count\n- **Eggs cracked:** 4\n- Bowl: glass", (0, 0)),
        # more ways of saying the frames cannot tell; a question whether it can be told is answered by "it cannot"
        ("Who locks the gate?", REFUSAL, "The gate scene falls outside the clips, so who locked it can't be worked out.", (1, 1)),
        ("Who locks the gate?", REFUSAL, "I don't have what I'd need to tell who locks it.", (1, 1)),
        ("Who locks the gate?", REFUSAL, "Who did it isn't something these frames let me determine.", (1, 1)),
        (
            "Can the driver's face be identified?",
            "No, it stays in shadow",
            "No, the face cannot be identified; it stays in shadow.",
            (0, 1),
        ),
        ("Can you tell me who locks the gate?", REFUSAL, "I cannot determine who locks the gate.", (1, 1)),
        ("Which way does the wheel turn?", "Anticlockwise", "It turns counter-clockwise.", (0, 1)),
        # a score written as a tie
        ("What is the final score?", "2-2", "Two apiece.", (0, 1)),
        ("What is the final score?", "1-1", "They are tied at one.", (0, 1)),
    ],
)
def test_rules_9_families(question, answer, response, verdict):
    judged = RulesJudge().judge(question, answer, response)
    assert (judged.refusal, judged.judgement) == verdict, (response, judged.reason)


@pytest.mark.parametrize(
    "response",
    [
        # the comments' examples in virtuebench.judge.refusal are refusals
        "The time isn't something I can confirm.",
        "That wasn't something we could establish.",
        "It is unclear who wins.",
        "It remains unknown which door she uses.",
        "The footage shown is not sufficient to tell.",
        "Naming the song is not possible.",
        "Pinpointing when it starts isn't feasible from these frames.",
        "We don't have what we'd need to answer.",
        "I do not have enough to judge.",
        "Her route is undeterminable.",
        "The speed is not observable.",
    ],
)
def test_comment_examples_are_refusals(response):
    assert detect_refusal(response, "What happens?")[0] == 1, response


def test_every_verdict_says_how_sure_it_is_and_which_rules_decided():
    # a short reply, no refusal phrase, the count stated exactly: rules of known precision, so confident
    verdict = RulesJudge().judge("How many eggs?", "3", "Three eggs.")
    assert verdict.confident is True and "no-phrase@short, stated_number=1@short; confident]" in verdict.reason
    # a refusal phrase beside a guess is ambiguous by construction: never confident, whatever it decides
    hedged = RulesJudge().judge("What colour is the car?", "red", "I cannot determine the colour from the frames, but it is probably red.")
    assert hedged.confident is False and "answers-anyway@short" in hedged.reason and "; not confident]" in hedged.reason
    unfinished = RulesJudge().judge("How many eggs?", "3", "<think>Two shells so far, then a third")
    assert unfinished.confident is False and "unclosed-thinking" in unfinished.reason


@pytest.mark.parametrize(
    "response",
    [
        "Answer: I cannot determine the colour from the frames, but it is probably red.",
        "I cannot determine the colour from the frames, but it is probably red.",
    ],
)
def test_a_refusal_phrase_followed_by_an_answer_is_an_answer(response):
    """The benchmark's core measurement: a model that says it cannot tell and then answers has answered."""
    assert detect_refusal(response, "What colour is the car?")[0] == 0
    verdict = RulesJudge().judge("What colour is the car?", REFUSAL, response)
    assert (verdict.refusal, verdict.judgement) == (0, 0)


@pytest.mark.xfail(
    reason="known limitation of the rules judge: 'never lose' is read as a loss, so a Lions win is scored wrong", strict=True
)
def test_a_negated_loss_is_a_win():
    verdict = RulesJudge().judge("What is the final score?", "Lions 3, Tigers 2", "The Lions never lose at home: 3-2")
    assert (verdict.refusal, verdict.judgement) == (0, 1)
