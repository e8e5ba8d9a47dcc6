"""The paper's three curation filters (VirtueBench (arXiv:2603.07071), section 3.2; prompts in the VirtueBench supplementary material, section 3).

Each filter takes candidate instances and returns a `FilterResult`: the kept instances, one row per
removed instance with the reason, and counts. The two LLM filters ask a model through the ordinary
backend interface (virtuebench.models), so the filter model is any registry entry (Gemini-2.5-Flash
through its OpenAI-compatible endpoint in the paper config). Every decision is stored in an SQLite
cache as soon as it is made: a killed job resumes where it stopped, and an unchanged rerun asks nothing.
A reply that is not a decision is recorded and counted, and the question is left out, never guessed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from virtuebench.curation.prompts import ANSWERABILITY, DIFFICULTY, DIFFICULTY_UNKNOWN
from virtuebench.instances import Instance
from virtuebench.judge.base import Judge
from virtuebench.judge.cache import VerdictCache
from virtuebench.levels import grid_size, grid_timestamp
from virtuebench.models.base import Backend, Request
from virtuebench.records import stable_hash
from virtuebench.support.concurrency import imap_unordered
from virtuebench.support.progress import Progress
from virtuebench.support.video import frame_at

KEEP, DISCARD, INVALID = "keep", "discard", "invalid"


@dataclass
class FilterResult:
    stage: str
    kept: list[Instance]
    removed: list[dict[str, str]] = field(default_factory=list)  # instance_id, source, decision, reason
    decisions: list[dict[str, Any]] = field(default_factory=list)  # one per instance asked (LLM filters)

    def summary(self) -> dict[str, Any]:
        n_in = len(self.kept) + len(self.removed)
        return {
            "stage": self.stage,
            "n_in": n_in,
            "n_removed": len(self.removed),
            "n_invalid": sum(row["decision"] == INVALID for row in self.removed),
            "n_out": len(self.kept),
        }


# ---------------------------------------------------------------------------------------------
# Answers longer than six words


def word_count(text: str) -> int:
    return len(re.findall(r"\S+", text))


def filter_answer_length(instances: Sequence[Instance], max_words: int = 6) -> FilterResult:
    """Remove questions whose full-video answer has more than `max_words` words (ambiguous to judge)."""
    result = FilterResult("answer_length", [])
    for inst in instances:
        words = word_count(inst.answer)
        if words > max_words:
            result.removed.append(_removed(inst, DISCARD, f"answer has {words} words (> {max_words})"))
        else:
            result.kept.append(inst)
    return result


def _removed(inst: Instance, decision: str, reason: str) -> dict[str, str]:
    return {"instance_id": inst.instance_id, "source": inst.source, "decision": decision, "reason": reason}


# ---------------------------------------------------------------------------------------------
# The LLM filters


class FilterRequestsFailed(RuntimeError):
    """Some requests failed after the client's retries; the decisions made so far are cached."""


def parse_keep_discard(reply: str) -> str | None:
    """'Keep' / 'Discard' (case, quotes and punctuation aside); None when the reply is not exactly one of them."""
    words = set(re.findall(r"\b(keep|discard)\b", reply.lower()))
    if len(words) != 1 or len(re.findall(r"[A-Za-z]+", reply)) > 3:
        return None
    return KEEP if words == {"keep"} else DISCARD


def _letters(text: str) -> str:
    return re.sub(r"[^a-z ]", "", text.lower()).strip()


def is_unknown(reply: str) -> bool:
    """The difficulty prompt's "I don't know." (quotes, case and punctuation aside)."""
    return _letters(reply) in {_letters(DIFFICULTY_UNKNOWN), "idk", "unknown"}


