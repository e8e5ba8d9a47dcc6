"""The per-item results browser: a static site under results/browser/ that opens from the file system.

No server, no build step, no CDN: plain HTML pages with a little inline JavaScript and one stylesheet,
all written beside index.html. It reads the instances table, the frame manifests and the judgment
records (which carry the question, the level's ground truth, the response and the verdict):

- `index.html`: per judge, model, prompt and level the Table 2 numbers with their counts, each a link to
  the items behind it, and the counts of items worth a look (answered where the truth is the refusal,
  refused where it is an answer, no valid verdict, two judges disagreeing), each a link to those items;
- `lists/<judge>/<model>/<prompt>/<level>.html`: those items, with filters;
- `items/<instance>.html`: the question, its ground truth at every level with the evidence intervals, the
  frames each level shows (thumbnails with their times, those inside an evidence interval marked) and
  every model's response and verdict at every level and prompt, side by side;
- `thumbs/<video>/<level>.jpg`: one contact sheet per video and level, shared by every model and item.

A missing frame folder, a broken video or a missing judgment is shown as such on the page. A verdict's reason is
shown in words (virtuebench.judge.explain), the rules judge's labels behind a toggle.

Rows (model, prompt) follow Table 2's order: `--models` and `--prompts` as config lists them.

CLI: python -m virtuebench.browser JUDGMENTS.jsonl ... --instances results/instances.parquet --frames-dir results/frames
     --out results/browser --thumb-width 64 [--models M ...] [--prompts P ...]
"""

from __future__ import annotations

import argparse
import hashlib
import html
import re
import shutil
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from virtuebench.frames import FramesError, Manifest
from virtuebench.frames import manifest_path as manifest_path_of
from virtuebench.instances import Instance, read_instances
from virtuebench.judge.explain import explain
from virtuebench.metrics import correct, in_subset
from virtuebench.records import Judgment
from virtuebench.support.stops import run_stoppable
from virtuebench.verify import add_chain_argument, read_judgments

THUMB_WIDTH = 64  # pixels (config report.thumb_width); a thumbnail keeps its frame's aspect
SHEET_COLUMNS = 32
SUBSETS = (("overall", "Overall"), ("non_refusal", "Non-refusal"), ("refusal", "Refusal"))
FLAGS = {
    "hallucination": "answered where the truth is the refusal",
    "over_refusal": "refused where the truth is an answer",
    "invalid": "no valid verdict",
    "disagreement": "the judges disagree",
}

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
/* The overview's table scrolls inside its own box (5 levels x 4 columns are wider than a laptop's window), the
   page never sideways; the model column stays in view while it does. */
