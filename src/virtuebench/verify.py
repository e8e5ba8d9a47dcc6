"""The provenance chain, checked: are the results made from what is upstream of them now?

Each response record keeps its `fingerprint` (the model's answer settings, prompt and level) and `item_hash` (its
question and its frames manifest's record of the level's frames); each judgment keeps `response_hash` (the response
record it judged) with the instance's ground truth and question. `check` compares these with the frames manifests,
the responses and the instances table there now, and finds a record file that holds an item twice, misses one or
cannot be read. The report jobs refuse to publish over any problem (`--chain-root`); the Snakefile's start-up sweep
(`guard_run` in rules/common.smk) removes the stale records and has Snakemake rebuild them and every report output made
from them, which stay in place until their jobs replace them. A judgments file that is missing is stale only where the
report shows it (its rows are in scores.csv: `Shown`): a model added to the configuration, never run, is not.

CLI: python -m virtuebench.verify [--results results] [JUDGMENTS.jsonl ...]   lists what is stale, exit 1 if anything
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import multiprocessing
import os
import shutil
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from virtuebench.frames import MANIFEST, FramesError, Manifest, frames_hash
from virtuebench.instances import Instance, items_for_level, read_instances
from virtuebench.provenance import check_published
from virtuebench.records import (
    LINE_DIGEST_LENGTH,
    Judgment,
    RecordError,
    Response,
    item_key,
    iter_records,
    judged_hash_matches,
    load_records,
    read_fields,
    stable_hash,
)
from virtuebench.support import runlock
from virtuebench.support.faults import naming
from virtuebench.support.fingerprint import stat_stamp


class Plan(Protocol):
    """What the check needs of a configuration's plan (virtuebench.plan.Plan, a layer above this module)."""

    def res(self, path: str) -> str: ...

    def checked_judgments(self, table: Iterable[Instance]) -> list[str]: ...


REBUILD = "rerun the workflow: it rebuilds the stale files (`python -m virtuebench.verify` lists them)"

#: The report output whose rows say which judgments the report was made from (VirtueBench's and CVRR-ES's scores).
SCORES = "scores.csv"


@dataclass(frozen=True)
class Problem:
    path: str  # the stale or broken file or folder
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass
class Chain:
    """What `check` found: the problems, and the files and folders they make stale (upstream first)."""

    problems: list[Problem] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)

    def add(self, path: str | Path, reason: str, stale: Iterable[str | Path]) -> None:
        """A problem of `path`, which makes `stale` stale (the path itself among them where it is)."""
        self.problems.append(Problem(str(path), reason))
        for item in stale:
            if str(item) not in self.stale:
                self.stale.append(str(item))


def layout(judgment_path: str | Path) -> tuple[Path, Path] | None:
    """(results folder, the responses file judged) of results/judgments/<judge>/<model>/<prompt>/<level>.jsonl."""
    path = Path(judgment_path)
    parts = path.parts
    if len(parts) < 5 or parts[-5] != "judgments" or not path.stem.isdigit():
        return None
    root = path.parents[4]
    return root, root / "responses" / parts[-3] / parts[-2] / path.name


@dataclass(frozen=True)
class Shown:
    """What the report shows, read from its scores.csv: the (judge, model, prompt, level) of each row, judge, prompt or
    level None where the file has no such column (CVRR-ES's has no prompt or level). The evidence that a report output
    was made from a judgments file: every report output is made in the same run as the scores, from the same
    judgments. A judge compared with the report's (compare_judges) is shown by its agreement files instead."""

    rows: frozenset[tuple[str | None, str, str | None, str | None]] = frozenset()
    compared: frozenset[str] = frozenset()  # the judge_agreement/<a>__vs__<b>.json files there

    @classmethod
    def read(cls, path: str | Path) -> Shown:
        """The rows of `path`; none where it is missing or unreadable (then nothing counts as shown)."""
        compared = frozenset(agreement.name for agreement in Path(path).parent.glob("judge_agreement/*__vs__*.json"))
        try:
            with open(path, newline="", encoding="utf-8") as handle:
                rows = list(csv.DictReader(handle))
        except (OSError, csv.Error, UnicodeDecodeError):
            return cls(compared=compared)
        shown = frozenset((row.get("judge"), row.get("model") or "", row.get("prompt"), row.get("level")) for row in rows)
        return cls(shown, compared)

    def holds(self, judge: str, model: str, prompt: str, level: int | str) -> bool:
        if any(name.removesuffix(".json").split("__vs__").count(judge) for name in self.compared):
            return True
        return any(j in (None, judge) and m == model and p in (None, prompt) and lv in (None, str(level)) for j, m, p, lv in self.rows)

    def models(self) -> set[str]:
        return {model for _, model, _, _ in self.rows}


