"""Source adapters: each turns one benchmark's release into the instances table (virtuebench.instances).

An adapter takes its settings, the folder for videos and a thread count, and returns the instances
and the items it had to leave out (a missing or unreadable video, a bad row) with the reason: a
broken item is reported, never allowed to break the run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from virtuebench.instances import Instance

Excluded = list[dict[str, str]]  # rows of {"item", "reason"}


def _synthetic(settings: dict[str, Any], videos_dir: str, threads: int) -> tuple[list[Instance], Excluded]:
    from virtuebench.sources import synthetic

    return synthetic.generate(videos_dir, synthetic.SyntheticSettings.from_dict(settings), threads=threads), []


def _cvrr(settings: dict[str, Any], videos_dir: str, threads: int) -> tuple[list[Instance], Excluded]:
    from virtuebench.sources import cvrr

    return cvrr.load(cvrr.CvrrSettings.from_dict(settings), videos_dir)


#: name -> adapter(settings, videos_dir, threads) -> (instances, excluded)
ADAPTERS: dict[str, Callable[[dict[str, Any], str, int], tuple[list[Instance], Excluded]]] = {
    "synthetic": _synthetic,
    "cvrr": _cvrr,
}
