"""The per-item results browser: a static site under results/browser/ that opens from the file system.

No server, no build step, no CDN: plain HTML pages with a little inline JavaScript and one stylesheet,
all written beside index.html. It reads the instances table, the frame manifests and the judgment
records (which carry the question, the level's ground truth, the response and the verdict), and for VirtueBench
scores.csv (virtuebench.metrics: the intervals and the trust score the tables print):

- `index.html`: a legend (what each model is, each column, each flag in words, why the trust score differs from
  accuracy), then per judge the numbers with their counts, each a link to the items behind it, and the counts of
  items worth a look (FLAGS), each a link to those items. VirtueBench: per model, prompt and level accuracy and the
  trust score with their 95% intervals, and the non-refusal and refusal subsets, one row per level (no sideways
  scroll at 1,400 px). CVRR-ES (`--benchmark cvrr`): its 11 dimensions and the average as its Table 2 computes it
  (virtuebench.cvrr.scoring: the mean over the dimensions, not over pooled items), with no frame levels;
- `lists/<judge>/<model>/<prompt>/<level>.html`: those items, with filters;
- `items/<instance>.html`: the question, its ground truth at every level with the evidence intervals, the
  frames each level shows (thumbnails with their times, those inside an evidence interval marked) and
  every model's response and verdict at every level and prompt, side by side;
- `thumbs/<video>/<level>.jpg`: one contact sheet per video and level, shared by every model and item.

A missing frame folder, a broken video or a missing judgment is shown as such on the page. A verdict's reason is
shown in words (virtuebench.judge.explain), the rules judge's labels behind a toggle.

Rows (model, prompt) follow Table 2's order: `--models` and `--prompts` as config lists them.

CLI: python -m virtuebench.browser JUDGMENTS.jsonl ... --instances results/instances.parquet --frames-dir results/frames
     --out results/browser --thumb-width 64 [--models M ...] [--prompts P ...] [--benchmark virtuebench|cvrr]
     [--scores results/scores.csv] [--legend JSON] --trust-scheme kalai --confidence-target 0.5 ...
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import html
import json
import re
import shutil
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from virtuebench import REFUSAL_ANSWER
from virtuebench.comparisons import read_comparisons
from virtuebench.cvrr import DIMENSIONS, TITLES
from virtuebench.cvrr.published import PUBLISHED_JUDGE
from virtuebench.cvrr.scoring import EMPTY_RULES, dimension_scores, model_rows, setting_of
from virtuebench.frames import FramesError, Manifest
from virtuebench.frames import manifest_path as manifest_path_of
from virtuebench.instances import Instance, read_instances
from virtuebench.judge.explain import explain
from virtuebench.metrics import (
    ALL_LEVELS,
    DEFAULT_SCORING,
    DEFAULT_TRUST,
    Score,
    Scoring,
    TrustWeights,
    add_scoring_arguments,
    add_trust_arguments,
    compute_scores,
    correct,
    read_scores,
    scoring_from_arguments,
    trust_from_arguments,
)
from virtuebench.models import BACKENDS
from virtuebench.provenance import NotIntact, require_intact
from virtuebench.records import Judgment
from virtuebench.support.bootstrap import Bootstrap
from virtuebench.support.stops import run_stoppable
from virtuebench.verify import add_chain_argument, read_judgments

THUMB_WIDTH = 64  # pixels (config report.thumb_width); a thumbnail keeps its frame's aspect
SHEET_COLUMNS = 32
SUBSETS = (("overall", "Overall"), ("non_refusal", "Non-refusal"), ("refusal", "Refusal"))
#: What each subset column holds, for the legend (virtuebench.metrics.in_subset).
SUBSET_WORDS = {
    "overall": "every item at the level",
    "non_refusal": "the items whose truth at the level is an answer (the frames hold the evidence)",
    "refusal": f"the items whose truth at the level is the refusal, {REFUSAL_ANSWER!r} (the frames lack the evidence)",
}
#: Every flag an item can carry (flags()): its short label, shown in place of the key, and what it means. The key is
#: only ever in a link's anchor and a row's data attribute.
FLAGS = {
    "hallucination": ("answered without the evidence", "the model answered where the truth at this level is the refusal"),
    "over_refusal": ("refused an answerable item", "the model refused where the truth at this level is an answer"),
    "no_response": ("no response", "the model gave no response (its request failed): wrong in accuracy and the trust score"),
    "truncated": (
        "reply cut off",
        "the reply hit the token limit or an unclosed thinking block: wrong in accuracy, an answer withheld in the trust score",
    ),
    "no_verdict": (
        "no verdict",
        "the model answered but the judge gave no usable verdict (unsure with no LLM judge to ask, a failed judge request, "
        "a verdict that is neither correct nor incorrect): wrong in accuracy; where the judge failed, left out of the trust score",
    ),
    "unsure_rule": ("judge unsure", "the rules judge's verdict comes from a rule of unknown precision: check it by eye"),
    "disagreement": ("judges disagree", "another judge gave this response a different verdict"),
}
#: Filters of a list page beside the flags, in words.
FILTERS = {
    "all": "all",
    "overall": "all",
    "non_refusal": "truth: an answer",
    "refusal": "truth: the refusal",
    "correct": "correct",
    "wrong": "wrong",
}
#: The overview's title per benchmark; another benchmark (virtuebench.benchmarks: a package of its own) gets
#: VirtueBench's layout under its own name.
TITLE = {"virtuebench": "VirtueBench results", "cvrr": "CVRR-ES results"}
PUBLISHED_LEVEL = 0  # the level of the CVRR-ES authors' published verdicts (virtuebench.cvrr.published): no frame level

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 3px 6px; vertical-align: top; }
th { background: #f2f2f2; }
td.num { text-align: right; white-space: nowrap; }
.ok { color: #1b7c2f; } .bad { color: #b22; } .warn { color: #a60; }
.strip { display: flex; flex-wrap: wrap; gap: 2px; margin: 4px 0 8px; }
.thumb { display: inline-block; text-align: center; font-size: 9px; color: #555; }
.thumb > div { border: 2px solid transparent; }
.thumb.evidence > div { border-color: #e0a000; }
.level { border-top: 2px solid #888; margin-top: 1.2em; padding-top: 0.4em; }
tr.focus td { background: #fff6d6; }
/* The overview fits a 1,400 px window with nothing scrolling sideways: VirtueBench's levels are rows, not column
   groups (5 levels x 6 columns did not fit), and CVRR-ES's 11 dimension headers wrap. */
table.numbers { max-width: 100%; }
table.numbers th { font-size: 12px; }
table.numbers td.num small { color: #555; }
table.cvrr th.dimension { font-weight: normal; min-width: 5em; }
th.arm { text-align: left; }
.arm .prompt { font-weight: normal; color: #555; }
tr.model-start > * { border-top: 2px solid #888; }
.legend { max-width: 1100px; }
.legend dt { font-weight: bold; margin-top: 0.3em; }
.legend dd { margin-left: 1.5em; }
.legend th { text-align: left; }
tr.hidden { display: none; }
.filters button { margin-right: 4px; }
.filters button.on { font-weight: bold; background: #ddd; }
.missing { color: #a60; font-style: italic; }
details.tags { font-size: 11px; color: #777; }
details.tags summary { cursor: pointer; }
"""

