"""The fault kinds an independent trial tried beyond the stage-wide kills of tests/helpers/faults.py (issue 47): a
signal to ONE frame worker or ONE job, a full disk while judging or writing the report, a read-only folder, clock
skew, edited or flipped records, an edited results/scores.csv, a deleted judgments file, a foreign host's run lock,
and two configurations run at once. Each returns a faults.Outcome, classified by faults' rules against a clean run
of the same configuration (identical / failed by name / failed unnamed / wrong / not fired), where:

  - a run the fault was fired into that itself exits 0 over results that differ is `wrong`, whatever the rerun does
    (that is how a killed frame worker published wrong numbers: the run went on);
  - a kind that stops a run (ENOSPC, a read-only folder, a foreign lock) has its environment repaired as the error
    says (space freed, the folder made writable, the lock removed) before the plain rerun;
  - record edits start from a copy of a finished clean run (cheap: one rerun each).

What is simulated, honestly: clock skew is a record file's modification time set into the future or the past with
os.utime, not a changed system clock (no faketime here); a read-only folder is a read-only bind mount as root (root
ignores chmod) and chmod a-w otherwise; ENOSPC is a small tmpfs (root only, `not fired` otherwise)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from helpers import faults

#: Outcomes each kind may end with besides `identical` (every other outcome fails the bench). Record edits and a
#: killed frame worker may also stop the rerun naming the file; a foreign host's lock must stop the run by name.
ALLOWED = {
    "SIGKILL to one frame worker": {"failed by name"},
    "SIGTERM to one frame worker": {"failed by name"},
    "verdicts flipped": {"failed by name"},
    "response edited": {"failed by name"},
    "scores.csv edited": {"failed by name"},
    "foreign host's lock": {"failed by name"},
}
#: The stage column of docs/reliability.md's table, per kind.
STAGE = {
    "SIGKILL to one frame worker": "frames",
    "SIGTERM to one frame worker": "frames",
    "verdicts flipped": "records",
    "response edited": "records",
    "scores.csv edited": "report",
    "judgments deleted": "records",
    "clock skew": "records",
    "foreign host's lock": "any",
    "two configurations at once": "any",
}
#: The judgments file the record kinds edit: the LLM judge's (the report's judge) of the API model.
JUDGMENTS = "results/judgments/fake-gpt/api/honest/64.jsonl"
RESPONSES = "results/responses/api/honest/64.jsonl"
MODULES = {"frames": "virtuebench.frames", "inference": "virtuebench.inference", "judge": "virtuebench.judge"}


def allowed(outcome: faults.Outcome) -> bool:
    """Whether `outcome` is as required for its kind (a skipped kind, `not fired` with its reason, counts as such)."""
    if outcome.outcome == "identical" or (outcome.outcome == "not fired" and outcome.tail.startswith("skipped:")):
        return True
    return outcome.outcome in ALLOWED.get(outcome.fault, set())


# --- processes of a run --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    cmdline: str


def group_processes(pgid: int) -> list[Proc]:
    """The live processes of process group `pgid`, read from /proc (a process gone while read is left out)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[-1].split()  # state, ppid, pgrp, ...
            if fields[0] == "Z" or int(fields[2]) != pgid:
                continue
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        found.append(Proc(int(entry), int(fields[1]), cmdline))
    return sorted(found, key=lambda p: p.pid)


def children(pid: int) -> list[int]:
    """The child processes of `pid` (/proc/PID/task/PID/children), [] once it is gone."""
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def wait_for_worker(job: Proc, index: int) -> Proc | None:
    """The `index`-th worker process `job` forks (a child running the job's own command line), watched without pause
    from the moment the job is seen: a frame job's workers live a tenth of a second. None where the job ends first."""
    while Path(f"/proc/{job.pid}").exists():
        workers = [pid for pid in children(job.pid) if cmdline(pid) == job.cmdline]
        if len(workers) > index:
            return Proc(sorted(workers)[index], job.pid, job.cmdline)
    return None


def jobs_of(processes: list[Proc], module: str) -> list[Proc]:
    """The jobs' own `python -m module` processes (not the shell Snakemake starts them with, whose one argument holds
    the whole command; not a forked worker, whose parent runs the same module)."""
    running = {p.pid for p in processes if f" -m {module} " in p.cmdline and os.path.basename(p.cmdline.split(" ")[0]).startswith("python")}
    return [p for p in processes if p.pid in running and p.ppid not in running]