@dataclass
class LlmFilter:
    """One LLM filter over instances: ask, decide, cache."""

    stage: str
    model: str
    model_fingerprint: str
    backend: Backend | None
    cache: VerdictCache
    max_concurrency: int = 1

    def run(
        self,
        instances: Sequence[Instance],
        make_request: Callable[[Instance], Request | str],
        decide: Callable[[Instance, str], tuple[str, str]],
        key_parts: Callable[[Instance], list[Any]],
        template: str,
    ) -> FilterResult:
        result = FilterResult(self.stage, [])
        template_hash = stable_hash(template)
        keys = {
            inst.instance_id: stable_hash([self.stage, self.model_fingerprint, template_hash, *key_parts(inst)], length=32)
            for inst in instances
        }
        cached = {inst.instance_id: self.cache.get(keys[inst.instance_id]) for inst in instances}
        pending = [inst for inst in instances if cached[inst.instance_id] is None]
        progress = Progress(f"{self.stage}/{self.model}", len(instances), already_done=len(instances) - len(pending))
        failures: list[str] = []

        def ask(inst: Instance) -> dict[str, Any] | None:
            request = make_request(inst)
            if isinstance(request, str):  # an input problem (e.g. no frame): recorded, not retried
                return {"reply": None, "decision": INVALID, "reason": request}
            try:
                reply = self.backend.answer(request).text
                decision, reason = decide(inst, reply)
            except Exception as error:  # the client already retried; cached decisions stay, the job fails
                failures.append(f"{inst.instance_id}: {type(error).__name__}: {error}")
                return None
            return {"reply": reply, "decision": decision, "reason": reason}

        for inst, outcome in imap_unordered(ask, pending, self.max_concurrency):
            progress.step()
            if outcome is None:
                continue
            cached[inst.instance_id] = outcome
            if outcome["decision"] != INVALID or outcome["reply"] is not None:
                # A reply that is no decision is cached too: asking again costs money and says the same.
                self.cache.put(keys[inst.instance_id], self.model, template_hash, outcome)
        if failures:
            listed = "; ".join(failures[:5])
            raise FilterRequestsFailed(
                f"{self.stage}: {len(failures)} request(s) to {self.model} failed ({listed}); "
                f"the other {len(instances) - len(failures)} decisions are cached - rerun to ask only the failed ones"
            )
        for inst in instances:
            outcome = cached[inst.instance_id]
            result.decisions.append({"instance_id": inst.instance_id, "stage": self.stage, "model": self.model, **outcome})
            if outcome["decision"] == KEEP:
                result.kept.append(inst)
            else:
                result.removed.append(_removed(inst, outcome["decision"], outcome["reason"]))
        return result


def answerability_request(inst: Instance) -> Request:
    prompt = ANSWERABILITY.format(question=inst.question, answer=inst.answer)
    return Request(inst.instance_id, inst.question, prompt, [], [], 0)


def decide_answerability(inst: Instance, reply: str) -> tuple[str, str]:
    decision = parse_keep_discard(reply)
    if decision is None:
        return INVALID, f"reply is neither Keep nor Discard: {reply[:80]!r}"
    return decision, "model: Keep" if decision == KEEP else "model: Discard (unsuitable for open-ended form)"


def filter_answerability(instances: Sequence[Instance], llm: LlmFilter) -> FilterResult:
    return llm.run(instances, answerability_request, decide_answerability, lambda inst: [inst.question, inst.answer], ANSWERABILITY)


# ---------------------------------------------------------------------------------------------
# Difficulty: one random frame per video


def random_second(video_id: str, duration_s: float, seed: int) -> int:
    """The video's random frame: a whole second of its 1 FPS grid, fixed by (seed, video_id)."""
    size = grid_size(duration_s)
    if size < 1:
        raise ValueError(f"video {video_id} is shorter than one second")
    return random.Random(f"{seed}:{video_id}").randrange(size)


#: The single frame's longest side (curation.filter_frame_max_side). The paper does not give the frame's size
#: (VirtueBench (arXiv:2603.07071), section 3.2: "we randomly sample a single frame from each video"); 448 px is the
#: project's choice, the per-frame cap of the evaluated models' frames (frames.max_pixels 200,704 = 448 x 448).
FILTER_FRAME_MAX_SIDE = 448


