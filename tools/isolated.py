"""Each test file alone, and each kill, restart and fault test alone, several times each (`make test-isolated`).

The suite's verdict must not depend on which tests ran before a test or on timing: a test that passes only in its
usual company hides a failure until the order changes (a new file, xdist handing files out differently, a developer
running one test). This runs every test file in a pytest process of its own, then every test whose name says it
kills, interrupts, restarts, resumes or injects a fault, alone, `--runs` times each (default 5), `--jobs` processes at
a time, and prints a table: what ran, how often it passed, its slowest run. Exit status 1 if any run failed; each
failure's command is printed so that it can be replayed as it ran.

    python tools/isolated.py                    # everything, 5 runs each
    python tools/isolated.py --runs 2 tests/judge   # the files under tests/judge, and their kill tests
    python tools/isolated.py --only-files          # the files alone, no single tests

Each finished run is printed and appended to a log (`--log`, default isolated-runs.jsonl, ignored by git) with the
code it ran on: HEAD's tree and a digest of the uncommitted changes. A rerun on the same code counts the runs the log
already holds (passed or failed: a failure is never dropped) and does only the rest, so an interrupted run resumes;
on other code it starts again. `--fresh` ignores the log.

The files run with the suite's options (`-m "not faults"`, as `make test`); the kill and fault tests include
tests/workflow/test_faults.py's, which `make test` leaves to `make faults`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOG = "isolated-runs.jsonl"
#: Words of a test's name (split at underscores and brackets) that mark a kill, restart or fault test: a word that is
#: one of these or starts with one ("killed", "restarts", "resumes"; not "defaults").
FAULT_WORDS = ("kill", "interrupt", "restart", "resum", "fault", "crash", "sigint", "sigterm", "unlock", "enospc", "stopped")
FAULT_WORDS += ("disk", "retri", "failed", "failure", "dropped", "hangs", "dead")


@dataclass
class Target:
    """A test file or a single test, and its runs' outcomes."""

    nodeid: str
    single: bool  # one test (a kill, restart or fault test), or a whole file
    passed: int = 0
    failed: list[str] = field(default_factory=list)  # each failed run's last lines
    slowest_s: float = 0.0

    @property
    def runs(self) -> int:
        return self.passed + len(self.failed)

    def count(self, ok: bool, seconds: float, tail: str) -> None:
        """One run's outcome (logged earlier or just finished)."""
        self.slowest_s = max(self.slowest_s, seconds)
        if ok:
            self.passed += 1
        else:
            self.failed.append(tail)

    def command(self) -> list[str]:
        marker = [] if self.single else ["-m", "not faults"]
        return [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:randomly", "-p", "no:cacheprovider", *marker, self.nodeid]


def test_files(paths: list[str]) -> list[str]:
    roots = [REPO / path for path in paths] if paths else [REPO / "tests"]
    files = []
    for root in roots:
        found = [root] if root.is_file() else sorted(root.rglob("test_*.py"))
        files += [str(path.relative_to(REPO)) for path in found if "helpers" not in path.parts and "mutation" not in path.parts]
    return files


def fault_tests(files: list[str]) -> list[str]:
    """The node ids of the kill, restart and fault tests in `files` (pytest's own collection, faults marker included)."""
    if not files:
        return []
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", *files],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    if run.returncode not in (0, 5):
        sys.exit(f"isolated: collecting the tests failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    nodeids = [line.strip() for line in run.stdout.splitlines() if "::" in line]
    return [nodeid for nodeid in nodeids if is_fault_test(nodeid)]


def is_fault_test(nodeid: str) -> bool:
    words = re.split(r"[^a-z0-9]+", nodeid.split("::", 1)[1].split("[")[0].lower())  # the name, not its parameters
    return any(word.startswith(start) for word in words for start in FAULT_WORDS)


def code_identity() -> str | None:
    """The code the runs test: HEAD's tree, the uncommitted changes and the untracked files git does not ignore (each
    one's path and bytes); None outside a git checkout (then nothing is resumed)."""

    def git(*args: str) -> bytes:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, check=True).stdout

    try:
        digest = hashlib.sha256(git("rev-parse", "HEAD^{tree}") + git("diff", "HEAD", "--binary"))
        for name in sorted(git("ls-files", "--others", "--exclude-standard", "-z").split(b"\0")):
            path = REPO / name.decode()
            if path.is_symlink():
                digest.update(name + b"\0->" + os.readlink(path).encode())
            elif path.is_file():
                digest.update(name + b"\0" + path.read_bytes())
    except (OSError, subprocess.CalledProcessError):
        return None
    return digest.hexdigest()[:16]


def logged_runs(text: str, identity: str | None) -> list[dict]:
    """The runs a log's `text` holds for this code."""
    if identity is None:
        return []
    runs = []
    for line in text.splitlines():
        try:
            runs.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut short by a kill: that run is done again
            continue
    return [run for run in runs if isinstance(run, dict) and run.get("code") == identity]


def run_once(target: Target) -> tuple[Target, bool, float, str]:
    start = time.monotonic()
    run = subprocess.run(target.command(), cwd=REPO, capture_output=True, text=True)
    seconds = time.monotonic() - start
    # 5: no test collected (a file whose every test is marked faults): nothing failed
    ok = run.returncode in (0, 5)
    return target, ok, seconds, "" if ok else "\n".join((run.stdout + run.stderr).splitlines()[-25:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", help="test files or folders (default: tests/)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each file and each kill/fault test (default 5)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="pytest processes at a time (default: the CPUs)")
    parser.add_argument("--only-files", action="store_true", help="the files alone, no single kill or fault tests")
    parser.add_argument("--only-faults", action="store_true", help="the single kill and fault tests, not the files")
    parser.add_argument("--log", type=Path, default=REPO / LOG, help=f"each run's outcome, with the code's identity (default {LOG})")
    parser.add_argument("--fresh", action="store_true", help="ignore the runs the log holds for this code")
    args = parser.parse_args(argv)
    files = test_files(args.paths)
    targets = [] if args.only_faults else [Target(path, single=False) for path in files]
    targets += [] if args.only_files else [Target(nodeid, single=True) for nodeid in fault_tests(files)]
    identity = code_identity()
    text = args.log.read_text() if args.log.exists() else ""
    earlier = [] if args.fresh else logged_runs(text, identity)
    by_id = {target.nodeid: target for target in targets}
    for run in earlier:
        target = by_id.get(run["target"])
        if target is not None and target.runs < args.runs:
            target.count(run["ok"], run["seconds"], run.get("tail", ""))
    from_log = sum(target.runs for target in targets)
    # Run k of every target before run k + 1 of any: a failure that needs a warm cache or a leftover shows early.
    work = [target for k in range(args.runs) for target in targets if k >= target.runs]
    print(
        f"isolated: {len(targets)} targets x {args.runs} runs, {args.jobs} at a time; code {identity}; "
        f"{from_log} runs from {args.log.name}, {len(work)} to do",
        flush=True,
    )
    start = time.monotonic()
    log = args.log.open("a")
    if text and not text.endswith("\n"):  # a kill cut the last line short: the next run's record starts on a line of its own
        log.write("\n")
    pool = ThreadPoolExecutor(args.jobs)
    try:
        # Logged as each run ends, not in the order they were handed out: a kill loses only the runs in flight.
        runs = [pool.submit(run_once, target) for target in work]
        for finished, (target, ok, seconds, tail) in enumerate((run.result() for run in as_completed(runs)), 1):
            target.count(ok, seconds, tail)
            if not ok:
                print(f"FAILED alone: {target.nodeid} ({seconds:.1f} s)\n{tail}\n", flush=True)
            record = {
                "code": identity,
                "target": target.nodeid,
                "ok": ok,
                "seconds": round(seconds, 1),
                "at": time.strftime("%Y-%m-%dT%H:%M:%S"),
            }
            log.write(json.dumps({**record, **({} if ok else {"tail": tail})}) + "\n")
            log.flush()
            print(f"[{finished}/{len(work)}] {'passed' if ok else 'FAILED'} {target.nodeid} ({seconds:.1f} s)", flush=True)
    finally:  # Ctrl-C: the runs not yet started are dropped, not waited for
        pool.shutdown(wait=False, cancel_futures=True)
    log.close()
    total = time.monotonic() - start
    print("\n| target | passed | slowest s |\n|---|---|---|")
    for target in targets:
        print(f"| {target.nodeid} | {target.passed}/{args.runs} | {target.slowest_s:.1f} |")
    failed = [target for target in targets if target.failed]
    print(
        f"\nisolated: {len(targets) - len(failed)} of {len(targets)} targets passed {args.runs} of {args.runs}; "
        f"{total / 60:.1f} min this time ({from_log} runs from the log)"
    )
    for target in failed:
        print(f"replay: (cd {REPO} && {' '.join(target.command()[1:])})  # failed {len(target.failed)} of {args.runs}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
