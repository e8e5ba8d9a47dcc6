"""The paper's frame-level rule, made exact, and the per-level ground truth it implies.

A video of duration D seconds is first downsampled to 1 FPS: the grid has T = floor(D) points at
t_k = k + 0.5 s (the middle of each whole second). Level N takes the grid indices
round(linspace(0, T - 1, N)) and is unavailable when N > T. An evidence interval [start, end) is
seen at a level when at least one of the level's timestamps falls inside it; a question is
answerable at a level when every one of its evidence intervals is seen there.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from virtuebench import REFUSAL_ANSWER

#: The paper's frame levels.
LEVELS = (64, 128, 256, 512, 1024)


def grid_size(duration_s: float) -> int:
    """Number of points on the 1 FPS grid of a video lasting `duration_s` seconds."""
    if not math.isfinite(duration_s) or duration_s < 0:
        raise ValueError(f"duration_s must be a finite, non-negative number, got {duration_s!r}")
    return int(math.floor(duration_s + 1e-9))


def grid_timestamp(index: int) -> float:
    """Time in seconds of grid point `index` (the middle of that second)."""
    return index + 0.5


def is_available(level: int, duration_s: float) -> bool:
    """A level exists for a video when the 1 FPS grid has at least `level` points."""
    return 0 < level <= grid_size(duration_s)


def available_levels(duration_s: float, levels: Iterable[int]) -> list[int]:
    return sorted(level for level in levels if is_available(level, duration_s))


def level_indices(level: int, duration_s: float) -> list[int]:
    """Grid indices sampled at `level`: round(linspace(0, T - 1, level)), strictly increasing."""
    size = grid_size(duration_s)
    if level <= 0:
        raise ValueError(f"level must be positive, got {level}")
    if level > size:
        raise ValueError(f"level {level} is unavailable for a video of {duration_s:g} s (grid of {size} points)")
    # numpy rounds half to even; with level <= size the spacing is >= 1 so indices stay distinct.
    return [int(i) for i in np.rint(np.linspace(0, size - 1, level))]


def level_timestamps(level: int, duration_s: float) -> list[float]:
    return [grid_timestamp(i) for i in level_indices(level, duration_s)]


#: How a level's frames are placed in time: `1fps` (VirtueBench: uniform over the video's 1 FPS grid, so a
#: level needs a video of at least that many seconds) or `clip` (CVRR-ES and most short-video benchmarks'
#: own inference code: N frames at the centres of N equal segments of the whole clip, any clip length).
#: `clip-capped`: as `clip`, but a clip shorter than N seconds gets one frame per whole second of it (N' =
#: min(N, floor(T)), at least 1), as LongVideoBench's loader caps its frames at the duration
#: (`num_frames = min(max_num_frames, int(duration))`); `clip` shows such a clip N frames less than 1 s apart.
SAMPLINGS = ("1fps", "clip", "clip-capped")
CLIP_SAMPLINGS = ("clip", "clip-capped")


def sampled_levels(duration_s: float, levels: Iterable[int], sampling: str = "1fps") -> list[int]:
    """The levels a video of `duration_s` seconds has under `sampling`."""
    if sampling in CLIP_SAMPLINGS:
        return sorted(level for level in levels if level > 0) if duration_s > 0 else []
    return available_levels(duration_s, levels)


def clip_frame_count(level: int, duration_s: float, sampling: str) -> int:
    """How many frames level `level` shows of a clip of `duration_s` seconds under a clip sampling."""
    if sampling == "clip-capped":
        return max(1, min(level, math.floor(duration_s)))
    return level


def clip_timestamps(level: int, duration_s: float) -> list[float]:
    """N frames over the whole clip: the centre of each of N equal segments ((k + 0.5) * T / N), as the
    segment sampling of VideoChat / InternVideo (`get_index`) and Video-ChatGPT-style loaders do."""
    if level <= 0 or duration_s <= 0:
        raise ValueError(f"clip sampling needs a positive level and duration, got {level} and {duration_s}")
    return [round((k + 0.5) * duration_s / level, 3) for k in range(level)]


def interval_is_seen(interval: Sequence[float], timestamps: Sequence[float]) -> bool:
    start, end = float(interval[0]), float(interval[1])
    return any(start <= t < end for t in timestamps)


def evidence_is_seen(evidence: Sequence[Sequence[float]], timestamps: Sequence[float]) -> bool:
    """True when every evidence interval holds at least one sampled timestamp.

    Empty evidence means "nothing is known about where the evidence is": it is not treated as
    seen, so such questions get their per-level answers from annotation, not from this rule.
    """
    if len(evidence) == 0:
        return False
    return all(interval_is_seen(interval, timestamps) for interval in evidence)


def answers_by_level(answer: str, evidence: Sequence[Sequence[float]], duration_s: float, levels: Iterable[int]) -> dict[int, str]:
    """Per-level ground truth: the answer where the evidence is seen, the refusal string elsewhere."""
    return {
        level: answer if evidence_is_seen(evidence, level_timestamps(level, duration_s)) else REFUSAL_ANSWER
        for level in available_levels(duration_s, levels)
    }
