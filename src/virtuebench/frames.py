"""Frame extraction: one video in, one JPEG folder per available level and a manifest out.

The levels' timestamps come from virtuebench.levels. The frame written for timestamp t is the
frame displayed at t: the last decoded frame whose presentation time is <= t (the first frame
for a t before it). One decode pass serves all levels, and a frame shared by several levels is
written once and hard-linked into the other levels' folders.

The CLI's OUTDIR is complete or absent: everything is written into a sibling folder `.<name>.tmp-<pid>`, the
manifest last, and that folder is renamed into place only when complete. A killed run leaves no OUTDIR (only a
sibling the next run for it removes). A video that cannot be decoded is the video's fault (recorded with
--on-error record); anything else fails the job and is never recorded: a full disk or another fault of the disk or
the OS (support/faults.py), a frame worker killed (the OOM killer: WorkerDied), memory running out, an unforeseen
error. Workers are killed with the job (support/stops.die_with_parent).

Each level's frames record their digest (`level_digest`: sha256 over the level's JPEG bytes in time order), so what
reads them can tell the same frames from other ones by content, whatever the files' dates.

Two layouts of a video's folder (docs/records.md):
- per video (the CLI's default): OUTDIR/<level>/NNNN.jpg for every level and one OUTDIR/manifest.json;
- per level (`--level-folder`, what the workflow writes, one job per level): OUTDIR is the level's own folder,
  results/frames/<video_id>/<level>/, holding its NNNN.jpg and a manifest.json of that level alone. A new level is
  then extracted on its own, and the levels already there are never rewritten.
`Manifest.read` reads either: a video folder without a manifest of its own is read as the merge of its levels'.

CLI: python -m virtuebench.frames VIDEO OUTDIR --levels 64 128 256 512 1024
     python -m virtuebench.frames VIDEO OUTDIR/64 --levels 64 --level-folder
"""

from __future__ import annotations

import argparse
import bisect
import errno
import gc
import hashlib
import json
import math
import os
import shutil
import signal
import sys
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from virtuebench.levels import (
    CLIP_SAMPLINGS,
    LEVELS,
    SAMPLINGS,
    clip_frame_count,
    clip_timestamps,
    grid_size,
    grid_timestamp,
    level_indices,
    sampled_levels,
)
from virtuebench.records import stable_hash
from virtuebench.support.faults import describe, environment_error, environment_fault
from virtuebench.support.stops import Stop, die_with_parent, reset_in_worker, run_stoppable
from virtuebench.support.video import VideoError
from virtuebench.support.video import duration_s as video_duration_s

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "virtuebench.frames/1"


def _settings(max_side: int | None, jpeg_quality: int | None, max_pixels: int | None) -> dict[str, Any]:
    """The manifest's record of how frames were stored (max_pixels only where a cap was asked for)."""
    settings: dict[str, Any] = {"max_side": max_side, "jpeg_quality": jpeg_quality}
    if max_pixels:
        settings["max_pixels"] = max_pixels
    return settings


class FramesError(RuntimeError):
    """A video could not be turned into frames; the message starts with the video's path. Raised only for the video's
    own faults (its container or stream cannot be read or decoded): what --on-error record records."""


def _video_error(message: str, error: Exception) -> Exception:
    """What to raise for a PyAV error: FramesError(message), the video's own error, except where the decoder ran out of
    memory (av.error.MemoryError, ENOMEM), which is the machine's and is raised as it is (never recorded)."""
    return error if isinstance(error, MemoryError) else FramesError(message)


class WorkerDied(RuntimeError):
    """A frame worker process ended without its result (killed by a signal, as the OOM killer does): a fault of the
    machine, never the video's; the job fails and the rerun extracts the video again. `exitcode` is the worker's
    (-N: killed by signal N), None where it could not be told."""

    def __init__(self, exitcode: int | None):
        super().__init__(f"a frame worker ended abruptly ({describe_exit(exitcode)})")
        self.exitcode = exitcode


def describe_exit(exitcode: int | None) -> str:
    """How a worker process ended, in words: "signal 9, SIGKILL: the OOM killer?", "signal 15, SIGTERM", "exit code 1"."""
    if exitcode is None:
        return "how could not be told"
    if exitcode >= 0:
        return f"exit code {exitcode}"
    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        name = "an unknown signal"
    return f"signal {-exitcode}, {name}" + (": the OOM killer?" if -exitcode == signal.SIGKILL else "")


def _dead_worker_exitcode(processes: list) -> int | None:
    """The exit code that tells best why the pool broke (`processes`: each with its `exitcode` as the break found it): a
    signal other than SIGTERM (the pool ends the remaining workers with SIGTERM once one has died), else SIGTERM, else
    another exit code; None where no worker ended."""
    codes = [process.exitcode for process in processes if process.exitcode not in (None, 0)]
    codes.sort(key=lambda code: (code >= 0, code == -signal.SIGTERM))
    return codes[0] if codes else None


@dataclass
class LevelFrames:
    timestamps: list[float]
    grid_indices: list[int]
    files: list[str]  # relative to the manifest's folder
    digest: str | None = None  # level_digest of the files; None in manifests written before it was recorded