.scroll { overflow-x: auto; max-width: 100%; margin: 0.5em 0 1.5em; }
.scroll table { margin: 0; }
.scroll .arm { position: sticky; left: 0; z-index: 1; background: #f2f2f2; text-align: left; white-space: nowrap; }
.arm .prompt { font-weight: normal; color: #555; }
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
    found = []
    if not judgment.valid:
        found.append("invalid")
    elif judgment.is_unanswerable and judgment.refusal != 1:
        found.append("hallucination")
    elif not judgment.is_unanswerable and judgment.refusal == 1:
        found.append("over_refusal")
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
        return f'<span class="warn">invalid</span>: {reason(judgment.error or judgment.reason)}'
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
    ) -> None:
        self.thumb_width = thumb_width
        self.arm_key = arm_order(models, prompts)
        self.instances = {inst.instance_id: inst for inst in instances}
        self.frames_dir, self.out = Path(frames_dir), Path(out)
        self.by_item: dict[str, list[Judgment]] = defaultdict(list)
        self.by_arm: dict[tuple[str, str, str, int], list[Judgment]] = defaultdict(list)
        for judgment in judgments:
            self.by_item[judgment.instance_id].append(judgment)
            self.by_arm[(judgment.judge, judgment.model, judgment.prompt, judgment.level)].append(judgment)
        self.judges = sorted({j.judge for j in judgments})
        self.arms = sorted({(j.model, j.prompt) for j in judgments}, key=self.arm_key)
        self.sheets: dict[tuple[str, str], Sheet | None | str] = {}

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
            f"<p>{len(self.instances)} instances, {sum(map(len, self.by_arm.values()))} judged responses. "
            "Each number links to the items behind it; the flagged counts link to those items.</p>"
        ]
        for judge in self.judges:
            levels = sorted({level for (j, _, _, level) in self.by_arm if j == judge})
            head = "".join(f'<th colspan="{len(SUBSETS) + 1}">{level} frames</th>' for level in levels)
            sub = "".join("".join(f"<th>{name}</th>" for _, name in SUBSETS) + "<th>worth a look</th>" for _ in levels)
            rows = []
            for model, prompt in self.arms:
                cells = []
                for level in levels:
                    arm = (judge, model, prompt, level)
                    members = self.by_arm.get(arm, [])
                    if not members:
                        cells.append(f'<td colspan="{len(SUBSETS) + 1}">-</td>')
                        continue
                    for subset, _ in SUBSETS:
                        chosen = [j for j in members if in_subset(j, subset)]
                        right = sum(map(correct, chosen))
                        text = f"{100 * right / len(chosen):.1f} ({right}/{len(chosen)})" if chosen else "-"
                        cells.append(f'<td class="num"><a href="{self.list_href(arm, 0, subset)}">{text}</a></td>')
                    counts = defaultdict(int)
                    for j in members:
                        for flag in flags(j, self.others(j)):
                            counts[flag] += 1
                    links = [
                        f'<a href="{self.list_href(arm, 0, flag)}" title="{FLAGS[flag]}">{flag} {counts[flag]}</a>'
                        for flag in FLAGS
                        if counts[flag]
                    ]
                    cells.append(f"<td><small>{'<br>'.join(links) or 'none'}</small></td>")
                rows.append(f'<tr><th class="arm">{esc(model)} <span class="prompt">{esc(prompt)}</span></th>{"".join(cells)}</tr>')
            parts.append(
                f'<h2>Judge {esc(judge)}</h2><div class="scroll"><table><tr><th class="arm" rowspan=2>model, prompt</th>{head}</tr>'
                f"<tr>{sub}</tr>{''.join(rows)}</table></div>"
            )
        if not self.judges:
            parts.append('<p class="missing">No judgment records yet.</p>')
        return page("virtuebench results", "\n".join(parts), 0)

    def write_list(self, arm: tuple[str, str, str, int]) -> None:
        judge, model, prompt, level = arm
        buttons = ["all", "overall", "non_refusal", "refusal", "correct", "wrong", *FLAGS]
        rows = []
        for j in sorted(self.by_arm[arm], key=lambda j: j.instance_id):
            tags = ["overall", "refusal" if j.is_unanswerable else "non_refusal", "correct" if correct(j) else "wrong"]
            tags += flags(j, self.others(j))
            rows.append(
                f'<tr class="item" data-flags="{" ".join(tags)}"><td><a href="{self.item_href(j.instance_id, 4, j)}">{esc(j.instance_id)}</a></td>'
                f"<td>{esc(j.question)}</td><td>{esc(j.answer)}</td><td>{esc(j.response)}</td><td>{verdict(j)}</td></tr>"
            )
        body = (
            '<p class="filters">'
            + "".join(f'<button data-flag="{b}" onclick="location.hash=\'{b}\'">{b.replace("_", " ")}</button>' for b in buttons)
            + f' <span id="shown"></span> of {len(rows)} items shown</p>'
            + "<table><tr><th>item</th><th>question</th><th>truth at this level</th><th>response</th><th>verdict</th></tr>"
            + "".join(rows)
            + "</table>"
        )
        path = self.out / self.list_href(arm, 0).split("#")[0]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page(f"{model}, prompt {prompt}, {level} frames (judge {judge})", body, 4, LIST_SCRIPT))

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
            sheet, timestamps, problem = self.sheet(inst.video_id, level) if inst else (None, [], "no frames: unknown video")
            frames = strip(sheet, timestamps, evidence, 1) if sheet else f'<p class="missing">{esc(problem or "no frames")}</p>'
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
                f'<div class="level" id="level-{level}"><h2>{level} frames</h2><p><b>Ground truth</b>: {esc(truth)}'
                f" ({len(timestamps)} frames)</p>{frames}<table>{head}{''.join(rows)}</table></div>"
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
    add_chain_argument(parser)
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        instances = read_instances(args.instances)
        judgments = read_judgments(args.judgments, args.chain_root)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    counts = Site(instances, judgments, Path(args.frames_dir), Path(args.out), args.thumb_width, args.models, args.prompts).build()
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
