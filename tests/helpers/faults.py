"""Fault injection into whole Snakemake runs: start the workflow in its own process group, fire kill -9 or SIGINT
at a seeded moment of one stage (frames, inference, judge, report), rerun plainly (with `snakemake --unlock` first
only where Snakemake asks for it) and classify what the rerun gave against an uninterrupted run of the same
configuration:

  identical       the rerun exited 0 and every compared result (results/scores.csv, results/table*.tex,
                  results/comparisons.csv, results/invalid_items.csv) is equal byte for byte to the clean run's
  failed by name  the rerun exited non-zero and its output names what is wrong (a file under results/ or logs/, a
                  video, or what to run)
  failed unnamed  the rerun exited non-zero without naming anything
  wrong           the rerun exited 0 over results that differ from the clean run's (must never happen)
  not fired       the run ended before the moment came: nothing was tested (never counted as identical)

Used by tests/workflow/test_faults.py (a seeded handful, in `make test`) and tools/faults.py (the long suite, in CI).
A moment is a stage and a seeded position in that stage's own progress, polled every 20 ms:
  frames     the k-th frame job's start, then a seeded delay of 0.2 to 1.6 s (the JPEGs under results/frames,
             hidden temporary folders included, are counted when it fires)
  inference  the k-th response line under results/responses (*.partial and finished *.jsonl together)
  judge      the k-th judgment line under results/judgments (likewise)
  report     the k-th of the report's logs and outputs to appear (logs/scores.log, results/scores.csv, ...)
then for the report a seeded delay of up to 1.5 s, so the kill lands inside a job's start-up or its writing."""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from helpers import workflow
from helpers.data import REPO
from helpers.fake_openai import FakeOpenAI
from helpers.workflow import command

STAGES = ("frames", "inference", "judge", "report")
OUTCOMES = ("identical", "failed by name", "failed unnamed", "wrong", "not fired")
#: The results compared byte for byte (each where the clean run has it).
COMPARED = (
    "results/scores.csv",
    "results/comparisons.csv",
    "results/invalid_items.csv",
    "results/judge_agreement/rules__vs__fake-gpt.json",
)
#: The report targets: what the fault runs build (the figures and the browser are left out to keep runs short).
TARGETS = ("results/scores.csv", "results/comparisons.csv", "results/table1.tex", "results/table2.tex")
#: ...and the two judges' agreement, which needs the rules judge's judgments beside the LLM judge's.
TARGETS_BOTH_JUDGES = (*TARGETS, "results/judge_agreement/rules__vs__fake-gpt.json")
#: What a stage and every stage after it write: removed from a copy of a finished run to start a run at that stage.
#: The store's answers and verdicts go too: a stage started again must do its work (ask its models), not find it stored.
ANSWERS, VERDICTS = ".virtuebench/store/answers", ".virtuebench/store/verdicts"
FROM_STAGE = {
    "frames": ("results/frames", "results/responses", "results/judgments", ANSWERS, VERDICTS, "results/judge_agreement"),
    "inference": ("results/responses", "results/judgments", ANSWERS, VERDICTS, "results/judge_agreement"),
    "judge": ("results/judgments", VERDICTS, "results/judge_agreement"),
    "report": (),
}
#: The report's files in the order they appear (logs at a job's start, outputs at its end).
REPORT_EVENTS = (
    "logs/scores.log",
    "logs/comparisons.log",
    "results/scores.csv",
    "results/invalid_items.csv",
    "results/comparisons.csv",
    "logs/tables.log",
    "results/table1.tex",
    "results/table2.tex",
)
#: Snakemake's words when a directory is locked (LockException) or a previous run left incomplete files.
LOCKED = re.compile(r"LockException|Directory cannot be locked|--unlock")
JUDGE_KEY = "VB_FAULTS_KEY"


