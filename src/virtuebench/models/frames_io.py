"""Loading a level's JPEG frames for a model, within a pixel budget (the paper caps pixels per frame)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from virtuebench.frames import fit_pixels, read_frame


def load_frames(paths: Sequence[Path], max_pixels: int | None = None):
    """PIL images in RGB, each shrunk to fit max_pixels; frames.BadFrame naming a file that cannot be read."""
    from PIL import Image

    images = []
    for path in paths:
        image = read_frame(path)
        size = fit_pixels(image.width, image.height, max_pixels)
        images.append(image if size == image.size else image.resize(size, Image.Resampling.BICUBIC))
    return images
