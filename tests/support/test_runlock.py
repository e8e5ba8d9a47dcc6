"""What a killed run left running (support/runlock.py): its jobs on this host, found by the marker every job of a run
inherits, and its SLURM jobs, found by squeue; "snakemake --unlock is safe" only where there are none. The processes
here are held by a pipe (they end when it is closed), and squeue is a fake on PATH."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from virtuebench.support import runlock

HOLD = "import sys; sys.stdout.write('up\\n'); sys.stdout.flush(); sys.stdin.read()"


@pytest.fixture
def held():
    """Start processes with a given RUN_MARKER, each alive until its stdin is closed."""
    started = []

    def start(marker: str | None) -> subprocess.Popen:
        env = {k: v for k, v in os.environ.items() if k != runlock.RUN_MARKER}
        if marker is not None:
            env[runlock.RUN_MARKER] = marker
        process = subprocess.Popen([sys.executable, "-c", HOLD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
        assert process.stdout.readline() == "up\n"
        started.append(process)
        return process

    yield start
    for process in started:
        process.stdin.close()
        process.wait()


def _dead_pid() -> int:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    return ended.pid


def _marker(lock: Path, pid: int, start: str | None) -> str:
    return json.dumps({"lock": str(lock), "pid": pid, "process_start": start}, sort_keys=True)


def test_a_killed_runs_jobs_are_found_and_no_others(tmp_path, held, monkeypatch):
    monkeypatch.delenv(runlock.RUN_MARKER, raising=False)
    state = tmp_path / ".snakemake" / "virtuebench"
    dead = _dead_pid()
    orphan = held(_marker(state / "run.lock", dead, "1"))  # its Snakemake was killed
    live = runlock.Holder.this_process()
    held(_marker(state / "cvrr" / "run.lock", live.pid, live.process_start))  # a job of a live run (this process)
    held(_marker(tmp_path / "elsewhere" / ".snakemake" / "virtuebench" / "run.lock", dead, "1"))  # another folder's
    held(None)  # not started by a run
    (left,) = runlock.leftover_processes(state)
    assert (left.id, left.lock, left.slurm) == (str(orphan.pid), str(state / "run.lock"), False)
    assert "-c" in left.what and left.describe().startswith(f"pid {orphan.pid} (")
    monkeypatch.setenv(runlock.RUN_MARKER, _marker(state / "run.lock", dead, "1"))  # the same marker as this run's own
    assert runlock.leftover_processes(state) == []


def test_a_process_that_ended_is_not_left(tmp_path, held, monkeypatch):
    monkeypatch.delenv(runlock.RUN_MARKER, raising=False)
    state = tmp_path / "state"
    orphan = held(_marker(state / "run.lock", _dead_pid(), "1"))
    assert [left.id for left in runlock.leftover_processes(state)] == [str(orphan.pid)]
    orphan.stdin.close()
    orphan.wait()
    assert runlock.leftover_processes(state) == []


def _fake_squeue(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "squeue"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return folder


def test_slurm_jobs_of_this_folder_are_found_by_squeue(tmp_path, monkeypatch):
    here, there = tmp_path / "project", tmp_path / "other"
    here.mkdir()
    lines = [f"4242|a1b2-uuid|RUNNING|{here}", f"4243|a1b2-uuid|PENDING|{here}/", f"5000|c3d4|RUNNING|{there}"]
    bin_dir = _fake_squeue(tmp_path / "bin", "printf '" + "\\n".join(lines) + "\\n'")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    jobs, unknown = runlock.slurm_jobs(here)
    assert unknown is None and [(job.id, job.what, job.slurm) for job in jobs] == [
        ("4242", "a1b2-uuid, RUNNING", True),
        ("4243", "a1b2-uuid, PENDING", True),
    ]
    _fake_squeue(bin_dir, "echo 'slurm_load_jobs error: Unable to contact slurm controller' >&2; exit 1")
    jobs, unknown = runlock.slurm_jobs(here)
    assert jobs == [] and unknown == "squeue failed (slurm_load_jobs error: Unable to contact slurm controller)"


def test_no_squeue_means_no_slurm_jobs(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert runlock.slurm_jobs(tmp_path) == ([], None)


def test_unlocking_is_called_safe_only_when_nothing_is_left():
    safe, advice = runlock.unlock_advice([], None)
    assert safe and "`snakemake --unlock` is safe here" in advice
    left = [runlock.Leftover("123", "python -m virtuebench.inference x"), runlock.Leftover("4242", "uuid, RUNNING", slurm=True)]
    safe, advice = runlock.unlock_advice(left, None)
    assert not safe and "is safe" not in advice
    assert "pid 123 (python -m virtuebench.inference x); SLURM job 4242 (uuid, RUNNING)" in advice
    assert "`kill 123` or `scancel 4242`" in advice and advice.endswith("Only then `snakemake --unlock`, and the same command again.")
    safe, advice = runlock.unlock_advice([], "squeue did not answer (timed out)")
    assert not safe and "squeue did not answer (timed out); check `squeue -u $USER`" in advice
