"""The supplementary's Table 1: the same models on the source benchmarks' own questions at 64 frames,
in their original multiple-choice form and in the open-ended form, beside their VirtueBench overall.

Both forms score against the full-video answer, as existing benchmarks do; that is the point of the
comparison. The MCQ form lists the options and asks for the letter (the `mcq` judge reads it); the
open-ended form is the converted question, judged like VirtueBench's.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from virtuebench.instances import Instance
from virtuebench.levels import clip_frame_count, clip_timestamps
from virtuebench.records import iter_jsonl
from virtuebench.sources import longvideobench, videoevalpro
from virtuebench.sources.base import MISSING_VIDEO, option_letter
from virtuebench.support.tabular import latex_escape, write_csv

#: The MCQ instruction (the papers do not print theirs; this is the usual one of video MCQ evaluations).
MCQ_INSTRUCTION = "Answer with the option's letter from the given choices directly."
FORMS = ("mcq", "oe")
#: The name of VideoEval-Pro's authors' grader in its judgments (supplement.videoevalpro_grader: authors).
AUTHORS_GRADER_JUDGE = "videoevalpro-authors"
#: Their suffix to VideoEval-Pro's open-ended question (virtuebench.prompts.QUESTION_SUFFIXES).
VIDEOEVALPRO_SUFFIX = "concise"
#: Sources that are open-ended by design: the supplement's Table 1 has one column (OE) for VideoEval-Pro.
OPEN_ENDED_ONLY = frozenset({"videoeval-pro"})


def forms_of(source: str) -> tuple[str, ...]:
    """The table's forms for a source, in column order."""
    return ("oe",) if source in OPEN_ENDED_ONLY else ("oe", "mcq")


#: Column heads as the papers spell the benchmarks.
SOURCE_NAMES = {
    "mlvu": "MLVU",
    "lvbench": "LVBench",
    "longvideobench": "LongVideoBench",
    "videoeval-pro": "VideoEval-Pro",
    "video-mme": "Video-MME",
    "moviechat-1k": "MovieChat-1K",
    "allvb": "ALLVB",
}


def mcq_question(inst: Instance) -> str:
    lines = [inst.question, *(f"{option_letter(i)}. {option}" for i, option in enumerate(inst.options)), MCQ_INSTRUCTION]
    return "\n".join(lines)


def correct_index(inst: Instance) -> int | None:
    """The correct option's position: where the answer is an option's text (the MCQ sources converted as the
    paper does), or, for VideoEval-Pro, whose answer is its own open-ended gold text, the letter its adapter
    keeps at the end of `source_id` ('0007-B'); None where neither holds."""
    if inst.answer in inst.options:
        return inst.options.index(inst.answer)
    if inst.source == videoevalpro.SOURCE:
        letter = videoevalpro.letter_of(inst.source_id)
        index = ord(letter) - ord("A") if len(letter) == 1 else -1
        return index if 0 <= index < len(inst.options) else None
    return None


def has_mcq(inst: Instance) -> bool:
    """Whether the question can be asked as a multiple choice: options, and a correct one among them."""
    return bool(inst.options) and correct_index(inst) is not None


def make_sets(
    candidates: Sequence[Instance],
    level: int = 64,
    max_questions: int | None = None,
    seed: int = 0,
    pool: set[str] | None = None,
) -> dict[str, list[Instance]]:
    """{"mcq": [...], "oe": [...]}: the questions that have `level`, with `pool` (question_pool filtered: the instance
    ids the curation's open-ended filters kept) only those. A source converted from multiple choice keeps the
    questions with options, the same ones in both forms (the MCQ form scored by the correct letter, the open-ended one
    against the source's answer). A source that is open-ended by design (OPEN_ENDED_ONLY: VideoEval-Pro) keeps every
    question in the open-ended set, as its authors' open-ended scoring reads every row, and only those with options in
    the MCQ set (which its column of the table does not show)."""
    eligible = sorted(
        (
            inst
            for inst in candidates
            if level in inst.answers and (inst.source in OPEN_ENDED_ONLY or has_mcq(inst)) and (pool is None or inst.instance_id in pool)
        ),
        key=lambda inst: inst.instance_id,
    )
    if max_questions is not None and len(eligible) > max_questions:
        eligible = sorted(random.Random(seed).sample(eligible, max_questions), key=lambda inst: inst.instance_id)
    return {
        "mcq": [
            replace(inst, question=mcq_question(inst), answers={level: option_letter(correct_index(inst))})
            for inst in eligible
            if has_mcq(inst)
        ],
        "oe": [replace(inst, answers={level: inst.answer}) for inst in eligible],
    }


