"""The JSONL plumbing every long job shares: reading with errors that name the line, atomic writes, and the
progress log that lets inference and judging survive a kill (docs/records.md)."""

import dataclasses
import hashlib
import json
import re

import pytest

from virtuebench import records as records_module
from virtuebench.records import (
    RECORD_DIGEST,
    Judgment,
    ProgressLog,
    RecordError,
    Response,
    _json_line,
    digested_line,
    item_key,
    iter_jsonl,
    line_digest,
    line_digests,
    load_records,
    read_fields,
    record_digest_matches,
    response_hash,
    stable_hash,
    to_json_line,
    write_jsonl_atomic,
)


def _response(instance_id="a", **changes):
    base = Response(instance_id, "v1", "m", "oracle", "honest", "ph", 64, 64, "red", None, 0.5, "fp")
    return dataclasses.replace(base, **changes)


def test_resume_keeps_finished_records_and_drops_a_line_cut_short_by_a_kill(tmp_path):
    log = ProgressLog(tmp_path / "out.jsonl", "fp")
    lines = [
        {"instance_id": "a", "fingerprint": "fp", "error": None},
        {"instance_id": "b", "fingerprint": "other settings", "error": None},
        {"fingerprint": "fp", "error": None},  # no key: cannot be matched to an item
        [1, 2],  # JSON, but not a record
        {"instance_id": "c", "fingerprint": "fp", "error": "timeout"},  # failed: tried again
        {"instance_id": "d", "fingerprint": "fp", "error": None},
    ]
    text = "".join(json.dumps(line) + "\n" for line in lines) + '{"instance_id": "e", "fingerprint": "f'  # killed mid-write
    log.partial.write_text(text)
    kept = log.resume(is_done=lambda record: record["error"] is None)
    assert list(kept) == ["a", "d"]
    assert kept["d"] == {"instance_id": "d", "fingerprint": "fp", "error": None}
    # the partial file now holds exactly those two, each on a whole line, so appending after it is safe
    assert log.partial.read_text() == digested_line(lines[0]) + digested_line(lines[5])  # digested as the stage writes
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_resumed_log_goes_on_after_the_cut_line_and_finishes_atomically(tmp_path):
    output = tmp_path / "two" / "deep" / "out.jsonl"
    first = ProgressLog(output, "fp")
    assert first.resume() == {}  # nothing before: an empty partial file, its folder made
    assert first.partial == tmp_path / "two" / "deep" / "out.jsonl.partial" and first.partial.read_text() == ""
    first.append(_response("a"))
    first.close()
    with first.partial.open("a") as handle:
        handle.write('{"instance_id": "b", "finger')  # the kill
    second = ProgressLog(output, "fp")
    assert list(second.resume()) == ["a"]
    second.append(_response("b"))
    second.append(_response("c"))
    assert [json.loads(line)["instance_id"] for line in second.partial.read_text().splitlines()] == ["a", "b", "c"]
    second.finish([_response("a"), _response("b"), _response("c")])
    assert not second.partial.exists()
    assert [r.instance_id for r in load_records(output, Response)] == ["a", "b", "c"]


def test_resume_keeps_the_latest_record_of_an_item_and_keys_by_the_chosen_field(tmp_path):
    log = ProgressLog(tmp_path / "out.jsonl", "fp", key_field="video_id")
    log.partial.write_text(
        json.dumps({"video_id": "v1", "fingerprint": "fp", "n": 1})
        + "\n"
        + json.dumps({"instance_id": "x", "fingerprint": "fp", "n": 2})  # lacks the key field
        + "\n"
        + json.dumps({"video_id": "v1", "fingerprint": "fp", "n": 3})
        + "\n"
    )
    assert log.resume() == {"v1": {"video_id": "v1", "fingerprint": "fp", "n": 3}}


def test_a_garbled_line_inside_the_file_is_skipped_not_the_end_of_reading(tmp_path):
    log = ProgressLog(tmp_path / "out.jsonl", "fp")
    log.partial.write_text('{"instance_id": "a", "fingerprint": "fp"}\n{"instan\n{"instance_id": "b", "fingerprint": "fp"}\n')
    assert list(log.resume()) == ["a", "b"]


def test_a_job_with_nothing_to_do_finishes_with_an_empty_output(tmp_path):
    log = ProgressLog(tmp_path / "out.jsonl", "fp")
    log.close()  # nothing was appended: nothing to close
    log.finish([])
    assert (tmp_path / "out.jsonl").read_text() == "" and not log.partial.exists()


