"""Tiny, randomly initialised models of each Hugging Face family's real transformers classes, with the
family's real processor classes, a tokenizer built here (the `tokenizers` library) and a minimal chat
template: the code path real checkpoints take, on CPU, with no download.

Each builder returns (model, processor). The tokenizer is byte-level BPE with no merges (one token per
byte, the family's special tokens whole), so any prompt encodes and decodes back to the same text: the
times, frame labels and question a test looks for survive the round trip. The chat templates render
one user turn the way each family's own template does (a video part as the family's placeholder, text
parts as text) and then the assistant's generation prompt, with the system turn each family's published
template adds by itself and Qwen3-VL-Thinking's opened thinking block. Needs torch, torchvision and transformers
(the `hf` extra)."""

from __future__ import annotations

IM_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
QWEN_TOKENS = IM_TOKENS + ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
INTERNVL_TOKENS = IM_TOKENS + ["<img>", "</img>", "<IMG_CONTEXT>", "<video>"]
LLAVA_TOKENS = IM_TOKENS + ["<image>", "<video>"]


#: Each family's chat template as its checkpoints publish it, reduced to what a one-video prompt uses (written
#: here, not copied; docs/models.md names the published templates they follow): the system turn the template adds
#: by itself, the video placeholder, text parts as text, and the generation prompt. Rendered prompts for a system
#: turn and a [video, text] user turn match the published templates byte for byte (checked when written).
def _turn(body: str) -> str:
    return "<|im_start|>{{ m['role'] }}\n" + body + "<|im_end|>\n"


_PARTS = (
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'video' %}VIDEO{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
)
_QWEN_VIDEO = "<|vision_start|><|video_pad|><|vision_end|>"


def _template(video: str, default_system: str | None = None, generation: str = "<|im_start|>assistant\n", by_type: bool = False) -> str:
    parts = _PARTS.replace("VIDEO", video)
    if by_type:  # LLaVA-OneVision's: every image, then every video, then the text parts, whatever their order
        parts = (
            "{% for c in m['content'] | selectattr('type', 'equalto', 'video') %}" + video + "{% endfor %}"
            "{% for c in m['content'] | selectattr('type', 'equalto', 'text') %}{{ c['text'] }}{% endfor %}"
        )
    system = (
        "{% if loop.first and m['role'] != 'system' %}<|im_start|>system\n" + default_system + "<|im_end|>\n{% endif %}"
        if default_system
        else ""
    )
    return "{% for m in messages %}" + system + _turn(parts) + "{% endfor %}{% if add_generation_prompt %}" + generation + "{% endif %}"


TEMPLATES = {
    # Qwen/Qwen2.5-VL-7B-Instruct chat_template.json: "You are a helpful assistant." unless a system turn is given.
    "qwen2.5-vl": _template(_QWEN_VIDEO, default_system="You are a helpful assistant."),
    # XiaomiMiMo/MiMo-VL: the Qwen2.5-VL template with MiMo's default system turn.
    "mimo-vl": _template(_QWEN_VIDEO, default_system="You are MiMo, an AI assistant developed by Xiaomi."),
    # Qwen/Qwen3-VL-8B-Instruct: no default system turn.
    "qwen3-vl": _template(_QWEN_VIDEO),
    # Qwen/Qwen3-VL-8B-Thinking: the generation prompt opens the thinking block itself.
    "qwen3-vl-thinking": _template(_QWEN_VIDEO, generation="<|im_start|>assistant\n<think>\n"),
    # OpenGVLab/InternVL3_5-*-HF: no default system turn; the processor expands <video> into Frame{i} lines.
    "internvl": _template("<video>\n"),
    # llava-hf LLaVA-OneVision (-hf) template: video before the text whatever the order given.
    "llava-video": _template("<video>\n", by_type=True),
}

