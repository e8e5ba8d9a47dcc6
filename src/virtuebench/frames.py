"""Frame extraction: one video in, one JPEG folder per available level and a manifest out.

The levels' timestamps come from virtuebench.levels. The frame written for timestamp t is the
frame displayed at t: the last decoded frame whose presentation time is <= t (the first frame
for a t before it). One decode pass serves all levels, and a frame shared by several levels is
written once and hard-linked into the other levels' folders.

CLI: python -m virtuebench.frames VIDEO OUTDIR --levels 64 128 256 512 1024
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from virtuebench import LEVELS
from virtuebench.levels import available_levels, grid_size, grid_timestamp, level_indices

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "virtuebench.frames/1"


class FramesError(RuntimeError):
    """A video could not be turned into frames; the message starts with the video's path."""


@dataclass
class LevelFrames:
    timestamps: list[float]
    grid_indices: list[int]
    files: list[str]  # relative to the manifest's folder


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
    frames_decoded: int = 0
    frames_written: int = 0
    seconds: float = 0.0
    error: str | None = None
    format: str = MANIFEST_FORMAT

    def write(self, outdir: Path) -> None:
        tmp = outdir / f".{MANIFEST}.tmp"
        tmp.write_text(json.dumps(asdict(self), indent=1) + "\n")
        tmp.replace(outdir / MANIFEST)

    @classmethod
    def read(cls, outdir: str | Path) -> Manifest:
        path = Path(outdir) / MANIFEST
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise FramesError(f"{path}: frame manifest not found") from None
        except json.JSONDecodeError as error:
            raise FramesError(f"{path}: not valid JSON ({error.msg})") from None
        if data.get("format") != MANIFEST_FORMAT:
            raise FramesError(f"{path}: format {data.get('format')!r} is not {MANIFEST_FORMAT!r}")
        data["levels"] = {key: LevelFrames(**value) for key, value in data.get("levels", {}).items()}
        return cls(**data)

    def frame_paths(self, outdir: str | Path, level: int) -> list[Path]:
        return [Path(outdir) / name for name in self.levels[str(level)].files]


def _duration_s(container, stream) -> float:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / 1_000_000
    raise FramesError("the container states no duration")


def _resize(image, max_side: int | None):
    from PIL import Image

    if not max_side or max(image.size) <= max_side:
        return image
    scale = max_side / max(image.size)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return image.resize(size, Image.Resampling.BICUBIC)


