"""One line for every environment fault, in every job CLI (support/faults.py, support/stops.py): a full disk, a read-only
file system or a permission problem ends the job with one line naming the file, exit 1, never a traceback.

The real faults (a small tmpfs, full or remounted read-only) need root, as in CI; the injected ones run everywhere."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.data import SCORING_DEFAULTS, write_release

from virtuebench.records import Judgment, write_jsonl_atomic
from virtuebench.support import faults
from virtuebench.support.stops import run_stoppable
from virtuebench.support.tabular import write_csv
from virtuebench.verify import Remembered


def _judgment(instance: str, correct: bool) -> Judgment:
    return Judgment(
        instance,
        "m",
        "honest",
        64,
        "rules",
        "perception",
        "colour",
        "x",
        False,
        "r",
        0,
        int(correct),
        True,
        "",
        None,
        "fp",
        video_id=f"v{instance}",
    )


def test_a_write_that_fails_unnamed_is_named_by_the_file_last_opened_for_writing(tmp_path, capsys):
    target = tmp_path / "out" / "table.tex"
    target.parent.mkdir()

    def body(stop):
        with target.open("w"):
            pass
        raise OSError(errno.ENOSPC, "No space left on device")  # as a buffered file's flush raises it: no file named

    assert run_stoppable(body) == 1
    err = capsys.readouterr().err
    assert err == f"error: no space left on device while writing {target} (ENOSPC); free space and rerun the same command\n"


def test_an_error_naming_its_file_names_that_file_and_others_keep_their_traceback(tmp_path, capsys):
    def denied(stop):
        raise RuntimeError("could not save") from PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "x"))

    assert run_stoppable(denied) == 1
    assert capsys.readouterr().err == (
        f"error: permission denied while using {tmp_path / 'x'} (EACCES); fix the permissions and rerun the same command\n"
    )

    def broken(stop):
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", "missing.csv")  # not the environment's fault

    with pytest.raises(FileNotFoundError):
        run_stoppable(broken)


def test_write_csv_names_its_table_and_leaves_no_half_file(tmp_path, monkeypatch):
    path = tmp_path / "scores.csv"
    original = Path.open

    class FullDisk:
        def __init__(self, handle):
            self.handle = handle

        def __getattr__(self, name):
            return getattr(self.handle, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()
            raise OSError(errno.ENOSPC, "No space left on device")  # at the flush, as a real full disk fails

    monkeypatch.setattr(Path, "open", lambda self, *a, **k: FullDisk(original(self, *a, **k)))
    with pytest.raises(OSError) as caught:
        write_csv(path, [{"a": 1}])
    assert (caught.value.errno, caught.value.filename) == (errno.ENOSPC, str(path))
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_chain_save_names_its_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    remembered = Remembered(tmp_path / "state" / "chain.json")
    remembered.keep("check", "stamp")

    def full(self, *args, **kwargs):
        raise OSError(errno.EDQUOT, "Disk quota exceeded")

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError) as caught:
        remembered.save()
    assert (caught.value.errno, caught.value.filename) == (errno.EDQUOT, str(tmp_path / "state" / "chain.json"))
    assert faults.fault_line(caught.value).startswith(f"disk quota exceeded while using {tmp_path / 'state' / 'chain.json'} (EDQUOT)")
    assert list((tmp_path / "state").iterdir()) == []


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs (root only: CI runs as root)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; the injected faults above test the same paths")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)


def _fill(disk: Path) -> None:
    with (disk / "filler").open("wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError as error:
            assert error.errno == errno.ENOSPC


def _one_line(run: subprocess.CompletedProcess, ending: str) -> None:
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert run.stderr.strip().endswith(ending), run.stderr


TRUST = list(SCORING_DEFAULTS)


def _report_clis(tmp_path: Path, out: Path) -> dict[str, list[str]]:
    judgments = tmp_path / "judgments" / "rules" / "m" / "honest" / "64.jsonl"  # where the table writers check it
    judgments.parent.mkdir(parents=True)
    write_jsonl_atomic(judgments, [_judgment(f"i{k}", k % 2 == 0) for k in range(4)])
    release = write_release(tmp_path / "release")
    scores = tmp_path / "scores.csv"
    made = subprocess.run(
        [sys.executable, "-m", "virtuebench.metrics", str(judgments), "--out", str(scores), "--resamples", "20", "--seed", "1", *TRUST],
        capture_output=True,
    )
    assert made.returncode == 0
    tables = ["--models", "m", "--levels", "64", "--prompt", "honest", "--judge", "rules"]
    return {
        "report": [
            "virtuebench.report",
            "tables",
            "--scores",
            str(scores),
            *tables,
            "--table1",
            str(out / "t1.tex"),
            "--table2",
            str(out / "t2.tex"),
            *TRUST,
        ],
        "metrics": ["virtuebench.metrics", str(judgments), "--out", str(out / "scores.csv"), "--resamples", "20", "--seed", "1", *TRUST],
        "cvrr": ["virtuebench.cvrr", "table", str(release / "Judge-results"), "--out", str(out / "cvrr")],
    }


def test_a_real_full_disk_gives_one_line_in_the_report_writers(tmp_path, small_disk):
    _fill(small_disk)
    for name, cli in _report_clis(tmp_path, small_disk).items():
        run = subprocess.run([sys.executable, "-m", *cli], capture_output=True, text=True)
        _one_line(run, "(ENOSPC); free space and rerun the same command")
        assert str(small_disk) in run.stderr, (name, run.stderr)


def test_a_real_read_only_disk_gives_one_line_in_the_report_writers(tmp_path, small_disk):
    remount = subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], capture_output=True, text=True)
    assert remount.returncode == 0, remount.stderr
    for name, cli in _report_clis(tmp_path, small_disk).items():
        run = subprocess.run([sys.executable, "-m", *cli], capture_output=True, text=True)
        _one_line(run, "(EROFS); make the file system writable (or write elsewhere) and rerun the same command")
        assert str(small_disk) in run.stderr, (name, run.stderr)


def test_a_fault_that_is_no_write_is_not_put_on_the_last_file_written(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def body(stop):
        (tmp_path / "written.csv").write_text("a\n")
        raise OSError(errno.EMFILE, "Too many open files")  # as socket() raises it: no file named

    assert run_stoppable(body) == 1
    line = capsys.readouterr().err
    assert line.startswith(f"error: too many open files while writing files in {tmp_path} (EMFILE)") and "written.csv" not in line
