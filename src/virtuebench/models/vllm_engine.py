"""The `vllm` backend: vLLM's offline engine (`vllm.LLM`) with the level's frames as one video input.

The request is built from the same family specs as the transformers backend (models/families.py) and by
the same function (`hf.processor_inputs`): the checkpoint's chat template with the family's turns, the
frames sized as the family's authors size them, and for the Qwen families the frames with their metadata
as a `(frames, metadata)` pair and the processor's arguments as `mm_processor_kwargs` (the form of the
Qwen3-VL model card's vLLM example). tests/models/test_vllm_route.py runs this backend on tiny checkpoints with
vLLM's CPU build: vLLM's own processor gives the transformers route's grid, frame times and prompt token
ids, and the first tokens' log-probabilities agree with the transformers route's (docs/models.md).

vLLM pins its own torch, so it lives in an environment of its own (envs/vllm.yaml on a GPU cluster,
`make vllm-env` for the CPU build). Records match the transformers backend's item by item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from virtuebench.models.base import DETERMINISTIC, SEEDED, UNSEEDED, Backend, Reply, Request
from virtuebench.models.families import Family, get_family
from virtuebench.models.hf import NULLABLE_INT, NULLABLE_STR, FramePixelSettings, processor_inputs
from virtuebench.support.settings import setting, settings_from_dict

if TYPE_CHECKING:
    from virtuebench.models.spec import ModelSpec

NULLABLE_NUMBER = {"type": ["number", "null"]}


@dataclass(frozen=True)
class VllmSettings(FramePixelSettings):
    """Every setting of the vllm backend, each with its rerun class; the weights' hub id, revision and family are the
    model spec's (models/spec.py). The batch size and the memory share change how the job runs, not its answers."""

    trust_remote_code: bool = setting(False, rerun="answers", schema={"type": "boolean"})
    tensor_parallel_size: int = setting(1, rerun="answers", schema={"type": "integer", "minimum": 1})
    max_new_tokens: int = setting(1024, rerun="answers", schema={"type": "integer", "minimum": 1})
    temperature: float = setting(0.0, rerun="answers", schema={"type": "number"})
    top_p: float | None = setting(None, rerun="answers", schema=NULLABLE_NUMBER)
    top_k: int | None = setting(None, rerun="answers", schema={"type": ["integer", "null"]})
    presence_penalty: float | None = setting(None, rerun="answers", schema=NULLABLE_NUMBER)
    repetition_penalty: float | None = setting(None, rerun="answers", schema=NULLABLE_NUMBER)
    seed: int | None = setting(
        None,
        rerun="answers",
        schema={"type": ["integer", "null"]},
        description="per request (seed + k for run k of a sampled model): a rerun samples the same answers",
    )
    max_model_len: int | None = setting(None, rerun="answers", schema=NULLABLE_INT)
    gpu_memory_utilization: float = setting(
        0.9, rerun="scheduling", schema={"type": "number"}, description="on the CPU build: the share of host memory for the KV cache"
    )
    dtype: str = setting("auto", rerun="answers", schema={"type": "string"})
    enforce_eager: bool = setting(False, rerun="answers", schema={"type": "boolean"})
    batch_size: int = setting(8, rerun="scheduling", schema={"type": "integer", "minimum": 1})
    system_suffix: str | None = setting(
        None, rerun="answers", schema=NULLABLE_STR, description="appended to the user turn (a thinking-mode switch)"
    )
    engine_args: dict[str, Any] = setting(
        rerun="answers", schema={"type": "object"}, description="further vllm.LLM arguments (max_num_seqs, ...)", default_factory=dict
    )

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> VllmSettings:
        return settings_from_dict(cls, values, "vllm backend")


def build_inputs(request: Request, processor, settings: VllmSettings, family: Family) -> dict[str, Any]:
    """vLLM's prompt dict: the templated prompt, the frames as a (T, H, W, 3) uint8 array (with their metadata for
    families whose processor takes it) and the processor's video arguments."""
    import numpy as np

    prompt, frames, kwargs = processor_inputs(family, processor, request, settings)
    prompt = family.processor_text(prompt, processor)  # Qwen3-VL: the bare placeholder, as for transformers
    if isinstance(frames, list):  # PIL images as stored: the processor sizes them
        array = np.stack([np.asarray(image) for image in frames])
    else:  # a (T, C, H, W) uint8 tensor sized by the family
        array = frames.permute(0, 2, 3, 1).contiguous().numpy()
    metadata = kwargs.pop("video_metadata", None)
    video = (array, {**vars(metadata[0]), "do_sample_frames": False}) if metadata else array
    return {"prompt": prompt, "multi_modal_data": {"video": video}, "mm_processor_kwargs": kwargs}


