"""Per-item cost of the transformers backend for each Hugging Face-native family, and what the pipelined
loop (the next item prepared on a CPU thread while the current one generates) gains over one-by-one.

    python tools/bench_models.py                      # CPU: tiny random models (tests/helpers/tiny_hf.py), smoke size
    python tools/bench_models.py --size full          # GPU: the families' published configs, random weights

For each family and level it runs the same items twice through the backend, one by one and pipelined,
and reports per item: prepare seconds (read the JPEGs, chat template, processor), generate seconds,
the share of the wall time the model was generating (on a GPU: the accelerator's busy share), peak
memory, prompt tokens, and items/s of each loop. Nothing is downloaded: full size builds each family's
published architecture from the config written below with random weights, and a byte-level tokenizer.
The numbers in docs/models.md come from this script; the formula that turns them into the registry's
mem_gb / runtime_min is written there.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "src"), str(REPO / "tests")]

from helpers.tiny_hf import BUILDERS  # noqa: E402

from virtuebench.levels import level_indices, level_timestamps  # noqa: E402
from virtuebench.models.base import Request  # noqa: E402
from virtuebench.models.hf import TransformersBackend  # noqa: E402
from virtuebench.models.spec import ModelSpec  # noqa: E402
from virtuebench.support.concurrency import imap_prefetched  # noqa: E402

DURATION_S = 3600.4  # a one-hour video
PROMPT = (
    "You are a video question-answering assistant. Please answer the following question based solely on the content of the "
    "provided frames. If the frames do not provide enough information, DO NOT guess or infer any answer that is not "
    "visually supported.\nQuestion: What colour is the star in item {item}?"
)

# Published architectures (each checkpoint's config.json), for --size full: random weights, bf16, on the GPU.
# Built on the meta device their parameter counts are the published sizes: 8.29 B, 8.77 B, 8.53 B, 8.03 B.
QWEN3_TEXT = dict(
    vocab_size=151936,
    hidden_size=4096,
    intermediate_size=12288,
    num_hidden_layers=36,
    num_attention_heads=32,
    num_key_value_heads=8,
    head_dim=128,
)  # Qwen3-8B, the language model of Qwen3-VL-8B and InternVL3.5-8B
QWEN2_7B_TEXT = dict(
    vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28, num_key_value_heads=4
)  # Qwen2(.5)-7B, of Qwen2.5-VL-7B and LLaVA-Video-7B
FULL_CONFIGS = {
    "qwen2.5-vl": {  # Qwen/Qwen2.5-VL-7B-Instruct
        "text_config": dict(
            **QWEN2_7B_TEXT,
            max_position_embeddings=128000,
            rope_theta=1000000.0,
            rope_scaling={"type": "mrope", "mrope_section": [16, 24, 24]},
        ),
        "vision_config": dict(
            depth=32,
            hidden_size=1280,
            intermediate_size=3420,
            num_heads=16,
            out_hidden_size=3584,
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
            fullatt_block_indexes=[7, 15, 23, 31],
            window_size=112,
            tokens_per_second=2,
            in_chans=3,
        ),
    },
    "qwen3-vl": {  # Qwen/Qwen3-VL-8B-Instruct
        "text_config": dict(
            **QWEN3_TEXT,
            max_position_embeddings=262144,
            tie_word_embeddings=False,
            rope_parameters={"rope_type": "default", "rope_theta": 5000000.0, "mrope_section": [24, 20, 20], "mrope_interleaved": True},
        ),
        "vision_config": dict(
            depth=27,
            hidden_size=1152,
            intermediate_size=4304,
            num_heads=16,
            out_hidden_size=4096,
            patch_size=16,
            spatial_merge_size=2,
            temporal_patch_size=2,
            num_position_embeddings=2304,
            deepstack_visual_indexes=[8, 16, 24],
        ),
    },
    "internvl": {  # OpenGVLab/InternVL3_5-8B-HF: InternViT-300M + Qwen3-8B
        "vision_config": dict(
            hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096, image_size=448, patch_size=14
        ),
        "text_config": dict(
            model_type="qwen3", **QWEN3_TEXT, max_position_embeddings=40960, rope_theta=1000000.0, tie_word_embeddings=False
        ),
        "image_seq_length": 256,
        "downsample_ratio": 0.5,
        "vision_feature_layer": -1,
        "tie_word_embeddings": False,
    },
    "llava-video": {  # LLaVA-Video-7B-Qwen2 in the LLaVA-OneVision classes: SigLIP-so400m + Qwen2-7B
        "vision_config": dict(
            model_type="siglip_vision_model",
            hidden_size=1152,
            intermediate_size=4304,
            num_hidden_layers=26,
            num_attention_heads=16,
            image_size=384,
            patch_size=14,
            vision_use_head=False,
        ),
        "text_config": dict(
            model_type="qwen2", **QWEN2_7B_TEXT, max_position_embeddings=32768, rope_theta=1000000.0, tie_word_embeddings=False
        ),
        "vision_feature_select_strategy": "full",
        "vision_feature_layer": -2,
    },
}
FULL_PIXELS = {"qwen2.5-vl": 200704, "qwen3-vl": 200704}  # the registry's max_pixels (the other two resize to a fixed square)


def full_model(family: str, device: str = "cuda"):
    """The family's published architecture with random weights on the GPU, and its processor with the checkpoint's
    published settings (a byte tokenizer stands in for the real one: token counts of the text differ, not of the video)."""
    import torch

    tiny_model, processor = BUILDERS[family]()  # the family's processor classes and chat template
    tokenizer = processor.tokenizer
    ids = {
        name: tokenizer.convert_tokens_to_ids(token)
        for name, token in (("bos_token_id", "<|im_start|>"), ("eos_token_id", "<|im_end|>"), ("pad_token_id", "<|endoftext|>"))
    }
    values = {key: dict(value) if isinstance(value, dict) else value for key, value in FULL_CONFIGS[family].items()}
    values["text_config"].update(vocab_size=max(values["text_config"]["vocab_size"], len(tokenizer)), **ids)
    config = type(tiny_model.config)(
        **values,
        **{
            key: getattr(tiny_model.config, key)
            for key in (
                "image_token_id",
                "video_token_id",
                "vision_start_token_id",
                "vision_end_token_id",
                "image_token_index",
                "video_token_index",
            )
            if hasattr(tiny_model.config, key)
        },
    )
    if family == "qwen2.5-vl":
        processor.video_processor.size = {"shortest_edge": 3136, "longest_edge": 12845056}  # preprocessor_config.json
    elif family == "internvl":
        processor.video_processor.size = {"height": 448, "width": 448}
        processor.image_seq_length = 256
    elif family == "llava-video":
        processor.video_processor.size = {"height": 384, "width": 384}
        processor.num_image_tokens = 729
    with torch.device(device):  # "meta": shapes only, for --check-configs
        model = type(tiny_model)._from_config(config, dtype=torch.bfloat16)
    return model.eval(), processor


FULL_BUILDERS = {family: (lambda family=family: full_model(family)) for family in FULL_CONFIGS}


def write_frames(folder: Path, levels: list[int], size: tuple[int, int]) -> None:
    """A JPEG per grid second the levels sample, with texture so JPEG decoding costs what a real frame does."""
    import numpy as np
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    noise = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    for index in sorted({i for level in levels for i in level_indices(level, DURATION_S)}):
        path = folder / f"{index:05d}.jpg"
        if not path.exists():
            Image.fromarray(np.roll(noise, index, axis=1)).save(path, quality=90)


def requests(folder: Path, level: int, items: int) -> list[Request]:
    frames = [folder / f"{i:05d}.jpg" for i in level_indices(level, DURATION_S)]
    timestamps = level_timestamps(level, DURATION_S)
    return [Request(f"item{i}", "q", PROMPT.format(item=i), frames, timestamps, level, DURATION_S) for i in range(items)]


def run(backend: TransformersBackend, batch: list[Request], pipelined: bool, cuda: bool) -> dict[str, float]:
    import torch

    timings = {"prepare_s": 0.0, "generate_s": 0.0, "prompt_tokens": 0}

    def prepare(request):
        started = time.perf_counter()
        inputs = backend.prepare(request)
        timings["prepare_s"] += time.perf_counter() - started
        return inputs

    def generate(request, inputs):
        started = time.perf_counter()
        reply = backend.generate(inputs)
        if cuda:
            torch.cuda.synchronize()
        timings["generate_s"] += time.perf_counter() - started
        timings["prompt_tokens"] = reply.usage["prompt_tokens"]
        return reply

    if cuda:
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    if pipelined:
        for _ in imap_prefetched(prepare, generate, batch):
            pass
    else:
        for request in batch:
            generate(request, prepare(request))
    wall = time.perf_counter() - started
    n = len(batch)
    return {
        "prepare_s": timings["prepare_s"] / n,
        "generate_s": timings["generate_s"] / n,
        "wall_s": wall / n,
        "busy_share": timings["generate_s"] / wall,
        "items_per_s": n / wall,
        "prompt_tokens": timings["prompt_tokens"],
        "peak_gib": (torch.cuda.max_memory_allocated() if cuda else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024) / 2**30,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=["tiny", "full"], default="tiny")
    parser.add_argument("--families", nargs="+", default=None, help="default: every family the size has")
    parser.add_argument("--levels", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--items", type=int, default=6)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--frame-size", type=int, nargs=2, default=[640, 360], help="stored frame width height")
    parser.add_argument("--work", default="/tmp/vb_bench_models")
    parser.add_argument("--json", default=None, help="also write the rows here")
    parser.add_argument(
        "--check-configs", action="store_true", help="build each full-size architecture on the meta device and print its size"
    )
    args = parser.parse_args(argv)
    import torch

    if args.check_configs:
        for family in FULL_CONFIGS:
            model, _ = full_model(family, device="meta")
            print(f"{family}: {sum(p.numel() for p in model.parameters()) / 1e9:.2f} B parameters")
        return 0

    cuda = args.size == "full"
    if cuda and not torch.cuda.is_available():
        parser.error("--size full needs a GPU")
    builders = FULL_BUILDERS if cuda else BUILDERS
    folder = Path(args.work) / "frames"
    write_frames(folder, args.levels, tuple(args.frame_size))
    rows = []
    print("| family | level | loop | prepare s/item | generate s/item | wall s/item | busy share | items/s | peak GiB | prompt tokens |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for family in args.families or list(builders):
        model, processor = builders[family]()
        max_pixels = FULL_PIXELS.get(family) if cuda else None
        backend = TransformersBackend(
            {
                "max_new_tokens": args.max_new_tokens,
                "max_pixels": max_pixels,
                "generation": {"min_new_tokens": args.max_new_tokens},
            },
            ModelSpec.from_job(family, {"backend": "transformers", "family": family}, {}),
            model=model,
            processor=processor,
        )
        for level in args.levels:
            batch = requests(folder, level, args.items)
            backend.generate(backend.prepare(batch[0]))  # warm-up: kernels, allocator, caches
            for pipelined in (False, True):
                row = {
                    "family": family,
                    "level": level,
                    "loop": "pipelined" if pipelined else "one by one",
                    **run(backend, batch, pipelined, cuda),
                }
                rows.append(row)
                print(
                    f"| {family} | {level} | {row['loop']} | {row['prepare_s']:.3f} | {row['generate_s']:.3f} | {row['wall_s']:.3f} | "
                    f"{row['busy_share']:.0%} | {row['items_per_s']:.2f} | {row['peak_gib']:.2f} | {row['prompt_tokens']} |",
                    flush=True,
                )
            base, piped = rows[-2], rows[-1]
            print(f"|  | {level} | speed-up |  |  |  |  | {piped['items_per_s'] / base['items_per_s']:.2f}x |  |  |", flush=True)
        del model, backend
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