def test_append_reopens_after_close_and_adds_to_the_end(tmp_path):
    log = ProgressLog(tmp_path / "out.jsonl", "fp")
    log.append({"instance_id": "a"})
    log.close()
    log.close()  # twice is harmless
    log.append({"instance_id": "b"})
    log.close()
    assert log.partial.read_text() == digested_line({"instance_id": "a"}) + digested_line({"instance_id": "b"})


def test_iter_jsonl_names_the_file_and_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n\n   \n{"a": 2}\n')
    assert list(iter_jsonl(path)) == [{"a": 1}, {"a": 2}]  # blank lines skipped
    path.write_text('{"a": 1}\n\n{"a": \n')
    with pytest.raises(RecordError, match=r"r.jsonl:3: not valid JSON \("):
        list(iter_jsonl(path))
    path.write_text('{"a": 1}\n["a"]\n')
    with pytest.raises(RecordError, match=r"r.jsonl:2: expected a JSON object, got list"):
        list(iter_jsonl(path))
    with pytest.raises(RecordError, match=r"missing.jsonl: file not found"):
        list(iter_jsonl(tmp_path / "missing.jsonl"))


def test_load_records_reads_optional_fields_as_their_defaults_and_names_missing_ones(tmp_path):
    path = tmp_path / "r.jsonl"
    record = dataclasses.asdict(_response("a"))
    old = {k: v for k, v in record.items() if k not in ("retryable", "thinking", "truncated")}  # written before those fields
    path.write_text(json.dumps(old) + "\n" + json.dumps({**dataclasses.asdict(_response("b")), "not_a_field": 1}) + "\n")
    first, second = load_records(path, Response)
    assert (first.retryable, first.thinking, first.truncated) == (False, None, False)
    assert (first, second) == (_response("a"), _response("b"))
    path.write_text(json.dumps(record) + "\n" + json.dumps({k: v for k, v in record.items() if k not in ("level", "model")}) + "\n")
    with pytest.raises(RecordError, match=r"r.jsonl: record 2 lacks field\(s\) \['level', 'model'\] of a Response"):
        load_records(path, Response)


def test_an_item_twice_in_a_record_file_is_refused_naming_both_records(tmp_path):
    """A duplicated line would be judged and scored twice: the reader refuses it, for responses and judgments alike."""
    path = tmp_path / "r.jsonl"
    lines = [json.dumps(dataclasses.asdict(_response(name))) for name in ("a", "b", "c")]
    path.write_text("\n".join([*lines, lines[1]]) + "\n")
    with pytest.raises(
        RecordError, match=r"r.jsonl: records 2 and 4 are the same item \(model 'm', prompt 'honest', level 64, instance_id 'b'\)"
    ):
        load_records(path, Response)
    other_level = {**json.loads(lines[1]), "level": 128}  # the same instance at another level is another item
    path.write_text("\n".join([*lines, json.dumps(other_level)]) + "\n")
    assert [r.level for r in load_records(path, Response)] == [64, 64, 64, 128]


def test_records_without_a_key_may_repeat(tmp_path):
    """Only a record class with a KEY (responses, judgments) holds each item once; others are read as they are."""

    @dataclasses.dataclass(frozen=True)
    class Row:
        name: str

    path = tmp_path / "rows.jsonl"
    path.write_text('{"name": "a"}\n{"name": "a"}\n')
    assert load_records(path, Row) == [Row("a"), Row("a")]


def test_response_hash_is_a_digest_of_every_field_as_read_back(tmp_path):
    """A judgment keeps response_hash of the record it judged; the report compares it with the record there now. A model
    run once has no `sample` in its lines, nor in the digest: its judgments' hashes are what they were before the field;
    nor has a record without `answered_by` (a reference backend's; one written before it was recorded)."""
    record = _response("a", usage={"prompt_tokens": 3}, thinking="hm")
    fields = {name: value for name, value in dataclasses.asdict(record).items() if name not in ("sample", "answered_by")}
    by_hand = hashlib.sha256(json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]
    assert response_hash(record) == by_hand
    path = tmp_path / "r.jsonl"
    write_jsonl_atomic(path, [record])
    assert '"sample"' not in path.read_text() and '"answered_by"' not in path.read_text()
    assert response_hash(load_records(path, Response)[0]) == by_hand  # the same once written and read back
    named = dataclasses.replace(record, answered_by="gpt-4o-2024-11-20")  # where it is known, it is in the line and the digest
    write_jsonl_atomic(path, [named])
    assert load_records(path, Response) == [named] and response_hash(named) != by_hand
    assert response_hash(dataclasses.replace(record, latency_s=0.6)) != by_hand  # asked again: another record
    sampled = dataclasses.replace(record, sample=0)  # a sampled model's run 0: its sample is in the line and the digest
    write_jsonl_atomic(path, [sampled])
    assert json.loads(path.read_text())["sample"] == 0
    assert response_hash(load_records(path, Response)[0]) == response_hash(sampled) != by_hand


