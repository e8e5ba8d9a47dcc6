"""tools/isolated.py (`make test-isolated`): every run it finishes is logged with the code it ran on, a rerun on
the same code does only the runs the log lacks (an interrupted run resumes, and a failure in the log still counts),
and other code starts again. Run on a real test file, in pytest processes of their own."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers.data import REPO

pytestmark = pytest.mark.skipif(not (REPO / ".git").exists(), reason="the runs are logged by the git checkout's code: no checkout here")

SCRIPT = [sys.executable, str(REPO / "tools" / "isolated.py"), "--only-files", "--jobs", "1"]
TARGET = "tests/test_levels.py"


def isolated(log, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*SCRIPT, "--log", str(log), *args, TARGET], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_runs_are_logged_with_the_code_and_a_rerun_does_only_what_the_log_lacks(tmp_path):
    log = tmp_path / "runs.jsonl"
    first = isolated(log, "--runs", "1")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    (run,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert run["target"] == TARGET and run["ok"] is True and len(run["code"]) == 16
    assert f"[1/1] passed {TARGET}" in first.stdout

    # Two runs asked for, one logged for this code: one more is done, and the table counts both.
    second = isolated(log, "--runs", "2")
    assert second.returncode == 0 and "1 runs from runs.jsonl, 1 to do" in second.stdout, second.stdout[-2000:]
    assert f"| {TARGET} | 2/2 |" in second.stdout and len(log.read_text().splitlines()) == 2

    # A line cut short by a kill is passed over: the two whole runs still count, nothing is left to do.
    with log.open("a") as handle:
        handle.write('{"code": "' + run["code"] + '", "target": "tests/te')
    again = isolated(log, "--runs", "2")
    assert again.returncode == 0 and "2 runs from runs.jsonl, 0 to do" in again.stdout, again.stdout[-2000:] + again.stderr[-2000:]
    third_run = isolated(log, "--runs", "3")
    assert third_run.returncode == 0 and "2 runs from runs.jsonl, 1 to do" in third_run.stdout
    assert json.loads(log.read_text().splitlines()[-1])["target"] == TARGET, "the new record is a line of its own"

    # A failure logged for this code is never dropped by a rerun: the target fails without running again.
    failed = {**run, "ok": False, "tail": "AssertionError: an earlier run"}
    log.write_text(json.dumps(failed) + "\n")
    third = isolated(log, "--runs", "1")
    assert third.returncode == 1 and "0 to do" in third.stdout and f"| {TARGET} | 0/1 |" in third.stdout

    # Runs of other code count for nothing; --fresh ignores the log.
    log.write_text(json.dumps({**run, "code": "0" * 16}) + "\n")
    assert "0 runs from runs.jsonl, 1 to do" in isolated(log, "--runs", "1").stdout
    fresh = isolated(log, "--runs", "1", "--fresh")
    assert fresh.returncode == 0 and "0 runs from runs.jsonl, 1 to do" in fresh.stdout
