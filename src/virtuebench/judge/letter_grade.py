"""The `letter-grade` judge: VideoEval-Pro's authors' grader, for the supplement's VideoEval-Pro column.

Their grader (AUTHORS_GRADER) sends one user message, a SimpleQA-style grading prompt with the placeholders
{question}, {target} and {predicted_answer}, to GPT-4o-2024-08-06 at temperature 0 with at most 5 tokens, and
counts an item correct where the stripped reply's first character, upper-cased, is "A" (A: CORRECT,
B: INCORRECT, C: NOT_ATTEMPTED). The prompt's text is theirs and not part of this repository: the user copies it
into a file (config `supplement.authors_grader_prompt`), checked here and recorded by its sha256, so a changed
prompt re-judges. The request, retries, cache and key handling are the `llm` judge's (virtuebench.judge.llm).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from virtuebench.judge.base import Verdict
from virtuebench.judge.cache import VerdictCache
from virtuebench.judge.inputs import NAMES as INPUT_SETTINGS
from virtuebench.judge.kinds import JudgeKind
from virtuebench.judge.llm import JudgeSetupError, LlmJudge
from virtuebench.support.openai_client import read_api_key
from virtuebench.support.settings import setting, settings_from_dict

#: Where the prompt is published: repository, file and the commit it was read at (docs/supplement.md).
AUTHORS_GRADER = "TIGER-AI-Lab/VideoEval-Pro, file tools/gpt4o_judge.py at commit 8467762b50689d718b7ea4f047cf20565ac0e2e2"
GRADER_ID = "videoevalpro-authors-grader"  # the prompt's id in judge_version, beside the file's sha256
PLACEHOLDERS = ("{question}", "{target}", "{predicted_answer}")
#: The grade letters: A is the only correct one. C (NOT_ATTEMPTED: the gold target's information is missing and
#: nothing contradicts it) is recorded as refusal = 1, the nearest of VirtueBench's fields; Table 1 reads only judgement.
GRADES = {"A": ("CORRECT", 0, 1), "B": ("INCORRECT", 0, 0), "C": ("NOT_ATTEMPTED", 1, 0)}


class GraderPromptError(ValueError):
    """The grader's prompt file is missing or not the authors' prompt; the message says where to copy it from."""


def read_grader_prompt(path: str | Path, where: str = "config.supplement.authors_grader_prompt") -> tuple[str, str]:
    """(the prompt, the sha256 of the file's bytes), or GraderPromptError naming `where`, the file and the source."""
    path = Path(path)
    copy_from = (
        f"copy the text of the prompt of the authors' grader (the string sent as the user message, with its three "
        f"placeholders) into it from {AUTHORS_GRADER}"
    )
    if not path.is_file():
        raise GraderPromptError(f"{where}: file {path} not found; {copy_from}")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise GraderPromptError(f"{where}: {path} is not UTF-8 text; {copy_from}") from None
    missing = [placeholder for placeholder in PLACEHOLDERS if placeholder not in text]
    if missing:
        raise GraderPromptError(f"{where}: {path} lacks the placeholder(s) {', '.join(missing)}; {copy_from}")
    return text, hashlib.sha256(data).hexdigest()


def grader_settings(path: str | Path) -> dict[str, Any]:
    """The judge settings of the authors' grader with the prompt in `path` (config: supplement.videoevalpro_grader:
    authors): the file's sha256 is a tracked setting (a changed prompt re-judges), its path only where it lies."""
    _, sha256 = read_grader_prompt(path)
    return {"kind": "letter-grade", "prompt_file": str(path), "prompt_sha256": sha256}


@dataclass(frozen=True)
class LetterGradeSettings:
    # Where the file lies changes no verdict (untracked); its sha256 does.
    prompt_file: str = setting(rerun="scheduling", schema={"type": "string"})
    prompt_sha256: str | None = setting(None, rerun="answers", schema={"type": ["string", "null"]})  # where given, the file must hold it
    # The authors' grader's model, temperature 0 (the llm judge's) and max_tokens 5.
    model: str = setting("gpt-4o-2024-08-06", rerun="answers", schema={"type": "string"})
    base_url: str | None = setting(None, rerun="answers", schema={"type": ["string", "null"]})
    api_key_env: str | None = setting("OPENAI_API_KEY", rerun="scheduling", schema={"type": ["string", "null"]})  # the authors' variable
    max_concurrency: int = setting(4, rerun="scheduling", schema={"type": "integer", "minimum": 1})  # the authors' number of threads
    max_retries: int = setting(5, rerun="scheduling", schema={"type": "integer", "minimum": 0})
    timeout_s: float = setting(60.0, rerun="scheduling", schema={"type": "number", "exclusiveMinimum": 0})
    parse_retries: int = setting(2, rerun="answers", schema={"type": "integer", "minimum": 0})
    max_tokens: int = setting(5, rerun="answers", schema={"type": "integer", "minimum": 1})

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> LetterGradeSettings:
        values = {k: v for k, v in values.items() if k != "kind"}
        return settings_from_dict(cls, values, "letter-grade judge", JudgeSetupError, read_elsewhere=INPUT_SETTINGS)


@dataclass(frozen=True)
class GraderPrompt:
    """The prompt from the file, stripped as the authors strip theirs; its hash is the file's sha256 (in the cache
    key and every judgment's judge_version)."""

    id: str
    text: str
    hash: str

    def messages(self, question: str, answer: str, response: str) -> list[dict[str, str]]:
        # Plain replacement, not str.format: braces elsewhere in the copied text stay as they are. The authors
        # strip the question, the gold target and the prediction before filling them in.
        user = self.text.strip()
        for placeholder, value in zip(PLACEHOLDERS, (question, answer, response)):
            user = user.replace(placeholder, value.strip())
        return [{"role": "user", "content": user}]


def parse_letter_grade(text: str, answer: str) -> tuple[Verdict | None, str]:
    """The authors' reading: the stripped reply's first character, upper-cased. A, B or C is a verdict (A alone is
    correct, as theirs); anything else, an empty reply included, is not one (asked again, then invalid)."""
    reply = text.strip()
    if not reply:
        return None, "empty reply"
    letter = reply[0].upper()
    if letter not in GRADES:
        return None, f"the reply does not start with A, B or C: {reply[:200]!r}"
    grade, refusal, judgement = GRADES[letter]
    return Verdict(refusal, judgement, True, f"{letter}: {grade}"), ""


class LetterGradeJudge(LlmJudge):
    def __init__(self, name: str, settings: dict[str, Any] | LetterGradeSettings, cache: VerdictCache | None = None, client=None):
        settings = settings if isinstance(settings, LetterGradeSettings) else LetterGradeSettings.from_dict(settings)
        try:
            text, sha256 = read_grader_prompt(settings.prompt_file, f"judge {name}")
        except GraderPromptError as error:
            raise JudgeSetupError(str(error)) from None
        if settings.prompt_sha256 and sha256 != settings.prompt_sha256:
            raise JudgeSetupError(
                f"judge {name}: {settings.prompt_file} changed since the workflow read it (sha256 {sha256}, not "
                f"{settings.prompt_sha256}); run the workflow again to judge with the new prompt"
            )
        purpose = f"judge {name} (VideoEval-Pro's authors' grader, model {settings.model})"
        try:
            key = read_api_key(settings.api_key_env, purpose, JudgeSetupError)
        except JudgeSetupError as error:
            raise JudgeSetupError(
                f"{error}, or judge VideoEval-Pro with the run's judge (supplement.videoevalpro_grader: virtuebench)"
            ) from None
        self._start(name, settings, GraderPrompt(GRADER_ID, text, sha256), parse_letter_grade, key, cache, client)


def _build(name: str, settings: dict[str, Any], cache_path: str | None) -> LetterGradeJudge:
    return LetterGradeJudge(name, settings, VerdictCache(cache_path) if cache_path else None)


#: The `letter-grade` kind: the workflow sets it up (supplement.videoevalpro_grader: authors, with grader_settings).
KIND = JudgeKind("letter-grade", LetterGradeSettings, _build, configurable=False)