def level_digest(folder: str | Path, level_frames: LevelFrames) -> str:
    """sha256 over the level's frame files' bytes in time order (each file's length first, so that no two lists of
    files give the same stream of bytes), as "sha256:<hex>". `folder` is the folder the files are listed relative to
    (the manifest's). The digest written at extraction, and what a reader computes for a manifest written before it
    was recorded: the same frames give the same digest, whenever and wherever they were written."""
    digest = hashlib.sha256()
    for name in level_frames.files:
        data = (Path(folder) / name).read_bytes()
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return f"sha256:{digest.hexdigest()}"


class BadFrame(RuntimeError):
    """A frame file that cannot be read as an image (missing, cut short, not a JPEG), or a level whose files are not the
    frames its manifest records: `path` is the file (or the level's folder); the message is `<path>: <problem>`."""

    def __init__(self, path: str | Path, problem: str):
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = Path(path), problem

    def __reduce__(self):
        return (type(self), (self.path, self.problem))


def read_frame(path: str | Path):
    """The frame file at `path`, decoded whole, as an RGB PIL image; BadFrame naming the file where it cannot be read
    (an environment error, such as EIO, and memory running out raise as they are)."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.convert("RGB")  # decodes every byte: a file cut short fails here, not later in a model
    except MemoryError:
        raise
    except Exception as error:  # PIL raises OSError, SyntaxError, ValueError... for a file that is not a whole image
        if environment_error(error):
            raise
        raise BadFrame(path, f"cannot be read as an image ({type(error).__name__}: {error})") from error


def check_level(folder: str | Path, level: int, level_frames: LevelFrames) -> None:
    """BadFrame where the level's files (listed relative to the video's `folder`) are not the frames its manifest's
    digest records: the first file that cannot be read as an image is named, else the level's folder (bytes changed in
    files that still read). One read of each file (level_digest), and a decode of each only where the digest differs.
    A manifest written before digests were recorded is taken as it is."""
    if level_frames.digest is None:
        return
    folder = Path(folder)
    try:
        found = level_digest(folder, level_frames)
    except FileNotFoundError as error:
        raise BadFrame(error.filename, "frame file missing") from None
    if found == level_frames.digest:
        return
    for name in level_frames.files:
        read_frame(folder / name)
    raise BadFrame(
        folder / str(level),
        f"its frame files are not the frames its manifest records (their digest is {found}, the manifest's {level_frames.digest})",
    )


def remove_damaged_level(video_folder: str | Path, level: int) -> Path | None:
    """Remove the level folder of `video_folder` where the workflow made it (its own manifest and PROVENANCE), so that
    the workflow's next run extracts it again (the same frames: extraction is deterministic); the folder removed (or
    found gone), else None: a folder made otherwise is the user's to remove."""
    folder = Path(video_folder) / str(level)
    if not folder.exists():
        return folder
    if not ((folder / MANIFEST).is_file() and (folder / PROVENANCE).is_file()):
        return None
    old = folder.parent / f".{folder.name}.old-{os.getpid()}"  # what complete_or_absent removes, should this be killed
    try:
        os.rename(folder, old)
    except FileNotFoundError:  # another job that met the same frame removed it first
        return folder
    _remove(old)
    return folder


@dataclass
class Manifest:
    video: str
    duration_s: float | None = None
    grid_size: int | None = None
    fps: float | None = None
    source_size: list[int] | None = None
    frame_size: list[int] | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    levels: dict[str, LevelFrames] = field(default_factory=dict)
    unavailable_levels: list[int] = field(default_factory=list)
    strategy: str = ""  # "sequential" or "seek (N runs)": how the frames were reached
    frames_decoded: int = 0
    frames_written: int = 0
    seconds: float = 0.0
    error: str | None = None
    format: str = MANIFEST_FORMAT
    sampling: str = "1fps"  # levels.SAMPLINGS; with `clip`, grid_indices are empty

    def write(self, outdir: Path) -> None:
        tmp = outdir / f".{MANIFEST}.tmp"
        tmp.write_text(json.dumps(asdict(self), indent=1) + "\n")
        tmp.replace(outdir / MANIFEST)

    @classmethod
    def read(cls, outdir: str | Path, level: int | None = None, parts: list[Manifest] | None = None) -> Manifest:
        """The frame manifest of a video's folder `outdir`, in either layout: its own manifest.json (per video), else
        the merge of its level folders' manifests (per level: `merge`). With `level`, what that level needs: its level
        folder's own manifest where it has one (also a level extracted beside an older per-video folder). `parts`: the
        level folders' manifests where the caller has read them already (each as `read(outdir, level)` gives it, in
        level order), so that they are not read again."""
        outdir = Path(outdir)
        if level is not None:
            own_level = outdir / str(level) / MANIFEST
            if own_level.is_file() or not (outdir / MANIFEST).is_file():
                return cls._read_file(own_level).rebased(str(level))
        if parts is None:
            parts = (
                [
                    cls._read_file(child / MANIFEST).rebased(child.name)
                    for child in sorted((c for c in outdir.iterdir() if c.name.isdigit()), key=lambda c: int(c.name))
                    if (child / MANIFEST).is_file()
                ]
                if outdir.is_dir()
                else []
            )
        own = cls._read_file(outdir / MANIFEST) if (outdir / MANIFEST).is_file() or not parts else None
        return merge(own, parts)

    @classmethod
    def _read_file(cls, path: Path) -> Manifest:
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise FramesError(f"{path}: frame manifest not found") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise FramesError(
                f"{path}: not valid JSON ({error.msg if isinstance(error, json.JSONDecodeError) else error.reason})"
            ) from None
        if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
            found = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise FramesError(f"{path}: format {found!r} is not {MANIFEST_FORMAT!r}")
        try:
            data["levels"] = {key: LevelFrames(**value) for key, value in data.get("levels", {}).items()}
            return cls(**data)
        except (TypeError, AttributeError) as error:
            raise FramesError(f"{path}: not a frame manifest ({error})") from None

    def rebased(self, folder: str) -> Manifest:
        """This manifest of a level folder, its files named relative to the video's folder (`folder`/NNNN.jpg)."""
        levels = {key: replace(frames, files=[f"{folder}/{name}" for name in frames.files]) for key, frames in self.levels.items()}
        return replace(self, levels=levels)

    def frame_paths(self, outdir: str | Path, level: int) -> list[Path]:
        return [Path(outdir) / name for name in self.levels[str(level)].files]