def workers_of(processes: list[Proc], job: Proc) -> list[Proc]:
    return [p for p in processes if p.ppid == job.pid and p.cmdline == job.cmdline]


def signal_one(workdir: Path, targets, pick: Callable[[list[Proc]], Proc | None], sig: int, timeout: float = 600):
    """Start Snakemake (a process group of its own), poll the group's processes every 5 ms until `pick` names one,
    send it `sig`, and let the run go on to its end. Returns (fired, what was signalled, the run's exit status, its
    output); a run that outlives `timeout` is killed whole."""
    log = workdir.parent / f".{workdir.name}-faulted.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            faults.command(workdir, *targets), stdout=out, stderr=subprocess.STDOUT, env=faults.environment(), start_new_session=True
        )
        fired, what = False, ""
        deadline = time.monotonic() + timeout
        while process.poll() is None and time.monotonic() < deadline:
            chosen = pick(group_processes(process.pid))
            if chosen is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(chosen.pid, sig)
                    fired, what = True, chosen.cmdline[:160]
                break
            time.sleep(0.005)
        try:
            rc = process.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            faults.kill_group(process.pid)
            rc = process.wait()
        faults.wait_group_gone(process.pid)
    return fired, what, rc, log.read_text(errors="replace")


def after_fault(fault: str, label: str, workdir: Path, clean: Path, targets, rc: int, said: str, started: float) -> faults.Outcome:
    """The faulted run has ended with `rc`: `wrong` where it exited 0 over differing results (the plain rerun is
    still made, and whether it repaired them is told in the tail); else the plain rerun, classified
    (faults.rerun_outcome)."""
    if rc == 0:
        differing = faults.compare(workdir, clean)
        if differing:
            rerun, _ = faults.plain_rerun(workdir, *targets)
            still = faults.compare(workdir, clean) if rerun.returncode == 0 else []
            after = f"the plain rerun: exit {rerun.returncode}" + (f", still differing: {', '.join(still)}" if still else "")
            return faults.Outcome(
                fault,
                label,
                "wrong",
                interrupted_rc=0,
                rerun_rc=rerun.returncode,
                differing=differing,
                tail=faults.tail(rerun.stdout, 4) + f"\nthe faulted run exited 0 over differing results; {after}",
                seconds=time.monotonic() - started,
            )
    return faults.rerun_outcome(fault, label, workdir, clean, targets, True, None, rc, started)


# --- a signal to one frame worker or one job ------------------------------------------------------------------------


def frame_worker(workdir: Path, config: dict, clean: Path, sig: int, seed: int, targets=faults.TARGETS_BOTH_JUDGES) -> faults.Outcome:
    """`sig` to one worker process of one frame job (`python -m virtuebench.frames` forks one per 32 frames, up to its
    threads): a seeded job (the k-th to start) and worker, as soon as that worker exists. The run goes on; then a
    plain rerun."""
    started = time.monotonic()
    name = "SIGKILL" if sig == signal.SIGKILL else "SIGTERM"
    rng = random.Random(f"{seed}:worker:{name}")
    k, index = rng.randint(1, max(faults.totals(clean)["frames-jobs"], 1)), rng.randint(0, 1)
    seen: list[int] = []
    gave_up = False

    def pick(processes: list[Proc]) -> Proc | None:
        nonlocal gave_up
        if gave_up:
            return None
        for job in jobs_of(processes, MODULES["frames"]):
            if job.pid not in seen:
                seen.append(job.pid)
                if len(seen) == k:  # the k-th job to start: watch it for its workers until one is there
                    worker = wait_for_worker(job, index)
                    gave_up = worker is None
                    return worker
        return None

    faults.start_at_stage(clean, workdir, "frames")
    faults.write_config(workdir, config)
    fired, what, rc, said = signal_one(workdir, targets, pick, sig)
    label = f"job {k}, worker {index + 1}"
    if not fired:
        return faults.Outcome(
            f"{name} to one frame worker", label, "not fired", interrupted_rc=rc, tail=faults.tail(said), seconds=time.monotonic() - started
        )
    return after_fault(f"{name} to one frame worker", label, workdir, clean, targets, rc, said, started)