def test_a_record_file_holds_each_sample_of_an_item_once(tmp_path):
    """A sampled model's records of one item differ by `sample`; the same (item, sample) twice is refused."""
    path = tmp_path / "r.jsonl"
    write_jsonl_atomic(path, [dataclasses.replace(_response("a"), sample=k) for k in (0, 1, 2)])
    assert [r.sample for r in load_records(path, Response)] == [0, 1, 2]
    write_jsonl_atomic(path, [dataclasses.replace(_response("a"), sample=k) for k in (0, 1, 1)])
    with pytest.raises(RecordError, match="records 2 and 3 are the same item .*instance_id 'a', sample 1"):
        load_records(path, Response)


def test_write_jsonl_atomic_replaces_the_file_whole(tmp_path):
    path = tmp_path / "new" / "folder" / "out.jsonl"
    write_jsonl_atomic(path, [{"a": 1}, _response("b")])
    lines = path.read_text().splitlines()
    assert json.loads(lines[0]) == {"a": 1} and json.loads(lines[1])["instance_id"] == "b" and len(lines) == 2
    write_jsonl_atomic(path, [{"a": 2}])
    assert path.read_text() == '{"a": 2}\n'
    assert sorted(p.name for p in path.parent.iterdir()) == ["out.jsonl"]  # no temporary file left


def test_stable_hash_is_sha256_of_sorted_compact_json():
    # by hand: the canonical text of {"b": [1, "é"], "a": 2} is {"a":2,"b":[1,"é"]}
    expected = hashlib.sha256('{"a":2,"b":[1,"é"]}'.encode()).hexdigest()
    assert stable_hash({"b": [1, "é"], "a": 2}) == expected[:12]
    assert stable_hash({"a": 2, "b": [1, "é"]}, length=20) == expected[:20]


def test_to_json_line_keeps_field_order_and_unicode():
    assert to_json_line({"z": "é", "a": None}) == '{"z": "é", "a": null}\n'


def test_a_response_is_ok_only_with_an_answer_and_no_error():
    assert _response().ok
    assert not _response(error="timeout").ok
    assert not _response(response=None).ok
    assert not _response(response=None, error="x").ok


def test_judgment_defaults_say_nothing_was_decided():
    judgment = Judgment("i", "m", "p", 64, "rules", "perception", "colour", "red", False, "red", 0, 1, True, "", None, "fp")
    assert (judgment.score, judgment.video_id, judgment.retryable, judgment.truncated, judgment.confident) == (
        None,
        None,
        False,
        False,
        None,
    )


def test_resume_keys_a_sampled_models_records_by_item_and_sample(tmp_path):
    """Each (item, sample) is resumed on its own: a finished sample is kept, another sample of the item is not implied."""
    log = ProgressLog(tmp_path / "out.jsonl", "fp", key=item_key)
    lines = [
        {"instance_id": "a", "sample": 0, "fingerprint": "fp", "error": None},
        {"instance_id": "a", "sample": 1, "fingerprint": "fp", "error": "timeout"},  # failed: tried again
        {"instance_id": "a", "sample": 2, "fingerprint": "fp", "error": None},
        {"instance_id": "b", "fingerprint": "fp", "error": None},  # a model run once: no sample
    ]
    log.partial.write_text("".join(json.dumps(line) + "\n" for line in lines))
    kept = log.resume(is_done=lambda record: record["error"] is None)
    assert list(kept) == ["a#0", "a#2", "b"]


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}\n',
        '{"a": 1}\r\n',
        ' {"a": 1}',
        '\ufeff{"a": 1}',
        '{"a": 1} x',
        '{"a": 1}{"b": 2}',
        '{"a": ',
        "[1]\n",
        "nul",
        '{"a": 1}\x0b',
        '{"a": "café"}',
    ],
)
def test_a_line_is_read_as_json_loads_reads_it(text):
    """records._json_line (the scanner called directly, for speed): json.loads's value, or its error, for every line."""
    try:
        expected = ("value", json.loads(text))
    except json.JSONDecodeError as error:
        expected = ("error", str(error))
    try:
        found = ("value", _json_line(text))
    except json.JSONDecodeError as error:
        found = ("error", str(error))
    assert found == expected


