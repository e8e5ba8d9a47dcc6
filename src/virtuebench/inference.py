"""Inference for one (model, prompt, level): every instance that has the level, one response record each.

Responses are appended to a progress file as they finish; a rerun after a crash or kill redoes
nothing that finished with the same settings and the same weights (a record made with another
weights commit is asked again), and the output file appears only when all items have a record. A broken video
(its frame manifest records the error) or a missing level is an input error: recorded in the item's record, counted
downstream, never retried. A frames folder without a complete manifest (its frames were never fully written) is not
an input error: the job refuses to start (IncompleteFrames), writing nothing. A backend failure is retried on the next run: the job then exits
non-zero after finishing every other item, so nothing downstream sees an incomplete set. SIGINT / SIGTERM and
faults of the disk or the OS (a full disk: support/faults.py) stop the job with one line, the progress file kept.

Every finished answer is also kept in the answer store (support/store.py, `--store`), under a key of all it depends
on: the model's answer settings and weights commit, the prompt's text, the item's question and options, the exact
frames given (the level's frame digest, times and the video's length) and the sample. An item whose key is stored is
not asked: a job whose every item is stored loads no weights and makes no request, and writes the same records as the
run that asked them. A damaged entry is ignored and asked again.

A sampled model (registry `samples: N`, N > 1) answers every item N times in the same job, each answer a record with its
`sample` (0..N-1); the backend is asked with `Request.sample` and seeds run k with its seed + k, so a rerun or a resume
samples the same answers, and a resume redoes no finished (item, sample). A model run once writes records without
`sample`, as before it existed.

How items reach the backend follows what it declares (models/base.py): in batches, from several
threads, or pipelined (the next item's frames and processor run on a CPU thread while the current
item generates), else one after another.

CLI: python -m virtuebench.inference --instances I --frames-dir D --model M --model-config JSON
     [--model-run-config JSON] --prompt P --level N [--store S] --out results/responses/M/P/N.jsonl
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from virtuebench.frames import MANIFEST, BadFrame, FramesError, Manifest, check_level, frames_hash, level_digest, remove_damaged_level
from virtuebench.instances import Instance, items_for_level, read_instances
from virtuebench.models import Backend, Reply, Request, load_backend
from virtuebench.models.spec import ModelSpec
from virtuebench.prompts import CONTEXT_SCOPES, Prompt, get_prompt
from virtuebench.records import ProgressLog, Response, item_key, stable_hash
from virtuebench.support.concurrency import imap_prefetched, imap_unordered
from virtuebench.support.faults import describe, environment_error, environment_fault
from virtuebench.support.progress import Progress
from virtuebench.support.stops import Stop, run_stoppable
from virtuebench.support.store import Store, store_key


@dataclass
class Summary:
    items: int
    answered: int
    reused: int  # from an interrupted run's progress file or from the answer store
    input_errors: int
    backend_errors: int
    wall_s: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    truncated: int = 0
    weights_commits: tuple[str, ...] = ()  # the weights commits of the job's records
    stored: int = 0  # of `reused`, those found in the answer store
    answered_by: tuple[str, ...] = ()  # the models that answered the job's records, as their replies name them

    def line(self, label: str) -> str:
        weights = f", weights {' + '.join(self.weights_commits)}" if self.weights_commits else ""
        # An API model's reply names the snapshot that answered (an alias such as gpt-5-chat-latest moves over time).
        answered = f", answered by {' + '.join(self.answered_by)}" if self.answered_by and not self.weights_commits else ""
        return (
            f"[{label}] done: {self.items} items ({self.reused - self.stored} reused from an interrupted run, "
            f"{self.stored} from the answer store), "
            f"{self.answered} answered ({self.truncated} truncated), {self.input_errors} input errors, "
            f"{self.backend_errors} backend errors, {self.prompt_tokens} prompt + {self.completion_tokens} completion tokens, "
            f"{self.wall_s:.1f} s{weights}{answered}"
        )


CONTEXT_PREFIX = "context:"  # progress-file key of a video's context step (two-step prompts)


def fingerprint(model: str, answers: dict[str, Any], prompt_hash: str, level: int) -> str:
    """What a progress file's records were made with: the model's tracked settings (ModelSpec.answers), prompt, level."""
    return stable_hash({"model": model, "config": answers, "prompt": prompt_hash, "level": level})


def sample_numbers(spec: ModelSpec) -> list[int | None]:
    """The runs of each item: [None] for a model run once (its records carry no `sample`), else 0..samples-1."""
    samples = int(spec.answers.get("samples", 1))
    return [None] if samples == 1 else list(range(samples))


#: One answer to make: an item, and which of a sampled model's runs (None: the model is run once).
Unit = tuple[Instance, int | None]


def unit_key(inst: Instance, sample: int | None) -> str:
    """The progress file's key of an (item, sample): records.item_key of its record."""
    return item_key({"instance_id": inst.instance_id, "sample": sample})