class SlowFakeOpenAI(FakeOpenAI):
    """The fake server, slowed so the inference and judge stages last long enough to be interrupted inside a job;
    and answer-setting aware: a model asked with max_tokens under 8 gets a reply cut off at the limit
    (finish_reason "length"), so a change of max_tokens changes the scores and a stale answer would show."""

    def __init__(self, backend_delay_s: float = 0.05, judge_delay_s: float = 0.03):
        super().__init__(backend_delay_s=backend_delay_s)
        self.judge_delay_s = judge_delay_s
        # hold_cut_off_after(k): the (k+1)-th cut-off reply from then on is held until release(), so that a re-inference
        # is interrupted with exactly k new answers written: not a moment a poller must catch before the job ends.
        self.cut_off_answers = 0
        self.cut_off_hold: int | None = None
        self.cut_off_released = threading.Event()

    def hold_cut_off_after(self, k: int) -> None:
        with self.lock:
            self.cut_off_answers, self.cut_off_hold = 0, k
            self.cut_off_released.clear()

    def release(self) -> None:
        with self.lock:
            self.cut_off_hold = None
            self.cut_off_released.set()

    def __exit__(self, *exc):
        self.release()
        return super().__exit__(*exc)

    def handle(self, handler, body: dict) -> None:
        content = body["messages"][-1]["content"]
        if not isinstance(content, list):
            time.sleep(self.judge_delay_s)
        elif body.get("max_tokens", 10**9) < 8:
            time.sleep(self.backend_delay_s)
            with self.lock:
                self.backend_requests += 1
                self.cut_off_answers += 1
                held = self.cut_off_hold is not None and self.cut_off_answers > self.cut_off_hold
            if held:  # until release() (reinference_after_setting_change's, or the server's end)
                self.cut_off_released.wait()
            choice = {"index": 0, "message": {"role": "assistant", "content": "I saw"}, "finish_reason": "length"}
            reply = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"] + "-snapshot", "choices": [choice]}
            return self._send(handler, 200, reply)
        return super().handle(handler, body)


def fault_config(
    workdir: Path, server: FakeOpenAI, *, max_tokens: int = 64, n_videos: int = 2, seed: int = 7, prompts: tuple[str, ...] = ("honest",)
) -> dict:
    """A small configuration whose every stage lasts long enough to be interrupted: synthetic videos (seeded), one
    level, a reference model and an API model against the fake server, the LLM judge against the same server and
    the rules judge beside it (compare_judges: targets() then asks for their agreement, so both judge). The
    registry is written into `workdir`; `max_tokens` is the API model's answer-setting."""
    registry = yaml.safe_load((REPO / "config" / "models.yaml").read_text())
    registry["api"] = {
        "backend": "openai",
        "family": "openai",
        "env": "envs/api.yaml",
        "verified": "a fake Chat Completions server (tests/helpers/fake_openai.py)",
        "settings": {
            "model": "fake-vlm",
            "base_url": server.base_url,
            "api_key_env": None,
            "temperature": 0.0,
            "max_tokens": max_tokens,
            "max_concurrency": 1,
        },
    }
    workdir.mkdir(parents=True, exist_ok=True)
    registry_path = workdir / f"models-{max_tokens}.yaml"
    registry_path.write_text(yaml.safe_dump(registry))
    return {
        "source": {
            "name": "synthetic",
            "settings": {"seed": seed, "n_videos": n_videos, "max_duration_s": 200, "width": 192, "height": 108},
        },
        "levels": [64],
        "models": ["refuse", "api"],
        "prompts": list(prompts),
        "judge": "fake-gpt",
        "compare_judges": [["rules", "fake-gpt"]],
        "judges": {
            "fake-gpt": {"kind": "llm", "model": "gpt-fake", "base_url": server.base_url, "api_key_env": JUDGE_KEY, "max_concurrency": 1}
        },
        "model_registry": str(registry_path),
    }


def environment() -> dict:
    """helpers.workflow's, with the LLM judge's key."""
    return {**workflow.environment(), JUDGE_KEY: "sk-faults-test"}


def write_config(workdir: Path, config: dict) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))


