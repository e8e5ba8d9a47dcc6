"""Statistics that depend only on the data: counts per source, category and task type, and the
per-source table of the curation funnel (what each filter removed)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from virtuebench import is_refusal_answer
from virtuebench.instances import Instance
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