def frames_hash(manifest: Manifest, level: int) -> str:
    """A digest of what a level's frames were made as (the video's recorded error, the frame settings and size, the
    level's timestamps), part of each response's item_hash: a response asked with other frames no longer matches."""
    frames = manifest.levels.get(str(level))
    return stable_hash([manifest.error, manifest.settings, manifest.frame_size, frames.timestamps if frames else None])


#: The fields that describe the video itself: the same in every level's manifest of a readable video.
VIDEO_FIELDS = ("duration_s", "grid_size", "fps", "source_size", "frame_size")


def merge(own: Manifest | None, parts: list[Manifest]) -> Manifest:
    """One manifest of a video from its level folders' manifests (`parts`, rebased, in level order), over its own
    per-video manifest where it has one (`own`: an older folder a level was added beside). The levels are those of
    every part; a level unavailable in any part is unavailable; a decode error a part records is the video's error
    (the first one); the counts add up."""
    if own is None and not parts:
        raise ValueError("merge needs a manifest")
    readable = [part for part in parts if not part.error]
    merged = replace(own or (readable or parts)[0], levels={}, unavailable_levels=[])
    if own is None:
        merged.strategy, merged.frames_decoded, merged.frames_written, merged.seconds = "per level", 0, 0, 0.0
    for part in [own, *parts] if own is not None else parts:
        merged.levels.update(part.levels)
        merged.unavailable_levels = sorted(set(merged.unavailable_levels) | set(part.unavailable_levels))
        merged.error = merged.error or part.error
        for name in VIDEO_FIELDS:
            if getattr(merged, name) is None:
                setattr(merged, name, getattr(part, name))
        if part is not own and own is None:
            merged.frames_decoded += part.frames_decoded
            merged.frames_written += part.frames_written
            merged.seconds = round(merged.seconds + part.seconds, 3)
    return merged


def manifest_path(outdir: str | Path, level: int | str) -> Path:
    """The manifest file that records `level` of the video folder `outdir`: its level folder's, else the folder's own."""
    own_level = Path(outdir) / str(level) / MANIFEST
    return own_level if own_level.is_file() else Path(outdir) / MANIFEST


def fit_pixels(width: int, height: int, max_pixels: int | None) -> tuple[int, int]:
    """The largest size with the same aspect whose area is <= max_pixels (unchanged when it fits)."""
    if not max_pixels or width * height <= max_pixels:
        return width, height
    scale = math.sqrt(max_pixels / (width * height))
    return max(1, int(width * scale)), max(1, int(height * scale))


def _resize(image, max_side: int | None, max_pixels: int | None = None):
    """Shrink (never enlarge) to fit both caps: the longer side and the area, the aspect kept."""
    from PIL import Image

    width, height = image.size
    if max_side and max(width, height) > max_side:
        scale = max_side / max(width, height)
        width, height = max(1, round(width * scale)), max(1, round(height * scale))
    width, height = fit_pixels(width, height, max_pixels)
    return image if (width, height) == image.size else image.resize((width, height), Image.Resampling.BICUBIC)


@dataclass(frozen=True)
class FramePlan:
    """Which frames every level needs, from the video's duration and the sampling alone (no decoding): each level's
    timestamps and files, and for each target (a grid index; with clip sampling, its time in ms) the files it fills
    (relative to the output folder), the first one stored and the others linked, and its time in seconds."""

    levels: dict[int, LevelFrames]
    placements: dict[int, list[str]]
    times: dict[int, float]

    @property
    def targets(self) -> list[int]:
        return sorted(self.placements)


def plan_frames(levels: list[int], duration_s: float, sampling: str, level_folder: bool = False) -> FramePlan:
    """The frames of `levels` (all available) of a video of `duration_s` seconds under `sampling`: in one subfolder
    per level, or (`level_folder`: one level, the output folder being its own) directly in the output folder."""
    frames: dict[int, LevelFrames] = {}
    placements: dict[int, list[str]] = {}
    times: dict[int, float] = {}
    for level in levels:
        if sampling in CLIP_SAMPLINGS:
            stamps = clip_timestamps(clip_frame_count(level, duration_s, sampling), duration_s)
            keys = [round(t * 1000) for t in stamps]
            indices: list[int] = []
        else:
            keys = indices = level_indices(level, duration_s)
            stamps = [grid_timestamp(i) for i in indices]
        prefix = "" if level_folder else f"{level}/"
        frames[level] = LevelFrames(
            timestamps=stamps, grid_indices=indices, files=[f"{prefix}{position:04d}.jpg" for position in range(len(stamps))]
        )
        for name, key, stamp in zip(frames[level].files, keys, stamps):
            placements.setdefault(key, []).append(name)
            times[key] = stamp
    return FramePlan(frames, placements, times)