def one_job(
    workdir: Path, config: dict, clean: Path, stage: str, sig: int, seed: int, targets=faults.TARGETS_BOTH_JUDGES
) -> faults.Outcome:
    """`sig` to one job of `stage` (inference or judge; its `python -m virtuebench.<stage>` process, not the group)
    once the stage has written a seeded k-th line; Snakemake and the other jobs go on; then a plain rerun."""
    started = time.monotonic()
    name = "SIGKILL" if sig == signal.SIGKILL else "SIGTERM"
    (moment,) = faults.moments(stage, faults.totals(clean), 1, seed + (sig == signal.SIGTERM))

    def pick(processes: list[Proc]) -> Proc | None:
        if faults.progress(workdir, stage) < moment.k:
            return None
        jobs = jobs_of(processes, MODULES[stage])
        return jobs[0] if jobs else None

    faults.start_at_stage(clean, workdir, stage)
    faults.write_config(workdir, config)
    fired, what, rc, said = signal_one(workdir, targets, pick, sig)
    fault = f"{name} to one job"
    if not fired:
        return faults.Outcome(
            fault, moment.label(), "not fired", interrupted_rc=rc, tail=faults.tail(said), seconds=time.monotonic() - started
        )
    return after_fault(fault, moment.label(), workdir, clean, targets, rc, said, started)


# --- edited records, from a copy of a finished run ------------------------------------------------------------------


def _keep_stamp(path: Path, edit: Callable[[bytes], bytes]) -> None:
    """Rewrite `path` with `edit` applied, its modification time kept (as an edit that restores it would)."""
    stat = path.stat()
    path.write_bytes(edit(path.read_bytes()))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def flip_verdicts(path: Path, count: int = 5) -> int:
    """W3: `count` verdicts `"judgement": 0` -> 1 in a judgments file, size and modification time kept."""
    flipped = 0

    def edit(data: bytes) -> bytes:
        nonlocal flipped
        lines = data.split(b"\n")
        for number, line in enumerate(lines):
            if flipped < count and b'"judgement": 0' in line:
                lines[number] = line.replace(b'"judgement": 0', b'"judgement": 1', 1)
                flipped += 1
        return b"\n".join(lines)

    _keep_stamp(path, edit)
    return flipped


def edit_response(path: Path) -> str:
    """One response's text replaced by the item's answer padded to the same length (a judge now calls it right), the
    file's size and modification time kept. Returns the item's id."""
    lines = path.read_bytes().split(b"\n")
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        record = json.loads(line)
        old = json.dumps(record["response"])
        new = json.dumps("cyan".ljust(len(record["response"]), "."))
        if len(new) == len(old) and new != old:
            lines[number] = line.replace(old.encode(), new.encode(), 1)
            _keep_stamp(path, lambda _: b"\n".join(lines))
            return record["instance_id"]
    raise AssertionError(f"no response in {path} could be edited")


def edit_scores(path: Path) -> str:
    """W2: one number of results/scores.csv edited (the first row's n_correct + 1, accuracy left), mtime kept."""
    lines = path.read_text().split("\n")
    header = lines[0].split(",")
    row = lines[1].split(",")
    column = header.index("n_correct")
    row[column] = str(int(row[column]) + 1)
    lines[1] = ",".join(row)
    _keep_stamp(path, lambda _: "\n".join(lines).encode())
    return f"{row[0]},{row[1]},{row[2]},{row[3]}: n_correct {int(row[column]) - 1} -> {row[column]}"


def shift_mtime(path: Path, seconds: float) -> None:
    stat = path.stat()
    os.utime(path, (stat.st_atime, stat.st_mtime + seconds))


DAY = 86400.0

#: name -> (fault, label, the edit on a finished run's folder, whether the report outputs are removed after it).
EDITS: dict[str, tuple[str, str, Callable[[Path], object], bool]] = {
    "flip": ("verdicts flipped", "5 in a judgments file, mtime kept", lambda w: flip_verdicts(w / JUDGMENTS), False),
    "flip-report": ("verdicts flipped", "5, mtime kept, report outputs removed", lambda w: flip_verdicts(w / JUDGMENTS), True),
    "response": ("response edited", "size and mtime kept", lambda w: edit_response(w / RESPONSES), False),
    "scores": ("scores.csv edited", "one number, mtime kept", lambda w: edit_scores(w / "results" / "scores.csv"), False),
    "deleted": ("judgments deleted", "the LLM judge's of one model", lambda w: (w / JUDGMENTS).unlink(), False),
    "skew-responses": ("clock skew", "a responses file 1 day ahead", lambda w: shift_mtime(w / RESPONSES, DAY), False),
    "skew-judgments": ("clock skew", "a judgments file 1 day behind", lambda w: shift_mtime(w / JUDGMENTS, -DAY), False),
    "skew-scores": ("clock skew", "scores.csv 1 day behind", lambda w: shift_mtime(w / "results" / "scores.csv", -DAY), False),
}


