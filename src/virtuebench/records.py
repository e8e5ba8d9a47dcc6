"""Record formats at the stage boundaries, and the JSONL plumbing every long job shares.

docs/records.md documents each format; the dataclasses here are their single definition.
`ProgressLog` is how inference and judging survive a kill: finished items are appended to a
`.partial` file beside the declared output as they finish, a rerun keeps the ones made with the
same settings (same fingerprint), and the output appears atomically only when the job is done.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar


class RecordError(ValueError):
    """A record file is malformed; the message names the file, the line and the field."""


@dataclass(frozen=True)
class Response:
    """One model answer for one (instance, level, prompt): a line of results/responses/{model}/{prompt}/{level}.jsonl."""

    instance_id: str
    video_id: str
    model: str
    backend: str
    prompt: str
    prompt_hash: str
    level: int
    n_frames: int
    response: str | None
    error: str | None
    latency_s: float
    fingerprint: str
    retryable: bool = False  # True for a backend failure, which the next run tries again
    usage: dict[str, Any] | None = None  # token counts and the like, where the backend reports them
    context: str | None = None  # a two-step prompt's first answer (DSCP step 1), shared by the video's items
    item_hash: str | None = None  # hash of the question and the frames it was asked with: resume reuses only a match
    thinking: str | None = None  # a thinking model's reasoning, apart from `response`, its final answer (docs/models.md)
    truncated: bool = False  # cut off at the token limit or inside an unclosed thinking block: judged as no answer
    finish_reason: str | None = None  # "stop" or "length", where the backend can tell
    weights_commit: str | None = None  # the commit of the weights the backend loaded (models/weights.py)
    # The model that answered: an API's reply's own `model` (the snapshot an alias such as gpt-5-chat-latest pointed to
    # then), or the hub id (or folder) the weights were loaded from; None, and left out of the line, for a backend with
    # neither (the reference rows), and in records written before it was recorded. Not in the fingerprint or the
    # answer's store key: recording it re-asks nothing.
    answered_by: str | None = field(default=None, metadata={"omitted_when_none": True})
    # Which of a sampled model's runs (0..samples-1; models.yaml `samples`); None, and left out of the line, for a model
    # run once, so that its records read as before the field was added.
    sample: int | None = field(default=None, metadata={"omitted_when_none": True})

    KEY: ClassVar[tuple[str, ...]] = ("model", "prompt", "level", "instance_id", "sample")  # at most one record each in a file

    @property
    def ok(self) -> bool:
        return self.error is None and self.response is not None


@dataclass(frozen=True)
class Judgment:
    """One verdict: a line of results/judgments/{judge}/{model}/{prompt}/{level}.jsonl.

    It carries the category, the ground truth and the response, so that metrics read only
    judgments and every number in a table can be traced back to these lines.
    """

    instance_id: str
    model: str
    prompt: str
    level: int
    judge: str
    category: str
    task_type: str
    answer: str
    is_unanswerable: bool
    response: str | None
    refusal: int
    judgement: int
    valid: bool
    reason: str
    error: str | None
    fingerprint: str
    score: int | None = None  # a graded score where the judge gives one (CVRR-ES: 0-5)
    judge_version: str | None = None  # the judge's rules version, or prompt id@hash/model for an LLM judge
    judge_model: str | None = None  # the model snapshot an LLM judge reported
    raw: str | None = None  # an LLM judge's reply, verbatim
    question: str | None = None  # the question as asked, so a judgment can be read on its own
    retryable: bool = False  # the judge's request failed: the next run asks again
    video_id: str | None = None  # the item's video: the unit the report's bootstrap resamples
    truncated: bool = False  # the response was cut off (Response.truncated): judged as no answer, valid false
    confident: bool | None = None  # the rules judge's verdict came from a rule of known precision (None: not said)
    decided_by: str | None = None  # a hybrid judge's: rules (confident), llm, or none (uncertain, no LLM judge to ask)
    response_hash: str | None = None  # response_hash() of the response record judged: the report checks it is the current one
    sample: int | None = field(default=None, metadata={"omitted_when_none": True})  # the response's (Response.sample)

    KEY: ClassVar[tuple[str, ...]] = ("model", "prompt", "level", "instance_id", "sample")  # at most one record each in a file


def record_fields(record: Any) -> dict[str, Any]:
    """A record's fields as its JSONL line holds them: a field marked `omitted_when_none` (Response.sample) is left out
    where it is None, so that records of a model run once are byte for byte what they were before the field existed."""
    data = dict(vars(record))  # the fields (JSON values: no deep copy needed, unlike asdict)
    for name in _omitted_when_none(type(record)):
        if data.get(name, 0) is None:
            del data[name]
    return data


def _omitted_when_none(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.metadata.get("omitted_when_none"))


def response_hash(response: Response) -> str:
    """The digest a judgment made before `line_digest` keeps of the response record it judged (every field as its line
    holds it, as read back; 16 hex digits). Still checked where a judgment holds one: its records stay valid."""
    return stable_hash(record_fields(response), length=16)


#: The length of `line_digest`: a judgment's `response_hash` of this length is one, of 16 a `response_hash`.
LINE_DIGEST_LENGTH = 32


def line_digest(line: bytes) -> str:
    """The digest a judgment keeps of the response record it judged: the SHA-256 of the record's line as read (its line
    end left out), 32 hex digits. Hashing the bytes read costs a tenth of encoding the record again (a thinking
    model's record holds up to 30,000 characters; docs/development.md), and any change to the line changes it."""
    return hashlib.sha256(line.rstrip(b"\r\n")).hexdigest()[:LINE_DIGEST_LENGTH]


def judged_hash_matches(judged: str, record: Any, digest: str) -> bool:
    """Whether a judgment's `response_hash` names this response record (`digest`: its line's `line_digest`): a
    judgment made before `line_digest` holds `response_hash` of the record, recomputed only for it."""
    return judged == (digest if len(judged) == LINE_DIGEST_LENGTH else response_hash(record))


def item_key(record: dict[str, Any]) -> str:
    """A progress file's key of a record (a dict as read back): its instance id, and its sample where it has one."""
    sample = record.get("sample")
    return record["instance_id"] if sample is None else f"{record['instance_id']}#{sample}"


def stable_hash(value: Any, length: int = 12) -> str:
    """Hash of a JSON-able value that does not depend on dict key order."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def to_json_line(record: Any, digest: bool = False) -> str:
    """A record's JSONL line (a dataclass record, or a dict as read back); with `digest`, ending with its
    `record_digest` (digested_line), as the stage that makes a response or judgment writes it."""
    data = record
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        data = dataclasses.asdict(record)
        for name in _omitted_when_none(type(record)):
            if data[name] is None:
                del data[name]
    if digest:
        return digested_line(data)
    return json.dumps(data, ensure_ascii=False, sort_keys=False) + "\n"


#: The member a response or judgment line ends with: a digest of the line's other members, written by the stage that
#: made the record, so that a record changed by anything else (a verdict flipped by hand) is found (verify.py).
RECORD_DIGEST = "record_digest"
_DIGEST_OPEN = b', "record_digest": "'  # how json.dumps writes the member's start, after the last other member
_DIGEST_CLOSE = b'"}'


def _own_digest(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()[:LINE_DIGEST_LENGTH]


def digested_line(data: dict[str, Any]) -> str:
    """The JSONL line of a record's fields `data` (in their order; a `record_digest` it holds is left out and made
    again) ending with `record_digest`: the SHA-256 of the line's JSON text without that member, as json.dumps writes
    it (32 hex digits). A reader checks it on the line's bytes (record_digest_matches), not by encoding the record."""
    text = json.dumps({name: value for name, value in data.items() if name != RECORD_DIGEST}, ensure_ascii=False)
    return f"{text[:-1]}{_DIGEST_OPEN.decode()}{_own_digest(text.encode())}{_DIGEST_CLOSE.decode()}\n"


