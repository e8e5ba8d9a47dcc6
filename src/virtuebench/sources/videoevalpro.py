"""VideoEval-Pro source adapter: the hub release (TIGER-Lab/VideoEval-Pro, arXiv 2505.14640) into
candidate instances (interface in virtuebench.sources.base). What was read (the authors' README and tools,
the dataset card, third-party loaders), the layout, the choices, and what was confirmed or assumed:
docs/videoevalpro.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from virtuebench.instances import Instance
from virtuebench.sources.archives import extract_archive, extract_parts, part_order
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

SOURCE = "videoeval-pro"

#: Assumed not gated (the authors' README clones it without a token). The sha is the hub-cache snapshot
#: (`datasets--TIGER-Lab--VideoEval-Pro/snapshots/a38a853b...`) that a public run script reads
#: `data/test-00000-of-00001.parquet` and `videos/videos_filtered/` from; a cache snapshot is named by its
#: commit, but that it is the newest commit on main could not be confirmed (assumed).
RELEASE = HubRelease(
    repo_id="TIGER-Lab/VideoEval-Pro",
    revision="a38a853b22576c7918e9cc0d1d4eedf9d46a1cae",
    allow_patterns=("data/test-*.parquet", "videos/videos_part_*.tar.gz"),
)

PARQUET_GLOB = "data/test-*.parquet"
VIDEOS = "videos"
PARTS_GLOB = "videos_part_*.tar.gz"  # under videos/
ARCHIVE = "videos_merged.tar.gz"  # the joined parts, as the authors' README names it
#: Where `<video>` is looked for under videos/, in order: the folder the archive unpacks to (seen in
#: third-party loaders and cache paths), then videos/ itself (the authors' README), then videos/videos/.
VIDEO_FOLDERS = ("videos_filtered", ".", "videos")
COLUMNS = ("video", "question", "options", "answer", "answer_text", "qa_type")

#: qa_type -> VirtueBench category. The benchmark's own four task types already split local (one
#: segment) from holistic (the whole video) and perception from reasoning; the category follows the
#: second half of the name. The paper's Local/Holistic axis is kept in `task_type`.
TASK_CATEGORIES = {
    "Local Perception": "perception",
    "Holistic Perception": "perception",
    "Local Reasoning": "reasoning",
    "Holistic Reasoning": "reasoning",
}


def prepare(raw_dir: str | Path) -> Path:
    """Unpack `videos/videos_part_*.tar.gz` (in part order) in `videos/`, streaming the parts into the unpacker
    without joining them (extract_parts: the extra disk is the unpacked videos, about 1x the parts); returns the
    videos folder.

    Idempotent: once unpacked (the `.videos_merged.tar.gz.extracted` marker) nothing is read again, so the parts
    may be deleted afterwards. A release unpacked by hand (no parts) needs nothing, and a `videos_merged.tar.gz`
    joined by hand (the authors' README) is unpacked as it is.
    """
    raw_dir = Path(raw_dir)
    videos = raw_dir / VIDEOS
    archive = videos / ARCHIVE
    if (videos / f".{ARCHIVE}.extracted").exists():
        return videos
    parts = sorted(videos.glob(PARTS_GLOB), key=part_order)
    if parts:
        extract_parts(parts, videos, ARCHIVE)
        return videos
    if archive.exists():
        extract_archive(archive, videos)
        return videos
    if videos.is_dir():
        return videos
    raise ValueError(f"{SOURCE}: {raw_dir} has neither {VIDEOS}/{PARTS_GLOB} nor a {VIDEOS}/ folder (download {RELEASE.url} first)")


def _read_questions(raw_dir: Path) -> list[dict[str, Any]]:
    return read_parquet_rows(raw_dir, PARQUET_GLOB, COLUMNS, SOURCE, RELEASE.repo_id)


def _options(value: Any) -> list[str] | str:
    """The option texts, their letters ('A. ', '(A) ') removed where they carry their own; or why not.

    The release's options are passed to the model as they are with a prompt asking for a letter, so
    they most likely carry their letters; that was not seen in a row, so texts without them are kept.
    """
    if not isinstance(value, (list, tuple)) or len(value) < 2:
        return f"options {value!r} is not a list of at least two options"
    texts = []
    for index, option in enumerate(value):
        if not isinstance(option, str) or not option.strip():
            return f"option {index + 1} {option!r} is empty or not text"
        stripped = strip_option_prefix(option)
        own_letter = stripped != option.strip() and option.lstrip(" ([")[:1].upper() == option_letter(index)
        text = stripped if own_letter else option.strip()
        if not text:
            return f"option {index + 1} {option!r} has a letter but no text"
        texts.append(text)
    return texts


def _bad_video(video: Any) -> str | None:
    if not isinstance(video, str) or not video.strip():
        return "'video' is missing or not a non-empty string"
    if Path(video.strip()).is_absolute() or ".." in Path(video.strip()).parts:
        return f"'video' {video!r} points outside the release"
    return None


def _video_file(raw_dir: Path, video: str) -> Path:
    candidates = [raw_dir / VIDEOS / folder / video for folder in VIDEO_FOLDERS]
    return next((path for path in candidates if path.exists()), candidates[0])


def source_id_for(row: int, letter: str) -> str:
    """The release has no question id: the row in the pinned parquet, then the correct option's letter
    (so that `options` and `source_id` together keep the MCQ: '0007-B'); a row without options: '0007'."""
    return f"{row:04d}-{letter}" if letter else f"{row:04d}"


def letter_of(source_id: str) -> str:
    """The correct option's letter kept in a `source_id_for` id ('0007-B' -> 'B')."""
    return source_id.rsplit("-", 1)[-1]


def convert(
    raw_dir: str | Path, videos_dir: str | Path, levels: Iterable[int], *, sampling: str = "1fps"
) -> tuple[list[Instance], Excluded]:
    """Candidate instances, one per question, and the report of the questions left out.

    The question is the release's open-ended `question` and the answer its free-form `answer_text` (the
    gold target its judge grades against), not the correct option's text: VideoEval-Pro is the
    open-ended rewrite of its four MCQ sources. The MCQ stays beside it: `options` (letters removed)
    and the correct letter at the end of `source_id`; a row whose `answer` is not one of its options
    is a bad row.
    """
    raw_dir = Path(raw_dir)
    rows = _read_questions(raw_dir)
    videos = raw_dir / VIDEOS
    unpacked = (videos / f".{ARCHIVE}.extracted").exists() or (videos / VIDEO_FOLDERS[0]).is_dir()
    if any(videos.glob(PARTS_GLOB)) and not unpacked:
        raise ValueError(f"{SOURCE}: {videos} still holds {PARTS_GLOB} only; unpack them first (videoevalpro.prepare)")
    # Only the supplement's Table 1 reads VideoEval-Pro, and it never splits by category: a qa_type the release
    # adds is kept (category 'uncategorized', named once) rather than losing its questions from the column.
    conversion = Conversion(SOURCE, videos_dir, levels, TASK_CATEGORIES, sampling=sampling, keep_unknown_task_types=True)
    for number, row in enumerate(rows):
        item = f"row {number}"
        reason = _bad_video(row.get("video"))
        if reason is None and not all(isinstance(row.get(name), str) and row[name].strip() for name in ("question", "answer_text")):
            reason = "'question' and 'answer_text' must be non-empty strings"
        raw_options = row.get("options")
        # VideoEval-Pro is open-ended by design: a row with no options (or one) is kept without an MCQ (the
        # supplement's MCQ column leaves it out); options that are there must be well formed.
        no_mcq = raw_options is None or (isinstance(raw_options, (list, tuple)) and len(raw_options) < 2)
        options = [] if no_mcq else _options(raw_options)
        if reason is None and isinstance(options, str):
            reason = options
        if reason is None and not no_mcq:
            try:
                correct = correct_option(options, str(row.get("answer") or ""))
            except ValueError as error:
                reason = str(error)
        if reason is not None:
            conversion.exclude(item, f"bad row: {reason}", kind="bad_row")
            continue
        given = str(row.get("answer") or "").strip().strip("().").upper()
        letter = "" if no_mcq else given if len(given) == 1 and given.isalpha() else option_letter(options.index(correct))
        question, _ = split_embedded_options(row["question"])  # the options are a column of their own; be sure
        conversion.add(
            source_id=source_id_for(number, letter),
            video_file=_video_file(raw_dir, row["video"].strip()),
            task_type=str(row.get("qa_type") or "").strip(),
            question=question,
            answer=row["answer_text"],
            options=options,
            item=item,
        )
    return conversion.result()