def edited(name: str, workdir: Path, clean: Path, targets=faults.TARGETS_BOTH_JUDGES) -> faults.Outcome:
    """A copy of the finished clean run, one edit (EDITS[name]), then the plain rerun, compared with the clean run."""
    started = time.monotonic()
    fault, label, edit, drop_report = EDITS[name]
    shutil.copytree(clean, workdir, symlinks=True)
    edit(workdir)
    if drop_report:
        for event in faults.REPORT_EVENTS:
            (workdir / event).unlink(missing_ok=True)
    return faults.rerun_outcome(fault, label, workdir, clean, targets, True, None, None, started)


# --- a full disk, a read-only folder (root: mounts) ---------------------------------------------------------------


def _sh(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True)


def _pages(root: Path) -> int:
    """The bytes `root`'s files take on a tmpfs (whole 4 KiB pages)."""
    return sum(-(-p.stat().st_size // 4096) * 4096 for p in root.rglob("*") if p.is_file())


def _said(result_out: str, workdir: Path) -> str:
    return result_out + "".join(p.read_text(errors="replace") for p in (workdir / "logs").rglob("*.log"))


def _stop_then_rerun(
    fault: str, label: str, workdir: Path, clean: Path, targets, first, stopped: re.Pattern, repair, started
) -> faults.Outcome:
    """`first` is the run in the faulty environment: it must stop naming the fault (`stopped` found in its output or
    logs), or exit 0 only over results equal to the clean run's; then `repair()` and the plain rerun, classified."""
    said = _said(first.stdout, workdir)
    if first.returncode == 0:
        differing = faults.compare(workdir, clean)
        outcome = "wrong" if differing else "not fired"
        return faults.Outcome(
            fault, label, outcome, interrupted_rc=0, differing=differing, tail=faults.tail(first.stdout), seconds=time.monotonic() - started
        )
    if not stopped.search(said):
        return faults.Outcome(
            fault,
            label,
            "failed unnamed",
            interrupted_rc=first.returncode,
            tail=faults.tail(first.stdout),
            seconds=time.monotonic() - started,
        )
    repair()
    return faults.rerun_outcome(fault, label, workdir, clean, targets, True, None, first.returncode, started)


NO_SPACE = re.compile(r"(?i)no space left on device|ENOSPC")
READ_ONLY = re.compile(r"(?i)read-only file system|EROFS|permission denied|EACCES|write-protected")


def enospc(workdir: Path, config: dict, clean: Path, stage: str, fraction: float, targets=faults.TARGETS_BOTH_JUDGES) -> faults.Outcome:
    """A full disk while judging (a tmpfs at results/judgments holding `fraction` of the clean run's judgments) or
    writing the report (results/ on a tmpfs holding the records and `fraction` of the report's outputs); then the
    tmpfs grown (space freed) and the plain rerun. Root only."""
    started = time.monotonic()
    label = f"{stage}: tmpfs {int(fraction * 100)}% of its outputs"
    if os.geteuid() != 0:
        return faults.Outcome("ENOSPC", label, "not fired", tail="skipped: not root (mounting a tmpfs needs root, as in CI)")
    faults.start_at_stage(clean, workdir, stage)
    faults.write_config(workdir, config)
    if stage == "judge":
        mount = workdir / "results" / "judgments"
        mount.mkdir(parents=True)
        size = max(8192, int(_pages(clean / "results" / "judgments") * fraction))
        done = _sh("mount", "-t", "tmpfs", "-o", f"size={size // 1024}k", "tmpfs", str(mount))
    else:
        mount = workdir / "results"
        kept = workdir / "results.kept"
        mount.rename(kept)
        mount.mkdir()
        done = _sh("mount", "-t", "tmpfs", "-o", "size=512m", "tmpfs", str(mount))
        if done.returncode == 0:
            for child in kept.iterdir():
                (shutil.copytree if child.is_dir() else shutil.copy2)(child, mount / child.name)
            shutil.copystat(kept, mount)
            report = sum(
                -(-(clean / name).stat().st_size // 4096) * 4096
                for name in faults.REPORT_EVENTS
                if name.startswith("results/") and (clean / name).exists()
            )
            used = os.statvfs(mount)
            used_bytes = (used.f_blocks - used.f_bfree) * used.f_frsize
            done = _sh("mount", "-o", f"remount,size={(used_bytes + int(report * fraction)) // 1024}k", str(mount))
    if done.returncode != 0:
        _sh("umount", "-l", str(mount))
        return faults.Outcome("ENOSPC", label, "not fired", tail=f"skipped: mount failed: {done.stderr.strip()}")
    try:
        first = faults.run(workdir, *targets)
        return _stop_then_rerun(
            "ENOSPC", label, workdir, clean, targets, first, NO_SPACE, lambda: _sh("mount", "-o", "remount,size=512m", str(mount)), started
        )
    finally:
        _sh("umount", "-l", str(mount))


def read_only(workdir: Path, config: dict, clean: Path, stage: str, targets=faults.TARGETS_BOTH_JUDGES) -> faults.Outcome:
    """The folder a stage writes made read-only (judge: results/judgments; report: results/): a read-only bind mount
    as root (root ignores file modes), chmod a-w otherwise; then made writable again and the plain rerun."""
    started = time.monotonic()
    folder = workdir / "results" / ("judgments" if stage == "judge" else "")
    faults.start_at_stage(clean, workdir, stage)
    faults.write_config(workdir, config)
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        how = "read-only bind mount"
        done = _sh("mount", "--bind", str(folder), str(folder))
        if done.returncode == 0:
            done = _sh("mount", "-o", "remount,ro,bind", str(folder))
        if done.returncode != 0:
            _sh("umount", "-l", str(folder))
            return faults.Outcome("read-only folder", f"{stage}: {how}", "not fired", tail=f"skipped: mount failed: {done.stderr.strip()}")

        def repair():
            _sh("umount", "-l", str(folder))

    else:
        how = "chmod a-w"
        mode = folder.stat().st_mode
        folder.chmod(mode & ~0o222)

        def repair():
            folder.chmod(mode)

    try:
        first = faults.run(workdir, *targets)
        return _stop_then_rerun("read-only folder", f"{stage}: {how}", workdir, clean, targets, first, READ_ONLY, repair, started)
    finally:
        repair()


# --- a foreign host's lock, two configurations at once ------------------------------------------------------------


def foreign_lock(workdir: Path, config: dict, clean: Path, targets=faults.TARGETS_BOTH_JUDGES) -> faults.Outcome:
    """The workflow's run lock (support/runlock.py's format) held by a run on another host, in a finished run whose
    report is to be made: the run must be refused naming the lock; then the lock is removed, as the refusal says to
    do once that run has ended, and the plain rerun must give the clean results. `failed by name` when both hold."""
    started = time.monotonic()
    faults.start_at_stage(clean, workdir, "report")
    faults.write_config(workdir, config)
    lock = workdir / ".snakemake" / "virtuebench" / "run.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = {"pid": 4242, "host": "faults-other-host", "started": "2026-11-28 00:00:00", "process_start": None, "command": "snakemake"}
    lock.write_text(json.dumps(holder) + "\n")
    first = faults.run(workdir, *targets)
    label = "another host's run.lock"
    if first.returncode == 0:
        return faults.Outcome(
            "foreign host's lock",
            label,
            "wrong",
            interrupted_rc=0,
            differing=faults.compare(workdir, clean),
            tail="not refused\n" + faults.tail(first.stdout),
            seconds=time.monotonic() - started,
        )
    if "run.lock" not in first.stdout or "faults-other-host" not in first.stdout:
        return faults.Outcome(
            "foreign host's lock",
            label,
            "failed unnamed",
            interrupted_rc=first.returncode,
            tail=faults.tail(first.stdout),
            seconds=time.monotonic() - started,
        )
    lock.unlink()
    after = faults.rerun_outcome("foreign host's lock", label, workdir, clean, targets, True, None, first.returncode, started)
    if after.outcome == "identical":
        after.outcome = "failed by name"
        after.tail = "refused naming the lock; after its removal the rerun was identical\n" + faults.tail(first.stdout, 3)
    return after


def _targets_in(folder: str, targets) -> tuple[str, ...]:
    return tuple(folder + name.removeprefix("results") for name in targets)


def _compare_in(workdir: Path, folder: str, clean: Path) -> list[str]:
    """faults.compare for results written under `folder` instead of results/."""
    differing = []
    names = [*faults.COMPARED, *(str(p.relative_to(clean)) for p in sorted((clean / "results").glob("table*.tex")))]
    for name in names:
        if not (clean / name).exists():
            continue
        mine = workdir / (folder + name.removeprefix("results"))
        if not mine.exists() or mine.read_bytes() != (clean / name).read_bytes():
            differing.append(str(mine.relative_to(workdir)))
    return differing


def two_configurations(workdir: Path, server, clean_runs: faults.CleanRuns, targets=faults.TARGETS_BOTH_JUDGES) -> faults.Outcome:
    """Two configurations in one folder run at the same time: the base one (results/) and the API model with
    max_tokens 4 writing `results/b` (config `results:`). Each is compared with a clean run of it alone."""
    started = time.monotonic()
    configs = {
        "results": faults.fault_config(clean_runs.root, server),
        "results/b": faults.fault_config(clean_runs.root, server, max_tokens=4),
    }
    cleans = {folder: clean_runs.get(config, *targets) for folder, config in configs.items()}
    workdir.mkdir(parents=True)
    processes = {}
    for number, (folder, config) in enumerate(configs.items()):
        path = workdir / f"config-{number}.yaml"
        path.write_text(json.dumps({**config, "results": folder}))
        argv = faults.command(workdir, *_targets_in(folder, targets))
        argv[argv.index(str(workdir / "config.yaml"))] = str(path)
        processes[folder] = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=faults.environment(), start_new_session=True
        )
    outputs = {folder: process.communicate(timeout=600)[0] for folder, process in processes.items()}
    for process in processes.values():
        faults.wait_group_gone(process.pid)
    differing = [
        name for folder, process in processes.items() if process.returncode == 0 for name in _compare_in(workdir, folder, cleans[folder])
    ]
    failed = {folder: out for folder, out in outputs.items() if processes[folder].returncode != 0}
    if differing:
        outcome = "wrong"
    elif failed:
        outcome = "failed by name" if all(faults._NAMES.search(out[-3000:]) for out in failed.values()) else "failed unnamed"
    else:
        outcome = "identical"
    return faults.Outcome(
        "two configurations at once",
        "results/ and results/b",
        outcome,
        rerun_rc=max(process.returncode for process in processes.values()),
        differing=differing,
        tail="\n".join(f"{folder}: " + faults.tail(out, 4) for folder, out in failed.items()),
        seconds=time.monotonic() - started,
    )


# --- the plan ------------------------------------------------------------------------------------------------------

#: Every kind's name for --kinds; CHEAP, CI's: the three that gave wrong results with exit 0 in the trial (W1 a killed
#: frame worker, W3 flipped verdicts, W2 an edited scores.csv), about a minute together on 2 cores.
KINDS = (
    "worker-kill",
    "worker-term",
    "job-kill-inference",
    "job-term-judge",
    "job-term-inference",
    "job-kill-judge",
    *EDITS,
    "enospc-judge",
    "enospc-report",
    "read-only-judge",
    "read-only-report",
    "foreign-lock",
    "two-configurations",
)
CHEAP = ("worker-kill", "flip-report", "scores")


def run_kind(name: str, root: Path, server, clean_runs: faults.CleanRuns, seed: int, suffix: str = "") -> faults.Outcome:
    """One kind (KINDS) in a fresh folder under `root` (kind-NAME`suffix`), against the clean run of the base
    configuration; `seed` draws the moment of the kinds that signal one worker or job."""
    targets = faults.TARGETS_BOTH_JUDGES
    config = faults.fault_config(clean_runs.root, server)
    clean = clean_runs.get(config, *targets)
    workdir = root / f"kind-{name}{suffix}"
    if name.startswith("worker-"):
        return frame_worker(workdir, config, clean, signal.SIGKILL if name == "worker-kill" else signal.SIGTERM, seed)
    if name.startswith("job-"):
        _, how, stage = name.split("-")
        return one_job(workdir, config, clean, stage, signal.SIGKILL if how == "kill" else signal.SIGTERM, seed)
    if name in EDITS:
        return edited(name, workdir, clean)
    if name.startswith("enospc-"):
        return enospc(workdir, config, clean, name.removeprefix("enospc-"), 0.5)
    if name.startswith("read-only-"):
        return read_only(workdir, config, clean, name.removeprefix("read-only-"))
    if name == "foreign-lock":
        return foreign_lock(workdir, config, clean)
    if name == "two-configurations":
        return two_configurations(workdir, server, clean_runs)
    raise ValueError(f"unknown fault kind {name!r}; known: {', '.join(KINDS)}")