def with_subtitles(rows: Sequence[Instance], raw_dir: str | Path, level: int, sampling: str) -> list[Instance]:
    """supplement.longvideobench_subtitles: interleaved: each LongVideoBench question with the release's subtitles
    written before it, placed among the frames as the release's loader interleaves them (longvideobench.
    interleave_subtitles) at the frame times its frame job samples (`level` frames under `sampling` over the
    question's duration_s, the release's own `duration` with this setting). Other sources' rows are as they were."""
    refs = longvideobench.subtitle_refs(raw_dir)
    files: dict[Path, list[dict]] = {}
    out = []
    for inst in rows:
        if inst.source != longvideobench.SOURCE:
            out.append(inst)
            continue
        if inst.source_id not in refs:
            raise ValueError(
                f"{longvideobench.SOURCE}: question {inst.source_id!r} has no subtitle_path in {Path(raw_dir) / longvideobench.ANNOTATIONS}"
            )
        path, starting, duration = refs[inst.source_id]
        if path not in files:
            files[path] = longvideobench.read_subtitles(path)
        times = clip_timestamps(clip_frame_count(level, inst.duration_s, sampling), inst.duration_s)
        text = longvideobench.subtitles_text(longvideobench.interleave_subtitles(times, files[path], starting, duration), len(times))
        out.append(replace(inst, question=f"{text}\n\n{inst.question}") if text else inst)
    return out


@dataclass(frozen=True)
class Choices:
    """The protocol choices the paper's supplement does not state (docs/supplement.md): config `supplement`."""

    mcq_prompt: str = "standard"
    oe_prompt: str = "honest"
    mlvu_average: str = "pooled"  # pooled over questions, or "m-avg": the mean of MLVU's task accuracies
    question_pool: str = "all"  # every question with options, or "filtered": those the curation's open-ended filters keep
    short_video_frames: str = "repeat"  # `level` frames over any video, or "cap": one per whole second of a shorter one
    videoevalpro_grader: str = "virtuebench"  # VideoEval-Pro's OE judged by the run's judge, or "authors": its authors' grader
    videoevalpro_suffix: bool | None = None  # the authors' suffix on VideoEval-Pro's OE question; None: as the grader
    longvideobench_subtitles: str | bool = False  # LongVideoBench frames only, or "interleaved": its subtitles as its loader places them

    @property
    def uses_suffix(self) -> bool:
        return self.videoevalpro_grader == "authors" if self.videoevalpro_suffix is None else self.videoevalpro_suffix

    def prompt_of(self, source: str, form: str) -> str:
        """The prompt a form of a source's questions is asked with: VideoEval-Pro's open-ended one with its authors'
        suffix after the question where it is used (virtuebench.prompts.QUESTION_SUFFIXES)."""
        if form == "mcq":
            return self.mcq_prompt
        return f"{self.oe_prompt}+{VIDEOEVALPRO_SUFFIX}" if source == videoevalpro.SOURCE and self.uses_suffix else self.oe_prompt

    def judge_of(self, source: str, form: str) -> str | None:
        """The judge of a form of a source's answers: `mcq` (by letter), AUTHORS_GRADER_JUDGE (VideoEval-Pro's
        authors' grader), or None: the run's judge (config.judge)."""
        if form == "mcq":
            return "mcq"
        return AUTHORS_GRADER_JUDGE if source == videoevalpro.SOURCE and self.videoevalpro_grader == "authors" else None

    def describe(self, level: int) -> str:
        mlvu = (
            "the mean of its task accuracies (M-Avg, as MLVU's authors report)"
            if self.mlvu_average == "m-avg"
            else "pooled over its questions"
        )
        pool = (
            "the questions with options that the curation's answer-length and Keep/Discard filters keep, run on the table's own "
            "candidates (videos of any length; VideoEval-Pro: every question)"
            if self.question_pool == "filtered"
            else "every question with options (VideoEval-Pro: every question, with options or not), not a filtered pool"
        )
        short = (
            rf"one per whole second of a video shorter than {level} s (as LongVideoBench's loader)"
            if self.short_video_frames == "cap"
            else rf"whatever its length (a video shorter than {level} s has them less than 1 s apart)"
        )
        grader = (
            "VideoEval-Pro: by its authors' grader, GPT-4o-2024-08-06 with their prompt, correct where it grades A"
            if self.videoevalpro_grader == "authors"
            else "VideoEval-Pro too, not with its authors' grader"
        )
        suffix = "with" if self.uses_suffix else "without"
        subtitles = (
            "LongVideoBench with its subtitles placed among the frames by time as its loader does, written before the "
            "question, and frames within the release's stated duration"
            if self.longvideobench_subtitles == "interleaved"
            else "LongVideoBench without its subtitles (frames only, over the video file's length)"
        )
        return (
            rf"Protocol: MCQ with the \texttt{{{self.mcq_prompt}}} prompt, scored by its letter; OE with the "
            rf"\texttt{{{self.oe_prompt}}} prompt, judged by the run's judge against the release's answer ({grader}), "
            rf"VideoEval-Pro's question {suffix} its authors' suffix ``Keep the answer short and concise.''; {pool}; "
            rf"MLVU {mlvu}; {level} frames at the centres of {level} equal segments of the whole video, {short}; {subtitles}."
        )


