"""The `llm` judge: an LLM behind any OpenAI-compatible Chat Completions endpoint (GPT-4o by default,
as in the paper; an open model served by vLLM or SGLang as a local alternative).

Temperature 0 by default (`temperature`; null sends none: the API's default); the prompt is versioned
(virtuebench.judge.prompts) and its id and hash, and the model snapshot the endpoint reports, go into every judgment. A reply that is not the required format is
asked again up to `parse_retries` times, then recorded as invalid with the raw reply. The client
retries 429, 5xx and timeouts with exponential backoff (`max_retries`). Verdicts are cached
(virtuebench.judge.cache). The API key is read from the environment variable named in the settings
and is never written anywhere: the client redacts it (and any credential an endpoint echoes) from every
reply, `raw` included, and every error text before the judge sees them (support/redact.py).
"""

from __future__ import annotations

import ast
import json
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from virtuebench import is_refusal_answer
from virtuebench.judge.base import Judge, Verdict
from virtuebench.judge.cache import VerdictCache
from virtuebench.judge.inputs import FORBIDDEN_PAIRS
from virtuebench.judge.inputs import NAMES as INPUT_SETTINGS
from virtuebench.judge.kinds import JudgeKind, Review
from virtuebench.judge.prompts import JUDGE_PROMPTS, JudgePrompt
from virtuebench.records import stable_hash
from virtuebench.support.openai_client import ChatClient, ChatError, read_api_key
from virtuebench.support.settings import setting, settings_from_dict


class JudgeSetupError(ValueError):
    """The judge cannot start (a missing API key, bad settings); the message says what to set."""


_MODEL = "model id, pinned to a snapshot where the API has them"
_BASE_URL = "OpenAI-compatible endpoint; null: the OpenAI API"
_KEY = "environment variable holding the key; null: none needed"
_TEMPERATURE = (
    "sampling temperature of every request, retries included; null: none sent (the API's default, 1 at OpenAI), as the "
    "CVRR-ES authors' judge script"
)
#: What to do with a verdict pair the prompt's rules forbid (Case B with judgement != refusal; Case A with refusal 1 and
#: judgement 1): ask again up to parse_retries times (at the judge's temperature), then invalid (scored wrong); or take one field
#: and derive the other by the prompt's rules, without asking again.
_FORBIDDEN = (
    "the virtuebench prompt's verdict pairs its rules forbid: retry-then-invalid (asked again, then invalid, scored wrong), "
    "trust-refusal (judgement follows the refusal field), trust-judgement (refusal follows the judgement field)"
)
IF_NO_KEY = "without the key: stop before any job, or judge with rules (a hybrid: mark the items the rules are not sure of invalid)"


@dataclass(frozen=True)
class LlmJudgeSettings:
    model: str = setting("gpt-4o-2024-08-06", rerun="answers", schema={"type": "string"}, description=_MODEL)
    base_url: str | None = setting(None, rerun="answers", schema={"type": ["string", "null"]}, description=_BASE_URL)
    api_key_env: str | None = setting("OPENAI_API_KEY", rerun="scheduling", schema={"type": ["string", "null"]}, description=_KEY)
    prompt: str = setting("virtuebench", rerun="answers", schema={"type": "string", "enum": list(JUDGE_PROMPTS)})
    max_concurrency: int = setting(8, rerun="scheduling", schema={"type": "integer", "minimum": 1})
    max_retries: int = setting(5, rerun="scheduling", schema={"type": "integer", "minimum": 0})
    timeout_s: float = setting(60.0, rerun="scheduling", schema={"type": "number", "exclusiveMinimum": 0})
    parse_retries: int = setting(2, rerun="answers", schema={"type": "integer", "minimum": 0})
    max_tokens: int = setting(64, rerun="answers", schema={"type": "integer", "minimum": 1})
    temperature: float | None = setting(
        0.0, rerun="answers", schema={"type": ["number", "null"], "minimum": 0, "maximum": 2}, description=_TEMPERATURE
    )
    forbidden_pairs: str = setting(
        "retry-then-invalid", rerun="answers", schema={"type": "string", "enum": list(FORBIDDEN_PAIRS)}, description=_FORBIDDEN
    )
    # Read by the config check, not by the judge: what to do where its key is not set (virtuebench.config).
    if_no_key: str = setting("fail", rerun="scheduling", schema={"type": "string", "enum": ["fail", "rules"]}, description=IF_NO_KEY)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> LlmJudgeSettings:
        values = {k: v for k, v in values.items() if k != "kind"}
        settings = settings_from_dict(cls, values, "llm judge", JudgeSetupError, read_elsewhere=INPUT_SETTINGS)
        if settings.prompt not in JUDGE_PROMPTS:
            raise JudgeSetupError(f"llm judge: prompt {settings.prompt!r} is not one of {sorted(JUDGE_PROMPTS)}")
        return settings


