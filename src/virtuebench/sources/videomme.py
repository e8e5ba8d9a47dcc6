"""Video-MME source adapter: the hub release (lmms-lab/Video-MME) into candidate instances, one of
VirtueBench's six long-video sources (interface in virtuebench.sources.base). Layout read, choices,
and what was confirmed: docs/sources.md#video-mme.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from virtuebench.instances import Instance
from virtuebench.sources.archives import extract_archive
from virtuebench.sources.base import (
    Conversion,
    Excluded,
    HubRelease,
    correct_option,
    option_letter,
    read_parquet_rows,
    split_embedded_options,
    strip_option_prefix,
)

SOURCE = "video-mme"

#: Not gated. The sha is the snapshot public scripts read the parquet and `data/` from; the hub's commit
#: list shows it as the newest commit on main (the upload of the last chunk, videos_chunked_20.zip).
#: The repository was later moved to lmms-eval/Video-MME; the hub redirects the old name.
RELEASE = HubRelease(
    repo_id="lmms-lab/Video-MME",
    revision="ead1408f75b618502df9a1d8e0950166bf0a2a0b",
    allow_patterns=("videomme/test-*.parquet", "videos_chunked_*.zip"),
)

PARQUET_GLOB = "videomme/test-*.parquet"
CHUNKS_GLOB = "videos_chunked_*.zip"
VIDEOS = "data"
#: The extensions lmms-eval tries, in its order, for `data/<videoID>`.
VIDEO_SUFFIXES = (".mp4", ".MP4", ".mkv")
COLUMNS = ("videoID", "question_id", "task_type", "question", "options", "answer")

#: task_type -> VirtueBench category. The paper does not publish its mapping. Principle: recognizing,
#: reading or counting what is visible = perception; causal, temporal, plot or relational inference =
#: reasoning. Video-MME's own names follow the same split; "Information Synopsis" (the gist of the
#: whole video) needs the video's parts put together, so it is reasoning.
TASK_CATEGORIES = {
    "Temporal Perception": "perception",
    "Spatial Perception": "perception",
    "Attribute Perception": "perception",
    "Action Recognition": "perception",
    "Object Recognition": "perception",
    "OCR Problems": "perception",
    "Counting Problem": "perception",
    "Temporal Reasoning": "reasoning",
    "Spatial Reasoning": "reasoning",
    "Action Reasoning": "reasoning",
    "Object Reasoning": "reasoning",
    "Information Synopsis": "reasoning",
}


def prepare(raw_dir: str | Path) -> Path:
    """Unzip every `videos_chunked_NN.zip` into `raw_dir` (giving `data/<videoID>.mp4`), each once."""
    raw_dir = Path(raw_dir)
    for chunk in sorted(raw_dir.glob(CHUNKS_GLOB)):
        extract_archive(chunk, raw_dir)
    return raw_dir


def _read_questions(raw_dir: Path) -> list[dict[str, Any]]:
    return read_parquet_rows(raw_dir, PARQUET_GLOB, COLUMNS, SOURCE, RELEASE.repo_id)


def _options(value: Any) -> list[str] | str:
    """The option texts without their letters, or why the list is malformed."""
    if not isinstance(value, (list, tuple)) or len(value) < 2:
        return f"options {value!r} is not a list of at least two options"
    texts = []
    for index, option in enumerate(value):
        text = strip_option_prefix(option) if isinstance(option, str) else ""
        letter = option.lstrip(" ([")[:1].upper() if isinstance(option, str) else ""
        if not text or text == option.strip() or letter != option_letter(index):  # no text, no or wrong letter
            return f"option {index + 1} {option!r} is not '{option_letter(index)}. <text>'"
        texts.append(text)
    return texts


def _video_file(raw_dir: Path, video: str) -> Path:
    path = raw_dir / VIDEOS / f"{video}{VIDEO_SUFFIXES[0]}"
    for suffix in VIDEO_SUFFIXES:
        if (candidate := path.with_suffix(suffix)).exists():
            return candidate
    return path


def convert(
    raw_dir: str | Path, videos_dir: str | Path, levels: Iterable[int], *, sampling: str = "1fps"
) -> tuple[list[Instance], Excluded]:
    """Candidate instances, one per question, and the report of the questions left out."""
    raw_dir = Path(raw_dir)
    conversion = Conversion(SOURCE, videos_dir, levels, TASK_CATEGORIES, sampling=sampling)
    for number, row in enumerate(_read_questions(raw_dir)):
        question_id, video = row.get("question_id"), row.get("videoID")
        if not isinstance(question_id, str) or not question_id.strip():
            conversion.exclude(f"row {number}", "bad row: no question_id", kind="bad_row")
            continue
        if not isinstance(video, str) or not video.strip() or not isinstance(row.get("question"), str):
            conversion.exclude(question_id, "bad row: needs a text videoID and question", kind="bad_row")
            continue
        options = _options(row.get("options"))
        if isinstance(options, str):
            conversion.exclude(question_id, f"bad row: {options}", kind="bad_row")
            continue
        try:
            answer = correct_option(options, str(row.get("answer") or ""))
        except ValueError as error:
            conversion.exclude(question_id, f"bad row: {error}", kind="bad_row")
            continue
        question, _ = split_embedded_options(row["question"])  # Video-MME keeps options apart; be sure
        conversion.add(question_id.strip(), _video_file(raw_dir, video.strip()), str(row.get("task_type")), question, answer, options)
    return conversion.result()
