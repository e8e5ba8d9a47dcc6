"""The annotation round trip (VirtueBench (arXiv:2603.07071), section 3.2): export each kept question with its drafts
for human annotators, import their verified per-level answers into the instances table, and check the
answers against the evidence timestamps they gave.

Batch files are CSV (UTF-8, one row per question), the format documented in docs/annotation.md; a
later release of VirtueBench's own annotations imports through the same path.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from virtuebench import REFUSAL_ANSWER, is_refusal_answer
from virtuebench.instances import Instance
from virtuebench.levels import available_levels, evidence_is_seen, level_timestamps
from virtuebench.records import iter_jsonl
from virtuebench.support.tabular import write_csv

FORMAT = "virtuebench.annotation/1"
DECISIONS = ("keep", "discard")
FIXED_COLUMNS = [
    "instance_id",
    "source",
    "source_id",
    "video_id",
    "duration_s",
    "category",
    "task_type",
    "question",
    "options",
    "full_video_answer",
]
ANNOTATOR_COLUMNS = ["evidence", "decision", "annotator", "reviewer", "notes"]


class AnnotationError(ValueError):
    """A verified batch is malformed; the message names the file, the row and the column."""


def level_columns(levels: Sequence[int]) -> list[str]:
    columns = []
    for level in levels:
        columns += [f"draft_{level}", f"draft_evidence_{level}", f"frames_{level}", f"answer_{level}"]
    return columns


def batch_columns(levels: Sequence[int]) -> list[str]:
    return FIXED_COLUMNS + level_columns(levels) + ANNOTATOR_COLUMNS


# ---------------------------------------------------------------------------------------------
# Timestamps


_TIME = r"\d+(?::\d{1,2}){0,2}(?:\.\d+)?"


def parse_time(text: str) -> float:
    """'75', '1:15', '01:15', '0:01:15', '1:15.5' -> seconds."""
    text = text.strip()
    if not re.fullmatch(_TIME, text):
        raise ValueError(f"{text!r} is not a time (s, m:ss or h:mm:ss)")
    seconds = 0.0
    for part in text.split(":"):
        seconds = seconds * 60 + float(part)
    return seconds


def parse_evidence(text: str) -> list[list[float]]:
    """'0:15-0:19; 1:20' -> [[15, 20], [80, 81]]: intervals [start, end).

    Whole seconds name the seconds shown, so a range's end second is included ('0:15-0:19' covers
    [15, 20)) and a single time is its second ('1:20' -> [80, 81)). With a fraction the end is exact
    ('0:01.5-0:02.25' -> [1.5, 2.25)) and a single time covers one second from it. Separators: ';' or ','.
    Empty text or 'none' -> [].
    """
    text = (text or "").strip()
    if not text or text.lower() in {"none", "n/a", "-"}:
        return []
    intervals = []
    for piece in re.split(r"[;,]", text):
        piece = piece.strip()
        if not piece:
            continue
        if "-" in piece:
            start_text, _, end_text = piece.partition("-")
            start, end = parse_time(start_text), parse_time(end_text)
            if end < start:
                raise ValueError(f"range {piece!r} ends before it starts")
            whole = start == int(start) and end == int(end)
            intervals.append([start, end + 1.0 if whole or end == start else end])
        else:
            start = parse_time(piece)
            intervals.append([start, start + 1.0])
    return intervals


def format_time(seconds: float) -> str:
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    fraction = f"{seconds - whole:.3f}".rstrip("0").rstrip(".")[1:] if seconds != whole else ""
    return (f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}") + fraction


def format_evidence(intervals: Sequence[Sequence[float]]) -> str:
    """The inverse of parse_evidence: [[15, 20], [80, 81]] -> '0:15-0:19; 1:20'."""
    pieces = []
    for start, end in intervals:
        if start == int(start) and end == int(end):
            last = int(end) - 1  # a whole-second end is exclusive: name the last second shown
            pieces.append(format_time(start) if last <= start else f"{format_time(start)}-{format_time(last)}")
        elif end - start == 1.0:
            pieces.append(format_time(start))
        else:
            pieces.append(f"{format_time(start)}-{format_time(end)}")
    return "; ".join(pieces)


# ---------------------------------------------------------------------------------------------
# Drafts (per-level reference answers) and export


def split_draft(text: str | None) -> tuple[str, str]:
    """A reference-prompt reply -> (answer, evidence timestamps as written after 'Evidence:')."""
    if not text:
        return "", ""
    match = re.search(r"(?im)^\s*\**\s*evidence\s*\**\s*:\s*(.*)$", text)
    answer = text[: match.start()] if match else text
    answer = re.sub(r"(?i)^\s*\**\s*answer\s*\**\s*:\s*", "", answer.strip()).strip()
    return answer, match.group(1).strip() if match else ""


def read_drafts(paths: Sequence[str | Path]) -> dict[tuple[str, int], dict[str, Any]]:
    """(instance_id, level) -> the reference model's response record, from responses JSONL files."""
    drafts: dict[tuple[str, int], dict[str, Any]] = {}
    for path in paths:
        for record in iter_jsonl(path):
            if "level" in record and "instance_id" in record and not record["instance_id"].startswith("__"):
                drafts[(record["instance_id"], int(record["level"]))] = record
    return drafts


