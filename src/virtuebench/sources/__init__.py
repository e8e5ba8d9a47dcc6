"""Source adapters: each turns one benchmark's release into the instances table (virtuebench.instances).

An adapter takes its settings, the folder for videos and a thread count, and returns the instances
and the items it had to leave out (a missing or unreadable video, a bad row) with the reason: a
broken item is reported, never allowed to break the run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from virtuebench.instances import Instance
from virtuebench.support.settings import settings_from_dict

Excluded = list[dict[str, str]]  # rows of base.EXCLUDED_COLUMNS: item, source, reason_kind, reason


@dataclass(frozen=True)
class Adapter:
    """A source registered by its module, imported when first called: the module's `adapter(settings, videos_dir,
    threads)` returns (instances, excluded); `sampling` is how the source's levels sample a video (levels.SAMPLINGS),
    which the frames stage follows."""

    module: str
    sampling: str = "1fps"

    def __call__(self, settings: dict[str, Any], videos_dir: str, threads: int) -> tuple[list[Instance], Excluded]:
        return importlib.import_module(self.module).adapter(settings, videos_dir, threads)

    def preview(self, settings: dict[str, Any]) -> list[Instance] | None:
        """What the module's `preview(settings)` tells before any job: the instances its table will hold (the synthetic
        demo's, planned without writing a video), or None where only the table will tell; it raises ValueError, naming
        the setting, where the settings can give no table (CVRR-ES: a folder without its annotation files)."""
        preview = getattr(importlib.import_module(self.module), "preview", None)
        return preview(settings) if preview else None


def preview_of(source: str, settings: dict[str, Any]) -> list[Instance] | None:
    """The instances the source's table will hold, as far as its settings tell before any job (Adapter.preview); None
    where they do not (the real sources: their tables are read from the releases)."""
    adapter = ADAPTERS.get(source)
    return adapter.preview(settings) if isinstance(adapter, Adapter) else None


def sampling_of(source: str) -> str:
    return getattr(ADAPTERS.get(source), "sampling", "1fps")


#: The six public long-video benchmarks VirtueBench is built from (VirtueBench (arXiv:2603.07071), section 3.2), and VideoEval-Pro: source name ->
#: adapter module in this package (its interface is described in virtuebench.sources.base).
REAL_SOURCES = {
    "mlvu": "mlvu",
    "lvbench": "lvbench",
    "longvideobench": "longvideobench",
    "moviechat-1k": "moviechat",
    "video-mme": "videomme",
    "allvb": "allvb",
    # Not one VirtueBench is built from: the supplement's Table 1 compares against it (docs/videoevalpro.md).
    "videoeval-pro": "videoevalpro",
}


def real_source(name: str) -> ModuleType:
    if name not in REAL_SOURCES:
        raise ValueError(f"unknown source {name!r}; known: {', '.join(REAL_SOURCES)}")
    return importlib.import_module(f"virtuebench.sources.{REAL_SOURCES[name]}")


@dataclass(frozen=True)
class RealSourceSettings:
    """Settings of the real sources: the downloaded release and the levels to build."""

    raw_dir: str
    levels: tuple[int, ...] | None = None
    #: which levels a video has: "1fps" (VirtueBench's grid) or "clip" (N frames over any video; the supplement);
    #: base.Conversion checks it
    sampling: str = "1fps"
    #: a question's video length: "probed" from the file, or "release": the length the release states (LongVideoBench's
    #: `duration`, which its loader samples within; supplement.longvideobench_subtitles: interleaved)
    durations: str = "probed"
    #: the adapter's own choices, as keyword arguments of its `convert` (moviechat-1k: include_breakpoint, set from
    #: config.curation.moviechat_breakpoint); a name its `convert` does not take is an error
    options: dict[str, Any] = field(default_factory=dict)


#: Keyword arguments of an adapter's `convert` that are settings of their own (RealSourceSettings), not options.
_SETTINGS_KEYWORDS = ("sampling", "durations")


def convert_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """`options` checked against the keyword-only parameters of the source's `convert` (sampling and durations aside:
    settings of their own)."""
    import inspect

    parameters = inspect.signature(real_source(name).convert).parameters.values()
    accepted = sorted(p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in _SETTINGS_KEYWORDS)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ValueError(f"{name} source: unknown option(s) {unknown}; its convert takes {accepted or 'none'}")
    return options


def _real(name: str) -> Callable[[dict[str, Any], str, int], tuple[list[Instance], Excluded]]:
    def adapter(settings: dict[str, Any], videos_dir: str, threads: int) -> tuple[list[Instance], Excluded]:
        from pathlib import Path

        from virtuebench.levels import LEVELS

        given = settings_from_dict(RealSourceSettings, settings, f"{name} source (raw_dir: the downloaded release)")
        raw_dir = Path(given.raw_dir)
        if not raw_dir.is_dir():
            raise ValueError(f"{name} source: raw_dir {raw_dir} is not a folder (download the release first)")
        module = real_source(name)
        levels = list(given.levels or LEVELS)
        options = convert_options(name, given.options)
        if given.durations == "probed":
            return module.convert(raw_dir, Path(videos_dir), levels, sampling=given.sampling, **options)
        states = getattr(module, "STATES_DURATIONS", False)  # the release states each video's length
        if given.durations != "release" or not states:
            raise ValueError(f"{name} source: durations {given.durations!r} is not one of probed{', release' if states else ''}")
        return module.convert(raw_dir, Path(videos_dir), levels, sampling=given.sampling, durations=given.durations, **options)

    return adapter


#: name -> adapter(settings, videos_dir, threads) -> (instances, excluded): the one list of sources (the config's
#: source.name takes its allowed values from it). A new source: its module and one line here (docs/extending.md).
ADAPTERS: dict[str, Callable[[dict[str, Any], str, int], tuple[list[Instance], Excluded]]] = {
    "synthetic": Adapter("virtuebench.sources.synthetic"),
    "cvrr": Adapter("virtuebench.cvrr.source", sampling="clip"),  # CVRR-ES: its package holds its source too
    **{name: _real(name) for name in REAL_SOURCES},
}
