"""The end of a run, in a few lines: what the Snakefile prints once the workflow stops (onsuccess, onerror) about the
items left out of the instances table (the sources' excluded listing) and the judged items without a valid verdict
(the listing virtuebench.metrics writes beside the scores). Each summary is None where its listing is absent or empty.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

from virtuebench.sources.base import MISSING_VIDEO


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
    """A warning counting the source's items left out of the instances table (the file lists each with its reason)."""
    path = Path(path)
    rows = _listed(path)
    if not rows:
        return None
    # The reason without the file it names, so that items left out for the same reason count together.
    reasons = Counter(re.sub(r"^\S*[/\\]\S*: ", "", row.get("reason", ""))[:80] for row in rows)
    common = "; ".join(f"{count}: {reason}" for reason, count in reasons.most_common(3))
    # A listing written before rows named their source still counts its lost questions, under "unknown source".
    lost = Counter(row.get("source") or "unknown source" for row in rows if row.get("reason_kind") == MISSING_VIDEO)
    missing = (
        "; questions lost to missing videos: " + ", ".join(f"{source} {count}" for source, count in sorted(lost.items())) if lost else ""
    )
    return f"{len(rows)} items of the source were left out of the instances table ({common}){missing}: listed in {path}"