def extract(
    video: str | Path,
    outdir: str | Path,
    levels: list[int] | tuple[int, ...] = LEVELS,
    max_side: int | None = None,
    jpeg_quality: int = 90,
    max_pixels: int | None = None,
    threads: int = 1,
    strategy: str = "auto",
    sampling: str = "1fps",
    stated_duration_s: float | None = None,
    level_folder: bool = False,
) -> Manifest:
    """Write the frames of every available level of `video` under `outdir`; raise FramesError if it cannot.

    `level_folder`: `levels` is one level and `outdir` is its own folder (the per-level layout): the frames go directly
    into it, beside a manifest of that level alone; a level the video is too short for gives a manifest saying so.

    `sampling` places a level's frames (levels.SAMPLINGS): on the 1 FPS grid (VirtueBench), or over the
    whole clip (CVRR-ES), where every clip has every level. `stated_duration_s`: the length the release states
    (LongVideoBench's `duration`, which its loader samples within), used in place of the probed one where shorter.

    `strategy` is "auto" (plan from the keyframe layout), or "sequential" / "seek" to force a path;
    every path writes the same frames.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy {strategy!r} is not one of {list(STRATEGIES)}")
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling {sampling!r} is not one of {list(SAMPLINGS)}")
    started = time.monotonic()
    video, outdir = Path(video), Path(outdir)
    levels = sorted(set(levels))
    if level_folder and len(levels) != 1:
        raise ValueError(f"a level folder holds one level, not {levels}")
    manifest = Manifest(video=str(video), settings=_settings(max_side, jpeg_quality, max_pixels))
    _clear(outdir)  # a previous run's frames and manifest: never mixed with this run's
    plan, stream = _probe_and_plan(video, outdir, manifest, levels, sampling, stated_duration_s, level_folder, threads)

    # Contiguous chunks of targets, one per worker process when there are enough to pay for one.
    targets = plan.targets
    workers = max(1, min(threads, len(targets) // MIN_TARGETS_PER_WORKER))
    jobs = [
        _Chunk(
            video=str(video),
            outdir=str(outdir),
            targets=chunk,
            placements={i: plan.placements[i] for i in chunk},
            times={i: plan.times[i] for i in chunk},
            keyframes=stream.keyframes,
            frame_rate=stream.frame_rate,
            largest_gap=stream.largest_gap,
            seek_cost_frames=STRATEGIES[strategy],
            from_start=n == 0,
            max_side=max_side,
            jpeg_quality=jpeg_quality,
            decoder_threads=threads if workers == 1 else 1,
            max_pixels=max_pixels,
        )
        for n, chunk in enumerate(_split(targets, workers))
    ]
    results = [_extract_chunk(jobs[0])] if workers == 1 else _extract_in_workers(jobs, workers)
    _record_results(manifest, results, workers)
    # Read back once written (a level's files are a few MB at most): the digest is of the bytes on disk, what any
    # reader hashing them later (level_digest) finds.
    for frames in manifest.levels.values():
        frames.digest = level_digest(outdir, frames)
    manifest.seconds = round(time.monotonic() - started, 3)
    manifest.write(outdir)
    return manifest


@dataclass(frozen=True)
class _StreamLayout:
    """What the decode planner needs of a video stream (_keyframe_times)."""

    keyframes: list[float]
    frame_rate: float
    largest_gap: float


def _probe_and_plan(
    video: Path,
    outdir: Path,
    manifest: Manifest,
    levels: list[int],
    sampling: str,
    stated_duration_s: float | None,
    level_folder: bool,
    threads: int,
) -> tuple[FramePlan, _StreamLayout]:
    """Open the video, fill in `manifest`'s description of it and of its levels' frames, make each available
    level's folder, and read the stream's keyframe layout; FramesError (or VideoDamaged) where the video cannot be read."""
    import av

    if not video.is_file():
        raise FramesError(f"{video}: video file not found")
    try:
        container = av.open(str(video))
    except av.error.FFmpegError as error:
        raise _video_error(f"{video}: cannot open as a video ({error})", error) from None
    with container:
        if not container.streams.video:
            raise FramesError(f"{video}: holds no video stream")
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        stream.codec_context.thread_count = max(1, threads)
        try:
            duration = video_duration_s(container, stream)
        except VideoError as error:
            raise FramesError(str(error)) from None
        if stated_duration_s is not None:
            duration = min(duration, float(stated_duration_s))
        manifest.duration_s = duration
        manifest.grid_size = grid_size(duration)
        manifest.fps = float(stream.average_rate) if stream.average_rate else None
        manifest.source_size = [stream.codec_context.width, stream.codec_context.height]
        kept = sampled_levels(duration, levels, sampling)
        manifest.unavailable_levels = sorted(set(levels) - set(kept))
        manifest.sampling = sampling
        plan = plan_frames(kept, duration, sampling, level_folder)
        manifest.levels = {str(level): frames for level, frames in plan.levels.items()}
        for level in kept:
            (outdir if level_folder else outdir / str(level)).mkdir(parents=True, exist_ok=True)
        try:
            return plan, _StreamLayout(*_keyframe_times(container, stream, stream.start_time or 0))
        except av.error.FFmpegError as error:
            raise _video_error(f"{video}: reading the stream failed ({error})", error) from None


def _extract_in_workers(jobs: list[_Chunk], workers: int) -> list[_ChunkResult]:
    """Each chunk in a forked worker process; a failed chunk, a dead worker or a stop ends the others at once."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # Garbage made with native threads (PyAV's decoders and scalers, from an earlier extraction in this process) is
    # freed here, where its threads are: a forked worker has none of them, and freeing it there hangs for ever.
    # The rest is frozen out of the workers' collections for the same reason (gc.freeze's documented use).
    # (The workers are forked at the first submit, inside map.)
    gc.collect()
    gc.freeze()
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context("fork"), initializer=_start_worker, initargs=(os.getpid(),)
    )
    processes: list = []
    try:
        chunks = pool.map(_extract_chunk, jobs)
        # Forked at the first submit (in map): kept here to tell afterwards how a dead one ended.
        processes = list((getattr(pool, "_processes", None) or {}).values())
        results = list(chunks)
    except BaseException as error:
        # A failed chunk (a full disk, a broken stream), a dead worker or a stop: the other workers end now, not
        # after their chunks, and before their folder is removed.
        processes += [p for p in (getattr(pool, "_processes", None) or {}).values() if p not in processes]
        broken = isinstance(error, BrokenProcessPool)  # a worker killed (the OOM killer): the machine's, not the video's
        for process in processes:
            # After a failed chunk, SIGKILL, not SIGTERM: a worker forked a moment ago runs this job's own SIGTERM
            # handler (run_stoppable's) until it reaches multiprocessing's code, and raising there carried the fork
            # on as a copy of the job (a test run hung on such a copy). After a broken pool, SIGTERM, as the pool
            # itself does, so the dead worker's own signal tells how it ended.
            process.terminate() if broken else process.kill()
        pool.shutdown(wait=True, cancel_futures=True)
        if broken:
            raise WorkerDied(_dead_worker_exitcode(processes)) from error
        raise
    finally:
        gc.unfreeze()
    pool.shutdown(wait=True)
    return results


