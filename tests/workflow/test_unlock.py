"""A killed run's Snakemake lock: the next run says `snakemake --unlock` is safe only where no process of that run is
left on this host and no SLURM job of this folder is queued or running; otherwise it stops, naming them (docs/
reliability.md). The killed run's job is a process held by a pipe, carrying the marker its run set; squeue is a fake on
PATH."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml
from helpers.workflow import SMALL, command, environment

from virtuebench.support import runlock

pytestmark = pytest.mark.workflow

HOLD = "import sys; sys.stdout.write('up\\n'); sys.stdout.flush(); sys.stdin.read()"


def _run(workdir, env):
    (workdir / "config.yaml").write_text(yaml.safe_dump(SMALL))
    return subprocess.run(command(workdir, "results/instances.parquet"), capture_output=True, text=True, env=env, timeout=300)


def test_unlock_is_called_safe_only_once_the_killed_runs_jobs_are_gone(tmp_path):
    work = tmp_path / "work"
    (work / ".snakemake" / "locks").mkdir(parents=True)
    # Snakemake's lock of a killed run: every file of this folder's results is locked for writing.
    (work / ".snakemake" / "locks" / "0.output.lock").write_text(f"{work / 'results' / 'instances.parquet'}\n")
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()  # the killed Snakemake: its pid is gone
    lock = (work / runlock.LOCK_PATH).resolve()
    marker = json.dumps({"lock": str(lock), "pid": ended.pid, "process_start": "1"}, sort_keys=True)
    job_env = {**{k: v for k, v in os.environ.items() if k != runlock.RUN_MARKER}, runlock.RUN_MARKER: marker}
    job = subprocess.Popen([sys.executable, "-c", HOLD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=job_env, text=True)
    try:
        assert job.stdout.readline() == "up\n"
        fake = tmp_path / "bin"
        fake.mkdir()
        squeue = fake / "squeue"
        squeue.write_text(f"#!/bin/sh\necho '4242|a1b2|RUNNING|{work}'\n")
        squeue.chmod(0o755)
        env = {**environment(), "PATH": f"{fake}{os.pathsep}{environment()['PATH']}"}
        env.pop(runlock.RUN_MARKER, None)
        refused = _run(work, env)
        assert refused.returncode == 1, refused.stderr[-2000:]
        assert "is safe" not in refused.stderr and "that run is not over" in refused.stderr, refused.stderr[-2000:]
        assert f"pid {job.pid} (" in refused.stderr and "SLURM job 4242 (a1b2, RUNNING)" in refused.stderr
        assert f"`kill {job.pid}` or `scancel 4242`" in refused.stderr
    finally:
        job.stdin.close()
        job.wait()
    squeue.write_text("#!/bin/sh\nexit 0\n")  # the SLURM job ended too
    safe = _run(work, env)
    assert "`snakemake --unlock` is safe here" in safe.stderr, safe.stderr[-2000:]
