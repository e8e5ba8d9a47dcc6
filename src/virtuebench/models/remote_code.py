"""Backends for families whose modelling code ships with the checkpoint (`trust_remote_code`) and has no
transformers class: VideoChat-Flash, InternVideo2.5, InternVL3.5 in its original format (the -Instruct
releases have no -HF one) and Keye-VL 1.5. Each follows its authors' published inference code
(docs/models.md cites the files), with our frames where that code takes a video path.

- `videochat_flash`: the model card's `model.chat(video_path, tokenizer, question, ...)`. `chat` reads the
  video with its module's `load_video`; we give it a loader that returns our frames and the time message
  its training used ("The video lasts for D seconds, and N frames are uniformly sampled from it."), so
  everything after the loader (frame preprocessing, the qwen_2 chat template, generation) is the authors'.
- `internvl_chat` (InternVL3.5) and `internvideo` (InternVideo2.5): the model cards' `model.chat(tokenizer,
  pixel_values, question, generation_config, num_patches_list=...)`: one 448x448 tile per frame (bicubic,
  ImageNet mean/std, `max_num=1`), the question prefixed with `Frame{i}: <image>` lines, no time text (the
  cards give none); `chat()` itself adds the checkpoint's system message and template.
- `keye`: the Keye-VL 1.5 README's flow: `keye_vl_utils.process_vision_info` on a message holding our
  frames, the processor, `generate`. keye-vl-utils spaces frame times evenly from 0 for a frame list;
  we pass the manifest's timestamps instead (a float tensor, as keye-vl-utils would), and the thinking
  mode as the README's `/think`, `/no_think` at the end of the question. No `fps` goes in the message:
  keye-vl-utils would then recount the frames as int(N / fps * fps), which floating point rounds down to
  N - 1 for about 7% of durations (tests/models/test_keye_vl_utils.py runs the real package over them).

InternVideo2.5 and VideoChat-Flash group frames by 4 (16 tokens per frame after merging): a frame count that
is not a multiple of 4 is refused rather than silently mis-grouped. Their code pins transformers 4.40
(envs/videochat.yaml). Where the authors' chat API returns only text (VideoChat-Flash, InternVL), a reply
whose re-tokenized length reaches `max_new_tokens` is taken to have stopped at the limit.
"""

from __future__ import annotations

import importlib
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from virtuebench.models.base import DETERMINISTIC, UNSEEDED, Backend, Reply, Request
from virtuebench.models.families import finish_reason, prompt_opens_thinking, read_thinking
from virtuebench.models.frames_io import load_frames
from virtuebench.models.hf import NULLABLE_INT, NULLABLE_STR, Prepared
from virtuebench.support.settings import setting, settings_from_dict

if TYPE_CHECKING:
    from virtuebench.models.spec import ModelSpec

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
FRAMES_PER_GROUP = 4  # VideoChat-Flash and InternVideo2.5 merge each group of 4 frames to 64 tokens


@dataclass(frozen=True)
class RemoteCodeSettings:
    """Every setting of the remote-code backends, each with its rerun class; the weights' hub id and revision are the
    model spec's (models/spec.py)."""

    trust_remote_code: bool = setting(True, rerun="answers", schema={"type": "boolean"})
    dtype: str = setting("bfloat16", rerun="answers", schema={"type": "string"})
    max_pixels: int | None = setting(
        None,
        rerun="answers",
        schema=NULLABLE_INT,
        description="Keye-VL: keye-vl-utils' per-frame cap; the others resize to their own square input",
    )
    max_new_tokens: int = setting(1024, rerun="answers", schema={"type": "integer", "minimum": 1})
    generation: dict[str, Any] = setting(
        rerun="answers", schema={"type": "object"}, description="extra generate() arguments", default_factory=dict
    )
    system_suffix: str | None = setting(
        None, rerun="answers", schema=NULLABLE_STR, description="Keye-VL's thinking switch: /think or /no_think"
    )

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> RemoteCodeSettings:
        return settings_from_dict(cls, values, "remote-code backend")


def videochat_time_message(request: Request) -> str:
    """VideoChat-Flash's time message (its training's `time_msg short`), for our frames."""
    return f"The video lasts for {request.times.duration_s:.2f} seconds, and {len(request.frames)} frames are uniformly sampled from it."


def frame_prefix(n_frames: int) -> str:
    """InternVideo2.5's video prefix (model card and lmms-eval): one `Frame{i}: <image>` line per frame."""
    return "".join(f"Frame{i + 1}: <image>\n" for i in range(n_frames))