def _record_results(manifest: Manifest, results: list[_ChunkResult], workers: int) -> None:
    """The chunks' counts and the path they took, in the manifest."""
    runs = sum(result.runs for result in results)
    sequential = all(result.sequential for result in results)
    manifest.strategy = ("sequential" if sequential else f"seek ({runs} runs)") + (f", {workers} processes" if workers > 1 else "")
    manifest.frames_decoded = sum(result.frames_decoded for result in results)
    manifest.frames_written = sum(result.frames_written for result in results)
    manifest.frame_size = next((result.frame_size for result in results if result.frame_size), None)


#: What one seek costs, in frames decoded: measured here at about 20 ms (the decoder's frame threads
#: refill after each seek) against about 0.8 ms per 640x360 frame.
SEEK_COST_FRAMES = 25
#: Fewest targets that justify a worker process of their own (a process costs about 0.2 s to start).
MIN_TARGETS_PER_WORKER = 32
#: strategy -> the seek cost the planner assumes (0: seek to every GOP that holds a target; inf: never seek)
STRATEGIES = {"auto": SEEK_COST_FRAMES, "sequential": float("inf"), "seek": 0.0}


def _start_worker(parent_pid: int) -> None:
    """A frame worker's start: the stop signals as reset_in_worker sets them, and killed with its parent (a kill -9 of
    the job leaves no worker decoding on for minutes)."""
    reset_in_worker()
    die_with_parent(parent_pid)


def _keyframe_times(container, stream, start_pts: int) -> tuple[list[float], float, float]:
    """Keyframe times (s), the mean frame rate and the largest gap between frames, from one demux pass
    that decodes nothing."""
    keyframes, times = [], []
    time_base = float(stream.time_base)  # Fraction arithmetic per packet costs more than the demuxing
    for packet in container.demux(stream):
        if packet.pts is None:
            continue
        time_s = (packet.pts - start_pts) * time_base
        times.append(time_s)
        if packet.is_keyframe:
            keyframes.append(time_s)
    container.seek(start_pts, stream=stream, backward=True, any_frame=False)
    times.sort()
    last = times[-1] if times else 0.0
    frame_rate = (len(times) - 1) / last if len(times) > 1 and last > 0 else float(stream.average_rate or 25)
    largest_gap = max((b - a for a, b in zip(times, times[1:])), default=0.0)
    return sorted(keyframes), frame_rate, largest_gap


