"""What a run will cost before it starts (`make plan`, and a short form printed before a real run's first job): per
model and level, for the inference runs still due, the items and requests, the input tokens and their price for API
models, the GPU-hours, and the frames to extract with their disk size.

What is due is decided as the workflow decides it: a responses file that is there, current (`virtuebench.verify`'s
check finds nothing stale) and made with the model's settings now is done; otherwise each item whose answer the
answer store holds (virtuebench.inference.InferenceJob, read-only here) is done, and the rest is asked. Where the
frames are not extracted yet the store cannot be asked (its keys hold the frames' digest): every item counts as due.
Where there is no instances table yet, the items are those the source's settings plan where they tell them (the
synthetic demo's: Plan.preview), else VirtueBench's counts are the paper's published ones (curation/stats.py), as
bounds where the paper gives only the total, and another benchmark's items are not known: the output says which.

Tokens follow each family's published sizing (virtuebench.models.tokens); GPU-hours come from the response records'
measured `latency_s` where some exist for the model and level, else from the registry's `runtime_min` per job; a
frame's disk size is measured from the frames already extracted, else estimated by encoding a sample photograph at
the configured size and JPEG quality. Every figure is labelled with where it came from.

CLI: python -m virtuebench.estimate [--configfile FILE ...] [--results DIR]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from virtuebench.check import DEFAULT_CONFIG, load_plan
from virtuebench.config import ConfigError
from virtuebench.curation.stats import PAPER_COUNTS
from virtuebench.frames import MANIFEST, fit_pixels, plan_frames
from virtuebench.inference import IncompleteFrames, InferenceJob, fingerprint, items_for_level, sample_numbers
from virtuebench.instances import Instance, InstancesError, read_instances
from virtuebench.models.spec import ModelSpec
from virtuebench.models.timing import clock_text
from virtuebench.models.tokens import image_rule, text_tokens
from virtuebench.plan import Plan, levels_present
from virtuebench.prompts import Prompt, get_prompt
from virtuebench.records import RecordError
from virtuebench.sources import sampling_of
from virtuebench.support.stops import run_stoppable
from virtuebench.verify import REPORT_FILES, Remembered, check_configuration, remembered_path

#: The frame size assumed where no frame is extracted yet: 16:9, the usual video aspect (then fitted to the caps).
ASSUMED_SOURCE_SIZE = (1920, 1080)


@dataclass
class Row:
    """One model at one level, its prompts together."""

    model: str
    level: int
    prompts: int = 0
    items: int = 0  # due items (an item due under two prompts counts twice)
    requests: int = 0
    image_tokens: int | None = None  # API models only
    text_tokens: int | None = None
    input_cost: float | None = None  # USD, where the registry gives a price
    output_cost_max: float | None = None  # USD, every request using its whole completion limit
    gpu_hours: float | None = None  # GPU models only
    gpu_basis: str = ""
    due_jobs: int = 0
    unchecked: int = 0  # of `items`, those due because their frames are not there to ask the answer store with


@dataclass
class FramesLevel:
    level: int
    videos_due: int = 0
    frames_due: int = 0
    bytes_due: float = 0.0
    videos_done: int = 0
    bytes_done: int = 0


@dataclass
class Estimate:
    rows: list[Row] = field(default_factory=list)
    frames: list[FramesLevel] = field(default_factory=list)
    frame_bytes: float | None = None  # bytes per frame used for what is not extracted
    frame_bytes_basis: str = ""
    counts_basis: str = ""  # where the item counts come from
    bound: bool = False  # the counts are upper bounds (the paper gives only the total at some levels)
    notes: list[str] = field(default_factory=list)

    def totals(self) -> dict[str, Row]:
        """Each model's rows summed (levels together)."""
        out: dict[str, Row] = {}
        for row in self.rows:
            total = out.setdefault(row.model, Row(row.model, 0))
            total.prompts = max(total.prompts, row.prompts)
            total.items += row.items
            total.requests += row.requests
            total.due_jobs += row.due_jobs
            total.unchecked += row.unchecked
            for name in ("image_tokens", "text_tokens", "input_cost", "output_cost_max", "gpu_hours"):
                value = getattr(row, name)
                if value is not None:
                    setattr(total, name, (getattr(total, name) or 0) + value)
            if row.gpu_basis and total.gpu_basis and row.gpu_basis != total.gpu_basis:  # levels measured, or on both bases
                both = {basis.split()[0] for basis in (row.gpu_basis, total.gpu_basis)} != {"measured"}
                total.gpu_basis = "measured where records exist, else runtime_min" if both else "measured"
            elif row.gpu_basis:
                total.gpu_basis = total.gpu_basis or row.gpu_basis
        return out


