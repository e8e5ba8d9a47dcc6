"""The fault harness's record edits (tests/helpers/fault_kinds.py) do what the fault table says they do, without a
run: five verdicts flipped with the file's size and modification time kept, one number of scores.csv edited, one
response edited to the same length, a frame job's workers told from the shell that starts it."""

from __future__ import annotations

import csv
import json
import os

from helpers import fault_kinds


def _stamp(path):
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


def test_flip_verdicts_flips_five_zeros_and_keeps_size_and_mtime(tmp_path):
    path = tmp_path / "64.jsonl"
    lines = [{"instance_id": f"q{n}", "judgement": n % 3 == 0, "refusal": 0} for n in range(9)]
    path.write_text("".join(json.dumps({**line, "judgement": int(line["judgement"])}) + "\n" for line in lines))
    os.utime(path, ns=(1_000_000_000, 1_500_000_000_000_000_000))
    before = _stamp(path)
    assert fault_kinds.flip_verdicts(path) == 5
    assert _stamp(path) == before
    verdicts = [json.loads(line)["judgement"] for line in path.read_text().splitlines()]
    assert verdicts == [1, 1, 1, 1, 1, 1, 1, 1, 0]  # q0, q3, q6 were 1; the first five zeros (q1 q2 q4 q5 q7) flipped, q8 not


def test_edit_scores_changes_one_number_and_keeps_the_mtime(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("model,prompt,level,subset,accuracy,n_correct,n\napi,honest,64,overall,30.0,3,10\napi,honest,64,refusal,0.0,0,3\n")
    os.utime(path, ns=(1_000_000_000, 1_600_000_000_000_000_000))
    old = list(csv.DictReader(path.open()))
    said = fault_kinds.edit_scores(path)
    new = list(csv.DictReader(path.open()))
    assert path.stat().st_mtime_ns == 1_600_000_000_000_000_000
    changed = [(n, key) for n, (a, b) in enumerate(zip(old, new, strict=True)) for key in a if a[key] != b[key]]
    assert changed == [(0, "n_correct")] and new[0]["n_correct"] == "4", said


def test_edit_response_keeps_size_and_mtime_and_changes_one_response(tmp_path):
    path = tmp_path / "64.jsonl"
    records = [{"instance_id": f"q{n}", "response": "I saw 64 frames."} for n in range(3)]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    os.utime(path, ns=(1_000_000_000, 1_700_000_000_000_000_000))
    before = _stamp(path)
    assert fault_kinds.edit_response(path) == "q0"
    assert _stamp(path) == before
    responses = [json.loads(line)["response"] for line in path.read_text().splitlines()]
    assert responses == ["cyan............", "I saw 64 frames.", "I saw 64 frames."]


def test_jobs_of_takes_the_python_process_not_its_shell_nor_its_workers():
    shell = fault_kinds.Proc(10, 1, "/bin/bash -c set -euo pipefail; python -m virtuebench.frames v.mp4 out --threads 2 > log 2>&1")
    job = fault_kinds.Proc(11, 10, "/venv/bin/python -m virtuebench.frames v.mp4 out --threads 2")
    worker = fault_kinds.Proc(12, 11, job.cmdline)
    other = fault_kinds.Proc(13, 1, "/venv/bin/python -m virtuebench.judge r.jsonl")
    processes = [shell, job, worker, other]
    assert fault_kinds.jobs_of(processes, "virtuebench.frames") == [job]
    assert fault_kinds.workers_of(processes, job) == [worker]
    assert fault_kinds.jobs_of(processes, "virtuebench.judge") == [other]


def test_a_wrong_outcome_is_never_allowed_and_a_skipped_kind_is():
    for fault in (*fault_kinds.ALLOWED, *fault_kinds.STAGE, "ENOSPC", "read-only folder"):
        assert not fault_kinds.allowed(fault_kinds.faults.Outcome(fault, "m", "wrong"))
        assert not fault_kinds.allowed(fault_kinds.faults.Outcome(fault, "m", "failed unnamed"))
        assert fault_kinds.allowed(fault_kinds.faults.Outcome(fault, "m", "identical"))
    assert fault_kinds.allowed(fault_kinds.faults.Outcome("ENOSPC", "m", "not fired", tail="skipped: not root"))
    assert not fault_kinds.allowed(fault_kinds.faults.Outcome("ENOSPC", "m", "not fired", tail="the run ended first"))
