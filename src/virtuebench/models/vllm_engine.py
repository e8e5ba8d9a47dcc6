"""The `vllm` backend: vLLM's offline engine (`vllm.LLM`) with the level's frames as one video input.

vLLM is an optional dependency (envs/vllm.yaml), imported only when this backend runs. The request
building (chat template with the model's video placeholder, the frame array, sampling parameters) is
plain code over a processor object and is tested without vLLM. Records match the transformers
backend's, so the two can be compared item by item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from virtuebench.models.base import Reply, Request
from virtuebench.models.frames_io import load_frames
from virtuebench.settings import settings_from_dict


@dataclass(frozen=True)
class VllmSettings:
    hub_id: str
    revision: str | None = None
    trust_remote_code: bool = False
    tensor_parallel_size: int = 1
    max_pixels: int | None = None
    max_new_tokens: int = 1024
    temperature: float = 0.0
    max_model_len: int | None = None
    gpu_memory_utilization: float = 0.9
    batch_size: int = 8
    system_suffix: str | None = None  # appended to the user turn (e.g. a thinking-mode switch)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> VllmSettings:
        if not values.get("hub_id"):
            raise ValueError("vllm backend: the registry entry needs a hub_id")
        return settings_from_dict(cls, values, "vllm backend")


def chat_messages(request: Request, settings) -> list[dict[str, Any]]:
    """One user turn: the video, then the prompt (the layout the model families' chat templates expect)."""
    text = request.prompt + (f" {settings.system_suffix}" if settings.system_suffix else "")
    return [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": text}]}]


def build_inputs(request: Request, processor, settings: VllmSettings) -> dict[str, Any]:
    """vLLM's prompt dict: the templated prompt and the frames as a (T, H, W, 3) uint8 array."""
    import numpy as np

    prompt = processor.apply_chat_template(chat_messages(request, settings), tokenize=False, add_generation_prompt=True)
    frames = np.stack([np.asarray(image) for image in load_frames(request.frames, settings.max_pixels)])
    return {"prompt": prompt, "multi_modal_data": {"video": frames}}


def sampling_arguments(settings: VllmSettings) -> dict[str, Any]:
    return {"temperature": settings.temperature, "max_tokens": settings.max_new_tokens}


class VllmBackend:
    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = VllmSettings.from_dict(settings)
        self.batch_size = self.settings.batch_size
        from transformers import AutoProcessor
        from vllm import LLM, SamplingParams

        s = self.settings
        self.processor = AutoProcessor.from_pretrained(s.hub_id, revision=s.revision, trust_remote_code=s.trust_remote_code)
        options = {"max_model_len": s.max_model_len} if s.max_model_len else {}
        self.llm = LLM(model=s.hub_id, revision=s.revision, trust_remote_code=s.trust_remote_code, tensor_parallel_size=s.tensor_parallel_size,
                       gpu_memory_utilization=s.gpu_memory_utilization, limit_mm_per_prompt={"video": 1}, **options)  # fmt: skip
        self.sampling = SamplingParams(**sampling_arguments(s))

    def answer_batch(self, requests: list[Request]) -> list[Reply]:
        outputs = self.llm.generate([build_inputs(r, self.processor, self.settings) for r in requests], self.sampling, use_tqdm=False)
        return [
            Reply(out.outputs[0].text, usage={"prompt_tokens": len(out.prompt_token_ids or []), "completion_tokens": len(out.outputs[0].token_ids)})
            for out in outputs
        ]

    def answer(self, request: Request) -> Reply:
        return self.answer_batch([request])[0]