def missing_videos(excluded: dict[str, Path]) -> dict[str, int]:
    """source -> questions its conversion left out because their video is missing (a YouTube video gone, a file
    not in the release), counted by the `reason_kind` column of the source's excluded.csv (docs/records.md)."""
    counts = {}
    for source, path in excluded.items():
        with Path(path).open(newline="") as handle:
            reader = csv.DictReader(handle)
            if "reason_kind" not in (reader.fieldnames or []):
                raise ValueError(
                    f"{path}: no reason_kind column (written by an older virtuebench.sources); delete it and rerun the conversion"
                )
            counts[source] = sum(row["reason_kind"] == MISSING_VIDEO for row in reader)
    return counts


def accuracy(path: str | Path, by_task: bool = False) -> tuple[float, int, int]:
    """(accuracy in percent, n_correct, n) of a judgments file; an invalid verdict counts as wrong. `by_task`: the
    accuracy is the mean of the accuracies of each task type (MLVU's M-Avg)."""
    records = list(iter_jsonl(path))
    right = [bool(record.get("valid") and record.get("judgement") == 1) for record in records]
    correct = sum(right)
    if not records:
        return float("nan"), 0, 0
    if by_task:
        tasks: dict[str, list[bool]] = {}
        for record, ok in zip(records, right):
            tasks.setdefault(str(record.get("task_type")), []).append(ok)
        return 100.0 * sum(sum(v) / len(v) for v in tasks.values()) / len(tasks), correct, len(records)
    return 100.0 * correct / len(records), correct, len(records)


def virtuebench_overall(scores_csv: str | Path, prompt: str, level: int) -> dict[str, float]:
    """model -> VirtueBench overall accuracy at `level` with `prompt`, from results/scores.csv."""
    with open(scores_csv, newline="") as handle:
        return {
            row["model"]: float(row["accuracy"])
            for row in csv.DictReader(handle)
            if row["prompt"] == prompt and row["level"] == str(level) and row["subset"] == "overall"
        }


def _missing_note(missing: dict[str, int] | None, sources: Sequence[str]) -> str:
    if missing is None:
        return ""
    lost = [f"{SOURCE_NAMES.get(source, source)} {missing[source]}" for source in sources if missing.get(source)]
    return " Questions left out because their video is missing: " + (", ".join(lost) if lost else "none") + "."


def _model_choices_note(model_choices: str) -> str:
    """The table's models' named registry choices in effect (config.model_choices), or "" where none declares one."""
    return f" Model choices: {latex_escape(model_choices)}." if model_choices else ""


def write_table(
    judgments: dict[tuple[str, str, str], Path],
    overall: dict[str, float],
    models: Sequence[str],
    sources: Sequence[str],
    level: int,
    csv_path: str | Path,
    tex_path: str | Path,
    choices: Choices = Choices(),
    missing: dict[str, int] | None = None,
    model_choices: str = "",
) -> None:
    """One row per model: OE and MCQ accuracy per source (OE only where the source is open-ended by design),
    then VirtueBench overall; the CSV keeps n and the number correct too; the caption states the choices."""
    rows = []
    for model in models:
        row: dict[str, object] = {"model": model}
        for source in sources:
            for form in forms_of(source):
                value, correct, n = accuracy(judgments[model, source, form], by_task=source == "mlvu" and choices.mlvu_average == "m-avg")
                row[f"{source}_{form}"] = round(value, 2)
                row[f"{source}_{form}_n"] = n
                row[f"{source}_{form}_correct"] = correct
        row["virtuebench_overall"] = overall.get(model, float("nan"))
        rows.append(row)
    write_csv(csv_path, rows, list(rows[0]) if rows else ["model"])
    columns = "l" + "".join("r" * len(forms_of(source)) for source in sources) + "r"
    head = " & ".join(
        rf"\multicolumn{{{len(forms_of(source))}}}{{c}}{{{latex_escape(SOURCE_NAMES.get(source, source))}}}" for source in sources
    )
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\begin{{tabular}}{{{columns}}}",
        r"\toprule",
        rf"Model & {head} & VirtueBench \\",
        "& " + " & ".join(" & ".join(form.upper() for form in forms_of(source)) for source in sources) + r" & Overall \\",
        r"\midrule",
    ]

    def cell(value: float) -> str:  # "--": no question of that source has options (MovieChat-1K is open-ended)
        return "--" if value != value else f"{value:.2f}"

    for row in rows:
        cells = [cell(row[f"{source}_{form}"]) for source in sources for form in forms_of(source)]
        lines.append(f"{latex_escape(row['model'])} & " + " & ".join(cells) + f" & {cell(row['virtuebench_overall'])} \\\\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{Accuracy (\%) on the source benchmarks' questions at {level} frames against their full-video "
        r"answers, multiple-choice (MCQ) and open-ended (OE), beside VirtueBench overall at the same level. "
        rf"{choices.describe(level)}{_missing_note(missing, sources)}{_model_choices_note(model_choices)}}}",
        r"\end{table}",
        "",
    ]
    Path(tex_path).write_text("\n".join(lines))
