"""Fig. 4 (unanswerability by level and by instance), Fig. 6 (refusal accuracy with and without the
honesty instruction) and the accuracy-against-frames figure (fig_levels). Each figure's numbers are
also written to a CSV beside it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from virtuebench.instances import Instance  # noqa: E402
from virtuebench.metrics import ALL_LEVELS, Score, level_order  # noqa: E402
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


def _yerr(scores: Sequence[Score | None], low: str = "ci_low", high: str = "ci_high", value: str = "accuracy") -> list[list[float]]:
    """Matplotlib's asymmetric error bars from the scores' intervals (none where a score has none)."""
    below, above = [], []
    for score in scores:
        if score is None or getattr(score, low) is None:
            below.append(0.0)
            above.append(0.0)
        else:
            below.append(max(0.0, getattr(score, value) - getattr(score, low)))
            above.append(max(0.0, getattr(score, high) - getattr(score, value)))
    return [below, above]


def prompt_effects(comparisons: Sequence[dict[str, str]], judge: str) -> dict[str, dict[str, str]]:
    """Fig. 6's question per model: the paired comparison of its prompts on the refusal subset, all levels."""
    return {
        row["model_a"]: row
        for row in comparisons
        if row["kind"] == "prompt" and row["judge"] == judge and row["level"] == ALL_LEVELS and row["subset"] == "refusal"
    }


#: report.fig6_levels: Fig. 6 pools each model's refusal accuracy over every level it ran (`all`), or over the levels
#: every model shown ran (`common`), so that a model capped at 256 frames is set beside the others on the same levels.
POOLED_LEVELS = ("all", "common")


@dataclasses.dataclass(frozen=True)
class Pooled:
    """Fig. 6's refusal numbers: per (model, prompt) its score and the levels it pools; `common`: the levels every
    model shown ran (None under `all`); `summed`: the (model, prompt)s whose number is summed from its levels' rows
    here, so it has no interval (scores.csv's intervals are per level and over all of a model's levels)."""

    index: dict[tuple[str, str], Score]
    levels: dict[tuple[str, str], list[str]]
    common: list[str] | None
    summed: frozenset[tuple[str, str]]


def pooled_refusal(scores: Sequence[Score], models: Sequence[str], prompts: Sequence[str], judge: str, pooled: str = "all") -> Pooled:
    """Each shown (model, prompt)'s refusal accuracy pooled over its levels (`all`: scores.csv's level-`all` row) or
    over the levels common to every shown (model, prompt): its `all` row where those are all its levels, else its
    rows at those levels summed (n_correct over n x samples)."""
    if pooled not in POOLED_LEVELS:
        raise ValueError(f"report.fig6_levels: {pooled!r} is not one of {', '.join(POOLED_LEVELS)}")
    refusal = [s for s in scores if s.subset == "refusal" and s.judge == judge and s.model in models and s.prompt in prompts]
    whole = {(s.model, s.prompt): s for s in refusal if s.level == ALL_LEVELS}
    per_level: dict[tuple[str, str], dict[str, Score]] = {}
    for score in refusal:
        if score.level != ALL_LEVELS:
            per_level.setdefault((score.model, score.prompt), {})[score.level] = score
    levels = {key: sorted(of_key, key=level_order) for key, of_key in per_level.items()}
    if pooled == "all":
        return Pooled(whole, levels, None, frozenset())
    shared = set.intersection(*(set(found) for found in levels.values())) if levels else set()
    common = sorted(shared, key=level_order)
    index: dict[tuple[str, str], Score] = {}
    summed = set()
    for key, found in levels.items():
        if found == common and key in whole:
            index[key] = whole[key]
        elif common:
            rows = [per_level[key][level] for level in common]
            n_correct, n = sum(s.n_correct for s in rows), sum(s.n for s in rows)
            accuracy = round(100 * n_correct / sum(s.n * s.samples for s in rows), 4)
            index[key] = dataclasses.replace(
                rows[0], level="common", accuracy=accuracy, n_correct=n_correct, n=n, ci_low=None, ci_high=None, n_videos=0
            )
            summed.add(key)
    return Pooled(index, {key: common for key in index}, common, frozenset(summed))