# -- what the start-up check reads: line digests and a few fields of each record (verify.py) ------------------------


def _two_responses(tmp_path):
    from virtuebench.records import Response, to_json_line

    records = [
        Response("a", "v", "m", "b", "honest", "h", 64, 64, "red", None, 0.1, "f", usage={"x": 1}),
        Response("b", "v", "m", "b", "honest", "h", 64, 64, "blue", None, 0.2, "f", sample=None),
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(map(to_json_line, records)))
    return path, records


def test_a_line_digest_is_the_sha256_of_the_line_without_its_end():
    from virtuebench.records import LINE_DIGEST_LENGTH, line_digest

    line = b'{"a": 1}'
    expected = hashlib.sha256(line).hexdigest()[:LINE_DIGEST_LENGTH]
    assert LINE_DIGEST_LENGTH == 32 and len(expected) == 32
    assert line_digest(line) == line_digest(line + b"\n") == line_digest(line + b"\r\n") == expected
    assert line_digest(b"\n" + line) != expected, "only the line's end is left out"
    assert line_digest(line + b"  \n") != expected, "spaces before the line's end are the line's"
    assert line_digest(b"ends in X\n") == hashlib.sha256(b"ends in X").hexdigest()[:LINE_DIGEST_LENGTH]
    assert line_digest(b'{"a": 2}') != expected


def test_a_judgment_names_its_response_by_the_new_digest_or_by_the_older_hash(tmp_path):
    from virtuebench.records import judged_hash_matches, line_digest, response_hash

    _, records = _two_responses(tmp_path)
    digest = line_digest(b'{"instance_id": "a"}')
    assert judged_hash_matches(digest, records[0], digest)
    assert not judged_hash_matches(line_digest(b"other"), records[0], digest)
    older = response_hash(records[0])  # 16 digits: the record's fields
    assert len(older) == 16 and judged_hash_matches(older, records[0], digest)
    assert not judged_hash_matches(response_hash(records[1]), records[0], digest)


