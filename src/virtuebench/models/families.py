"""Model families: how each family's authors give a video to their model, for the backends that run
Hugging Face checkpoints (`transformers`, `vllm`). docs/models.md cites the reference code of each.

A family decides: the chat turn (a system turn, where the video goes, any time text), how the frames are
sized and which processor arguments go with them (frame metadata, resizing), and how a reply separates
thinking from the answer. Both backends use the same family, so the transformers and vLLM routes give a
model the same prompt and the same pixels (tests/models/test_vllm_route.py proves it on tiny checkpoints).

The Qwen families (Qwen2.5-VL, MiMo-VL, Qwen3-VL) size their frames the way qwen-vl-utils 0.0.14 does for
a list of frames (`qwen_frame_size`, checked against the real package in tests/models/test_qwen_vl_utils.py):
a per-frame cap, then a share of a whole-clip pixel budget, both rounded to the patch grid, and the
processor then takes them as they are (`do_resize=False`, as the Qwen model cards call it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from virtuebench.models.timing import FrameTimes

THINK_START, THINK_END = "<think>", "</think>"

#: InternVL's system message: its custom code's conversation template `internvl2_5` (OpenGVLab/InternVL
#: internvl_chat/internvl/conversation.py), which `model.chat()` always sends. The -HF releases' chat template has
#: no default system turn, so the family sends it, and both InternVL3.5 routes give the model the same prompt.
INTERNVL_SYSTEM_MESSAGE = "你是书生·万象，英文名是InternVL，是由上海人工智能实验室、清华大学及多家合作单位联合开发的多模态大语言模型。"


@dataclass(frozen=True)
class ThinkingReply:
    """A reply read for a thinking model: the reasoning, the final answer, and whether the reasoning never closed."""

    thinking: str | None
    answer: str
    unclosed: bool = False


def read_thinking(text: str, opened: bool = False) -> ThinkingReply:
    """Split `<think>...</think>` from the answer (Qwen3-VL-Thinking, MiMo-VL, Keye-VL thinking mode).

    The answer is what follows the last `</think>`. `opened`: the prompt already opened the block (Qwen3-VL-Thinking's
    generation prompt ends with `<think>\\n`), so the reply starts inside it. A block that never closed (the token
    limit cut it off, or the model stopped inside it) leaves no answer: `unclosed`, and the answer is empty, so the
    unfinished reasoning is never judged as an answer."""
    if THINK_END in text:
        thinking, _, answer = text.rpartition(THINK_END)
        return ThinkingReply(thinking.replace(THINK_START, "", 1).strip(), answer.strip())
    if opened or text.lstrip().startswith(THINK_START):
        return ThinkingReply(text.strip().removeprefix(THINK_START).strip(), "", unclosed=True)
    return ThinkingReply(None, text.strip())


def split_thinking(text: str, opened: bool = False) -> tuple[str | None, str]:
    reply = read_thinking(text, opened)
    return reply.thinking, reply.answer


def prompt_opens_thinking(prompt: str) -> bool:
    """Whether a rendered prompt ends inside an open thinking block (the template wrote `<think>` itself)."""
    tail = prompt.rstrip()
    return tail.endswith(THINK_START) and THINK_END not in tail[tail.rfind(THINK_START) :]


def finish_reason(new_token_ids: list[int], max_new_tokens: int, eos_token_ids: set[int]) -> str:
    """`length` when generation stopped at the token limit rather than at an end-of-sequence token, else `stop`."""
    if len(new_token_ids) >= max_new_tokens and (not new_token_ids or new_token_ids[-1] not in eos_token_ids):
        return "length"
    return "stop"


def llava_video_time_instruction(times: FrameTimes) -> str:
    """LLaVA-Video's time instruction (LLaVA-VL/LLaVA-NeXT, the model card's inference example and
    lmms-eval's llava_vid.py), with our frames' timestamps and the video's duration."""
    frame_time = ",".join(f"{t:.2f}s" for t in times.timestamps)
    return (
        f"The video lasts for {times.duration_s:.2f} seconds, and {times.n_frames} frames are uniformly sampled from it. "
        f"These frames are located at {frame_time}.Please answer the following questions related to this video."
    )


# --- Qwen frame sizing: qwen-vl-utils 0.0.14's fetch_video for a list of frames -----------------------------------


def _round_by(number: float, factor: int) -> int:
    return round(number / factor) * factor