# ---------------------------------------------------------------------------------------------
# Item counts without an instances table: the paper's


def paper_count(measure: str) -> int:
    """The paper's count of its annotated instances or videos, every level together."""
    return next(c.figure for c in PAPER_COUNTS if (c.stage, c.level, c.measure) == ("annotated", "all", measure))


def paper_level_counts(levels: Iterable[int]) -> dict[int, tuple[int, bool]]:
    """{level: (items, exact)} from VirtueBench's published counts: a level the paper counts (512, 1024) exactly, any
    other at most the paper's total of instances (exact False)."""
    total = paper_count("instances")
    by_level = {int(c.level): c.figure for c in PAPER_COUNTS if c.stage == "annotated" and c.measure == "instances" and c.level.isdigit()}
    return {level: (by_level[level], True) if level in by_level else (total, False) for level in levels}


# ---------------------------------------------------------------------------------------------
# What is due


def _responses_current(path: Path, stale: set[str], key: str) -> bool:
    """A responses file there, not stale, whose records were made with the job's settings now (`key`, the
    inference fingerprint, as its resume compares it)."""
    if not path.is_file() or str(path) in stale:
        return False
    try:
        with path.open(encoding="utf-8") as handle:
            first = handle.readline()
        return bool(first) and json.loads(first).get("fingerprint") == key
    except (OSError, ValueError, AttributeError):
        return False


def frames_extracted(plan: Plan, instances: list[Instance], level: int) -> bool:
    """Whether every video with an item at `level` has its frames of the level (a manifest in its level folder, or
    in its own folder, the older layout): where one is missing, its frames job runs and every inference job of the
    level after it (Snakemake's inputs by date), whatever the responses files hold."""
    frames = Path(plan.res("frames"))
    videos = {inst.video_id for inst in items_for_level(instances, level)}
    return all((frames / video / str(level) / MANIFEST).is_file() or (frames / video / MANIFEST).is_file() for video in videos)


def _due_units(plan: Plan, instances: list[Instance], spec: ModelSpec, prompt: Prompt, level: int, stale: set[str], extracted: bool):
    """(the due (item, sample) units, the job where the level's frames are there, else None). `extracted`:
    frames_extracted of the level. Without the frames the answer store cannot be asked (its keys hold their digest):
    every unit is due, an upper bound."""
    items = items_for_level(instances, level)
    units = [(inst, sample) for inst in items for sample in sample_numbers(spec)]
    if not extracted:
        return units, None
    path = Path(plan.res(f"responses/{spec.name}/{prompt.id}/{level}.jsonl"))
    if _responses_current(path, stale, fingerprint(spec.name, spec.answers, prompt.hash, level)):
        return [], None
    with tempfile.TemporaryDirectory() as scratch:  # the job's progress file is not touched: nothing is written
        try:
            job = InferenceJob(instances, plan.res("frames"), spec, prompt, level, Path(scratch) / "estimate.jsonl", plan.store)
        except IncompleteFrames:  # a manifest there but incomplete: its frames job runs again
            return units, None
    return job.pending, job


# ---------------------------------------------------------------------------------------------
# Tokens, GPU-hours, frames


