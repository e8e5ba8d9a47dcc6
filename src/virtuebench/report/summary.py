"""The end of a run, in a few lines: what the Snakefile prints once the workflow stops (onsuccess, onerror) about the
items left out of the instances table (the sources' excluded listing) and the judged items without a valid verdict
(the listing virtuebench.metrics writes beside the scores), and, after a failed run, the report outputs kept from an
earlier run that do not show the judgments they now should. Each summary is None where there is nothing to say.
"""

from __future__ import annotations

import csv
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from virtuebench.sources.base import MISSING_VIDEO
from virtuebench.verify import Shown, judged_item


def _listed(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV listing (invalid items, excluded items); none where the file is absent."""
    if not path.exists():
        return []
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def summarize_invalid(path: str | Path, examples: int = 3) -> str | None:
    """A short warning about the invalid items listed in `path`, or None when there are none."""
    path = Path(path)
    rows = _listed(path)
    if not rows:
        return None
    distinct = sorted({row["error"] or row["reason"] for row in rows})
    lines = [f"{len(rows)} judged items have no valid verdict and count as wrong (listed in {path}):"]
    lines += [f"  {text}" for text in distinct[:examples]]
    if len(distinct) > examples:
        lines.append(f"  ... and {len(distinct) - examples} more distinct errors")
    return "\n".join(lines)


def summarize_excluded(path: str | Path) -> str | None:
    """A warning counting what the source left out of the instances table (the file lists each with its reason), each
    row by its unit: an item, or a group of items (a CVRR-ES dimension whose annotation file is missing, say)."""
    path = Path(path)
    rows = _listed(path)
    if not rows:
        return None
    # A listing written before rows named their unit counts every row as an item, as it did then.
    units = [row.get("unit") or "item" for row in rows]
    # The reason without the file it names, so that rows left out for the same reason count together.
    reasons = Counter((unit, re.sub(r"^\S*[/\\]\S*: ", "", row.get("reason", ""))[:80]) for unit, row in zip(units, rows))
    mixed = len(set(units)) > 1  # each reason's count names its unit only where units differ
    common = "; ".join(f"{_counted(count, unit) if mixed else count}: {reason}" for (unit, reason), count in reasons.most_common(3))
    # A listing written before rows named their source still counts its lost questions, under "unknown source".
    lost = Counter(row.get("source") or "unknown source" for row in rows if row.get("reason_kind") == MISSING_VIDEO)
    missing = (
        "; questions lost to missing videos: " + ", ".join(f"{source} {count}" for source, count in sorted(lost.items())) if lost else ""
    )
    counted = _listing([_counted(count, unit) for unit, count in Counter(units).most_common()], 4)
    were = "was" if len(rows) == 1 else "were"
    return f"{counted} of the source {were} left out of the instances table ({common}){missing}: listed in {path}"


def _counted(count: int, unit: str) -> str:
    """'1 item', '9 dimensions', '2 annotation files'."""
    return f"{count} {unit}{'' if count == 1 else 's'}"


def _listing(items: Sequence[str], shown: int) -> str:
    """The first `shown` of `items`, and how many more ("a, b and c"; "a, b, c, d and 2 more")."""
    if len(items) > shown:
        return f"{', '.join(items[:shown])} and {len(items) - shown} more"
    return " and ".join(part for part in (", ".join(items[:-1]), *items[-1:]) if part)


def _lacks(output: Path, judgments: Sequence[Path], shown: Shown, models: int = 3) -> str:
    """What `output` does not show of `judgments` (those missing, and those made after it), model by model; "" where
    nothing."""
    try:
        made = output.stat().st_mtime_ns
    except OSError:
        return ""
    missing, newer, every = defaultdict(list), defaultdict(list), defaultdict(list)
    for path in judgments:
        _, model, prompt, level = judged_item(path)
        every[model].append(f"{prompt}/{level}")
        try:
            if path.stat().st_mtime_ns > made:
                newer[model].append(f"{prompt}/{level}")
        except OSError:
            missing[model].append(f"{prompt}/{level}")
    texts = []
    for model in [model for model in every if missing[model] or newer[model]]:
        reasons = []
        if missing[model]:
            at = "" if len(missing[model]) == len(every[model]) else f" at {_listing(sorted(set(missing[model])), 4)}"
            reasons.append(f"its judgments{at} were not made; see the failed job above")
        if newer[model]:
            reasons.append(f"its judgments at {_listing(sorted(set(newer[model])), 4)} were made after it")
        what = f"model {model}" if model not in shown.models() else f"the judgments of model {model} there now"
        texts.append(f"{what} ({'; '.join(reasons)})")
    return "; nor ".join(texts[:models]) + (f"; nor {len(texts) - models} more model(s)" if len(texts) > models else "")


def summarize_outdated(outputs: Sequence[str | Path], judgments: Sequence[str | Path], scores: str | Path) -> str | None:
    """After a failed run: the report outputs there (kept from an earlier run: a report job replaces its outputs only
    once it runs) that do not show the judgments of `judgments` (the configuration's, results/judgments/<judge>/<model>/
    <prompt>/<level>.jsonl) they now should, a missing one or one made after them, one line per thing they lack;
    `scores` (scores.csv) says which models they show. None where every output there is up to date."""
    placed = [Path(path) for path in judgments if judged_item(path) is not None]
    shown = Shown.read(scores)
    lacking: dict[str, list[str]] = {}
    for output in map(Path, outputs):
        text = _lacks(output, placed, shown)
        if text:
            lacking.setdefault(text, []).append(str(output))
    lines = []
    for text, names in lacking.items():
        names = sorted(names, key=lambda name: not name.endswith((".tex", ".png")))  # tables and figures first
        one = len(names) == 1
        lines.append(
            f"{_listing(names, 4)} {'is' if one else 'are'} from an earlier run: {'it does' if one else 'they do'} not show {text}"
        )
    return "\n".join(lines) or None
