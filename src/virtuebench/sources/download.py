"""Download a real source's pinned hub release into a folder (virtuebench.sources.hub), then let its adapter prepare it.

Usage: python -m virtuebench.sources.download SOURCE --out DIR [--revision REV] [--verify size|sha256] [--token-env VAR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# The package, not its names: the adapter table is looked up when the command runs.
from virtuebench import sources
from virtuebench.sources.archives import readable_bytes
from virtuebench.sources.hub import VERIFY_MODES, download_release


def main(argv: list[str] | None = None) -> int:
    summary = __doc__.split("\n\n")[0]
    parser = argparse.ArgumentParser(prog="python -m virtuebench.sources.download", description=summary)
    parser.add_argument("source", help=f"real source ({', '.join(sources.REAL_SOURCES)})")
    parser.add_argument("--out", required=True, help="folder for the release's files (created; reruns resume)")
    parser.add_argument("--revision", help="hub revision instead of the adapter's pinned one")
    parser.add_argument("--verify", choices=VERIFY_MODES, default="size", help="check sizes, or sizes and hashes")
    parser.add_argument("--token-env", default="HF_TOKEN", help="environment variable holding the hub token")
    args = parser.parse_args(argv)
    out = Path(args.out)
    started = time.monotonic()
    try:
        adapter = sources.real_source(args.source)
        release = adapter.RELEASE
        report = download_release(release, out, token_env=args.token_env, revision=args.revision, verify=args.verify)
        adapter.prepare(out)
    except ValueError as error:  # DownloadError included
        print(f"error: {error}", file=sys.stderr)
        return 1
    except ImportError as error:  # an adapter module that is missing or cannot import its dependencies
        print(f"error: cannot load the adapter for {args.source}: {error}", file=sys.stderr)
        return 1
    offline = ", offline: checked against download.json" if report.offline else ""
    print(
        f"{args.source}: {len(report.files)} files, {readable_bytes(report.total_bytes)} from "
        f"{report.repo_id}@{report.commit[:12]} in {out} (checked {report.verify}{offline}), prepared; "
        f"{time.monotonic() - started:.0f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    from virtuebench.support.stops import run_stoppable

    # Ctrl-C, SIGTERM or a full disk: one line, no traceback
    sys.exit(run_stoppable(lambda stop: main()))