def _frame_size(job: InferenceJob | None, video_id: str, frame_pixels: int | None) -> tuple[int, int]:
    """(width, height) of the video's stored frames: its manifest's where extracted, else the assumed 16:9 frame
    fitted to the stored frames' cap."""
    manifest = job.manifests.get(video_id) if job is not None else None
    if manifest is not None and manifest.frame_size:
        width, height = manifest.frame_size
        return int(width), int(height)
    return fit_pixels(*ASSUMED_SOURCE_SIZE, frame_pixels)


def _timestamps(plan: Plan, level: int, duration_s: float | None, job: InferenceJob | None, video_id: str | None) -> list[float]:
    """The level's frame times: the manifest's where extracted, else as the source samples them (a video of exactly
    `level` seconds where its length is not known: the shortest that has the level)."""
    manifest = job.manifests.get(video_id) if job is not None and video_id else None
    if manifest is not None and str(level) in manifest.levels:
        return list(manifest.levels[str(level)].timestamps)
    return _planned_times(plan, level, float(duration_s) if duration_s else float(level))


def _planned_times(plan: Plan, level: int, duration_s: float) -> list[float]:
    """The frame times the frames stage will extract at `level` for a video of `duration_s` (frames.plan_frames)."""
    return plan_frames([level], duration_s, sampling_of(plan.config["source"]["name"])).levels[level].timestamps


def request_tokens(spec: ModelSpec, width: int, height: int, timestamps: Sequence[float], text: str) -> tuple[int, int] | None:
    """(image tokens, text tokens) of one request of an API model: each frame fitted to the backend's max_pixels and
    counted by the family's rule, then the prompt and each frame's time label; None where no rule is known."""
    settings = spec.settings
    rule = image_rule(spec.family, str(settings.get("model", "")))
    if rule is None:
        return None
    size = fit_pixels(width, height, settings.get("max_pixels"))
    images = len(timestamps) * rule.image_tokens(*size, settings.get("detail"))
    labels = ""
    if settings.get("timestamps"):
        label = settings.get("timestamp_format", "Frame at {clock}")
        labels = "".join(label.format(clock=clock_text(t), seconds=t) for t in timestamps)
    return images, text_tokens(text) + (text_tokens(labels) if labels else 0)


def _measured_latency(plan: Plan, model: str, level: int) -> tuple[float, int] | None:
    """(mean latency_s, records) of the model's answered records at `level`, every prompt's responses file (and an
    interrupted job's progress file) together; None where there are none."""
    total, count = 0.0, 0
    folder = Path(plan.res(f"responses/{model}"))
    for path in [*folder.glob(f"*/{level}.jsonl"), *folder.glob(f"*/{level}.jsonl.partial")]:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("error") is None and isinstance(record.get("latency_s"), int | float):
                total, count = total + float(record["latency_s"]), count + 1
    return (total / count, count) if count else None


def _folder_bytes(folder: Path) -> tuple[int, int]:
    """(bytes, JPEG files) of a level folder."""
    size = files = 0
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.endswith(".jpg") and entry.is_file():
                size, files = size + entry.stat().st_size, files + 1
    return size, files


def sample_frame_bytes(width: int, height: int, quality: int) -> int:
    """The bytes of one frame of `width` x `height` at JPEG `quality`, estimated by encoding a photograph (matplotlib's
    sample grace_hopper.jpg, cropped to the frame's aspect and resized to its size) as frames.py encodes frames."""
    from matplotlib import cbook
    from PIL import Image

    with Image.open(cbook.get_sample_data("grace_hopper.jpg", asfileobj=False)) as photo:
        photo = photo.convert("RGB")
        aspect = width / height
        crop_w, crop_h = (
            (photo.width, round(photo.width / aspect))
            if photo.width / photo.height < aspect
            else (round(photo.height * aspect), photo.height)
        )
        left, top = (photo.width - crop_w) // 2, (photo.height - crop_h) // 2
        frame = photo.crop((left, top, left + crop_w, top + crop_h)).resize((width, height), Image.Resampling.BICUBIC)
    buffer = io.BytesIO()
    frame.save(buffer, format="JPEG", quality=quality)
    return buffer.tell()


