"""Source adapters: each turns one benchmark's release into the instances table (virtuebench.instances).

An adapter takes its settings, the folder for videos and a thread count, and returns the instances
and the items it had to leave out (a missing or unreadable video, a bad row) with the reason: a
broken item is reported, never allowed to break the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from virtuebench.instances import Instance
from virtuebench.support.registry import Registry
from virtuebench.support.settings import did_you_mean, settings_from_dict

Excluded = list[dict[str, str]]  # rows of base.EXCLUDED_COLUMNS: item, source, reason_kind, reason


def _is_source(module: Any) -> bool:
    return isinstance(module, ModuleType) and (callable(getattr(module, "adapter", None)) or hasattr(module, "RELEASE"))


#: source name -> its module (virtuebench.support.registry): the config's `source.name`, imported when first used. A
#: module is a source by its own `adapter(settings, videos_dir, threads)` -> (instances, excluded), with `SAMPLING` where
#: its levels are not VirtueBench's 1 fps grid (levels.SAMPLINGS) and `preview(settings)` where its settings tell its
#: instances before any job; or, a real source (REAL_SOURCES), by `RELEASE` and `convert` (virtuebench.sources.base),
#: which `adapter` wraps. A new source: its module and one line here (docs/extending.md).
SOURCES: Registry[ModuleType] = Registry(
    "source",
    {
        "synthetic": "virtuebench.sources.synthetic",
        "cvrr": "virtuebench.cvrr.source",  # CVRR-ES: its package holds its source too
        "mlvu": "virtuebench.sources.mlvu",
        "lvbench": "virtuebench.sources.lvbench",
        "longvideobench": "virtuebench.sources.longvideobench",
        "moviechat-1k": "virtuebench.sources.moviechat",
        "video-mme": "virtuebench.sources.videomme",
        "allvb": "virtuebench.sources.allvb",
        "videoeval-pro": "virtuebench.sources.videoevalpro",
    },
    expect=_is_source,
    expected="a source module (with adapter(settings, videos_dir, threads), or a RELEASE)",
)

#: The registered sources with a public release, read by their `RELEASE` and `convert`: the six long-video benchmarks
#: VirtueBench is built from (VirtueBench (arXiv:2603.07071), section 3.2), which config.curation.sources names, and
#: VideoEval-Pro, which is not one of them: the supplement's Table 1 compares against it (docs/videoevalpro.md). Named
#: here, not found by importing every module, so that listing them costs no import.
REAL_SOURCES: tuple[str, ...] = ("mlvu", "lvbench", "longvideobench", "moviechat-1k", "video-mme", "allvb", "videoeval-pro")


def real_source(name: str) -> ModuleType:
    """The module of a real source (one with a release: RELEASE, convert)."""
    if name not in REAL_SOURCES:
        raise ValueError(f"unknown source {name!r}; {did_you_mean(name, REAL_SOURCES)}known: {', '.join(REAL_SOURCES)}")
    module = SOURCES[name]
    if not hasattr(module, "RELEASE"):
        raise ValueError(f"source {name!r}: {SOURCES.target(name)} gives no RELEASE")
    return module


def adapter(name: str) -> Callable[[dict[str, Any], str, int], tuple[list[Instance], Excluded]]:
    """The source's adapter(settings, videos_dir, threads) -> (instances, excluded): its module's own, or, for a real
    source, its `convert` behind the settings of RealSourceSettings."""
    if name in REAL_SOURCES:
        return _real(name)
    return SOURCES[name].adapter


def preview_of(source: str, settings: dict[str, Any]) -> list[Instance] | None:
    """What the source's `preview(settings)` tells before any job: the instances its table will hold (the synthetic
    demo's, planned without writing a video), or None where only the table will tell (the real sources: their tables
    are read from the releases). It raises ValueError, naming the setting, where the settings can give no table
    (CVRR-ES: a folder without its annotation files)."""
    if source in REAL_SOURCES or source not in SOURCES:
        return None
    preview = getattr(SOURCES[source], "preview", None)
    return preview(settings) if preview else None


def sampling_of(source: str) -> str:
    """How the source's levels sample a video (levels.SAMPLINGS), which the frames stage follows: its module's
    `SAMPLING`, else VirtueBench's 1 fps grid (a real source's module is not imported to tell)."""
    if source in REAL_SOURCES or source not in SOURCES:
        return "1fps"
    return getattr(SOURCES[source], "SAMPLING", "1fps")


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
