"""Frame extraction at paper scale: cost should grow with the frames kept, not with the video's length.

Generates long test videos (a one-hour 640x360 and a ten-minute 1920x1080, each with 2 s and 10 s
keyframe intervals, 25 fps, H.264 with B-frames) and measures, each in a fresh process:
  - virtuebench.frames for all five levels together, and for 64 frames alone (wall time, frames
    decoded, peak memory of the largest process, strategy chosen);
  - a plain `ffmpeg -i V -vf fps=1` pass writing JPEGs (the ffmpeg binary of imageio-ffmpeg);
  - decoding every frame with PyAV.

    pip install -e ".[bench]"
    python tools/bench_frames.py [--cache DIR] [--threads 2] [--out build/frames_benchmark.md]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

VIDEOS = [  # name, seconds, width, height, keyframe interval (s)
    ("1h-640x360-gop2s", 3600, 640, 360, 2),
    ("1h-640x360-gop10s", 3600, 640, 360, 10),
    ("10min-1920x1080-gop2s", 600, 1920, 1080, 2),
    ("10min-1920x1080-gop10s", 600, 1920, 1080, 10),
]
FPS = 25
LEVELS = [64, 128, 256, 512, 1024]


def generate(path: Path, seconds: int, width: int, height: int, gop_s: int) -> None:
    """Moving content with the second's code in every frame, so frames differ and compress like video."""
    import av
    import numpy as np

    from virtuebench.sources.synthetic import draw_second_code

    tmp = path.with_suffix(".tmp.mp4")
    y, x = np.mgrid[0:height, 0:width]
    base = ((x * 255 // width)[..., None] * np.array([1, 0, 0]) + (y * 255 // height)[..., None] * np.array([0, 1, 0])).astype(np.uint8)
    with av.open(str(tmp), mode="w") as container:
        stream = container.add_stream("libx264", rate=Fraction(FPS))
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        g = str(gop_s * FPS)
        stream.options = {"preset": "veryfast", "crf": "28", "g": g, "keyint_min": g, "sc_threshold": "0", "bf": "3"}
        bar = max(8, width // 20)
        for i in range(seconds * FPS):
            pixels = base.copy()
            left = (i * 7) % (width - bar)
            pixels[:, left : left + bar] = (230, 230, 60)
            draw_second_code(pixels, (i // FPS) % 4096)
            frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
            frame.pts = i
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    tmp.replace(path)


def _child(code: str) -> dict:
    """Run `code` in a fresh interpreter; it prints one JSON line. Adds wall time and peak memory."""
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    wall = time.monotonic() - started
    result = json.loads(run.stdout.strip().splitlines()[-1])
    result["wall_s"] = round(wall, 2)
    return result


def measure_extract(video: Path, levels: list[int], threads: int) -> dict:
    out = tempfile.mkdtemp()
    try:
        return _child(
            "import json, resource; from virtuebench.frames import extract; "
            f"m = extract({str(video)!r}, {out!r}, levels={levels}, threads={threads}); "
            "print(json.dumps({'frames_decoded': m.frames_decoded, 'frames_written': m.frames_written, "
            "'strategy': m.strategy, 'peak_mib': max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) // 1024}))"
        )
    finally:
        shutil.rmtree(out)


def measure_ffmpeg_fps1(video: Path, threads: int) -> dict:
    import imageio_ffmpeg

    out = tempfile.mkdtemp()
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        started = time.monotonic()
        subprocess.run(
            [
                imageio_ffmpeg.get_ffmpeg_exe(),
                "-v",
                "error",
                "-threads",
                str(threads),
                "-i",
                str(video),
                "-vf",
                "fps=1",
                "-q:v",
                "3",
                f"{out}/%05d.jpg",
            ],
            check=True,
        )
        wall = time.monotonic() - started
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        return {"wall_s": round(wall, 2), "frames_written": len(os.listdir(out)), "peak_mib": max(peak, before) // 1024}
    finally:
        shutil.rmtree(out)


def measure_decode_all(video: Path, threads: int) -> dict:
    return _child(
        "import json, resource, av; c = av.open(" + repr(str(video)) + "); s = c.streams.video[0]; "
        f"s.thread_type = 'AUTO'; s.codec_context.thread_count = {threads}; n = sum(1 for _ in c.decode(s)); "
        "print(json.dumps({'frames_decoded': n, 'peak_mib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))"
    )


def median_run(measure, repeats: int) -> dict:
    """The run with the median wall time of `repeats` runs (the fps=1 baseline varies between runs)."""
    runs = sorted((measure() for _ in range(max(1, repeats))), key=lambda r: r["wall_s"])
    result = dict(runs[len(runs) // 2])
    result["wall_s_range"] = f"{runs[0]['wall_s']}-{runs[-1]['wall_s']}"
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "virtuebench-bench-videos"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", help="also write the table (Markdown) here")
    parser.add_argument("--only", nargs="*", help="names of the videos to measure (default: all)")
    parser.add_argument("--generate-only", action="store_true", help="write the test videos and stop")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement; the median is reported")
    args = parser.parse_args()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, seconds, width, height, gop in VIDEOS:
        if args.only and name not in args.only:
            continue
        video = cache / f"{name}.mp4"
        if not video.exists():
            started = time.monotonic()
            generate(video, seconds, width, height, gop)
            print(f"generated {video} in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
        if args.generate_only:
            continue
        fps1 = median_run(lambda video=video: measure_ffmpeg_fps1(video, args.threads), args.repeats)
        every = median_run(lambda video=video: measure_decode_all(video, args.threads), args.repeats)
        for label, levels in (("all five levels", LEVELS), ("64 frames", [64])):
            ours = median_run(lambda video=video, levels=levels: measure_extract(video, levels, args.threads), args.repeats)
            rows.append(
                {
                    "video": name,
                    "task": label,
                    **ours,
                    "fps1_s": fps1["wall_s"],
                    "decode_all_s": every["wall_s"],
                    "x_vs_fps1": round(fps1["wall_s"] / ours["wall_s"], 1),
                    "x_vs_decode_all": round(every["wall_s"] / ours["wall_s"], 1),
                    "fps1_peak_mib": fps1["peak_mib"],
                    "decode_all_frames": every["frames_decoded"],
                    "fps1_range": fps1["wall_s_range"],
                    "ours_range": ours["wall_s_range"],
                }
            )
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    if args.generate_only:
        return 0
    header = (
        "| video | task | strategy | wall (s) | frames decoded | of all | peak MiB | ffmpeg fps=1 (s) | decode all (s) "
        "| x vs fps=1 | x vs decode all |\n|---|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [header] + [
        f"| {r['video']} | {r['task']} | {r['strategy']} | {r['wall_s']} | {r['frames_decoded']} | {r['decode_all_frames']} | "
        f"{r['peak_mib']} | {r['fps1_s']} | {r['decode_all_s']} | {r['x_vs_fps1']} | {r['x_vs_decode_all']} |"
        for r in rows
    ]
    table = "\n".join(lines)
    print(table)
    if args.out:
        Path(args.out).write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