def fig6(
    scores: Sequence[Score],
    models: Sequence[str],
    prompts: Sequence[str],
    judge: str,
    out: str | Path,
    csv_out: str | Path,
    comparisons: Sequence[dict[str, str]] = (),
    pooled: str = "all",
    invalid: str = "wrong",
) -> None:
    """Refusal-subset accuracy pooled over levels (report.fig6_levels: every level a model ran, or those every model
    shown ran), one bar per prompt, with 95% intervals and a mark where the prompt's effect holds (paired test over
    videos, all levels, Holm-adjusted, results/comparisons.csv; not shown for a model whose number pools fewer levels)."""
    found = pooled_refusal(scores, models, prompts, judge, pooled)
    index = found.index
    effects = prompt_effects(comparisons, judge)
    for model, _ in found.summed:  # the comparison is over all the model's levels: it does not test these numbers
        effects.pop(model, None)
    columns = ["model", "prompt", "accuracy", "ci_low", "ci_high", "n_correct", "n", "n_videos", "difference", "p_holm", "holds", "levels"]
    rows = []
    for model in models:
        effect = effects.get(model, {})
        for prompt in prompts:
            if (model, prompt) in index:
                score = index[(model, prompt)]
                rows.append(
                    {
                        "model": model,
                        "prompt": prompt,
                        "accuracy": score.accuracy,
                        "ci_low": score.ci_low,
                        "ci_high": score.ci_high,
                        "n_correct": score.n_correct,
                        "n": score.n,
                        "n_videos": "" if (model, prompt) in found.summed else score.n_videos,
                        "difference": effect.get("difference", ""),
                        "p_holm": effect.get("p_holm", ""),
                        "holds": effect.get("holds", ""),
                        "levels": " ".join(found.levels.get((model, prompt), [])),
                    }
                )
    write_csv(csv_out, rows, columns)
    figure, axis = plt.subplots(figsize=(max(8.0, 1.5 * len(models) + 2.5), 4.6))
    width = 0.8 / max(1, len(prompts))
    colours = ["#4c72b0", "#dd8452", "#55a868", "#c44e52"]
    for p, prompt in enumerate(prompts):
        xs = [m + (p - (len(prompts) - 1) / 2) * width for m in range(len(models))]
        chosen = [index.get((model, prompt)) for model in models]
        values = [score.accuracy if score else 0.0 for score in chosen]
        bars = axis.bar(xs, values, width, label=prompt, color=colours[p % len(colours)])
        axis.errorbar(xs, values, yerr=_yerr(chosen), fmt="none", ecolor="black", elinewidth=0.8, capsize=3)
        for bar, score in zip(bars, chosen):
            text = f"{score.accuracy:.1f}" if score else "n/a"
            top = score.ci_high if score and score.ci_high is not None else bar.get_height()
            axis.annotate(
                text,
                (bar.get_x() + bar.get_width() / 2, top),
                ha="center",
                va="bottom",
                fontsize=7,
                xytext=(0, 1),
                textcoords="offset points",
            )
    for m, model in enumerate(models):
        effect = effects.get(model)
        if effect and effect.get("holds") == "True":
            text = f"* {effect['prompt_a']} - {effect['prompt_b']}:\n{float(effect['difference']):+.1f} points"
            axis.annotate(text, (m, 108), ha="center", fontsize=7.5, fontweight="bold")
    n_items = sorted({score.n for score in index.values()})
    axis.set_xticks(range(len(models)), models, rotation=20 if len(models) > 4 else 0)
    axis.set(ylabel="refusal accuracy (%)", ylim=(0, 122))
    if found.common is None:
        levels_said = "levels: each model's own (report.fig6_levels: all)"
    else:
        levels_said = f"levels: {', '.join(found.common) or 'none'}, those every model ran (report.fig6_levels: common)"
        if found.summed:
            levels_said += "\n" + ", ".join(sorted({m for m, _ in found.summed})) + ": summed from its levels, no interval or mark"
    invalid_said = "dropped" if invalid == "drop" else "wrong"
    axis.set_title(
        f"Refusal accuracy by prompt (unanswerable items; judge {judge}; invalid items {invalid_said})\n{levels_said}\n"
        f"error bars: 95% interval (docs/statistics.md); *: prompts differ (paired test, Holm p < 0.05); n = {', '.join(map(str, n_items))} items",
        fontsize=9,
    )
    axis.legend(title="prompt", loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    figure.tight_layout()
    figure.savefig(out, dpi=150)
    plt.close(figure)


# subset, label, colour, marker; curves are drawn side by side (a small offset along x) so equal values stay visible
LEVEL_CURVES = (
    ("overall", "overall", "#4c72b0", "o"),
    ("non_refusal", "non-refusal", "#55a868", "s"),
    ("refusal", "refusal", "#c44e52", "^"),
)
DODGE = 0.06  # in octaves (the x axis is log2)


def fig_levels(
    scores: Sequence[Score], models: Sequence[str], levels: Sequence[int], prompt: str, judge: str, out: str | Path, csv_out: str | Path
) -> None:
    """Accuracy against frames, one panel per model: overall, non-refusal and refusal subsets with 95%
    intervals, and the trust score (dotted)."""
    index = {(s.model, s.level, s.subset): s for s in scores if s.prompt == prompt and s.judge == judge}
    rows = [
        {
            "model": model,
            "level": level,
            "subset": subset,
            "accuracy": score.accuracy,
            "ci_low": score.ci_low,
            "ci_high": score.ci_high,
            "trust": score.trust,
            "trust_ci_low": score.trust_ci_low,
            "trust_ci_high": score.trust_ci_high,
            "n": score.n,
            "n_videos": score.n_videos,
        }
        for model in models
        for level in levels
        for subset, *_ in LEVEL_CURVES
        if (score := index.get((model, str(level), subset))) is not None
    ]
    header = ["model", "level", "subset", "accuracy", "ci_low", "ci_high", "trust", "trust_ci_low", "trust_ci_high", "n", "n_videos"]
    write_csv(csv_out, rows, header)
    columns = min(len(models), 4) or 1
    lines = -(-len(models) // columns) or 1
    figure, axes = plt.subplots(
        lines, columns, figsize=(3.6 * columns, 3.1 * lines + 0.8), squeeze=False, sharey=True, layout="constrained"
    )
    lowest = min([score.trust for score in index.values() if score.trust is not None] + [0.0])
    for axis, model in zip(axes.flat, models):
        for k, (subset, label, colour, marker) in enumerate(LEVEL_CURVES):
            chosen = [index.get((model, str(level), subset)) for level in levels]
            xs = [level * 2 ** ((k - 1.5) * DODGE) for level, score in zip(levels, chosen) if score]
            present = [score for score in chosen if score]
            if present:
                axis.errorbar(
                    xs,
                    [s.accuracy for s in present],
                    yerr=_yerr(present),
                    color=colour,
                    marker=marker,
                    ms=3.5,
                    capsize=2,
                    lw=1.2,
                    label=label,
                )
        overall = [index.get((model, str(level), "overall")) for level in levels]
        trust = [(level * 2 ** (1.5 * DODGE), score) for level, score in zip(levels, overall) if score and score.trust is not None]
        if trust:
            axis.errorbar(
                [x for x, _ in trust],
                [score.trust for _, score in trust],
                yerr=_yerr([score for _, score in trust], "trust_ci_low", "trust_ci_high", "trust"),
                color="black",
                ls=":",
                marker="x",
                ms=3.5,
                capsize=2,
                lw=1.2,
                label="trust score (overall)",
            )
        axis.axhline(0, color="grey", lw=0.5)
        axis.set_xscale("log", base=2)
        axis.set_xticks(levels, [f"{level}\nn={score.n}" if score else str(level) for level, score in zip(levels, overall)], fontsize=7)
        axis.minorticks_off()
        axis.set(title=model, ylim=(min(-5, lowest - 5), 105))
        axis.title.set_fontsize(9)
    for axis in axes.flat[len(models) :]:
        axis.set_visible(False)
    for axis in axes[:, 0]:
        axis.set_ylabel("accuracy (%) / trust score")
    for axis in axes[-1]:
        axis.set_xlabel("frames (n: items at that level)", fontsize=8)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    figure.suptitle(
        f"Accuracy against frames per model (prompt {prompt}, judge {judge}; error bars: 95% interval, docs/statistics.md)", fontsize=10
    )
    figure.legend(handles, labels, loc="outside lower center", ncol=4, fontsize=8, frameon=False)
    figure.savefig(out, dpi=150)
    plt.close(figure)


def composition(instances: Sequence[Instance], out: str | Path, csv_out: str | Path) -> list[dict]:
    """VirtueBench Fig. 3: instances per category and task type."""
    counts: dict[tuple[str, str], int] = {}
    for inst in instances:
        counts[(inst.category, inst.task_type)] = counts.get((inst.category, inst.task_type), 0) + 1
    rows = [{"category": c, "task_type": t, "n_instances": n} for (c, t), n in sorted(counts.items(), key=lambda kv: (kv[0][0], -kv[1]))]
    write_csv(csv_out, rows, ["category", "task_type", "n_instances"])
    colours = {"perception": "#4c72b0", "reasoning": "#dd8452"}
    figure, axis = plt.subplots(figsize=(7, 0.32 * len(rows) + 1.6))
    labels = [f"{row['task_type']}" for row in rows]
    bars = axis.barh(labels, [row["n_instances"] for row in rows], color=[colours.get(row["category"], "#55a868") for row in rows])
    for bar, row in zip(bars, rows):
        axis.annotate(
            str(row["n_instances"]),
            (bar.get_width(), bar.get_y() + bar.get_height() / 2),
            va="center",
            fontsize=8,
            xytext=(3, 0),
            textcoords="offset points",
        )
    axis.invert_yaxis()
    totals = {c: sum(r["n_instances"] for r in rows if r["category"] == c) for c in dict.fromkeys(r["category"] for r in rows)}
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours.get(c, "#55a868")) for c in totals]
    axis.legend(
        handles, [f"{c} ({n})" for c, n in totals.items()], fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="category"
    )
    axis.set(xlabel="instances", xlim=(0, max((row["n_instances"] for row in rows), default=1) * 1.15))
    axis.set_title(f"Composition by the sources' own task types ({len(instances)} instances; colour: the adapter's category)", fontsize=10)
    figure.tight_layout()
    figure.savefig(out, dpi=150)
    plt.close(figure)
    return rows