LIST_SCRIPT = """
function show(flag) {
  document.querySelectorAll('.filters button').forEach(b => b.classList.toggle('on', b.dataset.flag === flag));
  let shown = 0;
  document.querySelectorAll('tr.item').forEach(row => {
    const keep = flag === 'all' || row.dataset.flags.split(' ').includes(flag);
    row.classList.toggle('hidden', !keep);
    shown += keep ? 1 : 0;
  });
  document.getElementById('shown').textContent = shown;
}
window.addEventListener('hashchange', () => show(location.hash.slice(1) || 'all'));
show(location.hash.slice(1) || 'all');
"""

ITEM_SCRIPT = """
document.querySelectorAll('.strip').forEach(strip => {
  const w = +strip.dataset.w, h = +strip.dataset.h, columns = +strip.dataset.columns;
  const spans = strip.dataset.evidence ? strip.dataset.evidence.split(';').map(s => s.split(',').map(Number)) : [];
  strip.dataset.times.split(',').map(Number).forEach((t, i) => {
    const cell = document.createElement('span');
    cell.className = 'thumb' + (spans.some(([a, b]) => a <= t && t < b) ? ' evidence' : '');
    cell.title = 'frame ' + (i + 1) + ': ' + t.toFixed(1) + ' s';
    const image = document.createElement('div');
    image.style.cssText = `width:${w}px;height:${h}px;background:url('${strip.dataset.sheet}') -${(i % columns) * w}px -${Math.floor(i / columns) * h}px`;
    cell.append(image, Math.round(t) + 's');
    strip.append(cell);
  });
});
const want = new URLSearchParams(location.hash.slice(1));
document.querySelectorAll('tr.answer').forEach(row => {
  const focus = ['model', 'prompt'].every(key => !want.get(key) || row.dataset[key] === want.get(key));
  row.classList.toggle('focus', want.has('model') && focus);
});
if (want.get('level')) { const el = document.getElementById('level-' + want.get('level')); if (el) el.scrollIntoView(); }
"""


def safe_name(text: str) -> str:
    """A file name for an id: unchanged where it is already safe, else cleaned and made unique with a hash."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", text)
    return cleaned if cleaned == text else f"{cleaned}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def esc(value: object) -> str:
    return html.escape("" if value is None else str(value))


def page(title: str, body: str, depth: int, script: str = "") -> str:
    up = "../" * depth
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f'<link rel="stylesheet" href="{up}style.css"></head><body>\n'
        f'<p><a href="{up}index.html">overview</a></p>\n<h1>{esc(title)}</h1>\n{body}\n'
        + (f"<script>{script}</script>\n" if script else "")
        + "</body></html>\n"
    )


@dataclass(frozen=True)
class Sheet:
    """A contact sheet: thumbnails of a level's frames in rows of SHEET_COLUMNS."""

    path: str  # relative to the site's root
    width: int
    height: int


