"""The `transformers` backend: a Hugging Face image-text-to-text model and its processor, the level's
frames passed as one video through the processor's chat template.

Loads by hub id and pinned revision (`trust_remote_code` only where the registry says so), runs in
bf16 on GPU (float32 on CPU), shrinks frames to the registry's pixel budget, decodes greedily, and
records prompt and completion token counts. torch and transformers are imported only when used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from virtuebench.models.base import Reply, Request
from virtuebench.models.frames_io import load_frames
from virtuebench.models.vllm_engine import chat_messages
from virtuebench.settings import settings_from_dict


@dataclass(frozen=True)
class TransformersSettings:
    hub_id: str | None = None
    revision: str | None = None
    trust_remote_code: bool = False
    dtype: str = "auto"  # auto: bfloat16 on GPU, float32 on CPU
    device_map: str = "auto"
    max_pixels: int | None = None
    max_new_tokens: int = 1024
    attn_implementation: str | None = None
    system_suffix: str | None = None

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TransformersSettings:
        return settings_from_dict(cls, values, "transformers backend")


class TransformersBackend:
    def __init__(self, settings: dict[str, Any], model=None, processor=None) -> None:
        self.settings = TransformersSettings.from_dict(settings)
        import torch

        self.torch = torch
        if model is None or processor is None:
            from transformers import AutoModelForImageTextToText, AutoProcessor

            s = self.settings
            if not s.hub_id:
                raise ValueError("transformers backend: the registry entry needs a hub_id")
            dtype = (torch.bfloat16 if torch.cuda.is_available() else torch.float32) if s.dtype == "auto" else getattr(torch, s.dtype)
            extra = {"attn_implementation": s.attn_implementation} if s.attn_implementation else {}
            processor = AutoProcessor.from_pretrained(s.hub_id, revision=s.revision, trust_remote_code=s.trust_remote_code)
            model = AutoModelForImageTextToText.from_pretrained(
                s.hub_id, revision=s.revision, trust_remote_code=s.trust_remote_code, dtype=dtype, device_map=s.device_map, **extra
            )
        self.model, self.processor = model.eval(), processor

    def answer(self, request: Request) -> Reply:
        text = self.processor.apply_chat_template(chat_messages(request, self.settings), tokenize=False, add_generation_prompt=True)
        frames = load_frames(request.frames, self.settings.max_pixels)
        inputs = self.processor(text=[text], videos=[frames], return_tensors="pt", do_sample_frames=False)
        inputs = inputs.to(self.model.device)
        with self.torch.inference_mode():
            output = self.model.generate(**inputs, max_new_tokens=self.settings.max_new_tokens, do_sample=False)
        prompt_length = inputs["input_ids"].shape[1]
        new_tokens = output[:, prompt_length:]
        answer = self.processor.batch_decode(new_tokens, skip_special_tokens=True)[0]
        return Reply(answer.strip(), usage={"prompt_tokens": int(prompt_length), "completion_tokens": int(new_tokens.shape[1]),
                                            "frames": len(frames)})  # fmt: skip
