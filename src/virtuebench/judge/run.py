"""Running a judge over a file: contract items, or a responses file joined with the instances table.

Verdicts are appended to a progress file as they arrive (in completion order, from up to
`max_concurrency` requests at once), so a killed job resumes without asking again; before a run the
job states how many items it will request and an estimate of the tokens, after it the real count. A sampled model's
records (one per item and `sample`) are judged each on its own, keyed by item and sample.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from virtuebench import is_refusal_answer
from virtuebench.instances import Instance, read_instances
from virtuebench.judge.base import Judge, Verdict
from virtuebench.judge.inputs import judged_text
from virtuebench.records import (
    Judgment,
    ProgressLog,
    RecordError,
    Response,
    item_key,
    iter_jsonl,
    iter_records,
    line_digest,
    stable_hash,
    write_jsonl_atomic,
)
from virtuebench.support.concurrency import imap_unordered
from virtuebench.support.progress import Progress

ITEM_FIELDS = ("id", "question", "answer", "response")


def _no_response(error: str | None) -> Verdict:
    return Verdict(0, 0, False, f"no response: {error or 'response is null'}")


#: The rule for a reply cut off at the token limit or inside an unclosed thinking block under the judge setting
#: `truncated: no-answer` (the default; docs/records.md): no answer was given, so it is not sent to the judge; it counts
#: as wrong (neither a refusal nor a correct answer) and is listed in results/invalid_items.csv. Under `truncated: judge`
#: it is judged as it stands (virtuebench.judge.inputs).
TRUNCATED_REASON = "truncated reply (cut off at the token limit or inside an unclosed thinking block): judged as no answer"


def _truncated() -> Verdict:
    return Verdict(0, 0, False, TRUNCATED_REASON)


def judge_concurrently(judge: Judge, items: list[tuple[Any, str, str, str]]) -> Iterator[tuple[Any, Verdict]]:
    """(key, verdict) for each (key, question, answer, response), in completion order, at most
    `judge.max_concurrency` at a time."""
    for item, verdict in imap_unordered(lambda item: judge.judge(*item[1:]), items, judge.max_concurrency):
        yield item[0], verdict


def _announce(judge: Judge, label: str, pending: list[tuple[Any, str, str, str]]) -> None:
    """Before a judge that sends requests runs: how many it will make and roughly how many tokens."""
    if not judge.uses_api:
        return
    uncached = [item for item in pending if item[3].strip() and judge.cached(item[1], item[2], item[3]) is None]
    if uncached:
        judge.check_endpoint()  # a dead endpoint stops the job here, not after every item's retries
    tokens = sum(judge.estimate_tokens(q, a, r) for _, q, a, r in uncached)
    note = judge.pending_note(pending) or "cached"
    print(
        f"[{label}] {len(pending)} items to judge, {len(pending) - len(uncached)} without a request ({note}), "
        f"{len(uncached)} to request (~{tokens} tokens, estimated as characters / 4)",
        file=sys.stderr,
        flush=True,
    )


def _spent(judge: Judge) -> str:
    spent = (
        f", {judge.requests} API requests, {judge.tokens['prompt_tokens']} prompt + {judge.tokens['completion_tokens']} completion tokens"
        if judge.uses_api
        else ""
    )
    return spent + judge.spent_note()


def judge_items(path: str | Path, judge: Judge, out: str | Path) -> str:
    items, results = [], {}
    for number, item in enumerate(iter_jsonl(path), start=1):
        missing = [name for name in ITEM_FIELDS if name not in item]
        if missing:
            raise RecordError(f"{path}: item {number} lacks field(s) {missing}; each item needs {list(ITEM_FIELDS)}")
        for name in ("question", "answer"):
            if not isinstance(item[name], str):
                raise RecordError(f"{path}: item {number} (id {item['id']!r}): field {name!r} must be a string")
        if item["response"] is not None and not isinstance(item["response"], str):
            raise RecordError(f"{path}: item {number} (id {item['id']!r}): field 'response' must be a string or null")
        items.append(item)
    unasked = judge.inputs.truncated == "no-answer"  # a truncated item is scored wrong unasked, else judged
    pending = [
        (n, item["question"], item["answer"], item["response"])
        for n, item in enumerate(items)
        if item["response"] is not None and item.get("error") is None and not (item.get("truncated") and unasked)
    ]
    _announce(judge, str(path), pending)
    for n, item in enumerate(items):
        if item["response"] is None or item.get("error") is not None:
            results[n] = _no_response(item.get("error"))
        elif item.get("truncated") and unasked:
            results[n] = _truncated()
    for n, verdict in judge_concurrently(judge, pending):
        results[n] = verdict
    rows = [{"id": item["id"], **{k: v for k, v in asdict(results[n]).items() if v is not None}} for n, item in enumerate(items)]
    write_jsonl_atomic(out, rows)
    return f"judged {len(rows)} items from {path} with {judge.name}: {sum(not r['valid'] for r in rows)} invalid{_spent(judge)}"


def judge_responses(responses_path: str | Path, instances_path: str | Path, judge: Judge, out: str | Path) -> str:
    """Judge each response record of `responses_path` against its instance's ground truth at its level, resuming the
    verdicts an interrupted run gave to the same text; writes the judgments file `out` whole, or raises
    JudgeRequestsFailed (the progress file kept) where some requests failed after retries."""
    items, digests = _joined(responses_path, instances_path)
    # The input settings only where they differ from what judgments were made with before them: those stay resumable.
    fingerprint = stable_hash({"judge": judge.name, "version": judge.version, **judge.inputs.changed()})
    keys = [item_key(vars(response)) for response, _, _ in items]  # by instance (and sample, for a sampled model)
    current = {key: (response.response, answer, response.truncated) for key, (response, _, answer) in zip(keys, items)}
    log = ProgressLog(out, fingerprint, key=item_key)
    done = log.resume(
        lambda r: current.get(item_key(r)) == (r["response"], r["answer"], r.get("truncated", False)) and not r.get("retryable")
    )
    label = f"{judge.name}: {responses_path}"
    progress = Progress(label, len(items), already_done=len(done))
    by_key = dict(zip(keys, items))

    def settle(key: str, verdict: Verdict) -> None:
        response, inst, answer = by_key[key]
        done[key] = _judgment(judge, response, inst, answer, verdict, fingerprint, digests[key])
        log.append(done[key])
        progress.step()

    pending = []
    for key, (response, inst, answer) in zip(keys, items):
        if key in done:
            continue
        if (verdict := _unasked(response, judge)) is not None:
            settle(key, verdict)
        else:
            pending.append((key, inst.question, answer, judged(response, judge)))
    _announce(judge, label, pending)
    for key, verdict in judge_concurrently(judge, pending):
        settle(key, verdict)
    # A verdict resumed from an interrupted run was given to the same text, answer and truncation; the record names
    # the response record it now stands for (one asked again with the same reply differs in its latency only).
    records = [{**done[key], "response_hash": digests[key]} for key in keys]
    failed = sum(bool(r.get("retryable")) for r in records)
    if failed:
        log.close()  # keep the progress file: the next run asks only for the failed items
        raise JudgeRequestsFailed(
            f"[{label}] {failed} of {len(records)} requests failed after retries; rerun to ask for only those ({log.partial})"
        )
    log.finish(records)
    invalid = sum(not r["valid"] for r in records)
    return f"[{label}] done: {len(records)} judged, {invalid} invalid, {progress.elapsed_s:.1f} s{_spent(judge)}"


def _joined(responses_path: str | Path, instances_path: str | Path) -> tuple[list[tuple[Response, Instance, str]], dict[str, str]]:
    """(each response record with its instance and the ground truth at its level; what each judgment records of the
    response it judged, by item key: records.line_digest, which the report checks is the current one's). RecordError
    names a response whose instance or level the instances table lacks."""
    read = list(iter_records(responses_path, Response))
    digests = {item_key(vars(response)): line_digest(line) for response, line in read}
    instances = {inst.instance_id: inst for inst in read_instances(instances_path)}
    items = []
    for response, _ in read:
        inst = instances.get(response.instance_id)
        if inst is None:
            raise RecordError(f"{responses_path}: instance_id {response.instance_id!r} is not in {instances_path}")
        if response.level not in inst.answers:
            raise RecordError(f"{responses_path}: instance {response.instance_id!r} has no ground truth at level {response.level}")
        items.append((response, inst, inst.answers[response.level]))
    return items, digests


def _unasked(response: Response, judge: Judge) -> Verdict | None:
    """The verdict of a response the judge is not asked about: none came (an error), or a truncated one under
    `truncated: no-answer`; None where the judge is asked."""
    if not response.ok:
        return _no_response(response.error)
    if response.truncated and judge.inputs.truncated == "no-answer":
        return _truncated()
    return None


def _judgment(
    judge: Judge, response: Response, inst: Instance, answer: str, verdict: Verdict, fingerprint: str, response_hash: str
) -> dict[str, Any]:
    """The judgments record of one response (records.Judgment), as the file holds it."""
    return asdict(
        Judgment(
            instance_id=inst.instance_id,
            model=response.model,
            prompt=response.prompt,
            level=response.level,
            judge=judge.name,
            category=inst.category,
            task_type=inst.task_type,
            answer=answer,
            is_unanswerable=is_refusal_answer(answer),
            response=response.response,
            refusal=verdict.refusal,
            judgement=verdict.judgement,
            valid=verdict.valid,
            reason=verdict.reason,
            error=response.error,
            fingerprint=fingerprint,
            score=verdict.score,
            judge_version=judge.version,
            judge_model=verdict.judge_model,
            raw=verdict.raw,
            question=inst.question,
            retryable=verdict.retryable,
            video_id=response.video_id,
            truncated=response.truncated,
            confident=verdict.confident,
            decided_by=verdict.decided_by,
            response_hash=response_hash,
            sample=response.sample,
        ),
        dict_factory=_without_empty_sample,
    )


def judged(response: Response, judge: Judge) -> str:
    """What the judge reads of a response: its final answer, after its reasoning where the judge's `reasoning` setting
    says so (virtuebench.judge.inputs); a reasoning that never closed left open, the answer then being empty."""
    unclosed = response.truncated and bool(response.thinking) and not (response.response or "").strip()
    return judged_text(response.response or "", response.thinking, unclosed, judge.inputs)


def _without_empty_sample(fields: list[tuple[str, Any]]) -> dict[str, Any]:
    """asdict's dict of a Judgment, without `sample` where it is None (a model run once: the line as before the field)."""
    return {name: value for name, value in fields if not (name == "sample" and value is None)}


class JudgeRequestsFailed(RuntimeError):
    """Some judge requests failed after the client's retries; their items are asked again next run."""
