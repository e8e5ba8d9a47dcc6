import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.data import build_bench, kill_after_progress

from virtuebench import REFUSAL_ANSWER
from virtuebench.frames import extract_or_record
from virtuebench.inference import items_for_level, run_inference
from virtuebench.instances import read_instances
from virtuebench.prompts import get_prompt

TESTS = Path(__file__).parent


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return build_bench(tmp_path_factory.mktemp("bench"), 3, 300, [64, 128, 256])


def _lines(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def test_reference_backends_write_one_record_per_item(bench, tmp_path):
    instances = read_instances(bench / "instances.parquet")
    out = tmp_path / "refuse.jsonl"
    summary = run_inference(instances, bench / "frames", "refuse", {"backend": "refuse"}, "honest", 64, out)
    records = _lines(out)
    assert [r["instance_id"] for r in records] == [i.instance_id for i in items_for_level(instances, 64)]
    assert summary.answered == len(records) == 15
    assert all(r["prompt_hash"] == get_prompt("honest").hash and r["n_frames"] == 64 and r["error"] is None for r in records)
    assert not (tmp_path / "refuse.jsonl.partial").exists()


def test_backend_failure_keeps_progress_and_retries_only_failed_items(bench, tmp_path):
    instances = read_instances(bench / "instances.parquet")
    calls, out = tmp_path / "calls.txt", tmp_path / "out.jsonl"
    failing = items_for_level(instances, 128)[1].instance_id
    config = {"backend": "helpers.vb_test_backends:RecordingBackend", "settings": {"calls_file": str(calls), "fail_on": [failing]}}
    summary = run_inference(instances, bench / "frames", "m", config, "plain", 128, out)
    assert summary.backend_errors == 1 and not out.exists()
    first_calls = calls.read_text().split()
    # The outage is over: the same settings, without the failure injection, would change the
    # fingerprint, so inject a backend object instead and count what it is asked.
    from helpers.vb_test_backends import RecordingBackend

    backend = RecordingBackend({"calls_file": str(calls)})
    summary = run_inference(instances, bench / "frames", "m", config, "plain", 128, out, backend=backend)
    assert summary.backend_errors == 0 and summary.reused == len(first_calls) - 1
    assert calls.read_text().split() == first_calls + [failing]
    assert len(_lines(out)) == len(first_calls)


def test_latency_covers_the_backends_reply_on_both_paths(bench, tmp_path):
    """latency_s is the time the backend took to reply (make plan's GPU-hours read it), on the one-item path and the
    pipelined one: each backend here takes at least 50 ms, so no latency is below it whatever the load. (The argument
    list once took the time before the call it was measuring: every latency read about 0.)"""
    from helpers.vb_test_backends import RecordingBackend

    from virtuebench.models.base import Backend, Reply

    class SlowPipelined(Backend):
        pipelined = True

        def prepare(self, request):
            return request.instance_id

        def generate(self, prepared):
            time.sleep(0.05)
            return Reply("red")

    instances = read_instances(bench / "instances.parquet")
    for name, backend in (
        ("one", RecordingBackend({"calls_file": str(tmp_path / "calls"), "delay_s": 0.05})),
        ("piped", SlowPipelined({})),
    ):
        out = tmp_path / f"{name}.jsonl"
        run_inference(instances, bench / "frames", name, {"backend": "x:Slow"}, "honest", 64, out, backend=backend)
        latencies = [record["latency_s"] for record in _lines(out)]
        assert len(latencies) == 15 and min(latencies) >= 0.049, (name, latencies)


def test_changed_settings_are_not_reused(bench, tmp_path):
    instances = read_instances(bench / "instances.parquet")
    out, calls = tmp_path / "out.jsonl", tmp_path / "calls.txt"
    config = {"backend": "helpers.vb_test_backends:RecordingBackend", "settings": {"calls_file": str(calls), "fail_on": ["none"]}}
    run_inference(instances, bench / "frames", "m", config, "honest", 64, out)
    (tmp_path / "out.jsonl").rename(tmp_path / "out.jsonl.partial")  # as if the job had died at the very end
    config["settings"]["delay_s"] = 0.0
    summary = run_inference(instances, bench / "frames", "m", config, "honest", 64, out)
    assert summary.reused == 0 and summary.answered == 15


def test_broken_video_items_are_recorded_not_retried(bench, tmp_path):
    instances = read_instances(bench / "instances.parquet")
    frames = tmp_path / "frames"
    frames.mkdir()
    broken = instances[0].video_id
    for video_id in {i.video_id for i in instances} - {broken}:
        os.symlink(bench / "frames" / video_id, frames / video_id)
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"not a video")
    extract_or_record(bad, frames / broken, on_error="record")
    out = tmp_path / "out.jsonl"
    summary = run_inference(instances, frames, "refuse", {"backend": "refuse"}, "honest", 64, out)
    records = {r["instance_id"]: r for r in _lines(out)}
    broken_items = [i.instance_id for i in instances if i.video_id == broken]
    assert summary.input_errors == len(broken_items) == 5
    for instance_id in broken_items:
        assert records[instance_id]["response"] is None
        assert "frames unavailable" in records[instance_id]["error"] and "bad.mp4" in records[instance_id]["error"]
        assert records[instance_id]["retryable"] is False