def require_groups(request: Request, family: str, group: int) -> None:
    if len(request.frames) % group:
        raise ValueError(f"{family} merges frames in groups of {group}; level {request.level} gave {len(request.frames)} frames")


def keye_answer(text: str, opened: bool = False):
    """Keye-VL's reply read as VLMEvalKit reads it: the answer after the last </think> (or </analysis>), then the
    last <answer>...</answer> where there is one; a thinking block left open leaves no answer."""
    reading = read_thinking(text.replace("</analysis>", "</think>").replace("<analysis>", "<think>"), opened)
    tagged = re.findall(r"<answer>(.*?)</answer>", reading.answer, flags=re.DOTALL)
    return reading.thinking, (tagged[-1].strip() if tagged else reading.answer), reading.unclosed


def text_finish_reason(tokenizer, text: str, max_new_tokens: int) -> str:
    """For chat APIs that return only text: `length` when the reply re-tokenizes to the token limit."""
    try:
        n_tokens = len(tokenizer(text, add_special_tokens=False)["input_ids"])
    except Exception:  # a tokenizer stand-in without __call__: the limit cannot be told
        return "stop"
    return "length" if n_tokens >= max_new_tokens else "stop"


class _RemoteCodeBackend(Backend):
    """Loads tokenizer, processor and model by hub id with the checkpoint's own code."""

    family_name = ""
    settings_type = RemoteCodeSettings
    frame_pixels_setting = "max_pixels"

    @classmethod
    def decoding(cls, settings: dict[str, Any]) -> str:
        """Greedy unless `generation` asks to sample, which no seed of these backends fixes."""
        return UNSEEDED if RemoteCodeSettings.from_dict(settings).generation.get("do_sample") else DETERMINISTIC

    def __init__(self, settings: dict[str, Any], spec: ModelSpec | None = None, model=None, tokenizer=None, processor=None) -> None:
        """`spec`: the model's hub id and revision (a backend handed its `model` loads nothing)."""
        self.settings = s = RemoteCodeSettings.from_dict(settings)
        hub_id, revision = (spec.hub_id, spec.revision) if spec else (None, None)
        import torch

        self.torch = torch
        if model is None:
            from transformers import AutoModel, AutoProcessor, AutoTokenizer

            if not hub_id:
                raise ValueError(f"{self.family_name} backend: the registry entry needs a hub_id")
            common = {"revision": revision, "trust_remote_code": s.trust_remote_code}
            tokenizer = AutoTokenizer.from_pretrained(hub_id, **common)
            if self.family_name == "keye":
                processor = AutoProcessor.from_pretrained(hub_id, **common)
            device_map = "auto" if torch.cuda.is_available() else None
            model = AutoModel.from_pretrained(hub_id, dtype=getattr(torch, s.dtype), device_map=device_map, **common)
            self.loads_weights = True
        self.model, self.tokenizer, self.processor = model.eval(), tokenizer, processor

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> _RemoteCodeBackend:
        return cls(spec.settings, spec)

    @property
    def generation(self) -> dict[str, Any]:
        return {"do_sample": False, "max_new_tokens": self.settings.max_new_tokens, **self.settings.generation}


class VideoChatFlashBackend(_RemoteCodeBackend):
    family_name = "videochat-flash"
    env_imports = ("torch", "torchvision", "transformers", "accelerate", "timm", "einops", "decord", "cv2", "imageio")

    def __init__(self, settings: dict[str, Any], spec: ModelSpec | None = None, model=None, tokenizer=None, processor=None) -> None:
        super().__init__(settings, spec, model, tokenizer, processor)
        self.model.config.mm_llm_compress = False  # as the authors' evaluation (lmms-eval_videochat) runs it
        self.code = sys.modules[type(self.model).__module__]  # the checkpoint's modelling module

    def answer(self, request: Request) -> Reply:
        import numpy as np

        require_groups(request, self.family_name, FRAMES_PER_GROUP)
        frames = np.stack([np.asarray(image) for image in load_frames(request.frames)])
        message = videochat_time_message(request)

        def our_frames(video_path, max_num_frames=None, media_dict=None, **_):
            return frames, message

        original = self.code.load_video
        self.code.load_video = our_frames  # chat() reads its video through this module-level name
        try:
            with self.torch.inference_mode():
                text, _ = self.model.chat(
                    video_path=request.instance_id,
                    tokenizer=self.tokenizer,
                    user_prompt=request.prompt,
                    return_history=True,
                    max_num_frames=len(frames),
                    generation_config=self.generation,
                )
        finally:
            self.code.load_video = original
        stop = text_finish_reason(self.tokenizer, text, self.generation["max_new_tokens"])
        return Reply(text.strip(), usage={"frames": len(frames)}, finish_reason=stop)