def context_key(video_id: str, sample: int | None) -> str:
    """The progress file's key of a video's context step (two-step prompts): one per video and sample."""
    return item_key({"instance_id": CONTEXT_PREFIX + video_id, "sample": sample})


class IncompleteFrames(RuntimeError):
    """A frames folder holds no complete frame manifest, or misses files its manifest lists: the job cannot start."""


def _check_frames(manifest: Manifest, folder: Path, level: int) -> str | None:
    """What is wrong with a read manifest's frames of `level`, else None (a recorded video error is not wrong here)."""
    listed: dict[str, set[str]] = {}  # the files of each folder the frames are in, listed once (not a stat per frame)
    frames = manifest.levels.get(str(level))
    if manifest.error or frames is None:
        return None
    if len(frames.files) != len(frames.timestamps):
        return f"its manifest lists {len(frames.files)} files for {len(frames.timestamps)} timestamps of level {level}"
    missing = [name for name in frames.files if not _is_file(folder, name, listed)]
    if missing:
        return (
            f"{len(missing)} of the {len(frames.files)} frame files of level {level} its manifest lists are missing (first: {missing[0]})"
        )
    return None


def _is_file(folder: Path, name: str, listed: dict[str, set[str]]) -> bool:
    """os.path.isfile(folder / name), from one listing of the file's folder (`listed`, filled here): a level's 1,024
    frames are one os.scandir, not 1,024 stats. DirEntry.is_file follows symbolic links, as isfile does."""
    parent, base = os.path.split(os.path.join(folder, name))
    if parent not in listed:
        try:
            with os.scandir(parent) as entries:
                listed[parent] = {entry.name for entry in entries if entry.is_file()}
        except OSError:  # not there, or not a folder: none of its files is there
            listed[parent] = set()
    return base in listed[parent]


def read_manifests(items: list[Instance], frames_dir: Path, level: int | None = None) -> dict[str, Manifest]:
    """Each video's frame manifest, read once, and (with `level`) the level's frame files checked to exist.

    A manifest that records the video's own error is returned as it is (the items get an input error). A folder
    whose manifest is missing, cut short or not a frame manifest, or whose listed frames are not all there, was
    never fully written: IncompleteFrames names every such video, and nothing is read as its frames."""
    manifests: dict[str, Manifest] = {}
    problems: list[str] = []
    for inst in items:
        if inst.video_id in manifests:
            continue
        folder = frames_dir / inst.video_id
        try:
            manifests[inst.video_id] = manifest = Manifest.read(folder, level)  # with a level: its folder's own
        except FramesError as error:
            problems.append(f"video {inst.video_id}: {folder} has no complete frame manifest ({error})")
            manifests[inst.video_id] = None  # type: ignore[assignment]  # reported below
            continue
        problem = _check_frames(manifest, folder, level) if level is not None else None
        if problem:
            problems.append(f"video {inst.video_id}: {folder}: {problem}")
    if problems:
        more = f" (and {len(problems) - 3} more videos)" if len(problems) > 3 else ""
        raise IncompleteFrames(
            "; ".join(problems[:3]) + more + ". Their frames were never fully written (or were changed since): rerun the workflow "
            "(it re-extracts them), or delete those folders and rerun"
        )
    return manifests


