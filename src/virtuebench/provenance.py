"""Published numbers checked back to their judgments: scores.csv and comparisons.csv carry, on every row, the digest of
the judgments files the row was computed from (`judgments_digest`) and a digest of the row itself (`row_digest`), so a
number edited by hand, a row removed or moved, or a judgments file changed since is found before anything is drawn
from the file. The table and figure writers refuse such a file (`require_intact`); the workflow's start-up check
(`virtuebench.verify`) calls it stale, so the run rebuilds it and what was drawn from it.

A row's judgments are found from its own fields, under the results folder the CSV is in (its parent):
`judgments/<judge>/<model>/<prompt>/<level>.jsonl`, both arms' files for a comparison; a row pooled over the levels
(`level` all) rests on the files of the levels its group has rows of in the same CSV. A digest is the SHA-256 of the
records' lines (but for their `response_hash`, which changes with the response's latency), in any order, so the
same verdicts written again keep it.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from virtuebench.records import Judgment, RecordError, Response, iter_records, judged_hash_matches, line_digest, load_records
from virtuebench.support.fingerprint import stat_stamp
from virtuebench.support.tabular import write_csv

#: The two columns stamped on every row (after the file's own columns).
JUDGMENTS_DIGEST, ROW_DIGEST = "judgments_digest", "row_digest"
DIGEST_LENGTH = 32  # hex digits kept of each SHA-256
ALL_LEVELS = "all"  # metrics.ALL_LEVELS (not imported: metrics imports this module)

#: What rebuilds each stamped file (named in a refusal).
REBUILT_BY = {"scores": "compute_scores", "comparisons": "compare_arms"}


class NotIntact(ValueError):
    """A stamped file that does not hold what was written, or was made from other judgments than those there now."""


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, separators=(",", ":")).encode()).hexdigest()[:DIGEST_LENGTH]


#: Fields of a judgment left out of its file's digest: they differ from run to run where the numbers do not
#: (`response_hash` is a digest of the response's line, which holds its latency; `record_digest` covers it). The verify
#: chain checks them.
VOLATILE_FIELDS = ("response_hash", "record_digest")
# As records.to_json_line writes them: never first on a line, a hex digest or null (a literal start: 100 times faster)
_VOLATILE = re.compile(rb', "(?:' + b"|".join(re.escape(name.encode()) for name in VOLATILE_FIELDS) + rb')": (?:"[0-9a-f]*"|null)')


@lru_cache(maxsize=4096)
def _file_digest_at(path: str, size: int, mtime_ns: int, ctime_ns: int, inode: int) -> str:
    lines = []
    with open(path, "rb") as handle:
        for line in handle:
            line = line.rstrip(b"\r\n")
            if line.strip():
                lines.append(hashlib.sha256(_VOLATILE.sub(b"", line)).digest())
    sha = hashlib.sha256()
    for digest in sorted(lines):  # the records, not their order (a resumed judge job appends in another order)
        sha.update(digest)
    return sha.hexdigest()[:DIGEST_LENGTH]


def file_digest(path: str | Path) -> str | None:
    """A judgments file's digest (32 hex digits): the SHA-256 of its records' lines, each as written but for the
    VOLATILE_FIELDS, in sorted order; None where it is missing. Read once per size, modification and change time and
    inode (what an edit cannot keep)."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return _file_digest_at(str(path), stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)


#: The columns that make a CSV one of the stamped kinds (CVRR-ES's scores.csv, with no prompt or level, is not).
KINDS = {
    "comparisons": ("kind", "judge", "level", "subset", "model_a", "prompt_a", "model_b", "prompt_b"),
    "scores": ("judge", "model", "prompt", "level", "subset"),
}


def kind_of(columns: Sequence[str]) -> str | None:
    """`comparisons` for comparisons.csv's columns, `scores` for scores.csv's, None for any other CSV."""
    return next((kind for kind, needed in KINDS.items() if set(needed) <= set(columns)), None)


def _level_key(level: str) -> tuple[bool, int, str]:
    return (not level.isdigit(), int(level) if level.isdigit() else 0, level)


def _arms(row: dict[str, str], kind: str) -> list[tuple[str, str]]:
    if kind == "comparisons":
        return [(row["model_a"], row["prompt_a"]), (row["model_b"], row["prompt_b"])]
    return [(row["model"], row["prompt"])]


def _group(row: dict[str, str], kind: str) -> tuple[str, ...]:
    """The rows whose levels a pooled row (`level` all) rests on: same judge and arms (and kind of comparison)."""
    return (row.get("kind", ""), row["judge"], *(part for arm in _arms(row, kind) for part in arm))


