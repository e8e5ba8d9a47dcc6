"""The instances table (results/instances.parquet): one row per question, written by every source adapter.

Columns (docs/records.md has the full description):
instance_id, video_id, source, category, task_type, question, answer (full-video answer),
options (MCQ options where the source had them, else empty), duration_s, video_path,
answers (list of {level, answer}: the per-level ground truth), evidence (list of [start_s, end_s]) and
source_id (the question's id in its source benchmark; empty for the demo).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import polars as pl

from virtuebench import is_refusal_answer

#: CVRR-ES's 11 dimensions (CVRR-ES (arXiv:2405.03690), section 3.1): the release's folder names, in the row order of its Table 2.
#: They are the categories of CVRR-ES instances, so they live with the instances table.
CVRR_DIMENSIONS = (
    "multiple_actions_in_a_single_video",
    "fine_grained_action_understanding",
    "partial_actions",
    "time_order_understanding",
    "non_existent_actions_with_existent_scene_depictions",
    "non_existent_actions_with_non_existent_scene_depictions",
    "continuity_and_object_instance_count",
    "unusual_and_physically_anomalous_activities",
    "interpretation_of_social_context",
    "understanding_emotional_context",
    "interpretation_of_visual_context",
)

#: The category of a question whose task type its source's adapter does not know, kept where no table needs the
#: category (VideoEval-Pro: the supplement's Table 1 does not split by it); counted in neither category's numbers.
UNCATEGORIZED = "uncategorized"
#: VirtueBench's two categories; CVRR-ES instances carry their dimension instead.
CATEGORIES = ("perception", "reasoning", *CVRR_DIMENSIONS, UNCATEGORIZED)

SCHEMA = {
    "instance_id": pl.String,
    "video_id": pl.String,
    "source": pl.String,
    "category": pl.String,
    "task_type": pl.String,
    "question": pl.String,
    "answer": pl.String,
    "options": pl.List(pl.String),
    "duration_s": pl.Float64,
    "video_path": pl.String,
    "answers": pl.List(pl.Struct({"level": pl.Int64, "answer": pl.String})),
    "evidence": pl.List(pl.List(pl.Float64)),
    "source_id": pl.String,
}
#: Columns added after the first release: a table without them reads with this default.
OPTIONAL_COLUMNS = {"source_id": ""}


class InstancesError(ValueError):
    """The instances table is malformed; the message names the file, the row and the column."""


@dataclass(frozen=True)
class Instance:
    instance_id: str
    video_id: str
    source: str
    category: str
    task_type: str
    question: str
    answer: str
    duration_s: float
    video_path: str
    answers: dict[int, str]
    evidence: list[list[float]] = field(default_factory=list)
    options: list[str] = field(default_factory=list)
    source_id: str = ""

    def is_unanswerable(self, level: int) -> bool:
        return is_refusal_answer(self.answers[level])


def to_frame(instances: Sequence[Instance]) -> pl.DataFrame:
    rows = [
        {
            "instance_id": inst.instance_id,
            "video_id": inst.video_id,
            "source": inst.source,
            "category": inst.category,
            "task_type": inst.task_type,
            "question": inst.question,
            "answer": inst.answer,
            "options": list(inst.options),
            "duration_s": float(inst.duration_s),
            "video_path": inst.video_path,
            "answers": [{"level": level, "answer": text} for level, text in sorted(inst.answers.items())],
            "evidence": [[float(start), float(end)] for start, end in inst.evidence],
            "source_id": inst.source_id,
        }
        for inst in instances
    ]
    return pl.DataFrame(rows, schema=SCHEMA)


def write_instances(instances: Sequence[Instance], path: str | Path) -> None:
    validate(instances, where=str(path))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    to_frame(instances).write_parquet(tmp)
    tmp.replace(path)


def read_instances(path: str | Path) -> list[Instance]:
    path = Path(path)
    if not path.exists():
        raise InstancesError(f"{path}: instances table not found")
    try:
        frame = pl.read_parquet(path)
    except Exception as error:  # polars raises several unrelated types for a bad file
        raise InstancesError(f"{path}: not a readable parquet file ({error})") from None
    missing = [name for name in SCHEMA if name not in frame.columns and name not in OPTIONAL_COLUMNS]
    if missing:
        raise InstancesError(f"{path}: missing column(s) {missing}; expected {list(SCHEMA)}")
    instances = []
    for number, row in enumerate(frame.iter_rows(named=True)):
        try:
            instances.append(
                Instance(
                    instance_id=row["instance_id"],
                    video_id=row["video_id"],
                    source=row["source"],
                    category=row["category"],
                    task_type=row["task_type"],
                    question=row["question"],
                    answer=row["answer"],
                    duration_s=float(row["duration_s"]),
                    video_path=row["video_path"],
                    answers={int(item["level"]): item["answer"] for item in row["answers"] or []},
                    evidence=[list(interval) for interval in row["evidence"] or []],
                    options=list(row["options"] or []),
                    source_id=row.get("source_id") or OPTIONAL_COLUMNS["source_id"],
                )
            )
        except (TypeError, KeyError, ValueError) as error:
            raise InstancesError(f"{path}: row {number}: {error}") from None
    validate(instances, where=str(path))
    return instances


def items_for_level(instances: Sequence[Instance], level: int) -> list[Instance]:
    """The instances that have the level (a ground truth there), in instance_id order: the items of that level's jobs."""
    return sorted((inst for inst in instances if level in inst.answers), key=lambda inst: inst.instance_id)


def content_digest(instances: Sequence[Instance]) -> str:
    """A digest of the rows, in order: equal for equal tables whenever and however often they were written, so a
    rule can depend on what a table says rather than on when it was written (rules/curation.smk, kept_digest)."""
    rows = [asdict(inst) | {"answers": sorted(inst.answers.items())} for inst in instances]
    return hashlib.sha256(json.dumps(rows, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def validate(instances: Sequence[Instance], where: str) -> None:
    seen: set[str] = set()
    for number, inst in enumerate(instances):
        label = f"{where}: row {number} (instance_id {inst.instance_id!r})"
        if not inst.instance_id:
            raise InstancesError(f"{where}: row {number}: empty instance_id")
        if inst.instance_id in seen:
            raise InstancesError(f"{label}: duplicate instance_id")
        seen.add(inst.instance_id)
        if inst.category not in CATEGORIES:
            raise InstancesError(f"{label}: category {inst.category!r} is not one of {list(CATEGORIES)}")
        if not inst.question.strip():
            raise InstancesError(f"{label}: empty question")
        for interval in inst.evidence:
            if len(interval) != 2 or not interval[0] <= interval[1]:
                raise InstancesError(f"{label}: evidence interval {interval} is not [start_s, end_s] with start <= end")
        for level, text in inst.answers.items():
            if not isinstance(text, str) or not text.strip():
                raise InstancesError(f"{label}: empty answer at level {level}")


def videos(instances: Sequence[Instance]) -> dict[str, str]:
    """video_id -> video_path, refusing one id that points at two files."""
    paths: dict[str, str] = {}
    for inst in instances:
        previous = paths.setdefault(inst.video_id, inst.video_path)
        if previous != inst.video_path:
            raise InstancesError(f"video_id {inst.video_id!r} points at two files: {previous!r} and {inst.video_path!r}")
    return paths