def asked_frames_digest(manifest: Manifest, folder: Path, level: int) -> str | None:
    """The digest of the level's frames (frames.level_digest): the manifest's where it records one, else read from the
    files (a manifest of an older version; the same function, so the same frames give the same digest). None where
    the level has no frames (a broken video, a level the video is too short for)."""
    frames = manifest.levels.get(str(level))
    if manifest.error or frames is None:
        return None
    return frames.digest or level_digest(folder, frames)


#: The answer fields of a response record: what the store keeps. The others (instance, model, prompt, level, the
#: fingerprints) are the job's, filled in again by the job that reuses the answer.
ANSWER_FIELDS = (
    "n_frames",
    "response",
    "latency_s",
    "usage",
    "context",
    "thinking",
    "truncated",
    "finish_reason",
    "weights_commit",
    "answered_by",
)


def _is_done(record: dict[str, Any]) -> bool:
    return record.get("error") is None or not record.get("retryable", False)


def _response(record: dict[str, Any]) -> Response:
    names = {field.name for field in dataclasses.fields(Response)}
    return Response(**{key: value for key, value in record.items() if key in names})


class InferenceJob:
    """One (model, prompt, level) job: its items, their frames and the records made so far."""

    def __init__(
        self,
        instances: list[Instance],
        frames_dir: str | Path,
        spec: ModelSpec,
        prompt: Prompt,
        level: int,
        output: str | Path,
        store: str | Path | None = None,
    ) -> None:
        self.spec, self.model, self.prompt, self.level = spec, spec.name, prompt, level
        self.store = Store(store, "answers") if store is not None else None
        self.frames_dir = Path(frames_dir)
        self.items = items_for_level(instances, level)
        self.samples = sample_numbers(spec)
        self.units: list[Unit] = [(inst, sample) for inst in self.items for sample in self.samples]
        # Only the settings that change the answers: a new concurrency or batch size keeps what was answered.
        self.key = fingerprint(spec.name, spec.answers, prompt.hash, level)
        self.manifests = read_manifests(self.items, self.frames_dir, level)  # before anything is written
        # A resumed record must match its question and frames too: an edited question or re-extracted
        # frames are asked again even where the model and prompt are unchanged.
        video_hashes = {video_id: frames_hash(m, level) for video_id, m in self.manifests.items()}  # once per video, not per item
        self.item_hashes = {inst.instance_id: stable_hash([inst.question, video_hashes[inst.video_id]]) for inst in self.items}
        self.item_hashes.update({CONTEXT_PREFIX + video_id: digest for video_id, digest in video_hashes.items()})
        if prompt.context_per_question:  # the context step is asked for each question, of the question's video's frames
            self.item_hashes.update({CONTEXT_PREFIX + inst.instance_id: video_hashes[inst.video_id] for inst in self.items})
        self.log = ProgressLog(output, self.key, key=item_key)
        # Records made with other weights (an unpinned hub id that moved, a folder whose files changed) are asked again.
        # The commit the job will load, where it can be told before loading (a pinned revision, a local snapshot or
        # folder, the hub cache); None where it cannot (not downloaded yet: checked again once the backend has loaded).
        self.weights_commit = spec.commit()
        self.done = self.log.resume(
            lambda r: (
                _is_done(r)
                and r.get("item_hash") == self.item_hashes.get(r["instance_id"])
                and (self.weights_commit is None or r.get("weights_commit") in (None, self.weights_commit))
            )
        )
        self.contexts: dict[str, tuple[str | None, str | None]] = {
            key: (record["context"], None) for key, record in self.done.items() if record["instance_id"].startswith(CONTEXT_PREFIX)
        }  # by context_key
        self._context_locks: dict[str, threading.Lock] = defaultdict(threading.Lock)
        self.backend: Backend | None = None
        self.stored = 0
        self._digests: dict[str, str | None] = {}
        # The store is read before the weights are loaded where the commit they will have is known (a pinned revision,
        # a local folder, the cache; a model without weights), else once they are loaded.
        if self.weights_commit is not None or not spec.hub_id:
            self._reuse_stored(self.weights_commit)

    # -- the answer store ------------------------------------------------------------------------------

    def _frames_digest(self, video_id: str) -> str | None:
        if video_id not in self._digests:
            self._digests[video_id] = asked_frames_digest(self.manifests[video_id], self.frames_dir / video_id, self.level)
        return self._digests[video_id]

    def answer_key(self, unit: Unit, commit: str | None) -> str | None:
        """The store's key of a unit's answer: everything the backend is given and answers with. None where the item
        has no frames to ask with (its record is an input error, made again for free)."""
        inst, sample = unit
        digest = self._frames_digest(inst.video_id)
        if digest is None:
            return None
        manifest = self.manifests[inst.video_id]
        return store_key(
            {
                "answers": self.spec.answers,
                "weights": commit,
                "prompt": self.prompt.hash,
                "instance": inst.instance_id,
                "question": inst.question,
                "options": list(inst.options),
                "level": self.level,
                "frames": digest,
                "timestamps": manifest.levels[str(self.level)].timestamps,
                "duration_s": manifest.duration_s,
                "sample": sample,
            }
        )

    def context_owner(self, inst: Instance) -> str:
        """Whose context step an item's answer takes: its video's (asked once per video), or, where the prompt's
        context_scope is per-question, its own (asked afresh for it, as the CVRR-ES authors' DSCP scripts do)."""
        return inst.instance_id if self.prompt.context_per_question else inst.video_id

    def context_store_key(self, video_id: str, sample: int | None, instance_id: str | None = None) -> str | None:
        """The store's key of a context step (two-step prompts): its frames, prompt and the model's settings, and
        with `instance_id` (per-question) the question it was asked for."""
        if self.store is None or self._frames_digest(video_id) is None:
            return None
        commit = self.backend.weights_commit if self.backend is not None else self.weights_commit
        key = {
            "answers": self.spec.answers,
            "weights": commit,
            "prompt": self.prompt.hash,
            "context_of": video_id,
            "level": self.level,
            "frames": self._frames_digest(video_id),
            "timestamps": self.manifests[video_id].levels[str(self.level)].timestamps,
            "duration_s": self.manifests[video_id].duration_s,
            "sample": sample,
        }
        return store_key(key if instance_id is None else {**key, "context_for": instance_id})

    def _reuse_stored(self, commit: str | None) -> None:
        """Take every pending unit's answer the store holds as done."""
        if self.store is None:
            return
        for unit in self.pending:
            key = self.answer_key(unit, commit)
            value = self.store.get(key) if key is not None else None
            if value is not None:
                self.done[unit_key(*unit)] = dataclasses.asdict(self.record(unit, 0, stored=value))
                self.stored += 1

    def _keep(self, unit: Unit, record: Response) -> None:
        """A finished answer, into the store (failures and input errors are not answers: they are made again)."""
        if self.store is None or record.error is not None:
            return
        key = self.answer_key(unit, record.weights_commit)
        if key is not None:
            about = {"model": self.model, "instance_id": record.instance_id, "prompt": self.prompt.id, "level": self.level}
            self.store.put(key, {name: getattr(record, name) for name in ANSWER_FIELDS}, about=about)

    @property
    def pending(self) -> list[Unit]:
        return [(inst, sample) for inst, sample in self.units if unit_key(inst, sample) not in self.done]

    def record(
        self,
        unit: Unit,
        n_frames: int,
        latency: float = 0.0,
        reply: Reply | None = None,
        error: str | None = None,
        retryable: bool = False,
        context: str | None = None,
        stored: dict[str, Any] | None = None,
    ) -> Response:
        """The unit's response record: of a reply (or an error), or, with `stored`, of an answer kept in the store."""
        inst, sample = unit
        if stored is not None:  # the answer's own fields as they were first recorded; the job's identity
            answer = {name: stored.get(name) for name in ANSWER_FIELDS}
        else:
            answer = {
                "n_frames": n_frames,
                "response": reply.text if reply else None,
                "latency_s": round(latency, 4),
                "usage": (reply.usage or None) if reply else None,
                "context": context,
                "thinking": reply.thinking if reply else None,
                "truncated": reply.truncated if reply else False,
                "finish_reason": reply.finish_reason if reply else None,
                "weights_commit": self.backend.weights_commit if self.backend else None,
                "answered_by": self.answered_by(reply),
            }
        return Response(
            instance_id=inst.instance_id,
            video_id=inst.video_id,
            model=self.model,
            backend=self.spec.backend,
            prompt=self.prompt.id,
            prompt_hash=self.prompt.hash,
            level=self.level,
            error=error,
            fingerprint=self.key,
            retryable=retryable,
            item_hash=self.item_hashes[inst.instance_id],
            sample=sample,
            **answer,
        )

    def answered_by(self, reply: Reply | None) -> str | None:
        """Who answered: the reply's own model name (an API's), else the hub id or folder the weights were loaded from;
        None without a reply, or for a backend with neither (a reference row)."""
        if reply is None:
            return None
        if reply.model:
            return reply.model
        return self.spec.hub_id if self.backend is not None and self.backend.loads_weights else None

    def failure(self, unit: Unit, request: Request, error: Exception, latency: float, context: str | None) -> Response:
        """A backend failure: recorded for this item and retried on the next run. A fault of the disk or the OS (a
        full disk, too many open files) is no item's: it stops the job, as every other item would meet it too. Nor is
        a frame file that cannot be read (frames.BadFrame): retrying the item would never help; the job stops naming
        the file (`damaged_frames_line`)."""
        if environment_error(error) or bad_frame(error):
            raise error
        return self.record(unit, len(request.frames), latency, error=f"{type(error).__name__}: {error}", retryable=True, context=context)

    def context_for(
        self, unit: Unit, frames: list[Path], timestamps: list[float], duration_s: float | None
    ) -> tuple[str | None, str | None]:
        """A two-step prompt's first answer for the item: asked once per video, or once per question where the
        prompt's context_scope is per-question (and per sample of a sampled model: each run is a run of the whole
        prompt), kept in the progress file."""
        video_id, sample = unit[0].video_id, unit[1]
        owner = self.context_owner(unit[0])
        key = context_key(owner, sample)
        with self._context_locks[key]:  # one step-1 request per video (per question), even with concurrent items
            stored_key = self.context_store_key(video_id, sample, None if owner == video_id else owner)
            if key not in self.contexts and stored_key is not None and (value := self.store.get(stored_key)) is not None:
                self.contexts[key] = (value["context"], None)
            if key not in self.contexts:
                request = Request(
                    CONTEXT_PREFIX + owner, "", self.prompt.context_template, frames, timestamps, self.level, duration_s, sample or 0
                )
                try:
                    reply = self.backend.answer(request)
                    record = {
                        "instance_id": CONTEXT_PREFIX + owner,
                        "fingerprint": self.key,
                        "context": reply.text,
                        "error": None,
                        "usage": reply.usage or None,
                        "item_hash": self.item_hashes[CONTEXT_PREFIX + owner],
                    }
                    self.log.append(record if sample is None else {**record, "sample": sample})
                    if stored_key is not None:
                        self.store.put(stored_key, {"context": reply.text}, about={"model": self.model, "context_of": video_id})
                    self.contexts[key] = (reply.text, None)
                except Exception as error:  # recorded on each of the video's items, retried next run
                    if environment_error(error) or bad_frame(error):
                        raise
                    self.contexts[key] = (None, f"context step failed: {type(error).__name__}: {error}")
            return self.contexts[key]

    def request_for(self, unit: Unit) -> tuple[Response | None, Request | None, str | None]:
        """An input-error record, or the request to send (with the context step's answer)."""
        inst, sample = unit
        manifest = self.manifests[inst.video_id]
        if manifest.error:  # the video itself is broken: recorded when its frames were extracted
            return self.record(unit, 0, error=f"frames unavailable: {manifest.error}"), None, None
        if str(self.level) not in manifest.levels:
            error = f"level {self.level} unavailable: video {manifest.video} has a grid of {manifest.grid_size} points"
            return self.record(unit, 0, error=error), None, None
        frames = manifest.frame_paths(self.frames_dir / inst.video_id, self.level)
        timestamps = manifest.levels[str(self.level)].timestamps
        context, error_text = (None, None)
        if self.prompt.context_template:
            context, error_text = self.context_for(unit, frames, timestamps, manifest.duration_s)
        if error_text is not None:
            return self.record(unit, len(frames), error=error_text, retryable=True, context=context), None, context
        prompt = self.prompt.render(inst.question, context)
        request = Request(inst.instance_id, inst.question, prompt, frames, timestamps, self.level, manifest.duration_s, sample or 0)
        return None, request, context

    # -- the ways items reach the backend ------------------------------------------------------------

    def answer(self, unit: Unit) -> Response:
        done, request, context = self.request_for(unit)
        if done is not None:
            return done
        started = time.monotonic()
        try:  # the reply first: an argument list is read left to right, so the latency would be taken before it
            reply = self.backend.answer(request)
            return self.record(unit, len(request.frames), time.monotonic() - started, reply, context=context)
        except Exception as error:  # any backend failure is recorded per item and retried next run
            return self.failure(unit, request, error, time.monotonic() - started, context)

    def prepare(self, unit: Unit) -> tuple[Response | None, Request | None, str | None, Any]:
        """The pipelined backend's CPU step, run ahead on another thread; a failure there is the item's."""
        done, request, context = self.request_for(unit)
        if done is not None:
            return done, None, None, None
        try:
            return None, request, context, self.backend.prepare(request)
        except Exception as error:
            return self.failure(unit, request, error, 0.0, context), None, None, None

    def generate(self, unit: Unit, prepared: tuple[Response | None, Request | None, str | None, Any]) -> Response:
        done, request, context, inputs = prepared
        if done is not None:
            return done
        started = time.monotonic()
        try:  # the reply first: an argument list is read left to right, so the latency would be taken before it
            reply = self.backend.generate(inputs)
            return self.record(unit, len(request.frames), time.monotonic() - started, reply, context=context)
        except Exception as error:
            return self.failure(unit, request, error, time.monotonic() - started, context)

    def answer_batch(self, batch: list[Unit]) -> list[tuple[Unit, Response]]:
        """One backend call for the batch's requests; a lost or failed reply fails the whole batch."""
        prepared = [(unit, *self.request_for(unit)) for unit in batch]
        results = [(unit, done) for unit, done, _, _ in prepared if done is not None]
        todo = [(unit, request, context) for unit, done, request, context in prepared if done is None]
        if todo:
            started = time.monotonic()
            try:
                replies = self.backend.answer_batch([request for _, request, _ in todo])
                if len(replies) != len(todo):
                    raise RuntimeError(f"the backend returned {len(replies)} replies for {len(todo)} requests")
                latency = (time.monotonic() - started) / len(todo)
                results += [
                    (unit, self.record(unit, len(request.frames), latency, reply, context=context))
                    for (unit, request, context), reply in zip(todo, replies)
                ]
            except Exception as error:  # the whole batch is retried next run
                results += [(unit, self.failure(unit, request, error, 0.0, context)) for unit, request, context in todo]
        return results

    def results(self) -> Iterator[tuple[Unit, Response]]:
        backend, pending = self.backend, self.pending
        if backend.batch_size > 1:
            batches = [pending[i : i + backend.batch_size] for i in range(0, len(pending), backend.batch_size)]
            return (pair for batch in batches for pair in self.answer_batch(batch))
        if backend.max_concurrency > 1:
            return imap_unordered(self.answer, pending, backend.max_concurrency)
        if backend.pipelined and not self.prompt.context_template:  # a context step would share the accelerator
            return imap_prefetched(self.prepare, self.generate, pending)
        return imap_unordered(self.answer, pending, 1)

    def _drop_other_weights(self) -> None:
        """Once the weights are loaded, their commit is known for sure (an unpinned hub id is resolved only by the
        download): records made with other weights are asked again, so one output never mixes two commits."""
        loaded = self.backend.weights_commit if self.backend is not None else None
        if loaded is None:
            return
        for key in [key for key, record in self.done.items() if record.get("weights_commit") not in (None, loaded)]:
            del self.done[key]
            self.contexts.pop(key, None)

    def check_frames(self) -> None:
        """frames.check_level for each video a pending item asks about, before any model is loaded or asked: BadFrame
        naming a damaged frame file (or level folder). One read of each of those frames, which the model reads anyway:
        about 0.13 ms a 42 kB frame in the page cache (docs/reliability.md); a video whose items are all
        answered is not read."""
        for video_id in dict.fromkeys(inst.video_id for inst, _ in self.pending):
            manifest = self.manifests[video_id]
            frames = manifest.levels.get(str(self.level))
            if not manifest.error and frames is not None:
                check_level(self.frames_dir / video_id, self.level, frames)

    def run(self, backend: Backend | None = None) -> Summary:
        label = f"{self.model}/{self.prompt.id}/{self.level}"
        self.backend = backend
        self.check_frames()
        if self.backend is None and self.pending:
            self.backend = load_backend(self.spec)
        self._drop_other_weights()
        deferred = self.weights_commit is None and self.spec.hub_id
        if deferred and self.backend is not None:  # the commit is known now that the weights are loaded
            self._reuse_stored(self.backend.weights_commit)
        reused = sum(unit_key(*unit) in self.done for unit in self.units)
        progress = Progress(label, len(self.units), already_done=reused)
        counts = {"answered": 0, "input": 0, "backend": 0, "prompt_tokens": 0, "completion_tokens": 0, "truncated": 0}
        records: dict[str, Response] = {}
        results = self.results() if self.pending else iter(())
        try:
            for unit, record in results:
                self.log.append(record)
                self._keep(unit, record)
                records[unit_key(*unit)] = record
                if record.error is None:
                    counts["answered"] += 1
                    counts["truncated"] += record.truncated
                    for name in ("prompt_tokens", "completion_tokens"):
                        counts[name] += int((record.usage or {}).get(name, 0) or 0)
                else:
                    counts["backend" if record.retryable else "input"] += 1
                progress.step()
        except BaseException:  # a stop (SIGINT, SIGTERM) or a fault of the disk: keep what finished, write no output
            getattr(results, "close", lambda: None)()  # queued items are not started
            try:
                self.log.close()
            except OSError:  # a full disk fails the last flush again; the lines before it are on disk
                pass
            raise
        summary = Summary(
            len(self.units),
            counts["answered"],
            reused,
            counts["input"],
            counts["backend"],
            progress.elapsed_s,
            counts["prompt_tokens"],
            counts["completion_tokens"],
            counts["truncated"],
            stored=self.stored,
        )
        if counts["backend"]:
            self.log.close()  # keep the progress file: the next run retries only the failed items
        else:
            keys = [unit_key(*unit) for unit in self.units]
            final = [records.get(key) or _response(self.done[key]) for key in keys]
            summary.weights_commits = tuple(sorted({r.weights_commit for r in final if r.weights_commit}))
            summary.answered_by = tuple(sorted({r.answered_by for r in final if r.answered_by}))
            self.log.finish(final)
        return summary


