"""LVBench source adapter: the authors' annotation file and the YouTube videos it names (fetched once,
outside the workflow: `python -m virtuebench.sources.lvbench fetch RAW_DIR`, or the authors' own video2dataset
script, whose numbered files are mapped to their keys), as candidate instances; one of VirtueBench's six long-video
sources. Layout read, choices, and what was confirmed:
docs/sources.md#lvbench.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from virtuebench.instances import Instance
from virtuebench.sources.base import MISSING_VIDEO, Conversion, Excluded, HubRelease, correct_option, split_embedded_options
from virtuebench.support.faults import environment_fault
from virtuebench.support.tabular import write_csv

SOURCE = "lvbench"

#: The authors' release (the THUDM organisation is now zai-org on the hub; the old name redirects).
#: 5059bb7a... is the commit that uploaded video_info.meta.jsonl, unchanged on main since.
RELEASE = HubRelease(
    repo_id="THUDM/LVBench",
    revision="5059bb7a722f6ab14b3636d53ad93bd0559bcbf8",
    allow_patterns=("video_info.meta.jsonl",),
    gated=False,
)

ANNOTATIONS = "video_info.meta.jsonl"
VIDEOS = "videos"
MISSING = "videos_missing.csv"
DEFAULT_COMMAND = 'yt-dlp -f "bv*[height<=720][ext=mp4]/b[ext=mp4]" -o {out} https://www.youtube.com/watch?v={key}'

#: question_type (first entry) -> VirtueBench category. Principle: recognizing, reading or counting what
#: is visible = perception; causal, temporal-order, plot or relational inference = reasoning.
TASK_CATEGORIES = {
    "entity recognition": "perception",  # who/what is there, how many
    "key information retrieval": "perception",  # reading visible text and numbers
    "event understanding": "perception",  # what happens in the located segment
    "temporal grounding": "perception",  # what is visible at a stated time / when it is visible: locating, not inferring
    "reasoning": "reasoning",  # why, intentions, consequences
    "summarization": "reasoning",  # integrating a plot over a long segment
}

_KEY = re.compile(r"^[A-Za-z0-9_-]+$")  # YouTube ids; also keeps a key from naming a path outside videos/
_STAMP = re.compile(r"^(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$")
_RANGE_SEPARATOR = re.compile(r"\s*[-\u2013~]\s*")


def _seconds(stamp: str) -> float | None:
    match = _STAMP.match(stamp.strip())
    if not match:
        return None
    hours, minutes, seconds = match.groups()
    minutes_i, seconds_f = int(minutes), float(seconds)
    if seconds_f >= 60 or (hours is not None and minutes_i >= 60):
        return None
    return int(hours or 0) * 3600 + minutes_i * 60 + seconds_f


def parse_time_reference(text: object) -> list[list[float]] | None:
    """'00:15-00:19' -> [[15.0, 20.0]] (end second included); None where it does not parse.

    A reversed range is read in order: the release has '33:52-33:46' and '116:50-108:00' (docs/sources.md#lvbench), so
    '33:52-33:46' -> [[2026.0, 2033.0]]."""
    if not isinstance(text, str) or not text.strip():
        return None
    intervals = []
    for piece in re.split(r"[,;]", text):
        bounds = _RANGE_SEPARATOR.split(piece.strip())
        if len(bounds) != 2:
            return None
        start, end = _seconds(bounds[0]), _seconds(bounds[1])
        if start is None or end is None:
            return None
        start, end = min(start, end), max(start, end)
        intervals.append([start, end + 1.0])
    return intervals


def missing_bound(text: object) -> bool:
    """Whether a time_reference names `None` for a bound ('08:17-None', as the release has): the annotators gave no end,
    so the question's evidence is unknown; such a question is left out and named in the excluded report."""
    if not isinstance(text, str):
        return False
    return any(bound.strip().lower() == "none" for piece in re.split(r"[,;]", text) for bound in _RANGE_SEPARATOR.split(piece.strip()))


def read_annotations(raw_dir: Path) -> tuple[list[tuple[int, dict]], list[tuple[int, str]]]:
    """(line number, video entry) for each readable line, and (line number, why) for the others."""
    path = raw_dir / ANNOTATIONS
    if not path.is_file():
        raise ValueError(f"{SOURCE}: {path} not found (download {RELEASE.url} into {raw_dir})")
    entries: list[tuple[int, dict]] = []
    broken: list[tuple[int, str]] = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as error:
                broken.append((number, f"not valid JSON ({error})"))
                continue
            if not isinstance(entry, dict):
                broken.append((number, "not a JSON object"))
            elif not isinstance(entry.get("key"), str) or not _KEY.match(entry["key"]):
                broken.append((number, f"'key' {entry.get('key')!r} is not a YouTube id"))
            elif not isinstance(entry.get("qa"), list):
                broken.append((number, "'qa' is not a list"))
            else:
                entries.append((number, entry))
    return entries, broken


def video_file(raw_dir: Path, key: str) -> Path:
    return raw_dir / VIDEOS / f"{key}.mp4"


# ---------------------------------------------------------------------------------------------
# The official download's layout (THUDM/LVBench scripts/download.sh: video2dataset)
#
# scripts/save_video_txt.py writes one URL per line of video_info.meta.jsonl that parses and has a `key`, in file order;
# video2dataset (`--input_format txt --output_format files`, its default config: 1,000 samples a shard, 5-digit shard
# names) writes the URL on row n (counted from 0) as videos/<n // 1000:05d>/<n:08d>.mp4 (the number is shard * 1000 +
# row in shard = n), with <n:08d>.json beside it holding the `url` and a `status` (a failed download leaves the JSON
# alone). So a number maps to a key through the URL its JSON records, or,
# without the JSON, through its position in the metadata.

_NUMBERED = re.compile(r"^\d+$")
_YOUTUBE_ID = re.compile(r"(?:[?&]v=|youtu\.be/|/shorts/)([A-Za-z0-9_-]+)")


def download_order(raw_dir: Path) -> list[str]:
    """The keys in the order scripts/save_video_txt.py lists them: every line of the metadata that parses as JSON and has
    a `key` (any other line is skipped there too, so it takes no number)."""
    keys = []
    with open(raw_dir / ANNOTATIONS, encoding="utf-8") as handle:
        for line in handle:
            try:
                key = json.loads(line.strip())["key"]
            except (ValueError, TypeError, KeyError, IndexError):
                continue
            keys.append(str(key))
    return keys


def _youtube_id(url: object) -> str | None:
    match = _YOUTUBE_ID.search(url) if isinstance(url, str) else None
    return match.group(1) if match else None


def official_videos(raw_dir: Path) -> tuple[dict[str, Path], dict[str, str]]:
    """The official download's videos by key, and the keys its downloads failed for (key -> why), from
    videos/<shard>/<number>.mp4 and the .json beside each (docs/sources.md#lvbench). A number's key is the YouTube id in
    its JSON's `url`; without a JSON, the key at that position of the metadata (download_order)."""
    folder = raw_dir / VIDEOS
    shards = sorted(path for path in folder.iterdir() if path.is_dir() and _NUMBERED.match(path.name)) if folder.is_dir() else []
    if not shards:
        return {}, {}
    order = download_order(raw_dir)
    found: dict[str, Path] = {}
    failed: dict[str, str] = {}
    for shard in shards:
        numbers = {path.stem for path in shard.iterdir() if path.suffix in (".mp4", ".json") and _NUMBERED.match(path.stem)}
        for number in sorted(numbers):
            video, sidecar = shard / f"{number}.mp4", shard / f"{number}.json"
            meta: dict = {}
            if sidecar.is_file():
                try:
                    loaded = json.loads(sidecar.read_text(encoding="utf-8"))
                    meta = loaded if isinstance(loaded, dict) else {}
                except (ValueError, UnicodeDecodeError):
                    meta = {}
            key = _youtube_id(meta.get("url"))
            if key is None and int(number) < len(order):
                key = order[int(number)]
            if key is None:
                print(
                    f"{SOURCE}: {video} matches no key of {ANNOTATIONS} (no URL in {sidecar.name}, number past the list)", file=sys.stderr
                )
                continue
            if video.is_file() and video.stat().st_size > 0:
                found.setdefault(key, video)
            elif meta.get("status") not in (None, "success"):
                failed[key] = f"video2dataset: {meta.get('status')} ({str(meta.get('error_message') or '').strip()[:200] or 'no message'})"
    return found, {key: why for key, why in failed.items() if key not in found}


def locate_videos(raw_dir: Path, keys: list[str]) -> tuple[dict[str, Path], dict[str, str]]:
    """Each key's video: videos/<key>.mp4 (fetch's layout) first, else the official download's numbered file; and why
    the others are missing, where a download said so (videos_missing.csv, or video2dataset's failed JSON)."""
    official, failed = official_videos(raw_dir)
    paths = {}
    for key in keys:
        flat = video_file(raw_dir, key)
        paths[key] = flat if flat.exists() or key not in official else official[key]
    return paths, {**failed, **_read_missing(raw_dir)}


def prepare(raw_dir: str | Path) -> Path:
    """Nothing to unpack: make sure `videos/` exists for `fetch`. Never uses the network; idempotent."""
    videos = Path(raw_dir) / VIDEOS
    videos.mkdir(parents=True, exist_ok=True)
    return videos


def _read_missing(raw_dir: Path) -> dict[str, str]:
    path = raw_dir / MISSING
    if not path.is_file():
        return {}
    with open(path, newline="", encoding="utf-8") as handle:
        return {row["key"]: row.get("reason", "") for row in csv.DictReader(handle) if row.get("key")}


def _question(qa: object) -> tuple[str, str, str, list[str], str] | str:
    """(uid, stem, answer text, options, task type) from one `qa` item, or why it is a bad row."""
    if not isinstance(qa, dict):
        return "not an object"
    uid = qa.get("uid")
    if isinstance(uid, bool) or not isinstance(uid, str | int) or not str(uid).strip():
        return f"'uid' {uid!r} is not an id"
    if not isinstance(qa.get("question"), str):
        return "'question' is not a string"
    stem, options = split_embedded_options(qa["question"])
    if not stem:
        return "the question has no text before its options"
    if len(options) < 2 or not all(option.strip() for option in options):
        return f"the question holds {len(options)} well-formed options ('(A) ...' lines), at least two needed"
    answer = qa.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        return f"'answer' {answer!r} is not an option letter"
    try:
        text = correct_option(options, answer)
    except ValueError as error:
        return str(error)
    types = qa.get("question_type")
    if isinstance(types, str):
        types = [types]
    if not isinstance(types, list) or not types or not all(isinstance(t, str) and t.strip() for t in types):
        return f"'question_type' {qa.get('question_type')!r} is not a list of task types"
    return str(uid).strip(), stem, text, options, types[0].strip()


def convert(raw_dir: str | Path, videos_dir: str | Path, levels: list[int], *, sampling: str = "1fps") -> tuple[list[Instance], Excluded]:
    """Candidate instances from `video_info.meta.jsonl` and its videos: `videos/<key>.mp4`, or the official download's
    `videos/<shard>/<number>.mp4` (docs/sources.md#lvbench)."""
    raw_dir = Path(raw_dir)
    entries, broken = read_annotations(raw_dir)
    conversion = Conversion(SOURCE, videos_dir, levels, TASK_CATEGORIES, sampling=sampling)
    for number, reason in broken:
        conversion.exclude(f"{ANNOTATIONS}:{number}", f"bad line: {reason}", kind="bad_row")
    paths, not_fetched = locate_videos(raw_dir, [entry["key"] for _, entry in entries])
    unparsed: list[str] = []
    for number, entry in entries:
        key = entry["key"]
        path = paths[key]
        for index, qa in enumerate(entry["qa"]):
            parsed = _question(qa)
            if isinstance(parsed, str):
                uid = qa.get("uid") if isinstance(qa, dict) else None
                has_uid = isinstance(uid, str | int) and not isinstance(uid, bool) and str(uid).strip()
                item = str(uid) if has_uid else f"{ANNOTATIONS}:{number}#{index}"
                conversion.exclude(item, f"bad row: {parsed}", kind="bad_row")
                continue
            uid, stem, answer, options, task_type = parsed
            if not path.exists() and key in not_fetched:
                conversion.exclude(uid, f"{path}: video not downloaded ({not_fetched[key] or 'see ' + MISSING})", kind=MISSING_VIDEO)
                continue
            if missing_bound(qa.get("time_reference")):
                conversion.exclude(
                    uid,
                    f"bad row: time_reference {qa.get('time_reference')!r} has a bound 'None' (no end annotated), so the "
                    "answer's evidence is unknown",
                    kind="bad_row",
                )
                continue
            evidence = parse_time_reference(qa.get("time_reference"))
            if evidence is None:
                unparsed.append(f"{uid}: {qa.get('time_reference')!r}")
            conversion.add(uid, path, task_type, stem, answer, options, evidence or [], video_key=key)
    if unparsed:
        print(
            f"{SOURCE}: {len(unparsed)} time_reference value(s) did not parse; those questions keep empty evidence "
            f"(e.g. {'; '.join(unparsed[:3])})",
            file=sys.stderr,
        )
    return conversion.result()


def _command(template: str, out: Path, key: str) -> list[str]:
    """The downloader's argv: the template split like a shell line, then {out} and {key} filled in."""
    return [token.replace("{out}", str(out)).replace("{key}", key) for token in shlex.split(template)]


def _why(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line.strip() for line in (result.stderr or result.stdout or "").splitlines() if line.strip()]
    detail = f": {lines[-1][:300]}" if lines else ""
    return f"downloader exited with status {result.returncode}{detail}"


def fetch_videos(raw_dir: str | Path, command_template: str = DEFAULT_COMMAND, timeout_s: float | None = None) -> list[dict[str, str]]:
    """Download every video named in the annotations that is not in `videos/` yet; never raises for one video.

    `command_template` is a shell-like line with `{out}` (the file to write) and `{key}` (the YouTube
    id); it runs without a shell. A download counts when the command exits 0 and leaves a non-empty
    file; it writes to a temporary name first, so an interrupted run never leaves a truncated
    `<key>.mp4`. Writes `videos_missing.csv` (key, reason) for the videos still missing and returns
    its rows.
    """
    raw_dir = Path(raw_dir)
    entries, _ = read_annotations(raw_dir)
    videos = prepare(raw_dir)
    official, _ = official_videos(raw_dir)  # already there from the official download script: not fetched again
    missing: list[dict[str, str]] = []
    for key in dict.fromkeys(entry["key"] for _, entry in entries):
        final = video_file(raw_dir, key)
        if (final.is_file() and final.stat().st_size > 0) or key in official:
            continue
        partial = videos / f".{key}.partial.mp4"
        partial.unlink(missing_ok=True)
        try:
            result = subprocess.run(
                _command(command_template, partial, key), capture_output=True, text=True, timeout=timeout_s, check=False
            )
        except FileNotFoundError as error:
            reason = f"downloader not found ({error.filename or error})"
        except subprocess.TimeoutExpired:
            reason = f"downloader timed out after {timeout_s:g} s"
        except (OSError, ValueError) as error:
            if environment_fault(error) is not None:
                raise  # too many open files, a full disk: the job's fault line, never a missing video
            reason = f"downloader could not run ({type(error).__name__}: {error})"
        else:
            if result.returncode != 0:
                reason = _why(result)
            elif not partial.is_file() or partial.stat().st_size == 0:
                reason = "downloader exited with status 0 but wrote no file"
            else:
                os.replace(partial, final)
                continue
        partial.unlink(missing_ok=True)
        missing.append({"key": key, "reason": reason})
    write_csv(raw_dir / MISSING, missing, ["key", "reason"])
    return missing


def _fetch(args: argparse.Namespace) -> int:
    try:
        missing = fetch_videos(args.raw_dir, args.downloader, args.timeout)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"{SOURCE}: {len(missing)} video(s) missing, listed in {Path(args.raw_dir) / MISSING}", file=sys.stderr)
    for row in missing[:20]:
        print(f"  {row['key']}: {row['reason']}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.sources.lvbench", description="LVBench videos")
    commands = parser.add_subparsers(dest="command", required=True)
    fetch = commands.add_parser("fetch", help=f"download the videos missing from RAW_DIR/{VIDEOS}/")
    fetch.add_argument("raw_dir", help=f"the folder holding {ANNOTATIONS}")
    # dest: `command` names the subcommand, as in every CLI here
    fetch.add_argument(
        "--command", dest="downloader", default=DEFAULT_COMMAND, help="downloader line with {out} and {key} (default: %(default)s)"
    )
    fetch.add_argument("--timeout", type=float, default=None, help="seconds allowed per video (default: no limit)")
    fetch.set_defaults(func=_fetch)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    from virtuebench.support.stops import run_stoppable

    # Ctrl-C, SIGTERM or a full disk: one line, no traceback
    sys.exit(run_stoppable(lambda stop: main()))
