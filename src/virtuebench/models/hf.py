"""The `transformers` backend: a Hugging Face image-text-to-text model and its processor, the level's
frames passed as one video through the processor's chat template, the way the model's family takes it
(models/families.py: frame times, frame sizes, time text, system turn, thinking).

Loads by hub id and pinned revision (`trust_remote_code` only where the registry says so), runs in
bf16 on GPU (float32 on CPU), decodes greedily unless the registry gives other generation settings,
and records prompt and completion token counts, whether the reply stopped at the token limit, and the
commit of the weights loaded. Pipelined: the next item's frames are read and run through the processor
on a CPU thread while the current item generates. torch and transformers are imported only when used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from virtuebench.models.base import DETERMINISTIC, SEEDED, Backend, Reply, Request
from virtuebench.models.families import finish_reason, get_family
from virtuebench.models.frames_io import load_frames
from virtuebench.models.rope import use_reference_positions
from virtuebench.support.settings import setting, settings_from_dict

if TYPE_CHECKING:
    from virtuebench.models.spec import ModelSpec

NULLABLE_INT = {"type": ["integer", "null"], "minimum": 1}
NULLABLE_STR = {"type": ["string", "null"]}


@dataclass(frozen=True)
class FramePixelSettings:
    """The frame-size settings of the backends that run the families' own processors (transformers, vllm)."""

    max_pixels: int | None = setting(
        None, rerun="answers", schema=NULLABLE_INT, description="per frame, the paper's cap, on top of the family's own"
    )
    total_pixels: int | None = setting(
        None, rerun="answers", schema=NULLABLE_INT, description="Qwen families: the clip's pixel budget (default: the family's)"
    )
    min_pixels: int | None = setting(
        None, rerun="answers", schema=NULLABLE_INT, description="Qwen families: the per-frame floor (default: the family's)"
    )


@dataclass(frozen=True)
class TransformersSettings(FramePixelSettings):
    """Every setting of the transformers backend, each with its rerun class; the weights' hub id, revision and family
    are the model spec's (models/spec.py), not settings."""

    trust_remote_code: bool = setting(False, rerun="answers", schema={"type": "boolean"})
    dtype: str = setting("auto", rerun="answers", schema={"type": "string"}, description="auto: bfloat16 on GPU, float32 on CPU")
    device_map: str = setting("auto", rerun="answers", schema={"type": "string"})
    max_new_tokens: int = setting(1024, rerun="answers", schema={"type": "integer", "minimum": 1})
    generation: dict[str, Any] = setting(
        rerun="answers", schema={"type": "object"}, description="extra generate() arguments (sampling etc.)", default_factory=dict
    )
    # Sampling restarts from this seed for every item (seed + k for run k of a sampled model, models.yaml `samples`): a
    # rerun or resume samples the same answers.
    seed: int = setting(0, rerun="answers", schema={"type": "integer"})
    attn_implementation: str | None = setting(None, rerun="answers", schema=NULLABLE_STR)
    system_suffix: str | None = setting(
        None, rerun="answers", schema=NULLABLE_STR, description="appended to the user turn (a thinking-mode switch)"
    )

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TransformersSettings:
        return settings_from_dict(cls, values, "transformers backend")


@dataclass
class Prepared:
    """One item ready for generate(): the processor's tensors and the prompt text they encode."""

    inputs: Any
    prompt: str
    sample: int = 0  # Request.sample: which run of a sampled model, the seed's offset


def processor_inputs(family, processor, request: Request, settings) -> tuple[str, Any, dict[str, Any]]:
    """The templated prompt, the frames and the processor's video arguments for one request: what both the
    transformers and the vLLM backend give the family's processor."""
    times = request.times
    messages = family.messages(request.prompt, times, settings.system_suffix)
    prompt = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    video = family.video_settings(settings.max_pixels, settings.total_pixels, settings.min_pixels)
    frames = family.prepare_frames(load_frames(request.frames), video)
    return prompt, frames, family.processor_video_kwargs(times)