def sampling_arguments(settings: VllmSettings, sample: int = 0) -> dict[str, Any]:
    """SamplingParams' arguments for run `sample` of an item (Request.sample): the seed, where set, is seed + sample."""
    names = ("top_p", "top_k", "presence_penalty", "repetition_penalty", "seed")
    optional = {name: getattr(settings, name) for name in names if getattr(settings, name) is not None}
    if "seed" in optional:
        optional["seed"] += sample
    return {"temperature": settings.temperature, "max_tokens": settings.max_new_tokens, **optional}


class VllmBackend(Backend):
    settings_type = VllmSettings
    frame_pixels_setting = "max_pixels"
    env_imports = ("vllm", "transformers", "torch")

    def __init__(self, settings: dict[str, Any], spec: ModelSpec | None = None) -> None:
        """`spec`: the model's hub id (required), revision and family."""
        self.settings = s = VllmSettings.from_dict(settings)
        if spec is None or not spec.hub_id:
            raise ValueError("vllm backend: the registry entry needs a hub_id")
        self.family = get_family(spec.family)
        self.batch_size = s.batch_size
        from transformers import AutoProcessor
        from vllm import LLM, SamplingParams

        self.processor = AutoProcessor.from_pretrained(spec.hub_id, revision=spec.revision, trust_remote_code=s.trust_remote_code)
        options = {"max_model_len": s.max_model_len} if s.max_model_len else {}
        options.update(s.engine_args)
        self.llm = LLM(
            model=spec.hub_id,
            revision=spec.revision,
            trust_remote_code=s.trust_remote_code,
            tensor_parallel_size=s.tensor_parallel_size,
            gpu_memory_utilization=s.gpu_memory_utilization,
            dtype=s.dtype,
            enforce_eager=s.enforce_eager,
            limit_mm_per_prompt={"video": 1},
            **options,
        )
        self.SamplingParams = SamplingParams
        self.loads_weights = True

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> VllmBackend:
        return cls(spec.settings, spec)

    @classmethod
    def decoding(cls, settings: dict[str, Any]) -> str:
        s = VllmSettings.from_dict(settings)
        return DETERMINISTIC if s.temperature == 0 else UNSEEDED if s.seed is None else SEEDED

    def sampling(self, sample: int = 0, **extra):
        return self.SamplingParams(**sampling_arguments(self.settings, sample), **extra)

    def generate_outputs(self, inputs: list[dict[str, Any]], samples: list[int] | None = None, **sampling_extra) -> list:
        """vLLM's RequestOutputs for prompt dicts (tests ask for log-probabilities through `sampling_extra`); `samples`:
        each prompt's Request.sample, which offsets its seed (one SamplingParams for all where every one is 0)."""
        if samples and any(samples):
            params = [self.sampling(sample, **sampling_extra) for sample in samples]
            return self.llm.generate(inputs, params, use_tqdm=False)
        return self.llm.generate(inputs, self.sampling(**sampling_extra), use_tqdm=False)

    def answer_batch(self, requests: list[Request]) -> list[Reply]:
        inputs = [build_inputs(r, self.processor, self.settings, self.family) for r in requests]
        replies = []
        for item, out in zip(inputs, self.generate_outputs(inputs, [r.sample for r in requests])):
            completion = out.outputs[0]
            reading = self.family.read(completion.text, item["prompt"])
            usage = {"prompt_tokens": len(out.prompt_token_ids or []), "completion_tokens": len(completion.token_ids)}
            replies.append(
                Reply(
                    reading.answer,
                    usage=usage,
                    thinking=reading.thinking,
                    finish_reason=completion.finish_reason,
                    unclosed_thinking=reading.unclosed,
                )
            )
        return replies

    def answer(self, request: Request) -> Reply:
        return self.answer_batch([request])[0]
