"""Recording stand-ins for the checkpoint-shipped code of VideoChat-Flash, InternVideo2.5, InternVL3.5 and
Keye-VL 1.5 (none of it is on PyPI): the same call signatures and the same steps as the authors' code
(docs/models.md cites it), with the model's forward pass replaced by a record of what it was given.
tests/models/test_remote_code.py uses them; keye-vl-utils, which is on PyPI, runs for real there."""

from __future__ import annotations


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


class InternVLChatStandIn:
    """InternVL's `chat(tokenizer, pixel_values, question, generation_config, num_patches_list=...)` (InternVL3.5's
    original format; InternVideo2.5 uses the same code): one <image> per tile, the system message added by chat()."""

    frames_per_group = 1
    system_message = "你是书生·万象，英文名是InternVL，是由上海人工智能实验室、清华大学及多家合作单位联合开发的多模态大语言模型。"

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
        assert len(pixel_values) % self.frames_per_group == 0, f"frames are merged in groups of {self.frames_per_group}"
        prompt = f"<|im_start|>system\n{self.system_message}<|im_end|>\n<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"
        self.calls.append({"pixel_values": pixel_values, "question": question, "prompt": prompt, "generation": dict(generation_config)})
        answer = "<think>hmm</think>red"  # neither model thinks: the adapter keeps the reply whole
        return (answer, []) if return_history else answer


class InternVideoStandIn(InternVLChatStandIn):
    """InternVideo2.5's chat: InternVL's, with frames merged in groups of 4."""

    frames_per_group = 4


class KeyeProcessorStandIn:
    """Keye-VL 1.5's processor (remote code, not on PyPI): its chat template as the transformers docs' Keye-VL 1.5
    page renders it (a default system turn, the video placeholder first), recording what it is given."""

    def __init__(self):
        self.calls: list[dict] = []

    def apply_chat_template(self, messages, tokenize, add_generation_prompt):
        (turn,) = messages
        video, text = turn["content"]
        assert video["type"] == "video" and text["type"] == "text"
        return (
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
            f"<|im_start|>user\n<|vision_start|><|video_pad|><|vision_end|>{text['text']}<|im_end|>\n<|im_start|>assistant\n"
        )

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


def llava_modules() -> dict:
    """LLaVA-NeXT's `llava` modules the LLaVA-Video model card imports, as importable stand-ins: its constants, its
    `qwen_1_5` conversation template (rendered as its CHATML style renders it), and tokenizer_image_token (the text
    between <image> markers tokenized, IMAGE_TOKEN_INDEX in their place). The loader is never reached in tests."""
    import types

    constants = types.ModuleType("llava.constants")
    constants.IMAGE_TOKEN_INDEX, constants.DEFAULT_IMAGE_TOKEN = -200, "<image>"

    class Conversation:
        def __init__(self, system, roles, sep):
            self.system, self.roles, self.sep, self.messages = system, roles, sep, []

        def append_message(self, role, message):
            self.messages.append([role, message])

        def get_prompt(self):
            text = self.system + self.sep + "\n"
            for role, message in self.messages:
                text += role + "\n" + message + self.sep + "\n" if message else role + "\n"
            return text

    conversation = types.ModuleType("llava.conversation")
    conversation.conv_templates = {
        "qwen_1_5": Conversation(
            "<|im_start|>system\nYou are a helpful assistant.", ("<|im_start|>user", "<|im_start|>assistant"), "<|im_end|>"
        )
    }

    def tokenizer_image_token(prompt, tokenizer, image_token_index, return_tensors=None):
        import torch

        ids: list[int] = []
        for i, chunk in enumerate(prompt.split("<image>")):
            if i:
                ids.append(image_token_index)
            ids.extend(tokenizer(chunk).input_ids)
        return torch.tensor(ids, dtype=torch.long)

    mm_utils = types.ModuleType("llava.mm_utils")
    mm_utils.tokenizer_image_token = tokenizer_image_token
    builder = types.ModuleType("llava.model.builder")

    def load_pretrained_model(*args, **kwargs):
        raise AssertionError("the tests hand the backend its model")

    builder.load_pretrained_model = load_pretrained_model
    return {"builder": builder, "mm_utils": mm_utils, "constants": constants, "conversation": conversation}


class LlavaVideoImageProcessorStandIn:
    """SigLIP's image processor as the tower exposes it: (T, 3, 384, 384) pixel values for a (T, H, W, 3) array."""

    def preprocess(self, frames, return_tensors):
        import torch

        assert frames.ndim == 4 and frames.shape[-1] == 3 and frames.dtype.name == "uint8"
        return {"pixel_values": torch.zeros(frames.shape[0], 3, 384, 384)}


class LlavaVideoModelStandIn(KeyeModelStandIn):
    """LlavaQwenForCausalLM.generate(input_ids, images=[video], modalities=["video"], ...): only the new tokens come back."""

    def generate(self, input_ids, images=None, modalities=None, **options):
        import torch

        self.calls.append({"input_ids": input_ids, "images": images, "modalities": modalities, **options})
        return torch.ones(1, 3, dtype=torch.long)


class LlavaTokenizerStandIn:
    """Characters as tokens (enough for tokenizer_image_token and the prompt length)."""

    eos_token_id = 0

    def __call__(self, text):
        import types

        return types.SimpleNamespace(input_ids=[ord(c) for c in text])

    def batch_decode(self, output, skip_special_tokens):
        return [" The star is red. "]
