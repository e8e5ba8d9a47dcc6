"""Inference for one (model, prompt, level): every instance that has the level, one response record each.

Responses are appended to a progress file as they finish; a rerun after a crash or kill redoes
nothing that finished with the same settings, and the output file appears only when all items
have a record. A missing video or level is an input error: recorded in the item's record, counted
downstream, never retried. A backend failure is retried on the next run: the job then exits
non-zero after finishing every other item, so nothing downstream sees an incomplete set.

CLI: python -m virtuebench.inference --instances I --frames-dir D --model M --model-config JSON
     --prompt P --level N --out results/responses/M/P/N.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from virtuebench.concurrency import imap_unordered
from virtuebench.frames import FramesError, Manifest
from virtuebench.instances import Instance, read_instances
from virtuebench.models import Backend, Request, load_backend
from virtuebench.progress import Progress
from virtuebench.prompts import get_prompt
from virtuebench.records import ProgressLog, Response, stable_hash


@dataclass
class Summary:
    items: int
    answered: int
    reused: int
    input_errors: int
    backend_errors: int
    wall_s: float
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def line(self, label: str) -> str:
        return (
            f"[{label}] done: {self.items} items ({self.reused} reused from an interrupted run), "
            f"{self.answered} answered, {self.input_errors} input errors, {self.backend_errors} backend errors, "
            f"{self.prompt_tokens} prompt + {self.completion_tokens} completion tokens, {self.wall_s:.1f} s"
        )


CONTEXT_PREFIX = "context:"  # progress-file key of a video's context step (two-step prompts)


def fingerprint(model: str, model_config: dict[str, Any], prompt_hash: str, level: int) -> str:
    return stable_hash({"model": model, "config": model_config, "prompt": prompt_hash, "level": level})


def backend_settings(model_config: dict[str, Any]) -> dict[str, Any]:
    """What a backend is built with: the entry's settings, plus its hub id and revision where it has them."""
    settings = dict(model_config.get("settings") or {})
    for key in ("hub_id", "revision"):
        if model_config.get(key) is not None:
            settings.setdefault(key, model_config[key])
    return settings


def items_for_level(instances: list[Instance], level: int) -> list[Instance]:
    return sorted((inst for inst in instances if level in inst.answers), key=lambda inst: inst.instance_id)


def _is_done(record: dict[str, Any]) -> bool:
    return record.get("error") is None or not record.get("retryable", False)


