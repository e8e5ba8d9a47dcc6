"""LongVideoBench source adapter: the validation split of the hub release into candidate instances, one
of VirtueBench's six long-video sources (interface in virtuebench.sources.base). Layout read, choices,
and what was confirmed: docs/sources.md#longvideobench.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from virtuebench.instances import Instance
from virtuebench.sources.archives import extract_archive, extract_parts, part_order
from virtuebench.sources.base import Conversion, Excluded, HubRelease

SOURCE = "longvideobench"

#: The dataset repository is gated (accept its terms on the hub; HF_TOKEN in the environment). The sha is a hub-cache
#: snapshot (`datasets--longvideobench--LongVideoBench/snapshots/60d1c89c...`) that several public scripts read
#: `lvb_val.json` and `videos/` from: a snapshot folder is named by its commit; that it is the newest commit on main
#: could not be confirmed (assumed; docs/sources.md#longvideobench). `subtitles.tar` is read only with
#: supplement.longvideobench_subtitles: interleaved.
RELEASE = HubRelease(
    repo_id="longvideobench/LongVideoBench",
    revision="60d1c89c1919a198b73be39c2babb213b29d6a5c",
    allow_patterns=("lvb_val.json", "videos.tar.part.*", "subtitles.tar"),
    gated=True,
)
#: `duration` in lvb_val.json: the length its loader samples frames within (sources.RealSourceSettings.durations).
STATES_DURATIONS = True

ANNOTATIONS = "lvb_val.json"
PARTS_GLOB = "videos.tar.part.*"
ARCHIVE = "videos.tar"
VIDEOS = "videos"
SUBTITLES_ARCHIVE = "subtitles.tar"
SUBTITLES = "subtitles"

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
    joining them (extract_parts: the extra disk is the unpacked videos, about 1x the parts), and `subtitles.tar`
    where it was downloaded; returns the videos folder.

    Idempotent: once unpacked (the `.videos.tar.extracted` marker) nothing is read again, so the parts may be
    deleted afterwards. A release already unpacked by hand (a `videos/` folder, no parts) needs nothing, and a
    `videos.tar` joined by hand is unpacked as it is.
    """
    raw_dir = Path(raw_dir)
    archive = raw_dir / ARCHIVE
    videos = raw_dir / VIDEOS
    if (raw_dir / SUBTITLES_ARCHIVE).is_file():  # gives subtitles/<subtitle_path>, as the loader reads them
        extract_archive(raw_dir / SUBTITLES_ARCHIVE, raw_dir)
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


def convert(
    raw_dir: str | Path, videos_dir: str | Path, levels: list[int], *, sampling: str = "1fps", durations: str = "probed"
) -> tuple[list[Instance], Excluded]:
    """Candidate instances from `lvb_val.json`: one per question, the correct candidate as the answer.

    `durations`: "probed" (the file's length, as every source) or "release": the entry's `duration`, which the
    release's loader samples its frames within (`load_video(video_file, duration, ...)`), no longer than the file;
    an entry without a positive `duration` is then a bad row.

    The open-ended question is `question`, not `question_wo_referring_query`: the referring query
    ("when the subtitle says ...", "in front of the red building ...") is what points to the moment the
    question is about; without it many questions are ambiguous in a long video ("What is he doing?")
    and some stored variants are truncated fragments (", what objects are present in this scene?").
    Some referring queries quote subtitles, which VirtueBench does not show; where the frames cannot
    locate the moment, the per-level annotation (virtuebench.curation) marks the question unanswerable.
    Questions that only make sense with their options ("Which of the following sequences ...") are
    kept as they are; the options stay beside the answer.
    """
    if durations not in ("probed", "release"):
        raise ValueError(f"{SOURCE}: durations {durations!r} is not one of probed, release")
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
        stated = entry.get("duration")
        if durations == "release" and (not isinstance(stated, int | float) or isinstance(stated, bool) or stated <= 0):
            conversion.exclude(entry["id"], f"bad row: 'duration' {stated!r} is not a positive number of seconds", kind="bad_row")
            continue
        candidates = [str(option).strip() for option in entry["candidates"]]
        conversion.add(
            source_id=entry["id"].strip(),
            video_file=_video_file(raw_dir, entry["video_path"].strip()),
            task_type=entry["question_category"].strip(),
            question=entry["question"],
            answer=candidates[entry["correct_choice"]],
            options=candidates,
            stated_duration_s=float(stated) if durations == "release" else None,
        )
    return conversion.result()


