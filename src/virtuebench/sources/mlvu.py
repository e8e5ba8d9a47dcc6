"""MLVU source adapter: the dev set of the hub release (MLVU/MVLU) into candidate instances, one of
VirtueBench's six long-video sources (interface in virtuebench.sources.base); the two generation tasks
are left out. Layout read, choices, and what was confirmed: docs/sources.md#mlvu.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from virtuebench.instances import Instance
from virtuebench.sources.base import Conversion, Excluded, HubRelease, split_embedded_options

SOURCE = "mlvu"

#: Gated: accept the terms on the hub and set HF_TOKEN. The sha is the hub cache snapshot a public
#: script reads `MLVU/json/<N>_<task>.json` and `MLVU/video/<N>_<task>/` from; it was not seen on the
#: hub's commit list, so it is not confirmed to be the newest commit. Only the folders of the
#: multiple-choice tasks' videos are downloaded (the generation tasks are left out: docs/sources.md#mlvu).
MC_FILES = ("1_plotQA", "2_needle", "3_ego", "4_count", "5_order", "6_anomaly_reco", "7_topic_reasoning")
GENERATION_FILES = ("8_sub_scene", "9_summary")
RELEASE = HubRelease(
    repo_id="MLVU/MVLU",
    revision="06ddc388aa34746b3abba77972b7a7dfd977f7a3",
    allow_patterns=("MLVU/json/*.json", *(f"MLVU/video/{stem}/*" for stem in MC_FILES)),
    gated=True,
)

JSON_DIR = Path("MLVU") / "json"
VIDEO_DIR = Path("MLVU") / "video"
#: question_type -> VirtueBench category. The paper does not publish its mapping. Principle:
#: recognizing, reading or counting what is visible = perception; causal, temporal, plot or relational
#: inference = reasoning.
TASK_CATEGORIES = {
    "plotQA": "reasoning",  # Plot QA: the storyline of a film or cartoon (who did what, and why)
    "findNeedle": "perception",  # Needle QA: recognize what an inserted clip shows
    "ego": "reasoning",  # Ego Reasoning: relate the camera wearer's actions over time ("where did I put ...")
    "count": "perception",  # Action Count: count the repetitions of an action
    "order": "reasoning",  # Action Order: the temporal order of several actions
    "anomaly_reco": "perception",  # Anomaly Recognition: recognize the abnormal event shown (surveillance)
    "topic_reasoning": "reasoning",  # Topic Reasoning: the main topic of the whole video
    # The generation tasks, mapped for completeness; convert leaves them out (docs/sources.md#mlvu).
    "subPlot": "perception",  # Sub-Scene Captioning: describe one scene
    "summary": "reasoning",  # Video Summary: the whole video's story
}
GENERATION_TASKS = {"subPlot": "sub-scene captioning", "summary": "video summary"}


def prepare(raw_dir: str | Path) -> Path:
    """Nothing to unpack: the release ships plain files."""
    return Path(raw_dir)


def _text(value: Any) -> str | None:
    """A question, candidate or answer as text; numbers are accepted (a count may be stored bare)."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def _mc_row(entry: Any) -> tuple[str, str, str, list[str], int] | str:
    """(video, question, answer, options, empty options dropped) of a multiple-choice entry, or why it is a bad row.

    The release has empty candidates ('' beside the real ones: 1_plotQA/23 is `['', 'There is an archery scene', 'There
    is no archery scene', '']`); those are dropped and the question kept where at least two options remain and the
    answer is one of them (docs/sources.md#mlvu)."""
    if not isinstance(entry, dict):
        return "not an object"
    video, question, answer = _text(entry.get("video")), _text(entry.get("question")), _text(entry.get("answer"))
    if not video or not question or not answer:
        return "needs a text 'video', 'question' and 'answer'"
    candidates = entry.get("candidates")
    given = [_text(candidate) for candidate in candidates] if isinstance(candidates, list) else []
    if None in given:
        return f"'candidates' {candidates!r} is not a list of texts"
    options = [option for option in given if option]
    if len(options) < 2:
        return f"'candidates' {candidates!r} has fewer than two non-empty texts"
    if answer not in options:
        return f"answer {answer!r} is not one of the candidates {options}"
    return video, question, answer, options, len(given) - len(options)  # type: ignore[return-value]


def _convert_file(conversion: Conversion, raw_dir: Path, path: Path) -> None:
    stem = path.stem
    entries = conversion.read_json(stem, path, "annotation file", list, "a list of questions")
    if entries is None:
        return
    generation: Counter[str] = Counter()
    for index, entry in enumerate(entries):
        source_id = f"{stem}/{index}"
        task_type = entry.get("question_type") if isinstance(entry, dict) else None
        if task_type in GENERATION_TASKS or stem in GENERATION_FILES:
            generation[task_type if isinstance(task_type, str) else stem] += 1
            continue
        if not isinstance(task_type, str):
            conversion.exclude(source_id, f"bad row in {path}: no 'question_type'", kind="bad_row")
            continue
        row = _mc_row(entry)
        if isinstance(row, str):
            conversion.exclude(source_id, f"bad row in {path}: {row}", kind="bad_row")
            continue
        video, question, answer, options, empty = row
        question, _ = split_embedded_options(question)  # MLVU keeps the options apart; be sure
        video_file = raw_dir / VIDEO_DIR / stem / video
        added = conversion.add(source_id, video_file, task_type, question, answer, options, video_key=f"{stem}__{Path(video).stem}")
        if added and empty:
            conversion.exclude(
                source_id,
                f"{empty} empty candidate(s) '' in {path} dropped; the question is kept with its {len(options)} other options",
                kind="bad_row",
                unit="option list",
            )
    for task_type, count in sorted(generation.items()):
        name = GENERATION_TASKS.get(task_type, "free-form generation")
        conversion.exclude(
            stem,
            f"{count} question(s) of the generation task {task_type!r} ({name}) left out: "
            "no options and no single short reference answer (a free-form description of "
            "several sentences)",
            kind="out_of_scope",
            unit="task",
        )


def convert(
    raw_dir: str | Path, videos_dir: str | Path, levels: Iterable[int], *, sampling: str = "1fps"
) -> tuple[list[Instance], Excluded]:
    """Candidate instances from the multiple-choice tasks, and the report of what was left out."""
    raw_dir = Path(raw_dir)
    found = {path.stem: path for path in (raw_dir / JSON_DIR).glob("*.json")}
    if not found:
        raise ValueError(f"{SOURCE}: no annotation files {raw_dir / JSON_DIR}/*.json (download {RELEASE.repo_id})")
    conversion = Conversion(SOURCE, videos_dir, levels, TASK_CATEGORIES, sampling=sampling)
    for stem in sorted(set(MC_FILES) | set(GENERATION_FILES) | set(found)):
        if stem in found:
            _convert_file(conversion, raw_dir, found[stem])
        else:
            conversion.exclude(
                stem, f"{raw_dir / JSON_DIR / stem}.json: annotation file not found", kind="missing_annotation", unit="annotation file"
            )
    return conversion.result()