def _frames(plan: Plan, instances: list[Instance] | None, counts: dict[int, tuple[int, bool]], estimate: Estimate) -> None:
    """The frames each configured level still needs, and what is on disk: estimate.frames and the bytes per frame."""
    frames_dir = Path(plan.res("frames"))
    levels = list(plan.config["levels"])
    measured_bytes = measured_files = 0
    for level in levels:
        entry = FramesLevel(level)
        if instances is None:  # at most one video per item, and at most the paper's videos
            entry.videos_due = min(counts.get(level, (0, True))[0], paper_count("videos"))
            entry.frames_due = entry.videos_due * level
        else:
            videos = {inst.video_id: inst.duration_s for inst in instances if level in inst.answers}
            for video_id, duration in sorted(videos.items()):
                folder = frames_dir / video_id / str(level)
                if (folder / MANIFEST).is_file():
                    size, files = _folder_bytes(folder)
                    entry.videos_done, entry.bytes_done = entry.videos_done + 1, entry.bytes_done + size
                    measured_bytes, measured_files = measured_bytes + size, measured_files + files
                else:
                    entry.videos_due += 1
                    entry.frames_due += len(_planned_times(plan, level, duration))
        estimate.frames.append(entry)
    quality = int(plan.config["frames"]["jpeg_quality"])
    if measured_files:
        estimate.frame_bytes = measured_bytes / measured_files
        estimate.frame_bytes_basis = f"measured: the mean of the {measured_files:,} frames extracted in {frames_dir}"
    else:
        width, height = fit_pixels(*ASSUMED_SOURCE_SIZE, plan.checked.frame_pixels)
        estimate.frame_bytes = float(sample_frame_bytes(width, height, quality))
        estimate.frame_bytes_basis = (
            f"estimated: no frame extracted yet; a sample photograph encoded at {width}x{height} (16:9 within "
            f"frames.max_pixels {plan.checked.frame_pixels or 'none'}), JPEG quality {quality}"
        )
    for entry in estimate.frames:
        entry.bytes_due = entry.frames_due * estimate.frame_bytes


# ---------------------------------------------------------------------------------------------
# The estimate


def estimate(plan: Plan) -> Estimate:
    """The cost of what `plan`'s run still has to do (see the module's docstring)."""
    out = Estimate()
    table = Path(plan.res("instances.parquet"))
    instances = read_instances(table) if table.exists() else None
    counts: dict[int, tuple[int, bool]] = {}
    stale: set[str] = set()
    planned = _planned(plan) if instances is None else None
    if planned:  # the source's settings tell its items (the synthetic demo's): counted as its table will hold them
        instances, present = planned, levels_present(planned)
        out.counts_basis = f"no instances table yet ({table}): the {len(planned):,} items the source's settings plan"
    elif instances is not None:
        present = levels_present(instances)
        out.counts_basis = f"the instances table {table}"
        report_outputs = [plan.res(name) for name in REPORT_FILES]
        # the checks the start-up sweep remembers, read and never written: only what changed since is read again
        remembered = Remembered(remembered_path(plan.results))
        stale = set(check_configuration(plan, report_outputs, remembered, instances=instances).stale)
    elif plan.config["benchmark"] == "virtuebench" and plan.curated:
        counts = paper_level_counts(plan.config["levels"])
        present = set(counts)
        out.bound = not all(exact for _, exact in counts.values())
        exact = ", ".join(f"{level}: {n:,}" for level, (n, ok) in counts.items() if ok)
        bounded = ", ".join(str(level) for level, (_, ok) in counts.items() if not ok)
        out.counts_basis = (
            f"no instances table yet ({table}): VirtueBench's published counts (VirtueBench (arXiv:2603.07071), section 3.3)"
            + (f", level {exact} items" if exact else "")
            + (f"; levels {bounded}: at most its 1,328 instances (per-level counts not published)" if bounded else "")
        )
    else:
        out.counts_basis = f"no instances table yet ({table}): the items are known once the workflow has made it"
        out.notes.append(f"no items counted: make the instances table first (`snakemake {table}`), then ask again")
        return out
    extracted = {level: frames_extracted(plan, instances, level) for level in present} if instances is not None else {}
    for model in plan.config["models"]:
        spec = plan.checked.specs[model]
        entry = plan.model_entry(model)
        for level in plan.model_levels(model, present):
            row = Row(model, level)
            for prompt_id in plan.config["prompts"]:
                prompt = get_prompt(prompt_id, plan.config.get("dscp_context", "per-video"))
                row.prompts += 1
                if instances is None:
                    n = counts[level][0] * len(sample_numbers(spec))
                    _add_requests(plan, row, spec, prompt, level, [(None, None)] * n, None, entry)
                    continue
                pending, job = _due_units(plan, instances, spec, prompt, level, stale, extracted[level])
                row.unchecked += len(pending) if job is None else 0
                _add_requests(plan, row, spec, prompt, level, pending, job, entry)
            _add_gpu_hours(plan, row, spec, entry)
            out.rows.append(row)
    _frames(plan, instances, counts, out)
    return out