# --- Subtitles (supplement.longvideobench_subtitles: interleaved) -------------------------------------------------------
# The release's loader (longvideobench/LongVideoBench, longvideobench/longvideobench_dataset.py at commit
# fc3c553250cfee6853a722f9b181f1b69f478426: LongVideoBenchDataset with insert_text=True, its default) reads
# subtitles/<subtitle_path> and puts each subtitle among the frames by time (insert_subtitles_into_frames); these
# functions do the same with this run's frame times, and the supplement writes the result before the question.


def subtitle_refs(raw_dir: str | Path) -> dict[str, tuple[Path, float, float]]:
    """question id -> (its subtitle file, `starting_timestamp_for_subtitles`, `duration`), from lvb_val.json."""
    raw_dir = Path(raw_dir)
    entries = json.loads((raw_dir / ANNOTATIONS).read_text(encoding="utf-8"))
    refs = {}
    for entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str) and isinstance(entry.get("subtitle_path"), str):
            refs[entry["id"].strip()] = (
                raw_dir / SUBTITLES / entry["subtitle_path"],
                float(entry.get("starting_timestamp_for_subtitles") or 0.0),
                float(entry.get("duration") or 0.0),
            )
    return refs


def read_subtitles(path: Path) -> list[dict[str, Any]]:
    """A subtitle file: a JSON list of {"timestamp": [start, end], "text"} or {"start": "HH:MM:SS.mmm", "end", "line"}."""
    if not path.is_file():
        raise ValueError(f"{SOURCE}: {path} not found: download {SUBTITLES_ARCHIVE} ({RELEASE.url}) and unpack it (longvideobench.prepare)")
    try:
        subtitles = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{SOURCE}: {path} is not valid JSON ({error})") from None
    if not isinstance(subtitles, list) or not all(isinstance(line, dict) for line in subtitles):
        raise ValueError(f"{SOURCE}: {path} should hold a list of subtitle objects")
    return subtitles


def _seconds(timestamp: str) -> float:
    hours, minutes, seconds = str(timestamp).split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def interleave_subtitles(
    frame_times: Sequence[float], subtitles: Sequence[dict[str, Any]], starting_timestamp: float, duration: float
) -> list[int | str]:
    """Frames (as their index) and subtitle texts in the order the release's loader interleaves them.

    As insert_subtitles_into_frames: a subtitle's times are shifted by `starting_timestamp`; it goes after every frame
    at or before its midpoint; it is kept only where a frame lies strictly inside it (widened to 1 s about its
    midpoint where shorter); an end that is not a float (null, and an integer too, as the loader's isinstance check
    reads it) is the video's `duration`.
    """
    items: list[int | str] = []
    current = 0
    for subtitle in subtitles:
        if "timestamp" in subtitle:
            start, end = subtitle["timestamp"]
            if not isinstance(end, float):
                end = duration
            text = subtitle["text"]
        else:
            start, end = _seconds(subtitle["start"]), _seconds(subtitle["end"])
            text = subtitle["line"]
        start, end = float(start) - starting_timestamp, float(end) - starting_timestamp
        middle = (start + end) / 2
        while current < len(frame_times) and frame_times[current] <= middle:
            items.append(current)
            current += 1
        if end - start < 1:
            start, end = middle - 0.5, middle + 0.5
        if any(start < time < end for time in frame_times):
            items.append(str(text))
    items.extend(range(current, len(frame_times)))
    return items


def subtitles_text(items: Sequence[int | str], n_frames: int) -> str:
    """The interleaved subtitles as text before the question (a video model takes its frames as one input, so a
    subtitle cannot sit between two of them): each on its own line after the frame it follows; "" where none."""
    lines = []
    last_frame = None
    for item in items:
        if isinstance(item, int):
            last_frame = item
        else:
            place = "before frame 1" if last_frame is None else f"after frame {last_frame + 1}"
            lines.append(f"[{place}] {item.strip()}")
    if not lines:
        return ""
    return f"Subtitles, placed by time among the video's {n_frames} frames:\n" + "\n".join(lines)
