"""Statistics that depend only on the data: counts per source, category and task type, the per-source
table of the curation funnel (what each filter removed), and a run's counts beside the paper's: those it states, and
those its Tables 1 and 2 imply (virtuebench.report.paper).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from virtuebench import is_refusal_answer
from virtuebench.instances import Instance
from virtuebench.levels import LEVELS, is_available
from virtuebench.report.paper import implied_counts, level_note
from virtuebench.support.tabular import latex_escape


def composition(instances: Sequence[Instance]) -> list[dict[str, Any]]:
    """One row per (source, category, task_type): questions, videos, and unanswerable clips among all clips."""
    groups: dict[tuple[str, str, str], list[Instance]] = {}
    for inst in instances:
        groups.setdefault((inst.source, inst.category, inst.task_type), []).append(inst)
    rows = []
    for (source, category, task_type), members in sorted(groups.items()):
        clips = [answer for inst in members for answer in inst.answers.values()]
        rows.append(
            {
                "source": source,
                "category": category,
                "task_type": task_type,
                "n_questions": len(members),
                "n_videos": len({inst.video_id for inst in members}),
                "n_clips": len(clips),
                "n_unanswerable_clips": sum(is_refusal_answer(answer) for answer in clips),
            }
        )
    return rows


def source_summary(instances: Sequence[Instance]) -> list[dict[str, Any]]:
    """One row per source and a total: questions, videos, perception/reasoning split, mean duration."""
    rows = []
    sources = sorted({inst.source for inst in instances})
    for source in [*sources, "total"]:
        members = [inst for inst in instances if source in ("total", inst.source)]
        if not members:
            continue
        categories = Counter(inst.category for inst in members)
        durations = {inst.video_id: inst.duration_s for inst in members}
        rows.append(
            {
                "source": source,
                "n_questions": len(members),
                "n_videos": len(durations),
                "perception": categories.get("perception", 0),
                "reasoning": categories.get("reasoning", 0),
                "mean_duration_s": round(sum(durations.values()) / len(durations), 1),
                "share_percent": round(100 * len(members) / len(instances), 2),
            }
        )
    return rows


def summary_tex(rows: Sequence[dict[str, Any]], caption: str) -> str:
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\begin{tabular}{lrrrrrr}",
        r"\toprule",
        r"Source & Questions & Videos & Perception & Reasoning & Mean duration (s) & Share (\%) \\",
        r"\midrule",
    ]
    for row in rows:
        if row["source"] == "total":
            lines.append(r"\midrule")
        lines.append(
            f"{latex_escape(row['source'])} & {row['n_questions']} & {row['n_videos']} & {row['perception']} & "
            f"{row['reasoning']} & {row['mean_duration_s']:.1f} & {row['share_percent']:.2f} \\\\"
        )
    lines += [r"\bottomrule", r"\end{tabular}", f"\\caption{{{caption}}}", r"\end{table}", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# The paper's counts beside a run's


@dataclass(frozen=True)
class PaperCount:
    """One count the paper states: where in the pipeline (`stage`), at which frame level (`all`: every level), of
    what, the figure, and the paper's words with their section."""

    stage: str
    level: str
    measure: str
    figure: int
    says: str


#: Every count VirtueBench (arXiv:2603.07071) states for its curation, in pipeline order. The stages are the funnel's:
#: `collected` (the converted candidates), one per filter (answer_length, answerability, difficulty: what it kept),
#: `annotated` (the instances table). "Up to 512 frames" counts the instances whose video reaches level 512 (915 and
#: 587 are nested: 915 + 587 exceeds 1,328).
COLLECTION = "section 3.2, Data Collection: the initial collection comprises 3,042 videos and 33,400 questions"
LEVELS_SAID = "section 3.3: among these instances, 915 can be sampled to produce clips of up to 512 frames, and 587 up to 1,024"
CATEGORIES_SAID = "section 3.3: VirtueBench contains 767 perception and 561 reasoning questions"
#: Not stated: what Table 1's 64-frame Perception / Reasoning accuracies imply (two decimals fit one count each; docs/choices.md).
CATEGORIES_IMPLIED = (
    "implied, not stated: Table 1's 64-frame P / R accuracies fit exactly 751 perception and 577 reasoning items (LLaVA-Video-7B "
    "27.70 = 208/751, 18.20 = 105/577; Qwen3VL-32B 398/751, 277/577; Qwen2.5VL-72B 397/751, 258/577; InternVL3.5-8B-RL "
    "228/751, 136/577), and none fits section 3.3's 767 / 561"
)
PAPER_COUNTS = (
    PaperCount("collected", "all", "videos", 3042, COLLECTION),
    PaperCount("collected", "all", "questions", 33400, COLLECTION),
    PaperCount("difficulty", "all", "questions", 2500, "section 3.2, Quality Filtering: approximately 2,500 open-ended QA pairs"),
    PaperCount("annotated", "all", "instances", 1328, "sections 3.2 (Annotation and Verification) and 3.3: 1,328 instances"),
    PaperCount("annotated", "all", "videos", 901, "section 3.3: 1,328 instances in total, corresponding to 901 original videos"),
    PaperCount("annotated", "512", "instances", 915, LEVELS_SAID),
    PaperCount("annotated", "1024", "instances", 587, LEVELS_SAID),
    PaperCount("annotated", "all", "perception questions", 767, CATEGORIES_SAID),
    PaperCount("annotated", "all", "reasoning questions", 561, CATEGORIES_SAID),
)