def test_a_few_fields_of_each_record_are_read_as_the_records_hold_them(tmp_path):
    from virtuebench.records import Response, iter_fields, line_digest, read_fields

    path, records = _two_responses(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    names = ("instance_id", "usage", "sample", "retryable")
    expected = [tuple(getattr(record, name) for name in names) for record in records]
    assert [values for values, _ in iter_fields(path, Response, names)] == expected
    assert [line for _, line in iter_fields(path, Response, names)] == lines
    assert read_fields(path, Response, names) == expected
    assert read_fields(path, Response, names, digests=True) == [(values, line_digest(line)) for values, line in zip(expected, lines)]
    assert read_fields(path, Response, ("response",)) == [("red",), ("blue",)]
    with pytest.raises(ValueError, match=r"Response has no field\(s\) \['colour'\]"):
        next(iter_fields(path, Response, ("instance_id", "colour")))


def test_a_field_with_a_default_factory_reads_as_a_new_value(tmp_path):
    from virtuebench.records import iter_fields

    @dataclasses.dataclass
    class Listed:
        name: str
        tags: list = dataclasses.field(default_factory=list)

    path = tmp_path / "l.jsonl"
    path.write_text('{"name": "a"}\n{"name": "b", "tags": [1]}\n')
    assert [values for values, _ in iter_fields(path, Listed, ("tags", "name"))] == [([], "a"), ([1], "b")]


def test_a_line_that_is_not_utf8_or_has_more_after_its_value_is_named(tmp_path):
    from virtuebench.records import iter_jsonl_lines

    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": "\xff"}\n')
    with pytest.raises(RecordError, match=r"bad.jsonl:2: not UTF-8 \(invalid start byte\)"):
        list(iter_jsonl_lines(path))
    path.write_bytes(b'{"a": 1}   \n{"a": 2} {"b": 3}\n')
    with pytest.raises(RecordError, match=r"bad.jsonl:2: not valid JSON \(Extra data\)"):
        list(iter_jsonl_lines(path))
    path.write_bytes('{"a": "é"} \t\n'.encode())
    assert [value for _, value, _ in iter_jsonl_lines(path)] == [{"a": "é"}]


# -- record_digest: each response and judgment line ends with a digest of its other members (issue 47, W3) -----------


def _judgment(**changes) -> Judgment:
    base = Judgment("q1", "m", "honest", 64, "rules", "perception", "colour", "red", False, "blue", 0, 0, True, "other", None, "fp")
    return dataclasses.replace(base, **changes)


def test_a_stage_writes_each_record_with_the_digest_of_its_other_members(tmp_path):
    path = tmp_path / "64.jsonl"
    write_jsonl_atomic(path, [_judgment(), _judgment(instance_id="q2", response="café — naïve")], digest=True)
    lines = path.read_bytes().splitlines(keepends=True)
    for line in lines:
        value = json.loads(line)
        text = json.dumps({name: item for name, item in value.items() if name != RECORD_DIGEST}, ensure_ascii=False)
        assert value[RECORD_DIGEST] == hashlib.sha256(text.encode()).hexdigest()[:32]
        assert list(value)[-1] == RECORD_DIGEST and line.endswith(b'"}\n')
        assert line_digests(line, value) == (line_digest(line), True)
        assert record_digest_matches(line, value) is True
    # read back, the records are as before (the member is no field of theirs), and written again the same
    assert load_records(path, Judgment) == [_judgment(), _judgment(instance_id="q2", response="café — naïve")]
    assert [to_json_line(record, digest=True).encode() for record in load_records(path, Judgment)] == lines
    # without `digest` (the judge CLI's own output, the CVRR-ES tables' inputs) lines are as before
    assert RECORD_DIGEST not in to_json_line(_judgment()) and to_json_line(_judgment()).endswith('"response_hash": null}\n')


def test_a_verdict_flipped_by_hand_no_longer_matches_and_the_check_names_the_file_and_record(tmp_path):
    path = tmp_path / "64.jsonl"
    write_jsonl_atomic(path, [_judgment(), _judgment(instance_id="q2")], digest=True)
    lines = path.read_text().splitlines(keepends=True)
    flipped = lines[1].replace('"judgement": 0', '"judgement": 1')
    assert len(flipped) == len(lines[1])  # the same size: only the digest tells
    path.write_text(lines[0] + flipped)
    assert record_digest_matches(flipped.encode(), json.loads(flipped)) is False
    message = f"{path}: record 2 was changed after it was written: its fields do not match its record_digest"
    with pytest.raises(RecordError, match=rf"^{re.escape(message)}$"):
        read_fields(path, Judgment, ("instance_id", "judgement"))
    with pytest.raises(RecordError, match="record 2 was changed"):
        read_fields(path, Judgment, ("instance_id",), digests=True)
    assert len(load_records(path, Judgment)) == 2  # a plain reader reads it: the chain check is what refuses it


@pytest.mark.parametrize(
    "rewrite",
    [
        lambda value: json.dumps(value) + "\n",  # another tool's escapes (\u00e9)
        lambda value: json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\r\n",  # its spacing and line end
        lambda value: json.dumps({RECORD_DIGEST: value[RECORD_DIGEST], **value}, ensure_ascii=False) + "\n",  # member first
    ],
)
def test_a_record_written_again_by_another_tool_holds_while_its_fields_do(rewrite):
    value = json.loads(digested_line(dataclasses.asdict(_judgment(response="café"))))
    line = rewrite(value).encode()
    assert line_digests(line, json.loads(line)) == (line_digest(line), True)
    changed = rewrite({**value, "refusal": 1}).encode()
    assert line_digests(changed, json.loads(changed)) == (line_digest(changed), False)


def test_other_key_orders_and_digests_that_are_no_string_do_not_match():
    value = json.loads(digested_line({"a": 1, "b": 2}))
    resorted = json.dumps({"b": 2, "a": 1, RECORD_DIGEST: value[RECORD_DIGEST]}).encode()
    assert record_digest_matches(resorted, json.loads(resorted)) is False  # the digest is of the fields in their order
    for wrong in (0, None, [value[RECORD_DIGEST]], value[RECORD_DIGEST].upper()):
        line = json.dumps({"a": 1, "b": 2, RECORD_DIGEST: wrong}).encode()
        assert record_digest_matches(line, json.loads(line)) is (None if wrong is None else False)


def test_a_line_without_a_record_digest_is_read_as_before():
    line = json.dumps({"a": 1}).encode() + b"\r\n"
    assert line_digests(line, {"a": 1}) == (line_digest(line), None)
    assert record_digest_matches(line, {"a": 1}) is None


def test_read_fields_gives_each_lines_digest_of_new_and_older_lines_alike(tmp_path):
    path = tmp_path / "64.jsonl"
    older, new = to_json_line(_response("a")), to_json_line(_response("b"), digest=True)
    path.write_text(older + new)
    assert read_fields(path, Response, ("instance_id", "sample")) == [("a", None), ("b", None)]
    assert read_fields(path, Response, ("instance_id",), digests=True) == [
        (("a",), line_digest(older.encode())),
        (("b",), line_digest(new.encode())),
    ]


def test_digested_line_makes_a_held_digest_anew_where_the_member_stood():
    stale = {RECORD_DIGEST: "0" * 32, "a": 1, "b": "x"}
    line = digested_line(stale)
    assert line == digested_line({"a": 1, "b": "x"}) and line.startswith('{"a": 1, "b": "x", "record_digest": "')
    assert record_digest_matches(line.encode(), json.loads(line)) is True


def test_a_progress_line_changed_since_it_was_written_is_asked_again(tmp_path):
    log = ProgressLog(tmp_path / "out.jsonl", "fp")
    log.append({"instance_id": "a", "fingerprint": "fp", "judgement": 0})
    log.append({"instance_id": "b", "fingerprint": "fp", "judgement": 0})
    log.close()
    first, second = log.partial.read_text().splitlines(keepends=True)
    log.partial.write_text(first + second.replace('"judgement": 0', '"judgement": 1'))
    assert list(ProgressLog(tmp_path / "out.jsonl", "fp").resume()) == ["a"]
    older = ProgressLog(tmp_path / "older.jsonl", "fp")
    older.partial.write_text(json.dumps({"instance_id": "c", "fingerprint": "fp"}) + "\n")  # before the digest
    assert list(older.resume()) == ["c"]
    assert older.partial.read_text() == digested_line({"instance_id": "c", "fingerprint": "fp"})


def test_a_line_as_its_stage_wrote_it_is_checked_on_its_bytes_without_encoding_the_record_again(monkeypatch):
    """The start-up check reads 515,000 lines at paper scale: a line digested_line wrote is checked by hashing its bytes
    up to the member; only a line written otherwise is encoded again (records._fields_match)."""
    encoded = []
    real = records_module._fields_match
    monkeypatch.setattr(records_module, "_fields_match", lambda value, recorded: encoded.append(value) or real(value, recorded))
    line = digested_line(dataclasses.asdict(_judgment(response="café " * 200))).encode()
    value = json.loads(line)
    for ending in (b"", b"\n", b"\r\n"):
        assert line_digests(line.rstrip(b"\n") + ending, value) == (line_digest(line), True)
        assert record_digest_matches(line.rstrip(b"\n") + ending, value) is True
    assert encoded == []
    tiny = digested_line({"a": 1}).encode()
    assert record_digest_matches(tiny, json.loads(tiny)) is True and line_digests(tiny, json.loads(tiny))[1] is True
    assert encoded == []
    rewritten = json.dumps(value).encode()
    assert record_digest_matches(rewritten, value) is True and line_digests(rewritten, value) == (line_digest(rewritten), True)
    assert len(encoded) == 2
    # whitespace after the value is another tool's too (json.loads allows it; line_digest keeps it, all but the line end)
    spaced = line.rstrip(b"\n") + b" \t\n"
    assert line_digests(spaced, value) == (line_digest(spaced), True) and line_digest(spaced) != line_digest(line)
    assert record_digest_matches(spaced, value) is True
    assert len(encoded) == 4


def test_only_a_stages_writes_carry_the_digest(tmp_path):
    plain, digested = tmp_path / "plain.jsonl", tmp_path / "digested.jsonl"
    write_jsonl_atomic(plain, [_judgment()])
    write_jsonl_atomic(digested, [_judgment()], digest=True)
    assert plain.read_text() == to_json_line(_judgment()) and digested.read_text() == to_json_line(_judgment(), digest=True)
    log = ProgressLog(tmp_path / "out.jsonl", "fp")
    log.resume()
    log.finish([_judgment()])
    assert (tmp_path / "out.jsonl").read_text() == to_json_line(_judgment(), digest=True)
