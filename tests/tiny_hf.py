"""Tiny, randomly initialised models of each Hugging Face family's real transformers classes, with the
family's real processor classes, a tokenizer built here (the `tokenizers` library) and a minimal chat
template: the code path real checkpoints take, on CPU, with no download.

Each builder returns (model, processor). The tokenizer is byte-level BPE with no merges (one token per
byte, the family's special tokens whole), so any prompt encodes and decodes back to the same text: the
times, frame labels and question a test looks for survive the round trip. The chat templates render
one user turn the way each family's own template does (a video part as the family's placeholder, text
parts as text) and then the assistant's generation prompt. Needs torch, torchvision and transformers
(the `hf` extra)."""

from __future__ import annotations

IM_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
QWEN_TOKENS = IM_TOKENS + ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
INTERNVL_TOKENS = IM_TOKENS + ["<img>", "</img>", "<IMG_CONTEXT>", "<video>"]
LLAVA_TOKENS = IM_TOKENS + ["<image>", "<video>"]

#: The video placeholder each family's chat template writes for a {"type": "video"} part.
VIDEO_PLACEHOLDER = {
    "qwen2.5-vl": "<|vision_start|><|video_pad|><|vision_end|>",  # Qwen2.5-VL's template
    "qwen3-vl": "<|vision_start|><|video_pad|><|vision_end|>",  # Qwen3-VL's template (the same)
    "internvl": "<video>\n",  # InternVL3 (-hf) template: the processor writes Frame1: <img>...</img> per frame
    "llava-video": "<video>\n",  # LLaVA-OneVision (-hf) template: video first, then "\n" + text
}

#: Pixel caps per frame the Qwen tests give the backend (`max_pixels`), and the tiny processors' own caps.
QWEN2_5_MAX_PIXELS = 28 * 28 * 16  # at most 16 merged tokens (64 patches of 14 px) a frame
QWEN3_MAX_PIXELS = 32 * 32 * 6  # at most 6 merged tokens a frame; Qwen3-VL's clip budget is this times the frame count
INTERNVL_IMAGE_SIZE, INTERNVL_PATCH = 64, 16
INTERNVL_IMAGE_SEQ_LENGTH = (INTERNVL_IMAGE_SIZE // INTERNVL_PATCH) ** 2 // 4  # downsample_ratio 0.5: 2x2 pixel shuffle
LLAVA_IMAGE_SIZE, LLAVA_PATCH = 32, 8  # SigLIP: 4 x 4 patches a frame, pooled to 2 x 2 for video


def chat_template(video_placeholder: str) -> str:
    """One turn per message: a video part as `video_placeholder`, text parts as text; then the assistant prompt."""
    return (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['content'] is string %}{{ m['content'] }}{% else %}"
        "{% for c in m['content'] %}{% if c['type'] == 'video' %}" + video_placeholder + "{% elif c['type'] == 'text' %}"
        "{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )


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
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32768,
        **_special_ids(tokenizer),
    )


def _seeded(model_class, config):
    import torch

    torch.manual_seed(0)
    return model_class(config).eval()


def tiny_qwen2_5_vl():
    """Qwen2_5_VLForConditionalGeneration + Qwen2_5_VLProcessor (Qwen2VL image and video processors, patch 14)."""
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
        chat_template=chat_template(VIDEO_PLACEHOLDER["qwen2.5-vl"]),
    )
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in QWEN_TOKENS}
    special = _special_ids(tokenizer)
    config = Qwen2_5_VLConfig(
        text_config=dict(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=32768,
            rope_theta=10000.0,
            rope_scaling={"type": "mrope", "mrope_section": [2, 1, 1]},
            **special,
        ),
        vision_config=dict(
            depth=2,
            hidden_size=32,
            intermediate_size=64,
            num_heads=4,
            out_hidden_size=32,
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
            fullatt_block_indexes=[1],
            window_size=56,
            in_chans=3,
        ),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        **special,
    )
    return _seeded(Qwen2_5_VLForConditionalGeneration, config), processor


def tiny_qwen3_vl():
    """Qwen3VLForConditionalGeneration + Qwen3VLProcessor (Qwen3VLVideoProcessor, patch 16, temporal patch 2)."""
    from transformers import Qwen2VLImageProcessor, Qwen3VLConfig, Qwen3VLForConditionalGeneration, Qwen3VLProcessor, Qwen3VLVideoProcessor

    tokenizer = byte_tokenizer(QWEN_TOKENS)
    # Qwen3-VL's video size is a pixel budget for the whole clip; these are the released checkpoints' values.
    video_processor = Qwen3VLVideoProcessor(
        size={"shortest_edge": 4096, "longest_edge": 25165824}, patch_size=16, temporal_patch_size=2, merge_size=2
    )
    image_processor = Qwen2VLImageProcessor(patch_size=16, merge_size=2, min_pixels=32 * 32 * 4, max_pixels=32 * 32 * 64)
    processor = Qwen3VLProcessor(
        image_processor=image_processor,
        video_processor=video_processor,
        tokenizer=tokenizer,
        chat_template=chat_template(VIDEO_PLACEHOLDER["qwen3-vl"]),
    )
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in QWEN_TOKENS}
    special = _special_ids(tokenizer)
    config = Qwen3VLConfig(
        text_config=dict(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=8,
            max_position_embeddings=32768,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1], "mrope_interleaved": True},
            **special,
        ),
        vision_config=dict(
            depth=2,
            hidden_size=32,
            intermediate_size=64,
            num_heads=4,
            out_hidden_size=32,
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
        chat_template=chat_template(VIDEO_PLACEHOLDER["internvl"]),
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
        chat_template=chat_template(VIDEO_PLACEHOLDER["llava-video"]),
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


BUILDERS = {"qwen2.5-vl": tiny_qwen2_5_vl, "qwen3-vl": tiny_qwen3_vl, "internvl": tiny_internvl, "llava-video": tiny_llava_onevision}