#: Pixel settings the Qwen tests give the backend (qwen-vl-utils' keys; the registry's `max_pixels`, `min_pixels`,
#: `total_pixels`), small enough for tiny models: a clip budget that leaves 64 frames their full size and makes
#: 1024 frames smaller, as the real 19,267,584-pixel budget does to real frames.
QWEN2_5_MAX_PIXELS = 28 * 28 * 16  # at most 16 merged tokens (64 patches of 14 px) a temporal patch
QWEN3_MAX_PIXELS = 32 * 32 * 8  # at most 8 merged tokens a temporal patch
TINY_VIDEO = {
    "qwen2.5-vl": {"max_pixels": QWEN2_5_MAX_PIXELS, "min_pixels": 28 * 28 * 4, "total_pixels": QWEN2_5_MAX_PIXELS * 32},
    "qwen3-vl": {"max_pixels": QWEN3_MAX_PIXELS, "min_pixels": 32 * 32 * 2, "total_pixels": QWEN3_MAX_PIXELS * 32},
}
TINY_VIDEO["mimo-vl"] = TINY_VIDEO["qwen2.5-vl"]
TINY_VIDEO["qwen3-vl-thinking"] = TINY_VIDEO["qwen3-vl"]
INTERNVL_IMAGE_SIZE, INTERNVL_PATCH = 64, 16
INTERNVL_IMAGE_SEQ_LENGTH = (INTERNVL_IMAGE_SIZE // INTERNVL_PATCH) ** 2 // 4  # downsample_ratio 0.5: 2x2 pixel shuffle
LLAVA_IMAGE_SIZE, LLAVA_PATCH = 32, 8  # SigLIP: 4 x 4 patches a frame, pooled to 2 x 2 for video

#: The language models' size: 2 layers, head_dim 32, the smallest head vLLM's CPU attention takes (tests/models/test_vllm_route.py).
HEAD_DIM = 32
TEXT_SIZE = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1)
MROPE_SECTION = [8, 4, 4]  # temporal, height, width: half the head dimension
INIT_RANGE = 0.02


def byte_tokenizer(special_tokens: list[str], **named_tokens: str):
    """Byte-level BPE without merges: the special tokens whole, every other byte a token of its own.
    `named_tokens` (e.g. video_token="<video>") become the tokenizer's model-specific token attributes."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tokens = list(dict.fromkeys(special_tokens)) + sorted(pre_tokenizers.ByteLevel.alphabet())
    tokenizer = Tokenizer(models.BPE(vocab={token: i for i, token in enumerate(tokens)}, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([AddedToken(token, special=True, normalized=False) for token in special_tokens])
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token="<|im_end|>", pad_token="<|endoftext|>", extra_special_tokens=named_tokens or None
    )


def _special_ids(tokenizer) -> dict[str, int]:
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in IM_TOKENS}
    return {"bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"], "pad_token_id": ids["<|endoftext|>"]}


def _qwen2_text(tokenizer) -> dict:
    """A 2-layer Qwen2 language model, the text half of InternVL and LLaVA-OneVision."""
    return dict(
        model_type="qwen2",
        vocab_size=len(tokenizer),
        **TEXT_SIZE,
        max_position_embeddings=32768,
        **_special_ids(tokenizer),
    )


def _seeded(model_class, config):
    import os

    import torch

    config.initializer_range = float(os.environ.get("VB_TINY_INIT", INIT_RANGE))
    torch.manual_seed(0)
    return model_class(config).eval()


def tiny_qwen2_5_vl(template: str = "qwen2.5-vl"):
    """Qwen2_5_VLForConditionalGeneration + Qwen2_5_VLProcessor (Qwen2VL image and video processors, patch 14);
    `template` "mimo-vl" gives MiMo-VL's (the same architecture)."""
    from transformers import (
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2_5_VLProcessor,
        Qwen2VLImageProcessor,
        Qwen2VLVideoProcessor,
    )

    tokenizer = byte_tokenizer(QWEN_TOKENS)
    pixels = {"min_pixels": 28 * 28 * 4, "max_pixels": QWEN2_5_MAX_PIXELS}
    processor = Qwen2_5_VLProcessor(
        image_processor=Qwen2VLImageProcessor(**pixels),
        video_processor=Qwen2VLVideoProcessor(**pixels),
        tokenizer=tokenizer,
        chat_template=TEMPLATES[template],
    )
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in QWEN_TOKENS}
    special = _special_ids(tokenizer)
    config = Qwen2_5_VLConfig(
        text_config=dict(
            vocab_size=len(tokenizer),
            **TEXT_SIZE,
            max_position_embeddings=32768,
            rope_theta=10000.0,
            rope_scaling={"type": "mrope", "mrope_section": MROPE_SECTION},
            **special,
        ),
        vision_config=dict(
            depth=2,
            hidden_size=32,
            intermediate_size=64,
            num_heads=4,
            out_hidden_size=TEXT_SIZE["hidden_size"],
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
            fullatt_block_indexes=[1],
            window_size=56,
            tokens_per_second=2,  # the released checkpoints' value
            in_chans=3,
        ),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        **special,
    )
    return _seeded(Qwen2_5_VLForConditionalGeneration, config), processor


