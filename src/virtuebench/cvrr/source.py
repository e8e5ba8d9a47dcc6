"""CVRR-ES source adapter: the release layout (`<root>/<dimension>/annotations_<dimension>.json` beside
the videos) into the instances table, one level per instance, through sources.base.Conversion; what it
reads and how it names instances: docs/sources.md#cvrr-es.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from virtuebench.cvrr.published import find_root
from virtuebench.instances import CVRR_DIMENSIONS as DIMENSIONS
from virtuebench.instances import Instance
from virtuebench.records import RecordError
from virtuebench.sources.base import Conversion, Excluded
from virtuebench.support.settings import settings_from_dict

SOURCE = "cvrr-es"
#: N frames over any video, one level per instance (levels.SAMPLINGS; virtuebench.sources.sampling_of reads it).
SAMPLING = "clip"
#: A CVRR-ES instance's category and task type are both its dimension.
TASK_CATEGORIES = {dimension: dimension for dimension in DIMENSIONS}


def source_levels(level: Any) -> list[int]:
    """The frame counts every clip is sampled at: the source's `level`, one count or a list of them (each model then
    runs at those its registry entry's `levels` allows: TimeChat's 96 beside the others' 8, say). ValueError naming the
    setting where it is neither."""
    levels = level if isinstance(level, list) else [level]
    if not levels or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in levels) or len(set(levels)) < len(levels):
        raise ValueError(f"cvrr source: level {level!r} must be a frame count (e.g. 8) or a list of distinct ones (e.g. [8, 96])")
    return levels


@dataclass(frozen=True)
class CvrrSettings:
    root: str
    level: int | tuple[int, ...] = 8
    dimensions: tuple[str, ...] = DIMENSIONS

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> CvrrSettings:
        given = settings_from_dict(cls, values, "cvrr source (root: the unzipped CVRR-ES folder)")
        dimensions = tuple(given.dimensions)
        bad = [d for d in dimensions if d not in DIMENSIONS]
        if bad:
            raise ValueError(f"cvrr source: unknown dimension(s) {bad}; known: {', '.join(DIMENSIONS)}")
        levels = source_levels(list(given.level) if isinstance(given.level, tuple) else given.level)
        return cls(str(given.root), levels[0] if not isinstance(given.level, (list, tuple)) else tuple(levels), dimensions)

    @property
    def levels(self) -> list[int]:
        return list(self.level) if isinstance(self.level, tuple) else [self.level]


class _Conversion(Conversion):
    """CVRR-ES is a benchmark of its own: instance ids are the published `<dimension>/<index>`, report
    items name the annotation file (`<file>#<index>`), and video ids start with `cvrr_`."""

    qualify = False
    video_prefix = "cvrr"
    # CVRR-ES is a short-clip benchmark: its models took a fixed number of frames over the whole clip, so
    # every clip (down to about 2 s) keeps its questions (config/cvrr.yaml sets frames.sampling: clip).
    sampling = "clip"

    def too_short(self, video_file: str | Path, duration: float) -> str:
        return f"{video_file}: a clip of {duration:.1f} s has no frames to sample"


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


def check_release(settings: CvrrSettings) -> None:
    """Raise ValueError, naming source.settings.root, where the folder can give no instance: it is not there, or no
    configured dimension has its annotation file in it (a folder holding only the published judge results, say)."""
    root = Path(settings.root)
    if not root.is_dir():
        raise ValueError(
            f"cvrr source: root {root} is not a folder: download CVRR-ES (the zipped release linked under 'Download CVRR-ES "
            "Dataset' in https://github.com/mbzuai-oryx/CVRR-Evaluation-Suite) and unzip it there, or set "
            "source.settings.root to where it is (README, 'CVRR-ES')"
        )
    for dimension in settings.dimensions:
        try:
            _annotation_file(root / dimension, dimension)
            return
        except ValueError:
            continue
    try:
        published = find_root(root)
    except RecordError:
        what = f"none of the {len(settings.dimensions)} dimension folders holds its annotations_<dimension>.json"
    else:
        what = (
            f"this folder holds only published judge results, {published}/<setting>/<Model>/<dimension>.json; "
            "to show them beside new runs, give it as cvrr.published_dir"
        )
    raise ValueError(
        f"CVRR-ES: no annotation file in {root} ({what}). Set source.settings.root to the unzipped release, whose "
        "dimension folders hold annotations_<dimension>.json and the videos (docs/cvrr.md)"
    )


def preview(settings: dict[str, Any]) -> None:
    """Checked before any job (virtuebench.sources.Adapter.preview): a release folder without an annotation file
    stops the run there. Which items the table holds is told by the table alone (the videos are probed)."""
    check_release(CvrrSettings.from_dict(settings))


def load(settings: CvrrSettings, videos_dir: str | Path) -> tuple[list[Instance], Excluded]:
    root = Path(settings.root)
    check_release(settings)
    conversion = _Conversion(SOURCE, videos_dir, settings.levels, TASK_CATEGORIES)
    for dimension in settings.dimensions:
        folder = root / dimension
        try:
            annotation = _annotation_file(folder, dimension)
            entries = json.loads(annotation.read_text())
        except (ValueError, OSError) as error:
            kind = "missing_annotation" if "not found" in str(error) else "bad_row"
            conversion.exclude(dimension, str(error), kind=kind, unit="dimension")
            continue
        if not isinstance(entries, list):
            conversion.exclude(str(annotation), "expected a list of {VideoID, Q, A}", kind="bad_row", unit="dimension")
            continue
        for index, entry in enumerate(entries):
            item = f"{annotation}#{index}"
            if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) and entry[k].strip() for k in ("VideoID", "Q", "A")):
                conversion.exclude(item, "bad row: needs non-empty strings VideoID, Q and A", kind="bad_row")
                continue
            video = _video_file(folder, entry["VideoID"])
            conversion.add(
                f"{dimension}/{index:04d}", video, dimension, entry["Q"], entry["A"], video_key=f"{dimension}_{video.stem}", item=item
            )
    return conversion.result()


def adapter(settings: dict[str, Any], videos_dir: str, threads: int) -> tuple[list[Instance], Excluded]:
    """The source adapter (virtuebench.sources.SOURCES): the release under settings.root, one level per instance."""
    return load(CvrrSettings.from_dict(settings), videos_dir)