def test_kill_minus_nine_resumes_without_redoing_or_duplicating(bench, tmp_path):
    calls, out = tmp_path / "calls.txt", tmp_path / "responses.jsonl"
    config = json.dumps({"backend": "helpers.vb_test_backends:RecordingBackend", "settings": {"calls_file": str(calls)}})
    command = [
        sys.executable,
        "-m",
        "virtuebench.inference",
        "--instances",
        str(bench / "instances.parquet"),
        "--frames-dir",
        str(bench / "frames"),
        "--model",
        "slow",
        "--model-config",
        config,
        "--prompt",
        "honest",
        "--level",
        "64",
        "--out",
        str(out),
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    partial = Path(f"{out}.partial")
    # the backend answers 5 items and hangs on the 6th: killed there, whatever the machine's load
    kill_after_progress(command, {**env, "VB_TEST_HOLD_AFTER": "5"}, partial, lines=5, calls=calls)
    assert not out.exists()
    done_before = [json.loads(line)["instance_id"] for line in partial.read_text().splitlines() if line.strip()]
    assert len(done_before) == 5
    rerun = subprocess.run(command, env=env, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    assert "resuming" in rerun.stderr
    records = _lines(out)
    ids = [r["instance_id"] for r in records]
    assert len(ids) == len(set(ids)) == 15
    asked = calls.read_text().split()
    # Each finished item was asked exactly once; only the one in flight at the kill (the 6th) is asked twice.
    assert len(asked) == 16 and len(set(asked)) == 15 and set(asked) == set(ids)
    assert all(asked.count(i) == 1 for i in done_before)


def _sampled(calls=None, samples=3, seed=10):
    settings = {"seed": seed, **({"calls_file": str(calls)} if calls else {})}
    return {"backend": "helpers.vb_test_backends:SampledBackend", "samples": samples, "settings": settings}


def test_a_sampled_model_answers_each_item_once_per_sample_seeded_with_seed_plus_k(bench, tmp_path):
    """samples: 3 writes three records per item, `sample` 0..2, run k asked with Request.sample k (the backend seeds it
    with its seed + k): the answers are what the backend gives for that sample, and a second run writes the same."""
    from helpers.vb_test_backends import SampledBackend

    from virtuebench.models import Request

    instances = read_instances(bench / "instances.parquet")
    out = tmp_path / "sampled.jsonl"
    summary = run_inference(instances, bench / "frames", "s", _sampled(), "honest", 64, out)
    records = _lines(out)
    items = items_for_level(instances, 64)
    assert [(r["instance_id"], r["sample"]) for r in records] == [(i.instance_id, k) for i in items for k in range(3)]
    assert summary.items == summary.answered == 45
    backend, questions = SampledBackend({"seed": 10}), {inst.instance_id: inst.question for inst in items}
    picks = []
    for record in records:  # run k's answer is the one the backend draws for Request.sample k
        request = Request(record["instance_id"], questions[record["instance_id"]], "", [], [], 64, None, record["sample"])
        picks.append(backend.choice(request))
        if picks[-1] == 2:
            assert record["response"] == REFUSAL_ANSWER, record
        elif picks[-1] == 1:
            assert record["response"] == backend.guess.answer(request).text, record
    assert set(picks) == {0, 1, 2}
    runs = {}
    for record in records:
        runs.setdefault(record["instance_id"], []).append(record["response"])
    assert any(len(set(answers)) > 1 for answers in runs.values()), "some item's runs differ"
    again = tmp_path / "again.jsonl"
    run_inference(instances, bench / "frames", "s", _sampled(), "honest", 64, again)
    assert [r["response"] for r in _lines(again)] == [r["response"] for r in records]  # seeded: a rerun samples the same
    other_seed = tmp_path / "other.jsonl"
    run_inference(instances, bench / "frames", "s", _sampled(seed=11), "honest", 64, other_seed)
    shifted = {(r["instance_id"], r["sample"]): r["response"] for r in _lines(other_seed)}
    # seed 11's run k is seed 10's run k + 1: the seed of run k is the base seed + k
    assert all(shifted[(r["instance_id"], r["sample"] - 1)] == r["response"] for r in records if r["sample"] > 0)


def test_a_model_run_once_writes_no_sample_field(bench, tmp_path):
    instances = read_instances(bench / "instances.parquet")
    out = tmp_path / "once.jsonl"
    run_inference(instances, bench / "frames", "s", _sampled(samples=1), "honest", 64, out)
    assert '"sample"' not in out.read_text()


def test_kill_minus_nine_with_samples_resumes_each_item_and_sample_once(bench, tmp_path):
    """A sampled model's job killed after 7 of its 45 (item, sample) answers: the rerun asks only the 38 left (and the
    one in flight at the kill again), duplicates none, and writes what an uninterrupted run writes."""
    calls, out = tmp_path / "calls.txt", tmp_path / "responses.jsonl"
    command = [
        *(sys.executable, "-m", "virtuebench.inference", "--instances", str(bench / "instances.parquet")),
        *("--frames-dir", str(bench / "frames"), "--model", "sampled", "--model-config", json.dumps(_sampled(calls))),
        *("--prompt", "honest", "--level", "64", "--out", str(out)),
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    partial = Path(f"{out}.partial")
    kill_after_progress(command, {**env, "VB_TEST_HOLD_AFTER": "7"}, partial, lines=7, calls=calls)
    assert not out.exists()
    done_before = [f"{r['instance_id']}#{r['sample']}" for r in map(json.loads, partial.read_text().splitlines())]
    assert len(done_before) == 7
    rerun = subprocess.run(command, env=env, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    records = _lines(out)
    keys = [f"{r['instance_id']}#{r['sample']}" for r in records]
    assert len(keys) == len(set(keys)) == 45
    asked = calls.read_text().split()
    assert len(asked) == 46 and set(asked) == set(keys) and all(asked.count(key) == 1 for key in done_before)
    clean = tmp_path / "clean.jsonl"
    clean_command = [*command[:-1], str(clean)]
    clean_command[command.index("--model-config") + 1] = json.dumps(_sampled(tmp_path / "clean-calls.txt"))
    assert subprocess.run(clean_command, env=env, capture_output=True, text=True).returncode == 0
    # equal but for the latencies (and the fingerprint: the calls file is a setting; and the record_digest of them all)
    strip = lambda rows: [{k: v for k, v in r.items() if k not in ("latency_s", "fingerprint", "record_digest")} for r in rows]  # noqa: E731
    assert strip(records) == strip(_lines(clean))


def test_an_edited_question_is_asked_again_on_resume(bench, tmp_path):
    import dataclasses

    instances = read_instances(bench / "instances.parquet")
    calls, out = tmp_path / "calls.txt", tmp_path / "out.jsonl"
    config = {
        "backend": "helpers.vb_test_backends:RecordingBackend",
        "settings": {"calls_file": str(calls), "fail_on": [items_for_level(instances, 64)[0].instance_id]},
    }
    run_inference(instances, bench / "frames", "m", config, "honest", 64, out)  # one failure: the progress file stays
    edited_id = items_for_level(instances, 64)[3].instance_id
    edited = [dataclasses.replace(i, question=i.question + " Answer briefly.") if i.instance_id == edited_id else i for i in instances]
    from helpers.vb_test_backends import RecordingBackend

    before = len(calls.read_text().split())
    run_inference(edited, bench / "frames", "m", config, "honest", 64, out, backend=RecordingBackend({"calls_file": str(calls)}))
    assert sorted(calls.read_text().split()[before:]) == sorted([items_for_level(instances, 64)[0].instance_id, edited_id])


def test_a_batch_backend_that_loses_replies_fails_the_batch(bench, tmp_path):
    from virtuebench.models.base import Backend, Reply

    class Lossy(Backend):
        batch_size = 4

        def answer_batch(self, requests):
            return [Reply("red")] * (len(requests) - 1)

    instances = read_instances(bench / "instances.parquet")
    summary = run_inference(
        instances, bench / "frames", "lossy", {"backend": "x:Lossy"}, "honest", 64, tmp_path / "o.jsonl", backend=Lossy({})
    )
    assert summary.answered == 0 and summary.backend_errors == 15 and not (tmp_path / "o.jsonl").exists()


def test_a_pipelined_backend_prepares_the_next_item_while_one_generates(bench, tmp_path):
    import threading

    from virtuebench.models.base import Backend, Reply

    class Pipelined(Backend):
        """Each generation (of the items in `follow`) ends only once the next item's preparation has started: the
        overlap is an event the test waits for, not a sleep the other thread must beat (60 s only bounds a failure)."""

        pipelined = True

        def __init__(self, fail_prepare, fail_generate, follow=None):
            self.events, self.lock = [], threading.Lock()
            self.fail_prepare, self.fail_generate = fail_prepare, fail_generate
            self.follow = follow or {}  # item -> the item whose preparation its generation waits for
            self.prepared = {following: threading.Event() for following in self.follow.values()}

        def log(self, event):
            with self.lock:
                self.events.append(event)

        def prepare(self, request):
            self.log(("prepare", request.instance_id))
            if request.instance_id in self.prepared:
                self.prepared[request.instance_id].set()
            if request.instance_id == self.fail_prepare:
                raise OSError("unreadable frame")
            assert request.duration_s and len(request.timestamps) == len(request.frames) == 64
            return request.instance_id

        def generate(self, prepared):
            self.log(("generate start", prepared))
            if prepared in self.follow:
                self.prepared[self.follow[prepared]].wait(timeout=60)
            self.log(("generate end", prepared))
            if prepared == self.fail_generate:
                raise RuntimeError("CUDA out of memory")
            return Reply(f"answer to {prepared}")

    instances = read_instances(bench / "instances.parquet")
    ids = [i.instance_id for i in items_for_level(instances, 64)]
    backend = Pipelined(fail_prepare=ids[2], fail_generate=ids[5], follow=dict(zip(ids[3:5], ids[4:6])))
    out = tmp_path / "out.jsonl"
    summary = run_inference(instances, bench / "frames", "p", {"backend": "x:P"}, "honest", 64, out, backend=backend)
    assert summary.backend_errors == 2 and summary.answered == 13 and not out.exists()
    records = {r["instance_id"]: r for r in _lines(f"{out}.partial")}
    assert "OSError: unreadable frame" in records[ids[2]]["error"] and records[ids[2]]["retryable"]
    assert "CUDA out of memory" in records[ids[5]]["error"] and records[ids[5]]["retryable"]
    assert records[ids[0]]["response"] == f"answer to {ids[0]}"
    # The item after the one generating was prepared before that generation ended.
    events = backend.events
    for current, following in zip(ids[3:5], ids[4:6]):
        assert events.index(("prepare", following)) < events.index(("generate end", current))
    # The next run asks only the two failed items again.
    backend = Pipelined(fail_prepare=None, fail_generate=None)
    summary = run_inference(instances, bench / "frames", "p", {"backend": "x:P"}, "honest", 64, out, backend=backend)
    assert (
        summary.reused == 13
        and summary.answered == 2
        and sorted(e[1] for e in backend.events if e[0] == "prepare") == sorted([ids[2], ids[5]])
    )
    assert len(_lines(out)) == 15


def _frames_with_one_copied(bench, tmp_path, level=64):
    """A frames folder whose videos link to the bench's, but for one copied video (one with `level`) the test may damage."""
    import shutil

    instances = read_instances(bench / "instances.parquet")
    frames, damaged = tmp_path / "frames", items_for_level(instances, level)[0].video_id
    frames.mkdir()
    for video_id in {i.video_id for i in instances} - {damaged}:
        os.symlink(bench / "frames" / video_id, frames / video_id)
    shutil.copytree(bench / "frames" / damaged, frames / damaged)
    return instances, frames, damaged


def _inference_args(bench, frames, out, config, level=64):
    return [
        "--instances",
        str(bench / "instances.parquet"),
        "--frames-dir",
        str(frames),
        "--model",
        "m",
        "--model-config",
        json.dumps(config),
        "--prompt",
        "honest",
        "--level",
        str(level),
        "--out",
        str(out),
    ]


@pytest.mark.parametrize("damage", ["missing", "truncated", "other format", "not a manifest", "missing frame"])
def test_a_frames_folder_without_a_complete_manifest_stops_the_job_before_it_writes(bench, tmp_path, capsys, damage):
    from virtuebench.inference import main

    instances, frames, damaged = _frames_with_one_copied(bench, tmp_path)
    manifest = frames / damaged / "manifest.json"
    text = manifest.read_text()
    if damage == "missing":
        manifest.unlink()
    elif damage == "truncated":
        manifest.write_text(text[: len(text) // 2])
    elif damage == "other format":
        manifest.write_text(text.replace("virtuebench.frames/1", "virtuebench.frames/0"))
    elif damage == "not a manifest":
        manifest.write_text(json.dumps({"format": "virtuebench.frames/1", "levels": {"64": [1, 2]}, "video": "v"}))
    else:
        (frames / damaged / json.loads(text)["levels"]["64"]["files"][7]).unlink()
    out = tmp_path / "out.jsonl"
    assert main(_inference_args(bench, frames, out, {"backend": "refuse"})) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: video {damaged}: {frames / damaged}") and "rerun the workflow" in err, err
    assert ("missing (first: 64/0007.jpg)" in err) == (damage == "missing frame")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists() and not Path(f"{out}.partial").exists(), "nothing is written"


def test_a_missing_frame_of_another_level_does_not_stop_a_job(bench, tmp_path):
    import shutil

    instances, frames, damaged = _frames_with_one_copied(bench, tmp_path, level=128)
    shutil.rmtree(frames / damaged / "128")  # copied, so no longer hard links of level 64's frames
    summary = run_inference(instances, frames, "refuse", {"backend": "refuse"}, "honest", 64, tmp_path / "o.jsonl")
    assert summary.answered == 15


def _start_inference(command, env, partial, lines):
    import time

    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not partial.exists() or len(partial.read_text().splitlines()) < lines:
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"ended (exit {process.wait()}) or hung: {process.stderr.read()}")
        time.sleep(0.02)
    return process


def _comparable(path):
    return [{k: v for k, v in record.items() if k not in ("latency_s", "record_digest")} for record in _lines(path)]  # (a digest of both)


@pytest.mark.parametrize(("signal_name", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_stopped_job_says_what_it_kept_and_a_rerun_completes_it(bench, tmp_path, signal_name, code):
    import signal

    calls, out, reference = tmp_path / "calls.txt", tmp_path / "responses.jsonl", tmp_path / "reference.jsonl"
    config = {"backend": "helpers.vb_test_backends:RecordingBackend", "settings": {"calls_file": str(calls)}}
    command = [sys.executable, "-m", "virtuebench.inference", *_inference_args(bench, bench / "frames", out, config)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    partial = Path(f"{out}.partial")
    process = _start_inference(command, {**env, "VB_TEST_HOLD_AFTER": "5"}, partial, lines=5)
    process.send_signal(getattr(signal, signal_name))
    assert process.wait(timeout=60) == code
    err = process.stderr.read()
    assert "Traceback" not in err, err
    expected = f"interrupted ({signal_name}): 5 of 15 finished items are kept in {partial}; rerun the same command to go on"
    assert err.strip().splitlines()[-1] == expected, err
    assert not out.exists() and len(partial.read_text().splitlines()) == 5
    rerun = subprocess.run(command, env=env, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    whole = subprocess.run([*command[:-1], str(reference)], env=env, capture_output=True, text=True)
    assert whole.returncode == 0, whole.stderr
    assert _comparable(out) == _comparable(reference) and not partial.exists()


def test_a_full_disk_stops_inference_with_one_line_and_keeps_the_progress(bench, tmp_path, capsys, monkeypatch):
    import errno

    from virtuebench import inference
    from virtuebench.records import ProgressLog

    out = tmp_path / "out.jsonl"
    append, appended = ProgressLog.append, []

    def fills_up(self, record):
        if len(appended) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        append(self, record)
        appended.append(record)

    monkeypatch.setattr(ProgressLog, "append", fills_up)
    assert inference.main(_inference_args(bench, bench / "frames", out, {"backend": "refuse"})) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (
        f"error: no space left on device while writing {out} (ENOSPC); free space and rerun the same command "
        f"(3 of 15 finished items are kept in {out}.partial; rerun the same command to go on)"
    )
    assert "Traceback" not in err and not out.exists()
    monkeypatch.setattr(ProgressLog, "append", append)
    assert inference.main(_inference_args(bench, bench / "frames", out, {"backend": "refuse"})) == 0
    assert "3 reused" in capsys.readouterr().err and len(_lines(out)) == 15


def test_a_backend_meeting_a_full_disk_stops_the_job_instead_of_failing_every_item(bench, tmp_path):
    import errno

    from virtuebench.models.base import Backend

    class FullCache(Backend):
        def __init__(self):
            self.asked = 0

        def answer(self, request):
            self.asked += 1
            raise OSError(errno.ENOSPC, "No space left on device", "/cache/blob")

    instances, backend = read_instances(bench / "instances.parquet"), FullCache()
    with pytest.raises(OSError, match="No space left"):
        run_inference(instances, bench / "frames", "m", {"backend": "x:F"}, "honest", 64, tmp_path / "o.jsonl", backend=backend)
    assert backend.asked == 1 and not (tmp_path / "o.jsonl").exists()


# -- the answer store (support/store.py): no answer asked twice -----------------------------------------------------


def _recording(calls):
    return {"backend": "helpers.vb_test_backends:RecordingBackend", "settings": {"calls_file": str(calls)}}


def test_stored_answers_are_not_asked_again_and_give_the_same_records(bench, tmp_path, monkeypatch):
    """A second job (another output file: a results folder copied, dropped and restored, deleted) with the same store
    asks nothing and loads no backend, and writes the records the first wrote, byte for byte."""
    instances = read_instances(bench / "instances.parquet")
    calls, store = tmp_path / "calls.txt", tmp_path / "store"
    first = run_inference(instances, bench / "frames", "m", _recording(calls), "honest", 64, tmp_path / "a.jsonl", store=store)
    asked = calls.read_text().split()
    assert first.answered == len(asked) == 15 and first.stored == 0

    import virtuebench.inference as inference

    monkeypatch.setattr(inference, "load_backend", lambda spec: pytest.fail("a job whose answers are all stored loaded its backend"))
    again = run_inference(instances, bench / "frames", "m", _recording(calls), "honest", 64, tmp_path / "b.jsonl", store=store)
    assert calls.read_text().split() == asked, "no request"
    assert (again.answered, again.reused, again.stored) == (0, 15, 15)
    assert (tmp_path / "b.jsonl").read_bytes() == (tmp_path / "a.jsonl").read_bytes()
    assert "0 reused from an interrupted run, 15 from the answer store" in again.line("m/honest/64")


def test_the_store_asks_exactly_what_changed(bench, tmp_path):
    """An edited question, another prompt, another answer setting, another level: each asks exactly its items."""
    import dataclasses

    from helpers.vb_test_backends import RecordingBackend

    instances = read_instances(bench / "instances.parquet")
    calls, store = tmp_path / "calls.txt", tmp_path / "store"

    def asked(insts, prompt="honest", level=64, config=None, out="o.jsonl"):
        before = len(calls.read_text().split()) if calls.exists() else 0
        run_inference(
            insts,
            bench / "frames",
            "m",
            config or _recording(calls),
            prompt,
            level,
            tmp_path / out,
            RecordingBackend({"calls_file": str(calls)}),
            store,
        )
        return sorted(calls.read_text().split()[before:])

    items = items_for_level(instances, 64)
    assert len(asked(instances, out="first.jsonl")) == len(items)
    edited_id = items[2].instance_id
    edited = [dataclasses.replace(i, question=i.question + " Be brief.") if i.instance_id == edited_id else i for i in instances]
    assert asked(edited, out="edited.jsonl") == [edited_id]
    assert asked(edited, out="edited-again.jsonl") == []
    assert len(asked(instances, prompt="plain", out="plain.jsonl")) == len(items)
    other = {**_recording(calls), "max_new_tokens": 7}
    assert len(asked(instances, config=other, out="other.jsonl")) == len(items)
    assert sorted(asked(instances, level=128, out="l128.jsonl")) == sorted(i.instance_id for i in items_for_level(instances, 128))
    assert asked(instances, out="first-again.jsonl") == [], "what was asked before any change is still stored"


def test_the_answering_model_is_recorded_from_the_reply_and_answers_recorded_before_it_are_reused(bench, tmp_path):
    """`answered_by` is the name the endpoint's reply gives (the fake server answers "fake-vlm-snapshot" to a request
    for "fake-vlm"), not the config's. It is in no key: answers stored, or left in a progress file, by a version that
    did not record it are reused as they are (nothing asked again) and written as that version wrote them."""
    from helpers.fake_openai import FakeOpenAI

    from virtuebench.records import digested_line
    from virtuebench.support.store import Store

    instances = read_instances(bench / "instances.parquet")
    n = len(items_for_level(instances, 64))
    store = tmp_path / "store"
    with FakeOpenAI() as server:
        config = {"backend": "openai", "settings": {"model": "fake-vlm", "base_url": server.base_url, "api_key_env": None}}

        def job(out, use_store=True):
            return run_inference(
                instances, bench / "frames", "api", config, "honest", 64, tmp_path / out, store=store if use_store else None
            )

        first = job("a.jsonl")
        records = _lines(tmp_path / "a.jsonl")
        assert first.answered == server.backend_requests == n
        assert {r["answered_by"] for r in records} == {"fake-vlm-snapshot"} and "model" not in records[0]["usage"]
        assert first.answered_by == ("fake-vlm-snapshot",) and "answered by fake-vlm-snapshot" in first.line("api/honest/64")
        # The store's entries and a progress file as the version before `answered_by` wrote them.
        answers = Store(store, "answers")
        for path in (store / "answers").rglob("*.json"):
            entry = json.loads(path.read_text())
            answers.put(entry["key"], {k: v for k, v in entry["value"].items() if k != "answered_by"}, entry["about"])
        old = [{k: v for k, v in r.items() if k not in ("answered_by", "record_digest")} for r in records]
        (tmp_path / "b.jsonl.partial").write_text("".join(digested_line(r) for r in old))
        from_store, from_partial = job("c.jsonl"), job("b.jsonl", use_store=False)
        assert server.backend_requests == n, "nothing asked again"
    assert (from_store.stored, from_partial.reused) == (n, n) and from_store.answered == from_partial.answered == 0
    for out in ("b.jsonl", "c.jsonl"):
        again = _lines(tmp_path / out)
        assert [{k: v for k, v in r.items() if k != "record_digest"} for r in again] == old, out
        assert (tmp_path / out).read_text() == "".join(digested_line(r) for r in old), f"{out}: written as before"


def test_a_job_whose_answers_name_two_models_says_so(bench, tmp_path, capsys):
    """An alias that moved while the job asked (the reply names another snapshot): each record keeps its own name, and
    the job's summary names both and warns."""
    from virtuebench.inference import main

    out = tmp_path / "out.jsonl"
    config = {"backend": "helpers.vb_test_backends:AliasBackend", "settings": {"names": ["snap-a", "snap-b"]}}
    assert main(_inference_args(bench, bench / "frames", out, config)) == 0
    names = [r["answered_by"] for r in _lines(out)]
    assert sorted(set(names)) == ["snap-a", "snap-b"] and len(names) == 15
    err = capsys.readouterr().err
    assert "answered by snap-a + snap-b" in err
    assert f"warning: {out} holds answers from 2 different models as the endpoint named them (snap-a, snap-b)" in err


def test_a_damaged_entry_is_asked_again_and_other_frames_are_other_answers(bench, tmp_path, capsys):
    from helpers.vb_test_backends import RecordingBackend

    from virtuebench.support.store import Store

    instances = read_instances(bench / "instances.parquet")
    calls, store = tmp_path / "calls.txt", tmp_path / "store"
    run_inference(instances, bench / "frames", "m", _recording(calls), "honest", 64, tmp_path / "a.jsonl", store=store)
    entries = sorted((store / "answers").rglob("*.json"))
    assert len(entries) == 15
    entries[0].write_text(entries[0].read_text().replace('"red"', '"blue"'))  # edited: its digest no longer holds
    before = len(calls.read_text().split())
    summary = run_inference(
        instances,
        bench / "frames",
        "m",
        _recording(calls),
        "honest",
        64,
        tmp_path / "b.jsonl",
        RecordingBackend({"calls_file": str(calls)}),
        store,
    )
    assert len(calls.read_text().split()) == before + 1 and summary.stored == 14
    assert _without_latency(tmp_path / "b.jsonl") == _without_latency(tmp_path / "a.jsonl"), "made again, the same answer"
    assert Store(store, "answers").get(entries[0].stem) is not None, "replaced whole"
    # Frames re-extracted with another JPEG quality are other frames: every item is asked again.
    frames = tmp_path / "frames"
    for video in sorted({i.video_id for i in instances}):
        extract_or_record(next(i.video_path for i in instances if i.video_id == video), frames / video, levels=[64], jpeg_quality=50)
    before = len(calls.read_text().split())
    run_inference(
        instances, frames, "m", _recording(calls), "honest", 64, tmp_path / "c.jsonl", RecordingBackend({"calls_file": str(calls)}), store
    )
    assert len(calls.read_text().split()) == before + 15


def test_a_levels_frame_files_are_checked_from_one_listing_as_isfile_checks_them(tmp_path):
    """_check_frames lists each folder once (a level's 1,024 frames: one listing, not 1,024 stats) and finds what
    os.path.isfile finds: a missing frame, a folder or a dangling link in a frame's place are missing; a link to a frame
    is a frame."""
    from virtuebench.frames import LevelFrames, Manifest
    from virtuebench.inference import _check_frames

    level = tmp_path / "64"
    level.mkdir()
    names = [f"64/{k:04d}.jpg" for k in range(6)]
    for name in names[:3]:
        (tmp_path / name).write_bytes(b"jpeg")
    (tmp_path / names[3]).symlink_to(tmp_path / names[0])  # a frame shared with another: a link to it
    (tmp_path / names[4]).mkdir()
    (tmp_path / names[5]).symlink_to(tmp_path / "gone.jpg")
    manifest = Manifest(video="v.mp4", levels={"64": LevelFrames([k + 0.5 for k in range(6)], list(range(6)), names)})
    assert [name for name in names if not os.path.isfile(tmp_path / name)] == names[4:]
    assert _check_frames(manifest, tmp_path, 64) == (
        "2 of the 6 frame files of level 64 its manifest lists are missing (first: 64/0004.jpg)"
    )
    manifest.levels["64"].files[4:] = names[:2]
    assert _check_frames(manifest, tmp_path, 64) is None


# -- a damaged frame file (issue 47, item 4): named, and never "rerun to retry" -------------------------------------


def _level_folders(bench, tmp_path, level=64):
    """A frames folder in the workflow's layout (one level folder per video, with its provenance), and the video whose
    items the job asks last (damaging it shows that nothing was asked before the check)."""
    instances = read_instances(bench / "instances.parquet")
    frames, items = tmp_path / "frames", items_for_level(instances, level)
    for video_id, path in {i.video_id: i.video_path for i in items}.items():
        extract_or_record(path, frames / video_id / str(level), levels=[level], level_folder=True, provenance="p1")
    return frames, items[-1].video_id


def _without_latency(path):
    return [
        {key: value for key, value in record.items() if key not in ("latency_s", "record_digest")} for record in _lines(path)
    ]  # (a digest of both)


@pytest.mark.parametrize("damage", ["truncated", "replaced"])
def test_a_damaged_frame_in_a_workflow_level_folder_is_named_and_extracted_again(bench, tmp_path, capsys, damage):
    """Found before any model is asked (the level's digest), named (the file that does not read, else the level folder),
    and the level folder removed, so that the workflow's next run extracts it again: then the job gives the records
    of a run that never met the damage."""
    from virtuebench.inference import main

    frames, damaged = _level_folders(bench, tmp_path)
    clean, out, folder = tmp_path / "clean.jsonl", tmp_path / "out.jsonl", frames / damaged / "64"
    assert main(_inference_args(bench, frames, clean, {"backend": "oracle"})) == 0
    frame = folder / "0007.jpg"
    data = frame.read_bytes()
    frame.write_bytes(data[: len(data) // 2] if damage == "truncated" else (folder / "0001.jpg").read_bytes())
    capsys.readouterr()
    assert main(_inference_args(bench, frames, out, {"backend": "oracle"})) == 1
    err = capsys.readouterr().err
    named = (
        f"{frame}: cannot be read as an image (OSError: image file is truncated" if damage == "truncated" else f"{folder}: its frame files"
    )
    assert err.startswith(f"error: {named}"), err
    assert f"; removed {folder}, so that the next run of the workflow extracts it again: rerun the same command" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and "retry" not in err
    assert not out.exists() and _lines(f"{out}.partial") == [], "no item may be asked over damaged frames"
    assert not folder.exists() and not list(folder.parent.glob(".64.*"))
    video = next(i.video_path for i in read_instances(bench / "instances.parquet") if i.video_id == damaged)
    extract_or_record(video, folder, levels=[64], level_folder=True, provenance="p1")  # what the workflow's next run does
    assert main(_inference_args(bench, frames, out, {"backend": "oracle"})) == 0
    assert _without_latency(out) == _without_latency(clean)


def test_a_damaged_frame_in_a_folder_the_workflow_did_not_make_names_what_to_remove(bench, tmp_path, capsys):
    from virtuebench.inference import main

    instances, frames, damaged = _frames_with_one_copied(bench, tmp_path)
    frame = frames / damaged / "64" / "0003.jpg"
    frame.write_bytes(frame.read_bytes()[:100])
    out = tmp_path / "out.jsonl"
    assert main(_inference_args(bench, frames, out, {"backend": "oracle"})) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {frame}: cannot be read as an image (") and len(err.splitlines()) == 1, err
    assert f"; remove {frames / damaged} and extract its frames again (a run of the workflow does), then rerun the same command" in err
    assert frame.exists(), "a folder the workflow did not make is the user's to remove"


def test_a_frame_that_breaks_in_the_backend_stops_the_job_instead_of_failing_every_item(bench, tmp_path, capsys):
    """A manifest written before digests were recorded has no digest to check at start: the model's read of the frame
    names it, and the job stops (a recorded item failure, retried, would meet the same file for ever)."""
    from virtuebench.inference import main

    instances, frames, damaged = _frames_with_one_copied(bench, tmp_path)
    manifest = frames / damaged / "manifest.json"
    data = json.loads(manifest.read_text())
    for level in data["levels"].values():
        level.pop("digest")
    manifest.write_text(json.dumps(data))
    frame = frames / damaged / "64" / "0005.jpg"
    frame.write_bytes(b"not a jpeg")
    out = tmp_path / "out.jsonl"
    assert main(_inference_args(bench, frames, out, {"backend": "oracle"})) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {frame}: cannot be read as an image (UnidentifiedImageError: "), err
    assert f"; remove {frames / damaged} and extract its frames again" in err and len(err.splitlines()) == 1
    partial = Path(f"{out}.partial")
    assert not out.exists() and all(record.get("error") is None for record in (_lines(partial) if partial.exists() else []))