def _smart_resize(height: int, width: int, factor: int, min_pixels: float, max_pixels: float) -> tuple[int, int]:
    """qwen-vl-utils' smart_resize: both sides multiples of `factor`, the area within [min_pixels, max_pixels], aspect kept."""
    if max(height, width) / min(height, width) > 200:
        raise ValueError(f"a frame of {width}x{height} has an aspect ratio over 200, which Qwen's resizing refuses")
    h_bar, w_bar = max(factor, _round_by(height, factor)), max(factor, _round_by(width, factor))
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar, w_bar = math.floor(height / beta / factor) * factor, math.floor(width / beta / factor) * factor
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar, w_bar = math.ceil(height * beta / factor) * factor, math.ceil(width * beta / factor) * factor
    if h_bar <= 0 or w_bar <= 0:  # qwen-vl-utils fails here too (torchvision: "height and width must be > 0")
        raise ValueError(f"a frame of {width}x{height} shrinks to nothing under a cap of {max_pixels:.0f} pixels (multiples of {factor})")
    return h_bar, w_bar


@dataclass(frozen=True)
class QwenVideo:
    """A Qwen family's video pixel settings, in qwen-vl-utils' terms (keys of its video message).

    `min_pixels` and `max_pixels` bound each frame; `total_pixels` is the whole clip's budget, shared by the frames
    two at a time (a temporal patch). The registry's `max_pixels` (the paper's per-frame cap) lowers `max_pixels`;
    `total_pixels` and `min_pixels` may be set per model in the registry's settings."""

    patch_size: int  # 14 (Qwen2.5-VL) or 16 (Qwen3-VL); frames are multiples of 2 x patch_size
    total_pixels: int
    min_pixels: int
    max_pixels: int

    @property
    def factor(self) -> int:
        return 2 * self.patch_size

    def capped(self, max_pixels: int | None = None, total_pixels: int | None = None, min_pixels: int | None = None) -> QwenVideo:
        return replace(
            self,
            max_pixels=min(self.max_pixels, max_pixels) if max_pixels else self.max_pixels,
            total_pixels=total_pixels or self.total_pixels,
            min_pixels=min_pixels or self.min_pixels,
        )

    def frame_sizes(self, height: int, width: int, n_frames: int, fixed: bool = False) -> tuple[tuple[int, int], tuple[int, int]]:
        """((h, w) after each frame's own resize, (h, w) of the clip's frames): qwen-vl-utils' two smart_resize steps.
        `fixed`: as qwen-vl-utils after upstream commit fe12058 (QwenLM/Qwen3-VL), which rounds each frame to the
        factor; only docs/models.md's tokens-per-frame table asks for it (the workflow sizes as 0.0.14 does)."""
        f = self.factor
        # fetch_video hands fetch_image the factor (28 or 32) where fetch_image expects the patch size, so each frame's
        # own resize rounds to multiples of twice the factor (56 or 64). It is what the authors' code feeds the model.
        first = _smart_resize(height, width, f if fixed else 2 * f, self.min_pixels, self.max_pixels)  # fetch_image, per frame
        n_even = math.ceil(n_frames / 2) * 2  # FRAME_FACTOR: a temporal patch holds two frames
        budget = max(min(768 * f * f, self.total_pixels / n_even * 2), int(self.min_pixels * 1.05))  # VIDEO_MAX_TOKEN_NUM 768
        return first, _smart_resize(*first, f, self.min_pixels, min(self.max_pixels, budget))

    def frame_size(self, height: int, width: int, n_frames: int, fixed: bool = False) -> tuple[int, int]:
        return self.frame_sizes(height, width, n_frames, fixed)[1]

    def tokens_per_frame(self, height: int, width: int, n_frames: int, fixed: bool = False) -> float:
        """Visual tokens the language model sees per frame: a merged token is 2x2 patches of two frames."""
        h, w = self.frame_size(height, width, n_frames, fixed)
        return h * w / self.factor**2 / 2


def resize_frames(images: list, video: QwenVideo):
    """The frames as qwen-vl-utils hands them to the processor: each resized by PIL (bicubic), then the clip by
    torchvision (bicubic, antialiased) to the budget's size; a uint8 tensor (T, C, H, W)."""
    import numpy as np
    import torch
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms import functional as tvf

    (first_h, first_w), (h, w) = video.frame_sizes(images[0].height, images[0].width, len(images))
    frames = torch.stack([torch.from_numpy(np.array(image.resize((first_w, first_h)))).permute(2, 0, 1) for image in images])
    if (h, w) != (first_h, first_w):
        frames = tvf.resize(frames, [h, w], interpolation=InterpolationMode.BICUBIC, antialias=True)
    return frames


#: The Qwen families' defaults. Both use the Qwen authors' long-video budget of 19,267,584 pixels a clip
#: (Qwen2.5-VL's report: at most 24,576 video tokens of 28x28 pixels; QwenLM/Qwen3-VL
#: evaluation/VideoMME/infer_instruct.sh: --total-pixels 19267584, --max-pixels 401408, --min-pixels 3584).
#: Qwen2.5-VL's floor and per-frame ceiling are qwen-vl-utils' (128 and 768 tokens of 28x28).
QWEN2_5_VIDEO = QwenVideo(patch_size=14, total_pixels=19_267_584, min_pixels=128 * 28 * 28, max_pixels=768 * 28 * 28)
QWEN3_VIDEO = QwenVideo(patch_size=16, total_pixels=19_267_584, min_pixels=3_584, max_pixels=401_408)


