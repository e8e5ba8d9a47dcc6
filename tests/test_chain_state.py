"""What makes the start-up check cheap at paper scale (tools/bench_startup.py): the digest a judgment keeps of
the response line it judged, with the older digest of the record's fields still accepted; the remembered checks kept
as one digest per check and written only when they change; a report job taking the checks the start-up sweep left; the
check reading a few fields of each record (refusing what load_records refuses) and each level folder's manifest once."""

from __future__ import annotations

import dataclasses
import json
import os
import threading

import pytest

from virtuebench import verify
from virtuebench.frames import LevelFrames, Manifest, frames_hash
from virtuebench.records import (
    LINE_DIGEST_LENGTH,
    RecordError,
    Response,
    iter_fields,
    iter_records,
    judged_hash_matches,
    line_digest,
    load_records,
    response_hash,
    write_jsonl_atomic,
)


def response(**changes) -> Response:
    record = Response("q1", "v1", "m", "guess", "honest", "p", 64, 64, "yes", None, 0.5, "f", thinking="long " * 1000)
    return dataclasses.replace(record, **changes)


def test_a_judgment_names_its_response_by_the_lines_digest_and_an_older_one_by_its_fields(tmp_path):
    path = tmp_path / "64.jsonl"
    write_jsonl_atomic(path, [response()])
    ((record, line),) = list(iter_records(path, Response))
    digest = line_digest(line)
    assert len(digest) == LINE_DIGEST_LENGTH and digest == line_digest(line.rstrip(b"\n"))
    assert judged_hash_matches(digest, record, digest)
    assert judged_hash_matches(response_hash(record), record, digest)  # a judgment made before line_digest
    write_jsonl_atomic(path, [response(latency_s=0.6)])  # asked again since it was judged
    ((again, line),) = list(iter_records(path, Response))
    assert not judged_hash_matches(digest, again, line_digest(line))
    assert not judged_hash_matches(response_hash(record), again, line_digest(line))


def test_remembered_checks_are_digests_written_only_when_they_change(tmp_path):
    path = tmp_path / "state" / "chain.json"
    first = verify.Remembered(path)
    stamp = ",".join(["1:2"] * 5000)  # a level's stamp names every video's frames
    first.keep("judgments-v2:a.jsonl", stamp)
    first.save()
    data = json.loads(path.read_text())
    assert data["format"] == verify.Remembered.FORMAT and path.stat().st_size < 200
    os.utime(path, ns=(1, 1))
    same = verify.Remembered(path)
    assert same.holds("judgments-v2:a.jsonl", stamp) and not same.holds("judgments-v2:a.jsonl", stamp + ",3:4")
    same.save()
    assert path.stat().st_mtime_ns == 1  # nothing changed: not rewritten
    changed = verify.Remembered(path)
    changed.save()  # the check was not made again (its file is gone): forgotten
    assert json.loads(path.read_text())["passed"] == {}


def test_an_older_remembered_file_is_checked_again(tmp_path):
    path = tmp_path / "chain.json"
    path.write_text(json.dumps({"judgments-v2:a.jsonl": "1:2"}))  # the stamps themselves, before the digests
    assert not verify.Remembered(path).holds("judgments-v2:a.jsonl", "1:2")


def test_a_report_job_reads_the_checks_the_start_up_sweep_left(tmp_path, monkeypatch):
    taken = []

    def check(paths, instances=None, report_outputs=(), remembered=None):
        taken.append(remembered)
        return verify.Chain()

    monkeypatch.chdir(tmp_path)
    judgments = tmp_path / "results/judgments/rules/m/honest/64.jsonl"
    judgments.parent.mkdir(parents=True)
    judgments.write_text("")
    monkeypatch.setattr(verify, "check", check)
    assert verify.read_judgments(["results/judgments/rules/m/honest/64.jsonl"], "results") == []
    (remembered,) = taken
    assert (
        remembered.path == verify.remembered_path("results") == tmp_path.joinpath(".snakemake/virtuebench/chain.json").relative_to(tmp_path)
    )


def test_the_checks_reading_of_a_few_fields_refuses_what_load_records_refuses(tmp_path):
    path = tmp_path / "64.jsonl"
    write_jsonl_atomic(path, [response(), response(instance_id="q2", item_hash="h")])
    fields = [values for values, _ in iter_fields(path, Response, ("instance_id", "item_hash", "sample", "retryable"))]
    assert fields == [("q1", None, None, False), ("q2", "h", None, False)]  # a field the line lacks: its default
    lines = path.read_text().splitlines(keepends=True)
    for broken in (lines + [lines[0]], [lines[0].replace('"model"', '"modle"')], ["[1]\n"], ['{"a": \n']):
        path.write_text("".join(broken))
        with pytest.raises(RecordError) as expected:
            load_records(path, Response)
        with pytest.raises(RecordError) as found:
            list(iter_fields(path, Response, ("instance_id",)))
        assert str(found.value) == str(expected.value)