def export_batches(
    kept: Sequence[Instance],
    drafts: dict[tuple[str, int], dict[str, Any]],
    levels: Sequence[int],
    frames_dir: str | Path,
    out_dir: str | Path,
    batch_size: int = 50,
) -> list[Path]:
    """One CSV per batch of `batch_size` questions (grouped by video, so an annotator watches a video once)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("batch_*.csv"):
        old.unlink()
    ordered = sorted(kept, key=lambda inst: (inst.source, inst.video_id, inst.instance_id))
    columns = batch_columns(levels)
    written = []
    for number, start in enumerate(range(0, len(ordered), batch_size), start=1):
        path = out_dir / f"batch_{number:03d}.csv"
        rows = []
        for inst in ordered[start : start + batch_size]:
            row = {
                "instance_id": inst.instance_id,
                "source": inst.source,
                "source_id": inst.source_id,
                "video_id": inst.video_id,
                "duration_s": f"{inst.duration_s:.3f}",
                "category": inst.category,
                "task_type": inst.task_type,
                "question": inst.question,
                "options": " | ".join(inst.options),
                "full_video_answer": inst.answer,
                "decision": "keep",
                "evidence": format_evidence(inst.evidence),  # the source's own timestamps, where it has them
            }
            for level in levels:
                if level not in inst.answers:
                    continue  # the level is unavailable for this video: its cells stay empty
                record = drafts.get((inst.instance_id, level))
                if record is None or record.get("response") is None:
                    draft, evidence = "", ""
                    row[f"draft_{level}"] = f"[no draft: {record.get('error') if record else 'not asked'}]"
                else:
                    draft, evidence = split_draft(record["response"])
                    row[f"draft_{level}"] = draft
                row[f"draft_evidence_{level}"] = evidence
                row[f"frames_{level}"] = str(Path(frames_dir) / inst.video_id / str(level))
            rows.append(row)
        write_csv(path, rows, columns)
        written.append(path)
    return written


# ---------------------------------------------------------------------------------------------
# Import


@dataclass
class ImportResult:
    instances: list[Instance]
    report: list[dict[str, str]] = field(default_factory=list)  # instance_id, status, detail
    checks: list[dict[str, Any]] = field(default_factory=list)  # evidence disagreements


def normalize_answer(text: str) -> str:
    """The refusal string in any case, with or without its full stop, becomes the exact string."""
    stripped = text.strip()
    return REFUSAL_ANSWER if is_refusal_answer(stripped) else stripped


#: Columns every verified batch must have: the key, the decision, the evidence and the two people the paper names
#: ("Each instance is independently reviewed by at least two annotators: the first provides the initial annotation,
#: and the second verifies and corrects inaccuracies", VirtueBench (arXiv:2603.07071), section 3.2).
REQUIRED_COLUMNS = ("instance_id", "decision", "evidence", "annotator", "reviewer")


def people(text: str | None) -> list[str]:
    """The names in an annotator or reviewer cell: several are separated by ';' or ','."""
    return [name.strip() for name in re.split(r"[;,]", text or "") if name.strip()]


def check_people(row: dict[str, str]) -> list[str]:
    """The annotator and reviewer columns' problems: both filled, and the reviewer someone other than the annotator."""
    annotators, reviewers = people(row.get("annotator")), people(row.get("reviewer"))
    problems = []
    if not annotators:
        problems.append("column annotator: empty, but the first annotator must be named")
    if not reviewers:
        problems.append("column reviewer: empty, but a second annotator must verify the row")
    same = sorted({name.lower() for name in annotators} & {name.lower() for name in reviewers})
    if same:
        problems.append(
            f"column reviewer: {row.get('reviewer')!r} names the annotator {same[0]!r}, but the reviewer must be a second person"
        )
    return problems


