"""Each model resolved once from its registry entry (virtuebench.models.spec.ModelSpec): its own keys split by the
rerun class config/models.schema.yaml gives each (`x-rerun`), its backend settings by its backend's settings
dataclass; and the stored frames' pixel cap the models' specs ask for."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from virtuebench.models.spec import ModelSpec, resolve_spec


@lru_cache(maxsize=8)
def setting_classes(config_dir: str | Path) -> dict[str, str]:
    """{key: rerun class} of a model registry entry's own keys, from the schema in `config_dir` (the workflow's config/:
    the Snakefile passes it, so an installed package reads the same schemas). How far a setting reaches:
    RERUN_CLASSES (virtuebench.support.settings)."""
    properties = yaml.safe_load((Path(config_dir) / "models.schema.yaml").read_text())["properties"]
    return {name: spec.get("x-rerun") for name, spec in properties.items()}


def model_spec(name: str, entry: dict[str, Any], config_dir: str | Path) -> ModelSpec:
    """A registry entry resolved (virtuebench.models.spec), its own keys classified by the schema in `config_dir`."""
    return resolve_spec(name, entry, setting_classes(config_dir))


def frame_storage_pixels(specs: list[ModelSpec]) -> int | None:
    """The stored frames' pixel cap for `frames.max_pixels: auto`: the largest per-frame cap among the models (the
    setting each backend declares as its cap: ModelSpec.frame_pixels), so that each can shrink to its own; None
    (source size) when no model states one."""
    return max((spec.frame_pixels for spec in specs if spec.frame_pixels), default=None)


def frame_size_warnings(frame_pixels: int | None, specs: list[ModelSpec]) -> list[str]:
    """A model whose own pixel cap is above the stored frames' sees smaller frames than its authors' code gives it."""
    if frame_pixels is None:
        return []
    return [
        f"config.models: {spec.name}'s max_pixels {spec.frame_pixels} is above the stored frames' cap config.frames.max_pixels "
        f"{frame_pixels}: it sees frames of at most {frame_pixels} pixels; raise frames.max_pixels to give it its own (every "
        "video's frames are then extracted again)"
        for spec in specs
        if spec.frame_pixels and spec.frame_pixels > frame_pixels
    ]