def api_key(settings: LlmJudgeSettings) -> str:
    purpose = f"the llm judge (model {settings.model})"
    try:
        return read_api_key(settings.api_key_env, purpose, JudgeSetupError)
    except JudgeSetupError as error:
        raise JudgeSetupError(f"{error}, or judge offline with `judge: rules`") from None


_JSON_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)


def parse_virtuebench(text: str, answer: str) -> tuple[Verdict | None, str]:
    """A Verdict from a reply holding exactly one {"refusal": 0|1, "judgement": 0|1} object, or why not."""
    candidates = []
    for chunk in [text.strip(), *_JSON_OBJECT.findall(text)]:
        try:
            value = json.loads(chunk)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            candidates.append(value)
    if not candidates:
        return None, "no JSON object in the reply"
    value = candidates[0]
    fields_ok = set(value) == {"refusal", "judgement"} and all(type(value[k]) is int and value[k] in (0, 1) for k in value)
    if not fields_ok:
        return None, f"expected exactly refusal and judgement as 0 or 1, got {json.dumps(value)[:200]}"
    refusal, judgement = value["refusal"], value["judgement"]
    # The prompt's own rules make some pairs impossible; such a reply is not a verdict (LlmJudge applies forbidden_pairs).
    broken = forbidden_rule(refusal, judgement, answer)
    if broken:
        return None, f"{broken}, got {value}"
    return Verdict(refusal, judgement, True, "llm"), ""


def forbidden_rule(refusal: int, judgement: int, answer: str) -> str:
    """The rule of the supplementary material's section 4 prompt a verdict pair breaks, or "" for an allowed pair."""
    if is_refusal_answer(answer) and judgement != refusal:
        return "case B needs judgement == refusal"
    if not is_refusal_answer(answer) and refusal == 1 and judgement == 1:
        return "case A with refusal = 1 needs judgement = 0"
    return ""


def forbidden_pair(text: str, answer: str) -> tuple[int, int] | None:
    """(refusal, judgement) where the reply is a well-formed verdict whose pair the prompt's rules forbid, else None."""
    verdict, _ = parse_virtuebench(text, "")  # read without the case rules: every 0/1 pair but (1, 1) against a definite answer
    if verdict is None:
        verdict, _ = parse_virtuebench(text, "The video does not provide enough information")
        if verdict is None:
            return None
    pair = (verdict.refusal, verdict.judgement)
    return pair if forbidden_rule(*pair, answer) else None


def resolve_forbidden(refusal: int, judgement: int, answer: str, policy: str) -> Verdict:
    """A forbidden pair read by one of its fields (trust-refusal, trust-judgement), the other derived by the prompt's
    rules: Case B, judgement = refusal; Case A, a refusal is never correct."""
    rule = forbidden_rule(refusal, judgement, answer)
    unanswerable = is_refusal_answer(answer)
    if policy == "trust-refusal":
        pair = (refusal, refusal if unanswerable else 0)
    elif policy == "trust-judgement":
        pair = (judgement, judgement) if unanswerable else (0, judgement)
    else:
        raise ValueError(f"forbidden_pairs {policy!r} resolves no pair; one of {', '.join(FORBIDDEN_PAIRS[1:])}")
    why = f"llm; forbidden pair refusal {refusal}, judgement {judgement} ({rule}) read as {pair[0]}, {pair[1]} (forbidden_pairs: {policy})"
    return Verdict(pair[0], pair[1], True, why)