def run_inference(
    instances: list[Instance],
    frames_dir: str | Path,
    model: str,
    model_config: dict[str, Any],
    prompt_name: str,
    level: int,
    output: str | Path,
    backend: Backend | None = None,
) -> Summary:
    prompt = get_prompt(prompt_name)
    items = items_for_level(instances, level)
    key = fingerprint(model, model_config, prompt.hash, level)
    manifests: dict[str, Manifest | str] = {}
    for inst in items:  # read each video's manifest once, before anything else
        if inst.video_id not in manifests:
            try:
                manifests[inst.video_id] = Manifest.read(Path(frames_dir) / inst.video_id)
            except FramesError as error:
                manifests[inst.video_id] = str(error)

    def frames_hash(video_id: str) -> str:
        manifest = manifests[video_id]
        if isinstance(manifest, str):
            return stable_hash(manifest)
        frames = manifest.levels.get(str(level))
        return stable_hash([manifest.error, manifest.settings, manifest.frame_size, frames.timestamps if frames else None])

    # A resumed record must match its question and frames too: an edited question or re-extracted
    # frames are asked again even where the model and prompt are unchanged.
    item_hashes = {inst.instance_id: stable_hash([inst.question, frames_hash(inst.video_id)]) for inst in items}
    item_hashes.update({CONTEXT_PREFIX + video_id: frames_hash(video_id) for video_id in manifests})
    log = ProgressLog(output, key)
    done = log.resume(lambda record: _is_done(record) and record.get("item_hash") == item_hashes.get(record["instance_id"]))
    label = f"{model}/{prompt_name}/{level}"
    progress = Progress(label, len(items), already_done=sum(inst.instance_id in done for inst in items))
    backend_name = model_config["backend"]
    counts = {"answered": 0, "input": 0, "backend": 0}
    records: dict[str, dict[str, Any]] = {}
    if backend is None and any(inst.instance_id not in done for inst in items):
        backend = load_backend(backend_name, backend_settings(model_config))

    def record(inst: Instance, response: str | None, error: str | None, retryable: bool, n_frames: int,
               latency: float, usage: dict[str, Any] | None = None, context: str | None = None) -> dict[str, Any]:  # fmt: skip
        return asdict(
            Response(
                instance_id=inst.instance_id, video_id=inst.video_id, model=model, backend=backend_name,
                prompt=prompt.id, prompt_hash=prompt.hash, level=level, n_frames=n_frames,
                response=response, error=error, latency_s=round(latency, 4), fingerprint=key,
                retryable=retryable, usage=usage or None, context=context, item_hash=item_hashes[inst.instance_id],
            )
        )  # fmt: skip

    # Two-step prompts: the context step runs once per video and is kept in the progress file.
    contexts: dict[str, tuple[str | None, str | None]] = {
        record["instance_id"].removeprefix(CONTEXT_PREFIX): (record["context"], None)
        for record in done.values()
        if record["instance_id"].startswith(CONTEXT_PREFIX)
    }
    context_locks: dict[str, threading.Lock] = defaultdict(threading.Lock)

    def context_for(inst: Instance, frames: list[Path], timestamps: list[float]) -> tuple[str | None, str | None]:
        with context_locks[inst.video_id]:  # one step-1 request per video, even with concurrent items
            if inst.video_id not in contexts:
                request = Request(CONTEXT_PREFIX + inst.video_id, "", prompt.context_template, frames, timestamps, level)
                try:
                    reply = backend.answer(request)
                    log.append({"instance_id": CONTEXT_PREFIX + inst.video_id, "fingerprint": key, "context": reply.text, "error": None,
                                "usage": reply.usage or None, "item_hash": item_hashes[CONTEXT_PREFIX + inst.video_id]})  # fmt: skip
                    contexts[inst.video_id] = (reply.text, None)
                except Exception as error:  # recorded on each of the video's items, retried next run
                    contexts[inst.video_id] = (None, f"context step failed: {type(error).__name__}: {error}")
            return contexts[inst.video_id]

    pending = [inst for inst in items if inst.instance_id not in done]

    def prepare(inst: Instance) -> tuple[dict[str, Any] | None, Request | None, str | None]:
        """An input-error record, or the request to send (with the context step's answer)."""
        manifest = manifests[inst.video_id]
        if isinstance(manifest, str) or manifest.error:
            reason = manifest if isinstance(manifest, str) else manifest.error
            return record(inst, None, f"frames unavailable: {reason}", False, 0, 0.0), None, None
        if str(level) not in manifest.levels:
            return record(inst, None, f"level {level} unavailable: video {manifest.video} has a grid of {manifest.grid_size} points", False, 0, 0.0), None, None  # fmt: skip
        frames = manifest.frame_paths(Path(frames_dir) / inst.video_id, level)
        timestamps = manifest.levels[str(level)].timestamps
        context, error_text = context_for(inst, frames, timestamps) if prompt.context_template else (None, None)
        if error_text is not None:
            return record(inst, None, error_text, True, len(frames), 0.0, None, context), None, context
        request = Request(inst.instance_id, inst.question, prompt.render(inst.question, context), frames, timestamps, level)
        return None, request, context

    def answer(inst: Instance) -> dict[str, Any]:
        done_record, request, context = prepare(inst)
        if done_record is not None:
            return done_record
        started = time.monotonic()
        try:
            reply = backend.answer(request)
            return record(inst, reply.text, None, False, len(request.frames), time.monotonic() - started, reply.usage, context)
        except Exception as error:  # any backend failure is recorded per item and retried next run
            return record(inst, None, f"{type(error).__name__}: {error}", True, len(request.frames), time.monotonic() - started, None, context)

    def answer_batch(batch: list[Instance]) -> list[tuple[Instance, dict[str, Any]]]:
        """For backends that take several requests at once (vLLM): one call per batch."""
        prepared = [(inst, *prepare(inst)) for inst in batch]
        results = [(inst, done_record) for inst, done_record, _, _ in prepared if done_record is not None]
        todo = [(inst, request, context) for inst, done_record, request, context in prepared if done_record is None]
        if todo:
            started = time.monotonic()
            try:
                replies = backend.answer_batch([request for _, request, _ in todo])
                if len(replies) != len(todo):
                    raise RuntimeError(f"the backend returned {len(replies)} replies for {len(todo)} requests")
                latency = (time.monotonic() - started) / len(todo)
                results += [(inst, record(inst, reply.text, None, False, len(request.frames), latency, reply.usage, context))
                            for (inst, request, context), reply in zip(todo, replies)]  # fmt: skip
            except Exception as error:  # the whole batch is retried next run
                results += [(inst, record(inst, None, f"{type(error).__name__}: {error}", True, len(request.frames), 0.0, None, context))
                            for inst, request, context in todo]  # fmt: skip
        return results

    batch_size = getattr(backend, "batch_size", 1) if hasattr(backend, "answer_batch") else 1
    if batch_size > 1:
        batches = [pending[i : i + batch_size] for i in range(0, len(pending), batch_size)]
        results = (pair for batch in batches for pair in answer_batch(batch))
    else:
        results = imap_unordered(answer, pending, getattr(backend, "max_concurrency", 1))
    for inst, result in results:
        log.append(result)
        records[inst.instance_id] = result
        if result["error"] is None:
            counts["answered"] += 1
            for name in ("prompt_tokens", "completion_tokens"):
                counts[name] = counts.get(name, 0) + int((result.get("usage") or {}).get(name, 0) or 0)
        else:
            counts["backend" if result["retryable"] else "input"] += 1
        progress.step()
    for inst in items:
        records.setdefault(inst.instance_id, done.get(inst.instance_id))

    reused = sum(inst.instance_id in done for inst in items)
    summary = Summary(len(items), counts["answered"], reused, counts["input"], counts["backend"], progress.elapsed_s,
                      counts.get("prompt_tokens", 0), counts.get("completion_tokens", 0))  # fmt: skip
    if counts["backend"]:
        log.close()  # keep the progress file: the next run retries only the failed items
    else:
        log.finish(records[inst.instance_id] for inst in items)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.inference", description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", required=True)
    parser.add_argument("--frames-dir", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--model-config", required=True, help="the model's config entry as a JSON object")
    parser.add_argument("--prompt", required=True)
    parser.add_argument("--level", type=int, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    try:
        model_config = json.loads(args.model_config)
    except json.JSONDecodeError as error:
        parser.error(f"--model-config is not valid JSON: {error}")
    try:
        summary = run_inference(
            read_instances(args.instances), args.frames_dir, args.model, model_config, args.prompt, args.level, args.out
        )
    except ValueError as error:  # a backend that cannot start (missing key, bad settings), a bad instances table
        print(f"error: {args.model}: {error}", file=sys.stderr)
        return 1
    label = f"{args.model}/{args.prompt}/{args.level}"
    print(summary.line(label), file=sys.stderr)
    if summary.backend_errors:
        print(
            f"error: {summary.backend_errors} of {summary.items} items failed in the backend; their errors are in "
            f"{args.out}.partial. Rerun to retry only those items.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