#: Where the member starts in a line as digested_line writes it: this many bytes before the line's end.
_DIGEST_TAIL = len(_DIGEST_OPEN) + LINE_DIGEST_LENGTH + len(_DIGEST_CLOSE)


def line_digests(line: bytes, value: dict[str, Any]) -> tuple[str, bool | None]:
    """(line_digest(line), record_digest_matches(line, value)) in one pass over the line's bytes: what the check of a
    responses file needs of each line."""
    body = line.rstrip(b"\r\n")
    recorded = value.get(RECORD_DIGEST)
    if recorded is None:
        return _own_digest(body), None
    cut = len(body) - _DIGEST_TAIL
    if cut > 0 and body.endswith(_DIGEST_CLOSE) and body.startswith(_DIGEST_OPEN, cut):
        whole = hashlib.sha256(body[:cut])
        own = whole.copy()
        own.update(b"}")
        if own.hexdigest()[:LINE_DIGEST_LENGTH] == recorded:
            whole.update(body[cut:])
            return whole.hexdigest()[:LINE_DIGEST_LENGTH], True
    return _own_digest(body), _fields_match(value, recorded)


def record_digest_matches(line: bytes, value: dict[str, Any]) -> bool | None:
    """Whether a line's `record_digest` matches its other members; None where it has none (written before it was
    recorded). A line as digested_line wrote it is hashed as it is, up to the member (the check reads a few fields of
    each record: encoding each again would cost more than parsing it); one written otherwise (another tool's spacing or
    escapes, the member moved) is checked on its value encoded again as digested_line does: it holds as long as its
    fields do, in their order."""
    recorded = value.get(RECORD_DIGEST)
    if recorded is None:
        return None
    body = line.rstrip(b"\r\n")
    cut = len(body) - _DIGEST_TAIL
    if cut > 0 and body.endswith(_DIGEST_CLOSE) and body.startswith(_DIGEST_OPEN, cut) and _own_digest(body[:cut] + b"}") == recorded:
        return True
    return _fields_match(value, recorded)


