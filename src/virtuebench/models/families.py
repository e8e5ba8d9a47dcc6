"""Model families: how each family's authors give a video to their model, for the backends that run
Hugging Face checkpoints (`transformers`, `vllm`). docs/models.md cites the reference code of each.

A family decides four things: the chat turn (where the video goes, any time text), the processor's
video arguments (frame metadata, pixel caps), how the reply separates thinking from the answer, and
what the registry's `family:` name is. Frames arrive as PIL images at their stored size; the
processor resizes them to the family's grid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from virtuebench.models.timing import FrameTimes

THINK_END = "</think>"


def split_thinking(text: str) -> tuple[str | None, str]:
    """(thinking, answer) of a reply that may hold a `<think>...</think>` block (Qwen3-VL-Thinking, MiMo-VL,
    Keye-VL thinking mode). The answer is what follows the last `</think>`; a reply whose thinking never
    closed (cut off by the token limit) has an empty answer, so it is judged as no answer at all."""
    if THINK_END in text:
        thinking, _, answer = text.rpartition(THINK_END)
        return thinking.replace("<think>", "", 1).strip(), answer.strip()
    if text.lstrip().startswith("<think>"):
        return text.strip().removeprefix("<think>").strip(), ""
    return None, text.strip()


def llava_video_time_instruction(times: FrameTimes) -> str:
    """LLaVA-Video's time instruction (LLaVA-VL/LLaVA-NeXT, the model card's inference example and
    lmms-eval's llava_vid.py), with our frames' timestamps and the video's duration."""
    frame_time = ",".join(f"{t:.2f}s" for t in times.timestamps)
    return (
        f"The video lasts for {times.duration_s:.2f} seconds, and {times.n_frames} frames are uniformly sampled from it. "
        f"These frames are located at {frame_time}.Please answer the following questions related to this video."
    )


@dataclass(frozen=True)
class Family:
    """How one family's frames, times and prompt reach its Hugging Face processor."""

    name: str
    metadata: bool = False  # the processor takes frame metadata (fps, frame indices): Qwen2.5-VL, Qwen3-VL
    pixel_budget: str | None = None  # "per_frame" (Qwen2.5-VL's size) or "per_video" (Qwen3-VL's size)
    time_instruction: bool = False  # LLaVA-Video: the times as text before the question
    thinking: bool = False  # replies may hold <think>...</think>
    # The processor writes <|vision_start|>...<|vision_end|> around each temporal patch itself, so the
    # template's wrapped placeholder must reach it bare (Qwen3-VL: its reference processor, in transformers
    # 4.57 and vLLM, replaces the whole wrapper; transformers 5.23's replaces only <|video_pad|>).
    bare_video_placeholder: bool = False

    def user_text(self, prompt: str, times: FrameTimes, suffix: str | None = None) -> str:
        text = f"{llava_video_time_instruction(times)}\n{prompt}" if self.time_instruction else prompt
        return f"{text} {suffix}" if suffix else text

    def messages(self, prompt: str, times: FrameTimes, suffix: str | None = None) -> list[dict[str, Any]]:
        """One user turn, the video first and then the text, as every family's model card shows it."""
        return [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": self.user_text(prompt, times, suffix)}]}]

    def processor_video_kwargs(self, times: FrameTimes, video_processor: Any, max_pixels: int | None) -> dict[str, Any]:
        """Arguments for the processor call beside `videos=[frames]`: our frames are the clip (no resampling)."""
        kwargs: dict[str, Any] = {"do_sample_frames": False}
        if self.metadata:
            from transformers.video_utils import VideoMetadata

            kwargs["video_metadata"] = [VideoMetadata(**times.hf_metadata())]
        if self.pixel_budget:
            size = dict(video_processor.size)
            if max_pixels:
                # The registry's per-frame cap; Qwen3-VL's size is a budget for the whole clip.
                cap = max_pixels * (times.n_frames if self.pixel_budget == "per_video" else 1)
                size["longest_edge"] = min(size["longest_edge"], cap)
            kwargs["size"] = size
            kwargs["cap_pixels_per_frame"] = True  # qwen-vl-utils' bound on the clip's total pixels
        return kwargs

    def processor_text(self, text: str, processor: Any) -> str:
        """The templated prompt as the transformers processor must receive it."""
        if self.bare_video_placeholder:
            wrapped = f"{processor.vision_start_token}{processor.video_token}{processor.vision_end_token}"
            text = text.replace(wrapped, processor.video_token, 1)
        return text

    def parse(self, text: str) -> tuple[str | None, str]:
        return split_thinking(text) if self.thinking else (None, text.strip())


FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family("qwen2.5-vl", metadata=True, pixel_budget="per_frame"),
        Family("mimo-vl", metadata=True, pixel_budget="per_frame", thinking=True),  # Qwen2.5-VL's classes
        Family("qwen3-vl", metadata=True, pixel_budget="per_video", thinking=True, bare_video_placeholder=True),
        Family("internvl"),
        Family("llava-video", time_instruction=True),
    )
}


def get_family(name: str | None) -> Family:
    if name not in FAMILIES:
        raise ValueError(f"unknown model family {name!r} for a Hugging Face backend; known: {sorted(FAMILIES)}")
    return FAMILIES[name]
