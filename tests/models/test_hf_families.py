"""Each Hugging Face family through the transformers backend, on tiny random models of the family's real
transformers classes and real processors (tests/helpers/tiny_hf.py), rendered through each family's published
template structure (its default system turn, its generation prompt): what the model receives for a
one-hour video (3600.4 s, a 3600-point 1 FPS grid) at the 64-frame level, and for the Qwen families also
at 1024 frames.

- Qwen2.5-VL and MiMo-VL: `second_per_grid_ts` = 2 T / N (qwen-vl-utils' value for N frames of a T-second 1 FPS
  video), frames sized as qwen-vl-utils sizes them (models/families.py; tests/models/test_qwen_vl_utils.py runs the real
  package), prod(video_grid_thw) / merge_size**2 video tokens, the template's default system turn.
- Qwen3-VL: `<t seconds>` before each temporal patch, t the mean of its two frames' manifest timestamps; the
  Thinking template's generation prompt opens `<think>`, so a reply that never closes it is truncated, not an answer.
- InternVL: InternVL's own system message, "Frame1:" ... "FrameN:" each with image_seq_length context tokens, no times.
- LLaVA-Video (LlavaOnevision classes): its time instruction with our timestamps before the question, and
  num_frames * ceil(patches / 2)**2 + 1 video tokens.
Then one generate() per family. Needs the `hf` extra (torch, torchvision, transformers)."""

import math
import re

import pytest
from helpers.tiny_hf import INTERNVL_IMAGE_SEQ_LENGTH, TINY_VIDEO, tiny_internvl, tiny_llava_onevision, tiny_qwen2_5_vl, tiny_qwen3_vl

torch = pytest.importorskip("torch", reason="the hf extra is not installed (pip install -e '.[hf]')")
pytest.importorskip("torchvision", reason="the hf extra is not installed (pip install -e '.[hf]')")
transformers = pytest.importorskip("transformers", reason="the hf extra is not installed (pip install -e '.[hf]')")

from PIL import Image  # noqa: E402

from virtuebench.levels import grid_size, level_indices, level_timestamps  # noqa: E402
from virtuebench.models.base import Reply, Request  # noqa: E402
from virtuebench.models.families import FAMILIES, INTERNVL_SYSTEM_MESSAGE, llava_video_time_instruction  # noqa: E402
from virtuebench.models.hf import TransformersBackend  # noqa: E402
from virtuebench.models.spec import ModelSpec  # noqa: E402

DURATION_S = 3600.4  # one hour: T = 3600 grid points
QUESTION = "What colour is the star?"
PROMPT = f"Answer from the frames only.\nQuestion: {QUESTION}"
FRAME_SIZE = (96, 54)  # width, height: tiny 16:9 JPEGs
MAX_NEW_TOKENS = 4


@pytest.fixture(scope="module")
def frames_dir(tmp_path_factory):
    """Small solid-colour JPEGs, one per grid second that the 64- and 1024-frame levels sample."""
    folder = tmp_path_factory.mktemp("frames")
    for index in sorted(set(level_indices(64, DURATION_S)) | set(level_indices(1024, DURATION_S))):
        colour = (index * 37 % 256, index * 91 % 256, index * 13 % 256)
        Image.new("RGB", FRAME_SIZE, colour).save(folder / f"{index:05d}.jpg", quality=90)
    return folder


def request(frames_dir, level: int) -> Request:
    return Request(
        f"one-hour-{level}",
        QUESTION,
        PROMPT,
        [frames_dir / f"{i:05d}.jpg" for i in level_indices(level, DURATION_S)],
        level_timestamps(level, DURATION_S),
        level,
        duration_s=DURATION_S,
    )


def backend(family: str, build, **settings) -> TransformersBackend:
    model, processor = build()
    spec = ModelSpec.from_job("m", {"backend": "transformers", "family": family}, {})
    return TransformersBackend({"max_new_tokens": MAX_NEW_TOKENS, **settings}, spec, model=model, processor=processor)


def prompt_text(backend: TransformersBackend, inputs) -> str:
    """The prompt the model receives, decoded with its special tokens (the tiny tokenizers round-trip exactly)."""
    (ids,) = inputs["input_ids"].tolist()
    return backend.processor.tokenizer.decode(ids, skip_special_tokens=False)


def count(inputs, token_id: int) -> int:
    return int((inputs["input_ids"][0] == token_id).sum())


