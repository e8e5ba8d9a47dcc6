"""Running a judge over a file: contract items, or a responses file joined with the instances table."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from virtuebench.instances import read_instances
from virtuebench.judge.base import Judge, Verdict
from virtuebench.judge.rules import is_refusal_answer
from virtuebench.progress import Progress
from virtuebench.records import Judgment, ProgressLog, RecordError, Response, iter_jsonl, load_records, stable_hash, write_jsonl_atomic

ITEM_FIELDS = ("id", "question", "answer", "response")


def _verdict(judge: Judge, question: str, answer: str, response: str | None, error: str | None) -> Verdict:
    if response is None or error is not None:
        return Verdict(0, 0, False, f"no response: {error or 'response is null'}")
    return judge.judge(question, answer, response)


def judge_items(path: str | Path, judge: Judge, out: str | Path) -> str:
    results = []
    for number, item in enumerate(iter_jsonl(path), start=1):
        missing = [name for name in ITEM_FIELDS if name not in item]
        if missing:
            raise RecordError(f"{path}: item {number} lacks field(s) {missing}; each item needs {list(ITEM_FIELDS)}")
        for name in ("question", "answer"):
            if not isinstance(item[name], str):
                raise RecordError(f"{path}: item {number} (id {item['id']!r}): field {name!r} must be a string")
        if item["response"] is not None and not isinstance(item["response"], str):
            raise RecordError(f"{path}: item {number} (id {item['id']!r}): field 'response' must be a string or null")
        verdict = _verdict(judge, item["question"], item["answer"], item["response"], item.get("error"))
        results.append({"id": item["id"], **asdict(verdict)})
    write_jsonl_atomic(out, results)
    return f"judged {len(results)} items from {path} with {judge.name}: {sum(not r['valid'] for r in results)} invalid"


def judge_responses(responses_path: str | Path, instances_path: str | Path, judge: Judge, out: str | Path) -> str:
    responses: list[Response] = load_records(responses_path, Response)
    instances = {inst.instance_id: inst for inst in read_instances(instances_path)}
    items: list[tuple[Response, Any, str]] = []
    for response in responses:
        inst = instances.get(response.instance_id)
        if inst is None:
            raise RecordError(f"{responses_path}: instance_id {response.instance_id!r} is not in {instances_path}")
        if response.level not in inst.answers:
            raise RecordError(f"{responses_path}: instance {response.instance_id!r} has no ground truth at level {response.level}")
        items.append((response, inst, inst.answers[response.level]))

    key = stable_hash({"judge": judge.name, "version": judge.version})
    current = {response.instance_id: (response.response, answer) for response, _, answer in items}
    log = ProgressLog(out, key)
    done = log.resume(lambda r: current.get(r["instance_id"]) == (r["response"], r["answer"]))
    label = f"{judge.name}: {responses_path}"
    progress = Progress(label, len(items), already_done=len(done))
    records = []
    for response, inst, answer in items:
        record = done.get(inst.instance_id)
        if record is None:
            verdict = _verdict(judge, inst.question, answer, response.response, response.error)
            record = asdict(
                Judgment(
                    instance_id=inst.instance_id, model=response.model, prompt=response.prompt, level=response.level,
                    judge=judge.name, category=inst.category, task_type=inst.task_type, answer=answer,
                    is_unanswerable=is_refusal_answer(answer), response=response.response,
                    refusal=verdict.refusal, judgement=verdict.judgement, valid=verdict.valid,
                    reason=verdict.reason, error=response.error, fingerprint=key,
                )
            )  # fmt: skip
            log.append(record)
            progress.step()
        records.append(record)
    log.finish(records)
    invalid = sum(not record["valid"] for record in records)
    return f"[{label}] done: {len(records)} judged ({len(done)} reused), {invalid} invalid, {progress.elapsed_s:.1f} s"
