"""The vLLM route against the transformers route, on tiny random checkpoints saved here: run inside the vLLM
environment (`make vllm-env`), by tests/models/test_vllm_route.py, which reads the JSON this writes.

For each family: the tiny model of its real transformers classes (tests/helpers/tiny_hf.py) is saved to a folder, and
both backends load that folder. One request (64 frames of a one-hour video) goes through
- the transformers backend: its processor's prompt token ids, grid and frame times, and the log-probabilities of
  its first greedy tokens;
- the vllm backend: the request dict our `build_inputs` makes, run through vLLM's own input processor (prompt
  token ids, grid, `second_per_grid_ts`) and then vLLM's CPU engine (greedy tokens and their log-probabilities).
Then the same request made wrong on purpose (two frames swapped; the frames' times spaced for a video half as
long) through vLLM, to show how far a wrong input moves the first token's log-probabilities.

    python tests/helpers/vllm_route_check.py --out RESULT.json [--families qwen2.5-vl qwen3-vl ...]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS), str(TESTS.parent / "src")]

FAMILIES = ("qwen2.5-vl", "mimo-vl", "qwen3-vl", "qwen3-vl-thinking", "internvl", "llava-video")
DURATION_S = 3600.4  # a one-hour video
LEVEL = 64
STEPS = 3  # greedy tokens compared
TOP = 20  # vLLM's log-probabilities returned per step


def registry_family(name: str) -> str:
    return {"qwen3-vl-thinking": "qwen3-vl"}.get(name, name)


def write_frames(folder: Path, level: int, duration_s: float) -> list[Path]:
    """Noisy 16:9 JPEGs, a different picture at each sampled second (a swap of two must change what the model sees)."""
    import numpy as np
    from PIL import Image

    from virtuebench.levels import level_indices

    rng = np.random.default_rng(0)
    paths = []
    for index in level_indices(level, duration_s):
        path = folder / f"{index:05d}.jpg"
        Image.fromarray(rng.integers(0, 256, (54, 96, 3), dtype=np.uint8)).save(path, quality=95)
        paths.append(path)
    return paths


def requests(frames: list[Path]):
    from virtuebench.levels import level_timestamps
    from virtuebench.models.base import Request

    prompt = "Answer from the frames only.\nQuestion: What colour is the star?"
    right = Request("one-hour", "What colour is the star?", prompt, frames, level_timestamps(LEVEL, DURATION_S), LEVEL, DURATION_S)
    swapped = list(frames)
    swapped[0], swapped[40] = swapped[40], swapped[0]
    half = DURATION_S / 2  # the same frames told to be spaced as in a half-hour video
    return {
        "right": right,
        "swapped_frames": Request(right.instance_id, right.question, prompt, swapped, right.timestamps, LEVEL, DURATION_S),
        "wrong_spacing": Request(right.instance_id, right.question, prompt, frames, level_timestamps(LEVEL, half), LEVEL, half),
    }


def transformers_route(folder: Path, family: str, settings: dict, request) -> dict:
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from virtuebench.models.hf import TransformersBackend
    from virtuebench.models.spec import ModelSpec

    model, loading = AutoModelForImageTextToText.from_pretrained(folder, dtype=torch.float32, output_loading_info=True)
    if loading["missing_keys"] or loading["unexpected_keys"]:  # both routes must run the same weights
        raise ValueError(f"transformers did not load every saved weight: {loading}")
    processor = AutoProcessor.from_pretrained(folder)
    spec = ModelSpec.from_job("check", {"backend": "transformers", "family": family}, {})
    backend = TransformersBackend({"max_new_tokens": STEPS, **settings}, spec, model=model, processor=processor)
    prepared = backend.prepare(request)
    inputs = prepared.inputs
    with torch.inference_mode():
        out = model.generate(**inputs, max_new_tokens=STEPS, do_sample=False, output_logits=True, return_dict_in_generate=True)
    logprobs = [torch.log_softmax(step[0].float(), dim=-1).tolist() for step in out.logits]
    result = {
        "prompt_token_ids": inputs["input_ids"][0].tolist(),
        "prompt": processor.tokenizer.decode(inputs["input_ids"][0], skip_special_tokens=False),
        "tokens": out.sequences[0, inputs["input_ids"].shape[1] :].tolist(),
        "logprobs": logprobs,
    }
    if "video_grid_thw" in inputs:
        result["video_grid_thw"] = inputs["video_grid_thw"][0].tolist()
    if "second_per_grid_ts" in inputs:
        result["second_per_grid_ts"] = float(inputs["second_per_grid_ts"][0])
    del model, backend
    gc.collect()
    return result


def vllm_route(folder: Path, family: str, settings: dict, cases: dict) -> dict:
    from vllm import SamplingParams

    from virtuebench.models import load_backend
    from virtuebench.models.spec import ModelSpec
    from virtuebench.models.vllm_engine import build_inputs

    started = time.monotonic()
    settings = {
        "dtype": "float32",
        "enforce_eager": True,
        "gpu_memory_utilization": 0.1,  # on the CPU build: the share of host memory for the KV cache
        "max_model_len": 8192,
        "max_new_tokens": STEPS,
        "seed": 0,
        # Off, so that vLLM's input processor can also be called outside the engine (below) without the two
        # disagreeing about which videos the engine has already received.
        "engine_args": {"mm_processor_cache_gb": 0},
        **settings,
    }
    backend = load_backend(
        ModelSpec.from_job("check", {"backend": "vllm", "hub_id": str(folder), "family": family, "settings": settings}, {})
    )
    engine_s = time.monotonic() - started
    engine = backend.llm.llm_engine
    result = {"engine_start_s": round(engine_s, 1), "weights_commit": backend.weights_commit}
    for name, request in cases.items():
        inputs = build_inputs(request, backend.processor, backend.settings, backend.family)
        # vLLM's own input processing of our request dict: the prompt's token ids and the video's features.
        processed = engine.input_processor.process_inputs(
            f"check-{name}", inputs, SamplingParams(max_tokens=1), supported_tasks=engine.get_supported_tasks()
        )
        features = processed.mm_features[0].data
        (output,) = backend.generate_outputs([inputs], logprobs=TOP)
        completion = output.outputs[0]
        case = {
            "prompt_token_ids": list(processed.prompt_token_ids),
            "generated_prompt_token_ids": list(output.prompt_token_ids),
            "tokens": list(completion.token_ids),
            "logprobs": [{str(token): lp.logprob for token, lp in step.items()} for step in completion.logprobs],
            "finish_reason": completion.finish_reason,
        }
        for key in ("video_grid_thw", "second_per_grid_ts"):
            if key in features:
                value = features[key].data
                case[key] = value.tolist() if value.dim() else float(value)
        result[name] = case
    reply = backend.answer(cases["right"])  # the backend's own path: the reply read as the family reads it
    result["reply"] = {
        "text": reply.text,
        "thinking": reply.thinking,
        "finish_reason": reply.finish_reason,
        "unclosed_thinking": reply.unclosed_thinking,
        "prompt_tokens": reply.usage["prompt_tokens"],
    }
    del backend, engine
    gc.collect()
    return result


def max_difference(vllm_steps: list[dict], hf_steps: list[list[float]], steps: int) -> float:
    """The largest |vLLM - transformers| log-probability over vLLM's top tokens at the first `steps` steps (both
    routes' steps: a route that stopped early compares fewer)."""
    steps = min(steps, len(vllm_steps), len(hf_steps))
    return max(abs(lp - hf_steps[i][int(token)]) for i in range(steps) for token, lp in vllm_steps[i].items())