def check_layout(text: str, first_video: str, last_video: str, before_prompt: str = "", system: str | None = None) -> None:
    """The system turn the family's template or code gives (or none), one user turn: the video, then the (family's
    text and the) prompt, then the assistant's turn."""
    user = text.index("<|im_start|>user\n")
    if system is None:
        assert "<|im_start|>system" not in text
    else:
        assert text.startswith(f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n")
    assert text.count(PROMPT) == 1 and text.count(QUESTION) == 1
    assert user < text.index(first_video) <= text.rindex(last_video) < text.index(before_prompt + PROMPT)
    assert text.endswith(PROMPT + "<|im_end|>\n<|im_start|>assistant\n")


def check_reply(backend: TransformersBackend, prepared) -> Reply:
    reply = backend.generate(prepared)
    assert isinstance(reply, Reply) and isinstance(reply.text, str)
    assert reply.usage["prompt_tokens"] == prepared.inputs["input_ids"].shape[1]
    assert 1 <= reply.usage["completion_tokens"] <= MAX_NEW_TOKENS
    # Random weights rarely stop early: a reply of MAX_NEW_TOKENS tokens without an end token stopped at the limit.
    assert (reply.finish_reason == "length") == (reply.usage["completion_tokens"] == MAX_NEW_TOKENS)
    return reply


def check_qwen_grid(backend: TransformersBackend, inputs, req: Request, family: str) -> tuple[int, int, int]:
    """The grid is the frame size the family's qwen-vl-utils sizing gives, in patches."""
    video = FAMILIES[family].video_settings(**TINY_VIDEO[family])
    height, width = video.frame_size(FRAME_SIZE[1], FRAME_SIZE[0], len(req.frames))
    grid_t, grid_h, grid_w = inputs["video_grid_thw"][0].tolist()
    patch = backend.processor.video_processor.patch_size
    assert (grid_t, grid_h * patch, grid_w * patch) == (req.level // 2, height, width)
    assert height * width <= TINY_VIDEO[family]["max_pixels"]  # the registry's per-frame cap holds
    return grid_t, grid_h, grid_w


# --- Qwen2.5-VL and MiMo-VL -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def qwen2_5():
    return backend("qwen2.5-vl", tiny_qwen2_5_vl, **TINY_VIDEO["qwen2.5-vl"])


@pytest.mark.parametrize("level, seconds_per_grid", [(64, 112.5), (1024, 7.03125)])
def test_qwen2_5_vl_time_and_tokens(qwen2_5, frames_dir, level, seconds_per_grid):
    req = request(frames_dir, level)
    times = req.times
    assert times.extent_s == grid_size(DURATION_S) == 3600 and times.n_frames == level
    inputs = qwen2_5.prepare(req).inputs
    # The absolute time of each temporal patch: 2 frames of N taken from a T-second 1 FPS video.
    assert float(inputs["second_per_grid_ts"][0]) == pytest.approx(2 * times.extent_s / times.n_frames, rel=1e-12)
    assert float(inputs["second_per_grid_ts"][0]) == pytest.approx(seconds_per_grid, rel=1e-12)
    grid_t, grid_h, grid_w = check_qwen_grid(qwen2_5, inputs, req, "qwen2.5-vl")
    merge = qwen2_5.processor.video_processor.merge_size
    assert count(inputs, qwen2_5.processor.video_token_id) == grid_t * grid_h * grid_w // merge**2
    text = prompt_text(qwen2_5, inputs)
    check_layout(text, "<|vision_start|><|video_pad|>", "<|video_pad|><|vision_end|>", system="You are a helpful assistant.")
    assert text.count("<|vision_start|>") == text.count("<|vision_end|>") == 1
    print(
        f"\nQwen2.5-VL {level} frames: second_per_grid_ts {float(inputs['second_per_grid_ts'][0])}, grid {[grid_t, grid_h, grid_w]}, "
        f"{grid_h * grid_w // merge**2} tokens per temporal patch ({grid_h * grid_w // merge**2 / 2:g} per frame)"
    )


def test_the_clip_budget_makes_dense_levels_smaller(qwen2_5, frames_dir):
    """64 frames keep the per-frame cap; 1024 frames share the clip's budget, as qwen-vl-utils shares it."""
    sizes = {}
    for level in (64, 1024):
        _, grid_h, grid_w = qwen2_5.prepare(request(frames_dir, level)).inputs["video_grid_thw"][0].tolist()
        sizes[level] = grid_h * grid_w
    assert sizes[1024] < sizes[64]


def test_qwen2_5_vl_generates(qwen2_5, frames_dir):
    reply = check_reply(qwen2_5, qwen2_5.prepare(request(frames_dir, 64)))
    assert reply.usage["video_grid_thw"][0] == 32 and reply.usage["second_per_grid_ts"] == pytest.approx(112.5)
    assert reply.thinking is None and not reply.unclosed_thinking  # Qwen2.5-VL does not think


def test_mimo_vl_gets_its_system_turn_and_its_thinking_is_read(frames_dir):
    mimo = backend("mimo-vl", lambda: tiny_qwen2_5_vl("mimo-vl"), **TINY_VIDEO["mimo-vl"])
    prepared = mimo.prepare(request(frames_dir, 64))
    text = prompt_text(mimo, prepared.inputs)
    check_layout(
        text, "<|vision_start|><|video_pad|>", "<|video_pad|><|vision_end|>", system="You are MiMo, an AI assistant developed by Xiaomi."
    )
    # MiMo-VL's template does not open the thinking block: the model writes <think> itself.
    assert not text.endswith("<think>\n")
    assert FAMILIES["mimo-vl"].read("<think>a red star</think>Red.", prepared.prompt) == (
        FAMILIES["mimo-vl"].read("<think>a red star</think>Red.")
    )
    reading = FAMILIES["mimo-vl"].read("<think>counting the stars, one, two", prepared.prompt)
    assert reading.unclosed and reading.answer == ""


# --- Qwen3-VL -----------------------------------------------------------------------------------------------

SECONDS = re.compile(r"<(\d+\.\d) seconds>")


@pytest.fixture(scope="module")
def qwen3():
    return backend("qwen3-vl", tiny_qwen3_vl, **TINY_VIDEO["qwen3-vl"])


@pytest.mark.parametrize("level", [64, 1024])
def test_qwen3_vl_timestamps_and_tokens(qwen3, frames_dir, level):
    req = request(frames_dir, level)
    inputs = qwen3.prepare(req).inputs
    text = prompt_text(qwen3, inputs)
    # One "<t seconds>" per temporal patch: the mean of its two frames' manifest timestamps, in order.
    stamps = req.timestamps
    expected = [f"{(a + b) / 2:.1f}" for a, b in zip(stamps[0::2], stamps[1::2])]
    assert SECONDS.findall(text) == expected and len(expected) == level // 2
    grid_t, grid_h, grid_w = check_qwen_grid(qwen3, inputs, req, "qwen3-vl")
    per_patch = grid_h * grid_w // qwen3.processor.video_processor.merge_size**2
    # Each temporal patch: its time, then <|vision_start|>, h * w / 4 video tokens, <|vision_end|>.
    runs = re.findall(r"<\d+\.\d seconds><\|vision_start\|>((?:<\|video_pad\|>)+)<\|vision_end\|>", text)
    assert [run.count("<|video_pad|>") for run in runs] == [per_patch] * grid_t
    assert count(inputs, qwen3.processor.video_token_id) == grid_t * per_patch
    check_layout(text, f"<{expected[0]} seconds>", "<|video_pad|><|vision_end|>")  # Qwen3-VL's template: no system turn
    print(
        f"\nQwen3-VL {level} frames: first <{expected[0]} seconds>, last <{expected[-1]} seconds>, grid {[grid_t, grid_h, grid_w]}, "
        f"{per_patch} tokens per temporal patch ({per_patch / 2:g} per frame)"
    )


# transformers 5.23's Qwen3VLProcessor expands only <|video_pad|>; the reference processor (4.57, vLLM) replaces
# the template's whole <|vision_start|><|video_pad|><|vision_end|>. The family hands the processor a bare placeholder.
def test_qwen3_vl_video_is_not_wrapped_twice(qwen3, frames_dir):
    text = prompt_text(qwen3, qwen3.prepare(request(frames_dir, 64)).inputs)
    assert text.startswith("<|im_start|>user\n<29.0 seconds><|vision_start|><|video_pad|>")
    assert text.count("<|vision_start|>") == text.count("<|vision_end|>") == 32


def test_qwen3_vl_generates(qwen3, frames_dir):
    reply = check_reply(qwen3, qwen3.prepare(request(frames_dir, 64)))
    assert reply.usage["video_grid_thw"][0] == 32 and "second_per_grid_ts" not in reply.usage
    assert not reply.unclosed_thinking  # the Instruct template opens no thinking block


def test_a_qwen3_vl_thinking_reply_cut_off_inside_its_thinking_is_no_answer(frames_dir):
    """The Thinking template's generation prompt ends with <think>: a reply without </think> never answered."""
    thinking = backend("qwen3-vl", lambda: tiny_qwen3_vl("qwen3-vl-thinking"), **TINY_VIDEO["qwen3-vl"])
    prepared = thinking.prepare(request(frames_dir, 64))
    assert prepared.prompt.endswith("<|im_start|>assistant\n<think>\n")
    reply = thinking.generate(prepared)  # 4 random tokens: no </think> among them
    assert reply.unclosed_thinking and reply.truncated and reply.text == "" and reply.thinking
    # The same text after a prompt that opened no block is an answer.
    assert FAMILIES["qwen3-vl"].read(reply.thinking) == FAMILIES["qwen3-vl"].read(reply.thinking, "<|im_start|>assistant\n")
    assert FAMILIES["qwen3-vl"].read("I see it.</think>\n\nRed.", prepared.prompt).answer == "Red."


# --- InternVL -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def internvl():
    return backend("internvl", tiny_internvl)


def test_internvl_frames_and_tokens(internvl, frames_dir):
    req = request(frames_dir, 64)
    inputs = internvl.prepare(req).inputs
    text = prompt_text(internvl, inputs)
    processor = internvl.processor
    config = internvl.model.config
    # image_seq_length agrees with the vision tower: (image_size / patch)**2 patches, pixel-shuffled by 0.5.
    patches = (config.vision_config.image_size[0] // config.vision_config.patch_size[0]) ** 2
    assert processor.image_seq_length == config.image_seq_length == INTERNVL_IMAGE_SEQ_LENGTH == int(patches * config.downsample_ratio**2)
    frames = re.findall(r"Frame(\d+): <img>((?:<IMG_CONTEXT>)*)</img>", text)
    assert [int(label) for label, _ in frames] == list(range(1, 65))
    assert [run.count("<IMG_CONTEXT>") for _, run in frames] == [processor.image_seq_length] * 64
    assert count(inputs, processor.image_token_id) == 64 * processor.image_seq_length
    assert inputs["pixel_values"].shape[0] == 64  # one tile a frame
    # InternVL's reference code tells the model no times: no timestamps, in any format.
    assert "second" not in text and not re.search(r"\d\.\d|\d:\d\d|\d+s\b", text)
    # The -HF template has no system turn; InternVL's chat() sends its own, so the family does too.
    check_layout(text, "Frame1: <img>", "</img>\n", system=INTERNVL_SYSTEM_MESSAGE)
    print(f"\nInternVL 64 frames: Frame1..Frame64, {processor.image_seq_length} tokens per frame, no time text")


def test_internvl_generates(internvl, frames_dir):
    check_reply(internvl, internvl.prepare(request(frames_dir, 64)))


# --- LLaVA-Video (LlavaOnevision classes) ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def llava():
    return backend("llava-video", tiny_llava_onevision)


def test_llava_video_time_instruction_and_tokens(llava, frames_dir):
    req = request(frames_dir, 64)
    inputs = llava.prepare(req).inputs
    text = prompt_text(llava, inputs)
    instruction = llava_video_time_instruction(req.times)
    assert "The video lasts for 3600.40 seconds, and 64 frames are uniformly sampled from it." in instruction
    assert f"These frames are located at {req.timestamps[0]:.2f}s," in instruction and instruction.startswith("The video lasts")
    assert f",{req.timestamps[-1]:.2f}s.Please answer" in instruction and "0.50s," in instruction and ",3599.50s." in instruction
    assert text.count(instruction) == 1
    # The processor's formula: num_frames * ceil(sqrt(num_image_tokens) / 2)**2 + 1 (the newline).
    processor = llava.processor
    pooled = math.ceil(int(math.sqrt(processor.num_image_tokens)) / 2)
    assert count(inputs, processor.video_token_id) == 64 * pooled**2 + 1
    assert tuple(inputs["pixel_values_videos"].shape[:2]) == (1, 64)
    check_layout(text, "<video>", "<video>", before_prompt=instruction + "\n")
    print(
        f"\nLLaVA-Video 64 frames: {count(inputs, processor.video_token_id)} video tokens = 64 x {pooled**2} + 1; "
        f"times {req.timestamps[0]:.2f}s ... {req.timestamps[-1]:.2f}s"
    )


def test_llava_video_generates(llava, frames_dir):
    check_reply(llava, llava.prepare(request(frames_dir, 64)))
