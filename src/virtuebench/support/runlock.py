"""One live run per results folder: the workflow's own lock, apart from Snakemake's.

Snakemake's lock (.snakemake/locks) is removed by `snakemake --unlock`, which its own error message advises even
while the other run is alive; two runs then write the same files. This lock holds the run's pid, host and the
process's start time, so a second run is refused while the first is alive, whatever was unlocked, and a lock
left by a run that was killed (its pid gone, or reused by another process) is taken over with a note.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

#: The workflow's own records (run locks, remembered chain checks), beside Snakemake's: a run that fails before any job
#: leaves no results folder behind.
STATE_ROOT = ".snakemake/virtuebench"
#: The lock of a working directory's default results/ folder.
LOCK_PATH = f"{STATE_ROOT}/run.lock"


def state_dir(results_dir: str = "results") -> str:
    """The folder of a results folder's own records: STATE_ROOT for results/, else a subfolder named after it."""
    folder = os.path.normpath(results_dir)
    return STATE_ROOT if folder == "results" else f"{STATE_ROOT}/{re.sub(r'[^A-Za-z0-9._-]', '_', folder)}"


def lock_path(results_dir: str = "results") -> str:
    """The run lock of a results folder: one live run per results folder, several folders side by side."""
    return f"{state_dir(results_dir)}/run.lock"


def live_holders(root: str | Path = STATE_ROOT) -> list[Holder]:
    """The live runs holding a lock of any results folder under `root` (another host's counts as live)."""
    holders = (read_holder(path) for path in sorted(Path(root).glob("**/run.lock")))
    return [h for h in holders if h is not None and (h.host != socket.gethostname() or is_alive(h))]


def probe_writable(folder: str | Path = STATE_ROOT, size: int = 4096) -> None:
    """Write and remove a small file in `folder` (made if missing): an OSError naming the folder where it is full, over a
    quota, read-only or not ours. Snakemake's own log file is under .snakemake too, so a full disk found here is said in
    one line before its log handler fails on every line it logs."""
    folder = Path(folder)
    probe = folder / f".probe-{os.getpid()}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with probe.open("wb") as handle:
            handle.write(b"\0" * size)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as error:
        raise OSError(error.errno, error.strerror or os.strerror(error.errno or 0), str(folder)) from error
    finally:
        try:
            probe.unlink(missing_ok=True)
        except OSError:
            pass  # the error above is the one to tell


class RunLocked(RuntimeError):
    """Another live run holds the results folder; the message says which and how to check."""


@dataclass(frozen=True)
class Holder:
    pid: int
    host: str
    started: str  # when the run took the lock (local time, for people)
    process_start: str | None  # the process's start time in clock ticks since boot (/proc/<pid>/stat): tells pid reuse
    command: str

    @classmethod
    def this_process(cls) -> Holder:
        return cls(
            pid=os.getpid(),
            host=socket.gethostname(),
            started=time.strftime("%Y-%m-%d %H:%M:%S"),
            process_start=process_start(os.getpid()),
            command=" ".join(sys.argv)[:500],
        )

    def describe(self) -> str:
        return f"pid {self.pid} on host {self.host}, started {self.started}: {self.command}"


def process_start(pid: int) -> str | None:
    """The process's start time (field 22 of /proc/<pid>/stat), or None where /proc cannot tell."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]  # fields after the command name; the 22nd overall


def is_alive(holder: Holder) -> bool:
    """Whether the holder's process still runs (on this host); a reused pid with another start time is not it."""
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by another user
    started = process_start(holder.pid)
    return holder.process_start is None or started is None or started == holder.process_start