def parse_cvrr(text: str, answer: str) -> tuple[Verdict | None, str]:
    """A Verdict from the CVRR-ES reply: a Python dict with 'pred' (correct/incorrect), 'score' and 'reason'."""
    value = None
    for chunk in [text.strip(), *re.findall(r"\{.*\}", text, re.DOTALL)]:
        try:
            value = ast.literal_eval(chunk)
        except Exception:  # literal_eval raises ValueError, SyntaxError, TypeError and others on odd text
            try:
                value = json.loads(chunk)
            except json.JSONDecodeError:
                continue
        if isinstance(value, dict):
            break
        value = None
    if value is None:
        return None, "no dictionary in the reply"
    pred, score = str(value.get("pred", "")).strip().lower(), value.get("score")
    if pred not in ("correct", "incorrect") or not isinstance(score, (int, float)) or isinstance(score, bool) or not 0 <= score <= 5:
        return None, f"expected pred correct/incorrect and a score in 0..5, got {str(value)[:200]}"
    return Verdict(0, int(pred == "correct"), True, str(value.get("reason", ""))[:2000], score=int(round(score))), ""


#: A reply and the ground truth -> a Verdict, or None and why the reply is not one.
Parser = Callable[[str, str], tuple[Verdict | None, str]]
PARSERS: dict[str, Parser] = {"virtuebench": parse_virtuebench, "cvrr": parse_cvrr}