def sources(instances: Sequence[Instance], out: str | Path, csv_out: str | Path) -> list[dict]:
    """The supplement's Fig. 1: instances and videos per source benchmark."""
    by_source: dict[str, tuple[int, set[str]]] = {}
    for inst in instances:
        n, videos = by_source.get(inst.source, (0, set()))
        by_source[inst.source] = (n + 1, videos | {inst.video_id})
    rows = [{"source": s, "n_instances": n, "n_videos": len(v)} for s, (n, v) in sorted(by_source.items(), key=lambda kv: -kv[1][0])]
    write_csv(csv_out, rows, ["source", "n_instances", "n_videos"])
    figure, axis = plt.subplots(figsize=(6.5, 0.45 * len(rows) + 1.5))
    bars = axis.barh([row["source"] for row in rows], [row["n_instances"] for row in rows], color="#4c72b0")
    total = sum(row["n_instances"] for row in rows)
    for bar, row in zip(bars, rows):
        text = f"{row['n_instances']} ({100 * row['n_instances'] / total:.1f}%), {row['n_videos']} videos"
        axis.annotate(
            text, (bar.get_width(), bar.get_y() + bar.get_height() / 2), va="center", fontsize=8, xytext=(3, 0), textcoords="offset points"
        )
    axis.invert_yaxis()
    axis.set(xlabel="instances", xlim=(0, max((row["n_instances"] for row in rows), default=1) * 1.6))
    axis.set_title(f"Distribution of sources ({total} instances)", fontsize=10)
    figure.tight_layout()
    figure.savefig(out, dpi=150)
    plt.close(figure)
    return rows