def read_holder(path: Path) -> Holder | None:
    """The lock's holder, or None where the file is gone or unreadable (cut short by a kill while it was written)."""
    try:
        return Holder(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def acquire(path: str | Path, results_dir: str = "results") -> tuple[Holder, str | None]:
    """Take the lock file `path` of `results_dir` for this process: (our holder, a note where a dead run's lock was
    taken over). Raises RunLocked where a live run (or a run on another host, whose life cannot be checked) holds it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ours = Holder.this_process()
    note = None
    for _ in range(5):
        tmp = path.with_name(f"{path.name}.{ours.pid}.tmp")
        tmp.write_text(json.dumps(asdict(ours)) + "\n")
        try:
            os.link(tmp, path)  # atomic, and fails where a lock exists: never a lock file half written
            return ours, note
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
        holder = read_holder(path)
        if holder is not None and holder.pid == ours.pid and holder.host == ours.host:
            return ours, note  # taken already by this process (the Snakefile read twice)
        if holder is not None and holder.host != ours.host:
            raise RunLocked(
                f"another run may be using {results_dir}/ ({holder.describe()}). Its life cannot be checked from "
                f"{ours.host}: run `ps -p {holder.pid}` on {holder.host}. Only if that run has ended, remove {path} and "
                f"start again (`snakemake --unlock` does not remove it)."
            )
        if holder is not None and is_alive(holder):
            raise RunLocked(
                f"another run is using {results_dir}/ ({holder.describe()}). Wait for it to end, or stop it; "
                f"`ps -p {holder.pid}` shows whether it is still alive. Two runs at once would write the same files, "
                f"so this lock stays even after `snakemake --unlock`; only if that process is gone, remove {path}."
            )
        if holder is None and _age_s(path) < 10:
            time.sleep(0.2)  # being written by a run starting just now: look again
            continue
        note = (
            f"the lock of an earlier run that ended without releasing it ({holder.describe() if holder else 'unreadable'}) was taken over"
        )
        path.unlink(missing_ok=True)
    raise RunLocked(f"could not take the run lock {path}: it kept changing (several runs starting at once?)")


def _age_s(path: Path) -> float:
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return float("inf")


def release(path: str | Path, holder: Holder) -> None:
    """Remove the lock file where it is still ours (never another run's)."""
    path = Path(path)
    current = read_holder(path)
    if current is not None and (current.pid, current.host, current.process_start) == (holder.pid, holder.host, holder.process_start):
        path.unlink(missing_ok=True)


#: Snakemake command-line options under which it runs no job (it lists, draws, cleans, unlocks ...): the lock and the
#: start-up sweep stay out of the way. A dry run (`-n`) is apart: the sweep forces the same report jobs and reports the
#: records a real run would remove.
NO_JOB_OPTIONS = (
    "touch", "lint", "list_rules", "list_target_rules", "dag", "rulegraph", "filegraph", "d3dag", "summary",
    "detailed_summary", "archive", "cleanup_metadata", "cleanup_shadow", "unlock", "list_changes", "list_input_changes",
    "list_params_changes", "list_untracked", "delete_all_output", "delete_temp_output", "print_compilation",
    "containerize", "export_cwl", "generate_unit_tests", "list_conda_envs", "conda_cleanup_envs",
    "conda_create_envs_only", "report",
)  # fmt: skip


def snakemake_mode() -> str:
    """How the Snakemake command-line run parsing this workflow was started: "run" (it runs jobs), "dry-run", "no-jobs"
    (--unlock, --list-*, --dag ...), or "unknown" (not from the command line: Snakemake's Python API). Read from the
    options Snakemake parsed (its profile's included), found on the call stack of its CLI."""
    frame = sys._getframe(1)
    while frame is not None:
        options = frame.f_locals.get("args") if frame.f_code.co_name == "args_to_api" else None
        if options is not None and hasattr(options, "dryrun"):
            if options.dryrun:
                return "dry-run"
            return "no-jobs" if any(getattr(options, name, None) for name in NO_JOB_OPTIONS) else "run"
        frame = frame.f_back
    return "unknown"


def force_files(paths: Iterable[str]) -> bool:
    """Have Snakemake run the jobs of `paths` (as `--forcerun PATH` does, which also makes them targets), from the
    Snakefile, before the DAG is built. Snakemake sets its DAG settings on the workflow only after parsing the Snakefile,
    so they are found on the call stack, in the DAG API being made (snakemake.api.DAGApi, Snakemake 9). False where
    there is none (then nothing is forced)."""
    frame = sys._getframe(1)
    while frame is not None:
        owner = frame.f_locals.get("self") if frame.f_code.co_name == "__post_init__" else None
        settings = getattr(owner, "dag_settings", None) if type(owner).__name__ == "DAGApi" else None
        if settings is not None and hasattr(settings, "forcerun"):
            settings.forcerun = frozenset(settings.forcerun) | set(paths)
            return True
        frame = frame.f_back
    return False
