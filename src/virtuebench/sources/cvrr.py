"""CVRR-ES source adapter: the release layout into the instances table.

Layout: `<root>/<dimension>/annotations_<dimension>.json` (a list of {"VideoID", "Q", "A"}) beside the
dimension's videos. Each QA pair is an instance whose category and task type are its dimension and
whose instance_id is `<dimension>/<index>` (the index in the annotation file, as in the published
judge outputs). CVRR-ES has no per-level ground truth: every instance has one level, the configured
frame count, with the release's answer. A video that is missing, unreadable or too short for that
level is reported and left out; it never breaks the run. Videos are linked into `videos_dir`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from virtuebench.cvrr import DIMENSIONS
from virtuebench.instances import Instance
from virtuebench.levels import is_available
from virtuebench.sources.base import probe_duration


@dataclass(frozen=True)
class CvrrSettings:
    root: str
    level: int = 8
    dimensions: tuple[str, ...] = DIMENSIONS

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> CvrrSettings:
        allowed = {"root", "level", "dimensions"}
        unknown = sorted(set(values) - allowed)
        if unknown:
            raise ValueError(f"cvrr source: unknown setting(s) {unknown}; allowed: {sorted(allowed)}")
        if "root" not in values:
            raise ValueError("cvrr source: setting 'root' (the unzipped CVRR-ES folder) is required")
        dimensions = tuple(values.get("dimensions", DIMENSIONS))
        bad = [d for d in dimensions if d not in DIMENSIONS]
        if bad:
            raise ValueError(f"cvrr source: unknown dimension(s) {bad}; known: {', '.join(DIMENSIONS)}")
        return cls(str(values["root"]), int(values.get("level", 8)), dimensions)


def _annotation_file(folder: Path, dimension: str) -> Path:
    expected = folder / f"annotations_{dimension}.json"
    if expected.exists():
        return expected
    candidates = sorted(folder.glob("annotations_*.json"))
    if len(candidates) == 1:  # the release has one misnamed annotation file
        return candidates[0]
    raise ValueError(f"{expected}: annotation file not found")


def _video_file(folder: Path, video_id: str) -> Path:
    path = folder / video_id
    if path.suffix == "" and not path.exists():
        path = path.with_suffix(".mp4")
    return path


def load(settings: CvrrSettings, videos_dir: str | Path) -> tuple[list[Instance], list[dict[str, str]]]:
    root, videos_dir = Path(settings.root), Path(videos_dir)
    if not root.is_dir():
        raise ValueError(f"cvrr source: root {root} is not a folder (unzip CVRR-ES there)")
    videos_dir.mkdir(parents=True, exist_ok=True)
    instances: list[Instance] = []
    excluded: list[dict[str, str]] = []
    durations: dict[Path, float | str] = {}
    for dimension in settings.dimensions:
        folder = root / dimension
        try:
            annotation = _annotation_file(folder, dimension)
            entries = json.loads(annotation.read_text())
        except (ValueError, OSError) as error:
            excluded.append({"item": dimension, "reason": str(error)})
            continue
        if not isinstance(entries, list):
            excluded.append({"item": str(annotation), "reason": "expected a list of {VideoID, Q, A}"})
            continue
        for index, entry in enumerate(entries):
            item = f"{annotation}#{index}"
            if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) and entry[k].strip() for k in ("VideoID", "Q", "A")):
                excluded.append({"item": item, "reason": "bad row: needs non-empty strings VideoID, Q and A"})
                continue
            source_video = _video_file(folder, entry["VideoID"])
            if source_video not in durations:
                try:
                    durations[source_video] = probe_duration(source_video) if source_video.exists() else "video file not found"
                except Exception as error:  # PyAV raises many types for a broken file
                    durations[source_video] = f"unreadable video ({error})"
            duration = durations[source_video]
            if isinstance(duration, str):
                excluded.append({"item": item, "reason": f"{source_video}: {duration}"})
                continue
            if not is_available(settings.level, duration):
                excluded.append({"item": item, "reason": f"{source_video}: {duration:.1f} s is too short for {settings.level} frames at 1 FPS"})
                continue
            video_id = "cvrr_" + re.sub(r"[^A-Za-z0-9._-]", "_", f"{dimension}_{source_video.stem}")
            linked = videos_dir / f"{video_id}{source_video.suffix}"
            if not linked.exists():
                os.symlink(source_video.resolve(), linked)
            instances.append(
                Instance(
                    instance_id=f"{dimension}/{index:04d}", video_id=video_id, source="cvrr-es",
                    category=dimension, task_type=dimension, question=entry["Q"].strip(), answer=entry["A"].strip(),
                    duration_s=duration, video_path=str(linked), answers={settings.level: entry["A"].strip()},
                )
            )  # fmt: skip
    return instances, excluded
