"""CLI: python -m virtuebench.sources NAME --settings JSON --videos-dir DIR --out results/instances.parquet
[--excluded results/instances_excluded.csv]"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from virtuebench.instances import write_instances
from virtuebench.sources import SOURCES, adapter
from virtuebench.sources.base import EXCLUDED_COLUMNS
from virtuebench.support.stops import run_stoppable
from virtuebench.support.tabular import write_csv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.sources", description=__doc__)
    parser.add_argument("source", choices=sorted(SOURCES), help="source adapter")
    parser.add_argument("--settings", default="{}", help="adapter settings as a JSON object")
    parser.add_argument("--videos-dir", required=True, help="where the adapter puts (or finds) videos")
    parser.add_argument("--out", required=True, help="instances table to write (.parquet)")
    parser.add_argument("--excluded", help="CSV of the items left out, with the reason (default: beside --out)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        settings = json.loads(args.settings)
    except json.JSONDecodeError as error:
        parser.error(f"--settings is not valid JSON: {error}")
    started = time.monotonic()
    try:
        instances, excluded = adapter(args.source)(settings, args.videos_dir, args.threads)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    write_instances(instances, args.out)
    excluded_path = args.excluded or str(Path(args.out).with_name(Path(args.out).stem + "_excluded.csv"))
    write_csv(excluded_path, excluded, list(EXCLUDED_COLUMNS))
    n_videos = len({inst.video_id for inst in instances})
    print(
        f"{args.source}: wrote {len(instances)} instances over {n_videos} videos to {args.out} "
        f"in {time.monotonic() - started:.1f} s; left out: {_by_unit(excluded)} (listed in {excluded_path})",
        file=sys.stderr,
    )
    for row in excluded[:20]:
        print(f"  left out {row['item']}: {row['reason']}", file=sys.stderr)
    return 0


def _by_unit(excluded: list[dict[str, str]]) -> str:
    """'3 items, 1 option list': the listing's rows counted by what each stands for (base.EXCLUSION_UNITS)."""
    counts = Counter(row.get("unit") or "item" for row in excluded)
    return ", ".join(f"{count} {unit}{'' if count == 1 else 's'}" for unit, count in counts.most_common()) or "nothing"


if __name__ == "__main__":
    # Ctrl-C or SIGTERM: one line, no traceback (its outputs are not written whole; Snakemake removes them)
    sys.exit(run_stoppable(lambda stop: main()))
