"""The `transformers` backend: a Hugging Face image-text-to-text model and its processor, the level's
frames passed as one video through the processor's chat template, the way the model's family takes it
(models/families.py: frame times, pixel caps, time text, thinking).

Loads by hub id and pinned revision (`trust_remote_code` only where the registry says so), runs in
bf16 on GPU (float32 on CPU), decodes greedily unless the registry gives other generation settings,
and records prompt and completion token counts. Pipelined: the next item's frames are read and run
through the processor on a CPU thread while the current item generates. torch and transformers are
imported only when used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from virtuebench.models.base import Backend, Reply, Request
from virtuebench.models.families import get_family
from virtuebench.models.frames_io import load_frames
from virtuebench.support.settings import settings_from_dict


@dataclass(frozen=True)
class TransformersSettings:
    hub_id: str | None = None
    revision: str | None = None
    family: str | None = None
    trust_remote_code: bool = False
    dtype: str = "auto"  # auto: bfloat16 on GPU, float32 on CPU
    device_map: str = "auto"
    max_pixels: int | None = None  # per frame, before the family's own caps
    max_new_tokens: int = 1024
    generation: dict[str, Any] = field(default_factory=dict)  # extra generate() arguments (sampling etc.)
    seed: int = 0  # sampling restarts from this seed for every item: a rerun or resume samples the same answers
    attn_implementation: str | None = None
    system_suffix: str | None = None  # appended to the user turn (e.g. a thinking-mode switch)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TransformersSettings:
        return settings_from_dict(cls, values, "transformers backend")


class TransformersBackend(Backend):
    pipelined = True

    def __init__(self, settings: dict[str, Any], model=None, processor=None) -> None:
        self.settings = s = TransformersSettings.from_dict(settings)
        self.family = get_family(s.family)
        import torch

        self.torch = torch
        if model is None or processor is None:
            from transformers import AutoModelForImageTextToText, AutoProcessor

            if not s.hub_id:
                raise ValueError("transformers backend: the registry entry needs a hub_id")
            dtype = (torch.bfloat16 if torch.cuda.is_available() else torch.float32) if s.dtype == "auto" else getattr(torch, s.dtype)
            extra = {"attn_implementation": s.attn_implementation} if s.attn_implementation else {}
            processor = AutoProcessor.from_pretrained(s.hub_id, revision=s.revision, trust_remote_code=s.trust_remote_code)
            model = AutoModelForImageTextToText.from_pretrained(
                s.hub_id, revision=s.revision, trust_remote_code=s.trust_remote_code, dtype=dtype, device_map=s.device_map, **extra
            )
        self.model, self.processor = model.eval(), processor

    def prepare(self, request: Request):
        """Frames read, the chat template applied and the processor run: CPU tensors ready for generate()."""
        times = request.times
        messages = self.family.messages(request.prompt, times, self.settings.system_suffix)
        text = self.family.processor_text(
            self.processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True), self.processor
        )
        frames = load_frames(request.frames)
        video_kwargs = self.family.processor_video_kwargs(times, self.processor.video_processor, self.settings.max_pixels)
        return self.processor(text=[text], videos=[frames], return_tensors="pt", **video_kwargs)

    def generate(self, inputs) -> Reply:
        inputs = inputs.to(self.model.device)
        options = {"max_new_tokens": self.settings.max_new_tokens, "do_sample": False, **self.settings.generation}
        if options["do_sample"]:
            self.torch.manual_seed(self.settings.seed)
        with self.torch.inference_mode():
            output = self.model.generate(**inputs, **options)
        prompt_length = inputs["input_ids"].shape[1]
        new_tokens = output[:, prompt_length:]
        text = self.processor.batch_decode(new_tokens, skip_special_tokens=True)[0]
        thinking, answer = self.family.parse(text)
        frames = inputs["video_grid_thw"][0].tolist() if "video_grid_thw" in inputs else None
        usage = {"prompt_tokens": int(prompt_length), "completion_tokens": int(new_tokens.shape[1])}
        if frames:
            usage["video_grid_thw"] = frames
        if "second_per_grid_ts" in inputs:
            usage["second_per_grid_ts"] = float(inputs["second_per_grid_ts"][0])
        return Reply(answer, usage=usage, thinking=thinking)
