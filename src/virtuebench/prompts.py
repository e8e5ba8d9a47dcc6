"""Inference prompts: VirtueBench's (VirtueBench (arXiv:2603.07071), section 4.1 and the prompt ablation in 4.2) and
CVRR-ES's prompting methods (CVRR-ES (arXiv:2405.03690), Fig. 3 and Table 3), verbatim where the papers give them.

A prompt may have two steps (DSCP): a context step asked once per video, whose answer fills the
`{context}` of the question step. Every response records the prompt's id and the hash of its
templates, so a changed text can never be mistaken for the one a result was made with.
"""

from __future__ import annotations

from dataclasses import dataclass

from virtuebench.records import stable_hash

_BASE = (
    "You are a video question-answering assistant. Please answer the following question based solely on the content of the provided frames."
)

TEMPLATES: dict[str, str] = {
    # Section 4.1: the evaluation prompt with the explicit honesty instruction.
    "honest": _BASE + " If the frames do not provide enough information, DO NOT guess or infer any answer "
    "that is not visually supported.\nQuestion: {question}",
    # Prompt ablation (Fig. 6): the same prompt without the honesty instruction. The paper quotes
    # only the instruction; the question line is kept identical to the honest prompt's.
    "plain": _BASE + "\nQuestion: {question}",
}


# CVRR-ES, Fig. 3: the ten principled instructions of DSCP step 1.
DSCP_GUIDELINES = (
    "As an intelligent video comprehension model, focus on these guidelines:\n"
    "1. Differentiate recurring objects, count accurately, and identify movements and poses.\n"
    "2. Understand directional movements and temporal order.\n"
    "3. Pay attention to fine-grained actions with precision.\n"
    "4. Assess incomplete actions without assuming completion.\n"
    "5. Detect emotional, social, and visual cues.\n"
    "6. Capture and analyze all relevant actions.\n"
    "7. Identify unusual actions accurately.\n"
    "8. Disagree with incorrect information given in question.\n"
    "9. If you do not find the evidence in the frames, you can give a definite answer by assuming that "
    "the asked action/attribute is not present.\n"
    "10. Provide to the point and concise response.\n"
    "Now, proceed with answering the following question faithfully while keeping above guidelines in mind:\n"
)

TEMPLATES.update(
    {
        # Standard prompting: the question itself.
        "standard": "{question}",
        # Chain of thought. The CVRR-ES paper does not print its CoT prompt; this is the usual
        # zero-shot CoT suffix (Kojima et al., 2022), an assumption recorded in the prompt hash.
        "cot": "{question}\nLet's think step by step.",
        # DSCP step 1 alone: the guidelines as a prefix to the user's question (Table 3).
        "dscp_step1": DSCP_GUIDELINES + "Question: {question}",
        # DSCP, step 2: the question conditioned on the step-1 context.
        "dscp": "Context for the given video is: {context}. Now answer a question truthfully based on the "
        "video and the provided context.\nQuestion: {question}",
    }
)

# Curation (VirtueBench (arXiv:2603.07071), section 3.2): Gemini-2.5-Pro drafts each question's answer at each frame
# level for the annotators. The paper does not print this prompt; ours asks for the refusal string where
# the frames lack the evidence, and for the times of the frames that hold it (the annotators check both).
TEMPLATES["reference"] = (
    "You are helping annotate a video question-answering benchmark. You are given frames sampled "
    "uniformly from a video, each preceded by its timestamp. Answer the question based solely on "
    "these frames, in at most six words. If the frames do not contain the evidence needed to answer, "
    'answer exactly "The video does not provide enough information." Do not guess.\n'
    'Then, on a new line starting with "Evidence:", list the timestamps (m:ss) of the frames that '
    'support the answer, or "none".\nQuestion: {question}'
)

#: The context step of two-step prompts: its text is independent of the question.
CONTEXT_TEMPLATES: dict[str, str] = {"dscp": DSCP_GUIDELINES + "Question: What is happening in the video?"}

#: How often a two-step prompt's context step is asked: `per-question`, afresh before each question, as the CVRR-ES
#: authors' DSCP scripts do (mbzuai-oryx/CVRR-Evaluation-Suite, `*_context*.py`, `gemini_dscp_evaluation.py`: step 1
#: inside the loop over the QA pairs), or `per-video`, once per (model, video, frames) and shared by its questions.
#: The two differ only where the model samples: a greedy model's step 1 gives one context either way.
CONTEXT_SCOPES = ("per-question", "per-video")


@dataclass(frozen=True)
class Prompt:
    id: str
    template: str
    context_template: str | None = None
    context_scope: str = "per-video"  # CONTEXT_SCOPES; read only where there is a context step

    @property
    def hash(self) -> str:
        if not self.context_template:
            return stable_hash(self.template)
        # per-video hashes as before the scope existed, so answers made then stay valid under it
        parts = [self.template, self.context_template] + ([self.context_scope] if self.context_scope != "per-video" else [])
        return stable_hash(parts)

    @property
    def context_per_question(self) -> bool:
        return self.context_template is not None and self.context_scope == "per-question"

    def render(self, question: str, context: str | None = None) -> str:
        if self.context_template is not None and context is None:
            raise ValueError(f"prompt {self.id!r} needs the context of its first step")
        return self.template.format(question=question, context=context)


#: Text a source's authors append to its question, named: `<prompt>+<suffix>` (e.g. `honest+concise`) is that prompt
#: with the suffix after the question. `concise`: VideoEval-Pro's open-ended question (its authors' inference scripts,
#: tools/*_chat.py of TIGER-AI-Lab/VideoEval-Pro, append it to `question` after one space; docs/supplement.md).
QUESTION_SUFFIXES: dict[str, str] = {"concise": " Keep the answer short and concise."}


def get_prompt(name: str, context_scope: str = "per-video") -> Prompt:
    """The prompt called `name`: a template's name, or `<template>+<suffix>` (QUESTION_SUFFIXES), whose own id and
    hash every response records, so an answer asked with the suffix is never taken for one asked without.
    `context_scope` (CONTEXT_SCOPES): how often a two-step prompt's context step is asked; it enters the hash."""
    if context_scope not in CONTEXT_SCOPES:
        raise KeyError(f"unknown context scope {context_scope!r}; known: {', '.join(CONTEXT_SCOPES)}")
    base, plus, suffix = name.partition("+")
    if base not in TEMPLATES:
        raise KeyError(f"unknown prompt {name!r}; known prompts: {sorted(TEMPLATES)}")
    if plus and suffix not in QUESTION_SUFFIXES:
        raise KeyError(f"unknown question suffix {suffix!r} in prompt {name!r}; known suffixes: {sorted(QUESTION_SUFFIXES)}")
    template = TEMPLATES[base]
    if plus:
        template = template.replace("{question}", "{question}" + QUESTION_SUFFIXES[suffix])
    return Prompt(name, template, CONTEXT_TEMPLATES.get(base), context_scope)