def as_published(folder: Path, name: str) -> None:
    """Give the saved weights the key layout of the published checkpoints where transformers 5 saves another:
    LLaVA-OneVision's vision tower is a SiglipVisionModel, `vision_tower.vision_model.*` in llava-hf's releases
    (transformers 5.19 writes `vision_tower.*`, which vLLM cannot map)."""
    if name != "llava-video":
        return
    from safetensors.torch import load_file, save_file

    path = folder / "model.safetensors"
    weights = load_file(path)
    renamed = {
        (key.replace("vision_tower.", "vision_tower.vision_model.", 1) if key.startswith("vision_tower.") else key): value
        for key, value in weights.items()
    }
    save_file(renamed, path, metadata={"format": "pt"})


def placeholder_ids(name: str, processor) -> set[int]:
    """Token ids that only mark where vision embeddings go (the model never reads them). vLLM's InternVL (-HF)
    implementation marks video frames with the video token, transformers with the image context token."""
    if name == "internvl":
        return {processor.tokenizer.convert_tokens_to_ids(token) for token in ("<IMG_CONTEXT>", "<video>")}
    return set()


def same_prompt(a: list[int], b: list[int], placeholders: set[int]) -> bool:
    return [-1 if t in placeholders else t for t in a] == [-1 if t in placeholders else t for t in b]


