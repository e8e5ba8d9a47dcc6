"""The `llava_video` backend: LLaVA-Video (lmms-lab/LLaVA-Video-7B-Qwen2, -72B-Qwen2, the releases the paper
evaluated; they exist only in LLaVA-NeXT's own format) through LLaVA-NeXT's own code, the `llava` package, the way
its model card and LLaVA-NeXT's docs/LLaVA_Video_1003.md run it:

- `load_pretrained_model(path, None, "llava_qwen", torch_dtype="bfloat16", device_map="auto")` on a snapshot of the
  pinned revision (so tokenizer, config and weights come from the same commit, which every record names);
- the level's frames through the tower's `image_processor.preprocess(frames, return_tensors="pt")["pixel_values"]`;
- the question `<image>\\n{time instruction}\\n{prompt}` (the time instruction with our frames' times and the video's
  duration: models/families.llava_video_time_instruction) in the `qwen_1_5` conversation template, tokenized with
  `tokenizer_image_token`;
- `model.generate(input_ids, images=[video], modalities=["video"], do_sample=False, temperature=0, max_new_tokens=...)`,
  whose output holds only the new tokens.

The `llava` package is not on PyPI (envs/llava.yaml installs it from GitHub at a pinned commit), so its tests run
against a recording stand-in of these four modules (tests/helpers/remote_standins.py). Its pooling (average, a newline per
row) is the model's own, which the transformers -hf classes do not reproduce (docs/models.md).
"""

from __future__ import annotations

import copy
import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from virtuebench.models.base import DETERMINISTIC, UNSEEDED, Backend, Reply, Request
from virtuebench.models.families import finish_reason, llava_video_time_instruction
from virtuebench.models.frames_io import load_frames
from virtuebench.models.hf import NULLABLE_INT, NULLABLE_STR, Prepared
from virtuebench.support.settings import setting, settings_from_dict

if TYPE_CHECKING:
    from virtuebench.models.spec import ModelSpec

CONV_TEMPLATE = "qwen_1_5"  # the model card's: ChatML with "You are a helpful assistant."


@dataclass(frozen=True)
class LlavaVideoSettings:
    """Every setting of the llava_video backend, each with its rerun class; the weights' hub id and revision are the
    model spec's (models/spec.py)."""

    dtype: str = setting("bfloat16", rerun="answers", schema={"type": "string"})
    # The loader's default is flash_attention_2, which needs flash-attn.
    attn_implementation: str | None = setting("sdpa", rerun="answers", schema=NULLABLE_STR)
    # The stored frames' cap it asks for (the paper's, as for the other families); its SigLIP tower then takes 384x384.
    max_pixels: int | None = setting(None, rerun="answers", schema=NULLABLE_INT, description="the stored frames' cap it asks for")
    max_new_tokens: int = setting(4096, rerun="answers", schema={"type": "integer", "minimum": 1}, description="the model card's")
    generation: dict[str, Any] = setting(
        rerun="answers", schema={"type": "object"}, description="further generate() arguments", default_factory=dict
    )

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> LlavaVideoSettings:
        return settings_from_dict(cls, values, "llava_video backend")


def llava_modules() -> dict[str, Any]:
    """LLaVA-NeXT's modules the model card imports (importable stand-ins replace them in the tests)."""
    names = ("llava.model.builder", "llava.mm_utils", "llava.constants", "llava.conversation")
    try:
        return {name.rsplit(".", 1)[1]: importlib.import_module(name) for name in names}
    except ImportError as error:
        raise ValueError(f"LLaVA-NeXT's `llava` package is not installed ({error}); its environment is envs/llava.yaml") from None


class LlavaVideoBackend(Backend):
    pipelined = True
    settings_type = LlavaVideoSettings
    frame_pixels_setting = "max_pixels"
    env_imports = ("torch", "transformers", "llava.model.builder")

    @classmethod
    def decoding(cls, settings: dict[str, Any]) -> str:
        """Greedy unless `generation` asks to sample, which no seed of this backend fixes."""
        return UNSEEDED if LlavaVideoSettings.from_dict(settings).generation.get("do_sample") else DETERMINISTIC

    def __init__(self, settings: dict[str, Any], spec: ModelSpec | None = None, model=None, tokenizer=None, image_processor=None) -> None:
        """`spec`: the model's hub id and revision (a backend handed its `model` loads nothing)."""
        self.settings = s = LlavaVideoSettings.from_dict(settings)
        hub_id, revision = (spec.hub_id, spec.revision) if spec else (None, None)
        import torch

        self.torch = torch
        self.llava = llava_modules()
        if model is None:
            from huggingface_hub import snapshot_download

            if not hub_id:
                raise ValueError("llava_video backend: the registry entry needs a hub_id")
            path = snapshot_download(hub_id, revision=revision)  # one commit for code, config and weights
            tokenizer, model, image_processor, _ = self.llava["builder"].load_pretrained_model(
                path, None, "llava_qwen", torch_dtype=s.dtype, device_map="auto", attn_implementation=s.attn_implementation
            )
            self.loads_weights, self.weights_folder = True, path  # its commit: the snapshot's, what was loaded
        self.model, self.tokenizer, self.image_processor = model.eval(), tokenizer, image_processor

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> LlavaVideoBackend:
        return cls(spec.settings, spec)

    def prepare(self, request: Request) -> Prepared:
        import numpy as np

        constants = self.llava["constants"]
        frames = np.stack([np.asarray(image) for image in load_frames(request.frames)])
        video = self.image_processor.preprocess(frames, return_tensors="pt")["pixel_values"]
        question = f"{constants.DEFAULT_IMAGE_TOKEN}\n{llava_video_time_instruction(request.times)}\n{request.prompt}"
        conversation = copy.deepcopy(self.llava["conversation"].conv_templates[CONV_TEMPLATE])
        conversation.append_message(conversation.roles[0], question)
        conversation.append_message(conversation.roles[1], None)
        prompt = conversation.get_prompt()
        input_ids = self.llava["mm_utils"].tokenizer_image_token(prompt, self.tokenizer, constants.IMAGE_TOKEN_INDEX, return_tensors="pt")
        return Prepared((input_ids.unsqueeze(0), video), prompt)

    def generate(self, prepared: Prepared) -> Reply:
        input_ids, video = prepared.inputs
        parameter = next(self.model.parameters())
        options = {"do_sample": False, "temperature": 0, "max_new_tokens": self.settings.max_new_tokens, **self.settings.generation}
        with self.torch.inference_mode():
            output = self.model.generate(
                input_ids.to(parameter.device), images=[video.to(parameter.device, parameter.dtype)], modalities=["video"], **options
            )
        text = self.tokenizer.batch_decode(output, skip_special_tokens=True)[0].strip()
        eos = getattr(self.tokenizer, "eos_token_id", None)
        stop = finish_reason(output[0].tolist(), options["max_new_tokens"], {eos} if eos is not None else set())
        # The prompt's text tokens: the model puts the video's tokens in place of <image> itself.
        usage = {"prompt_text_tokens": int(input_ids.shape[1]), "completion_tokens": int(output.shape[1]), "frames": int(video.shape[0])}
        return Reply(text, usage=usage, finish_reason=stop)
