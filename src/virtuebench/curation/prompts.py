"""The curation prompts, verbatim from the VirtueBench supplementary material (section 3),
(The per-level reference-answer prompt is an inference prompt: `reference` in virtuebench.prompts.)

The tests check the verbatim texts against the supplementary material's text where a copy of it is beside the
repository (they skip elsewhere).
"""

from __future__ import annotations

from virtuebench.records import stable_hash

#: Stage (1): questions unsuitable for open-ended adaptation ("Prompt for answerability filtering").
ANSWERABILITY = """\
You are helping filter a dataset of multiple-choice video questions to determine whether each question can be converted into an open-ended format.

Task:

Evaluate whether the question can be reliably asked and judged as an open-ended question, based solely on watching the video. Assume you are familiar with its content.

Output:

Return exactly one word: "Keep" or "Discard". Do not provide explanations.

Keep if:

- The question can be answered objectively by someone who has watched the video, even if reasoning or summarizing visual evidence is required.
- The answer contains at most 3 distinct elements (objects, actions, events), except for counting questions where the answer is a single number.
- Or, the question provides a fixed set of elements and asks for ordering or ranking them.

Discard if any of the following apply:

- The question requires comparing or evaluating the answer options.
- The question is only meaningful when the options are provided.
- The question depends on specific timestamps (e.g., "What happens at 01:20?").
- The question relies on subtitles or precise subtitle timing.
- The answer requires listing more than 3 distinct elements, unless it explicitly asks for ordering.
- The question is subjective or interpretive (e.g., emotions, opinions).

Examples:

- What color is the car that drives past the house? → Keep
- Which of the following animals appears in the video? → Discard
- Which statement is true according to the video? → Discard
- What happens at 01:20 in the video? → Discard
- Summarize the events that happen in the video. → Discard
- How does the character feel after entering the room? → Discard
- Put these 4 actions in order: (a) man enters, (b) car leaves, (c) dog barks, (d) door closes → Keep
- Describe the sequence leading to Kaffee and Jo's discussion about poisoning. → Discard

Here is the question: {question}

Reference answer: {answer}"""

#: Stage (2): trivial questions, asked with one random frame ("Prompt for difficulty filtering").
#: The model's "I don't know." means the frame and common sense do not suffice: the question is kept.
DIFFICULTY = """\
Answer the question using the provided image if possible.
If the image is insufficient but the answer can be inferred from common sense, give the most likely answer.
If neither is possible, reply: "I don't know."
Output only the answer. Do not include explanations.
Question: {question}"""

#: The reply of DIFFICULTY that means "cannot answer".
DIFFICULTY_UNKNOWN = "I don't know."


def prompt_hash(template: str) -> str:
    return stable_hash(template)