def tiny_qwen3_vl(template: str = "qwen3-vl"):
    """Qwen3VLForConditionalGeneration + Qwen3VLProcessor (Qwen3VLVideoProcessor, patch 16, temporal patch 2);
    `template` "qwen3-vl-thinking" gives the Thinking checkpoints' (the same architecture)."""
    from transformers import Qwen2VLImageProcessor, Qwen3VLConfig, Qwen3VLForConditionalGeneration, Qwen3VLProcessor, Qwen3VLVideoProcessor

    tokenizer = byte_tokenizer(QWEN_TOKENS)
    # Qwen3-VL's video size is a pixel budget for the whole clip; these are the released checkpoints' values.
    video_processor = Qwen3VLVideoProcessor(
        size={"shortest_edge": 4096, "longest_edge": 25165824}, patch_size=16, temporal_patch_size=2, merge_size=2
    )
    # The released checkpoints normalise images as videos, with mean and std 0.5 (vLLM normalises videos with the
    # image processor's values: a checkpoint with other image values would be normalised wrongly there).
    image_processor = Qwen2VLImageProcessor(
        patch_size=16, merge_size=2, min_pixels=32 * 32 * 4, max_pixels=32 * 32 * 64, image_mean=[0.5] * 3, image_std=[0.5] * 3
    )
    processor = Qwen3VLProcessor(
        image_processor=image_processor,
        video_processor=video_processor,
        tokenizer=tokenizer,
        chat_template=TEMPLATES[template],
    )
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in QWEN_TOKENS}
    special = _special_ids(tokenizer)
    config = Qwen3VLConfig(
        text_config=dict(
            vocab_size=len(tokenizer),
            **TEXT_SIZE,
            head_dim=HEAD_DIM,
            max_position_embeddings=32768,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": MROPE_SECTION, "mrope_interleaved": True},
            **special,
        ),
        vision_config=dict(
            depth=2,
            hidden_size=32,
            intermediate_size=64,
            num_heads=4,
            out_hidden_size=TEXT_SIZE["hidden_size"],
            patch_size=16,
            spatial_merge_size=2,
            temporal_patch_size=2,
            num_position_embeddings=64,
            deepstack_visual_indexes=[0],
        ),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    return _seeded(Qwen3VLForConditionalGeneration, config), processor


def tiny_internvl():
    """InternVLForConditionalGeneration (InternViT-style tower, 64 px, patch 16; Qwen2 text) + InternVLProcessor
    (GotOcr2 image processor, InternVLVideoProcessor): 16 patches a frame, pixel-shuffled to 4 tokens."""
    from transformers import (
        GotOcr2ImageProcessor,
        InternVLConfig,
        InternVLForConditionalGeneration,
        InternVLProcessor,
        InternVLVideoProcessor,
    )

    tokenizer = byte_tokenizer(
        INTERNVL_TOKENS, start_image_token="<img>", end_image_token="</img>", context_image_token="<IMG_CONTEXT>", video_token="<video>"
    )
    size = {"height": INTERNVL_IMAGE_SIZE, "width": INTERNVL_IMAGE_SIZE}
    processor = InternVLProcessor(
        image_processor=GotOcr2ImageProcessor(size=size, crop_to_patches=False),
        tokenizer=tokenizer,
        video_processor=InternVLVideoProcessor(size=size),
        image_seq_length=INTERNVL_IMAGE_SEQ_LENGTH,
        chat_template=TEMPLATES["internvl"],
    )
    config = InternVLConfig(
        vision_config=dict(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            image_size=INTERNVL_IMAGE_SIZE,
            patch_size=INTERNVL_PATCH,
        ),
        text_config=_qwen2_text(tokenizer),
        image_token_id=tokenizer.context_image_token_id,
        image_seq_length=INTERNVL_IMAGE_SEQ_LENGTH,
        downsample_ratio=0.5,
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
    )
    return _seeded(InternVLForConditionalGeneration, config), processor


def tiny_llava_onevision():
    """LlavaOnevisionForConditionalGeneration (SigLIP 32 px, patch 8; Qwen2 text), the classes LLaVA-Video's -hf
    checkpoints use, + LlavaOnevisionProcessor (LlavaOnevision image and video processors)."""
    from transformers import (
        LlavaOnevisionConfig,
        LlavaOnevisionForConditionalGeneration,
        LlavaOnevisionImageProcessor,
        LlavaOnevisionProcessor,
        LlavaOnevisionVideoProcessor,
    )

    tokenizer = byte_tokenizer(LLAVA_TOKENS, image_token="<image>", video_token="<video>")
    size = {"height": LLAVA_IMAGE_SIZE, "width": LLAVA_IMAGE_SIZE}
    pinpoints = [[LLAVA_IMAGE_SIZE, LLAVA_IMAGE_SIZE], [LLAVA_IMAGE_SIZE, 2 * LLAVA_IMAGE_SIZE], [2 * LLAVA_IMAGE_SIZE, LLAVA_IMAGE_SIZE]]
    processor = LlavaOnevisionProcessor(
        image_processor=LlavaOnevisionImageProcessor(size=size, image_grid_pinpoints=pinpoints),
        video_processor=LlavaOnevisionVideoProcessor(size=size),
        tokenizer=tokenizer,
        num_image_tokens=(LLAVA_IMAGE_SIZE // LLAVA_PATCH) ** 2,
        vision_feature_select_strategy="full",
        chat_template=TEMPLATES["llava-video"],
    )
    config = LlavaOnevisionConfig(
        vision_config=dict(
            model_type="siglip_vision_model",
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            image_size=LLAVA_IMAGE_SIZE,
            patch_size=LLAVA_PATCH,
            vision_use_head=False,
        ),
        text_config=_qwen2_text(tokenizer),
        image_token_index=tokenizer.image_token_id,
        video_token_index=tokenizer.video_token_id,
        vision_feature_select_strategy="full",
        vision_feature_layer=-1,
        image_grid_pinpoints=pinpoints,
    )
    return _seeded(LlavaOnevisionForConditionalGeneration, config), processor


BUILDERS = {
    "qwen2.5-vl": tiny_qwen2_5_vl,
    "mimo-vl": lambda: tiny_qwen2_5_vl("mimo-vl"),
    "qwen3-vl": tiny_qwen3_vl,
    "qwen3-vl-thinking": lambda: tiny_qwen3_vl("qwen3-vl-thinking"),
    "internvl": tiny_internvl,
    "llava-video": tiny_llava_onevision,
}