def _row_files(rows: list[dict[str, str]], kind: str) -> list[list[str]]:
    """The judgments files (relative to the results folder) each row rests on."""
    levels: dict[tuple[str, ...], set[str]] = {}
    for row in rows:
        if row["level"] != ALL_LEVELS:
            levels.setdefault(_group(row, kind), set()).add(row["level"])
    files = []
    for row in rows:
        at = [row["level"]] if row["level"] != ALL_LEVELS else sorted(levels.get(_group(row, kind), ()), key=_level_key)
        names = {f"judgments/{row['judge']}/{model}/{prompt}/{level}.jsonl" for model, prompt in _arms(row, kind) for level in at}
        files.append(sorted(names))
    return files


def judgments_digest(root: Path, files: Sequence[str]) -> str | None:
    """The digest of the judgments files `files` (relative to `root`) as they are now; None where one is missing."""
    digests = [file_digest(root / name) for name in files]
    if not files or None in digests:
        return None
    return _digest([[name, digest] for name, digest in zip(files, digests)])


def row_digest(position: int, count: int, columns: Sequence[str], row: dict[str, str]) -> str:
    """A row's own digest: its place in the file, the file's number of rows, and every other field as written."""
    return _digest([position, count, [[name, row.get(name) or ""] for name in columns if name != ROW_DIGEST]])


def _read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def stamp(path: str | Path) -> None:
    """Add `judgments_digest` and `row_digest` to every row of a scores.csv or comparisons.csv just written (in place,
    atomically). A row whose judgments are not all under the results folder (inputs from elsewhere) gets an empty
    `judgments_digest`: it cannot be traced, and the writers refuse it."""
    path = Path(path)
    columns, rows = _read(path)
    kind = kind_of(columns)
    if kind is None:
        raise ValueError(f"{path}: not a scores.csv or comparisons.csv (columns {', '.join(columns)})")
    columns = [name for name in columns if name not in (JUDGMENTS_DIGEST, ROW_DIGEST)] + [JUDGMENTS_DIGEST, ROW_DIGEST]
    for row, files in zip(rows, _row_files(rows, kind)):
        row[JUDGMENTS_DIGEST] = judgments_digest(path.parent, files) or ""
    for position, row in enumerate(rows):
        row[ROW_DIGEST] = row_digest(position, len(rows), columns, row)
    write_csv(path, rows, columns)


def _describe(row: dict[str, str], kind: str) -> str:
    arms = " vs ".join(f"{model}:{prompt}" for model, prompt in _arms(row, kind))
    return f"{arms} level {row['level']} {row['subset']}"


def problems(path: str | Path) -> list[str]:
    """What is wrong with a stamped file (nothing where it is intact): unreadable, not a scores.csv or comparisons.csv,
    made before rows carried digests, a row edited, moved or removed, a row's judgments changed or gone since. The
    first row of each problem is named, with a count."""
    path = Path(path)
    try:
        columns, rows = _read(path)
    except (OSError, csv.Error, UnicodeDecodeError) as error:
        return [f"cannot be read ({error})"]
    kind = kind_of(columns)
    if kind is None:
        return [f"is not a scores.csv or comparisons.csv (columns {', '.join(columns) or 'none'})"]
    if JUDGMENTS_DIGEST not in columns or ROW_DIGEST not in columns:
        return [f"has no {ROW_DIGEST} column (written before its rows carried the digests of their judgments, or edited)"]
    if kind == "scores" and not rows:  # compute_scores never writes one (no judged item is an error there)
        return ["holds no row: cut short since it was written"]
    edited = [at for at, row in enumerate(rows) if row[ROW_DIGEST] != row_digest(at, len(rows), columns, row)]
    if edited:  # its judgments digests cannot be trusted either
        return [
            f"{len(edited)} row(s) (e.g. line {edited[0] + 2}, {_describe(rows[edited[0]], kind)}) do not match their "
            f"{ROW_DIGEST}: edited, moved or removed since it was written"
        ]
    found, untraced, changed = [], [], []
    for row, files in zip(rows, _row_files(rows, kind)):
        if not row[JUDGMENTS_DIGEST]:
            untraced.append(row)
        elif judgments_digest(path.parent, files) != row[JUDGMENTS_DIGEST]:
            changed.append((row, files))
    if untraced:
        found.append(f"{len(untraced)} row(s) (e.g. {_describe(untraced[0], kind)}) were not computed from judgments under {path.parent}")
    if changed:
        row, files = changed[0]
        named = ", ".join(str(path.parent / name) for name in files[:2]) + (" ..." if len(files) > 2 else "")
        found.append(
            f"{len(changed)} row(s) (e.g. {_describe(row, kind)}) were computed from other judgments than those there now ({named})"
        )
    return found


