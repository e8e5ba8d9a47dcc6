"""Loading a level's JPEG frames for a model, within a pixel budget (the paper caps pixels per frame)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from virtuebench.frames import fit_pixels


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
