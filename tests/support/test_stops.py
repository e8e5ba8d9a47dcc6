"""Environment errors (support/faults.py) and clear stops (support/stops.py), and the judge CLI's use of both."""

import errno
import os
import pickle
import signal
import subprocess
import sys

import pytest
from helpers.data import build_bench

from virtuebench.support.faults import describe, environment_error
from virtuebench.support.stops import Terminated, run_stoppable


def test_environment_errors_are_found_however_they_are_wrapped():
    full = OSError(errno.ENOSPC, "No space left on device")
    assert environment_error(full) == "ENOSPC"
    assert environment_error(pickle.loads(pickle.dumps(full))) == "ENOSPC", "as a worker process sends it back"
    try:
        try:
            raise PermissionError(errno.EACCES, "Permission denied", "/data/v.mp4")
        except PermissionError:
            raise RuntimeError("v.mp4: cannot open as a video") from None  # hidden, still found
    except RuntimeError as wrapped:
        assert environment_error(wrapped) == "EACCES"
        assert describe(wrapped, "/data/v.mp4", "reading") == (
            "permission denied while reading /data/v.mp4 (EACCES); fix the permissions and rerun the same command"
        )
    for name in ("EDQUOT", "EIO", "EMFILE", "ENFILE", "EPERM", "EROFS"):
        wrapped = ValueError("decoding failed")
        wrapped.__cause__ = OSError(getattr(errno, name), os.strerror(getattr(errno, name)))
        assert environment_error(wrapped) == name
    # The data's faults are not the environment's.
    assert environment_error(FileNotFoundError(errno.ENOENT, "No such file")) is None
    assert environment_error(OSError("image file is truncated")) is None
    assert describe(ValueError("bad"), "x") is None


@pytest.mark.parametrize(("signum", "name", "code"), [(signal.SIGINT, "SIGINT", 130), (signal.SIGTERM, "SIGTERM", 143)])
def test_a_signal_becomes_one_line_and_the_shell_s_exit_code(capsys, signum, name, code):
    before = signal.getsignal(signal.SIGTERM)

    def body(stop):
        stop.note = lambda: "3 of 9 kept; rerun"
        os.kill(os.getpid(), signum)
        raise AssertionError("not stopped")

    assert run_stoppable(body) == code
    assert capsys.readouterr().err == f"interrupted ({name}): 3 of 9 kept; rerun\n"
    assert signal.getsignal(signal.SIGTERM) is before, "the handler is put back"
    assert issubclass(Terminated, BaseException) and not issubclass(Terminated, Exception), "no `except Exception` takes it"


@pytest.fixture(scope="module")
def responses(tmp_path_factory):
    from virtuebench.inference import run_inference
    from virtuebench.instances import read_instances

    root = build_bench(tmp_path_factory.mktemp("bench"), 2, 90, [64])
    out = root / "responses.jsonl"
    run_inference(read_instances(root / "instances.parquet"), root / "frames", "refuse", {"backend": "refuse"}, "honest", 64, out)
    return root, out, len(out.read_text().splitlines())


def test_a_stopped_judge_says_what_it_kept_and_a_rerun_completes_it(responses, tmp_path, capsys, monkeypatch):
    from virtuebench.judge import run as judge_run
    from virtuebench.judge.__main__ import main

    root, responses_path, n = responses
    out = tmp_path / "judgments.jsonl"
    argv = [str(responses_path), "--instances", str(root / "instances.parquet"), "--out", str(out)]

    class StoppedAfterTwo(judge_run.Progress):
        def step(self, n=1):
            super().step(n)
            if self.done == 2:
                os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(judge_run, "Progress", StoppedAfterTwo)
    assert main(argv) == 143
    err = capsys.readouterr().err
    assert (
        err.strip().splitlines()[-1] == f"interrupted (SIGTERM): 2 judged items are kept in {out}.partial; rerun the same command to go on"
    )
    assert "Traceback" not in err and not out.exists()
    monkeypatch.undo()
    assert main(argv) == 0
    assert len(out.read_text().splitlines()) == n and not (tmp_path / "judgments.jsonl.partial").exists()


def test_a_full_disk_stops_the_judge_with_one_line(responses, tmp_path, capsys, monkeypatch):
    from virtuebench.judge.__main__ import main
    from virtuebench.records import ProgressLog

    root, responses_path, _ = responses
    out = tmp_path / "judgments.jsonl"
    append, calls = ProgressLog.append, []

    def fills_up(self, record):
        calls.append(1)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        append(self, record)

    monkeypatch.setattr(ProgressLog, "append", fills_up)
    assert main([str(responses_path), "--instances", str(root / "instances.parquet"), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (
        f"error: no space left on device while writing {out} (ENOSPC); free space and rerun the same command "
        f"(1 judged items are kept in {out}.partial; rerun the same command to go on)"
    )
    assert "Traceback" not in err and not out.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_worker_whose_parent_is_gone_ends_at_once_and_one_whose_parent_lives_goes_on():
    """die_with_parent: set while the parent lives (True, and the worker goes on); where the parent is not the one
    named (it died before the worker could ask), the worker ends itself with SIGKILL before doing anything."""
    code = (
        "import os, sys; from virtuebench.support.stops import die_with_parent\n"
        "print(die_with_parent(os.getppid()), flush=True)\n"
        "die_with_parent(os.getppid() + 1)\n"
        "print('went on', flush=True)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (run.returncode, run.stdout) == (-signal.SIGKILL, "True\n"), run.stderr


def test_sigterm_in_a_process_forked_from_a_stoppable_job_ends_it_by_the_signal():
    """A child forked inside run_stoppable, signalled before it set handlers of its own, dies of SIGTERM; it does not
    raise Terminated and run on as a copy of the job (the child here ends with 7 if it does)."""

    def body(stop):
        pid = os.fork()
        if pid == 0:  # the child: signal itself, as a pool's terminate() does to a worker just forked
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                os._exit(0)  # pragma: no cover - not reached: the default action ends the process
            except BaseException:
                os._exit(7)
        return os.waitpid(pid, 0)[1]

    status = run_stoppable(body)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM, status