def make_sheet(manifest: Manifest, frames_dir: Path, level: str, out: Path, thumb_width: int = THUMB_WIDTH) -> Sheet | None:
    """The level's contact sheet, made once (kept while newer than the manifest); None without frames."""
    files = manifest.levels[level].files
    if not files:
        return None
    width, height = manifest.frame_size or [16, 9]
    thumb = (thumb_width, max(1, round(thumb_width * height / width)))
    target = out / "thumbs" / safe_name(Path(frames_dir).name) / f"{level}.jpg"
    relative = target.relative_to(out).as_posix()
    manifest_path = manifest_path_of(frames_dir, level)  # the level folder's own, or the video folder's
    if target.exists() and target.stat().st_mtime >= manifest_path.stat().st_mtime:
        with Image.open(target) as made:
            if made.width == thumb[0] * min(SHEET_COLUMNS, len(files)):  # same thumbnail size: reuse
                return Sheet(relative, *thumb)
    rows = -(-len(files) // SHEET_COLUMNS)
    sheet = Image.new("RGB", (thumb[0] * min(SHEET_COLUMNS, len(files)), thumb[1] * rows), "black")
    for index, name in enumerate(files):
        try:
            with Image.open(frames_dir / name) as frame:
                frame.draft("RGB", (thumb[0] * 2, thumb[1] * 2))  # JPEG decodes at a reduced scale: fast
                small = frame.convert("RGB").resize(thumb, Image.Resampling.BILINEAR)
        except OSError:
            continue  # a missing or unreadable frame stays black
        sheet.paste(small, ((index % SHEET_COLUMNS) * thumb[0], (index // SHEET_COLUMNS) * thumb[1]))
    target.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(target, "JPEG", quality=70)
    return Sheet(relative, *thumb)


def strip(sheet: Sheet, timestamps: Sequence[float], evidence: Sequence[Sequence[float]], depth: int) -> str:
    """A placeholder the page's script fills with the level's thumbnails (one element per frame would
    weigh hundreds of kilobytes per page at 1024 frames; the times alone are a few)."""
    times = ",".join(f"{t:g}" for t in timestamps)
    spans = ";".join(f"{a:g},{b:g}" for a, b in evidence)
    return (
        f'<div class="strip" data-sheet="{"../" * depth}{sheet.path}" data-w="{sheet.width}" data-h="{sheet.height}" '
        f'data-columns="{SHEET_COLUMNS}" data-times="{times}" data-evidence="{spans}"></div>'
    )


def flags(judgment: Judgment, others: Iterable[Judgment]) -> list[str]:
    """The item's FLAGS: why a reader may want to look at it."""
    found = []
    if judgment.truncated:
        found.append("truncated")
    elif not judgment.valid and judgment.response is None:
        found.append("no_response")
    elif not judgment.valid:
        found.append("no_verdict")
    elif judgment.is_unanswerable and judgment.refusal != 1:
        found.append("hallucination")
    elif not judgment.is_unanswerable and judgment.refusal == 1:
        found.append("over_refusal")
    if judgment.valid and judgment.confident is False:
        found.append("unsure_rule")
    if any(o.valid and judgment.valid and (o.judgement, o.refusal) != (judgment.judgement, judgment.refusal) for o in others):
        found.append("disagreement")
    return found


def reason(text: str | None) -> str:
    """A verdict's reason for a reader: the rules judge's labels in words (virtuebench.judge.explain), the labels
    themselves behind a toggle."""
    words = explain(text or "")
    shown = f"<small>{esc(words.reason)}" + (f"<br>decided by: {esc(words.rules)}" if words.rules else "") + "</small>"
    if words.labels:
        shown += f'<details class="tags"><summary>rule labels</summary><code>{esc(" ".join(words.labels))}</code></details>'
    return shown


def verdict(judgment: Judgment | None) -> str:
    if judgment is None:
        return '<span class="missing">no judgment record</span>'
    if not judgment.valid:
        return f'<span class="warn">invalid (no valid verdict)</span>: {reason(judgment.error or judgment.reason)}'
    mark = '<span class="ok">correct</span>' if judgment.judgement == 1 else '<span class="bad">wrong</span>'
    return f"{mark}{' (refused)' if judgment.refusal == 1 else ''}<br>{reason(judgment.reason)}"


def arm_order(models: Sequence[str] = (), prompts: Sequence[str] = ()):
    """The sort key of (model, prompt) rows: Table 2's order (config.models as given, then config.prompts), then any
    model or prompt not named there (CVRR-ES's published models) alphabetically after them."""
    model_rank, prompt_rank = {m: i for i, m in enumerate(models)}, {p: i for i, p in enumerate(prompts)}

    def key(arm: tuple[str, str]) -> tuple[int, str, int, str]:
        model, prompt = arm
        return model_rank.get(model, len(model_rank)), model, prompt_rank.get(prompt, len(prompt_rank)), prompt

    return key


@dataclass(frozen=True)
class Options:
    """What the overview shows beside the records: the benchmark's layout, the numbers the tables print and the legend."""

    benchmark: str = "virtuebench"
    #: scores.csv's rows (VirtueBench): the intervals and trust scores the tables print; a judge with none there is
    #: scored here by the same function (virtuebench.metrics.compute_scores) with `bootstrap` and `trust`.
    scores: Sequence[Score] = ()
    trust: TrustWeights = DEFAULT_TRUST
    bootstrap: Bootstrap = Bootstrap()
    empty_predictions: str = "skip"  # CVRR-ES's rule for an empty prediction (virtuebench.cvrr.scoring)
    #: {model: {"backend", "description"}} from the model registry (legend_entries), for the models' legend.
    legend: dict[str, dict[str, str | None]] | None = None
    #: comparisons.csv's rows (VirtueBench: virtuebench.comparisons.read_comparisons), shown per judge with their intervals.
    comparisons: Sequence[dict[str, str]] = ()
    #: report.invalid and report.categories: how a judge not in scores.csv is scored, and the item lists' category
    scoring: Scoring = DEFAULT_SCORING

    def __post_init__(self) -> None:
        if self.empty_predictions not in EMPTY_RULES:
            raise ValueError(f"empty predictions: {self.empty_predictions!r} is not one of {', '.join(EMPTY_RULES)}")


def model_kind(entry: dict[str, str | None] | None, judges: set[str]) -> tuple[str, str]:
    """A model's kind and what it is, in words, from its registry entry (`backend`, `description`)."""
    if entry is None:
        if judges == {PUBLISHED_JUDGE}:
            return "published results", "the CVRR-ES authors' released responses and their judge's verdicts; not run here"
        return "not in the registry", "no registry entry was given for it"
    backend, description = entry.get("backend") or "", entry.get("description") or ""
    if backend in ("refuse", "guess", "oracle"):  # virtuebench.models.reference and .oracle: no model behind them
        return "baseline (no model)", description
    if backend == "openai":
        return "API model", description or "asked through an OpenAI-compatible endpoint"
    if backend not in BACKENDS:  # package.module:Class
        return "a backend of your own", "; ".join(part for part in (description, f"backend {backend}") if part)
    return "open weights, run here", "; ".join(part for part in (description, f"backend {backend}") if part)


def legend_entries(registry: dict[str, dict], models: Iterable[str]) -> dict[str, dict[str, str | None]]:
    """The registry's words on each model (the `--legend` JSON rules/common.smk passes): its backend and description;
    not its weights, which a named choice switches (docs/choices.md) without touching any job but that model's."""
    return {m: {key: registry[m].get(key) for key in ("backend", "description")} for m in models if m in registry}


def number(value: float | None, low: float | None, high: float | None) -> str:
    """A number as the tables print it (2 decimals), its 95% interval beside it."""
    if value is None:
        return "-"
    interval = f" <small>[{low:.2f}, {high:.2f}]</small>" if low is not None and high is not None else " <small>[no interval]</small>"
    return f"{value:.2f}{interval}"


def _float(text: str | None) -> float | None:
    """A number of a CSV row, None where empty."""
    return None if text in (None, "") else float(text)


def spread(sd: float | None, samples: int) -> str:
    """A sampled model's run-to-run SD, labelled as such (as the tables print it: not the uncertainty of the mean)."""
    return (
        ""
        if sd is None
        else f'<br><small title="run-to-run spread, not the uncertainty of the mean">(SD {sd:.2f} over {samples} runs)</small>'
    )


def failure_bounds(score: Score) -> str:
    """The trust score's bounds over the judge failures it leaves out (scores.csv trust_failed_worst, trust_failed_best)."""
    if score.trust_failed_best is None or score.trust_failed_worst is None:
        return ""
    return (
        f"<br><small>&dagger; judge failures left out: {score.n_judge_failed}; scored all wrong to all right: "
        f"{score.trust_failed_worst:.2f} to {score.trust_failed_best:.2f}</small>"
    )


class Site:
    def __init__(
        self,
        instances: Sequence[Instance],
        judgments: Sequence[Judgment],
        frames_dir: Path,
        out: Path,
        thumb_width: int = THUMB_WIDTH,
        models: Sequence[str] = (),
        prompts: Sequence[str] = (),
        options: Options = Options(),
    ) -> None:
        self.thumb_width = thumb_width
        self.options = options
        self.arm_key = arm_order(models, prompts)
        self.instances = {inst.instance_id: inst for inst in instances}
        self.frames_dir, self.out = Path(frames_dir), Path(out)
        self.judgments = list(judgments)
        self.by_item: dict[str, list[Judgment]] = defaultdict(list)
        self.by_arm: dict[tuple[str, str, str, int], list[Judgment]] = defaultdict(list)
        for judgment in judgments:
            self.by_item[judgment.instance_id].append(judgment)
            self.by_arm[(judgment.judge, judgment.model, judgment.prompt, judgment.level)].append(judgment)
        # the judges whose numbers scores.csv holds (the report judge's) first, then the others
        self.judges = sorted({j.judge for j in judgments}, key=lambda judge: (judge not in {s.judge for s in options.scores}, judge))
        self.arms = sorted({(j.model, j.prompt) for j in judgments}, key=self.arm_key)
        self.sheets: dict[tuple[str, str], Sheet | None | str] = {}

    @property
    def cvrr(self) -> bool:
        return self.options.benchmark == "cvrr"

    def level_title(self, level: int) -> str:
        return "published run (the authors' own frames)" if self.cvrr and level == PUBLISHED_LEVEL else f"{level} frames"

    def others(self, judgment: Judgment) -> list[Judgment]:
        """The same response judged by the other judges."""
        return [
            o
            for o in self.by_item[judgment.instance_id]
            if o.judge != judgment.judge and (o.model, o.prompt, o.level) == (judgment.model, judgment.prompt, judgment.level)
        ]

    def item_href(self, instance_id: str, depth: int, judgment: Judgment | None = None) -> str:
        anchor = f"#model={judgment.model}&prompt={judgment.prompt}&level={judgment.level}" if judgment else ""
        return f"{'../' * depth}items/{safe_name(instance_id)}.html{anchor}"

    def list_href(self, arm: tuple[str, str, str, int], depth: int, flag: str = "") -> str:
        judge, model, prompt, level = arm
        return f"{'../' * depth}lists/{safe_name(judge)}/{safe_name(model)}/{safe_name(prompt)}/{level}.html" + (f"#{flag}" if flag else "")

    def build(self) -> dict[str, int]:
        for folder in ("items", "lists", "thumbs"):
            if folder != "thumbs":  # contact sheets are kept while their manifest is unchanged
                shutil.rmtree(self.out / folder, ignore_errors=True)
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "style.css").write_text(STYLE)
        for arm in self.by_arm:
            self.write_list(arm)
        for instance_id in sorted(set(self.instances) | set(self.by_item)):
            self.write_item(instance_id)
        (self.out / "index.html").write_text(self.overview())
        return {
            "items": len(set(self.instances) | set(self.by_item)),
            "lists": len(self.by_arm),
            "judgments": sum(map(len, self.by_arm.values())),
        }

    def overview(self) -> str:
        parts = [
            f"<p>{len(self.instances)} instances, {sum(map(len, self.by_arm.values()))} judged responses. Each number "
            'links to the items behind it; the flagged counts link to those items. <a href="#legend">How to read this '
            "page</a>: what each column and flag means"
            + (", and why the averages are Table 2's" if self.cvrr else ", and why a trust score differs from accuracy")
            + ".</p>",
            self.models_legend(),
        ]
        for judge in self.judges:
            table = self.cvrr_table(judge) if self.cvrr else self.virtuebench_table(judge)
            parts.append(f"<h2>Judge {esc(judge)}</h2>{table}")
        if not self.judges:
            parts.append('<p class="missing">No judgment records yet.</p>')
        parts.append(self.legend())
        title = TITLE.get(self.options.benchmark, f"{self.options.benchmark} results")
        return page(title, "\n".join(parts), 0)

    # -- the legend ------------------------------------------------------------------------------------------------

    def models_legend(self) -> str:
        """What each model is: its kind and the registry's description (the published ones: the authors')."""
        judges_of: dict[str, set[str]] = defaultdict(set)
        for judge, model, _, _ in self.by_arm:
            judges_of[model].add(judge)
        rows = "".join(
            f"<tr><th>{esc(model)}</th><td>{esc(kind)}</td><td>{esc(words)}</td></tr>"
            for model in dict.fromkeys(model for model, _ in self.arms)
            for kind, words in [model_kind((self.options.legend or {}).get(model), judges_of[model])]
        )
        return f'<table class="legend models"><tr><th>model</th><th>kind</th><th>what it is</th></tr>{rows}</table>'

    def legend(self) -> str:
        flag_rows = "".join(f"<tr><th>{esc(label)}</th><td>{esc(words)}</td></tr>" for label, words in FLAGS.values())
        return (
            '<div class="legend" id="legend"><h2>How to read this page</h2><dl>'
            f"{self.cvrr_columns() if self.cvrr else self.virtuebench_columns()}"
            f"<dt>Worth a look: the flags</dt><dd><table>{flag_rows}</table></dd></dl></div>"
        )

    def virtuebench_columns(self) -> str:
        trust = self.options.trust
        subsets = "".join(f"<dt>{name}</dt><dd>accuracy over {esc(SUBSET_WORDS[key])}</dd>" for key, name in SUBSETS[1:])
        return (
            "<dt>Accuracy</dt><dd>the share of items judged correct, in percent: an answer the frames support, or the "
            "refusal where they lack the evidence. In brackets its 95% interval (resampling videos, or a closed form "
            "where there are few; docs/statistics.md), under it the correct items and the items.</dd>"
            f"<dt>Trust score</dt><dd>100 times the mean item score (report.trust, scheme {esc(trust.scheme)}), where "
            f"{esc(trust.describe())}; in brackets its 95% interval. An item the judge gave no verdict is left out of it; "
            "&dagger; marks a score that left such items out, with the score they would give all wrong and all right.</dd>"
            f"{subsets}<dt>(SD x over N runs)</dt><dd>a sampled model's spread from run to run (the SD of its N runs' "
            "numbers), not the uncertainty of its mean: that is the 95% interval in brackets.</dd>"
            "<dt>all, pooled</dt><dd>a model and prompt's items at all its levels together (Fig. 6's numbers), with "
            "their intervals; the items are listed per level.</dd>"
            "<dt>Paired comparisons</dt><dd>under each judge's table (comparisons.csv): the difference in points between "
            "two arms on the items both answered, its 95% interval, the exact p-value over videos and the Holm-adjusted "
            "one; it holds where that is below 0.05 (docs/statistics.md).</dd>"
            f"<dt>Why the trust score differs from accuracy</dt><dd>{esc(self.why_trust())}</dd>"
        )

    def why_trust(self) -> str:
        """Why a model's trust score differs from its accuracy, from the scheme's definition, with this run's example."""
        trust = self.options.trust
        if trust.scheme != "kalai":
            return (
                f"Accuracy counts an item right or wrong; the trust score gives a right item 1 but a refusal where an "
                f"answer was expected {trust.unwarranted_refusal:g} and any other wrong item {trust.wrong_answer:g}, so "
                "every wrong answer lowers it by more than it lowers accuracy."
            )
        text = (
            "Accuracy counts the refusal on an item whose frames lack the evidence as correct, like a right answer; the "
            f"trust score scores any refusal 0 and a wrong answer {trust.wrong:g}. A model right on every item therefore "
            "has 100% accuracy but a trust score equal to the share of its items whose truth is an answer, and a model "
            "that guesses loses more in the trust score than in accuracy."
        )
        for score in self.scores().values():
            if score.subset == "overall" and score.level != "all" and score.accuracy == 100 and score.trust is not None:
                members = self.by_arm.get((score.judge, score.model, score.prompt, int(score.level)), [])
                answerable = sum(not j.is_unanswerable for j in members)
                if members and abs(100 * answerable / len(members) - score.trust) < 0.005:
                    text += (
                        f" Here {score.model} (prompt {score.prompt}, {score.level} frames, judge {score.judge}): accuracy "
                        f"100.00, trust score {score.trust:.2f}, as {answerable} of its {len(members)} items have an "
                        "answer for truth."
                    )
                    break
        return text

    def cvrr_columns(self) -> str:
        own = sorted({level for (judge, _, _, level) in self.by_arm if level != PUBLISHED_LEVEL})
        frames = f" This run's models saw {', '.join(map(str, own))} frames per video." if own else ""
        rule = "left out" if self.options.empty_predictions == "skip" else "counted incorrect"
        return (
            "<dt>A dimension's number</dt><dd>its accuracy in percent: correct / (correct + incorrect) of the judge's "
            f"valid verdicts, an empty prediction {rule} (cvrr.empty_predictions); under it the counts.</dd>"
            "<dt>Average</dt><dd>the mean of the 11 dimensions' accuracies, as CVRR-ES's Table 2 computes it "
            "(virtuebench.cvrr.scoring, the table's own code), not the accuracy over all items pooled: the dimensions "
            "differ in size. Shown only where all 11 are scored.</dd>"
            "<dt>What is not here</dt><dd>No frame levels: the published verdicts come from the authors' runs, each "
            f"model sampling frames its own way.{frames} No refusal columns, intervals or trust score: every CVRR-ES "
            "question has an answer, and its Table 2 gives none of them.</dd>"
        )

    # -- the numbers -----------------------------------------------------------------------------------------------

    def scores(self) -> dict[tuple[str, str, str, str, str], Score]:
        """Each number's row, keyed (judge, model, prompt, level, subset): scores.csv's where it has the judge's, else
        computed here from the records by the same function."""
        if not hasattr(self, "_scores"):
            given = list(self.options.scores)
            covered = {score.judge for score in given}
            rest = [j for j in self.judgments if j.judge not in covered]
            computed = compute_scores(rest, self.options.bootstrap, self.options.trust, self.options.scoring) if rest else []
            self._scores = {(s.judge, s.model, s.prompt, s.level, s.subset): s for s in [*given, *computed]}
        return self._scores

    def flag_links(self, members: Sequence[Judgment], arm: tuple[str, str, str, int]) -> str:
        """The members' flags in words, each count a link to the arm's list filtered to it."""
        counts: dict[str, int] = defaultdict(int)
        for j in members:
            for flag in flags(j, self.others(j)):
                counts[flag] += 1
        links = [
            f'<a href="{self.list_href(arm, 0, flag)}" title="{esc(FLAGS[flag][1])}">{esc(FLAGS[flag][0])}: {counts[flag]}</a>'
            for flag in FLAGS
            if counts[flag]
        ]
        return f"<td><small>{'<br>'.join(links) or 'none'}</small></td>"

    def virtuebench_table(self, judge: str) -> str:
        scores = self.scores()
        head = (
            '<tr><th class="arm">model, prompt</th><th>frames</th><th>Accuracy [95% interval]</th>'
            "<th>Trust score [95% interval]</th>" + "".join(f"<th>{name}</th>" for _, name in SUBSETS[1:]) + "<th>worth a look</th></tr>"
        )
        rows = []
        for model, prompt in self.arms:
            levels: list[int | str] = sorted(level for (j, m, p, level) in self.by_arm if (j, m, p) == (judge, model, prompt))
            if len(levels) > 1 and (judge, model, prompt, ALL_LEVELS, "overall") in scores:
                levels.append(ALL_LEVELS)  # the levels pooled (Fig. 6's numbers); no list of its own
            for position, level in enumerate(levels):
                arm = (judge, model, prompt, level) if level != ALL_LEVELS else None
                cells = self.score_cells(scores, (judge, model, prompt, str(level)), arm)
                first = (
                    f'<th class="arm" rowspan="{len(levels)}">{esc(model)} <span class="prompt">{esc(prompt)}</span></th>'
                    if position == 0
                    else ""
                )
                flagged = self.flag_links(self.by_arm[arm], arm) if arm else "<td></td>"
                rows.append(
                    f'<tr{" class=model-start" if position == 0 else ""}>{first}<td class="num">{level if arm else "all, pooled"}</td>'
                    f"{''.join(cells)}{flagged}</tr>"
                )
        return f'<table class="numbers">{head}{"".join(rows)}</table>' + self.comparisons_table(judge)

    def score_cells(
        self, scores: dict[tuple[str, str, str, str, str], Score], key: tuple[str, str, str, str], arm: tuple[str, str, str, int] | None
    ) -> list[str]:
        """One row's cells: each subset's accuracy (a link to its items where the row is one level's, `arm`), with its
        interval, counts and a sampled model's run-to-run SD, and after the overall one the trust score with its interval,
        SD and bounds over the judge failures it leaves out."""
        cells = []
        for subset, _ in SUBSETS:
            score = scores.get((*key, subset))
            if score is None:
                cells.append('<td class="num">-</td>')
                continue
            shown = f"{number(score.accuracy, score.ci_low, score.ci_high)}<br><small>{score.n_correct}/{score.n * score.samples}</small>"
            linked = f'<a href="{self.list_href(arm, 0, subset)}">{shown}</a>' if arm else shown
            cells.append(f'<td class="num">{linked}{spread(score.accuracy_sd, score.samples)}</td>')
            if subset == "overall":
                trusted = number(score.trust, score.trust_ci_low, score.trust_ci_high)
                cells.append(f'<td class="num">{trusted}{spread(score.trust_sd, score.samples)}{failure_bounds(score)}</td>')
        return cells

    def comparisons_table(self, judge: str) -> str:
        """comparisons.csv's rows of `judge` (VirtueBench): each paired difference with its 95% interval, p-value,
        Holm-adjusted p and verdict, behind a summary line; nothing where the report gave none."""
        rows = [row for row in self.options.comparisons if row.get("judge") == judge]
        if not rows:
            return ""

        lines = []
        for row in rows:
            arms = f"{esc(row['model_a'])} {esc(row['prompt_a'])} &minus; {esc(row['model_b'])} {esc(row['prompt_b'])}"
            difference = number(_float(row["difference"]), _float(row["ci_low"]), _float(row["ci_high"]))
            lines.append(
                f"<tr><td>{esc(row['kind'])}</td><td>{arms}</td><td>{esc(row['level'])}</td><td>{esc(row['subset'])}</td>"
                f'<td class="num">{difference}</td><td class="num">{esc(row["p_value"])}</td>'
                f'<td class="num">{esc(row.get("p_holm") or "not in family")}</td>'
                f"<td>{'yes' if row.get('holds') == 'True' else 'no'}</td></tr>"
            )
        holding = sum(row.get("holds") == "True" for row in rows)
        return (
            f'<details class="comparisons"><summary>Paired comparisons: {len(rows)} (comparisons.csv), {holding} hold '
            "(Holm-adjusted p &lt; 0.05)</summary>"
            '<table class="numbers"><tr><th>kind</th><th>a &minus; b</th><th>frames</th><th>subset</th>'
            "<th>Difference (points) [95% interval]</th><th>p</th><th>p (Holm)</th><th>holds</th></tr>"
            f"{''.join(lines)}</table></details>"
        )

    def cvrr_table(self, judge: str) -> str:
        members = [j for j in self.judgments if j.judge == judge]
        scores = dimension_scores(members, self.options.empty_predictions)
        by_dimension = {(s.setting, s.model, s.dimension): s for s in scores}
        averages = {(row.setting, row.model): row.average for row in model_rows(scores)}
        head = (
            '<tr><th class="arm">model, prompt</th>'
            + "".join(f'<th class="dimension">{esc(TITLES[d])}</th>' for d in DIMENSIONS)
            + "<th>Average</th><th>worth a look</th></tr>"
        )
        rows = []
        for model, prompt in self.arms:
            levels = sorted(level for (j, m, p, level) in self.by_arm if (j, m, p) == (judge, model, prompt))
            if not levels:
                continue
            arm = (judge, model, prompt, levels[0])  # the lists are per level; CVRR-ES runs have one
            setting, cells = setting_of(prompt), []
            for dimension in DIMENSIONS:
                score = by_dimension.get((setting, model, dimension))
                if score is None or score.accuracy is None:
                    cells.append('<td class="num">-</td>')
                    continue
                shown = f"{score.accuracy:.2f}<br><small>{score.n_correct}/{score.n_correct + score.n_incorrect}</small>"
                cells.append(f'<td class="num"><a href="{self.list_href(arm, 0, dimension)}">{shown}</a></td>')
            average = averages.get((setting, model))
            cells.append(f'<td class="num"><b>{"-" if average is None else f"{average:.2f}"}</b></td>')
            chosen = [j for level in levels for j in self.by_arm[(judge, model, prompt, level)]]
            rows.append(
                f'<tr><th class="arm">{esc(model)} <span class="prompt">{esc(prompt)}</span></th>{"".join(cells)}'
                f"{self.flag_links(chosen, arm)}</tr>"
            )
        return f'<table class="numbers cvrr">{head}{"".join(rows)}</table>'

    def write_list(self, arm: tuple[str, str, str, int]) -> None:
        judge, model, prompt, level = arm
        rows, present = [], set()
        for j in sorted(self.by_arm[arm], key=lambda j: j.instance_id):
            category = self.options.scoring.category(j)  # as the scores count it (report.categories)
            tags = ["overall", "refusal" if j.is_unanswerable else "non_refusal", "correct" if correct(j) else "wrong", category]
            tags += flags(j, self.others(j))
            present.update(tags)
            rows.append(
                f'<tr class="item" data-flags="{esc(" ".join(tags))}"><td><a href="{self.item_href(j.instance_id, 4, j)}">{esc(j.instance_id)}</a></td>'
                f"<td>{esc(j.question)}</td><td>{esc(j.answer)}</td><td>{esc(j.response)}</td><td>{verdict(j)}</td></tr>"
            )
        subsets = ["correct", "wrong"] if self.cvrr else ["non_refusal", "refusal", "correct", "wrong"]
        buttons = {"all": "all"} | {key: FILTERS[key] for key in subsets} | {f: FLAGS[f][0] for f in FLAGS if f in present}
        if self.cvrr:
            buttons |= {d: TITLES[d] for d in DIMENSIONS if d in present}
        body = (
            '<p class="filters">'
            + "".join(
                f'<button data-flag="{esc(key)}" onclick="location.hash=\'{esc(key)}\'">{esc(name)}</button>'
                for key, name in buttons.items()
            )
            + f' <span id="shown"></span> of {len(rows)} items shown</p>'
            + "<table><tr><th>item</th><th>question</th><th>truth at this level</th><th>response</th><th>verdict</th></tr>"
            + "".join(rows)
            + "</table>"
        )
        path = self.out / self.list_href(arm, 0).split("#")[0]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page(f"{model}, prompt {prompt}, {self.level_title(level)} (judge {judge})", body, 4, LIST_SCRIPT))

    def sheet(self, video_id: str, level: int) -> tuple[Sheet | None, list[float], str]:
        """The level's contact sheet and timestamps, or why there are none."""
        folder = self.frames_dir / video_id
        try:
            manifest = Manifest.read(folder, level)
        except FramesError as error:
            return None, [], f"no frames: {error}"
        if manifest.error:
            return None, [], f"no frames: the video could not be read ({manifest.error})"
        if str(level) not in manifest.levels:
            return None, [], f"no frames at {level}: the video is too short for this level"
        key = (video_id, str(level))
        if key not in self.sheets:
            self.sheets[key] = make_sheet(manifest, folder, str(level), self.out, self.thumb_width)
        return self.sheets[key], manifest.levels[str(level)].timestamps, ""

    def write_item(self, instance_id: str) -> None:
        inst = self.instances.get(instance_id)
        judged = self.by_item.get(instance_id, [])
        if inst is None:
            body = '<p class="missing">This item is not in the instances table; only its judgments are shown.</p>'
            levels = sorted({j.level for j in judged})
            question, evidence, answers = (judged[0].question if judged else ""), [], {}
        else:
            question, evidence, answers = inst.question, inst.evidence, inst.answers
            levels = sorted(set(answers) | {j.level for j in judged})
            spans = ", ".join(f"{a:.0f}-{b:.0f} s" for a, b in evidence) or "not known"
            body = (
                f"<p><b>Question</b>: {esc(question)}<br><b>Video</b>: {esc(inst.video_id)} ({inst.duration_s:.0f} s), "
                f"{esc(inst.category)} / {esc(inst.task_type)}, source {esc(inst.source)}<br>"
                f"<b>Answer from the whole video</b>: {esc(inst.answer)}<br><b>Evidence</b>: {spans} "
                "(frames inside it have an orange frame)</p>"
            )
        arms = sorted({(j.model, j.prompt) for j in judged}, key=self.arm_key)
        judges = sorted({j.judge for j in judged})
        index = {(j.judge, j.model, j.prompt, j.level): j for j in judged}
        for level in levels:
            truth = answers.get(level, "(no ground truth at this level)")
            if self.cvrr and level == PUBLISHED_LEVEL:  # the authors' frames are not in their release
                sheet, timestamps, problem = None, [], "the authors' frames are not published"
            else:
                sheet, timestamps, problem = self.sheet(inst.video_id, level) if inst else (None, [], "no frames: unknown video")
            frames = strip(sheet, timestamps, evidence, 1) if sheet else f'<p class="missing">{esc(problem or "no frames")}</p>'
            count = f" ({len(timestamps)} frames)" if sheet else ""
            head = (
                "<tr><th>model</th><th>prompt</th><th>response</th>" + "".join(f"<th>judge {esc(judge)}</th>" for judge in judges) + "</tr>"
            )
            rows = []
            for model, prompt in arms:
                present = [index.get((judge, model, prompt, level)) for judge in judges]
                if not any(present) and level not in answers:
                    continue
                response = next((j.response for j in present if j is not None), None)
                shown = esc(response) if response is not None else '<span class="missing">no response</span>'
                rows.append(
                    f'<tr class="answer" data-model="{esc(model)}" data-prompt="{esc(prompt)}"><td>{esc(model)}</td><td>{esc(prompt)}</td>'
                    f"<td>{shown}</td>{''.join(f'<td>{verdict(j)}</td>' for j in present)}</tr>"
                )
            body += (
                f'<div class="level" id="level-{level}"><h2>{esc(self.level_title(level))}</h2><p><b>Ground truth</b>: {esc(truth)}'
                f"{count}</p>{frames}<table>{head}{''.join(rows)}</table></div>"
            )
        path = self.out / "items" / f"{safe_name(instance_id)}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page(f"Item {instance_id}", body, 1, ITEM_SCRIPT))


def site_size(folder: Path) -> dict[str, int]:
    sizes: dict[str, int] = defaultdict(int)
    for path in folder.rglob("*"):
        if path.is_file():
            sizes[path.relative_to(folder).parts[0] if len(path.relative_to(folder).parts) > 1 else "pages"] += path.stat().st_size
    return dict(sizes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.browser", description=__doc__.split("\n\n")[0])
    parser.add_argument("judgments", nargs="*", help="judgment records (JSONL), any judges")
    parser.add_argument("--instances", required=True)
    parser.add_argument("--frames-dir", required=True)
    parser.add_argument("--out", required=True, help="the site's folder (index.html goes there)")
    parser.add_argument("--thumb-width", type=int, required=True, help="thumbnail width in pixels")
    parser.add_argument("--models", nargs="*", default=[], help="the rows' order (config.models, as Table 2); others after")
    parser.add_argument("--prompts", nargs="*", default=[], help="each model's prompts in this order (config.prompts)")
    parser.add_argument("--benchmark", default="virtuebench", help="the overview's title and layout (config.benchmark; cvrr: its own)")
    parser.add_argument(
        "--scores", help="VirtueBench's scores.csv: the report judge's intervals and trust scores, as the tables print them"
    )
    parser.add_argument("--comparisons", help="VirtueBench's comparisons.csv: the paired differences with their intervals")
    parser.add_argument("--legend", default="{}", help="JSON {model: {backend, description}} from the model registry")
    parser.add_argument("--empty-predictions", choices=EMPTY_RULES, default="skip", help="CVRR-ES: cvrr.empty_predictions")
    parser.add_argument("--resamples", type=int, default=Bootstrap().resamples, help="bootstrap resamples of a judge not in --scores")
    parser.add_argument("--seed", type=int, default=Bootstrap().seed, help="bootstrap seed of a judge not in --scores")
    add_trust_arguments(parser)
    add_scoring_arguments(parser, required=False)
    add_chain_argument(parser)
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        legend = json.loads(args.legend)
    except json.JSONDecodeError as error:
        parser.error(f"--legend: not JSON ({error})")
    try:
        options = Options(
            args.benchmark,
            (),
            trust_from_arguments(args),
            Bootstrap(args.resamples, args.seed),
            args.empty_predictions,
            legend,
            scoring=scoring_from_arguments(args),
        )
    except ValueError as error:
        parser.error(str(error))
    try:
        if args.scores:  # made from the judgments there now (virtuebench.provenance), as the tables check
            require_intact([args.scores], writing=Path(args.out) / "index.html")
            options = dataclasses.replace(options, scores=read_scores(args.scores))
        if args.comparisons:  # as the scores: made from the judgments there now
            require_intact([args.comparisons], writing=Path(args.out) / "index.html")
            options = dataclasses.replace(options, comparisons=read_comparisons(args.comparisons))
        instances = read_instances(args.instances)
        judgments = read_judgments(args.judgments, args.chain_root)
    except (ValueError, NotIntact) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    site = Site(instances, judgments, Path(args.frames_dir), Path(args.out), args.thumb_width, args.models, args.prompts, options)
    counts = site.build()
    sizes = site_size(Path(args.out))
    print(
        f"browser: {counts['items']} item pages, {counts['lists']} lists, {counts['judgments']} judgments in "
        f"{time.monotonic() - started:.1f} s; {sum(sizes.values()) / 1e6:.1f} MB "
        f"({', '.join(f'{k} {v / 1e6:.2f} MB' for k, v in sorted(sizes.items()))}) -> {Path(args.out) / 'index.html'}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    # Ctrl-C or SIGTERM: one line, no traceback (its outputs are not written whole; Snakemake removes them)
    sys.exit(run_stoppable(lambda stop: main()))
