"""Clear stops for the long-running CLIs: SIGINT and SIGTERM end a job with one line, never a traceback.

    def main(argv=None) -> int:
        ...
        return run_stoppable(lambda stop: _run(args, stop))

`_run` sets `stop.note` (a string, or a function giving one when the stop comes) to what was kept and how to go
on; on Ctrl-C or `kill` (SIGTERM, what Snakemake and SLURM send) the job unwinds (`finally` blocks close progress
files; no final output is written) and run_stoppable prints `interrupted (SIGTERM): <note>` to stderr and
returns 130 (SIGINT) or 143 (SIGTERM), the shell's codes for a job ended by those signals. A full disk, a quota, an
I/O error, too many open files or a permission problem that the job does not handle itself ends it the same way for
every CLI: one line naming the file (support/faults.py: the file the error names, else the last one the job opened for
writing), exit code 1, no traceback.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

from virtuebench.support.faults import fault_line, watch_writes

EXIT_CODES = {"SIGINT": 128 + signal.SIGINT, "SIGTERM": 128 + signal.SIGTERM}


class Terminated(BaseException):
    """SIGTERM arrived. A BaseException, like KeyboardInterrupt, so that no `except Exception` (a backend
    failure recorded per item, say) takes it for the item's error."""


#: the process whose run_stoppable installed the SIGTERM handler below
_job_pid: int | None = None


def _raise_terminated(signum, frame) -> None:
    """SIGTERM in the job: Terminated. In a process forked from it that has not set its own handlers yet (a frame
    worker stopped by its pool in the moment after fork()), the default instead: the process ends by SIGTERM. Raised
    there, Terminated escaped multiprocessing's os._exit and the child ran on as a second copy of the job (a
    `make test` worker hung on one)."""
    if os.getpid() != _job_pid:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    raise Terminated()


@dataclass
class Stop:
    """What a stopped job says it kept: a line, or a function that gives it at the time of the stop."""

    note: str | Callable[[], str] = "nothing was kept; rerun the same command"

    def text(self) -> str:
        try:
            return self.note() if callable(self.note) else self.note
        except Exception as error:  # the note must never hide the stop itself
            return f"rerun the same command (what was kept could not be told: {type(error).__name__}: {error})"


def run_stoppable(body: Callable[[Stop], int]) -> int:
    """body(stop), turning SIGINT and SIGTERM into one line on stderr and exit code 130 / 143."""
    stop = Stop()
    installed = threading.current_thread() is threading.main_thread()
    if installed:
        global _job_pid
        previous = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
        _job_pid = os.getpid()
        signal.signal(signal.SIGTERM, _raise_terminated)
        # Explicitly: a job started in the background of a script inherits SIGINT ignored.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    watch_writes()
    try:
        try:
            return body(stop)
        except Exception as error:  # an environment fault: one line; anything else keeps its traceback
            line = fault_line(error)
            if line is None:
                raise
            print(f"error: {line}", file=sys.stderr, flush=True)
            return 1
        except KeyboardInterrupt:
            name = "SIGINT"
        except Terminated:
            name = "SIGTERM"
        if installed:  # a second signal while the line is written does not turn into a traceback
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print(f"interrupted ({name}): {stop.text()}", file=sys.stderr, flush=True)
        return EXIT_CODES[name]
    finally:
        if installed:
            for number, handler in previous.items():
                signal.signal(number, handler if handler is not None else signal.SIG_DFL)


def reset_in_worker() -> None:
    """For a worker process forked from a stoppable job: SIGTERM ends it plainly, SIGINT (sent to the whole
    process group by Ctrl-C) is left to the parent, which stops its workers itself."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


#: prctl(2)'s option that asks the kernel for a signal when the parent dies (linux/prctl.h)
PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> bool:
    """For a worker process just forked from `parent_pid`: on Linux the kernel sends it SIGKILL when its parent dies
    (prctl PR_SET_PDEATHSIG), so a job killed with kill -9 or by the OOM killer leaves no worker running on. A parent
    that died before this was set (the worker already orphaned) ends the worker now. The signal comes when the thread
    that forked the worker ends: fork the workers from the main thread. False where it could not be set (not Linux,
    no prctl): the worker then outlives a killed parent until its work is done."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):  # no C library to load, or one without prctl
        return False
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), signal.SIGKILL)
    return True