class InternVLChatBackend(_RemoteCodeBackend):
    """InternVL's own `chat()` (the checkpoint's InternVLChatModel): InternVL3.5's original-format releases."""

    family_name = "internvl"
    frames_per_group = 1
    env_imports = ("torch", "torchvision", "transformers", "timm", "einops")
    pipelined = True

    def prepare(self, request: Request):
        """One 448x448 tile per frame, as the model card's load_video with max_num=1."""
        from torchvision import transforms

        require_groups(request, self.family_name, self.frames_per_group)
        transform = transforms.Compose(
            [
                transforms.Resize((448, 448), interpolation=transforms.InterpolationMode.BICUBIC),
                transforms.ToTensor(),
                transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
            ]
        )
        pixel_values = self.torch.stack([transform(image) for image in load_frames(request.frames)])
        return pixel_values, frame_prefix(len(request.frames)) + request.prompt

    def generate(self, prepared) -> Reply:
        pixel_values, question = prepared
        device = next(self.model.parameters()).device
        pixel_values = pixel_values.to(device=device, dtype=next(self.model.parameters()).dtype)
        with self.torch.inference_mode():
            text, _ = self.model.chat(
                self.tokenizer,
                pixel_values,
                question,
                self.generation,
                num_patches_list=[1] * len(pixel_values),
                history=None,
                return_history=True,
            )
        stop = text_finish_reason(self.tokenizer, text, self.generation["max_new_tokens"])
        return Reply(text.strip(), usage={"frames": len(pixel_values)}, finish_reason=stop)


class InternVideoBackend(InternVLChatBackend):
    """InternVideo2.5: InternVL's chat API, frames merged in groups of 4."""

    family_name = "internvideo"
    frames_per_group = FRAMES_PER_GROUP
    env_imports = VideoChatFlashBackend.env_imports  # its route is VideoChat-Flash's (envs/videochat.yaml)


class KeyeBackend(_RemoteCodeBackend):
    family_name = "keye"
    pipelined = True
    env_imports = ("torch", "transformers", "keye_vl_utils", "cv2", "einops")

    def messages(self, request: Request) -> list[dict[str, Any]]:
        """The README's message: our frames as a list, the thinking switch at the very end of the question."""
        video: dict[str, Any] = {"type": "video", "video": [str(path) for path in request.frames]}
        if self.settings.max_pixels:
            video["max_pixels"] = self.settings.max_pixels
        text = request.prompt + (self.settings.system_suffix or "")
        return [{"role": "user", "content": [video, {"type": "text", "text": text}]}]

    def prepare(self, request: Request) -> Prepared:
        vision = importlib.import_module("keye_vl_utils")
        messages = self.messages(request)
        prompt = self.processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        images, videos, kwargs = vision.process_vision_info(messages)
        if videos is None or len(videos) != 1 or len(videos[0]) != len(request.frames):
            got = None if videos is None else [len(v) for v in videos]
            raise ValueError(f"keye_vl_utils returned {got} frames for {len(request.frames)}: it resampled the level's frames")
        kwargs = dict(kwargs)
        # The manifest's times, not evenly spaced from 0, in the form keye-vl-utils gives them (a float tensor per video).
        kwargs["timestamps"] = [self.torch.tensor(request.timestamps, dtype=self.torch.float32)]
        inputs = self.processor(text=[prompt], images=images, videos=videos, padding=True, return_tensors="pt", **kwargs)
        return Prepared(inputs, prompt)

    def generate(self, prepared: Prepared) -> Reply:
        inputs = prepared.inputs.to(next(self.model.parameters()).device)
        with self.torch.inference_mode():
            output = self.model.generate(**inputs, **self.generation)
        prompt_length = inputs["input_ids"].shape[1]
        new_tokens = output[:, prompt_length:]
        text = self.processor.batch_decode(new_tokens, skip_special_tokens=True)[0]
        thinking, answer, unclosed = keye_answer(text, prompt_opens_thinking(prepared.prompt))
        usage = {"prompt_tokens": int(prompt_length), "completion_tokens": int(new_tokens.shape[1])}
        eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        stop = finish_reason(new_tokens[0].tolist(), self.generation["max_new_tokens"], eos_ids)
        return Reply(answer, usage=usage, thinking=thinking, finish_reason=stop, unclosed_thinking=unclosed)