def extract(
    video: str | Path,
    outdir: str | Path,
    levels: list[int] | tuple[int, ...] = LEVELS,
    max_side: int | None = None,
    jpeg_quality: int = 90,
    threads: int = 1,
) -> Manifest:
    """Write the frames of every available level of `video` under `outdir`; raise FramesError if it cannot."""
    import av

    started = time.monotonic()
    video, outdir = Path(video), Path(outdir)
    manifest = Manifest(video=str(video), settings={"max_side": max_side, "jpeg_quality": jpeg_quality})
    if not video.is_file():
        raise FramesError(f"{video}: video file not found")
    try:
        container = av.open(str(video))
    except av.error.FFmpegError as error:
        raise FramesError(f"{video}: cannot open as a video ({error})") from None
    with container:
        if not container.streams.video:
            raise FramesError(f"{video}: holds no video stream")
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        stream.codec_context.thread_count = max(1, threads)
        duration = _duration_s(container, stream)
        manifest.duration_s = duration
        manifest.grid_size = grid_size(duration)
        manifest.fps = float(stream.average_rate) if stream.average_rate else None
        manifest.source_size = [stream.codec_context.width, stream.codec_context.height]
        kept = available_levels(duration, levels)
        manifest.unavailable_levels = sorted(set(levels) - set(kept))

        # Which grid index goes to which (level, position), and where it is stored first.
        placements: dict[int, list[tuple[int, int]]] = {}
        for level in kept:
            indices = level_indices(level, duration)
            manifest.levels[str(level)] = LevelFrames(
                timestamps=[grid_timestamp(i) for i in indices],
                grid_indices=indices,
                files=[f"{level}/{position:04d}.jpg" for position in range(level)],
            )
            for position, index in enumerate(indices):
                placements.setdefault(index, []).append((level, position))
        for level in kept:
            (outdir / str(level)).mkdir(parents=True, exist_ok=True)

        targets = sorted(placements)
        start_pts = stream.start_time or 0
        next_target, previous, decoded = 0, None, 0

        def store(frame, index: int) -> None:
            image = _resize(frame.to_image(), max_side)
            manifest.frame_size = [image.width, image.height]
            (first_level, first_position), *others = placements[index]
            first = outdir / f"{first_level}/{first_position:04d}.jpg"
            image.save(first, format="JPEG", quality=jpeg_quality)
            for level, position in others:
                _link(first, outdir / f"{level}/{position:04d}.jpg")
            manifest.frames_written += 1

        try:
            for frame in container.decode(stream):
                decoded += 1
                if frame.pts is None:
                    continue
                frame_time = float((frame.pts - start_pts) * stream.time_base)
                while next_target < len(targets) and grid_timestamp(targets[next_target]) < frame_time:
                    store(previous if previous is not None else frame, targets[next_target])
                    next_target += 1
                if next_target == len(targets):
                    break
                previous = frame
        except av.error.FFmpegError as error:
            raise FramesError(f"{video}: decoding failed after {decoded} frames ({error})") from None
        manifest.frames_decoded = decoded
        if next_target < len(targets):
            last_time = float((previous.pts - start_pts) * stream.time_base) if previous is not None else None
            missing_from = grid_timestamp(targets[next_target])
            # The last frame stays on screen to the end; only a stream that stops more than a
            # second short of the stated duration is broken.
            if last_time is None or missing_from - last_time > 1.0:
                raise FramesError(
                    f"{video}: the stream ends at {last_time} s but the container states {duration:.2f} s; "
                    f"no frame for t = {missing_from} s"
                )
            for index in targets[next_target:]:
                store(previous, index)
    manifest.seconds = round(time.monotonic() - started, 3)
    manifest.write(outdir)
    return manifest


def _link(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # a filesystem without hard links
        shutil.copyfile(source, target)


def extract_or_record(video: str | Path, outdir: str | Path, on_error: str = "fail", **options) -> Manifest:
    """`extract`, or with on_error="record", a manifest holding the error and no frames."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    try:
        return extract(video, outdir, **options)
    except FramesError as error:
        if on_error != "record":
            raise
        for child in outdir.iterdir():
            if child.is_dir():
                shutil.rmtree(child)
        manifest = Manifest(video=str(video), error=str(error), settings={k: options.get(k) for k in ("max_side", "jpeg_quality")})
        manifest.write(outdir)
        return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m virtuebench.frames", description=__doc__.split("\n\n")[0])
    parser.add_argument("video")
    parser.add_argument("outdir")
    parser.add_argument("--levels", type=int, nargs="+", default=list(LEVELS))
    parser.add_argument("--max-side", type=int, default=None, help="shrink frames whose longer side exceeds this")
    parser.add_argument("--jpeg-quality", type=int, default=90)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--on-error",
        choices=("fail", "record"),
        default="fail",
        help="fail: exit 1 naming the video; record: write a manifest holding the error and exit 0",
    )
    args = parser.parse_args(argv)
    if any(level <= 0 for level in args.levels):
        parser.error(f"--levels must be positive, got {args.levels}")
    try:
        manifest = extract_or_record(
            args.video,
            args.outdir,
            on_error=args.on_error,
            levels=args.levels,
            max_side=args.max_side,
            jpeg_quality=args.jpeg_quality,
            threads=args.threads,
        )
    except FramesError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if manifest.error:
        print(f"ERROR: {manifest.error} (recorded in {Path(args.outdir) / MANIFEST})", file=sys.stderr)
    else:
        print(
            f"{args.video}: {manifest.duration_s:.1f} s, levels {sorted(int(k) for k in manifest.levels)} "
            f"(unavailable: {manifest.unavailable_levels}), {manifest.frames_decoded} frames decoded, "
            f"{manifest.frames_written} written in {manifest.seconds:.2f} s",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