def plan_runs(
    targets: list[float], keyframes: list[float], frame_rate: float, seek_cost_frames: float = SEEK_COST_FRAMES, from_start: bool = True
) -> list[tuple[float, int]]:
    """Split sorted target times into decode runs, each (start keyframe time, number of targets).

    Targets in one group of pictures (GOP) are always decoded in one pass. Between two GOPs that
    hold targets, decoding on costs the frames in between; seeking costs `seek_cost_frames`: the
    cheaper wins. One run from the first keyframe is the plain sequential pass; many runs, seeking.
    With from_start=False (a later worker's chunk) the first run always begins with a seek.
    """
    if not targets:
        return []
    if not keyframes:
        return [(0.0, len(targets))]
    runs: list[list[float | int]] = []
    previous_gop, previous_time = None, 0.0
    for t in targets:
        gop = max(0, bisect.bisect_right(keyframes, t) - 1)
        if previous_gop is None:
            runs.append([keyframes[0], 1])  # the first run starts at the stream's first keyframe...
            if gop > 0 and (not from_start or (keyframes[gop] - keyframes[0]) * frame_rate > seek_cost_frames):
                runs[-1][0] = keyframes[gop]  # ...unless seeking to the target's GOP is cheaper
        elif gop == previous_gop or (keyframes[gop] - previous_time) * frame_rate <= seek_cost_frames:
            runs[-1][1] += 1
        else:
            runs.append([keyframes[gop], 1])
        previous_gop, previous_time = gop, t
    return [(float(start), int(count)) for start, count in runs]


def _split(items: list[int], parts: int) -> list[list[int]]:
    size, extra = divmod(len(items), parts)
    bounds = [n * size + min(n, extra) for n in range(parts + 1)]
    return [items[bounds[n] : bounds[n + 1]] for n in range(parts)]


@dataclass
class _Chunk:
    video: str
    outdir: str
    targets: list[int]  # grid indices, sorted
    placements: dict[int, list[str]]  # grid index -> the files (relative to outdir) it fills; the first is stored
    times: dict[int, float]  # target -> its time in seconds
    keyframes: list[float]
    frame_rate: float
    largest_gap: float  # seconds between the two furthest-apart consecutive frames (variable frame rate)
    seek_cost_frames: float
    from_start: bool  # the first chunk may decode from the stream's start; later ones begin with a seek
    max_side: int | None
    jpeg_quality: int
    decoder_threads: int
    max_pixels: int | None = None


@dataclass
class _ChunkResult:
    frames_decoded: int = 0
    frames_written: int = 0
    frame_size: list[int] | None = None
    runs: int = 0
    sequential: bool = True


def _extract_chunk(job: _Chunk) -> _ChunkResult:
    """Decode one chunk's runs and write its frames (in this process, or a worker process)."""
    import av

    result = _ChunkResult()
    outdir, video = Path(job.outdir), Path(job.video)

    def store(frame, index: int) -> None:
        image = _resize(frame.to_image(), job.max_side, job.max_pixels)
        result.frame_size = [image.width, image.height]
        first_name, *others = job.placements[index]
        first = outdir / first_name
        image.save(first, format="JPEG", quality=job.jpeg_quality)
        for name in others:
            _link(first, outdir / name)
        result.frames_written += 1

    if not job.targets:
        return result
    try:
        container = av.open(job.video)
    except av.error.FFmpegError as error:
        raise _video_error(f"{video}: cannot open as a video ({error})", error) from None
    with container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        stream.codec_context.thread_count = max(1, job.decoder_threads)
        start_pts = stream.start_time or 0
        first_keyframe = job.keyframes[0] if job.keyframes else 0.0
        runs = plan_runs([job.times[i] for i in job.targets], job.keyframes, job.frame_rate, job.seek_cost_frames, job.from_start)
        result.runs = len(runs)
        # The window spans at least two frame durations and the stream's largest gap between frames,
        # so the frame on screen at a timestamp is never skipped, however long it stays up.
        near_s = max(NEAR_TARGET_S, 2.0 / job.frame_rate, 2.0 * job.largest_gap) if job.frame_rate > 0 else float("inf")
        position = 0
        for run_start, run_count in runs:
            if run_start > first_keyframe:
                result.sequential = False
                # round, not truncate: a truncated pts lands one keyframe early and decodes a whole GOP for nothing
                try:
                    container.seek(start_pts + round(run_start / stream.time_base), stream=stream, backward=True, any_frame=False)
                except av.error.FFmpegError as error:
                    raise _video_error(f"{video}: seeking to {run_start:.2f} s failed ({error})", error) from None
            chunk_targets = job.targets[position : position + run_count]
            decoded = _decode_run(
                container,
                stream,
                start_pts=start_pts,
                targets=chunk_targets,
                store=store,
                video=video,
                skip_far=job.decoder_threads == 1,
                near_s=near_s,
                target_times=[job.times[i] for i in chunk_targets],
            )
            result.frames_decoded += decoded
            position += run_count
    return result


#: A frame whose presentation time is within this many seconds of the next target is always decoded;
#: further away, a single-threaded decoder skips frames no other frame references.
NEAR_TARGET_S = 0.5