def check_evidence(text: str | None, inst: Instance) -> tuple[list[list[float]], str | None]:
    """The evidence intervals of a kept row, or its problem: the paper's annotators "are required to specify timestamps
    corresponding to the evidence supporting each answer" (section 3.2), so evidence is required, must parse, and must
    lie within the video (an interval starts before its end and ends by the end of its last second)."""
    given = (text or "").strip()
    if not given or given.lower() in {"none", "n/a", "-"}:
        return [], f"column evidence: {repr(given) if given else 'empty'}, but the evidence's timestamps are required (e.g. 0:15-0:19)"
    try:
        intervals = parse_evidence(text or "")
    except ValueError as error:
        return [], f"column evidence: {error}"
    last = math.ceil(inst.duration_s - 1e-9)
    for start, end in intervals:
        if start >= inst.duration_s or end > last:
            shown = format_evidence([[start, end]])
            return (
                [],
                f"column evidence: {shown} is past the end of {inst.video_id} ({format_time(inst.duration_s)}, {inst.duration_s:.1f} s)",
            )
    return intervals, None


def _check_row(row: dict[str, str], inst: Instance, levels: Sequence[int]) -> tuple[dict[str, Any], list[str]]:
    """One verified row: its decision, answers and evidence, and every problem found in it."""
    problems = check_people(row)
    decision = (row.get("decision") or "keep").strip().lower()
    if decision not in DECISIONS:
        problems.append(f"column decision: {row.get('decision')!r} is not one of {list(DECISIONS)}")
    evidence: list[list[float]] = []
    answers: dict[int, str] = {}
    if decision == "keep":
        evidence, problem = check_evidence(row.get("evidence"), inst)
        problems += [problem] if problem else []
        for level in available_levels(inst.duration_s, levels):
            column = f"answer_{level}"
            value = (row.get(column) or "").strip()
            if not value:
                problems.append(f"column {column}: empty, but level {level} is available for {inst.video_id}")
            else:
                answers[level] = normalize_answer(value)
        for level in levels:
            if level not in available_levels(inst.duration_s, levels) and (row.get(f"answer_{level}") or "").strip():
                problems.append(f"column answer_{level}: level {level} is unavailable for {inst.video_id} ({inst.duration_s:.0f} s)")
    return {"decision": decision, "answers": answers, "evidence": evidence}, problems


