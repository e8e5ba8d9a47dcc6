"""Fault injection into whole runs (tests/helpers/faults.py), two seeded moments, run by `make faults` (a CI step)
before its long suite, and left out of `make test` for time: kill -9 to the run's
process group during frame extraction (a half-written frames folder used to be taken for done), and SIGINT during the
re-inference an answer-setting change starts (an API model against the fake server: its max_tokens changed). After each, a plain rerun (with
`snakemake --unlock` first only where Snakemake asks for it) must give results equal byte for byte to an
uninterrupted run of the same final configuration. The long suite (kill -9 at five moments of every stage, SIGINT
too, ENOSPC, --unlock while a run is live) is tools/faults.py, `make faults`, a CI step of its own (about 25 s a
fault); its table is docs/reliability.md. Two of the trial's kinds (issue 47, tests/helpers/fault_kinds.py) are here
too, a copy of the clean run and one rerun each: W2, one number of results/scores.csv edited, and W3, five verdicts
flipped in a judgments file with its size and modification time kept (then the report made again)."""

from __future__ import annotations

import os
import signal

import pytest
from helpers import fault_kinds, faults

pytestmark = [pytest.mark.workflow, pytest.mark.faults]

SEED = 34


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """The fake server (slowed so the API model and the LLM judge take a moment per item), the clean runs (one per
    configuration, made once) and the clean run of the base configuration with each stage's progress at its end."""
    root = tmp_path_factory.mktemp("faults")
    with faults.SlowFakeOpenAI() as server:
        clean_runs = faults.CleanRuns(root / "clean")
        config = faults.fault_config(root / "clean", server)
        clean = clean_runs.get(config)
        yield root, server, clean_runs, config, clean, faults.totals(clean)


@pytest.mark.parametrize("stage", ["frames"])  # the other stages: tools/faults.py (`make faults`)
def test_kill_9_in_each_stage_then_a_plain_rerun_gives_identical_results(bench, stage):
    root, _, _, config, clean, totals = bench
    (moment,) = faults.moments(stage, totals, 1, SEED)
    outcome = faults.inject(root / f"kill-{stage}", config, clean, moment, signal.SIGKILL, start_from_clean=stage != "frames")
    print(outcome.as_dict())
    assert outcome.outcome != "wrong", outcome.as_dict()
    assert outcome.outcome == "identical", outcome.as_dict()


def test_sigint_during_reinference_after_a_max_tokens_change_then_a_plain_rerun_gives_the_final_configurations_results(bench):
    root, server, clean_runs, *_ = bench
    k = faults.random.Random(SEED).randint(1, 9)  # the API model answers 10 items (2 videos x 5 questions, one level)
    outcome = faults.reinference_after_setting_change(root / "reinference", server, clean_runs, k, signal.SIGINT, before=64, after=4)
    print(outcome.as_dict())
    assert outcome.outcome != "wrong", outcome.as_dict()
    assert outcome.outcome == "identical", outcome.as_dict()
    before = clean_runs.get(faults.fault_config(clean_runs.root, server, max_tokens=64)) / "results" / "scores.csv"
    assert before.read_bytes() != (root / "reinference" / "results" / "scores.csv").read_bytes(), "the change of max_tokens shows"


def test_a_frame_worker_killed_as_the_oom_killer_does_fails_the_run_and_a_plain_rerun_gives_identical_results(bench):
    """Issue 47, W1: the kill was recorded as the video's decode error, the run exited 0 over changed tables and the
    rerun did nothing. Now the frames job fails naming the folder, nothing records an error, and the plain rerun
    extracts the video again: the clean run's results byte for byte."""
    import json
    import subprocess

    root, _, _, config, clean, _ = bench
    workdir, held = root / "worker-killed", root / "worker-killed-held"
    faults.write_config(workdir, config)
    env = faults.held_frame_workers(root / "worker-killed-site", held)
    process = subprocess.Popen(
        faults.command(workdir, *faults.TARGETS),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        (worker, *_) = faults.frame_workers_held(process, held)
        os.kill(worker, signal.SIGKILL)
        (held / "release").touch()
        out, _ = process.communicate(timeout=600)
    finally:
        (held / "release").touch()
        if process.poll() is None:
            faults.kill_group(process.pid)
            process.communicate()
    assert process.returncode != 0, faults.tail(out, 40)
    logs = {path: path.read_text() for path in (workdir / "logs" / "frames").rglob("*.log")}
    told = [path for path, text in logs.items() if "was killed (signal 9, SIGKILL: the OOM killer?); rerun the same command" in text]
    assert len(told) == 1, logs
    recorded = [path for path in (workdir / "results" / "frames").rglob("manifest.json") if json.loads(path.read_text())["error"]]
    assert recorded == [], "a killed worker is never the video's decode error"
    result, _ = faults.plain_rerun(workdir, *faults.TARGETS)
    assert result.returncode == 0, faults.tail(result.stdout, 40)
    assert faults.compare(workdir, clean) == []


def test_a_damaged_frame_met_by_a_reinference_is_named_and_a_plain_rerun_gives_the_final_configurations_results(bench):
    """Issue 47, item 4: a frame JPEG cut short in a finished run; a setting change re-asks the API model. The job stops
    before asking, naming the file, and removes the level folder; the plain rerun extracts it again and gives a clean
    run's results of the final configuration."""
    import shutil

    root, server, clean_runs, config, clean, _ = bench
    final = faults.fault_config(clean_runs.root, server, max_tokens=4)
    final_clean = clean_runs.get(final)
    workdir = root / "damaged-frame"
    shutil.copytree(clean, workdir, symlinks=True)
    faults.write_config(workdir, final)
    frame = sorted((workdir / "results" / "frames").glob("*/64/0007.jpg"))[0]
    frame.write_bytes(frame.read_bytes()[:200])
    first = faults.run(workdir, *faults.TARGETS)
    assert first.returncode != 0, faults.tail(first.stdout, 40)
    logs = "".join(path.read_text() for path in (workdir / "logs").rglob("*.log"))
    assert f"{frame.relative_to(workdir)}: cannot be read as an image" in logs or f"{frame}: cannot be read as an image" in logs, logs[
        -3000:
    ]
    assert not frame.parent.exists()
    result, _ = faults.plain_rerun(workdir, *faults.TARGETS)
    assert result.returncode == 0, faults.tail(result.stdout, 40)
    assert faults.compare(workdir, final_clean) == []


@pytest.mark.parametrize("kind", ["scores", "flip-report"])  # W2 and W3 of issue 47
def test_an_edited_scores_csv_or_flipped_verdicts_are_repaired_or_named_never_published_with_exit_0(bench, kind):
    root, *_, clean, _ = bench
    outcome = fault_kinds.edited(kind, root / f"edited-{kind}", clean, faults.TARGETS)
    print(outcome.as_dict())
    assert outcome.outcome != "wrong", outcome.as_dict()
    assert outcome.outcome in ("identical", "failed by name"), outcome.as_dict()