def require_intact(paths: Sequence[str | Path | None], writing: str | Path) -> None:
    """Raise NotIntact, in one line naming the file and what to run, unless every stamped file of `paths` (None
    entries left out) is intact and made from the judgments there now: nothing is written from it otherwise."""
    for path in paths:
        if path is None:
            continue
        found = problems(path)
        if found:
            rule = REBUILT_BY.get(kind_of(_columns(path)) or "scores")
            raise NotIntact(
                f"refusing to write {writing}: {path} {'; '.join(found)}; rerun the workflow, which rebuilds it "
                f"(or `snakemake --forcerun {rule}`)"
            )


def _columns(path: str | Path) -> list[str]:
    try:
        return _read(Path(path))[0]
    except (OSError, csv.Error, UnicodeDecodeError):
        return []


#: The name a stamped file's passed check is remembered under (verify.Remembered).
PUBLISHED_CHECK = "published-v2"  # v2: stamped with change time and inode too


def check_published(outputs: Sequence[str | Path], stale: Sequence[str], remembered) -> list[tuple[str, str]]:
    """The start-up check's part (verify.check): (file, reason) for each report output of `outputs` that is a scores.csv
    or comparisons.csv and is not intact (`problems`), but those already in `stale` (made from a stale record: rebuilt
    anyway). A pass is remembered (`remembered`: verify.Remembered) under the stamps of the file and of the judgments
    files its rows name, so a start re-reads only what changed."""
    found = []
    for output in map(Path, outputs):
        if str(output) in stale or output.name not in ("scores.csv", "comparisons.csv") or not output.is_file():
            continue
        columns = _columns(output)
        if kind_of(columns) is None:
            continue  # not stamped here (CVRR-ES's scores.csv)
        key = f"{PUBLISHED_CHECK}:{output}"
        try:
            rows = _read(output)[1]
            files = sorted({name for named in _row_files(rows, kind_of(columns) or "scores") for name in named})
        except (OSError, csv.Error, UnicodeDecodeError, KeyError, AttributeError, TypeError):
            files = []  # unreadable: problems() names it
        stamp_now = stat_stamp(output, *(output.parent / name for name in files))
        if remembered.holds(key, stamp_now):
            remembered.keep(key, stamp_now)
            continue
        reasons = problems(output)
        if reasons:
            found.append((str(output), "; ".join(reasons)))
        else:
            remembered.keep(key, stamp_now)
    return found


def supplement_problems(judgment_paths: Sequence[str | Path]) -> list[str]:
    """The supplement's chain behind its table, one line per broken judgments file: each
    results/supplement/judgments/<model>/<source>/<form>.jsonl against the responses file it judged
    (results/supplement/responses/<model>/<source>/<form>.jsonl) there now: that file exists, and each of its records
    was judged once, by a judgment whose `response_hash` names it (or, made before the hash was recorded, whose
    `response` is its text). Not checked here: the responses' frames and the ground truth against the supplement's
    sets (docs/reliability.md, "Left as it is"). Files outside that layout are not checked."""
    found = []
    for path in map(Path, judgment_paths):
        parts = path.parts
        if len(parts) < 5 or parts[-5:-3] != ("supplement", "judgments"):
            continue  # outside the workflow's layout: nothing to check it against
        responses_path = path.parents[3] / "responses" / parts[-3] / parts[-2] / path.name
        if not responses_path.is_file():
            found.append(f"{path}: made from {responses_path}, which is missing")
            continue
        try:
            responses = {
                (record.instance_id, record.sample): (record, line_digest(line)) for record, line in iter_records(responses_path, Response)
            }
            judgments = load_records(path, Judgment)
        except (OSError, RecordError) as error:
            found.append(f"{path}: {error}")
            continue
        judged = {(judgment.instance_id, judgment.sample): judgment for judgment in judgments}
        if judged.keys() != responses.keys():
            missing, extra = len(responses.keys() - judged.keys()), len(judged.keys() - responses.keys())
            found.append(f"{path}: {missing} response(s) of {responses_path} not judged and {extra} judgment(s) of no response there")
            continue
        for key, judgment in judged.items():
            record, digest = responses[key]
            if judgment.response_hash is not None and judged_hash_matches(judgment.response_hash, record, digest):
                continue
            if judgment.response_hash is None and judgment.response == record.response:
                continue
            found.append(f"{path}: item {key[0]!r} judged another response record than the one in {responses_path} now")
            break
    return found