def read_verified(verified_dir: str | Path, kept: dict[str, Instance], levels: Sequence[int]) -> dict[str, dict[str, Any]]:
    """instance_id -> {decision, answers, evidence, where} from every batch CSV in `verified_dir`.

    Every file and row is checked before anything is imported; the error lists one line per bad row (or file),
    naming the file, the line and each column at fault.
    """
    verified_dir = Path(verified_dir)
    files = sorted(verified_dir.glob("*.csv"))
    if not files:
        raise AnnotationError(f"{verified_dir}: no verified batch files (*.csv); see docs/annotation.md")
    rows: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8-sig").splitlines(keepends=True)
        except UnicodeDecodeError as error:
            errors.append(f"{path}: not UTF-8 ({error.reason} at byte {error.start}); save it as 'CSV UTF-8'")
            continue
        reader = csv.DictReader(lines)
        header = reader.fieldnames or []
        missing = [name for name in REQUIRED_COLUMNS if name not in header]
        if missing:
            errors.append(f"{path}: missing column(s) {missing}")
            continue
        for line, row in enumerate(reader, start=2):
            where = f"{path}:{line}"
            instance_id = (row.get("instance_id") or "").strip()
            if instance_id not in kept:
                errors.append(f"{where}: instance_id {instance_id!r} is not among the kept questions")
                continue
            if instance_id in rows:
                errors.append(f"{where}: instance_id {instance_id!r} is also annotated at {rows[instance_id]['where']}")
                continue
            record, problems = _check_row(row, kept[instance_id], levels)
            if problems:
                errors.append(f"{where}: " + "; ".join(problems))
            rows[instance_id] = {**record, "where": where}
    if errors:
        if len(errors) == 1:
            raise AnnotationError(errors[0])
        raise AnnotationError(f"{len(errors)} rows or files need fixing (docs/annotation.md):\n  " + "\n  ".join(errors))
    return rows


def draft_answers(inst: Instance, drafts: dict[tuple[str, int], dict[str, Any]], levels: Sequence[int]) -> dict[int, str] | None:
    answers = {}
    for level in available_levels(inst.duration_s, levels):
        record = drafts.get((inst.instance_id, level))
        answer = split_draft(record.get("response") if record else None)[0]
        if not answer:
            return None
        answers[level] = normalize_answer(answer)
    return answers


def import_annotations(
    kept: Sequence[Instance],
    verified_dir: str | Path | None,
    levels: Sequence[int],
    drafts: dict[tuple[str, int], dict[str, Any]] | None = None,
) -> ImportResult:
    """The final instances: verified answers where annotated; drafts for the rest only when `drafts` is given.

    Without drafts, a question nobody annotated is left out and reported; a discarded one too.
    """
    by_id = {inst.instance_id: inst for inst in kept}
    verified = read_verified(verified_dir, by_id, levels) if verified_dir is not None else {}
    result = ImportResult([])
    for inst in sorted(kept, key=lambda inst: inst.instance_id):
        row = verified.get(inst.instance_id)
        if row is not None and row["decision"] == "discard":
            result.report.append({"instance_id": inst.instance_id, "status": "discarded", "detail": row["where"]})
            continue
        if row is not None:
            final = replace(inst, answers=row["answers"], evidence=row["evidence"])
            status, detail = "verified", row["where"]
        elif drafts is not None and (answers := draft_answers(inst, drafts, levels)) is not None:
            final = replace(inst, answers=answers)
            status, detail = "draft", "unverified: the reference model's draft answers"
        else:
            reason = "not annotated" if drafts is None else "not annotated, and a draft answer is missing"
            result.report.append({"instance_id": inst.instance_id, "status": "left_out", "detail": reason})
            continue
        result.instances.append(final)
        result.report.append({"instance_id": inst.instance_id, "status": status, "detail": detail})
        result.checks += evidence_disagreements(final)
    return result


def evidence_disagreements(inst: Instance) -> list[dict[str, Any]]:
    """Levels where the annotated answer and the evidence timestamps disagree about answerability.

    The evidence is seen at a level when every interval holds one of the level's sampled timestamps
    (virtuebench.levels); a question without evidence timestamps cannot be checked.
    """
    if not inst.evidence:
        return []
    rows = []
    for level, answer in sorted(inst.answers.items()):
        seen = evidence_is_seen(inst.evidence, level_timestamps(level, inst.duration_s))
        annotated_answerable = not is_refusal_answer(answer)
        if seen != annotated_answerable:
            rows.append(
                {
                    "instance_id": inst.instance_id,
                    "level": level,
                    "annotated": "answerable" if annotated_answerable else "unanswerable",
                    "evidence_says": "answerable" if seen else "unanswerable",
                    "evidence": format_evidence(inst.evidence),
                }
            )
    return rows