def judged_item(judgment_path: str | Path) -> tuple[str, str, str, int] | None:
    """(judge, model, prompt, level) of results/judgments/<judge>/<model>/<prompt>/<level>.jsonl."""
    path = Path(judgment_path)
    if layout(path) is None:
        return None
    return path.parts[-4], path.parts[-3], path.parts[-2], int(path.stem)


#: The remembered checks' file, in a results folder's state folder (support/runlock.state_dir).
CHAIN_STATE = "chain.json"


def remembered_path(results_dir: str | Path) -> Path:
    """Where the checks that passed on the results folder `results_dir` are remembered (relative to the working
    folder, as Snakemake's own records are)."""
    return Path(runlock.state_dir(str(results_dir))) / CHAIN_STATE


class Remembered:
    """Checks that passed, each under a digest of the stamp of every file it read, kept in a JSON file: the workflow's
    start-up sweep re-reads only what changed since (a paper-scale results folder holds about 255,000 judgments), and a
    report job reads what the sweep left. A check whose files changed in any way (size, modification or change time,
    inode: stat_stamp) is made again; only passing checks are kept. The file holds one digest per check (a stamp names every video of a level:
    kept whole, the file was 20 MB at paper scale), and is written only when what it holds changed."""

    FORMAT = "virtuebench.chain/2"

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else None
        self.passed: dict[str, str] = {}
        self.used: dict[str, str] = {}
        if self.path is not None:
            try:
                data = json.loads(self.path.read_text())
                if data.get("format") == self.FORMAT:  # an older file's checks are made again, once
                    self.passed = {str(name): str(digest) for name, digest in data["passed"].items()}
            except (OSError, ValueError, TypeError, AttributeError, KeyError):
                self.passed = {}

    @staticmethod
    def digest(stamp: str) -> str:
        return hashlib.sha256(stamp.encode()).hexdigest()[:32]

    def holds(self, name: str, stamp: str) -> bool:
        digest = self.digest(stamp)
        if self.passed.get(name) == digest:
            self.used[name] = digest
            return True
        return False

    def keep(self, name: str, stamp: str) -> None:
        self.used[name] = self.digest(stamp)

    def save(self) -> None:
        """Keep the checks this run used or made (no others: their files are gone or changed); the file is left as it is
        where it already holds exactly those."""
        if self.path is None or (self.used == self.passed and self.path.exists()):
            return
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:  # a full or read-only disk: an OSError naming this file (one line from the CLI or the start-up sweep)
            with naming(self.path):
                self.path.parent.mkdir(parents=True, exist_ok=True)
                tmp.write_text(json.dumps({"format": self.FORMAT, "passed": self.used}, sort_keys=True))
                os.replace(tmp, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


class _Frames:
    """The frames folders of the instances' videos: each checked (its manifest readable, every file it lists there),
    a broken one added to the chain; manifests read only where a response's frames must be checked, and then once: each
    level's frames_hash is kept, not the manifest (a paper-scale folder's manifests list 880,000 frames). A video's
    folder holds one manifest per level folder (the workflow's layout), or one of its own (frames.py's per-video
    layout, and results written before the per-level one): Manifest.read reads either."""

    def __init__(self, frames_dir: Path, video_ids: Iterable[str]) -> None:
        """Each video folder's stamp (what the checks made from its frames are remembered on); `check` checks them."""
        self.frames_dir, self.good = frames_dir, set()
        self.stamps: dict[str, str] = {}
        self.levels: dict[str, list[str]] = {}  # the level folders of each video's folder, as listed
        self.hashes: dict[tuple[str, int], str | None] = {}  # frames_hash by (video, level)
        for video_id in sorted(set(video_ids)):
            folder = frames_dir / video_id
            if not folder.is_dir():
                continue  # never extracted, or removed to save space: nothing to hold against the responses
            levels = self.levels[video_id] = sorted(child for child in os.listdir(folder) if child.isdigit())
            stamp = stat_stamp(folder / MANIFEST, *(folder / level for level in levels), *(folder / level / MANIFEST for level in levels))
            # kept as a digest: each judgments file's stamp names every video of its level (stat_stamp's four numbers
            # per path made the warm check's stamps a third longer to build and hash)
            self.stamps[video_id] = Remembered.digest(stamp)

    def check(self, chain: Chain, remembered: Remembered) -> None:
        """Check every video's folder (a broken one added to the chain), but those whose check passed on the same stamp."""
        for video_id, stamp in self.stamps.items():
            folder = self.frames_dir / video_id
            if remembered.holds(f"frames:{folder}", stamp) or self._complete(video_id, folder, self.levels[video_id], chain):
                remembered.keep(f"frames:{folder}", stamp)
                self.good.add(video_id)

    def _complete(self, video_id: str, folder: Path, levels: list[str], chain: Chain) -> bool:
        """Whether the video's folder (its level folders `levels`, as listed) is complete; each level folder's manifest
        is read once, for this and for its level's frames_hash (level_hash), which is kept."""
        # A level folder with its own manifest is its own job's output: where it alone is broken, it alone is stale.
        parts: dict[int, Manifest] = {}
        for level in levels:
            if not (folder / level / MANIFEST).is_file():
                continue
            try:
                parts[int(level)] = Manifest.read(folder, int(level))
            except FramesError as error:
                chain.add(folder / level, f"an incomplete frames folder ({error})", [folder / level])
                return False
        try:
            manifest = Manifest.read(folder, parts=[parts[level] for level in sorted(parts)])
        except FramesError as error:
            chain.add(folder, f"an incomplete frames folder ({error})", [folder])
            return False
        for key, frames in manifest.levels.items():
            level_folder = folder / key
            present = set(os.listdir(level_folder)) if level_folder.is_dir() else set()
            absent = sum(1 for name in frames.files if name.split("/", 1)[-1] not in present)
            if absent:
                broken = level_folder if (level_folder / MANIFEST).is_file() else folder
                chain.add(broken, f"its manifest lists {absent} frame file(s) that are not there", [broken])
                return False
        for level, part in parts.items():  # as level_hash would read them: the level folder's own manifest
            self.hashes[video_id, level] = frames_hash(part, level)
        return True

    def level_hash(self, video_id: str, level: int) -> str | None:
        """frames.frames_hash of the video's level as the inference job of that level read it (its level folder's
        own manifest, where there is one: another level's recorded error is not this level's), where its folder is
        there and complete; None where it is not (a level folder removed to save space: nothing to hold against the
        responses). A level folder's, read by the check of the video's folder, is kept from it; the others (a folder
        passed before, a per-video manifest) are read here, once."""
        if video_id not in self.good:
            return None
        if (video_id, level) not in self.hashes:
            folder = self.frames_dir / video_id
            if not (folder / str(level) / MANIFEST).is_file() and not (folder / MANIFEST).is_file():
                self.hashes[video_id, level] = None
            else:
                self.hashes[video_id, level] = frames_hash(Manifest.read(folder, level), level)
        return self.hashes[video_id, level]


def _ids_problem(path: Path, found: set[str], expected: set[str], what: str) -> str | None:
    missing, extra = sorted(expected - found), sorted(found - expected)
    if not missing and not extra:
        return None
    parts = [
        f"{len(missing)} {what} missing (e.g. {missing[0]!r})" if missing else "",
        f"{len(extra)} not expected (e.g. {extra[0]!r})" if extra else "",
    ]
    return "holds " + " and ".join(part for part in parts if part) + ": not one record per item"


class _Responses:
    """A checked responses file's records as the judgments' check needs them: by item key (records.item_key), each
    record's `response` and its line's digest (records.line_digest), not the records (up to 1 GB at paper scale). The
    records themselves are read again, once, only for a judgment made before line_digest (its `response_hash` is a
    digest of the record's fields)."""

    def __init__(self, path: Path, by_key: dict[str, tuple[str | None, str]]) -> None:
        self.path, self.by_key = path, by_key
        self._records: dict[str, Response] | None = None

    def response(self, key: str) -> str | None:
        return self.by_key[key][0]

    def judged(self, key: str, response_hash: str) -> bool:
        """Whether a judgment's `response_hash` names the record of `key` (records.judged_hash_matches)."""
        digest = self.by_key[key][1]
        if len(response_hash) == LINE_DIGEST_LENGTH:
            return judged_hash_matches(response_hash, None, digest)
        if self._records is None:
            self._records = {item_key(vars(record)): record for record, _ in iter_records(self.path, Response)}
        record = self._records.get(key)
        return record is not None and judged_hash_matches(response_hash, record, digest)


#: What the check reads of each kind of record file: the fields, and whether each line's digest.
READS: dict[type, tuple[tuple[str, ...], bool]] = {}

#: The fewest record files to read that pay for worker processes (each takes about 0.2 s to start), and how many files
#: each may read ahead of the check (each read file's fields wait in memory: a few MB).
MIN_FILES_FOR_WORKERS = 8
READ_AHEAD = 2


class _Reads:
    """The record files the check reads (records.read_fields), in the order it reads them: read ahead in worker
    processes where there are enough of them (parsing 1.3 GB of records was most of a paper-scale cold check), else
    here as they are asked for. `processes`: how many workers (1: none). A file asked for out of the planned order is
    read here; the planned reads it passes over (a judgments file whose responses file is stale) are dropped."""

    def __init__(self, planned: list[tuple[Path, type]], processes: int) -> None:
        self.planned = list(reversed(planned))  # popped from the end: in the planned order
        self.waiting = set(planned)  # planned, not submitted yet
        self.ahead: dict[tuple[Path, type], Future] = {}  # submitted, in the planned order
        self.processes = processes
        self.pool: ProcessPoolExecutor | None = None
        # Forked, and only from a process that runs no other thread: a fork copies no thread, so a lock another one
        # held would never be released in the worker. Not spawned: a spawned worker imports the main module again,
        # which runs a script without a `__main__` guard (a user's) a second time.
        if processes > 1 and len(planned) >= MIN_FILES_FOR_WORKERS and _may_fork():
            self.pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork"))
            self._fill()

    def _fill(self) -> None:
        while self.planned and len(self.ahead) < READ_AHEAD * self.processes:
            key = self.planned.pop()
            self.waiting.discard(key)
            self.ahead[key] = self.pool.submit(read_fields, *key, *READS[key[1]])

    def get(self, path: Path, kind: type) -> list:
        """records.read_fields of `path` (RecordError where it cannot be read as `kind`'s records)."""
        key = (path, kind)
        if self.pool is not None and key in self.waiting:  # what was read ahead, and planned before it, is passed over
            for future in self.ahead.values():
                future.cancel()
            self.ahead.clear()
            while self.planned[-1] != key:
                self.waiting.discard(self.planned.pop())
            self._fill()
        if key not in self.ahead:  # not planned (or no workers): read here
            return read_fields(path, kind, *READS[kind])
        while next(iter(self.ahead)) != key:  # read ahead of it, and passed over
            self.ahead.pop(next(iter(self.ahead))).cancel()
        future = self.ahead.pop(key)
        self._fill()
        try:
            return future.result()
        except BrokenProcessPool:  # a worker was killed (out of memory, a signal): the rest is read here
            self.close()
            self.pool, self.ahead = None, {}
            return read_fields(path, kind, *READS[kind])

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _may_fork() -> bool:
    """Whether worker processes may be forked from here: on POSIX, and with no thread but this one running."""
    return os.name == "posix" and threading.active_count() == 1


def _key(instance_id: str, sample: int | None) -> str:
    """records.item_key of a record's instance id and sample."""
    return instance_id if sample is None else f"{instance_id}#{sample}"


#: The fields of a response record the check reads (records.iter_fields), and of a judgment.
RESPONSE_FIELDS = ("instance_id", "video_id", "sample", "item_hash", "response")
JUDGMENT_FIELDS = ("instance_id", "sample", "judge", "response_hash", "response", "answer", "question")
READS.update({Response: (RESPONSE_FIELDS, True), Judgment: (JUDGMENT_FIELDS, False)})


def _check_responses(
    path: Path,
    level: int,
    items: dict[str, Instance],
    frames: _Frames,
    chain: Chain,
    downstream: list[Path],
    item_hashes: dict[tuple[str, str, int], str | None],
    reads: _Reads,
) -> _Responses | None:
    """The response records of `path` (_Responses), or None where the file is stale (added to the chain with
    `downstream`, what was made from it). A sampled model's file holds every instance once per sample, the same
    samples for each. `item_hashes`: the item_hash each (instance, video, level) must have, shared by every file checked.
    Every line is read and checked as records.load_records checks it (JSON, the fields, no item twice), but only the
    fields the check needs are kept (making each record cost more than parsing it)."""
    downstream = [path, *downstream]
    try:
        records = reads.get(path, Response)
    except RecordError as error:
        chain.add(path, str(error).removeprefix(f"{path}: "), downstream)
        return None
    by_key = {_key(instance_id, sample): (response, digest) for (instance_id, _, sample, _, response), digest in records}
    wrong_ids = _ids_problem(path, {fields[0] for fields, _ in records}, set(items), "instance(s) of the level")
    if wrong_ids:
        chain.add(path, wrong_ids, downstream)
        return None
    samples: dict[str, set[int | None]] = {}
    for (instance_id, _, sample, _, _), _ in records:
        samples.setdefault(instance_id, set()).add(sample)
    if len({frozenset(found) for found in samples.values()}) > 1:
        first, other = next(iter(samples.items())), next((i, f) for i, f in samples.items() if f != next(iter(samples.values())))
        chain.add(
            path,
            f"holds samples {sorted(first[1], key=str)} of {first[0]!r} but {sorted(other[1], key=str)} of {other[0]!r}: not one "
            "record per item and sample",
            downstream,
        )
        return None
    other = []
    for (instance_id, video_id, _, item_hash, _), _ in records:
        if item_hash is None:
            continue
        key = (instance_id, video_id, level)
        if key not in item_hashes:  # the same for every model and prompt: computed once per item and level
            level_frames = frames.level_hash(video_id, level)
            item_hashes[key] = None if level_frames is None else stable_hash([items[instance_id].question, level_frames])
        if item_hashes[key] is not None and item_hash != item_hashes[key]:
            other.append(instance_id)
    if other:
        chain.add(
            path,
            f"{len(other)} item(s) (e.g. {other[0]!r}) were asked with other frames or another question than those there now",
            downstream,
        )
        return None
    return _Responses(path, by_key)


#: The name a judgments file's passed check is remembered under: a new check gets a new name, so that files passed
#: before are read again (v2: the records' judge is their folder's; a rules or mcq judge under another name was
#: recorded as `rules` or `mcq` before; v3: each record's `record_digest` matches its line).
JUDGMENTS_CHECK = "judgments-v3"


def _check_judgments(
    path: Path, level: int, items: dict[str, Instance], responses: _Responses, chain: Chain, downstream: list[Path], reads: _Reads
):
    downstream = [path, *downstream]
    try:
        judgments = reads.get(path, Judgment)
    except RecordError as error:
        chain.add(path, str(error).removeprefix(f"{path}: "), downstream)
        return
    keys = [_key(instance_id, sample) for instance_id, sample, *_ in judgments]
    wrong_ids = _ids_problem(path, set(keys), set(responses.by_key), "response(s)")
    if wrong_ids:
        chain.add(path, wrong_ids, downstream)
        return
    judge = path.parts[-4]  # results/judgments/<judge>/...: the tables select the records by that name
    misnamed = next((fields for fields in judgments if fields[2] != judge), None)
    if misnamed is not None:
        reason = f"item {misnamed[0]!r} was recorded under judge {misnamed[2]!r}, not {judge!r} (its folder)"
        chain.add(path, reason, downstream)
        return
    for key, (instance_id, _, _, response_hash, response, answer, question) in zip(keys, judgments):
        inst = items[instance_id]
        if response_hash is not None and not responses.judged(key, response_hash):
            reason = "judged another response record than the one there now"
        elif response_hash is None and response != responses.response(key):
            reason = "judged another response than the one there now"
        elif answer != inst.answers[level] or (question is not None and question != inst.question):
            reason = "judged against another ground truth or question than the instances table holds now"
        else:
            continue
        chain.add(path, f"item {instance_id!r} {reason}", downstream)
        return


def check(
    judgment_paths: Sequence[str | Path],
    instances: list[Instance] | None = None,
    report_outputs: Sequence[str | Path] = (),
    remembered: Remembered | None = None,
    processes: int | None = None,
) -> Chain:
    """Check the chain behind each judgments file (results/judgments/<judge>/<model>/<prompt>/<level>.jsonl) and
    behind the report outputs made from them. Files outside that layout are left out; a missing judgments file is a
    problem only where the report outputs there were made from it (their scores.csv shows its model, prompt and level:
    a deleted file, which Snakemake would not rebuild while they are newer, snakemake/snakemake#1978); one the report
    never showed (a model just added to the configuration) is not. `remembered`: checks that passed before on the
    same files are not made again. `processes`: how many worker processes read the record files where there are many
    (_Reads; default: two, or one on a single core)."""
    remembered = remembered or Remembered()
    chain = Chain()
    outputs = [Path(path) for path in report_outputs if Path(path).exists()]
    placed = [(Path(path), layout(path)) for path in dict.fromkeys(map(str, judgment_paths))]
    placed = [(path, where) for path, where in placed if where is not None]
    if not placed:
        return chain
    root = placed[0][1][0]
    if instances is None:
        table = root / "instances.parquet"
        if not table.exists():
            for path, _ in placed:
                if path.exists():
                    chain.add(path, f"made from {table}, which is missing", [path, *outputs])
            return chain
        instances = read_instances(table)
    by_level: dict[int, dict[str, Instance]] = {}
    frames = _Frames(root / "frames", (inst.video_id for inst in instances))
    table_stamp = stat_stamp(root / "instances.parquet")

    def level_items(level: int) -> dict[str, Instance]:
        return by_level.setdefault(level, {inst.instance_id: inst for inst in items_for_level(instances, level)})

    def stamp_of(path: Path, responses_path: Path) -> str:
        videos = sorted({inst.video_id for inst in level_items(int(path.stem)).values()})
        return ",".join([stat_stamp(path, responses_path), table_stamp, *(frames.stamps.get(video, "-") for video in videos)])

    # The checks to make: those that did not pass before on the same files. Their record files are read in worker
    # processes meanwhile (_Reads), in the order check_one reads them, while the frames folders are checked here.
    stamps = {path: stamp_of(path, responses_path) for path, (_, responses_path) in placed}
    todo = [(path, where) for path, where in placed if not (path.exists() and remembered.holds(f"{JUDGMENTS_CHECK}:{path}", stamps[path]))]
    planned: list[tuple[Path, type]] = []
    for path, (_, responses_path) in todo:
        if (responses_path, Response) not in planned and responses_path.exists():
            planned.append((responses_path, Response))
        if path.exists():
            planned.append((path, Judgment))
    reads = _Reads(planned, processes if processes is not None else min(2, os.cpu_count() or 1))
    # A responses file is read once, for the first judgments file made from it, and let go after the last: one file's
    # records are held at a time (all of them, 1 GB at paper scale, took 2.3 GB of memory).
    responses_seen: dict[Path, _Responses | None] = {}
    uses: dict[Path, int] = {}
    for _, (_, responses_path) in todo:
        uses[responses_path] = uses.get(responses_path, 0) + 1
    item_hashes: dict[tuple[str, str, int], str | None] = {}
    shown = lru_cache(maxsize=1)(Shown.read)  # read once, and only where a judgments file is missing

    def check_one(path: Path, responses_path: Path) -> None:
        level = int(path.stem)
        items = level_items(level)
        problems = len(chain.problems)
        if responses_path not in responses_seen and responses_path.exists():
            # Everything made from a stale responses file: its judgments by every judge, and the report.
            judged = sorted(
                root.glob(f"judgments/*/{responses_path.parent.parent.name}/{responses_path.parent.name}/{responses_path.name}")
            )
            responses_seen[responses_path] = _check_responses(
                responses_path, level, items, frames, chain, [*judged, *outputs], item_hashes, reads
            )
        if not path.exists():
            scores = root / SCORES
            judge, model, prompt, _ = judged_item(path)
            if outputs and shown(scores).holds(judge, model, prompt, level):
                chain.add(path, f"is missing, but {scores} shows it (and {len(outputs)} report output(s) made from it are there)", outputs)
            return
        if not responses_path.exists():
            chain.add(path, f"made from {responses_path}, which is missing", [path, *outputs])
            return
        responses = responses_seen[responses_path]
        if responses is not None:
            _check_judgments(path, level, items, responses, chain, outputs, reads)
        if len(chain.problems) == problems:
            remembered.keep(f"{JUDGMENTS_CHECK}:{path}", stamps[path])

    try:
        frames.check(chain, remembered)
        for path, (_, responses_path) in todo:
            check_one(path, responses_path)
            uses[responses_path] -= 1
            if not uses[responses_path] and responses_seen.get(responses_path) is not None:
                responses_seen[responses_path] = _Responses(responses_path, {})  # checked: no judgments file left to check against it
    finally:
        reads.close()
    # The published numbers checked back to these judgments (virtuebench.provenance): an edited scores.csv or
    # comparisons.csv, or one made from other judgments, is stale like any other broken link.
    for path, reason in check_published(outputs, chain.stale, remembered):
        chain.add(path, reason, [path])
    return chain


def check_configuration(
    plan: Plan, report_outputs: Sequence[str | Path], remembered: Remembered | None = None, instances: list[Instance] | None = None
) -> Chain:
    """The check of a configuration's results, one definition for the workflow's start-up sweep (guard_run in
    rules/common.smk) and `python -m virtuebench.verify`, so that both find the same: every judgments file the plan
    reports (Plan.checked_judgments; a missing one is counted where the report shows it), against the instances table
    there (`instances`: as read already). Nothing is checked before the instances table is made."""
    table = Path(plan.res("instances.parquet"))
    if instances is None:
        if not table.exists():
            return Chain()
        instances = read_instances(table)
    return check(plan.checked_judgments(instances), instances, report_outputs, remembered)


def remove(paths: Iterable[str | Path]) -> None:
    """Remove stale files and folders (a removed file's Snakemake job then runs again, and everything after it)."""
    for path in map(Path, paths):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists() or path.is_symlink():
            path.unlink()


#: The report outputs made from the judgments, relative to the results folder (the Snakefile passes its rules' own).
REPORT_FILES = (
    "scores.csv",
    "invalid_items.csv",
    "comparisons.csv",
    "table1.tex",
    "table2.tex",
    "table2_trust.tex",
    "fig6.png",
    "fig6.csv",
    "paper_vs_run.csv",
    "paper_vs_run.tex",
)


def read_judgments(paths: Sequence[str | Path], chain_root: str | Path | None = None) -> list[Judgment]:
    """A report job's input: the judgments of `paths` (no item twice in a file), after checking the chain behind those
    under `chain_root` (the results folder). Raises RecordError naming every stale input and what to run."""
    if chain_root is not None:
        placed = [path for path in paths if (where := layout(path)) is not None and os.path.samefile(where[0], chain_root)]
        # The checks the workflow's start-up sweep made on the same files, as it left them (read, never written here:
        # a report job checks some of the files, and several run at once).
        chain = check(placed, remembered=Remembered(remembered_path(chain_root)))
        if chain.problems:
            lines = "\n  ".join(map(str, chain.problems))
            raise RecordError(f"refusing to publish from stale or missing upstream files:\n  {lines}\nTo rebuild them, {REBUILD}")
    return [judgment for path in paths for judgment in load_records(path, Judgment)]


def add_chain_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--chain-root",
        help="the results folder: check that the judgments under it were made from its responses, frames and instances "
        "table as they are now, and refuse to publish otherwise",
    )


if __name__ == "__main__":
    # The command checks a configuration's results, so it builds the configuration's plan: a layer above this module's
    # (pyproject.toml's import contract). Its home is virtuebench.check; `python -m virtuebench.verify` is its name.
    import runpy

    runpy.run_module("virtuebench.check", run_name="__main__", alter_sys=True)
