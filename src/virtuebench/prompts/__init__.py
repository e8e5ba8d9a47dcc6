"""Inference prompts, registered by name in PROMPTS (virtuebench.support.registry): each a Template whose text lives in
a module of texts (virtuebench.prompts.texts: the papers' and the curation's) or of its own (docs/extending.md).

A prompt may have two steps (DSCP): a context step, whose answer fills the `{context}` of the question step. Every
response records the prompt's id and the hash of its templates, so a changed text can never be mistaken for the one a
result was made with.
"""

from __future__ import annotations

from dataclasses import dataclass

from virtuebench.records import stable_hash
from virtuebench.support.registry import Registry


@dataclass(frozen=True)
class Template:
    """What a prompt registers: its text, and for a two-step prompt the text of its first step."""

    #: The question step: `{question}` where the question goes, and `{context}` where a two-step prompt's first answer does.
    text: str
    #: The context step of a two-step prompt (DSCP), asked without the question; None for a one-step prompt.
    context: str | None = None


#: prompt name -> "module:attribute" of its Template: the config's `prompts` (and the supplement's and the curation's).
PROMPTS: Registry[Template] = Registry(
    "prompt",
    {
        "honest": "virtuebench.prompts.texts:HONEST",
        "plain": "virtuebench.prompts.texts:PLAIN",
        "standard": "virtuebench.prompts.texts:STANDARD",
        "cot": "virtuebench.prompts.texts:COT",
        "dscp_step1": "virtuebench.prompts.texts:DSCP_STEP1",
        "dscp": "virtuebench.prompts.texts:DSCP",
        "reference": "virtuebench.prompts.texts:REFERENCE",
    },
    expect=Template,
)

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
    """The prompt called `name`: a registered prompt's name, or `<prompt>+<suffix>` (QUESTION_SUFFIXES), whose own id
    and hash every response records, so an answer asked with the suffix is never taken for one asked without.
    `context_scope` (CONTEXT_SCOPES): how often a two-step prompt's context step is asked; it enters the hash."""
    if context_scope not in CONTEXT_SCOPES:
        raise KeyError(f"unknown context scope {context_scope!r}; known: {', '.join(CONTEXT_SCOPES)}")
    base, plus, suffix = name.partition("+")
    if base not in PROMPTS:
        raise PROMPTS.unknown(name)
    if plus and suffix not in QUESTION_SUFFIXES:
        raise KeyError(f"unknown question suffix {suffix!r} in prompt {name!r}; known suffixes: {sorted(QUESTION_SUFFIXES)}")
    template = PROMPTS[base]
    text = template.text.replace("{question}", "{question}" + QUESTION_SUFFIXES[suffix]) if plus else template.text
    return Prompt(name, text, template.context, context_scope)