def _decode_run(
    container,
    stream,
    *,
    start_pts: int,
    targets: list[int],
    store,
    video: Path,
    skip_far: bool = False,
    near_s: float = NEAR_TARGET_S,
    target_times: list[float] | None = None,
):
    """Decode forward from the current position and store the frame displayed at each target's time.

    Returns the number of frames decoded. The frame displayed at t is the last frame whose
    presentation time is <= t; a target before the first decoded frame takes that frame. With
    skip_far (only for a decoder without frame threads, where the setting applies to exactly the
    packet sent), non-reference frames far from the next target are not decoded: no frame the
    result depends on is among them.
    """
    import av

    next_target, previous, decoded = 0, None, 0
    context = stream.codec_context
    time_base = float(stream.time_base)

    if target_times is None:
        target_times = [grid_timestamp(i) for i in targets]

    def frames():
        if not skip_far:
            yield from container.decode(stream)
            return
        for packet in container.demux(stream):
            if packet.pts is not None:
                # Packets arrive in decode order, ahead of the frames coming out: a packet is near
                # when any target not yet served lies within near_s of its time.
                packet_time = (packet.pts - start_pts) * time_base
                at = bisect.bisect_left(target_times, packet_time - near_s, lo=next_target)
                near = at < len(target_times) and target_times[at] <= packet_time + near_s
                context.skip_frame = "DEFAULT" if near else "NONREF"
            yield from packet.decode()

    try:
        for frame in frames():
            decoded += 1
            if frame.pts is None:
                continue
            frame_time = (frame.pts - start_pts) * time_base
            # A frame presented exactly at t counts as displayed at t (1 ns absorbs float rounding).
            while next_target < len(targets) and target_times[next_target] < frame_time - 1e-9:
                store(previous if previous is not None else frame, targets[next_target])
                next_target += 1
            if next_target == len(targets):
                return decoded
            previous = frame
    except av.error.FFmpegError as error:
        raise _video_error(f"{video}: decoding failed after {decoded} frames ({error})", error) from None
    finally:
        context.skip_frame = "DEFAULT"
    if next_target < len(targets):
        last_time = (previous.pts - start_pts) * time_base if previous is not None else None
        missing_from = target_times[next_target]
        # The last frame stays on screen to the end; only a stream that stops more than a second
        # short of the needed time is broken.
        if last_time is None or missing_from - last_time > 1.0:
            raise FramesError(
                f"{video}: the stream ends at {last_time} s but the container states a longer duration; no frame for t = {missing_from} s"
            )
        for index in targets[next_target:]:
            store(previous, index)
    return decoded


def _clear(outdir: Path) -> None:
    """Remove what an earlier extraction left in `outdir`: level folders (digits only), a level folder's own frames
    (NNNN.jpg) and the manifest."""
    if not outdir.is_dir():
        return
    for child in outdir.iterdir():
        if child.is_dir() and child.name.isdigit():
            shutil.rmtree(child)
        elif child.name in (MANIFEST, f".{MANIFEST}.tmp") or (child.suffix == ".jpg" and child.stem.isdigit()):
            child.unlink()


#: What os.link raises on a file system without hard links (or with a per-file link limit): the frame is copied.
NO_HARD_LINKS = {errno.EPERM, errno.EXDEV, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS}


