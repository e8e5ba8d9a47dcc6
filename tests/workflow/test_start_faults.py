"""The workflow's start-up on a full or unwritable .snakemake: one line naming the folder, no traceback and no
"--- Logging error ---" cascade from Snakemake's own log handler (docs/reliability.md). A real tmpfs as root (as in
CI); otherwise a folder made read-only, which only a user who is not root is refused."""

from __future__ import annotations

import errno
import os
import subprocess

import pytest
from helpers.workflow import SMALL, snakemake

pytestmark = pytest.mark.workflow


def _mount_small_tmpfs(folder):
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")


def _fill(folder):
    with (folder / "filler").open("wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError as error:
            assert error.errno == errno.ENOSPC


def _stopped_in_one_line(run, code):
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr and "Logging error" not in run.stderr, run.stderr
    (line,) = [line for line in run.stderr.splitlines() if line.startswith("virtuebench:")]
    assert f"while using .snakemake/virtuebench ({code})" in line, run.stderr


@pytest.mark.parametrize("args", [(), ("-n",)], ids=["run", "dry-run"])
def test_a_full_snakemake_folder_stops_the_start_in_one_line(tmp_path, args):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (the read-only folder test below runs as any user)")
    state = tmp_path / ".snakemake"
    state.mkdir()
    _mount_small_tmpfs(state)
    try:
        _fill(state)
        _stopped_in_one_line(snakemake(tmp_path, *args, config=SMALL), "ENOSPC")
        assert not (tmp_path / "results").exists()
    finally:
        subprocess.run(["umount", "-l", str(state)], check=True)


def test_an_unwritable_snakemake_folder_stops_the_start_in_one_line(tmp_path):
    state = tmp_path / ".snakemake"
    state.mkdir()
    if os.geteuid() == 0:  # root passes a folder's permissions: a read-only file system is refused even to root
        _mount_small_tmpfs(state)
        (state / "virtuebench").mkdir()
        subprocess.run(["mount", "-o", "remount,ro", str(state)], check=True)
        code = "EROFS"
    else:
        (state / "virtuebench").mkdir()
        (state / "virtuebench").chmod(0o500)
        code = "EACCES"
    try:
        _stopped_in_one_line(snakemake(tmp_path, config=SMALL), code)
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", "-l", str(state)], check=True)
        else:
            (state / "virtuebench").chmod(0o700)
