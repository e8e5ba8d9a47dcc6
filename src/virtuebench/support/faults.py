"""Environment errors: faults of the disk or the operating system, never of the data.

A full disk, a quota, an I/O error, too many open files or a permission problem says nothing about a video, a
model or a judge: a job that meets one must stop (exit non-zero) and say what to fix, never record it as a
broken video or a failed item. `environment_error` tells them apart, the same way for every CLI.
"""

from __future__ import annotations

import errno
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

#: errno -> what to do about it (each ends the sentence "...; <advice>")
ADVICE = {
    errno.ENOSPC: "free space and rerun the same command",
    errno.EDQUOT: "free space within the quota (or raise it) and rerun the same command",
    errno.EIO: "check the disk and rerun the same command",
    errno.EMFILE: "raise the open-file limit (ulimit -n) or run fewer jobs at once, and rerun the same command",
    errno.ENFILE: "run fewer jobs at once and rerun the same command",
    errno.EACCES: "fix the permissions and rerun the same command",
    errno.EPERM: "fix the permissions and rerun the same command",
    errno.EROFS: "make the file system writable (or write elsewhere) and rerun the same command",
}


def environment_fault(exc: BaseException | None) -> OSError | None:
    """The first OSError from the disk or the OS in `exc` or what it wraps (__cause__, __context__, even where
    `raise ... from None` hid it), else None."""
    seen: set[int] = set()
    pending = [exc]
    while pending:
        current = pending.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in ADVICE:
            return current
        pending += [current.__cause__, current.__context__]
    return None


def environment_error(exc: BaseException | None) -> str | None:
    """The errno name (ENOSPC, EACCES, ...) where `exc` is, or wraps, an environment error; None for anything else."""
    fault = environment_fault(exc)
    return errno.errorcode[fault.errno] if fault is not None else None


def describe(exc: BaseException, where: str | Path, doing: str = "writing") -> str | None:
    """One line for an environment error, e.g. "no space left on device while writing results/frames/syn03
    (ENOSPC); free space and rerun the same command"; None where `exc` is not one."""
    fault = environment_fault(exc)
    if fault is None:
        return None
    what = os.strerror(fault.errno)
    what = what[:1].lower() + what[1:]
    return f"{what} while {doing} {where} ({errno.errorcode[fault.errno]}); {ADVICE[fault.errno]}"


# ---------------------------------------------------------------------------------------------
# Naming the file of an environment error that names none

#: The path of the last file this process opened for writing, where watch_writes() watches (an audit hook: it sees
#: every open, builtin or os.open, made by any library); a write or a close that fails (ENOSPC at the flush of a
#: buffered file) raises an OSError that names no file, and this is the file it was writing.
_LAST_WRITTEN: list[str] = []
_WRITE_FAULTS = {errno.ENOSPC, errno.EDQUOT, errno.EIO}  # what a failed write or close of an open file raises
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT


def _note_open(event: str, args: tuple) -> None:
    if event != "open" or len(args) < 3:
        return
    path, mode, flags = args[0], args[1], args[2]
    writing = any(char in mode for char in "wax+") if isinstance(mode, str) else bool(isinstance(flags, int) and flags & _WRITE_FLAGS)
    if writing and isinstance(path, (str, bytes, os.PathLike)):
        _LAST_WRITTEN[:] = [os.fsdecode(path)]


def watch_writes() -> None:
    """Have this process remember the last file it opens for writing (once; an audit hook cannot be removed)."""
    if not _LAST_WRITTEN:
        _LAST_WRITTEN.append("")
        sys.addaudithook(_note_open)


def last_written() -> str | None:
    """The last file opened for writing since watch_writes(), or None."""
    return _LAST_WRITTEN[0] if _LAST_WRITTEN and _LAST_WRITTEN[0] else None


def fault_line(exc: BaseException, fallback: str | Path | None = None) -> str | None:
    """describe(exc) naming the file the error names, else (a full disk, an I/O error) the last file opened for writing,
    else `fallback` (else the working directory); None where `exc` is not an environment error."""
    fault = environment_fault(exc)
    if fault is None:
        return None
    if fault.filename is not None:
        where = fault.filename if fault.filename2 is None else f"{fault.filename} -> {fault.filename2}"
        return describe(exc, where, "using")
    written = last_written() if fault.errno in _WRITE_FAULTS else None  # a socket's EMFILE is no file's
    return describe(exc, written or fallback or f"files in {os.getcwd()}", "writing")


@contextmanager
def naming(path: str | Path) -> Iterator[None]:
    """An environment OSError raised inside names `path` where it named no file (a failed write or close)."""
    try:
        yield
    except OSError as error:
        if error.filename is None and error.errno in ADVICE:
            raise OSError(error.errno, error.strerror or os.strerror(error.errno), str(path)) from error
        raise


def stop_on_environment_fault(body: Callable[[], T], prefix: str = "virtuebench: ") -> T:
    """body(), where an environment error ends the process with one line naming the file or folder (exit 1), never a
    traceback: for the workflow's own start-up code (the Snakefile), whose errors Snakemake would print with their stack.
    Snakemake's own log file (under .snakemake) may be what is full: the "--- Logging error ---" report its handler would
    print for every later line is silenced on the way out."""
    try:
        return body()
    except Exception as error:
        line = fault_line(error)
        if line is None:
            raise
        logging.raiseExceptions = False
        sys.exit(f"{prefix}{line}")