def _fields_match(value: dict[str, Any], recorded: Any) -> bool:
    """Whether `recorded` is the digest of the members of `value` but record_digest, encoded as digested_line does."""
    rest = json.dumps({name: item for name, item in value.items() if name != RECORD_DIGEST}, ensure_ascii=False)
    return _own_digest(rest.encode()) == recorded


def iter_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    for _, value, _ in iter_jsonl_lines(path):
        yield value


_scan = json.JSONDecoder().scan_once  # json's own scanner (C), as json.loads calls it
_END = " \t\n\r"  # what json.loads allows after the value (json.decoder.WHITESPACE)


def _json_line(text: str) -> Any:
    """json.loads(text), without its layers of Python calls around the scanner (a paper-scale check parses 515,000
    lines): a line that starts with its value and ends with at most whitespace after it is scanned directly; any other
    (leading whitespace, a byte-order mark, more after the value, not JSON) goes to json.loads, which reads it or
    raises its own error."""
    try:
        value, end = _scan(text, 0)
    except (StopIteration, json.JSONDecodeError):
        return json.loads(text)
    if end != len(text) and text[end:].strip(_END):
        return json.loads(text)
    return value


def iter_jsonl_lines(path: str | Path) -> Iterator[tuple[int, dict[str, Any], bytes]]:
    """(line number, value, the line's bytes) of each non-empty line: one pass over the file, the bytes for
    `line_digest`."""
    path = Path(path)
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise RecordError(f"{path}: file not found") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if line.isspace():  # (not line.strip(), which copies a line of up to 30,000 characters to test it)
                continue
            try:
                value = _json_line(line.decode("utf-8"))
            except UnicodeDecodeError as error:
                raise RecordError(f"{path}:{number}: not UTF-8 ({error.reason})") from None
            except json.JSONDecodeError as error:
                raise RecordError(f"{path}:{number}: not valid JSON ({error.msg})") from None
            if not isinstance(value, dict):
                raise RecordError(f"{path}:{number}: expected a JSON object, got {type(value).__name__}")
            yield number, value, line


def load_records(path: str | Path, cls: type) -> list[Any]:
    """Read a JSONL file into dataclass records, naming file, line and field on any mismatch.

    A field with a default may be absent (records written before the field was added read with it). Two records with
    the same key (`cls.KEY`: model, prompt, level, instance and sample) are refused, naming both lines: an item is never
    counted twice."""
    return [record for record, _ in iter_records(path, cls)]


def iter_records(path: str | Path, cls: type) -> Iterator[tuple[Any, bytes]]:
    """load_records's records one by one, each with its line's bytes (for `line_digest`), checked alike."""
    fields = {field.name for field in dataclasses.fields(cls)}
    for value, line in _checked_values(path, cls):
        yield cls(**{name: value[name] for name in fields if name in value}), line


def iter_fields(path: str | Path, cls: type, names: tuple[str, ...]) -> Iterator[tuple[tuple, bytes]]:
    """iter_records's checks without making the records: each record's values of the fields `names` (a field's default
    where its line has none, as the record would hold), with its line's bytes. What reads a few fields of every record
    of a large file (the start-up check, verify.py) takes this: making a record of 23 fields cost more than parsing it."""
    for values, line, _ in _fields(path, cls, names):
        yield values, line


def _fields(path: str | Path, cls: type, names: tuple[str, ...]) -> Iterator[tuple[tuple, bytes, dict[str, Any]]]:
    """iter_fields's values and line, with the line's value (a dict) as read."""
    # (a field without a default is in every line _checked_values passes: its default here is never taken)
    defaults = {
        field.name: field.default_factory() if field.default_factory is not dataclasses.MISSING else field.default
        for field in dataclasses.fields(cls)
    }
    unknown = [name for name in names if name not in defaults]
    if unknown:
        raise ValueError(f"{cls.__name__} has no field(s) {unknown}")
    wanted = [defaults[name] for name in names]
    for value, line in _checked_values(path, cls):
        yield tuple(map(value.get, names, wanted)), line, value  # (map over dict.get: no Python-level loop per field)


