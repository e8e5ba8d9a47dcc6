"""Fig. 4 (unanswerability by level and by instance) and Fig. 6 (refusal accuracy with and without
the honesty instruction). Each figure's numbers are also written to a CSV beside it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from virtuebench.instances import Instance  # noqa: E402
from virtuebench.metrics import ALL_LEVELS, Score  # noqa: E402
from virtuebench.support.tabular import write_csv  # noqa: E402


def unanswerability(instances: Sequence[Instance], levels: Sequence[int]) -> tuple[list[dict], list[dict]]:
    """Frame-level shares and the instance-level distribution (instances that have every level)."""
    by_level = []
    for level in levels:
        present = [inst for inst in instances if level in inst.answers]
        unanswerable = sum(inst.is_unanswerable(level) for inst in present)
        share = 100 * unanswerable / len(present) if present else float("nan")
        by_level.append({"level": level, "n_instances": len(present), "n_unanswerable": unanswerable, "share": round(share, 4)})
    complete = [inst for inst in instances if all(level in inst.answers for level in levels)]
    counts = [sum(inst.is_unanswerable(level) for level in levels) for inst in complete]
    by_instance = [{"n_unanswerable_levels": k, "n_instances": counts.count(k)} for k in range(len(levels) + 1)]
    return by_level, by_instance


def fig4(instances: Sequence[Instance], levels: Sequence[int], out: str | Path, csv_out: str | Path) -> None:
    by_level, by_instance = unanswerability(instances, levels)
    rows = [{"panel": "frame_level", **row} for row in by_level]
    rows += [
        {
            "panel": "instance_level",
            "level": "",
            "n_instances": row["n_instances"],
            "n_unanswerable": row["n_unanswerable_levels"],
            "share": "",
        }
        for row in by_instance
    ]
    write_csv(csv_out, rows)

    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    names = [str(row["level"]) for row in by_level]
    bars = left.bar(names, [row["share"] for row in by_level], color="#c44e52")
    for bar, row in zip(bars, by_level):
        left.annotate(
            f"{row['share']:.1f}%\n(n={row['n_instances']})",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    left.set(xlabel="frames", ylabel="unanswerable (%)", title="Frame level", ylim=(0, 115))
    n_complete = sum(row["n_instances"] for row in by_instance)
    right.bar([str(row["n_unanswerable_levels"]) for row in by_instance], [row["n_instances"] for row in by_instance], color="#4c72b0")
    right.set(
        xlabel=f"unanswerable levels (of {len(levels)})",
        ylabel="instances",
        title=f"Instance level ({n_complete} instances with all levels)",
    )
    figure.suptitle("Unanswerability in the instances table")
    figure.tight_layout()
    figure.savefig(out, dpi=150)
    plt.close(figure)


def fig6(scores: Sequence[Score], models: Sequence[str], prompts: Sequence[str], judge: str, out: str | Path, csv_out: str | Path) -> None:
    """Refusal-subset accuracy over all levels a model ran, one bar per prompt."""
    index = {(s.model, s.prompt): s for s in scores if s.level == ALL_LEVELS and s.subset == "refusal" and s.judge == judge}
    rows = [
        {
            "model": model,
            "prompt": prompt,
            "accuracy": index[(model, prompt)].accuracy,
            "n_correct": index[(model, prompt)].n_correct,
            "n": index[(model, prompt)].n,
        }
        for model in models
        for prompt in prompts
        if (model, prompt) in index
    ]
    if rows:
        write_csv(csv_out, rows)
    else:
        Path(csv_out).write_text("model,prompt,accuracy,n_correct,n\n")
    figure, axis = plt.subplots(figsize=(max(5, 1.4 * len(models) + 2), 3.8))
    width = 0.8 / max(1, len(prompts))
    colours = ["#4c72b0", "#dd8452", "#55a868", "#c44e52"]
    for p, prompt in enumerate(prompts):
        xs = [m + (p - (len(prompts) - 1) / 2) * width for m in range(len(models))]
        values = [index[(model, prompt)].accuracy if (model, prompt) in index else 0.0 for model in models]
        bars = axis.bar(xs, values, width, label=prompt, color=colours[p % len(colours)])
        for bar, model in zip(bars, models):
            text = f"{index[(model, prompt)].accuracy:.1f}" if (model, prompt) in index else "n/a"
            axis.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=8)
    axis.set_xticks(range(len(models)), models, rotation=20 if len(models) > 4 else 0)
    axis.set(ylabel="refusal accuracy (%)", ylim=(0, 110), title=f"Refusal accuracy by prompt (all levels, judge {judge})")
    axis.legend(title="prompt")
    figure.tight_layout()
    figure.savefig(out, dpi=150)
    plt.close(figure)
