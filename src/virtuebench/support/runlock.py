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


# ---------------------------------------------------------------------------------------------
# What a killed run left running: "snakemake --unlock is safe" only where nothing is

#: Set by the run that holds a results folder's lock, in its own environment: every job it starts on this host, and each
#: job's own children, inherit it, so the jobs a killed run left running are found by it (leftover_processes).
RUN_MARKER = "VIRTUEBENCH_RUN"


def run_marker(lock: str | Path, holder: Holder) -> str:
    """The marker value of the run holding `lock` (an absolute path): the lock and the holder's pid and start time."""
    return json.dumps({"lock": str(lock), "pid": holder.pid, "process_start": holder.process_start}, sort_keys=True)


@dataclass(frozen=True)
class Leftover:
    """A process of a run that is gone (a job its killed Snakemake started), or a SLURM job of this folder."""

    id: str  # a pid, or a SLURM job id
    what: str  # the command line, or the SLURM job's name and state
    slurm: bool = False
    lock: str | None = None  # the run lock of the run that started it (a process's)

    def describe(self) -> str:
        return f"SLURM job {self.id} ({self.what})" if self.slurm else f"pid {self.id} ({self.what})"


def _marker_of(pid: int) -> str | None:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None  # gone, or another user's: not a job of ours
    prefix = f"{RUN_MARKER}=".encode()
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return entry[len(prefix) :].decode(errors="replace")
    return None


def _run_alive(marker: dict) -> bool:
    try:
        pid = int(marker["pid"])
    except (KeyError, TypeError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    recorded, started = marker.get("process_start"), process_start(pid)
    return recorded is None or started is None or started == recorded


def leftover_processes(state_root: str | Path = STATE_ROOT, proc: str | Path = "/proc") -> list[Leftover]:
    """The processes on this host that a run of this working directory started and that outlived it: each carries the
    RUN_MARKER of a lock under `state_root` whose run (its Snakemake) is no longer alive. A live run's jobs, this process
    and jobs of another working directory are not listed. Runs started before the marker existed are not found."""
    root = Path(state_root).resolve()
    ours = os.environ.get(RUN_MARKER)
    found = []
    for entry in sorted(Path(proc).iterdir(), key=lambda p: (len(p.name), p.name)):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        value = _marker_of(int(entry.name))
        if value is None or value == ours:
            continue
        try:
            marker = json.loads(value)
            lock = Path(marker["lock"])
        except (ValueError, TypeError, KeyError):
            continue
        if not lock.is_relative_to(root) or _run_alive(marker):
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue  # ended just now
        found.append(Leftover(entry.name, command[:200] or "?", lock=str(lock)))
    return found


def slurm_jobs(work_dir: str | Path = ".", run=None) -> tuple[list[Leftover], str | None]:
    """This user's SLURM jobs, queued or running, submitted from `work_dir` (the folder Snakemake submits from, each
    job's working directory): (the jobs, None), or ([], why squeue could not tell). ([], None) where there is no SLURM."""
    import getpass
    import shutil
    import subprocess

    squeue = shutil.which("squeue")
    if squeue is None:
        return [], None
    run = run or subprocess.run
    here = Path(work_dir).resolve()
    try:
        result = run([squeue, "-h", "-u", getpass.getuser(), "-o", "%i|%j|%T|%Z"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return [], f"squeue did not answer ({error})"
    if result.returncode != 0:
        said = (result.stderr or result.stdout).strip().splitlines()
        return [], f"squeue failed ({said[-1] if said else f'exit {result.returncode}'})"
    jobs = []
    for line in result.stdout.splitlines():
        parts = line.strip().split("|", 3)
        if len(parts) == 4 and parts[3] and Path(parts[3]).resolve() == here:
            jobs.append(Leftover(parts[0], f"{parts[1]}, {parts[2]}", slurm=True))
    return jobs, None


def unlock_advice(left: list[Leftover], slurm_unknown: str | None) -> tuple[bool, str]:
    """(safe, what to say) where Snakemake's lock of an earlier run is left and no other run holds this folder's lock."""
    if not left and slurm_unknown is None:
        return True, (
            "Snakemake's lock of an earlier run is left in .snakemake/locks (a run killed or cut off); no other run is "
            "live in this folder, no process of that run is left on this host and no SLURM job of this folder is queued "
            "or running: `snakemake --unlock` is safe here, then the same command again."
        )
    return False, (
        "Snakemake's lock of an earlier run is left in .snakemake/locks, and that run is not over: "
        + still_running(left, slurm_unknown)
        + " Only then `snakemake --unlock`, and the same command again."
    )


def still_running(left: list[Leftover], slurm_unknown: str | None = None) -> str:
    """What a killed run left running, and what to do about it, in a sentence or two."""
    shown = "; ".join(item.describe() for item in left[:10]) + (f"; and {len(left) - 10} more" if len(left) > 10 else "")
    pids = " ".join(item.id for item in left if not item.slurm)
    jobs = " ".join(item.id for item in left if item.slurm)
    stop = " or ".join(part for part in (f"`kill {pids}`" if pids else "", f"`scancel {jobs}`" if jobs else "") if part)
    said = f"still running: {shown}. Wait for them to end, or stop them ({stop})." if left else ""
    unknown = (
        f" Whether SLURM jobs of this folder still run is not known: {slurm_unknown}; check `squeue -u $USER`." if slurm_unknown else ""
    )
    return (said + unknown).strip()
