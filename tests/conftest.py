"""Shared fixtures: the repository root, the shared/ folder beside it, and tiny generated videos."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest

from virtuebench.sources.synthetic import Event, VideoPlan, write_video

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def make_video(path: Path, duration_s: float, fps: Fraction | float = 8, events: list[Event] | None = None,
               width: int = 128, height: int = 72) -> VideoPlan:  # fmt: skip
    """Write a video whose frames carry their second's code; returns its plan."""
    fps = Fraction(fps).limit_denominator(1001)
    n_frames = round(duration_s * fps)
    plan = VideoPlan(path.stem, n_frames, fps, float(n_frames / fps), "orange", events or [], [])
    write_video(plan, path, width, height)
    return plan


@pytest.fixture(scope="session")
def video_factory(tmp_path_factory):
    cache: dict[tuple, Path] = {}
    root = tmp_path_factory.mktemp("videos")

    def factory(duration_s: float, fps: Fraction | float = 8, **kwargs) -> Path:
        key = (duration_s, Fraction(fps).limit_denominator(1001), tuple(sorted(kwargs.items())))
        if key not in cache:
            name = f"v{len(cache):02d}_{math.floor(duration_s)}s_{float(fps):.3f}fps".replace(".", "p") + ".mp4"
            make_video(root / name, duration_s, fps, **kwargs)
            cache[key] = root / name
        return cache[key]

    return factory
