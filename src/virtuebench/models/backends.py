"""The backend registry: every model backend by name (a model entry's `backend`), imported only when a job or a check
asks for it. virtuebench.models re-exports it; virtuebench.models.spec reads it here, below the package's factory.
"""

from __future__ import annotations

from virtuebench.models.base import Backend
from virtuebench.support.registry import Registry

#: backend name -> "module:Class" of its Backend subclass (virtuebench.support.registry): the `backend` of a model entry.
BACKENDS: Registry[type[Backend]] = Registry(
    "backend",
    {
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
    },
    expect=Backend,
    classes=True,
    external=True,
    hint="; is its environment installed?",
)


def backend_class(name: str) -> type[Backend]:
    """The Backend subclass a model entry's `backend` names: a registered name, or `package.module:Class`."""
    return BACKENDS[name]
