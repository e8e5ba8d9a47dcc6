"""LongVideoBench source adapter: the validation split of the hub release into candidate instances, one
of VirtueBench's six long-video sources (interface in virtuebench.sources.base). Layout read, choices,
and what was confirmed: docs/sources.md#longvideobench.
"""

from __future__ import annotations

import json
from pathlib import Path

from virtuebench.instances import Instance
from virtuebench.sources.archives import extract_archive, extract_parts, part_order
from virtuebench.sources.base import Conversion, Excluded, HubRelease

SOURCE = "longvideobench"

#: The dataset repository is gated (accept its terms on the hub; HF_TOKEN in the environment). No commit
#: sha of it could be confirmed from stored sources, so this follows the branch; pin it once downloaded.
RELEASE = HubRelease(
    repo_id="longvideobench/LongVideoBench",
    revision="main",
    allow_patterns=("lvb_val.json", "videos.tar.part.*"),
    gated=True,
)

ANNOTATIONS = "lvb_val.json"
PARTS_GLOB = "videos.tar.part.*"
ARCHIVE = "videos.tar"
VIDEOS = "videos"

#: question_category -> VirtueBench category. Principle: recognizing, reading or counting what is visible
#: at the one moment the referring query points to = perception; relating two or more moments (order,
#: change, tracking, before/after) = reasoning. It coincides with the release's own `level` field:
#: every L1-Perception code is perception, every L2-Relation code is reasoning. Code letters: S scene,
#: E event, O object, T text (subtitle), A attribute; "2" = what is at the referred moment, "3" =
#: what comes before/after it.
TASK_CATEGORIES = {
    # L1-Perception: one referred moment, read off what is there.
    "S2E": "perception",  # scene-referred event
    "S2O": "perception",  # scene-referred object
    "S2A": "perception",  # scene-referred attribute
    "E2O": "perception",  # event-referred object
    "O2E": "perception",  # object-referred event
    "T2E": "perception",  # subtitle-referred event
    "T2O": "perception",  # subtitle-referred object
    "T2A": "perception",  # subtitle-referred attribute
    # L2-Relation: two or more moments put in relation.
    "E3E": "reasoning",  # event before/after event
    "O3O": "reasoning",  # object before/after object
    "T3E": "reasoning",  # event before/after a subtitle
    "T3O": "reasoning",  # object before/after a subtitle
    "SSS": "reasoning",  # order of a sequence of scenes
    "SOS": "reasoning",  # scene-referred object tracking
    "TOS": "reasoning",  # subtitle-referred object tracking
    "SAA": "reasoning",  # scene-referred attribute change
    "TAA": "reasoning",  # subtitle-referred attribute change
}


def prepare(raw_dir: str | Path) -> Path:
    """Unpack `videos.tar.part.*` (in part order) into `raw_dir`, streaming the parts into the unpacker without
    joining them (extract_parts: the extra disk is the unpacked videos, about 1x the parts); returns the videos
    folder.

    Idempotent: once unpacked (the `.videos.tar.extracted` marker) nothing is read again, so the parts may be
    deleted afterwards. A release already unpacked by hand (a `videos/` folder, no parts) needs nothing, and a
    `videos.tar` joined by hand is unpacked as it is.
    """
    raw_dir = Path(raw_dir)
    archive = raw_dir / ARCHIVE
    videos = raw_dir / VIDEOS
    if (raw_dir / f".{ARCHIVE}.extracted").exists():
        return videos
    parts = sorted(raw_dir.glob(PARTS_GLOB), key=part_order)
    if not parts:
        if archive.exists():  # joined by hand, parts removed
            extract_archive(archive, raw_dir)
            return videos
        if videos.is_dir():
            return videos
        raise ValueError(f"{SOURCE}: {raw_dir} has neither {PARTS_GLOB} nor a {VIDEOS}/ folder (download {RELEASE.url} first)")
    extract_parts(parts, raw_dir, ARCHIVE)
    return videos