def check_family(name: str, work: Path) -> dict:
    from helpers.tiny_hf import BUILDERS, TINY_VIDEO

    family = registry_family(name)
    folder = work / name
    model, processor = BUILDERS[name]()
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    del model
    as_published(folder, name)
    placeholders = placeholder_ids(name, processor)
    frames_dir = work / f"{name}-frames"
    frames_dir.mkdir()
    cases = requests(write_frames(frames_dir, LEVEL, DURATION_S))
    settings = dict(TINY_VIDEO.get(name, {}))
    hf = transformers_route(folder, family, settings, cases["right"])
    hf_wrong = {case: transformers_route(folder, family, settings, cases[case]) for case in ("swapped_frames", "wrong_spacing")}
    vl = vllm_route(folder, family, settings, cases)
    right = vl["right"]
    result = {
        "family": name,
        "transformers": {k: v for k, v in hf.items() if k != "logprobs"},
        "vllm": vl,
        "prompt_ids_equal": same_prompt(right["prompt_token_ids"], hf["prompt_token_ids"], placeholders)
        and right["prompt_token_ids"] == right["generated_prompt_token_ids"],
        "placeholder_ids": sorted(placeholders),
        "greedy_equal": right["tokens"] == hf["tokens"],
        "max_logprob_difference": max_difference(right["logprobs"], hf["logprobs"], STEPS),
        "controls": {},
    }
    for case in ("swapped_frames", "wrong_spacing"):
        wrong = vl[case]
        result["controls"][case] = {
            # How far the wrong input moves vLLM's first-token log-probabilities from the right input's (transformers).
            "first_token_difference": max_difference(wrong["logprobs"], hf["logprobs"], 1),
            "prompt_ids_equal_to_right": same_prompt(wrong["prompt_token_ids"], hf["prompt_token_ids"], placeholders),
            # The same wrong input through transformers: vLLM must agree there too.
            "parity_difference": max_difference(wrong["logprobs"], hf_wrong[case]["logprobs"], 1),
            "prompt_ids_equal_to_transformers": same_prompt(wrong["prompt_token_ids"], hf_wrong[case]["prompt_token_ids"], placeholders),
        }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    args = parser.parse_args(argv)
    results = {}
    with tempfile.TemporaryDirectory() as work:
        for name in args.families:
            started = time.monotonic()
            try:
                results[name] = check_family(name, Path(work))
            except Exception as error:  # reported per family; the test names it
                import traceback

                results[name] = {"family": name, "error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
            results[name]["seconds"] = round(time.monotonic() - started, 1)
            print(json.dumps({name: {k: v for k, v in results[name].items() if k in ("error", "max_logprob_difference", "seconds")}}))
    Path(args.out).write_text(json.dumps(results, indent=1, default=lambda v: None if isinstance(v, float) and math.isnan(v) else str(v)))
    return 0


if __name__ == "__main__":  # vLLM starts its engine in processes of its own: the entry point must be guarded
    sys.exit(main())
