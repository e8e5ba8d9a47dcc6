"""Source adapters: each turns one benchmark's release into the instances table (virtuebench.instances).

Only the synthetic demo source exists so far; real benchmarks and CVRR-ES plug in here by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from virtuebench.instances import Instance


def _synthetic(settings: dict[str, Any], videos_dir: str, threads: int) -> list[Instance]:
    from virtuebench.sources import synthetic

    return synthetic.generate(videos_dir, synthetic.SyntheticSettings.from_dict(settings), threads=threads)


#: name -> adapter(settings, videos_dir, threads) -> instances
ADAPTERS: dict[str, Callable[[dict[str, Any], str, int], list[Instance]]] = {
    "synthetic": _synthetic,
}
