"""What a model is told about time: the level's frame times, from the frame manifest, in the forms the
model families expect (docs/models.md, "How time is told").

A level's frames are N points of the video's 1 FPS grid (T points, docs/frames.md). Families are told:
- Hugging Face and vLLM processors: video metadata (fps, frame indices, total frames, duration) on a
  clock of their own choosing. We give a clock fine enough that `index / fps` is each frame's
  manifest timestamp exactly (2 ticks a second for grid timestamps), over the T-second 1 FPS video the
  paper samples from, so that the sampled rate the processors derive, N / T frames a second, is what
  qwen-vl-utils computes for N frames taken from that video (Qwen2.5-VL: `second_per_grid_ts` =
  2 T / N; Qwen3-VL: `<t seconds>` = the manifest's timestamps, averaged over each temporal patch).
- Families that read time as text (LLaVA-Video, VideoChat-Flash, API models): the timestamps written
  in that family's own format.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from virtuebench.levels import grid_size

#: Clocks tried in order: the first on which every timestamp is a whole tick is used.
CLOCKS_HZ = (1, 2, 10, 100, 1000)


@dataclass(frozen=True)
class FrameTimes:
    """The level's frame times and the video they come from."""

    timestamps: tuple[float, ...]  # seconds, one per frame, increasing
    duration_s: float  # of the source video

    def __post_init__(self) -> None:
        if not self.timestamps:
            raise ValueError("FrameTimes needs at least one timestamp")
        if any(b <= a for a, b in zip(self.timestamps, self.timestamps[1:])):
            raise ValueError("frame timestamps must increase strictly")
        if not math.isfinite(self.duration_s) or self.duration_s <= 0:
            raise ValueError(f"video duration must be positive, got {self.duration_s!r}")

    @classmethod
    def of(cls, timestamps: Sequence[float], duration_s: float | None) -> FrameTimes:
        """From a manifest level; a video of unknown duration is taken to end half a second after its last frame."""
        timestamps = tuple(float(t) for t in timestamps)
        return cls(timestamps, float(duration_s) if duration_s else (timestamps[-1] + 0.5 if timestamps else 0.0))

    @property
    def n_frames(self) -> int:
        return len(self.timestamps)

    @property
    def extent_s(self) -> float:
        """Length of the video the frames were sampled from: the 1 FPS grid's T seconds (the full duration if shorter)."""
        return float(max(grid_size(self.duration_s), 1))

    @property
    def sampled_fps(self) -> float:
        """Frames per second of the level, N / T (qwen-vl-utils' `sample_fps` for N frames of a T-frame 1 FPS video)."""
        return self.n_frames / self.extent_s

    @property
    def spacing_s(self) -> float:
        """Seconds per frame, T / N."""
        return self.extent_s / self.n_frames

    @property
    def clock_hz(self) -> int:
        for hz in CLOCKS_HZ:
            if all(abs(t * hz - round(t * hz)) < 1e-6 for t in self.timestamps):
                return hz
        return CLOCKS_HZ[-1]  # millisecond ticks: off by at most half a millisecond

    def hf_metadata(self) -> dict[str, object]:
        """Keyword values of transformers' `VideoMetadata` (and vLLM's video metadata) for these frames."""
        hz = self.clock_hz
        return {
            "fps": float(hz),
            "frames_indices": [round(t * hz) for t in self.timestamps],
            "total_num_frames": max(round(self.extent_s * hz), round(self.timestamps[-1] * hz) + 1),
            "duration": self.duration_s,
        }


def clock_text(seconds: float) -> str:
    """m:ss (minutes past 59 as they are: 61:05), the frame label API models get and the curation's evidence format."""
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"
