"""Environment errors: faults of the disk or the operating system, never of the data.

A full disk, a quota, an I/O error, too many open files or a permission problem says nothing about a video, a
model or a judge: a job that meets one must stop (exit non-zero) and say what to fix, never record it as a
broken video or a failed item. `environment_error` tells them apart, the same way for every CLI.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

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