def test_each_level_folders_manifest_is_read_once_for_the_folder_and_its_frames_hash(tmp_path, monkeypatch):
    folder = tmp_path / "frames" / "v1"
    for level in (64, 128):
        (folder / str(level)).mkdir(parents=True)
        names = [f"{k:04d}.jpg" for k in range(level)]
        for name in names:
            (folder / str(level) / name).write_bytes(b"")
        frames = LevelFrames([k + 0.5 for k in range(level)], list(range(level)), names, "sha256:x")
        Manifest(video="v1.mp4", duration_s=300.0, levels={str(level): frames}).write(folder / str(level))
    read = []
    original = Manifest._read_file.__func__
    monkeypatch.setattr(Manifest, "_read_file", classmethod(lambda cls, path: read.append(path) or original(cls, path)))
    frames = verify._Frames(tmp_path / "frames", ["v1"])
    frames.check(verify.Chain(), verify.Remembered())
    assert frames.good == {"v1"} and len(read) == 2
    for level in (64, 128):
        assert frames.level_hash("v1", level) == frames_hash(Manifest.read(folder, level), level)
    assert len(read) == 4  # the two reads here, for the comparison: none by level_hash


def test_a_judgment_made_before_line_digest_is_checked_against_the_records_fields(tmp_path):
    path = tmp_path / "64.jsonl"
    write_jsonl_atomic(path, [response(), response(instance_id="q2")])
    ((record, line), _) = list(iter_records(path, Response))
    responses = verify._Responses(path, {"q1": ("yes", line_digest(line)), "q2": ("yes", "0" * LINE_DIGEST_LENGTH)})
    assert responses.judged("q1", line_digest(line)) and not responses.judged("q2", line_digest(line))
    assert responses.judged("q1", response_hash(record))  # read from the file again, for this judgment alone
    assert not responses.judged("q2", response_hash(record))


def test_no_worker_process_is_forked_while_another_thread_runs(tmp_path, monkeypatch):
    path = tmp_path / "0.jsonl"
    write_jsonl_atomic(path, [response()])
    monkeypatch.setattr(verify, "MIN_FILES_FOR_WORKERS", 1)
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        reads = verify._Reads([(path, Response)], processes=2)
        assert reads.pool is None and reads.get(path, Response)[0][0][0] == "q1"
    finally:
        release.set()
        thread.join()


def test_record_files_read_ahead_in_worker_processes_are_those_the_check_asks_for(tmp_path, monkeypatch):
    files = []
    for n in range(4):
        path = tmp_path / f"{n}.jsonl"
        write_jsonl_atomic(path, [response(instance_id=f"q{n}")])
        files.append(path)
    (tmp_path / "bad.jsonl").write_text("not json\n")
    monkeypatch.setattr(verify, "MIN_FILES_FOR_WORKERS", 1)
    # A test run before this one in the same pytest worker may have left a thread behind (CI's did): forked anyway.
    monkeypatch.setattr(verify, "_may_fork", lambda: True)
    planned = [(path, Response) for path in [*files, tmp_path / "bad.jsonl"]]
    reads = verify._Reads(planned, processes=2)
    try:
        assert reads.pool is not None
        assert reads.get(files[0], Response) == verify._Reads([], 1).get(files[0], Response)  # the same as read here
        assert reads.get(files[3], Response)[0][0][0] == "q3"  # 1 and 2 passed over (a stale responses file's judgments)
        with pytest.raises(RecordError, match="not valid JSON"):
            reads.get(tmp_path / "bad.jsonl", Response)
        assert reads.get(files[1], Response)[0][0][0] == "q1"  # passed over before: read here
    finally:
        reads.close()


def test_a_stamp_changes_with_an_edit_that_keeps_size_and_modification_time(tmp_path):
    """The remembered checks' stamp (verify.stat_stamp): an edit that keeps the size and sets the modification time
    back (os.utime, `touch -r`) changes the change time; a file replaced by a copy with the same size and times is
    another inode. Either makes the check be made again."""
    path, copy = tmp_path / "64.jsonl", tmp_path / "copy.jsonl"
    path.write_text('{"judgement": 0}\n')
    before, stat = verify.stat_stamp(path), path.stat()
    size, mtime = stat.st_size, stat.st_mtime_ns
    assert before == f"{size}:{mtime}:{stat.st_ctime_ns}:{stat.st_ino}" and verify.stat_stamp(path, tmp_path / "gone") == f"{before},-"
    # ctime has the clock's granularity: edit until it moves (a file system with coarse times needs a few writes)
    while path.stat().st_ctime_ns == stat.st_ctime_ns:
        path.write_text('{"judgement": 1}\n')
        os.utime(path, ns=(stat.st_atime_ns, mtime))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (size, mtime) and verify.stat_stamp(path) != before
    copy.write_text(path.read_text())
    os.utime(copy, ns=(stat.st_atime_ns, mtime))
    edited = verify.stat_stamp(path)
    os.replace(copy, path)  # (rename keeps the copy's ctime only where it was made in the same clock tick)
    assert verify.stat_stamp(path).split(":")[3] != edited.split(":")[3]
