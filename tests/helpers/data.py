"""Test data made on the fly: the repository root and the shared/ folder beside it, tiny generated videos, small
benchmarks, CVRR-ES releases in the authors' layout, and helpers to run a source's CLI or kill a job mid-way."""

from __future__ import annotations

import csv
import json
from fractions import Fraction
from pathlib import Path

from virtuebench.instances import Instance, read_instances
from virtuebench.sources.__main__ import main as sources_main
from virtuebench.sources.synthetic import Event, VideoPlan, write_video

REPO = Path(__file__).resolve().parents[2]
#: The scoring CLIs' trust and counting options at the workflow's defaults (config report.trust, report.invalid,
#: report.categories): `python -m virtuebench.metrics` and the report's table commands ask for each.
SCORING_DEFAULTS = (
    *("--trust-scheme", "kalai", "--confidence-target", "0.5", "--wrong-answer", "-1", "--unwarranted-refusal", "0"),
    *("--invalid", "wrong", "--categories", "{}"),
)
SHARED = REPO.parent / "shared"


def make_video(
    path: Path, duration_s: float, fps: Fraction | float = 8, events: list[Event] | None = None, width: int = 128, height: int = 72
) -> VideoPlan:
    """Write a video whose frames carry their second's code; returns its plan."""
    fps = Fraction(fps).limit_denominator(1001)
    n_frames = round(duration_s * fps)
    plan = VideoPlan(path.stem, n_frames, fps, float(n_frames / fps), "orange", events or [], [])
    write_video(plan, path, width, height)
    return plan


def _verdict(pred, score=3):
    return {"pred": pred, "score": score, "reason": "because"}


def write_release(root: Path, setting: str = "standard_prompting", model: str = "Tiny") -> Path:
    """Published CVRR-ES judge outputs for one model in the release layout: 2 items per dimension
    (one correct, one incorrect with an empty prediction and a nested verdict), plus one
    'partially correct' verdict in the first dimension."""
    from virtuebench.cvrr import DIMENSIONS

    folder = root / "Judge-results" / setting / model
    folder.mkdir(parents=True)
    for i, dimension in enumerate(DIMENSIONS):
        items = [[_verdict("correct"), {"q": "q1", "a": "a", "pred": "p"}], [[_verdict("incorrect")], {"q": "q2", "a": "a", "pred": ""}]]
        if i == 0:
            items.append([_verdict("partially correct"), {"q": "q3", "a": "a", "pred": "p"}])
        (folder / f"{dimension}.json").write_text(json.dumps(items))
    return root


def make_cvrr_release(root: Path) -> Path:
    """A two-dimension CVRR-ES release in its layout, with a missing video, a bad row and a short video."""
    partial, count = root / "partial_actions", root / "continuity_and_object_instance_count"
    partial.mkdir(parents=True)
    count.mkdir()
    make_video(partial / "121.mp4", 12.4, fps=10)
    make_video(partial / "122.mp4", 9.3, fps=10)
    make_video(count / "7.mp4", 5.2, fps=10)  # shorter than 8 s: kept, 8 frames over the whole clip
    (partial / "annotations_partial_actions.json").write_text(
        json.dumps(
            [
                {"VideoID": "121.mp4", "Q": "Does the man finish climbing?", "A": "No."},
                {"VideoID": "121.mp4", "Q": "What does he hold?", "A": "A rope."},
                {"VideoID": "122", "Q": "Is the door opened?", "A": "No, it stays closed."},
                {"VideoID": "404.mp4", "Q": "Where is it?", "A": "Nowhere."},
                {"VideoID": "121.mp4", "Q": "", "A": "bad row"},
            ]
        )
    )
    (count / "annotations_continuity_and_object_instance_count.json").write_text(
        json.dumps([{"VideoID": "7.mp4", "Q": "How many cups?", "A": "Two."}])
    )
    return root


def build_bench(root: Path, n_videos: int, max_duration_s: float, levels: list[int]) -> Path:
    """A small synthetic benchmark under `root`: videos, instances.parquet and frames for `levels`."""
    from virtuebench.frames import extract_or_record
    from virtuebench.instances import write_instances
    from virtuebench.sources.synthetic import SyntheticSettings, generate

    instances = generate(root / "videos", SyntheticSettings(n_videos=n_videos, max_duration_s=max_duration_s, width=128, height=72))
    write_instances(instances, root / "instances.parquet")
    for video_id, path in {i.video_id: i.video_path for i in instances}.items():
        extract_or_record(path, root / "frames" / video_id, levels=levels)
    return root


def make_frame_coded_video(path: Path, frame_times: list[float], gop: int, width: int = 128, height: int = 72) -> list[float]:
    """A video whose frame i shows code i and is presented at frame_times[i] (variable rate allowed).

    Returns the presentation times as the container stores them (millisecond time base).
    """
    import av
    import numpy as np

    from virtuebench.sources.synthetic import draw_second_code

    time_base = Fraction(1, 1000)
    pts = [round(t * 1000) for t in frame_times]
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libx264", rate=Fraction(30))
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.time_base = time_base
        stream.codec_context.time_base = time_base
        stream.options = {"preset": "veryfast", "g": str(gop), "keyint_min": str(gop), "sc_threshold": "0", "bf": "2"}
        pixels = np.full((height, width, 3), 90, np.uint8)
        for i, p in enumerate(pts):
            draw_second_code(pixels, i)
            frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
            frame.pts, frame.time_base = p, time_base
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return [p / 1000 for p in pts]


def kill_after_progress(
    command: list[str], env: dict, partial: Path, lines: int, timeout_s: float = 300, calls: Path | None = None
) -> None:
    """Start `command`, wait until its progress file holds `lines` lines, then kill -9 it. The deadline is only a
    guard against a hung job (it fails the test, never kills early): on a loaded machine the job may take long to
    start, and how many lines it writes before the kill is for the test to pin (RecordingBackend's hold_after). With
    `calls` (a test backend's log of the items it is asked, VB_TEST_HOLD_AFTER=lines), the kill waits until the
    backend has also logged the item it then holds: the item in flight at the kill is one, whatever the load."""
    import os
    import signal
    import subprocess
    import time

    process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout_s

    def ready() -> bool:
        if not partial.exists() or len(partial.read_text().splitlines()) < lines:
            return False
        return calls is None or (calls.exists() and len(calls.read_text().split()) > lines)

    while not ready():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            process.wait()
            raise AssertionError(f"{command[:3]} ended (exit {process.returncode}) or hung before writing {lines} progress lines")
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()


def excluded_reasons(excluded: list[dict[str, str]]) -> dict[str, str]:
    """A source report as item -> reason."""
    return {row["item"]: row["reason"] for row in excluded}


def convert_with_cli(source: str, raw: Path, work: Path, levels: tuple[int, ...] = (64,)) -> tuple[list[Instance], list[dict[str, str]]]:
    """`python -m virtuebench.sources SOURCE` in process: the instances read back and the report's rows."""
    out, excluded = work / "instances.parquet", work / "excluded.csv"
    settings = json.dumps({"raw_dir": str(raw), "levels": list(levels)})
    assert (
        sources_main([source, "--settings", settings, "--videos-dir", str(work / "videos"), "--out", str(out), "--excluded", str(excluded)])
        == 0
    )
    with open(excluded, newline="") as handle:
        return read_instances(out), list(csv.DictReader(handle))