def _planned(plan: Plan) -> list[Instance] | None:
    """The items the source's settings plan before its table is made (Plan.preview: the synthetic demo's), else None;
    also None where the settings give no table (the run itself names why)."""
    try:
        return plan.preview()
    except ValueError:
        return None


def _add_requests(plan: Plan, row: Row, spec: ModelSpec, prompt: Prompt, level: int, pending, job, entry: dict[str, Any]) -> None:
    """Count `pending` (item, sample) units of one prompt into `row`: items, requests, and an API model's tokens and
    price. A two-step prompt's context step is a request of its own, once per video and sample (once per item where
    the videos are not known, or where it is asked per question: config.dscp_context), with the video's frames and the
    step's text; its answer's length, which the second step carries, is not known before it is made and not counted."""
    if not pending:
        return
    known = pending[0][0] is not None
    per_video = known and not prompt.context_per_question
    contexts = (len({(inst.video_id, sample) for inst, sample in pending}) if per_video else len(pending)) if prompt.context_template else 0
    row.due_jobs += 1
    row.items += len(pending)
    row.requests += len(pending) + contexts
    if spec.backend != "openai":
        return
    frame_pixels = plan.checked.frame_pixels
    by_video: dict[str | None, tuple[int, int] | None] = {}  # (image, label) tokens of a request with the video's frames
    images = texts = 0
    for inst, _ in pending:
        video_id = inst.video_id if inst else None
        if video_id not in by_video:
            size = _frame_size(job, video_id or "", frame_pixels)
            times = _timestamps(plan, level, inst.duration_s if inst else None, job, video_id)
            by_video[video_id] = request_tokens(spec, *size, times, "")
        counted = by_video[video_id]
        if counted is None:  # no image rule for this model: no token count, rather than a wrong one
            return
        question = prompt.render(inst.question if inst else "", context="" if prompt.context_template else None)
        images, texts = images + counted[0], texts + counted[1] + text_tokens(question)
    if prompt.context_template:  # each context request: its video's frames and labels, and the step's text
        step = text_tokens(prompt.context_template)
        if per_video:
            videos = [video_id for video_id, _ in {(inst.video_id, sample) for inst, sample in pending}]
        else:
            videos = [inst.video_id if inst else None for inst, _ in pending]
        for video_id in videos:
            video_images, video_labels = by_video[video_id]  # type: ignore[misc]  # counted above: not None
            images, texts = images + video_images, texts + video_labels + step
    row.image_tokens = (row.image_tokens or 0) + images
    row.text_tokens = (row.text_tokens or 0) + texts
    price = entry.get("price")
    if price:
        row.input_cost = (row.input_cost or 0.0) + (images + texts) * price["input_per_million"] / 1e6
        limit = spec.settings.get("max_tokens") or spec.settings.get("max_completion_tokens")
        if limit:
            row.output_cost_max = (row.output_cost_max or 0.0) + (len(pending) + contexts) * limit * price["output_per_million"] / 1e6