def run(workdir: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """Snakemake to its end, in a process group of its own (killed whole if it outlives `timeout`)."""
    process = subprocess.Popen(
        command(workdir, *args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment(), start_new_session=True
    )
    try:
        out, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process.pid)
        out, _ = process.communicate()
        return subprocess.CompletedProcess(process.args, 124, out + f"\n[faults] killed after {timeout} s", "")
    return subprocess.CompletedProcess(process.args, process.returncode, out, "")


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


def wait_group_gone(pgid: int, timeout: float = 30) -> None:
    """Until no process of the group is left (a job may outlive Snakemake's main process for a moment)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    kill_group(pgid)


# --- progress per stage --------------------------------------------------------------------------------------


def _count_files(root: Path, suffix: str) -> int:
    total = 0
    for _, _, files in os.walk(root):
        total += sum(name.endswith(suffix) for name in files)
    return total


def _count_lines(root: Path, suffixes: tuple[str, ...] = (".jsonl", ".partial")) -> int:
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(suffixes):
                with contextlib.suppress(OSError):
                    with open(os.path.join(folder, name), "rb") as handle:
                        total += handle.read().count(b"\n")
    return total


def progress(workdir: Path, stage: str) -> int:
    """How far `stage` has come in `workdir`, in its own unit (see the module's docstring)."""
    if stage == "frames":
        return _count_files(workdir / "results" / "frames", ".jpg")
    if stage == "frames-jobs":  # frame jobs started (each writes its log first)
        return _count_files(workdir / "logs" / "frames", ".log")
    if stage == "inference":
        return _count_lines(workdir / "results" / "responses")
    if stage == "judge":
        return _count_lines(workdir / "results" / "judgments")
    if stage == "reinference":  # the lines of the responses being written now (finished files left out)
        return _count_lines(workdir / "results" / "responses", (".partial",))
    if stage == "report":
        return sum((workdir / name).exists() for name in REPORT_EVENTS)
    raise ValueError(f"unknown stage {stage!r}; known: {STAGES}")


def totals(workdir: Path) -> dict[str, int]:
    """Each stage's progress at the end of a finished run: the range moments are drawn from."""
    return {stage: progress(workdir, stage) for stage in (*STAGES, "frames-jobs")}


@dataclass(frozen=True)
class Moment:
    stage: str
    k: int  # fire once progress(trigger) >= k
    delay_s: float = 0.0  # then wait this long
    trigger: str = ""  # the progress polled (default: the stage's own)

    def label(self) -> str:
        unit = "job " if self.trigger == "frames-jobs" else ""
        return f"{self.stage}@{unit}{self.k}" + (f"+{self.delay_s:.2f}s" if self.delay_s else "")


def moments(stage: str, totals: dict[str, int], count: int, seed: int) -> list[Moment]:
    """`count` seeded moments inside `stage` of a run whose clean run ended at `totals` (totals()).
    inference, judge: the k-th answer or judgment, k in 1..total-1, one draw per equal slice of the stage.
    frames: a frame job (the k-th to start) and a delay after its start of 0.2 to 1.6 s (a job's interpreter start,
      its decoding and JPEG writing, its manifest): the JPEGs of these small videos are written in a few tenths of a
      second, faster than a count of them can be polled.
    report: the k-th report file to appear and a delay of up to 1.5 s."""
    rng = random.Random(f"{seed}:{stage}")
    drawn = []
    if stage == "frames":
        jobs = max(totals["frames-jobs"], 1)
        return [Moment(stage, 1 + index % jobs, round(rng.uniform(0.2, 1.6), 2), "frames-jobs") for index in range(count)]
    high = max(totals[stage] - 1, 1)
    for index in range(count):
        low_k = 1 + (high * index) // count
        high_k = max(low_k, (high * (index + 1)) // count)
        delay = round(rng.uniform(0.0, 1.5), 2) if stage == "report" else 0.0
        drawn.append(Moment(stage, rng.randint(low_k, high_k), delay))
    return drawn


# --- one fault -----------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    fault: str
    moment: str
    outcome: str
    needed_unlock: bool = False
    fired_at_progress: int | None = None
    interrupted_rc: int | None = None
    rerun_rc: int | None = None
    differing: list[str] = field(default_factory=list)
    tail: str = ""
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


def interrupt(workdir: Path, moment: Moment, sig: int, *args: str, timeout: float = 600) -> tuple[bool, int | None, int, str]:
    """Start Snakemake, send `sig` to its whole process group at `moment`, wait for the group to end. Returns
    (fired, progress when fired, Snakemake's exit status, its output)."""
    log = workdir.parent / f".{workdir.name}-interrupted.log"
    with log.open("w") as out:
        process = subprocess.Popen(command(workdir, *args), stdout=out, stderr=subprocess.STDOUT, env=environment(), start_new_session=True)
        pgid = process.pid
        fired, at = False, None
        deadline = time.monotonic() + timeout
        while process.poll() is None and time.monotonic() < deadline:
            if progress(workdir, moment.trigger or moment.stage) >= moment.k:
                if moment.delay_s:
                    time.sleep(moment.delay_s)
                if process.poll() is None:
                    kill_group(pgid, sig)
                    fired = True
                    at = progress(workdir, "reinference" if moment.stage == "reinference" else moment.stage)
                break
            time.sleep(0.02)
        try:
            rc = process.wait(timeout=120)
        except subprocess.TimeoutExpired:  # SIGINT not heeded in two minutes: that is a finding too; end it
            kill_group(pgid)
            rc = process.wait()
        if sig == signal.SIGKILL or not fired:
            kill_group(pgid)  # a job Snakemake left behind dies with the group, as kill -9 to the group does
        wait_group_gone(pgid)
    return fired, at, rc, log.read_text(errors="replace")


def plain_rerun(workdir: Path, *args: str) -> tuple[subprocess.CompletedProcess, bool]:
    """The plain rerun; where Snakemake says the directory is locked, `--unlock` and the plain command again."""
    result = run(workdir, *args)
    if result.returncode != 0 and LOCKED.search(result.stdout):
        unlocked = run(workdir, "--unlock", *args)
        if unlocked.returncode != 0:
            return unlocked, True
        return run(workdir, *args), True
    return result, False


def compare(workdir: Path, clean: Path) -> list[str]:
    """The compared results that differ from the clean run's (missing counts as differing)."""
    names = [*COMPARED, *(str(p.relative_to(clean)) for p in sorted((clean / "results").glob("table*.tex")))]
    differing = []
    for name in names:
        if not (clean / name).exists():
            continue
        mine = workdir / name
        if not mine.exists() or mine.read_bytes() != (clean / name).read_bytes():
            differing.append(name)
    return differing


_NAMES = re.compile(r"results/\S+|logs/\S+|syn\d\d|--unlock|--rerun-incomplete|remove|delete|rerun", re.IGNORECASE)


def classify(result: subprocess.CompletedProcess, differing: list[str]) -> str:
    if result.returncode == 0:
        return "identical" if not differing else "wrong"
    return "failed by name" if _NAMES.search(result.stdout[-3000:]) else "failed unnamed"


def tail(text: str, lines: int = 12) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def start_at_stage(clean: Path, workdir: Path, stage: str) -> None:
    """`workdir` as a finished run (a copy of `clean`, Snakemake's records and the files' times included) whose
    outputs from `stage` on are removed, so that a run there starts with that stage (a cheaper start for a fault
    in a late stage than a whole fresh run: tests/workflow/test_faults.py)."""
    shutil.copytree(clean, workdir, symlinks=True)
    for name in FROM_STAGE[stage]:
        path = workdir / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    for name in REPORT_EVENTS:
        (workdir / name).unlink(missing_ok=True)


def inject(workdir: Path, config: dict, clean: Path, moment: Moment, sig: int, *args: str, start_from_clean: bool = False) -> Outcome:
    """One fault in a run of `config` in `workdir` (a fresh one; or with `start_from_clean`, a copy of the clean run
    from the moment's stage on: start_at_stage), then the plain rerun, classified against `clean` (the folder of an
    uninterrupted run of the same configuration)."""
    started = time.monotonic()
    fault = "kill -9" if sig == signal.SIGKILL else "SIGINT"
    if start_from_clean:
        start_at_stage(clean, workdir, moment.stage)
    write_config(workdir, config)
    args = args or TARGETS
    fired, at, rc, _ = interrupt(workdir, moment, sig, *args)
    return rerun_outcome(fault, moment.label(), workdir, clean, args, fired, at, rc, started)


def rerun_outcome(fault: str, label: str, workdir: Path, clean: Path, targets, fired: bool, at, rc, started: float) -> Outcome:
    """After a fault (fired at progress `at`, the run ending with `rc`): the plain rerun, compared with `clean`."""
    if not fired:
        return Outcome(fault, label, "not fired", interrupted_rc=rc, seconds=time.monotonic() - started)
    result, unlocked = plain_rerun(workdir, *targets)
    differing = compare(workdir, clean) if result.returncode == 0 else []
    return Outcome(
        fault,
        label,
        classify(result, differing),
        needed_unlock=unlocked,
        fired_at_progress=at,
        interrupted_rc=rc,
        rerun_rc=result.returncode,
        differing=differing,
        tail=tail(result.stdout) if result.returncode != 0 or differing else "",
        seconds=time.monotonic() - started,
    )


class CleanRuns:
    """One uninterrupted run per configuration, made once and kept (its folder is the reference)."""

    def __init__(self, root: Path):
        self.root = root
        self.runs: dict[str, Path] = {}

    def get(self, config: dict, *args: str) -> Path:
        args = args or TARGETS
        key = json.dumps([config, args], sort_keys=True)
        if key not in self.runs:
            self.root.mkdir(parents=True, exist_ok=True)
            workdir = self.root / f"clean{len(self.runs)}"
            write_config(workdir, config)
            result = run(workdir, *args)
            assert result.returncode == 0, f"the clean run failed:\n{tail(result.stdout, 40)}"
            self.runs[key] = workdir
        return self.runs[key]


def reinference_after_setting_change(
    workdir: Path,
    server: FakeOpenAI,
    clean_runs: CleanRuns,
    k: int,
    sig: int = signal.SIGINT,
    *,
    before: int = 64,
    after: int = 4,
    targets: tuple[str, ...] = TARGETS,
    **settings,
) -> Outcome:
    """A finished run (a copy of the clean run with the API model's max_tokens `before`); the setting changes to
    `after`; the rerun that re-asks that model is interrupted with `sig` once k new answers are written; then a plain
    rerun. Compared with a clean run of the final configuration (`settings`: fault_config's)."""
    started = time.monotonic()
    first = clean_runs.get(fault_config(clean_runs.root, server, max_tokens=before, **settings), *targets)
    final = fault_config(clean_runs.root, server, max_tokens=after, **settings)
    clean = clean_runs.get(final, *targets)
    shutil.copytree(first, workdir, symlinks=True)
    write_config(workdir, final)
    # The k-th line of a response file being written: the API model's new answers (the others are kept). The server
    # holds the answer after the k-th until the signal is sent (SlowFakeOpenAI.hold_cut_off_after), where it can.
    moment = Moment("reinference", k)
    hold = getattr(server, "hold_cut_off_after", None)
    if hold is not None:
        hold(k)
    try:
        fired, at, rc, _ = interrupt(workdir, moment, sig, *targets)
    finally:
        if hold is not None:
            server.release()
    fault = ("SIGINT" if sig == signal.SIGINT else "kill -9") + " in re-inference"
    label = f"max_tokens {before}->{after}, {k} answers in"
    return rerun_outcome(fault, label, workdir, clean, targets, fired, at, rc, started)


def copy_results(source: Path, target: Path) -> None:
    """A copy of a finished run's results folder (for a reference kept past its workdir)."""
    shutil.copytree(source / "results", target / "results")


#: A sitecustomize for the frames jobs of a run (held_frame_workers): each worker process of `python -m
#: virtuebench.frames` writes HELD/worker-<pid> before its first frame and waits there until HELD/release exists, so
#: a test can kill one mid-extraction, as the OOM killer does, without racing the decoder.
HELD_FRAME_WORKERS = """
import os, sys
held = os.environ.get("VB_TEST_HELD_FRAME_WORKERS")
if held and "virtuebench.frames" in getattr(sys, "orig_argv", []):
    import time
    from pathlib import Path
    from PIL import Image

    main_pid, held, save = os.getpid(), Path(held), Image.Image.save

    def held_save(self, *args, **kwargs):
        marker = held / f"worker-{os.getpid()}"
        if os.getpid() != main_pid and not marker.exists():
            marker.touch()
            while not (held / "release").exists():
                time.sleep(0.05)
        return save(self, *args, **kwargs)

    Image.Image.save = held_save
"""


def held_frame_workers(site: Path, held: Path) -> dict:
    """environment(), with the frames jobs' workers held (HELD_FRAME_WORKERS) under `held`."""
    site.mkdir(parents=True, exist_ok=True)
    held.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(HELD_FRAME_WORKERS)
    env = environment()
    path = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    return {**env, "PYTHONPATH": path, "VB_TEST_HELD_FRAME_WORKERS": str(held)}


def frame_workers_held(process: subprocess.Popen, held: Path, timeout: float = 300) -> list[int]:
    """The pids of the frame workers held so far, once there is one (`timeout`: an upper bound on an event that must
    come, not the synchronisation); AssertionError where the run ends first."""
    deadline = time.monotonic() + timeout
    while not (pids := [int(path.name.split("-")[1]) for path in held.glob("worker-*")]):
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"the run ended (exit {process.poll()}) or hung before a frame worker was held")
        time.sleep(0.02)
    return pids
