"""MLVU source adapter: the dev set of the hub release (MLVU/MVLU) into candidate instances.

Role: one of VirtueBench's six long-video sources (interface in virtuebench.sources.base). The
multiple-choice questions become open-ended ones whose answer is the correct option's text.

Layout read (under `raw_dir`, as `huggingface-cli download MLVU/MVLU` leaves it):

- `MLVU/json/<N>_<task>.json`, nine files: `1_plotQA`, `2_needle`, `3_ego`, `4_count`, `5_order`,
  `6_anomaly_reco`, `7_topic_reasoning` (multiple choice) and `8_sub_scene`, `9_summary` (free-form
  generation). Each is a JSON list of {"video" (a file name, e.g. "movie101_66.mp4"), "duration"
  (seconds), "question" (without the options), "candidates" (the option texts, no letters; absent in
  the generation tasks), "answer" (the correct candidate's TEXT, not a letter), "question_type"
  ("plotQA", "findNeedle", "ego", "count", "order", "anomaly_reco", "topic_reasoning", "subPlot",
  "summary"; the task type)};
- `MLVU/video/<N>_<task>/<video>`: the videos, one folder per annotation file (its stem). The same
  file name occurs in several folders for different videos, so a video is named by folder and file.

Questions have no id in the source: one is built, `<file stem>/<index in the file>` ("1_plotQA/12").
The same file name occurs in several task folders for different videos, so each video's id is built
from folder and file (`mlvu_<N>_<task>__<stem>`) and two folders never share an id. A missing or unreadable annotation file is reported (one row per file) and the other files are
converted; `convert` raises ValueError only when `MLVU/json/` holds no annotation file at all.

The two generation tasks are left out, one report row per file with its question count: they have no
options and no single short reference answer. Their references are free text of several sentences that
MLVU's own evaluation has GPT-4 grade (a sub-scene caption against scoring points, a summary for
completeness and reliability: JUNJIE99/MLVU generation_evaluation/evaluate_ssc.py, calculate_sum.py);
the paper converts MCQs.

Confirmed from stored sources: the file and folder names under `MLVU/json/` and `MLVU/video/` (public
download scripts and loaders for MLVU/MVLU, one reading the hub cache snapshot
`datasets--MLVU--MVLU/snapshots/06ddc388...`); the entry fields, the answer as candidate text and the
generation tasks' lack of candidates (the authors' JUNJIE99/MLVU videochat2/choice_bench.py and
open_bench.py; other public loaders); the question_type values (loaders keyed on them, e.g.
VideoMind's mlvu.py); colliding file names across folders (a public converter that checked the data).
Not confirmed: that the pinned sha is the newest commit (only seen as a cache snapshot, not on the
hub's commit list); the exact content of `8_sub_scene.json` and `9_summary.json` beyond having no
candidates; whether any entry carries an id of its own (none was seen).
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
#: multiple-choice tasks' videos are downloaded (the generation tasks are left out, see above).
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
    # The generation tasks, mapped for completeness; convert leaves them out (see the module docstring).
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


def _mc_row(entry: Any) -> tuple[str, str, str, list[str]] | str:
    """(video, question, answer, options) of a multiple-choice entry, or why it is a bad row."""
    if not isinstance(entry, dict):
        return "not an object"
    video, question, answer = _text(entry.get("video")), _text(entry.get("question")), _text(entry.get("answer"))
    if not video or not question or not answer:
        return "needs a text 'video', 'question' and 'answer'"
    candidates = entry.get("candidates")
    options = [_text(candidate) for candidate in candidates] if isinstance(candidates, list) else []
    if len(options) < 2 or not all(options):
        return f"'candidates' {candidates!r} is not a list of at least two texts"
    if answer not in options:
        return f"answer {answer!r} is not one of the candidates {options}"
    return video, question, answer, options  # type: ignore[return-value]


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
            conversion.exclude(source_id, f"bad row in {path}: no 'question_type'")
            continue
        row = _mc_row(entry)
        if isinstance(row, str):
            conversion.exclude(source_id, f"bad row in {path}: {row}")
            continue
        video, question, answer, options = row
        question, _ = split_embedded_options(question)  # MLVU keeps the options apart; be sure
        video_file = raw_dir / VIDEO_DIR / stem / video
        conversion.add(source_id, video_file, task_type, question, answer, options,
                       video_key=f"{stem}__{Path(video).stem}")  # fmt: skip
    for task_type, count in sorted(generation.items()):
        name = GENERATION_TASKS.get(task_type, "free-form generation")
        conversion.exclude(stem, f"{count} question(s) of the generation task {task_type!r} ({name}) left out: "
                           "no options and no single short reference answer (a free-form description of "
                           "several sentences)")  # fmt: skip


def convert(raw_dir: str | Path, videos_dir: str | Path, levels: Iterable[int]) -> tuple[list[Instance], Excluded]:
    """Candidate instances from the multiple-choice tasks, and the report of what was left out."""
    raw_dir = Path(raw_dir)
    found = {path.stem: path for path in (raw_dir / JSON_DIR).glob("*.json")}
    if not found:
        raise ValueError(f"{SOURCE}: no annotation files {raw_dir / JSON_DIR}/*.json (download {RELEASE.repo_id})")
    conversion = Conversion(SOURCE, videos_dir, levels, TASK_CATEGORIES)
    for stem in sorted(set(MC_FILES) | set(GENERATION_FILES) | set(found)):
        if stem in found:
            _convert_file(conversion, raw_dir, found[stem])
        else:
            conversion.exclude(stem, f"{raw_dir / JSON_DIR / stem}.json: annotation file not found")
    return conversion.result()
