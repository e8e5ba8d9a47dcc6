"""Model backends behind one interface (virtuebench.models.base.Backend), picked by name from config.

A model's `backend` in the registry is a name below, or `package.module:Class` for a backend that
lives outside this package. Backends are imported only when used, so torch, transformers and vLLM
are needed only by the jobs that run such models.
"""

from __future__ import annotations

import importlib
from typing import Any

from virtuebench.models.base import Backend, Reply, Request

BACKENDS: dict[str, str] = {
    "refuse": "virtuebench.models.reference:RefuseBackend",
    "guess": "virtuebench.models.reference:GuessBackend",
    "oracle": "virtuebench.models.oracle:OracleBackend",
    "openai": "virtuebench.models.openai_api:OpenAIBackend",
    "transformers": "virtuebench.models.hf:TransformersBackend",
    "vllm": "virtuebench.models.vllm_engine:VllmBackend",
    "videochat_flash": "virtuebench.models.remote_code:VideoChatFlashBackend",
    "internvl_chat": "virtuebench.models.remote_code:InternVLChatBackend",
    "internvideo": "virtuebench.models.remote_code:InternVideoBackend",
    "keye": "virtuebench.models.remote_code:KeyeBackend",
    "llava_video": "virtuebench.models.llava_next:LlavaVideoBackend",
}

__all__ = ["BACKENDS", "Backend", "Reply", "Request", "load_backend"]


def backend_class(name: str) -> type:
    target = BACKENDS.get(name, name)
    if ":" not in target:
        raise ValueError(f"unknown backend {name!r}; known backends: {sorted(BACKENDS)} or 'package.module:Class'")
    module_name, _, class_name = target.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"backend {name!r} cannot be imported ({error}); is its environment installed?") from None
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise ValueError(f"backend {name!r}: {target} is not a subclass of virtuebench.models.base.Backend")
    return cls


def load_backend(name: str, settings: dict[str, Any] | None = None) -> Backend:
    return backend_class(name)(dict(settings or {}))
