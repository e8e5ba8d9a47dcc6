"""Loading a level's JPEG frames for a model, within a pixel budget (the paper caps pixels per frame)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path


def fit_pixels(width: int, height: int, max_pixels: int | None) -> tuple[int, int]:
    """The largest size with the same aspect whose area is <= max_pixels (unchanged when it fits)."""
    if not max_pixels or width * height <= max_pixels:
        return width, height
    scale = math.sqrt(max_pixels / (width * height))
    return max(1, int(width * scale)), max(1, int(height * scale))


def load_frames(paths: Sequence[Path], max_pixels: int | None = None):
    """PIL images in RGB, each shrunk to fit max_pixels."""
    from PIL import Image

    images = []
    for path in paths:
        with Image.open(path) as image:
            image = image.convert("RGB")
            size = fit_pixels(image.width, image.height, max_pixels)
            images.append(image if size == image.size else image.resize(size, Image.Resampling.BICUBIC))
    return images
