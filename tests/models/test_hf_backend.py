"""The transformers backend on a tiny, randomly initialised Qwen2.5-VL built from a config (tests/helpers/tiny_hf.py),
with a tokenizer built locally (the `tokenizers` library) and the real Qwen2.5-VL processor: frames in, text
out, through the code path real models use. Needs the `hf` extra (torch, torchvision, transformers)."""

import json
import time

import pytest
from helpers.data import build_bench
from helpers.tiny_hf import TINY_VIDEO
from helpers.tiny_hf import tiny_qwen2_5_vl as tiny_qwen

torch = pytest.importorskip("torch", reason="the hf extra is not installed (pip install -e '.[hf]')")
pytest.importorskip("torchvision", reason="the hf extra is not installed (pip install -e '.[hf]')")
transformers = pytest.importorskip("transformers", reason="the hf extra is not installed (pip install -e '.[hf]')")

from virtuebench.inference import run_inference  # noqa: E402
from virtuebench.instances import read_instances  # noqa: E402
from virtuebench.models.hf import TransformersBackend  # noqa: E402
from virtuebench.models.spec import ModelSpec  # noqa: E402


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return build_bench(tmp_path_factory.mktemp("bench"), 2, 140, [64])


def test_tiny_qwen_through_the_transformers_backend(bench, tmp_path):
    model, processor = tiny_qwen()
    spec = ModelSpec.from_job("tiny-qwen", {"backend": "transformers", "family": "qwen2.5-vl"}, {})
    backend = TransformersBackend({"max_new_tokens": 8, **TINY_VIDEO["qwen2.5-vl"]}, spec, model=model, processor=processor)
    instances = read_instances(bench / "instances.parquet")
    config = {
        "backend": "transformers",
        "family": "qwen2.5-vl",
        "hub_id": "tiny/qwen2.5-vl-random",
        "settings": {"max_new_tokens": 8, **TINY_VIDEO["qwen2.5-vl"]},
    }
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
    assert [json.loads(line)["response"] for line in (tmp_path / "again.jsonl").read_text().splitlines()] == [
        r["response"] for r in records
    ]
