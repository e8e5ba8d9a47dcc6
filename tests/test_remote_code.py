"""The adapters for families whose code ships with the checkpoint, against recording stand-ins of that
code (tests/remote_standins.py): our frames, frame times and prompt reach the authors' entry points in
the form their code expects. Needs torch (the hf extra)."""

import re

import pytest
from conftest import build_bench

torch = pytest.importorskip("torch", reason="the hf extra is not installed (pip install -e '.[hf]')")
pytest.importorskip("torchvision", reason="the hf extra is not installed (pip install -e '.[hf]')")

import remote_standins  # noqa: E402

from virtuebench.frames import Manifest  # noqa: E402
from virtuebench.models import backend_class  # noqa: E402
from virtuebench.models.base import Request  # noqa: E402
from virtuebench.models.remote_code import keye_answer  # noqa: E402


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


@pytest.mark.parametrize("suffix", ["/no_think", "/think"])
def test_keye_gets_the_manifest_times_and_its_thinking_switch(bench, monkeypatch, suffix):
    utils = remote_standins.keye_vl_utils()
    monkeypatch.setitem(__import__("sys").modules, "keye_vl_utils", utils)
    processor, model = remote_standins.KeyeProcessorStandIn(), remote_standins.KeyeModelStandIn()
    backend = backend_class("keye")({"system_suffix": suffix, "max_new_tokens": 8192}, model=model, tokenizer=object(), processor=processor)
    request = _request(bench)
    reply = backend.generate(backend.prepare(request))
    (video,) = utils.calls
    assert video["video"] == [str(path) for path in request.frames] and video["fps"] == pytest.approx(64 / int(request.duration_s))
    (call,) = processor.calls
    assert call["text"][0].endswith(f"Question: What colour is the star?{suffix}<|im_end|>\n<|im_start|>assistant\n")
    # keye-vl-utils would space the times evenly from 0 s; the model is told the frames' real times.
    assert call["kwargs"]["timestamps"] == [request.timestamps] and call["kwargs"]["frame_types"] == [[0] * 64]
    assert model.calls == [{"do_sample": False, "max_new_tokens": 8192}]
    assert reply.text == "red" and reply.thinking == "The star is red in frame 3."


def test_keye_refuses_a_resampled_clip(bench, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "keye_vl_utils", remote_standins.keye_vl_utils(resample=True))
    backend = backend_class("keye")(
        {}, model=remote_standins.KeyeModelStandIn(), tokenizer=object(), processor=remote_standins.KeyeProcessorStandIn()
    )
    with pytest.raises(ValueError, match="32.*64.*resampled"):
        backend.prepare(_request(bench))


def test_keye_answer_is_read_as_vlmevalkit_reads_it():
    assert keye_answer("<analysis>long</analysis>Blue") == ("long", "Blue")
    assert keye_answer("plain answer") == (None, "plain answer")
    assert keye_answer("<think>x</think><answer>a</answer> then <answer>b</answer>") == ("x", "b")
