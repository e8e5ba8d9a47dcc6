"""The adapters for families whose code ships with the checkpoint, against recording stand-ins of that
code (tests/helpers/remote_standins.py; the checkpoints' code is not on PyPI): our frames, frame times and prompt
reach the authors' entry points in the form their code expects. Keye-VL's keye-vl-utils is on PyPI and
runs for real here (and over every duration in tests/models/test_keye_vl_utils.py). Needs the hf extra."""

import re

import pytest
from helpers.data import build_bench

torch = pytest.importorskip("torch", reason="the hf extra is not installed (pip install -e '.[hf]')")
pytest.importorskip("torchvision", reason="the hf extra is not installed (pip install -e '.[hf]')")

from helpers import remote_standins  # noqa: E402

from virtuebench.frames import Manifest  # noqa: E402
from virtuebench.models import backend_class, load_backend  # noqa: E402
from virtuebench.models.base import Request  # noqa: E402
from virtuebench.models.remote_code import keye_answer  # noqa: E402
from virtuebench.models.spec import ModelSpec  # noqa: E402


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return build_bench(tmp_path_factory.mktemp("bench"), 3, 300, [64, 128])


def _request(bench, level=64, prompt="Question: What colour is the star?"):
    folder = next(path for path in sorted((bench / "frames").iterdir()) if str(level) in Manifest.read(path).levels)
    manifest = Manifest.read(folder)
    frames = manifest.frame_paths(folder, level)
    return Request(
        "syn00_q0", "What colour is the star?", prompt, frames, manifest.levels[str(level)].timestamps, level, manifest.duration_s
    )


def test_videochat_flash_gets_our_frames_and_its_time_message(bench):
    model = remote_standins.VideoChatFlashStandIn()
    backend = backend_class("videochat_flash")({"max_new_tokens": 64}, model=model, tokenizer=object())
    request = _request(bench)
    reply = backend.answer(request)
    (call,) = model.calls
    assert reply.text == "saw 64 frames" and call["frames"].shape[0] == 64 and call["frames"].dtype.name == "uint8"
    assert call["prompt"] == (
        f"<image>\nThe video lasts for {request.duration_s:.2f} seconds, and 64 frames are uniformly sampled "
        f"from it. Question: What colour is the star?"
    )
    assert call["generation"] == {"do_sample": False, "max_new_tokens": 64} and call["compress"] is False
    assert remote_standins.load_video.__name__ == "load_video", "the checkpoint's loader is put back"


def test_internvideo_gets_one_448_tile_per_frame_and_frame_lines(bench):
    model = remote_standins.InternVideoStandIn()
    backend = backend_class("internvideo")({}, model=model, tokenizer=object())
    reply = backend.generate(backend.prepare(_request(bench, 128)))
    (call,) = model.calls
    assert call["pixel_values"].shape == (128, 3, 448, 448) and call["pixel_values"].dtype == torch.bfloat16
    lines = call["question"].split("\n")
    assert lines[:2] == ["Frame1: <image>", "Frame2: <image>"] and lines[127] == "Frame128: <image>"
    assert lines[128:] == ["Question: What colour is the star?"]
    assert not re.search(r"seconds|lasts", call["question"]), "the card's inference gives no time text"
    assert reply.text == "<think>hmm</think>red" and reply.thinking is None


def test_internvideo_refuses_frames_it_cannot_group(bench):
    request = _request(bench)
    odd = Request(
        request.instance_id, request.question, request.prompt, request.frames[:62], request.timestamps[:62], 62, request.duration_s
    )
    backend = backend_class("internvideo")({}, model=remote_standins.InternVideoStandIn(), tokenizer=object())
    with pytest.raises(ValueError, match="groups of 4.*62 frames"):
        backend.prepare(odd)


def test_internvl_chat_gets_one_448_tile_per_frame_and_frame_lines(bench):
    """InternVL3.5's original-format releases (the -Instruct ones have no -HF): chat() with the card's video input."""
    model = remote_standins.InternVLChatStandIn()
    backend = backend_class("internvl_chat")({"max_new_tokens": 32}, model=model, tokenizer=object())
    reply = backend.generate(backend.prepare(_request(bench, 64)))
    (call,) = model.calls
    assert call["pixel_values"].shape == (64, 3, 448, 448)
    assert call["question"].startswith("Frame1: <image>\nFrame2: <image>\n") and call["question"].endswith(
        "Question: What colour is the star?"
    )
    assert call["prompt"].startswith(f"<|im_start|>system\n{model.system_message}")  # chat() adds InternVL's system turn
    assert call["generation"] == {"do_sample": False, "max_new_tokens": 32} and reply.finish_reason == "stop"


def test_internvl_chat_takes_any_frame_count(bench):
    request = _request(bench)
    odd = Request(
        request.instance_id, request.question, request.prompt, request.frames[:62], request.timestamps[:62], 62, request.duration_s
    )
    backend = backend_class("internvl_chat")({}, model=remote_standins.InternVLChatStandIn(), tokenizer=object())
    assert backend.prepare(odd)[0].shape[0] == 62


