"""The `vllm` backend: vLLM's offline engine (`vllm.LLM`) with the level's frames as one video input.

Opt-in and unverified (docs/models.md): vLLM has never run in this project's tests (no GPU, and no
vLLM build that installs beside the pinned torch). The request is built from the same family specs
as the transformers backend (models/families.py): the chat turn, and for the Qwen families the
frames with their metadata as a `(frames, metadata)` pair and the processor's video arguments as
`mm_processor_kwargs`, the form the Qwen3-VL model card's vLLM example uses. Request building is
plain code over a processor object and is tested without vLLM. Records match the transformers
backend's, so the two can be compared item by item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from virtuebench.models.base import Backend, Reply, Request
from virtuebench.models.families import Family, get_family
from virtuebench.models.frames_io import load_frames
from virtuebench.support.settings import settings_from_dict


@dataclass(frozen=True)
class VllmSettings:
    hub_id: str
    revision: str | None = None
    family: str | None = None
    trust_remote_code: bool = False
    tensor_parallel_size: int = 1
    max_pixels: int | None = None
    max_new_tokens: int = 1024
    temperature: float = 0.0
    top_p: float | None = None
    top_k: int | None = None
    presence_penalty: float | None = None
    seed: int | None = None
    max_model_len: int | None = None
    gpu_memory_utilization: float = 0.9
    batch_size: int = 8
    system_suffix: str | None = None  # appended to the user turn (e.g. a thinking-mode switch)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> VllmSettings:
        if not values.get("hub_id"):
            raise ValueError("vllm backend: the registry entry needs a hub_id")
        return settings_from_dict(cls, values, "vllm backend")


def build_inputs(request: Request, processor, settings: VllmSettings, family: Family) -> dict[str, Any]:
    """vLLM's prompt dict: the templated prompt, the frames as a (T, H, W, 3) uint8 array (with their
    metadata for families whose processor takes it) and the processor's video arguments."""
    import numpy as np

    times = request.times
    prompt = processor.apply_chat_template(
        family.messages(request.prompt, times, settings.system_suffix), tokenize=False, add_generation_prompt=True
    )
    frames = np.stack([np.asarray(image) for image in load_frames(request.frames)])
    kwargs = family.processor_video_kwargs(times, processor.video_processor, settings.max_pixels)
    metadata = kwargs.pop("video_metadata", None)
    video = (frames, dict(metadata[0])) if metadata else frames
    return {"prompt": prompt, "multi_modal_data": {"video": video}, "mm_processor_kwargs": kwargs}


def sampling_arguments(settings: VllmSettings) -> dict[str, Any]:
    optional = {
        name: getattr(settings, name) for name in ("top_p", "top_k", "presence_penalty", "seed") if getattr(settings, name) is not None
    }
    return {"temperature": settings.temperature, "max_tokens": settings.max_new_tokens, **optional}


class VllmBackend(Backend):
    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = s = VllmSettings.from_dict(settings)
        self.family = get_family(s.family)
        self.batch_size = s.batch_size
        from transformers import AutoProcessor
        from vllm import LLM, SamplingParams

        self.processor = AutoProcessor.from_pretrained(s.hub_id, revision=s.revision, trust_remote_code=s.trust_remote_code)
        options = {"max_model_len": s.max_model_len} if s.max_model_len else {}
        self.llm = LLM(
            model=s.hub_id,
            revision=s.revision,
            trust_remote_code=s.trust_remote_code,
            tensor_parallel_size=s.tensor_parallel_size,
            gpu_memory_utilization=s.gpu_memory_utilization,
            limit_mm_per_prompt={"video": 1},
            **options,
        )
        self.sampling = SamplingParams(**sampling_arguments(s))

    def answer_batch(self, requests: list[Request]) -> list[Reply]:
        inputs = [build_inputs(r, self.processor, self.settings, self.family) for r in requests]
        outputs = self.llm.generate(inputs, self.sampling, use_tqdm=False)
        replies = []
        for out in outputs:
            thinking, answer = self.family.parse(out.outputs[0].text)
            usage = {"prompt_tokens": len(out.prompt_token_ids or []), "completion_tokens": len(out.outputs[0].token_ids)}
            replies.append(Reply(answer, usage=usage, thinking=thinking))
        return replies

    def answer(self, request: Request) -> Reply:
        return self.answer_batch([request])[0]
