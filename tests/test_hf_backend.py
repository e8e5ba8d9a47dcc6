"""The transformers backend on a tiny, randomly initialised Qwen2.5-VL built here from a config, with a
tokenizer built locally (the `tokenizers` library) and the real Qwen2.5-VL processor: frames in, text
out, through the code path real models use. Needs the `hf` extra (torch, torchvision, transformers)."""

import json
import time

import pytest

from conftest import build_bench

torch = pytest.importorskip("torch", reason="the hf extra is not installed (pip install -e '.[hf]')")
pytest.importorskip("torchvision", reason="the hf extra is not installed (pip install -e '.[hf]')")
transformers = pytest.importorskip("transformers", reason="the hf extra is not installed (pip install -e '.[hf]')")

from virtuebench.inference import run_inference  # noqa: E402
from virtuebench.instances import read_instances  # noqa: E402
from virtuebench.models.hf import TransformersBackend  # noqa: E402
from virtuebench.prompts import TEMPLATES  # noqa: E402

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['content'] is string %}{{ m['content'] }}{% else %}"
    "{% for c in m['content'] %}{% if c['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
MAX_PIXELS = 28 * 28 * 16


def tiny_qwen():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (PreTrainedTokenizerFast, Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration,
                              Qwen2_5_VLProcessor, Qwen2VLImageProcessor, Qwen2VLVideoProcessor)  # fmt: skip

    words = sorted({w for template in TEMPLATES.values() for w in template.lower().replace(".", " ").split()} | set("red blue green star colour what".split()))
    tokens = list(dict.fromkeys(SPECIAL + ["[UNK]"] + words + [str(d) for d in range(10)] + list(".,?:!")))
    vocab = {token: i for i, token in enumerate(tokens)}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", eos_token="<|im_end|>",
                                   pad_token="<|endoftext|>", additional_special_tokens=SPECIAL)  # fmt: skip
    processor = Qwen2_5_VLProcessor(
        image_processor=Qwen2VLImageProcessor(min_pixels=28 * 28 * 4, max_pixels=MAX_PIXELS),
        video_processor=Qwen2VLVideoProcessor(min_pixels=28 * 28 * 4, max_pixels=MAX_PIXELS),
        tokenizer=fast, chat_template=CHAT_TEMPLATE,
    )  # fmt: skip
    ids = {token: fast.convert_tokens_to_ids(token) for token in SPECIAL}
    special = {"bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"], "pad_token_id": ids["<|endoftext|>"]}
    config = Qwen2_5_VLConfig(
        text_config=dict(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, max_position_embeddings=8192, rope_theta=10000.0,
                         rope_scaling={"type": "mrope", "mrope_section": [2, 1, 1]}, **special),
        vision_config=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=4, out_hidden_size=32, patch_size=14,
                           spatial_merge_size=2, temporal_patch_size=2, fullatt_block_indexes=[1], window_size=56, in_chans=3),
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"], **special,
    )  # fmt: skip
    torch.manual_seed(0)
    return Qwen2_5_VLForConditionalGeneration(config), processor


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return build_bench(tmp_path_factory.mktemp("bench"), 2, 140, [64])


def test_tiny_qwen_through_the_transformers_backend(bench, tmp_path):
    model, processor = tiny_qwen()
    backend = TransformersBackend({"family": "qwen2.5-vl", "max_new_tokens": 8, "max_pixels": MAX_PIXELS}, model=model, processor=processor)
    instances = read_instances(bench / "instances.parquet")
    config = {"backend": "transformers", "family": "qwen2.5-vl", "hub_id": "tiny/qwen2.5-vl-random", "settings": {"max_new_tokens": 8, "max_pixels": MAX_PIXELS}}
    started = time.monotonic()
    summary = run_inference(instances, bench / "frames", "tiny-qwen", config, "honest", 64, tmp_path / "out.jsonl", backend=backend)
    elapsed = time.monotonic() - started
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert summary.answered == len(records) == 10 and summary.backend_errors == 0
    for record in records:
        assert record["error"] is None and isinstance(record["response"], str)
        assert record["n_frames"] == 64 and record["usage"]["video_grid_thw"][0] == 32  # 64 frames, 2 per temporal patch
        # The prompt holds the video's tokens: 64 frames, 2 per temporal patch, at least 1 token each.
        assert record["usage"]["prompt_tokens"] > 32 and 1 <= record["usage"]["completion_tokens"] <= 8
    print(f"\ntiny Qwen2.5-VL on CPU: {len(records)} items of 64 frames in {elapsed:.2f} s = {len(records) / elapsed:.2f} items/s")
    # Greedy decoding: the same frames and prompt give the same answer.
    again = run_inference(instances, bench / "frames", "tiny-qwen", config, "honest", 64, tmp_path / "again.jsonl", backend=backend)
    assert again.answered == 10
    assert [json.loads(line)["response"] for line in (tmp_path / "again.jsonl").read_text().splitlines()] == [r["response"] for r in records]