def test_llava_video_gets_the_model_cards_prompt_and_video(bench, monkeypatch):
    """LLaVA-NeXT's own flow for lmms-lab/LLaVA-Video-*-Qwen2 (the `llava` package, stood in: not on PyPI)."""
    from virtuebench.models import llava_next

    monkeypatch.setattr(llava_next, "llava_modules", remote_standins.llava_modules)
    model = remote_standins.LlavaVideoModelStandIn()
    backend = backend_class("llava_video")(
        {"max_new_tokens": 4096},
        model=model,
        tokenizer=remote_standins.LlavaTokenizerStandIn(),
        image_processor=remote_standins.LlavaVideoImageProcessorStandIn(),
    )
    request = _request(bench)
    prepared = backend.prepare(request)
    reply = backend.generate(prepared)
    times = ",".join(f"{t:.2f}s" for t in request.timestamps)
    assert prepared.prompt == (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n<image>\n"
        f"The video lasts for {request.duration_s:.2f} seconds, and 64 frames are uniformly sampled from it. "
        f"These frames are located at {times}.Please answer the following questions related to this video.\n"
        "Question: What colour is the star?<|im_end|>\n<|im_start|>assistant\n"
    )
    (call,) = model.calls
    assert call["modalities"] == ["video"] and call["images"][0].shape == (64, 3, 384, 384)
    assert (call["input_ids"][0] == -200).sum() == 1  # one <image> marker: the model puts the video there
    assert {k: call[k] for k in ("do_sample", "temperature", "max_new_tokens")} == {
        "do_sample": False,
        "temperature": 0,
        "max_new_tokens": 4096,
    }
    assert reply.text == "The star is red." and reply.finish_reason == "stop" and reply.usage["frames"] == 64


def test_llava_video_says_which_environment_it_needs_when_llava_is_missing():
    with pytest.raises(ValueError, match="envs/llava.yaml"):
        load_backend(ModelSpec.from_job("m", {"backend": "llava_video", "hub_id": "lmms-lab/LLaVA-Video-7B-Qwen2"}, {}))


# --- Keye-VL 1.5: the real keye-vl-utils, the checkpoint's processor and model as stand-ins ------------------------

keye_vl_utils = pytest.importorskip("keye_vl_utils", reason="keye-vl-utils is not installed (the hf extra)")


def _keye(**settings):
    processor, model = remote_standins.KeyeProcessorStandIn(), remote_standins.KeyeModelStandIn()
    backend = backend_class("keye")({"max_new_tokens": 8192, **settings}, model=model, tokenizer=object(), processor=processor)
    return backend, processor, model


@pytest.mark.parametrize("suffix", ["/no_think", "/think"])
def test_keye_gets_our_frames_the_manifest_times_and_its_thinking_switch(bench, suffix):
    backend, processor, model = _keye(system_suffix=suffix, max_pixels=200704)
    request = _request(bench)
    reply = backend.generate(backend.prepare(request))
    (call,) = processor.calls
    # The switch ends the question, with no space, as the Keye-VL 1.5 README writes it.
    assert call["text"][0].endswith(f"Question: What colour is the star?{suffix}<|im_end|>\n<|im_start|>assistant\n")
    # keye-vl-utils returned every one of the level's frames, sized within the per-frame cap.
    (video,) = call["videos"]
    assert video.shape[0] == 64 and video.dtype == torch.uint8
    assert call["kwargs"]["height"][0] * call["kwargs"]["width"][0] <= 200704
    # keye-vl-utils would space the times evenly from 0 s; the model is told the frames' real times, as a float tensor.
    (times,) = call["kwargs"]["timestamps"]
    assert times.dtype == torch.float32 and times.tolist() == pytest.approx(request.timestamps)
    assert len(call["kwargs"]["frame_types"][0]) == 64  # slow/fast frames, chosen by keye-vl-utils itself
    assert model.calls == [{"do_sample": False, "max_new_tokens": 8192}]
    assert reply.text == "red" and reply.thinking == "The star is red in frame 3." and reply.finish_reason == "stop"


def test_keye_refuses_a_clip_that_keye_vl_utils_resampled(bench, monkeypatch):
    """What the adapter did before: fps = N / T in the message; keye-vl-utils then recounts int(N / fps * fps) frames,
    and for a 93-second video that is 63 of 64. The adapter refuses such a clip rather than mis-time it."""
    backend, _, _ = _keye()
    request = _request(bench)
    messages = backend.messages

    def with_fps(req):
        turns = messages(req)
        turns[0]["content"][0]["fps"] = len(req.frames) / 93  # the rate of a 93-second video: int(N / fps * fps) = N - 1
        return turns

    monkeypatch.setattr(backend, "messages", with_fps)
    with pytest.raises(ValueError, match=r"\[63\] frames for 64.*resampled"):
        backend.prepare(request)


def test_keye_answer_is_read_as_vlmevalkit_reads_it():
    assert keye_answer("<analysis>long</analysis>Blue") == ("long", "Blue", False)
    assert keye_answer("plain answer") == (None, "plain answer", False)
    assert keye_answer("<think>x</think><answer>a</answer> then <answer>b</answer>") == ("x", "b", False)
    assert keye_answer("<think>never closed") == ("never closed", "", True)