def read_fields(path: str | Path, cls: type, names: tuple[str, ...], digests: bool = False) -> list:
    """iter_fields's values of every record of `path`, each paired with its line's `line_digest` where `digests`: what
    a worker process of the start-up check returns (verify._Reads), a few fields of each record, not its line. A record
    whose `record_digest` does not match its line (changed after its stage wrote it) raises RecordError naming the file
    and the record; a record without one (written before it was recorded) is read as before."""
    found = []
    for number, (values, line, value) in enumerate(_fields(path, cls, names), start=1):
        digest, own = line_digests(line, value) if digests else (None, record_digest_matches(line, value))
        if own is False:
            raise RecordError(f"{path}: record {number} was changed after it was written: its fields do not match its {RECORD_DIGEST}")
        found.append((values, digest) if digests else values)
    return found


def _checked_values(path: str | Path, cls: type) -> Iterator[tuple[dict[str, Any], bytes]]:
    """Each line's value (a JSON object) that holds every field of `cls` without a default, no two with the same key
    (`cls.KEY`), with the line's bytes; RecordError names the file, the record and the field or both records."""
    fields = dataclasses.fields(cls)
    required = {field.name for field in fields if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING}
    defaults = {field.name: None if field.default is dataclasses.MISSING else field.default for field in fields}
    key_fields = getattr(cls, "KEY", ())
    key_defaults = [defaults[name] for name in key_fields]
    seen: dict[tuple, int] = {}
    for number, (_, value, line) in enumerate(iter_jsonl_lines(path), start=1):
        if not required <= value.keys():
            raise RecordError(f"{path}: record {number} lacks field(s) {sorted(required - value.keys())} of a {cls.__name__}")
        if key_fields:
            # The record's key as the record would hold it: a field its line lacks has its default.
            key = tuple(map(value.get, key_fields, key_defaults))
            if key in seen:
                named = ", ".join(f"{name} {value!r}" for name, value in zip(key_fields, key) if value is not None)
                raise RecordError(
                    f"{path}: records {seen[key]} and {number} are the same item ({named}); a record file holds each "
                    f"item once. Delete the file and rerun to rebuild it"
                )
            seen[key] = number
        yield value, line


def write_jsonl_atomic(path: str | Path, records: Iterable[Any], digest: bool = False) -> None:
    """Write `records` to `path` whole or not at all (a temporary sibling renamed into place); with `digest`, each line
    ends with its record_digest (to_json_line)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(to_json_line(record, digest))
    os.replace(tmp, path)


class ProgressLog:
    """Append-only progress for one output file; see the module docstring.

    Records are keyed by `key_field`, or by `key` (a function of the record) where given: inference and judging key
    a sampled model's records by instance and sample (`item_key`). A record is reused on a rerun only when its
    `fingerprint` matches the current job's and `is_done(record)` holds (failed items are tried again). Every line it
    writes (responses, judgments) ends with its `record_digest` (digested_line): the stage that makes a record digests it.
    """

    def __init__(
        self, output: str | Path, fingerprint: str, key_field: str = "instance_id", key: Callable[[dict[str, Any]], str] | None = None
    ):
        self.output = Path(output)
        self.partial = self.output.with_name(self.output.name + ".partial")
        self.fingerprint = fingerprint
        self.key_field = key_field
        self.key = key or (lambda record: record[key_field])
        self._handle = None
        self._lock = threading.Lock()  # appends may come from worker threads

    def resume(self, is_done=lambda record: True) -> dict[str, dict[str, Any]]:
        """Finished records of an earlier, interrupted run with the same fingerprint.

        The partial file is rewritten with exactly those records, which drops a line cut short
        by a kill and any record made with other settings.
        """
        kept: dict[str, dict[str, Any]] = {}
        if self.partial.exists():
            with self.partial.open(encoding="utf-8") as handle:
                for line in handle:
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:
                        continue  # the last line of a killed run may be cut short
                    if (
                        isinstance(record, dict)
                        and record_digest_matches(line.encode(), record) is not False  # changed since: asked again
                        and record.get("fingerprint") == self.fingerprint
                        and self.key_field in record
                        and is_done(record)
                    ):
                        kept[self.key(record)] = record  # key_field is in every record `key` reads (instance_id)
        self.partial.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.partial.with_name(f".{self.partial.name}.tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            for record in kept.values():
                handle.write(to_json_line(record, digest=True))
        os.replace(tmp, self.partial)
        return kept

    def append(self, record: Any) -> None:
        line = to_json_line(record, digest=True)
        with self._lock:
            if self._handle is None:
                self._handle = self.partial.open("a", encoding="utf-8")
            self._handle.write(line)
            self._handle.flush()  # on disk (page cache) before the next item starts: survives kill -9

    def finish(self, records: Iterable[Any]) -> None:
        """Write the complete output atomically, then drop the progress file."""
        self.close()
        write_jsonl_atomic(self.output, records, digest=True)
        self.partial.unlink(missing_ok=True)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