class TransformersBackend(Backend):
    pipelined = True
    settings_type = TransformersSettings
    frame_pixels_setting = "max_pixels"
    env_imports = ("virtuebench.models.rope", "torch", "torchvision", "accelerate")
    env_imports += ("transformers:Qwen2_5_VLForConditionalGeneration,Qwen3VLForConditionalGeneration,InternVLForConditionalGeneration",)

    def __init__(self, settings: dict[str, Any], spec: ModelSpec | None = None, model=None, processor=None) -> None:
        """`spec`: the model's hub id, revision and family (a backend handed its `model` and `processor` loads nothing)."""
        self.settings = s = TransformersSettings.from_dict(settings)
        hub_id, revision = (spec.hub_id, spec.revision) if spec else (None, None)
        self.family = get_family(spec.family if spec else None)
        import torch

        self.torch = torch
        if model is None or processor is None:
            from transformers import AutoModelForImageTextToText, AutoProcessor

            if not hub_id:
                raise ValueError("transformers backend: the registry entry needs a hub_id")
            dtype = (torch.bfloat16 if torch.cuda.is_available() else torch.float32) if s.dtype == "auto" else getattr(torch, s.dtype)
            extra = {"attn_implementation": s.attn_implementation} if s.attn_implementation else {}
            processor = AutoProcessor.from_pretrained(hub_id, revision=revision, trust_remote_code=s.trust_remote_code)
            model = AutoModelForImageTextToText.from_pretrained(
                hub_id, revision=revision, trust_remote_code=s.trust_remote_code, dtype=dtype, device_map=s.device_map, **extra
            )
            self.loads_weights = True
        self.model, self.processor = model.eval(), processor
        if self.family.reference_positions:
            use_reference_positions(self.model)
        eos = model.generation_config.eos_token_id if getattr(model, "generation_config", None) else None
        self.eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> TransformersBackend:
        return cls(spec.settings, spec)

    @classmethod
    def decoding(cls, settings: dict[str, Any]) -> str:
        return SEEDED if TransformersSettings.from_dict(settings).generation.get("do_sample") else DETERMINISTIC

    def prepare(self, request: Request) -> Prepared:
        """Frames read and sized, the chat template applied and the processor run: CPU tensors ready for generate()."""
        prompt, frames, video_kwargs = processor_inputs(self.family, self.processor, request, self.settings)
        text = self.family.processor_text(prompt, self.processor)
        return Prepared(self.processor(text=[text], videos=[frames], return_tensors="pt", **video_kwargs), prompt, request.sample)

    def generate(self, prepared: Prepared) -> Reply:
        inputs = prepared.inputs.to(self.model.device)
        options = {"max_new_tokens": self.settings.max_new_tokens, "do_sample": False, **self.settings.generation}
        if options["do_sample"]:
            self.torch.manual_seed(self.settings.seed + prepared.sample)
        with self.torch.inference_mode():
            output = self.model.generate(**inputs, **options)
        prompt_length = inputs["input_ids"].shape[1]
        new_tokens = output[:, prompt_length:]
        text = self.processor.batch_decode(new_tokens, skip_special_tokens=True)[0]
        reading = self.family.read(text, prepared.prompt)
        usage: dict[str, Any] = {"prompt_tokens": int(prompt_length), "completion_tokens": int(new_tokens.shape[1])}
        if "video_grid_thw" in inputs:
            usage["video_grid_thw"] = inputs["video_grid_thw"][0].tolist()
        if "second_per_grid_ts" in inputs:
            usage["second_per_grid_ts"] = float(inputs["second_per_grid_ts"][0])
        stop = finish_reason(new_tokens[0].tolist(), options["max_new_tokens"], self.eos_ids | set(_as_list(options.get("eos_token_id"))))
        return Reply(reading.answer, usage=usage, thinking=reading.thinking, finish_reason=stop, unclosed_thinking=reading.unclosed)


def _as_list(value) -> list:
    return [] if value is None else list(value) if isinstance(value, list | tuple) else [value]
