"""Judge prompts, verbatim and versioned: each has an id and a hash that every judgment records.

- `virtuebench`: the supplementary's "Judgement prompt for GPT-4o" (the VirtueBench supplementary material, section 4).
- `cvrr`: the CVRR-ES authors' evaluation prompt (their Evaluation-Scripts/LLM_Judge_evaluation.py,
  the paper's Fig. 13; judge GPT-3.5-turbo-0125), a system and a user message.
"""

from __future__ import annotations

from dataclasses import dataclass

from virtuebench.records import stable_hash

VIRTUEBENCH_JUDGE = """You are a strict evaluator assessing answer correctness. You must output 1 for correct answers and 0 for any other case.
### Input
Question: {question}
Ground Truth Answer: {answer}
Model Prediction: {response}

### Evaluation Rules
Step 1: Refusal Detection - Determine whether the model refused to answer the question.
- Set refusal = 1 if the prediction indicates that the video lacks sufficient information to answer the question directly.
- If the model attempts to answer (even incorrectly), set refusal = 0.

Step 2: Judgement of Correctness
Evaluate judgement based on the ground-truth answer type.
Case A: The ground truth has a definite answer
- If refusal = 1, then judgement = 0.
- If refusal = 0, assess semantic consistency:
* Set judgement = 1 if the predicted answer is semantically consistent with the ground truth, even when expressed indirectly or with mild reasoning.
* Ignore hedging phrases (e.g., ``maybe``, ``possibly``, ``not sure``).
* Minor formatting differences are acceptable.
* Numerical values must match within a reasonable tolerance.
* For unit-based questions, both value and unit must be correct.
* For order-based questions, the event order and the selected events must match exactly.
* Otherwise, set judgement = 0.
Case B: The ground truth is ``The video does not provide enough information``
- Set judgement = 1 only if refusal = 1.
- If the model provides any concrete answer (refusal = 0), then judgement = 0.

### Strict Output Format
Respond strictly in JSON (each field must be either 0 or 1).
Example:
{{"refusal": 0, "judgement": 1}}"""

CVRR_SYSTEM = (
    "You are an intelligent chatbot designed for evaluating the correctness of AI assistant predictions for "
    "question-answer pairs. Your task is to compare the predicted answer with the ground-truth answer and "
    "determine if the predicted answer is correct or not. Here's how you can accomplish the task:"
    "------"
    "##INSTRUCTIONS: "
    "- Focus on the correctness and accuracy of the predicted answer with the ground-truth.\n"
    "- Consider predictions with less specific details as correct evaluation, unless such details are "
    "explicitly asked in the question.\n"
)
CVRR_USER = (
    "Please evaluate the following video-based question-answer pair:\n\n"
    "Question: {question}\n"
    "Ground truth correct Answer: {answer}\n"
    "Predicted Answer: {response}\n\n"
    "Provide your evaluation as a correct/incorrect prediction along with the score where the score is an "
    "integer value between 0 (fully wrong) and 5 (fully correct). The middle score provides the percentage of "
    "correctness."
    "Please generate the response in the form of a Python dictionary string with keys 'pred', 'score' and "
    "'reason', where value of 'pred' is  a string of 'correct' or 'incorrect', value of 'score' is in INTEGER, "
    "not STRING and value of 'reason' should providethe reason behind the decision."
    "Only provide the Python dictionary string."
    "For example, your response should look like this: {{'pred': 'correct', 'score': 4.8, 'reason': reason}}."
)


@dataclass(frozen=True)
class JudgePrompt:
    id: str
    user: str
    system: str | None = None

    @property
    def hash(self) -> str:
        return stable_hash([self.system, self.user])

    def messages(self, question: str, answer: str, response: str) -> list[dict[str, str]]:
        user = self.user.format(question=question, answer=answer, response=response)
        return ([{"role": "system", "content": self.system}] if self.system else []) + [{"role": "user", "content": user}]


JUDGE_PROMPTS = {
    "virtuebench": JudgePrompt("virtuebench-judge/1", VIRTUEBENCH_JUDGE),
    "cvrr": JudgePrompt("cvrr-judge/1", CVRR_USER, CVRR_SYSTEM),
}
