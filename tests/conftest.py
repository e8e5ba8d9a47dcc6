"""Fixtures shared by the test files. Helpers the tests import live in tests/helpers/ (data, tiny models, stand-ins,
a fake OpenAI server, test backends)."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest
from helpers.data import make_video


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


def pytest_collection_modifyitems(config, items):
    """The files that run Snakemake end to end (marked `workflow`: tens of seconds each) first, every file's tests in
    the order pytest-randomly's seed gave them. `make test` hands out whole files to its workers in this order (--dist loadfile
    --no-loadscope-reorder), so the long files start at once and the short ones fill the gaps after them; in
    xdist's default order (most tests first) the long files, which have few tests, came last and one worker ran
    them alone at the end."""
    heavy = {item.path for item in items if item.get_closest_marker("workflow")}
    # pytest-randomly has shuffled the files and each file's tests before this hook (its wrapper runs first); the
    # stable sort below keeps its order within the two groups, so a seed replays the same order.
    items.sort(key=lambda item: item.path not in heavy)  # stable: the order within a file is kept
