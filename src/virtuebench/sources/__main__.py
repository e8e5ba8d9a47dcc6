"""CLI: python -m virtuebench.sources NAME --settings JSON --videos-dir DIR --out results/instances.parquet"""

from __future__ import annotations

import argparse
import json
import sys
import time

from virtuebench.instances import write_instances
from virtuebench.sources import ADAPTERS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.sources", description=__doc__)
    parser.add_argument("source", choices=sorted(ADAPTERS), help="source adapter")
    parser.add_argument("--settings", default="{}", help="adapter settings as a JSON object")
    parser.add_argument("--videos-dir", required=True, help="where the adapter puts (or finds) videos")
    parser.add_argument("--out", required=True, help="instances table to write (.parquet)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        settings = json.loads(args.settings)
    except json.JSONDecodeError as error:
        parser.error(f"--settings is not valid JSON: {error}")
    started = time.monotonic()
    instances = ADAPTERS[args.source](settings, args.videos_dir, args.threads)
    write_instances(instances, args.out)
    n_videos = len({inst.video_id for inst in instances})
    print(
        f"{args.source}: wrote {len(instances)} instances over {n_videos} videos to {args.out} "
        f"in {time.monotonic() - started:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