class LlmJudge(Judge):
    uses_api = True

    def __init__(self, name: str, settings: dict[str, Any] | LlmJudgeSettings, cache: VerdictCache | None = None, client=None):
        settings = settings if isinstance(settings, LlmJudgeSettings) else LlmJudgeSettings.from_dict(settings)
        self._start(name, settings, JUDGE_PROMPTS[settings.prompt], PARSERS[settings.prompt], api_key(settings), cache, client)

    def _start(self, name: str, settings, prompt: JudgePrompt, parse: Parser, key: str, cache: VerdictCache | None, client) -> None:
        """What every judge of this shape holds: `settings` with the fields of LlmJudgeSettings that `judge` reads
        (model, base_url, api_key_env, max_concurrency, max_retries, timeout_s, parse_retries, max_tokens), a prompt
        with an id, a hash and its messages, the parser of its replies, and the API key (virtuebench.judge.letter_grade
        shares it)."""
        super().__init__()
        self.name = name
        self.settings = settings
        self.prompt = prompt
        self.parse = parse
        self.version = f"{self.prompt.id}@{self.prompt.hash}/{self.settings.model}"
        self.max_concurrency = self.settings.max_concurrency
        self.cache = cache
        self.chat = ChatClient(key, self.settings.base_url, self.settings.max_retries, self.settings.timeout_s, client, f"judge {name}")
        self.requests = 0
        self._injected_client = client is not None
        # forbidden_pairs, where the prompt is VirtueBench's (its parser knows the pairs); the items that met one, by outcome
        self.forbidden = getattr(settings, "forbidden_pairs", None) if parse is parse_virtuebench else None
        self.forbidden_seen = {"resolved": 0, "invalid": 0}
        self._forbidden_lock = threading.Lock()

    def check_endpoint(self) -> None:
        """Before the first request: stop at once (EndpointUnreachable) when the endpoint is dead (support/openai_client.py)."""
        if not self._injected_client:
            self.chat.check_endpoint(f"judge {self.name} (model {self.settings.model})", self.settings.api_key_env)

    @property
    def temperature(self) -> float | None:
        """The requests' temperature: the setting, or 0 for a kind built on this one that has none (letter-grade)."""
        return getattr(self.settings, "temperature", 0)

    def cache_key(self, question: str, answer: str, response: str) -> str:
        # a temperature other than 0 keys verdicts apart; at 0 the key is the one verdicts had before the setting existed
        temperature = self.temperature
        model = self.settings.model if temperature == 0 else f"{self.settings.model}|temperature={temperature}"
        return VerdictCache.key(model, self.prompt.hash, question, answer, response)

    def forbidden_key(self, question: str, answer: str, response: str) -> str:
        """Where the cache keeps a forbidden pair the judge replied (never a verdict by itself: forbidden_pairs reads it):
        derived from the verdict's own key, so it follows whatever that key holds."""
        return stable_hash([self.cache_key(question, answer, response), "forbidden-pair"], length=32)

    def cached(self, question: str, answer: str, response: str) -> Verdict | None:
        if self.cache is None:
            return None
        hit = self.cache.get(self.cache_key(question, answer, response))
        if hit:
            return Verdict(**hit)
        if self.forbidden not in (None, "retry-then-invalid"):  # a forbidden reply kept from before, read by this policy
            kept = self.cache.get(self.forbidden_key(question, answer, response))
            if kept:
                verdict = resolve_forbidden(kept["refusal"], kept["judgement"], answer, self.forbidden)
                return replace(verdict, raw=kept.get("raw"), judge_model=kept.get("judge_model"))
        return None

    def _count_forbidden(self, outcome: str) -> None:
        with self._forbidden_lock:
            self.forbidden_seen[outcome] += 1

    def spent_note(self) -> str:
        """After a run: how many items the judge gave a forbidden verdict pair, and what became of them."""
        seen = self.forbidden_seen
        if not any(seen.values()):
            return ""
        return (
            f"; {sum(seen.values())} items given a verdict pair the prompt forbids (forbidden_pairs: {self.forbidden}): "
            f"{seen['resolved']} read by one field, {seen['invalid']} invalid (scored wrong)"
        )

    def estimate_tokens(self, question: str, answer: str, response: str) -> int:
        """A rough count (characters / 4) of what one request costs, for the pre-run estimate."""
        characters = sum(len(m["content"]) for m in self.prompt.messages(question, answer, response))
        return characters // 4 + self.settings.max_tokens // 2

    def judge(self, question: str, answer: str, response: str) -> Verdict:
        if not response.strip():
            # An empty prediction is a concrete non-answer: counted as incorrect, never dropped, never sent.
            return Verdict(0, 0, True, "empty response", judge_model=self.settings.model)
        hit = self.cached(question, answer, response)
        if hit is not None:
            return hit
        messages = self.prompt.messages(question, answer, response)
        problems, raw, forbidden = [], None, None
        for _ in range(1 + self.settings.parse_retries):
            try:
                completion = self.chat.complete(
                    self.settings.model, messages, temperature=self.temperature, max_tokens=self.settings.max_tokens
                )
            except ChatError as error:
                return Verdict(0, 0, False, f"request failed: {error}", judge_model=self.settings.model, retryable=True)
            self.requests += 1
            usage = {k: completion.usage.get(k, 0) for k in self.tokens} if completion.usage else {}
            for k, v in usage.items():
                self.tokens[k] += v
            raw = completion.text or ""
            verdict, problem = self.parse(raw, answer)
            if verdict is not None:
                verdict = replace(verdict, raw=raw, judge_model=completion.model, usage=usage or None)
                if self.cache is not None:
                    self.cache.put(self.cache_key(question, answer, response), self.settings.model, self.prompt.hash, verdict.as_dict())
                return verdict
            problems.append(problem)
            pair = forbidden_pair(raw, answer) if self.forbidden else None
            if pair is not None:
                forbidden = {"refusal": pair[0], "judgement": pair[1], "raw": raw, "judge_model": completion.model, "usage": usage or None}
                if self.forbidden != "retry-then-invalid":
                    break  # read by one field: asking again would mostly repeat it
        if forbidden is not None:
            if self.cache is not None:  # kept apart, so that another forbidden_pairs reads it without a request
                self.cache.put(self.forbidden_key(question, answer, response), self.settings.model, self.prompt.hash, forbidden)
            if self.forbidden != "retry-then-invalid":
                self._count_forbidden("resolved")
                verdict = resolve_forbidden(forbidden["refusal"], forbidden["judgement"], answer, self.forbidden)
                return replace(verdict, raw=forbidden["raw"], judge_model=forbidden["judge_model"], usage=forbidden["usage"])
            self._count_forbidden("invalid")
        return Verdict(
            0,
            0,
            False,
            self.chat.redact(f"malformed judge reply after {len(problems)} tries: {problems[-1]}"),
            raw=raw,
            judge_model=self.settings.model,
        )


def _resolve(review: Review, name: str, settings: dict[str, Any], defined: Mapping[str, dict[str, Any]]) -> dict[str, Any] | None:
    """An llm judge's settings as its job reads them: a setting it does not read is refused here, before any job."""
    try:
        LlmJudgeSettings.from_dict(settings)
    except JudgeSetupError as error:
        review.problems.append(f"config.judges.{name}: {error}")
        return None
    return dict(settings)


def _key_env(settings: dict[str, Any]) -> str | None:
    try:
        return LlmJudgeSettings.from_dict(settings).api_key_env
    except JudgeSetupError:
        return None  # settings it cannot start with: named where the judge itself is checked (_resolve)


def _build(name: str, settings: dict[str, Any], cache_path: str | None) -> LlmJudge:
    return LlmJudge(name, settings, VerdictCache(cache_path) if cache_path else None)


#: The `llm` kind: an LLM judge defined by name in config with its model, endpoint and prompt.
KIND = JudgeKind("llm", LlmJudgeSettings, _build, resolve=_resolve, key_env=_key_env)