def implied_paper_counts() -> tuple[PaperCount, ...]:
    """The counts the paper's Tables 1 and 2 imply at each level: its items and its unanswerable items, those that
    most rows fit as k/n (virtuebench.report.paper.implied_counts), with the rows that fit others named."""
    counts = []
    for level, implied in implied_counts().items():
        note = level_note(level, 2)
        says = f"Tables 1 and 2, implied: the count most of their rows at {level} frames fit (each percentage k/n)"
        says += f"; rows that fit other counts: {note}" if note else ""
        counts.append(PaperCount("annotated", str(level), "instances", implied.n, says))
        counts.append(PaperCount("annotated", str(level), "unanswerable instances", implied.unanswerable, says))
        if level == 64:  # the run counts its categories at 64 frames (annotated_counts), where Table 1 implies them
            reasoning = implied.n - implied.perception
            counts.append(PaperCount("annotated", "64", "perception questions", implied.perception, CATEGORIES_IMPLIED))
            counts.append(PaperCount("annotated", "64", "reasoning questions", reasoning, CATEGORIES_IMPLIED))
    return tuple(counts)


def paper_counts() -> dict[tuple[str, str, str], PaperCount]:
    """Every count of the paper by (stage, level, measure): those it states (PAPER_COUNTS), then those its tables imply;
    where it does both, the stated figure, with what the tables imply beside it in the words."""
    counts = {(count.stage, count.level, count.measure): count for count in PAPER_COUNTS}
    for count in implied_paper_counts():
        key = (count.stage, count.level, count.measure)
        stated = counts.get(key)
        if stated is None:
            counts[key] = count
        else:
            implied = "the same" if stated.figure == count.figure else f"{count.figure:,}, not {stated.figure:,}"
            counts[key] = PaperCount(*key, stated.figure, f"{stated.says}; {count.says}: {implied}")
    return counts


PAPER_COUNT_COLUMNS = ["stage", "level", "measure", "run", "paper", "ratio", "paper_says"]
FILTER_STAGES = ("answer_length", "answerability", "difficulty")


def funnel_counts(candidates: Sequence[Instance], summaries: Iterable[Mapping[str, Any]], kept: Sequence[Instance]) -> list[dict[str, Any]]:
    """A run's curation funnel, all sources together: the collected candidates, then each filter's kept questions
    (from the filters' summaries), and the videos the last filter kept."""
    out: dict[str, int] = dict.fromkeys(FILTER_STAGES, 0)
    for summary in summaries:
        out[summary["stage"]] = out.get(summary["stage"], 0) + int(summary["n_out"])
    rows = [
        {"stage": "collected", "level": "all", "measure": "videos", "run": len({inst.video_id for inst in candidates})},
        {"stage": "collected", "level": "all", "measure": "questions", "run": len(candidates)},
    ]
    rows += [{"stage": stage, "level": "all", "measure": "questions", "run": out[stage]} for stage in FILTER_STAGES]
    rows.append({"stage": "difficulty", "level": "all", "measure": "videos", "run": len({inst.video_id for inst in kept})})
    return rows


def annotated_counts(instances: Sequence[Instance]) -> list[dict[str, Any]]:
    """A run's instances table counted as the paper counts it (section 3.3): instances, videos, the instances whose video
    reaches each of the paper's five levels (whatever levels the run built) and how many of them are unanswerable there
    (as Tables 1 and 2 imply them), and the perception/reasoning split, of all instances (section 3.3's 767 / 561) and
    of those reaching 64 frames (Table 1's implied 751 / 577)."""
    categories = Counter(inst.category for inst in instances)
    at_64 = Counter(inst.category for inst in instances if is_available(64, inst.duration_s))
    rows = [
        {"stage": "annotated", "level": "all", "measure": "instances", "run": len(instances)},
        {"stage": "annotated", "level": "all", "measure": "videos", "run": len({inst.video_id for inst in instances})},
    ]
    for level in LEVELS:
        reached = [inst for inst in instances if is_available(level, inst.duration_s)]
        unanswerable = sum(is_refusal_answer(inst.answers.get(level, "")) for inst in reached)
        rows.append({"stage": "annotated", "level": str(level), "measure": "instances", "run": len(reached)})
        rows.append({"stage": "annotated", "level": str(level), "measure": "unanswerable instances", "run": unanswerable})
    rows += [
        {"stage": "annotated", "level": level, "measure": f"{name} questions", "run": counted.get(name, 0)}
        for level, counted in (("all", categories), ("64", at_64))
        for name in ("perception", "reasoning")
    ]
    return rows


def with_categories(instances: Sequence[Instance], categories: Mapping[str, str]) -> list[Instance]:
    """The instances with each task type `categories` maps in its mapped category (report.categories), as the scores
    count them; the others as their adapter recorded them."""
    return [replace(inst, category=categories.get(inst.task_type, inst.category)) for inst in instances]


def beside_paper(measured: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each measured row with the paper's figure for it, run / paper (3 decimals) and the paper's words; a row the paper
    gives no figure for keeps both empty. A paper count of a stage measured here but not matched is an error (a
    count the comparison would silently drop)."""
    paper = paper_counts()
    rows = []
    for row in measured:
        count = paper.pop((row["stage"], row["level"], row["measure"]), None)
        rows.append(
            {
                **row,
                "paper": count.figure if count else "",
                "ratio": f"{row['run'] / count.figure:.3f}" if count else "",
                "paper_says": count.says if count else "",
            }
        )
    stages = {row["stage"] for row in measured}
    unmatched = [key for key in paper if key[0] in stages]
    if unmatched:
        raise ValueError(f"the paper's counts {unmatched} have no measured row beside them")
    return rows