def _bad_row(entry: object) -> str | None:
    """Why an entry of lvb_val.json cannot become an instance, or None when it can."""
    if not isinstance(entry, dict):
        return "not an object"
    for name in ("id", "question", "question_category", "video_path"):
        if not isinstance(entry.get(name), str) or not entry[name].strip():
            return f"'{name}' is missing or not a non-empty string"
    candidates = entry.get("candidates")
    if not isinstance(candidates, list) or len(candidates) < 2:
        return "'candidates' is not a list of at least two options"
    if not all(isinstance(option, str | int | float) and not isinstance(option, bool) and str(option).strip() for option in candidates):
        return "'candidates' holds an empty or non-text option"
    choice = entry.get("correct_choice")
    if not isinstance(choice, int) or isinstance(choice, bool):
        return f"'correct_choice' {choice!r} is not an option index"
    if not 0 <= choice < len(candidates):
        return f"'correct_choice' {choice} is outside the {len(candidates)} candidates"
    if Path(entry["video_path"]).is_absolute() or ".." in Path(entry["video_path"]).parts:
        return f"'video_path' {entry['video_path']!r} points outside the release"
    return None


def _video_file(raw_dir: Path, video_path: str) -> Path:
    expected = raw_dir / VIDEOS / video_path
    if not expected.exists() and (raw_dir / video_path).is_file():  # a tar whose members lack videos/
        return raw_dir / video_path
    return expected


def convert(raw_dir: str | Path, videos_dir: str | Path, levels: list[int], *, sampling: str = "1fps") -> tuple[list[Instance], Excluded]:
    """Candidate instances from `lvb_val.json`: one per question, the correct candidate as the answer.

    The open-ended question is `question`, not `question_wo_referring_query`: the referring query
    ("when the subtitle says ...", "in front of the red building ...") is what points to the moment the
    question is about; without it many questions are ambiguous in a long video ("What is he doing?")
    and some stored variants are truncated fragments (", what objects are present in this scene?").
    Some referring queries quote subtitles, which VirtueBench does not show; where the frames cannot
    locate the moment, the per-level annotation (virtuebench.curation) marks the question unanswerable.
    Questions that only make sense with their options ("Which of the following sequences ...") are
    kept as they are; the options stay beside the answer.
    """
    raw_dir = Path(raw_dir)
    annotations = raw_dir / ANNOTATIONS
    if not annotations.is_file():
        raise ValueError(f"{SOURCE}: {annotations} not found (download {RELEASE.url} into {raw_dir})")
    try:
        entries = json.loads(annotations.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{SOURCE}: {annotations} is not valid JSON ({error})") from None
    if not isinstance(entries, list):
        raise ValueError(f"{SOURCE}: {annotations} should hold a list of questions")  # noqa: TRY004 (the CLI reports ValueError)
    if not (raw_dir / VIDEOS).is_dir() and any(raw_dir.glob(PARTS_GLOB)):
        raise ValueError(f"{SOURCE}: {raw_dir} still holds {PARTS_GLOB} only; unpack them first (longvideobench.prepare)")
    conversion = Conversion(SOURCE, videos_dir, levels, TASK_CATEGORIES, sampling=sampling)
    for index, entry in enumerate(entries):
        reason = _bad_row(entry)
        if reason is not None:
            has_id = isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry["id"].strip()
            item = entry["id"] if has_id else f"{ANNOTATIONS}#{index}"
            conversion.exclude(item, f"bad row: {reason}", kind="bad_row")
            continue
        candidates = [str(option).strip() for option in entry["candidates"]]
        conversion.add(
            source_id=entry["id"].strip(),
            video_file=_video_file(raw_dir, entry["video_path"].strip()),
            task_type=entry["question_category"].strip(),
            question=entry["question"],
            answer=candidates[entry["correct_choice"]],
            options=candidates,
        )
    return conversion.result()
