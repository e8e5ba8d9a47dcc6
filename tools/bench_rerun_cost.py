"""What the everyday changes cost on the demo itself: the default configuration (config/config.yaml) plus `api`, an
OpenAI-compatible model behind a local fake server that counts every request (tests/helpers/fake_openai.py). After a
finished run, each change is made and the workflow run again to its default target; the model requests and the jobs
per rule are counted, and scores.csv and the tables are compared byte for byte with those of the finished run where
nothing they show changed. tests/workflow/test_rerun_cost.py asserts the same on a smaller demo (docs/reruns.md).

    python tools/bench_rerun_cost.py [--folder /tmp/vb-rerun-cost]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from helpers.fake_openai import FakeOpenAI, api_entry  # noqa: E402
from helpers.workflow import executed, snakemake  # noqa: E402

COMPARED = ("results/scores.csv", "results/table1.tex", "results/table2.tex")
COSTLY = ("extract_frames", "run_inference")


def outputs(workdir: Path) -> dict[str, bytes]:
    return {name: (workdir / name).read_bytes() for name in COMPARED}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, default=None, help="where the project copy runs (default: a temporary folder)")
    args = parser.parse_args(argv)
    root = args.folder or Path(tempfile.mkdtemp(prefix="vb-rerun-cost-"))
    workdir = root / "project"
    workdir.mkdir(parents=True, exist_ok=True)
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    rows = []
    with FakeOpenAI() as server:
        registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
        registry["api"] = api_entry(server)
        (workdir / "models.yaml").write_text(yaml.safe_dump(registry))
        config = {**config, "model_registry": "models.yaml", "models": [*config["models"], "api"]}

        def run(where: Path, label: str, compare: dict[str, bytes] | None = None, **changes) -> None:
            nonlocal config
            config = {**config, **changes}
            before, started = server.backend_requests, time.monotonic()
            result = snakemake(where, config=config, timeout=1800)
            assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
            jobs = executed(result)
            same = "" if compare is None else ("identical" if outputs(where) == compare else "DIFFERENT")
            costly = {rule: jobs[rule] for rule in COSTLY if jobs[rule]}
            rows.append((label, server.backend_requests - before, costly, sum(jobs.values()), same, time.monotonic() - started))
            print(f"{label}: {rows[-1][1]} requests, {costly or 'no frames or inference job'}, {rows[-1][3]} jobs {same}", flush=True)

        run(workdir, "first run")
        reference = outputs(workdir)
        run(workdir, "two levels dropped (256, 512)", levels=[64, 128, 1024])
        run(workdir, "put back", reference, levels=[64, 128, 256, 512, 1024])
        for video in (workdir / "results" / "videos").iterdir():
            video.touch()
        run(workdir, "every video touched", reference)
        shutil.rmtree(sorted((workdir / "results" / "frames").glob("*/64"))[0])
        run(workdir, "a frames level folder deleted", reference)
        copy = root / "copy"
        subprocess.run(["cp", "-r", str(workdir), str(copy)], check=True)
        run(copy, "cp -r, run in the copy", reference)
    print("\n| change | model requests | frames and inference jobs | jobs in all | tables and scores.csv | wall |")
    print("|---|---|---|---|---|---|")
    for label, requests, costly, total, same, seconds in rows:
        print(f"| {label} | {requests} | {costly or 'none'} | {total} | {same or '-'} | {seconds:.0f} s |")
    if args.folder is None:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if all(same != "DIFFERENT" and (label == "first run" or requests == 0) for label, requests, _, _, same, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