def run_inference(
    instances: list[Instance],
    frames_dir: str | Path,
    model: str,
    model_config: dict[str, Any] | ModelSpec,
    prompt_name: str,
    level: int,
    output: str | Path,
    backend: Backend | None = None,
    store: str | Path | None = None,
    context_scope: str = "per-video",
) -> Summary:
    """One job in-process (the tests, a notebook): `model_config` a resolved spec, or a registry entry whose every
    key is taken to change the answers."""
    spec = model_config if isinstance(model_config, ModelSpec) else ModelSpec.from_job(model, model_config, {})
    return InferenceJob(instances, frames_dir, spec, get_prompt(prompt_name, context_scope), level, output, store).run(backend)


def bad_frame(error: BaseException | None) -> BadFrame | None:
    """The frames.BadFrame `error` is or wraps (a backend may raise its own error from it), else None."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, BadFrame):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def damaged_frames_line(error: BadFrame, frames_dir: str | Path, level: int) -> str:
    """One line for a damaged frame: the file (or level folder) and its problem, then what was done or is to be done.
    A level folder the workflow made (frames.remove_damaged_level) is removed, so that the next run extracts it again;
    for any other folder the line names exactly what to remove."""
    frames_dir = Path(frames_dir)
    try:
        video_id = error.path.relative_to(frames_dir).parts[0]
    except (ValueError, IndexError):  # not under the frames folder (a backend's own copy): name the file alone
        return f"{error}; extract the frames of its video again, then rerun the same command"
    video_folder = frames_dir / video_id
    removed = remove_damaged_level(video_folder, level)
    if removed is not None:
        return f"{error}; removed {removed}, so that the next run of the workflow extracts it again: rerun the same command"
    own = video_folder / str(level)
    what = own if (own / MANIFEST).is_file() else video_folder
    return f"{error}; remove {what} and extract its frames again (a run of the workflow does), then rerun the same command"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.inference", description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", required=True)
    parser.add_argument("--frames-dir", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--model-config", required=True, help="the model's settings that change its answers (JSON; tracked)")
    parser.add_argument("--model-run-config", default="{}", help="the model's settings that change only how the job runs (JSON; untracked)")
    parser.add_argument("--prompt", required=True)
    parser.add_argument(
        "--context-scope",
        choices=CONTEXT_SCOPES,
        default="per-video",
        help="a two-step prompt's context step: once per video (default), or afresh for each question (config.dscp_context)",
    )
    parser.add_argument("--level", type=int, required=True)
    parser.add_argument("--store", help="the answer store's folder: stored answers are not asked again, new ones are kept")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    try:
        tracked, run = json.loads(args.model_config), json.loads(args.model_run_config)
    except json.JSONDecodeError as error:
        parser.error(f"--model-config or --model-run-config is not valid JSON: {error}")
    spec = ModelSpec.from_job(args.model, tracked, run)
    return run_stoppable(lambda stop: _run(args, spec, stop))


def finished_items(partial: Path) -> int:
    """How many items have a finished record in a progress file (a failed request is not finished)."""
    finished: set[str] = set()
    try:
        with partial.open(encoding="utf-8") as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(record, dict) and not str(record.get("instance_id", CONTEXT_PREFIX)).startswith(CONTEXT_PREFIX):
                    if _is_done(record):
                        finished.add(item_key(record))
    except FileNotFoundError:
        pass
    return len(finished)


def _run(args: argparse.Namespace, spec: ModelSpec, stop: Stop) -> int:
    out = Path(args.out)
    partial = out.with_name(out.name + ".partial")
    job: InferenceJob | None = None

    def kept() -> str:
        if not partial.exists():
            return f"nothing was written to {out}; rerun the same command"
        of = f" of {len(job.units)}" if job is not None else ""
        return f"{finished_items(partial)}{of} finished items are kept in {partial}; rerun the same command to go on"

    stop.note = kept
    try:
        prompt = get_prompt(args.prompt, args.context_scope)
        job = InferenceJob(read_instances(args.instances), args.frames_dir, spec, prompt, args.level, args.out, args.store)
        summary = job.run()
    except IncompleteFrames as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except Exception as error:
        damaged = bad_frame(error)
        if damaged is not None:  # a frame file that cannot be read: no retry of the item helps
            print(f"error: {damaged_frames_line(damaged, args.frames_dir, args.level)} ({kept()})", file=sys.stderr)
            return 1
        if isinstance(error, ValueError):  # a backend that cannot start (missing key, bad settings), a bad instances table
            print(f"error: {args.model}: {error}", file=sys.stderr)
            return 1
        fault = environment_fault(error)
        if fault is None:
            raise
        where = fault.filename if fault.filename is not None else out
        print(f"error: {describe(error, where, 'using' if fault.filename is not None else 'writing')} ({kept()})", file=sys.stderr)
        return 1
    label = f"{args.model}/{args.prompt}/{args.level}"
    print(summary.line(label), file=sys.stderr)
    if job.store is not None and (damaged := job.store.damaged_line()):
        print(f"warning: {damaged}", file=sys.stderr)
    if len(summary.weights_commits) > 1:
        print(f"warning: {args.out} holds answers from {len(summary.weights_commits)} different weights commits", file=sys.stderr)
    if len(summary.answered_by) > 1 and not summary.weights_commits:
        print(
            f"warning: {args.out} holds answers from {len(summary.answered_by)} different models as the endpoint named them "
            f"({', '.join(summary.answered_by)}): an alias moved while it was asked",
            file=sys.stderr,
        )
    if summary.truncated:
        print(
            f"warning: {summary.truncated} replies were cut off (token limit or an unclosed thinking block); they are judged "
            f"as no answer (raise the model's max_new_tokens to avoid it)",
            file=sys.stderr,
        )
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