def extract_single_frame(video: str | Path, time_s: float, out: Path, max_side: int | None = FILTER_FRAME_MAX_SIDE) -> Path:
    """The frame on screen at `time_s` as a JPEG, its longest side shrunk to `max_side` (None: as decoded); written
    once, an existing file is reused (its name carries the size: single_frame_name)."""
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    image = frame_at(video, time_s)
    # PIL's thumbnail, not frames._resize: its size rounding and two-step reduction differ for some sizes.
    if max_side and max(image.size) > max_side:
        image.thumbnail((max_side, max_side))
    tmp = out.with_name(f".{out.name}.tmp")
    image.save(tmp, format="JPEG", quality=90)
    tmp.replace(out)
    return out


def single_frame_name(video_id: str, second: int, max_side: int | None) -> str:
    """Named by its second and size: another seed or another size never reuses the old image."""
    return f"{video_id}_{second:05d}_{max_side or 'full'}.jpg"


def filter_difficulty(
    instances: Sequence[Instance],
    llm: LlmFilter,
    judge: Judge,
    judge_id: str,
    frames_dir: str | Path,
    seed: int = 0,
    max_side: int | None = FILTER_FRAME_MAX_SIDE,
) -> FilterResult:
    """Discard a question the model answers correctly from one random frame of its video (or common sense).

    Correctness of the reply against the full-video answer is decided by `judge` (`judge_id` names it
    and its settings, so changing the judge re-decides); a reply the judge cannot score is recorded as
    invalid and the question left out. The frame's longest side is at most `max_side` px (None: as decoded);
    away from the default it is part of each decision's cache key, so another size asks again.
    """
    frames_dir = Path(frames_dir)
    frames: dict[str, tuple[Path, float] | str] = {}
    for inst in instances:
        if inst.video_id in frames:
            continue
        try:
            second = random_second(inst.video_id, inst.duration_s, seed)
            out = frames_dir / single_frame_name(inst.video_id, second, max_side)
            path = extract_single_frame(inst.video_path, grid_timestamp(second), out, max_side)
            frames[inst.video_id] = (path, grid_timestamp(second))
        except Exception as error:  # a broken video: its questions are recorded as invalid
            frames[inst.video_id] = f"single frame unavailable: {type(error).__name__}: {error}"

    def make_request(inst: Instance) -> Request | str:
        frame = frames[inst.video_id]
        if isinstance(frame, str):
            return frame
        path, time_s = frame
        return Request(inst.instance_id, inst.question, DIFFICULTY.format(question=inst.question), [path], [time_s], 1)

    def decide(inst: Instance, reply: str) -> tuple[str, str]:
        if is_unknown(reply):
            return KEEP, "model: I don't know"
        verdict = judge.judge(inst.question, inst.answer, reply)
        if verdict.retryable:
            raise RuntimeError(f"judge request failed: {verdict.reason}")
        if not verdict.valid:
            return INVALID, f"judge gave no verdict on {reply[:80]!r}: {verdict.reason}"
        if verdict.judgement == 1:
            return DISCARD, f"answered correctly from one frame: {reply[:80]!r}"
        return KEEP, f"not answered from one frame: {reply[:80]!r}"

    def key_parts(inst: Instance) -> list[Any]:
        frame = frames[inst.video_id]
        parts = [inst.question, inst.answer, judge_id, seed, frame if isinstance(frame, str) else frame[1]]
        # The size joins the key only away from the default: decisions cached before it was a setting (all at 448 px)
        # stay valid, and another size asks again.
        return parts if max_side == FILTER_FRAME_MAX_SIDE else [*parts, max_side]

    return llm.run(instances, make_request, decide, key_parts, DIFFICULTY)
