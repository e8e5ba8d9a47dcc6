"""Model backends behind one interface (virtuebench.models.base.Backend), picked by name from config.

A model's `backend` in the registry is a name in BACKENDS (virtuebench.models.backends), or `package.module:Class`
for a backend that lives outside this package. The class is the entry: it declares its settings dataclass (each setting's rerun class
beside it), the setting that caps a frame's pixels and what its route's environment must import (models/base.py),
and the config's schema, the jobs' tracked params (models/spec.py) and the env check (environments.py) read them
there. A backend module imports only the standard library and this package at its top: torch, transformers and vLLM
are imported when a backend is built, so they are needed only by the jobs that run such models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from virtuebench.models.backends import BACKENDS, backend_class
from virtuebench.models.base import DETERMINISTIC, UNSEEDED, Backend, Reply, Request

if TYPE_CHECKING:
    from virtuebench.models.spec import ModelSpec

__all__ = ["BACKENDS", "Backend", "Reply", "Request", "backend_class", "load_backend"]


def samples_check(model: str, entry: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(problems, warnings) of a registry entry's `samples` (the runs of each item, docs/statistics.md): more than one
    run of a backend whose settings decode deterministically (greedy decoding, a rule) repeats one answer N times,
    which is an error; of a backend that samples with no seed, a warning (a rerun does not repeat its runs)."""
    samples = entry.get("samples", 1)
    if samples == 1:
        return [], []
    try:
        decoding = backend_class(entry["backend"]).decoding(dict(entry.get("settings") or {}))
    except ValueError:  # a backend of its own environment, or settings its own check refuses: said elsewhere
        return [], []
    if decoding == DETERMINISTIC:
        return [
            f"{model}: samples: {samples}, but backend {entry['backend']} decodes deterministically with these settings (greedy "
            "decoding or a rule): every run would give the same answer. Set its settings to sample (transformers: "
            "generation.do_sample: true; vllm, openai: temperature > 0), or samples: 1"
        ], []
    if decoding == UNSEEDED:
        return [], [f"{model}: samples: {samples} with no seed: its runs differ, but a rerun does not repeat them"]
    return [], []


def load_backend(spec: ModelSpec) -> Backend:
    """The spec's backend, built from the spec (`Backend.from_spec`); where it loaded weights, their commit as the spec
    resolves it (models/weights.py), with the folder it loaded them from where it names one."""
    backend = backend_class(spec.backend).from_spec(spec)
    if backend.loads_weights:
        backend.weights_commit = spec.commit(snapshot=backend.weights_folder)
    return backend