@dataclass(frozen=True)
class Family:
    """How one family's frames, times and prompt reach its Hugging Face processor."""

    name: str
    metadata: bool = False  # the processor takes frame metadata (fps, frame indices): Qwen2.5-VL, Qwen3-VL
    qwen_video: QwenVideo | None = None  # frames sized the qwen-vl-utils way, then given to the processor unresized
    time_instruction: bool = False  # LLaVA-Video: the times as text before the question
    thinking: bool = False  # replies may hold <think>...</think>
    system_message: str | None = None  # a system turn the authors' code sends that the checkpoint's template does not
    reference_positions: bool = False  # transformers 5 places text after a video wrongly (models/rope.py): use the reference
    # The processor writes <|vision_start|>...<|vision_end|> around each temporal patch itself, so the
    # template's wrapped placeholder must reach it bare (Qwen3-VL: its reference processor, in transformers
    # 4.57 and vLLM, replaces the whole wrapper; transformers 5.23's replaces only <|video_pad|>).
    bare_video_placeholder: bool = False

    def user_text(self, prompt: str, times: FrameTimes, suffix: str | None = None) -> str:
        text = f"{llava_video_time_instruction(times)}\n{prompt}" if self.time_instruction else prompt
        return f"{text} {suffix}" if suffix else text

    def messages(self, prompt: str, times: FrameTimes, suffix: str | None = None) -> list[dict[str, Any]]:
        """One user turn, the video first and then the text, as every family's model card shows it."""
        turns: list[dict[str, Any]] = []
        if self.system_message:
            turns.append({"role": "system", "content": [{"type": "text", "text": self.system_message}]})
        turns.append({"role": "user", "content": [{"type": "video"}, {"type": "text", "text": self.user_text(prompt, times, suffix)}]})
        return turns

    def video_settings(self, max_pixels: int | None = None, total_pixels: int | None = None, min_pixels: int | None = None):
        """The family's Qwen video settings with the registry's caps applied (None for other families)."""
        return self.qwen_video.capped(max_pixels, total_pixels, min_pixels) if self.qwen_video else None

    def prepare_frames(self, images: list, video: QwenVideo | None):
        """The frames as the processor receives them: resized the qwen-vl-utils way for the Qwen families, else as stored."""
        return resize_frames(images, video) if video else images

    def processor_video_kwargs(self, times: FrameTimes) -> dict[str, Any]:
        """Arguments for the processor call beside `videos=[frames]`: our frames are the clip (no resampling)."""
        kwargs: dict[str, Any] = {"do_sample_frames": False}
        if self.metadata:
            from transformers.video_utils import VideoMetadata

            kwargs["video_metadata"] = [VideoMetadata(**times.hf_metadata())]
        if self.qwen_video:
            # Sized already, as qwen-vl-utils leaves them; the processor's own per-frame cap (transformers >= 5.19)
            # would size them again, so it is turned off explicitly.
            kwargs["do_resize"] = False
            kwargs["cap_pixels_per_frame"] = False
        return kwargs

    def processor_text(self, text: str, processor: Any) -> str:
        """The templated prompt as the transformers processor must receive it."""
        if self.bare_video_placeholder:
            wrapped = f"{processor.vision_start_token}{processor.video_token}{processor.vision_end_token}"
            text = text.replace(wrapped, processor.video_token, 1)
        return text

    def read(self, text: str, prompt: str = "") -> ThinkingReply:
        """The reply's thinking and answer; the prompt tells whether the template opened the thinking block."""
        if not self.thinking:
            return ThinkingReply(None, text.strip())
        return read_thinking(text, opened=prompt_opens_thinking(prompt))

    def parse(self, text: str, prompt: str = "") -> tuple[str | None, str]:
        reply = self.read(text, prompt)
        return reply.thinking, reply.answer


FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family("qwen2.5-vl", metadata=True, qwen_video=QWEN2_5_VIDEO, reference_positions=True),
        Family("mimo-vl", metadata=True, qwen_video=QWEN2_5_VIDEO, thinking=True, reference_positions=True),  # Qwen2.5-VL's classes
        Family("qwen3-vl", metadata=True, qwen_video=QWEN3_VIDEO, thinking=True, bare_video_placeholder=True),
        Family("internvl", system_message=INTERNVL_SYSTEM_MESSAGE),
        Family("llava-video", time_instruction=True),
    )
}


def get_family(name: str | None) -> Family:
    if name not in FAMILIES:
        raise ValueError(f"unknown model family {name!r} for a Hugging Face backend; known: {sorted(FAMILIES)}")
    return FAMILIES[name]
