"""Recording stand-ins for the checkpoint-shipped code of VideoChat-Flash, InternVideo2.5 and Keye-VL 1.5:
the same call signatures and the same steps as the authors' code (docs/models.md cites it), with the
model's forward pass replaced by a record of what it was given. tests/test_remote_code.py uses them."""

from __future__ import annotations

import types


class _Config:
    mm_llm_compress = True


def load_video(video_path, max_num_frames=512, media_dict=None):
    """The checkpoint's loader decodes a file with decord: never reached when the adapter supplies frames."""
    raise AssertionError(f"the real video loader was called with {video_path!r}")


class VideoChatFlashStandIn:
    """VideoChat-Flash's `chat`: load_video -> image processor -> qwen_2 prompt -> generate."""

    def __init__(self):
        self.config = _Config()
        self.calls: list[dict] = []

    def eval(self):
        return self

    def chat(
        self,
        video_path,
        tokenizer,
        user_prompt,
        chat_history=None,
        return_history=True,
        max_num_frames=512,
        media_dict=None,
        generation_config=None,
    ):
        frames, time_msg = load_video(video_path, max_num_frames=max_num_frames, media_dict=media_dict)
        prompt = f"<image>\n{time_msg.strip()} {user_prompt}"
        self.calls.append(
            {
                "frames": frames,
                "prompt": prompt,
                "max_num_frames": max_num_frames,
                "generation": dict(generation_config),
                "compress": self.config.mm_llm_compress,
            }
        )
        answer = f"saw {len(frames)} frames"
        return (answer, [(user_prompt, answer)]) if return_history else answer


class InternVideoStandIn:
    """InternVideo2.5's `chat(tokenizer, pixel_values, question, generation_config, num_patches_list=...)`."""

    def __init__(self):
        import torch

        self.weight = torch.nn.Parameter(torch.zeros(1, dtype=torch.bfloat16))
        self.calls: list[dict] = []

    def parameters(self):
        return iter([self.weight])

    def eval(self):
        return self

    def chat(self, tokenizer, pixel_values, question, generation_config, num_patches_list=None, history=None, return_history=False):
        assert question.count("<image>") == len(num_patches_list) == sum(num_patches_list), "one <image> per tile"
        assert len(pixel_values) % 4 == 0, "frames are merged in groups of 4"
        self.calls.append({"pixel_values": pixel_values, "question": question, "generation": dict(generation_config)})
        answer = "<think>hmm</think>red"  # InternVideo2.5 does not think: the adapter keeps the reply whole
        return (answer, []) if return_history else answer


class KeyeProcessorStandIn:
    """Keye-VL 1.5's processor: a chat template with the video placeholder first, and the frames' times."""

    def __init__(self):
        self.calls: list[dict] = []

    def apply_chat_template(self, messages, tokenize, add_generation_prompt):
        (turn,) = messages
        video, text = turn["content"]
        assert video["type"] == "video" and text["type"] == "text"
        return f"<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>{text['text']}<|im_end|>\n<|im_start|>assistant\n"

    def __call__(self, text, images, videos, padding, return_tensors, **kwargs):
        import torch

        self.calls.append({"text": text, "videos": videos, "kwargs": kwargs})
        return _Batch({"input_ids": torch.ones(1, 7 + len(videos[0]), dtype=torch.long)})

    def batch_decode(self, tokens, skip_special_tokens):
        return ["<think>The star is red in frame 3.</think>\n<answer>red</answer>"]


class _Batch(dict):
    def to(self, device):
        return self


class KeyeModelStandIn:
    def __init__(self):
        import torch

        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.calls: list[dict] = []

    def parameters(self):
        return iter([self.weight])

    def eval(self):
        return self

    def generate(self, input_ids, **options):
        import torch

        self.calls.append(options)
        return torch.cat([input_ids, torch.ones(1, 5, dtype=torch.long)], dim=1)


def keye_vl_utils(resample: bool = False) -> types.ModuleType:
    """keye_vl_utils.process_vision_info for a frame list: the frames (as loaded images) and its kwargs, with
    timestamps spaced evenly from 0 at the given fps, as keye-vl-utils 1.5.2 does for a frame list."""
    module = types.ModuleType("keye_vl_utils")
    module.calls = []

    def process_vision_info(messages):
        (turn,) = messages
        video = turn["content"][0]
        frames = video["video"][::2] if resample else video["video"]
        module.calls.append(video)
        kwargs = {"timestamps": [[i / video["fps"] for i in range(len(frames))]], "frame_types": [[0] * len(frames)]}
        return None, [frames], kwargs

    module.process_vision_info = process_vision_info
    return module