def _add_gpu_hours(plan: Plan, row: Row, spec: ModelSpec, entry: dict[str, Any]) -> None:
    gpus = entry.get("gpus", 0)
    if not gpus:
        return
    measured = _measured_latency(plan, spec.name, row.level)
    if measured is not None:
        mean, count = measured
        row.gpu_hours = row.items * mean * gpus / 3600
        row.gpu_basis = f"measured: {count} records, {mean:.1f} s an item, loading not included"
    else:
        row.gpu_hours = row.due_jobs * plan.runtime(spec.name) * gpus / 60
        row.gpu_basis = f"runtime_min: {plan.runtime(spec.name)} min a job, its time limit"


# ---------------------------------------------------------------------------------------------
# Text


def _n(value: float | None, bound: bool, unit: str = "") -> str:
    if value is None:
        return "-"
    text = f"{value:,.0f}" if unit != "$" else f"${value:,.2f}"
    return ("≤" if bound else "") + text


def _size(n_bytes: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n_bytes < 1000 or unit == "TB":
            return f"{n_bytes:,.1f} {unit}" if unit != "B" else f"{n_bytes:,.0f} B"
        n_bytes /= 1000
    raise AssertionError("unreachable")


def _tokens(row: Row, bound: bool) -> str:
    if row.image_tokens is None:
        return "-"
    return f"{_n(row.image_tokens + (row.text_tokens or 0), bound)} ({row.image_tokens:,} images + ~{row.text_tokens or 0:,} text)"


def _cost(row: Row, bound: bool) -> str:
    if row.input_cost is None:
        return "-"
    output = f" + output ≤${row.output_cost_max:,.2f}" if row.output_cost_max is not None else ""
    return f"{_n(row.input_cost, bound, '$')} input{output}"


def _gpu(row: Row, bound: bool) -> str:
    return "-" if row.gpu_hours is None else f"{'≤' if bound else ''}{row.gpu_hours:,.1f} ({row.gpu_basis})"


def _table(rows: list[Row], bound: bool, with_level: bool) -> list[str]:
    header = ["model", *(["level"] if with_level else []), "items", "requests", "input tokens", "cost (USD)", "GPU-hours"]
    body = [
        [
            row.model,
            *([str(row.level)] if with_level else []),
            _n(row.items, bound),
            _n(row.requests, bound),
            _tokens(row, bound),
            _cost(row, bound),
            _gpu(row, bound),
        ]
        for row in rows
    ]
    widths = [max(len(cells[i]) for cells in [header, *body]) for i in range(len(header))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip() for cells in [header, *body]]


def _judge_line(plan: Plan, rows: list[Row], bound: bool) -> str | None:
    settings = plan.judge_settings(plan.judge)
    if settings.get("kind") != "llm":
        return None
    verdicts = sum(row.items for row in rows)
    return (
        f"Judge {plan.judge} ({settings.get('model')}): {_n(verdicts, bound)} new responses to judge, one request each "
        "unless the verdict store holds it; its tokens depend on the responses, not estimated here"
    )


def render(est: Estimate, plan: Plan, short: bool = False) -> list[str]:
    """The estimate as text: `short`, one line per model with work due and the frames (before a run); else the table
    per model and level, the totals per model, the frames per level and how each figure was made."""
    lines = [f"Items: {est.counts_basis}"]
    due = [row for row in est.rows if row.items]
    totals = [total for total in est.totals().values() if total.items]
    if not short and due:
        lines += ["", "Due per model and level (the configured prompts together):", *_table(due, est.bound, True)]
        lines += ["", "Per model:"]
    if totals:
        lines += _table(totals, est.bound, False)
    elif est.rows:
        lines.append("Nothing to ask: every run is answered.")
    all_rows = Row("all", 0)
    for total in totals:
        for name in ("input_cost", "output_cost_max", "gpu_hours"):
            value = getattr(total, name)
            if value is not None:
                setattr(all_rows, name, (getattr(all_rows, name) or 0) + value)
    if totals:
        unpriced = [t.model for t in totals if t.image_tokens is not None and t.input_cost is None]
        priced = f"API input {_n(all_rows.input_cost, est.bound, '$')}" if all_rows.input_cost is not None else "no API price"
        if all_rows.output_cost_max is not None:
            priced += f" + output at most ${all_rows.output_cost_max:,.2f}"
        lines.append(
            f"Altogether: {_n(sum(t.requests for t in totals), est.bound)} requests, "
            f"{_n(all_rows.gpu_hours or 0, est.bound)} GPU-hours, {priced}"
            + (f" (no price in the registry for {', '.join(unpriced)})" if unpriced else "")
        )
    frames_due = [entry for entry in est.frames if entry.frames_due]
    if frames_due:
        per_level = ", ".join(
            f"{entry.level}: {_n(entry.videos_due, est.bound)} videos, {_n(entry.frames_due, est.bound)} frames, "
            f"{'≤' if est.bound else ''}{_size(entry.bytes_due)}"
            for entry in frames_due
        )
        lines.append(f"Frames to extract: {per_level}")
    done = sum(entry.bytes_done for entry in est.frames)
    if done and not short:
        lines.append(f"Frames on disk now: {_size(done)} in {sum(entry.videos_done for entry in est.frames)} level folders")
    unchecked = sum(row.unchecked for row in est.rows)
    if unchecked:
        lines.append(
            f"Of the items, {unchecked:,} are counted due because their frames are not extracted yet: the answer store "
            "is asked for them once they are (an upper bound)"
        )
    judge = _judge_line(plan, due, est.bound)
    if judge:
        lines.append(judge)
    if not short:
        lines += [
            "",
            "How: items and requests per due (item, sample) and prompt, a two-step prompt's context step once per video (per item with dscp_context: per-question); "
            "a run's answers the answer store holds are not due (counted only where the frames are extracted: its keys "
            "hold their digest).",
            "Input tokens: each family's image rule (virtuebench.models.tokens) on the frame size, the frames' manifests "
            f"where extracted, else {ASSUMED_SOURCE_SIZE[0]}x{ASSUMED_SOURCE_SIZE[1]} (16:9) within the caps; text "
            "estimated at 4 characters a token (the question's text is not counted where there is no instances table). "
            "Cost: the registry's `price` (USD per 1M tokens); output at most each request's completion limit.",
            f"Frames: bytes per frame {_size(est.frame_bytes or 0)}, {est.frame_bytes_basis}.",
            *est.notes,
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.estimate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--configfile", nargs="+", help=f"the configuration file(s) the workflow runs on (default: {DEFAULT_CONFIG})")
    parser.add_argument("--results", default=None, help="the results folder (default: the configuration's)")
    args = parser.parse_args(argv)
    configfiles = args.configfile or [DEFAULT_CONFIG]
    try:
        plan = load_plan(configfiles, args.results)
    except ConfigError as error:
        print(f"virtuebench.estimate: {error}", file=sys.stderr)
        return 2
    try:
        lines = render(estimate(plan), plan)
    except (InstancesError, RecordError) as error:  # a broken instances table or record file: one line naming it
        print(f"virtuebench.estimate: {error}", file=sys.stderr)
        return 2
    print("\n".join([f"virtuebench plan: {' + '.join(configfiles)}, results in {plan.results}", *lines]))
    return 0


def summary(plan: Plan) -> list[str]:
    """The short estimate the Snakefile prints before a real run's first job; one warning line where it cannot be made
    (the run goes on)."""
    try:
        return [
            "virtuebench: before the run, what it will ask (`make plan` for the whole table):",
            *render(estimate(plan), plan, short=True),
        ]
    except Exception as error:  # an estimate is never a reason to stop a run
        return [f"virtuebench WARNING: no cost estimate ({type(error).__name__}: {error})"]


if __name__ == "__main__":
    sys.exit(run_stoppable(lambda stop: main()))