def _link(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError as error:
        if error.errno not in NO_HARD_LINKS:
            raise  # a full disk (no room for the entry), an I/O error: the disk's fault, not a reason to copy
        shutil.copyfile(source, target)


def _leftovers(outdir: Path) -> list[Path]:
    """Siblings an earlier run for `outdir` left when killed: its folder being written, or the one it replaced."""
    if not outdir.parent.is_dir():
        return []
    prefixes = (f".{outdir.name}.tmp-", f".{outdir.name}.old-")
    return [path for path in outdir.parent.iterdir() if path.name.startswith(prefixes)]


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@contextmanager
def complete_or_absent(outdir: str | Path):
    """A folder to write `outdir`'s contents into, renamed into place as `outdir` when the block ends normally and
    removed when it raises (or is stopped): `outdir` is never seen half written. An `outdir` already there is
    swapped out, not emptied in place. One run per `outdir` at a time (Snakemake's lock): what an earlier, killed
    run left beside it is removed first."""
    outdir = Path(outdir)
    outdir.parent.mkdir(parents=True, exist_ok=True)
    for leftover in _leftovers(outdir):
        _remove(leftover)
    staging = outdir.parent / f".{outdir.name}.tmp-{os.getpid()}"
    staging.mkdir()
    try:
        yield staging
        if outdir.exists() or outdir.is_symlink():
            old = outdir.parent / f".{outdir.name}.old-{os.getpid()}"
            os.rename(outdir, old)  # killed between the two renames: no outdir at all, and a leftover
            os.rename(staging, outdir)
            _remove(old)
        else:
            os.rename(staging, outdir)
    except BaseException:
        _remove(staging)
        raise


#: A level folder's record of what its frames were made from (the workflow's `--provenance`: the video's content
#: fingerprint and the frames options), beside its manifest: read when the DAG is built, so it is a file of its own.
PROVENANCE = "provenance.txt"


def read_provenance(folder: str | Path) -> str | None:
    """What the frames in `folder` were made from, as the job that wrote them was told; None where it was not told
    (an older version, the CLI without --provenance) or the folder is not there."""
    try:
        return (Path(folder) / PROVENANCE).read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def extract_or_record(video: str | Path, outdir: str | Path, on_error: str = "fail", provenance: str | None = None, **options) -> Manifest:
    """`extract` into a complete-or-absent `outdir`, or with on_error="record", a manifest holding the video's
    error and no frames. Only the video's own errors (FramesError: its container or stream cannot be read or decoded)
    are recorded; anything else raises, and `outdir` is left as it was: an environment error (support/faults.py: a
    full disk, a permission), a frame worker killed (WorkerDied), memory running out, or an error no one foresaw (a
    recorded error would count the video's items as wrong, and the rerun would never retry it). `provenance`: written
    beside the manifest (PROVENANCE), in the same complete-or-absent folder."""
    with complete_or_absent(outdir) as staging:
        if provenance:
            (staging / PROVENANCE).write_text(provenance + "\n", encoding="utf-8")
        try:
            return extract(video, staging, **options)
        except FramesError as error:
            if on_error != "record" or environment_error(error):
                raise
            _clear(staging)
            if provenance:
                (staging / PROVENANCE).write_text(provenance + "\n", encoding="utf-8")
            manifest = Manifest(
                video=str(video),
                error=str(error),
                settings=_settings(options.get("max_side"), options.get("jpeg_quality"), options.get("max_pixels")),
            )
            manifest.write(staging)
            return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.frames", description=__doc__.split("\n\n")[0])
    parser.add_argument("video")
    parser.add_argument("outdir")
    parser.add_argument("--levels", type=int, nargs="+", default=list(LEVELS))
    parser.add_argument("--max-side", type=int, default=None, help="shrink frames whose longer side exceeds this")
    parser.add_argument("--max-pixels", type=int, default=None, help="shrink frames whose width x height exceeds this (aspect kept)")
    parser.add_argument("--jpeg-quality", type=int, default=90)
    parser.add_argument("--threads", type=int, default=1, help="decoder threads")
    parser.add_argument(
        "--strategy",
        choices=sorted(STRATEGIES),
        default="auto",
        help="auto: seek or decode on, whichever the keyframe layout makes cheaper",
    )
    parser.add_argument(
        "--sampling",
        choices=SAMPLINGS,
        default="1fps",
        help="1fps: the 1 FPS grid (VirtueBench); clip: N segment centres over the whole clip; clip-capped: as clip, "
        "at most one frame per second of a shorter clip (LongVideoBench's loader)",
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=None,
        help="sample within the first DURATION seconds (the length the release states) where shorter than the video",
    )
    parser.add_argument(
        "--on-error",
        choices=("fail", "record"),
        default="fail",
        help="fail: exit 1 naming the video; record: write a manifest holding the error and exit 0",
    )
    parser.add_argument(
        "--level-folder",
        action="store_true",
        help="OUTDIR is the folder of the one level --levels names (results/frames/<video_id>/<level>/): its frames "
        "and a manifest of that level alone, written complete or not at all",
    )
    parser.add_argument(
        "--provenance",
        default=None,
        help=f"what the frames are made from (the workflow passes the video's fingerprint and the options): written to "
        f"OUTDIR/{PROVENANCE}, so that a later run can tell the frames there are the ones it would make",
    )
    args = parser.parse_args(argv)
    if args.level_folder and len(set(args.levels)) != 1:
        parser.error(f"--level-folder takes exactly one level, got --levels {' '.join(map(str, args.levels))}")
    if any(level <= 0 for level in args.levels):
        parser.error(f"--levels must be positive, got {args.levels}")
    if args.duration is not None and args.duration <= 0:
        parser.error(f"--duration must be positive, got {args.duration}")
    return run_stoppable(lambda stop: _run(args, stop))


def _failure_line(error: Exception, video: str, outdir: str) -> str:
    """One line for a failed extraction (nothing written to `outdir`), saying whose fault it is and what to do."""
    fault = environment_fault(error)
    if fault is not None:
        reading = fault.filename is not None and Path(str(fault.filename)) == Path(video)
        return describe(error, video if reading else outdir, "reading" if reading else "writing") or str(error)
    if isinstance(error, FramesError):
        return str(error)
    if isinstance(error, WorkerDied):
        return f"a frame worker of {outdir} was killed ({describe_exit(error.exitcode)}); rerun the same command"
    if isinstance(error, MemoryError):
        return f"out of memory while extracting the frames of {video} into {outdir}; free memory or run fewer jobs at once, and rerun the same command"
    return (
        f"{video}: {type(error).__name__}: {error} (an unforeseen error while extracting into {outdir}, not recorded as the "
        f"video's); rerun the same command, and report it if it comes again"
    )


def _run(args: argparse.Namespace, stop: Stop) -> int:
    stop.note = f"nothing was written to {args.outdir}; rerun the same command"
    try:
        manifest = extract_or_record(
            args.video,
            args.outdir,
            on_error=args.on_error,
            levels=args.levels,
            max_side=args.max_side,
            max_pixels=args.max_pixels,
            jpeg_quality=args.jpeg_quality,
            threads=args.threads,
            strategy=args.strategy,
            sampling=args.sampling,
            stated_duration_s=args.duration,
            level_folder=args.level_folder,
            provenance=args.provenance,
        )
    except Exception as error:
        print(f"error: {_failure_line(error, args.video, args.outdir)}", file=sys.stderr)
        return 1
    if manifest.error:
        print(f"ERROR: {manifest.error} (recorded in {Path(args.outdir) / MANIFEST})", file=sys.stderr)
    else:
        print(
            f"{args.video}: {manifest.duration_s:.1f} s, levels {sorted(int(k) for k in manifest.levels)} "
            f"(unavailable: {manifest.unavailable_levels}), {manifest.frames_decoded} frames decoded, "
            f"{manifest.frames_written} written in {manifest.seconds:.2f} s ({manifest.strategy})",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
