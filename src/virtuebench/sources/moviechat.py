"""MovieChat-1K source adapter: the test release (Enxin/MovieChat-1K-test) into candidate instances, one
of VirtueBench's six long-video sources; its global questions are kept, its breakpoint questions left
out by default. Layout read, choices, and what was confirmed: docs/sources.md#moviechat-1k.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from virtuebench.instances import Instance
from virtuebench.sources.base import Conversion, Excluded, HubRelease

SOURCE = "moviechat-1k"

#: The tree of the hub's main branch at the commit that added the ground truth ("Upload 170 files",
#: gt/gt), the newest commit seen.
RELEASE = HubRelease(
    repo_id="Enxin/MovieChat-1K-test",
    revision="beab351b12474f795e22f94beb82290da8389050",
    allow_patterns=("annotations/*.json", "gt/gt/*.json", "videos/*"),
)

GT_DIR = Path("gt") / "gt"
ANNOTATIONS_DIR = Path("annotations")
VIDEOS_DIR = Path("videos")
#: Top-level keys that are not question lists (any other list of questions is a task type).
METADATA_KEYS = ("caption", "info")
#: The alternative extensions lmms-eval's MovieChat task also tries when `info.video_path` is missing.
VIDEO_SUFFIXES = (".mp4", ".MP4", ".mkv")

#: The paper does not publish its mapping. Principle: recognizing, reading or counting what is visible
#: is perception; causal, temporal, plot or relational inference is reasoning. MovieChat has no finer
#: task type than its two modes, and both are mostly "what / where / how many / is there" questions
#: about what is shown, so both are perception.
TASK_CATEGORIES = {"global": "perception", "breakpoint": "perception"}


def prepare(raw_dir: str | Path) -> Path:
    """Nothing to unpack: the release ships plain JSON files and single videos."""
    return Path(raw_dir)


def _text(value: Any) -> str | None:
    """A question or answer as text; numbers are accepted (an answer may be a bare count)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def _video_file(raw_dir: Path, info: Any, stem: str) -> Path:
    name = info.get("video_path") if isinstance(info, dict) else None
    path = raw_dir / VIDEOS_DIR / (name if isinstance(name, str) and name.strip() else f"{stem}.mp4")
    if not path.exists():
        for suffix in VIDEO_SUFFIXES:
            if (candidate := path.with_suffix(suffix)).exists():
                return candidate
    return path


def _moment(entry: dict[str, Any], info: Any) -> tuple[float, str | None]:
    """A breakpoint's time in seconds, or the reason it has none."""
    time, fps = entry.get("time"), info.get("fps") if isinstance(info, dict) else None
    if isinstance(time, bool) or not isinstance(time, (int, float)) or time < 0:
        return 0.0, f"bad row: breakpoint 'time' {time!r} is not a frame index"
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or fps <= 0:
        return 0.0, f"bad row: info 'fps' {fps!r} is not a positive number"
    return time / fps, None


def at_the_end(seconds: float, duration_s: float, fps: float) -> float | None:
    """Where a breakpoint's moment starts in a video of `duration_s`: as given inside the video; None past its end.

    A breakpoint whose `time` is the frame count (`time == num_frame`, 10,500 of 10,500 frames at 25 fps: 316 in the
    release, by issue 50's count) names the video's end, one frame past the last frame index: it is read as the video's
    last second, [duration - 1, duration). Anything more than one frame past the end is past it (docs/sources.md)."""
    if seconds < duration_s:
        return seconds
    if seconds <= duration_s + 1.0 / fps + 1e-6:
        return max(0.0, duration_s - 1.0)
    return None


def _convert_file(conversion: Conversion, raw_dir: Path, path: Path, include_breakpoint: bool) -> None:
    stem = path.stem
    data = conversion.read_json(stem, path, "ground-truth file", dict, "an object with 'info' and question lists")
    if data is None:
        return
    info = data.get("info")
    video = _video_file(raw_dir, info, stem)
    for task_type, entries in data.items():
        if task_type in METADATA_KEYS:
            continue
        is_questions = isinstance(entries, list) and any(isinstance(e, dict) and "question" in e for e in entries)
        if task_type not in TASK_CATEGORIES and not is_questions:
            continue  # metadata, not a list of questions
        if not isinstance(entries, list):
            conversion.exclude(
                f"{stem}/{task_type}", f"bad row in {path}: '{task_type}' is not a list", kind="bad_row", unit="question list"
            )
            continue
        if task_type == "breakpoint" and not include_breakpoint:
            if entries:
                conversion.exclude(
                    f"{stem}/breakpoint",
                    f"{len(entries)} breakpoint question(s) left out: each asks "
                    "about one moment ('time') that its text does not name; only whole-video "
                    "(global) questions are kept",
                    kind="out_of_scope",
                    unit="question list",
                )
            continue
        for index, entry in enumerate(entries):
            source_id = f"{stem}/{task_type}/{index}"
            question = _text(entry.get("question")) if isinstance(entry, dict) else None
            answer = _text(entry.get("answer")) if isinstance(entry, dict) else None
            if question is None or answer is None:
                conversion.exclude(source_id, f"bad row in {path}: needs a text 'question' and 'answer'", kind="bad_row")
                continue
            evidence: list[tuple[float, float]] = []
            if task_type == "breakpoint":
                seconds, problem = _moment(entry, info)
                if problem:
                    conversion.exclude(source_id, problem, kind="bad_row")
                    continue
                evidence = [(seconds, seconds + 1.0)]
            if not conversion.add(source_id, video, task_type, question, answer, evidence=evidence):
                continue
            added = conversion.instances[-1]
            if evidence:
                moment = at_the_end(evidence[0][0], added.duration_s, info["fps"])
                if moment is None:
                    conversion.instances.pop()
                    conversion.exclude(
                        source_id,
                        f"breakpoint at {evidence[0][0]:.1f} s is past the end of {video} ({added.duration_s:.1f} s)",
                        kind="bad_row",
                    )
                else:
                    conversion.instances[-1] = replace(added, evidence=[[moment, min(moment + 1.0, added.duration_s)]])


def convert(
    raw_dir: str | Path, videos_dir: str | Path, levels: Iterable[int], *, include_breakpoint: bool = False, sampling: str = "1fps"
) -> tuple[list[Instance], Excluded]:
    """Candidate instances from the global questions (and the breakpoint ones when asked), and the report."""
    raw_dir = Path(raw_dir)
    gt_files = sorted((raw_dir / GT_DIR).glob("*.json"))
    if not gt_files:
        raise ValueError(
            f"{SOURCE}: no ground-truth files {raw_dir / GT_DIR}/*.json (download {RELEASE.repo_id} "
            f"at {RELEASE.revision}, which ships the answers there)"
        )
    conversion = Conversion(SOURCE, videos_dir, levels, TASK_CATEGORIES, sampling=sampling)
    for path in gt_files:
        _convert_file(conversion, raw_dir, path, include_breakpoint)
    answered = {path.stem for path in gt_files}
    for path in sorted((raw_dir / ANNOTATIONS_DIR).glob("*.json")):
        if path.stem not in answered:
            conversion.exclude(
                path.stem, f"{path} has no ground truth {raw_dir / GT_DIR / path.name}", kind="missing_annotation", unit="annotation file"
            )
    return conversion.result()
